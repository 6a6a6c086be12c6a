// Package driver runs the sans-IO AMQP 1.0 engine
// (github.com/amqpsax/amqpsax/engine) over a net.Conn: the engine does
// no I/O and starts no goroutines, and this package does both for it. It
// is thin, and built on the engine's exported API alone.
//
// A [Driver] runs one engine.Conn over one net.Conn; [Server] and
// [Serve] run one per connection accepted from a net.Listener; [Dial]
// connects and runs a client. Events reach the engine.Handler one at a
// time per connection, on whichever of the Driver's goroutines (or a
// DoNow caller's) holds the connection.
//
//	driver.Serve(ln, engine.Config{Credit: 100, AutoAccept: true}, handler)
//
// # Contract
//
// The Conn is guarded by a lock, and whoever holds it runs the engine:
// the reader goroutine feeds what it read at once (when the Conn wants
// to read: engine.Conn.WantRead), the goroutine that calls
// [Driver.Run] (the loop) runs the timers and queued work, and a caller
// of [Driver.DoNow] or [Waker.WakeNow] runs its function itself when the
// Conn is free. Whoever ran the engine writes its output: to a TCP or
// Unix socket with one write that does not block, what the socket does
// not take going to a writer goroutine, which blocks in the write (over
// TLS and other net.Conns the writer writes it all). On such a socket the
// reads (the reader's, and a caller's in ReadUntil) and these writes are
// raw system calls on the non-blocking descriptor (a read waits for it
// through the runtime's poller, as the connection's Read does): they
// never block, and the
// scheduler's bookkeeping for calls that may (entersyscall) would wake
// its monitor thread each time an idle process turns busy. No goroutine blocks
// in a read or a write while it holds the Conn, so the engine's timers
// fire however slow the peer is. A handler may rely on its events coming
// one at a time per connection, never on the goroutine they come on. It
// relies on what the engine documents: the view engine.Conn.Output
// returns stays as it was until Written, so the writer writes it while
// others go on feeding and ticking the Conn.
//
// A peer that stops reading is closed at the idle time-out, the
// handshake time-out, or engine.CloseWait after this end's close: the
// Conn is then over, what is left of its output has a second per write
// (CloseWait in all), and the Driver closes the net.Conn and ends.
// Writes carry no deadline while the connection is up (a timed-out write
// breaks TLS for good); back-pressure (engine.Config.MaxOutput,
// engine.Conn.WantRead) stops the reads instead.
//
// # Handing work to the connection
//
// [Driver.Do] and [Waker] hand functions to the connection from any
// goroutine, another connection's events included, and never block or
// run anything on the caller's goroutine: Do queues one run per call,
// without bound (for callers that wait for a result); a Waker at most one
// run at a time, with no allocation per Wake (for streams of
// notifications). They run in FIFO order, one at a time with the events,
// at most 64 per turn between reads, writes and timers, and every
// function accepted runs exactly once, as the Driver ends if not before.
// [Driver.DoNow] and [Waker.WakeNow] are the same for a blocking caller
// that holds no lock a handler takes: when the Conn is free they run the
// function (after what was queued before it) and write its output on the
// caller's goroutine, sparing the hand-offs to the loop and back.
// [Driver.ReadUntil] is for such a caller waiting for the peer's answer:
// over a TCP or Unix socket on an idle connection it borrows the read
// side from the reader goroutine and reads and feeds the answer itself,
// so the network wakes it directly. [Of] finds the Driver of a Conn in
// its events.
//
// # TLS
//
// TLS is direct (a tls.Conn given to [NewDriver], as [Dial] and [Server]
// make with a TLS configuration) or by the TLS protocol header (part 5
// §5.2, engine.Config.TLSHeader, [Driver].TLSConfig): the Driver runs
// the handshake the engine asks for (engine.Conn.UpgradeTLS) and tells
// it the outcome (TLSEstablished, or DirectTLS when a server's client
// began with TLS). Either way only a verified chain counts for SASL
// EXTERNAL: the engine is given the first of the TLS connection's
// VerifiedChains, or nothing ([VerifiedPeer]), never the certificates a
// client merely presented (tls.RequestClientCert and
// tls.RequireAnyClientCert take any certificate without verifying it).
//
// # Accept errors
//
// [Server.Serve] ends only when its listener fails for good or the
// server is shut down. An accept error that passes (too many open files,
// a time-out) is logged to [Server].ErrorLog and retried after a pause
// that doubles from 5 ms to 1 s, as net/http's Server does.
//
// # Spec references
//
// OASIS AMQP 1.0: part 2 §2.4.5 (idle time-out: the timers the Driver
// runs), part 5 §5.2 (TLS, by protocol header or direct), §5.3 (SASL
// EXTERNAL and the TLS peer's certificate).
package driver
