package driver

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// This file is the Driver: a loop per connection that owns the Conn and
// hands its output to a writer goroutine, feeds it what a reader
// goroutine read, ticks its timers and runs the functions handed to it
// (Do, Waker), so that no blocked read or write keeps the loop from its
// timers; then Dial, and the TLS upgrade by protocol header. The Server
// is in server.go.

const (
	// readSize is the size of each read buffer.
	readSize = 64 << 10
	// maxWrite bounds one Write, so the loop learns of progress (Written,
	// OnWritable, WantRead) at least every maxWrite bytes.
	maxWrite = 256 << 10
	// maxRun bounds the functions (Do) and wake-ups (Waker) run in one
	// turn of the loop: between turns come reads, writes and timers.
	maxRun = 64
	// maxSpare bounds the spare queue nodes kept for Do.
	maxSpare = 1024
	// linger is how long, once the connection is over, each write (of at
	// most maxWrite bytes) has to complete before the Driver gives up on
	// the rest of the output and closes the network connection;
	// CloseWait bounds the whole of it.
	linger = time.Second
	// shutdownGrace is how long, after Close or the end of Run's ctx, the
	// peer has to answer the close before the network connection is
	// closed.
	shutdownGrace = 5 * time.Second
)

// errShutdownGrace is what the engine learns when the peer has not
// answered the close of Driver.Close or of Run's ctx within the grace.
var errShutdownGrace = errors.New("driver: no answer to close within the shutdown grace")

// Driver runs one Conn over one net.Conn: a loop on the goroutine that
// calls Run owns the Conn, and its events run there. The loop never blocks
// in a read or a write: a reader and a writer goroutine do those, so the
// Conn's timers (engine.Conn.Tick) and the functions handed to the Driver
// run while the peer is slow.
//
// # Deadlines
//
// Writes carry no deadline while the connection is up: a write that blocks
// (a peer that does not read) holds up only the output behind it, while
// the loop goes on reading (as long as engine.Conn.WantRead) and ticking.
// The engine's timers decide when to give up on the peer: at the idle
// time-out (engine.Config.IdleTimeout; the engine closes with
// amqp:resource-limit-exceeded), at the handshake time-out
// (engine.Config.HandshakeTimeout), and engine.CloseWait after this end's
// close. Once the connection is over (engine.Conn.Closed), what is left of
// its output, such as that close, gets write deadlines: it goes out while
// each write (of at most 256 kB) completes within a second, for at most
// engine.CloseWait; then the Driver closes the network connection and Run
// returns. So a peer that stops reading is closed about a second after the
// time-out, and the Driver's goroutines end. (A deadline at every timer
// would make a write fail at a mere heartbeat, and after a timed-out write
// a crypto/tls connection is broken for good.) Without an idle time-out, a
// peer that stops reading and sending holds its connection until Close.
//
// # TLS by protocol header
//
// With engine.Config.TLSHeader the Driver does the TLS upgrade of part 5
// §5.2 before its loop starts, on the goroutine of Run, the whole of it
// bounded by the handshake time-out (a deadline on the network
// connection). A client writes the TLS header, reads the server's answer
// and runs crypto/tls's client handshake with TLSConfig. A server reads
// the client's first 8 bytes: a TLS header is answered and followed by
// crypto/tls's server handshake; a first byte 0x16 (a TLS handshake
// record: the client began with TLS, amqps) is the same handshake at once;
// any other header goes on in the clear. The engine learns of the upgrade
// through engine.Conn.UpgradeTLS and engine.Conn.TLSEstablished, then SASL
// (EXTERNAL with a verified client certificate) and AMQP run over TLS. Do and Wake
// queue during the upgrade, Close and Run's ctx cut it short.
//
// # Handing work to the loop
//
// Do and Waker run functions on the loop's goroutine, with the Conn, from
// any goroutine, and never block the caller. They run in the order they
// were queued, at most 64 per turn of the loop, between reads, writes and
// timers, so a flood of them does not stop the connection. A function
// accepted (Do or Wake reported true) runs exactly once: in a turn of the
// loop or, when the loop ends first, as it ends (the Conn is over then,
// and its actions report engine.ErrState).
//
// Do queues one run per call, with no bound: memory grows with the calls
// queued and not yet run. It fits a caller that waits for the outcome (a
// request and its response: each blocked caller has one queued), not a
// stream of notifications. For those, a [Waker] coalesces: at most one
// run of its function is queued at a time, so memory is bounded by the
// number of Wakers, and a Wake costs no allocation.
type Driver struct {
	// TLSConfig is the configuration of the TLS upgrade of a
	// connection with engine.Config.TLSHeader (set it before Run): see
	// "TLS by protocol header".
	TLSConfig *tls.Config

	c  *engine.Conn
	nc net.Conn

	// The queue of Do's functions and Wakers' runs, first in first out,
	// through the nodes' next.
	mu         sync.Mutex
	head, tail *task
	spare      *task // Do's nodes, for reuse
	nspare     int
	ended      bool          // the loop has ended: Do and Wake refuse
	wake       chan struct{} // 1-buffered: the queue may hold something

	stop     chan struct{} // closed: close the connection
	done     chan struct{} // closed when the loop has ended
	once     sync.Once
	err      error
	shutErr  *engine.Error // the error Close sends, not reported by Wait
	reads    chan readResult
	free     chan []byte
	writes   chan []byte      // to the writer: one write at a time
	wrote    chan writeResult // from the writer
	writing  bool             // a write is with the writer
	overAt   time.Time        // when the loop saw the connection over
	deadline time.Time        // the write deadline set, or zero
}

type readResult struct {
	buf []byte
	n   int
	err error
}

type writeResult struct {
	n   int
	err error
}

// task is a node of the Driver's queue: a function given to Do, or the
// node a Waker holds for its runs.
type task struct {
	next *task
	f    func(*engine.Conn)
	w    *Waker
}

// NewDriver returns a Driver for c over nc; Run runs it.
func NewDriver(nc net.Conn, c *engine.Conn) *Driver {
	d := &Driver{c: c, nc: nc, wake: make(chan struct{}, 1), stop: make(chan struct{}),
		done: make(chan struct{}), reads: make(chan readResult, 1), free: make(chan []byte, 2),
		writes: make(chan []byte, 1), wrote: make(chan writeResult, 1),
		shutErr: engine.NewError(frame.CondConnectionForced, "shutdown")}
	c.SetDriver(d)
	return d
}

// Of returns the Driver running c (NewDriver records it with
// engine.Conn.SetDriver), or nil. Use it on the connection's goroutine: in
// events, or in a function given to Do.
func Of(c *engine.Conn) *Driver {
	d, _ := c.Driver().(*Driver)
	return d
}

// Conn returns the driver's connection; use it only on the driver's
// goroutine (in events, or in a function given to Do).
func (d *Driver) Conn() *engine.Conn { return d.c }

// NetConn returns the network connection.
func (d *Driver) NetConn() net.Conn { return d.nc }

// Do queues f to run on the driver's goroutine, with the connection, and
// reports true: f runs exactly once, after what was queued before it (see
// the Driver's documentation). It never blocks, so it may be called from
// any goroutine, including another Driver's; an event of this connection
// acts on it directly instead. After the loop has ended (or with f nil)
// it queues nothing and reports false.
//
// Each call queues one run, and the queue has no bound: its memory grows
// with the calls not yet run. Use Do where a caller waits for f's result;
// for a stream of notifications use a Waker, which coalesces.
func (d *Driver) Do(f func(c *engine.Conn)) bool {
	if f == nil {
		return false
	}
	d.mu.Lock()
	if d.ended {
		d.mu.Unlock()
		return false
	}
	t := d.spare
	if t != nil {
		d.spare, t.next = t.next, nil
		d.nspare--
	} else {
		t = new(task)
	}
	t.f = f
	d.push(t)
	d.mu.Unlock()
	d.signal()
	return true
}

// Waker runs a function on a Driver's goroutine when woken, coalescing
// wake-ups: at most one run is queued at a time. A Wake while a run is
// queued does nothing more; a Wake while the function runs queues one
// more run, so a change made before Wake is always seen by a run that
// starts after it. Its memory is fixed when it is made: Wake allocates
// nothing, so a Waker suits a stream of notifications (new messages for
// a consumer, a peer's credit), where Do's queue would grow with them.
// Safe for use by several goroutines at once.
type Waker struct {
	d      *Driver
	f      func(*engine.Conn)
	node   task        // the Waker's place in the Driver's queue
	queued atomic.Bool // node is in the queue, its run not yet begun
}

// NewWaker returns a Waker that runs f on d's goroutine, with the
// connection, once per Wake that finds no run of it queued.
func (d *Driver) NewWaker(f func(c *engine.Conn)) *Waker {
	if f == nil {
		f = func(*engine.Conn) {}
	}
	w := &Waker{d: d, f: f}
	w.node.w = w
	return w
}

// Wake queues a run of the Waker's function unless one is queued already,
// and reports true: a run that begins after this call follows. It never
// blocks and allocates nothing. After the Driver's loop has ended it
// queues nothing and reports false.
func (w *Waker) Wake() bool {
	if !w.queued.CompareAndSwap(false, true) {
		return true // queued and not yet begun: that run will see this
	}
	d := w.d
	d.mu.Lock()
	if d.ended {
		d.mu.Unlock()
		w.queued.Store(false)
		return false
	}
	d.push(&w.node)
	d.mu.Unlock()
	d.signal()
	return true
}

// push appends t to the queue; d.mu is held.
func (d *Driver) push(t *task) {
	if d.tail == nil {
		d.head = t
	} else {
		d.tail.next = t
	}
	d.tail = t
}

// signal tells the loop that the queue may hold something.
func (d *Driver) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// runQueued runs up to maxRun of the queued functions and wake-ups, in
// order, and signals again when more are left, so the next turn of the
// loop comes back to them after what else is ready.
func (d *Driver) runQueued() {
	for range maxRun {
		d.mu.Lock()
		t := d.head
		if t == nil {
			d.mu.Unlock()
			return
		}
		d.head, t.next = t.next, nil
		if d.head == nil {
			d.tail = nil
		}
		f, w := t.f, t.w
		if w == nil && d.nspare < maxSpare {
			t.f, t.next = nil, d.spare
			d.spare = t
			d.nspare++
		}
		d.mu.Unlock()
		if w != nil {
			w.queued.Store(false) // a Wake from now on queues another run
			w.f(d.c)
		} else {
			f(d.c)
		}
	}
	d.mu.Lock()
	more := d.head != nil
	d.mu.Unlock()
	if more {
		d.signal()
	}
}

// drain ends the queue: Do and Wake refuse from now on, and what they had
// accepted runs now, in order.
func (d *Driver) drain() {
	d.mu.Lock()
	d.ended = true
	t := d.head
	d.head, d.tail, d.spare, d.nspare = nil, nil, nil, 0
	d.mu.Unlock()
	for t != nil {
		next := t.next
		t.next = nil
		if w := t.w; w != nil {
			w.queued.Store(false)
			w.f(d.c)
		} else {
			t.f(d.c)
		}
		t = next
	}
}

// Close closes the connection, without waiting: the close it sends
// carries amqp:connection:forced "shutdown" (which Wait does not report
// as an error), and the network connection is closed once the peer has
// answered, or 5 s after. It may be called from any goroutine, while the
// loop is blocked in nothing: a write to a peer that does not read
// delays only the close frame, which has the 5 s to go out.
func (d *Driver) Close() {
	d.once.Do(func() { close(d.stop) })
}

// Wait waits for the loop to end and returns the connection's error (nil
// after a clean close).
func (d *Driver) Wait() error {
	<-d.done
	return d.err
}

// Done is closed when the loop has ended.
func (d *Driver) Done() <-chan struct{} { return d.done }

// Run runs the connection until it is done, the network connection fails,
// or ctx is done (then it closes it as Close does). It closes the network
// connection before it returns, runs what Do and Wake queued and the loop
// did not run, and returns the connection's error (nil after a clean
// close).
func (d *Driver) Run(ctx context.Context) error {
	defer close(d.done)
	c := d.c
	if c.Config().TLSHeader {
		if err := d.upgrade(ctx); err != nil {
			c.ReadFailed(err)
		}
	}
	for range 2 {
		d.free <- make([]byte, readSize)
	}
	go d.reader()
	go d.writer()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	stop := d.stop
	ctxDone := ctx.Done()
	var grace <-chan time.Time
	reading := true
loop:
	for {
		now := time.Now()
		next := c.Tick(now)
		if c.Closed() && d.overAt.IsZero() {
			// Over: what is left of the output has a deadline now.
			d.overAt = now
			d.extend(now)
		}
		if !d.writing {
			out := c.Output()
			if len(out) == 0 && c.Done() {
				break
			}
			if len(out) > 0 {
				d.writes <- out[:min(len(out), maxWrite)]
				d.writing = true
			}
		}
		if next.IsZero() {
			timer.Reset(time.Hour)
		} else {
			timer.Reset(next.Sub(now))
		}
		reads := d.reads
		if !reading || !c.WantRead() {
			reads = nil
		}
		select {
		case r := <-reads:
			if r.n > 0 {
				c.Feed(r.buf[:r.n], time.Now())
			}
			d.free <- r.buf
			if r.err != nil {
				reading = false
				d.readEnded(r.err)
			}
		case r := <-d.wrote:
			d.writing = false
			c.Written(r.n)
			if !d.wrote1(r) {
				break loop
			}
		case <-d.wake:
			d.runQueued()
		case <-timer.C:
		case <-stop:
			stop = nil
			d.shutdown()
			grace = time.After(shutdownGrace)
		case <-ctxDone:
			ctxDone = nil
			d.shutdown()
			grace = time.After(shutdownGrace)
		case <-grace:
			d.readEnded(errShutdownGrace)
			break loop
		}
	}
	d.nc.Close()
	if d.writing {
		<-d.wrote // the writer is done with the Conn's output
		d.writing = false
	}
	d.drain()
	d.err = nil
	if e := c.Err(); e != nil && e != d.shutErr {
		d.err = e
	}
	return d.err
}

// wrote1 handles the end of a write (its bytes already reported with
// Written) and reports whether the loop goes on.
func (d *Driver) wrote1(r writeResult) bool {
	if d.overAt.IsZero() {
		if r.err != nil {
			// No deadline is set while the connection is up: the
			// transport has failed.
			d.readEnded(r.err)
			return false
		}
		return true
	}
	// Over: a write that did not complete within its linger (the peer
	// does not read, or the transport failed) ends it, and so does
	// CloseWait.
	now := time.Now()
	if r.err != nil || !now.Before(d.overAt.Add(engine.CloseWait)) {
		return false
	}
	d.extend(now)
	return true
}

// extend sets the write deadline of a connection that is over: a linger
// from now, within CloseWait of its end.
func (d *Driver) extend(now time.Time) {
	t := now.Add(linger)
	if end := d.overAt.Add(engine.CloseWait); t.After(end) {
		t = end
	}
	if !t.Equal(d.deadline) {
		d.deadline = t
		d.nc.SetWriteDeadline(t)
	}
}

// readEnded tells the engine that its input has ended: the read side
// reached EOF or failed with err, or the Driver gave up on the transport
// (a write failed with err, or the shutdown grace passed:
// errShutdownGrace). Every end of the engine's input goes through here.
func (d *Driver) readEnded(err error) { d.c.ReadFailed(err) }

// shutdown sends the close of Close and of Run's ctx. When a close was
// sent already, the peer's answer to it has the shutdown grace to come.
func (d *Driver) shutdown() { d.c.Close(d.shutErr) }

// writer writes what the loop hands it, one write at a time.
func (d *Driver) writer() {
	for {
		select {
		case b := <-d.writes:
			n, err := d.nc.Write(b)
			d.wrote <- writeResult{n, err} // buffered, one write at a time: never blocks
		case <-d.done:
			return
		}
	}
}

// reader reads into the free buffers and hands them to the loop.
func (d *Driver) reader() {
	for {
		var buf []byte
		select {
		case buf = <-d.free:
		case <-d.done:
			return
		}
		n, err := d.nc.Read(buf)
		select {
		case d.reads <- readResult{buf, n, err}:
		case <-d.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// Dial connects to addr (network "tcp") as a client and runs the
// connection on a new goroutine: events reach h there. With tlsConfig set
// the connection is TLS (amqps). Use the Driver's Do to act on the
// connection, Wait for its end.
func Dial(ctx context.Context, network, addr string, cfg engine.Config, tlsConfig *tls.Config, h engine.Handler) (*Driver, error) {
	var dl net.Dialer
	nc, err := dl.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if tlsConfig != nil && !cfg.TLSHeader {
		tc := tls.Client(nc, tlsConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, err
		}
		nc = tc
	}
	d := NewDriver(nc, engine.NewClient(cfg, h))
	d.TLSConfig = tlsConfig
	go d.Run(context.WithoutCancel(ctx))
	return d, nil
}

// upgrade does the TLS upgrade of engine.Config.TLSHeader (see the Driver's
// "TLS by protocol header"). An error is the transport's or the
// handshake's; the engine's own refusals are in its Output, for the loop
// to write.
func (d *Driver) upgrade(ctx context.Context) error {
	c, raw := d.c, d.nc
	if d.TLSConfig == nil {
		return errors.New("driver: Config.TLSHeader without Driver.TLSConfig")
	}
	deadline := time.Now().Add(c.Config().HandshakeTimeout)
	raw.SetDeadline(deadline)
	defer raw.SetDeadline(time.Time{})
	// Close and ctx cut the upgrade short: a deadline in the past.
	stop := context.AfterFunc(ctx, func() { raw.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	fin := make(chan struct{})
	defer close(fin)
	go func() {
		select {
		case <-d.stop:
			raw.SetDeadline(time.Unix(1, 0))
		case <-fin:
		}
	}()
	client := c.IsClient()
	if client {
		if err := d.flush(); err != nil {
			return err
		}
	}
	var hdr [8]byte
	if _, err := io.ReadFull(d.nc, hdr[:]); err != nil {
		return err
	}
	early := hdr[:]
	if !client && hdr[0] == 0x16 {
		// Direct TLS: the first byte starts a TLS handshake record.
	} else {
		c.Feed(hdr[:], time.Now())
		due, rest := c.UpgradeTLS()
		if !due {
			return nil // a header in the clear, or refused: the loop goes on
		}
		if err := d.flush(); err != nil {
			return err
		}
		early = rest
	}
	nc := net.Conn(&prefixConn{Conn: d.nc, early: bytes.Clone(early)})
	var tc *tls.Conn
	if client {
		tc = tls.Client(nc, d.TLSConfig)
	} else {
		tc = tls.Server(nc, d.TLSConfig)
	}
	hctx, cancel := context.WithDeadline(ctx, deadline)
	err := tc.HandshakeContext(hctx)
	cancel()
	if err != nil {
		return err
	}
	if c.Phase() != engine.PhaseTLS {
		// direct TLS, no header: the server's engine starts over TLS.
		c.DirectTLS(VerifiedPeer(tc.ConnectionState()))
	} else {
		c.TLSEstablished(VerifiedPeer(tc.ConnectionState()))
	}
	d.nc = tc
	return nil
}

// flush writes the whole of the engine's output, before the loop runs.
func (d *Driver) flush() error {
	for out := d.c.Output(); len(out) > 0; out = d.c.Output() {
		n, err := d.nc.Write(out)
		d.c.Written(n)
		if err != nil {
			return err
		}
	}
	return nil
}

// prefixConn is a net.Conn whose reads return early first: bytes read
// past a protocol header that belong to the TLS handshake.
type prefixConn struct {
	net.Conn
	early []byte
}

func (p *prefixConn) Read(b []byte) (int, error) {
	if len(p.early) > 0 {
		n := copy(b, p.early)
		p.early = p.early[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}

// VerifiedPeer returns the certificates of a TLS connection's peer that
// count for SASL EXTERNAL (engine.Config.PeerCertificates,
// engine.Conn.TLSEstablished): the first chain crypto/tls verified, leaf
// first, or nil when it verified none. The certificates the peer merely
// presented (ConnectionState.PeerCertificates) never count: a server
// with tls.RequestClientCert or tls.RequireAnyClientCert takes any
// certificate without verifying it, a self-signed one under any name.
// The Driver, Dial and Server give the engine these; so does package
// broker.
func VerifiedPeer(cs tls.ConnectionState) []*x509.Certificate {
	if len(cs.VerifiedChains) == 0 {
		return nil
	}
	return cs.VerifiedChains[0]
}
