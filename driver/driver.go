package driver

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// This file is the Driver: a Conn guarded by a lock, whoever holds it
// runs the engine (the reader goroutine after a read, a caller of DoNow
// or WakeNow, the loop for timers and queued work) and writes its output
// itself when the socket takes it; a writer goroutine writes what the
// socket did not take; then Dial, and the TLS upgrade by protocol
// header. The Server is in server.go.

const (
	// readSize is the size of each read buffer.
	readSize = 64 << 10
	// maxWrite bounds one write handed to the writer goroutine, and the
	// bytes one holder of the Conn writes inline before it hands the
	// rest over, so the Conn learns of progress (Written, OnWritable,
	// WantRead) at least every maxWrite bytes.
	maxWrite = 256 << 10
	// maxRun bounds the functions (Do) and wake-ups (Waker) run in one
	// turn: between turns come reads, writes and timers.
	maxRun = 64
	// maxSpare bounds the spare queue nodes kept for Do.
	maxSpare = 1024
	// linger is how long, once the connection is over, each write (of at
	// most maxWrite bytes) has to complete before the Driver gives up on
	// the rest of the output and closes the network connection;
	// CloseWait bounds the whole of it.
	linger = time.Second
	// leadFor bounds how long ReadUntil holds the read side for a
	// caller (Driver.leadFor; tests change it): a fast answer is what it
	// is for; a slow one is left to the reader goroutine, and ctx's end
	// is seen within it.
	leadFor = 2 * time.Millisecond
	// restFor is how long the read side rests, given back by a caller
	// that has its answer (ReadUntil), before the reader reads again:
	// a caller that makes its next request meanwhile takes it as it is.
	// Input that comes meanwhile waits at most that long: input nobody
	// waits for, as a caller that waits reads itself (package client's
	// Send and Receive do). Its timer fires about once a restFor while
	// requests go on (set again only when it fires early), and each
	// firing wakes the reader: 1 ms keeps that to one in tens of round
	// trips on loopback.
	restFor = time.Millisecond
	// crowdFor is how long, after a caller of ReadUntil found another
	// reading, no caller takes the read side: callers waiting at once
	// are the reader's to serve.
	crowdFor = time.Millisecond
	// shutdownGrace is how long, after Close or the end of Run's ctx, the
	// peer has to answer the close before the network connection is
	// closed.
	shutdownGrace = 5 * time.Second
)

// errShutdownGrace is what the engine learns when the peer has not
// answered the close of Driver.Close or of Run's ctx within the grace.
var errShutdownGrace = errors.New("driver: no answer to close within the shutdown grace")

// Driver runs one Conn over one net.Conn. The Conn is guarded by a
// lock, and whoever holds it runs the engine: its events run there, one
// at a time. No goroutine of the Driver ever blocks in a read or a write
// while it holds the Conn, so the Conn's timers (engine.Conn.Tick) and
// the functions handed to the Driver run while the peer is slow.
//
// # What runs where
//
// Run's goroutine (the loop) starts a reader and a writer goroutine and
// then waits for timers, for functions queued by Do and Waker, for the
// writer, and for Close and ctx. The engine runs where the event
// happens:
//
//   - A read: the reader goroutine takes the Conn and feeds it what it
//     read, at once, unless the Conn does not want to read
//     (engine.Conn.WantRead): then the read waits, in order, for the
//     loop to feed it when the Conn wants it.
//   - Do, Waker.Wake: queued for the loop (see "Handing work to the
//     Conn"); a goroutine that holds the Conn when it lets go runs what
//     was queued meanwhile as well.
//   - DoNow, Waker.WakeNow: on the caller's goroutine when no goroutine
//     holds the Conn, else queued as Do.
//   - Timers, and reads the Conn did not want at first: the loop.
//
// Whoever ran the engine then writes its output, when no write is with
// the writer goroutine: over a *net.TCPConn or a *net.UnixConn with one
// write that does not block (what the socket takes at once), handing
// what is left to the writer goroutine, which blocks in the write; over
// any other net.Conn (TLS, a pipe, a WebSocket) the writer writes it
// all. So a request on an idle connection is written by the goroutine
// that made it, and its answer runs the engine on the reader goroutine
// that read it, which then wakes the caller that waits for the answer.
//
// A caller that waits for the answer can read it itself
// ([Driver.ReadUntil]), over a TCP or Unix socket: the reader goroutine
// lends it the read side (its Read is interrupted by a read deadline in
// the past), the caller reads and feeds the Conn until its answer is in,
// then gives the read side back. It rests then for 1 ms before the
// reader reads again, and a caller that makes its next request meanwhile
// takes it as it is. A run of such requests sets no timer and no
// deadline per request: each would wake an idle processor of the Go
// runtime (a timer reset wakes the network poller). So a blocking caller's round trips on an idle
// connection are made on its own goroutine, woken by the network as a
// bare TCP ping-pong is: no hand-off between goroutines.
//
// # Deadlines
//
// Writes carry no deadline while the connection is up: a write that blocks
// (a peer that does not read) holds up only the output behind it, while
// the Driver goes on reading (as long as engine.Conn.WantRead) and ticking.
// The engine's timers decide when to give up on the peer: at the idle
// time-out (engine.Config.IdleTimeout; the engine closes with
// amqp:resource-limit-exceeded), at the handshake time-out
// (engine.Config.HandshakeTimeout), and engine.CloseWait after this end's
// close. Once the connection is over (engine.Conn.Closed), what is left of
// its output, such as that close, goes to the writer goroutine with write
// deadlines: it goes out while each write (of at most 256 kB) completes
// within a second, for at most engine.CloseWait; then the Driver closes
// the network connection and Run returns. So a peer that stops reading is
// closed about a second after the time-out, and the Driver's goroutines
// end. (A deadline at every timer would make a write fail at a mere
// heartbeat, and after a timed-out write a crypto/tls connection is broken
// for good.) Without an idle time-out, a peer that stops reading and
// sending holds its connection until Close.
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
// (EXTERNAL with a verified client certificate) and AMQP run over TLS. Do,
// DoNow and the Wakers queue during the upgrade, Close and Run's ctx cut
// it short.
//
// # Handing work to the Conn
//
// Do and Waker run functions with the Conn, from any goroutine, and never
// block the caller: they queue the function, and the loop (or a goroutine
// that holds the Conn as it lets go) runs it. They run in the order they
// were queued, one at a time with the Conn's events, at most 64 per turn,
// between reads, writes and timers, so a flood of them does not stop the
// connection. A function accepted (Do or Wake reported true) runs exactly
// once: in a turn or, when the loop ends first, as it ends (the Conn is
// over then, and its actions report engine.ErrState).
//
// Do queues one run per call, with no bound: memory grows with the calls
// queued and not yet run. It fits a caller that waits for the outcome (a
// request and its response: each blocked caller has one queued), not a
// stream of notifications. For those, a [Waker] coalesces: at most one
// run of its function is queued at a time, so memory is bounded by the
// number of Wakers, and a Wake costs no allocation.
//
// DoNow and WakeNow are Do and Wake for a caller that waits for the
// outcome and holds no lock: when no goroutine holds the Conn they run
// the function on the caller's goroutine, after what was queued before
// it, and write the output there, sparing the hand-off to the loop and
// back. Their rule of use is in DoNow's documentation.
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
	queued     atomic.Int32  // nodes in the queue: a holder's look, without mu
	wake       chan struct{} // 1-buffered: the loop has something to look at

	stop    chan struct{} // closed: close the connection
	done    chan struct{} // closed when the loop has ended
	once    sync.Once
	err     error
	shutErr *engine.Error // the error Close sends, not reported by Wait
	reads   chan readResult
	free    chan []byte
	writes  chan []byte      // to the writer: one write at a time
	wrote   chan writeResult // from the writer

	// emu is the Conn's lock: whoever holds it runs the engine. It
	// guards the Conn and what follows.
	emu      sync.Mutex
	live     bool      // the loop runs: the reader and DoNow may run the engine
	handoff  bool      // the loop alone feeds reads (feedRest)
	handed   int       // reads handed to the loop and not yet fed
	reading  bool      // the read side is open
	writing  bool      // a write is with the writer
	overAt   time.Time // when the connection was seen over
	deadline time.Time // the write deadline set, or zero
	armed    time.Time // when the loop's timer fires (zero: no timer)
	raw      *rawWriter
	// The read side lent to a caller (ReadUntil): a caller asks
	// (leadWant) and interrupts the reader's Read with a read deadline
	// in the past; the reader hands it its buffer (leadBuf, then a
	// token on lead) and waits on back. Every SetReadDeadline is made
	// with the Conn held.
	leadWant bool          // a caller waits for the read side
	leading  bool          // a caller holds the read side
	leaderIn bool          // the caller that holds it holds the Conn too
	leadBuf  []byte        // the reader's buffer, lent
	lead     chan struct{} // 1-buffered: the read side is the caller's
	returned bool          // handed back (leadBuf with it), the reader not yet reading
	back     chan struct{} // 1-buffered: the reader looks at free
	leadWait *time.Timer   // bounds a caller's wait for lead (one at a time)
	leadFor  time.Duration // leadFor, set by NewDriver
	restFor  time.Duration // restFor, set by NewDriver
	rest     *time.Timer   // wakes the reader when the read side may have rested restFor
	// restArmed: rest is set (or has fired and the reader has yet to
	// look); restUntil: when the read side, given back last, has rested
	// restFor. A caller that gives it back moves restUntil and sets
	// rest only when it is not set: the reader, woken early, sets it
	// again for what is left (lend), so a run of requests resets no
	// timer a request.
	restArmed bool
	restUntil time.Time
	// rdl is the read deadline set on nc (zero: none; aLongTimeAgo: an
	// interrupt). A caller that takes the read side keeps the one it
	// finds while it is at least leadFor/2 away (ReadUntil), so a run of
	// requests sets no deadline a request: each would reset a runtime
	// timer, and a reset timer wakes an idle P.
	rdl time.Time
	// until when callers wait at once (crowdFor): none takes the read side
	crowdUntil time.Time
	// For tests (hops_test.go): the hand-offs between goroutines the
	// Driver made. Under emu.
	stats hops
}

// hops counts the Driver's hand-offs between goroutines.
type hops struct {
	loopRuns    int // queued functions and wake-ups the loop ran
	loopFeeds   int // reads the loop fed
	handed      int // writes handed to the writer goroutine
	led         int // read sides lent to a caller by the reader (ReadUntil)
	retaken     int // read sides taken by a caller before the reader read again
	leadFeeds   int // reads a caller fed while it held the read side
	readerFeeds int // reads the reader goroutine fed
	deadlines   int // read deadlines set on the network connection
	restArms    int // times the rest timer was set
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
		lead: make(chan struct{}, 1), back: make(chan struct{}, 1), leadWait: time.NewTimer(time.Hour),
		shutErr: engine.NewError(frame.CondConnectionForced, "shutdown")}
	d.leadWait.Stop()
	d.rest = time.NewTimer(time.Hour)
	d.rest.Stop()
	d.leadFor, d.restFor = leadFor, restFor
	c.SetDriver(d)
	return d
}

// Of returns the Driver running c (NewDriver records it with
// engine.Conn.SetDriver), or nil. Use it with the Conn held: in events,
// or in a function given to Do.
func Of(c *engine.Conn) *Driver {
	d, _ := c.Driver().(*Driver)
	return d
}

// Conn returns the driver's connection; use it only with the Conn held
// (in events, or in a function given to Do, DoNow or a Waker).
func (d *Driver) Conn() *engine.Conn { return d.c }

// NetConn returns the network connection.
func (d *Driver) NetConn() net.Conn { return d.nc }

// Do queues f to run with the connection, one at a time with its events,
// and reports true: f runs exactly once, after what was queued before it
// (see the Driver's documentation), on the loop's goroutine or on one
// that holds the Conn as it lets go, never on the caller's. It never
// blocks, so it may be called from any goroutine, including from another
// Driver's events while holding locks; an event of this connection acts
// on it directly instead. After the loop has ended (or with f nil) it
// queues nothing and reports false.
//
// Each call queues one run, and the queue has no bound: its memory grows
// with the calls not yet run. Use Do where a caller waits for f's result;
// for a stream of notifications use a Waker, which coalesces.
func (d *Driver) Do(f func(c *engine.Conn)) bool {
	if !d.enqueue(f) {
		return false
	}
	d.signal()
	return true
}

// DoNow is Do, run at once on the calling goroutine when it can be: when
// no goroutine holds the Conn, DoNow takes it, runs what was queued
// before (at most 64 functions; f is queued behind any more), then f,
// writes the output without blocking (what the socket does not take goes
// to the writer goroutine) and lets go. Else, while another goroutine
// holds the Conn (its events, a timer, a read), before Run's loop starts
// and after it ends, it queues f as Do does; so from an event of this
// Conn it queues f too. It reports what Do reports.
//
// So DoNow runs the Conn's events, and functions queued by others, on
// the caller's goroutine: call it only from a goroutine that holds no
// lock that f, a function queued on this Driver, or any event handler
// of this Conn takes (directly or through what it calls), and that may
// wait for them: a blocking call of a client, its caller's goroutine
// with no lock held, is the case it is for. Never call it from another
// connection's event handler or with locks held that such code takes
// (a broker that routes a message to a consumer on another connection
// wakes it with Do or Wake): its handler would run there and could
// deadlock on them.
func (d *Driver) DoNow(f func(c *engine.Conn)) bool {
	if f == nil {
		return false
	}
	if !d.emu.TryLock() {
		return d.fallback(d.enqueue(f))
	}
	if !d.inline() {
		d.emu.Unlock()
		return d.Do(f)
	}
	if d.queued.Load() == 0 {
		f(d.c)
	} else {
		d.enqueue(f) // behind what is queued
		d.runQueued()
	}
	d.release()
	return true
}

// fallback is the end of a DoNow or WakeNow that found the Conn held:
// its function queued (ok) is for the loop, unless the goroutine that
// held the Conn let go meanwhile: then this one takes it and runs the
// queue now.
func (d *Driver) fallback(ok bool) bool {
	if !ok {
		return false
	}
	d.signal()
	if d.emu.TryLock() {
		if !d.inline() {
			d.emu.Unlock()
			return true
		}
		d.runQueued()
		d.release()
	}
	return true
}

// enqueue queues f, unless the loop has ended (or f is nil).
func (d *Driver) enqueue(f func(c *engine.Conn)) bool {
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
	return true
}

// Waker runs a function with a Driver's Conn when woken, coalescing
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

// NewWaker returns a Waker that runs f with d's Conn, once per Wake that
// finds no run of it queued.
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
// blocks and allocates nothing, and runs nothing on the caller's
// goroutine: like Do, it may be called from any goroutine, another
// Driver's events included. After the Driver's loop has ended it queues
// nothing and reports false.
func (w *Waker) Wake() bool {
	added, ok := w.enqueue()
	if added {
		w.d.signal()
	}
	return ok
}

// WakeNow is Wake, with the run on the calling goroutine when it can be,
// as DoNow runs its function: when no goroutine holds the Conn and no
// run of the Waker is queued, it runs the function there, after what was
// queued before, and writes the output. DoNow's rule of use is
// WakeNow's: only from a goroutine that holds no lock the function, a
// queued function or an event handler of this Conn takes. It allocates
// nothing.
func (w *Waker) WakeNow() bool {
	d := w.d
	if !d.emu.TryLock() {
		added, ok := w.enqueue()
		if !added {
			return ok
		}
		return d.fallback(true)
	}
	if !d.inline() {
		d.emu.Unlock()
		return w.Wake()
	}
	if d.queued.Load() == 0 {
		w.f(d.c)
	} else {
		w.enqueue() // behind what is queued, or queued already
		d.runQueued()
	}
	d.release()
	return true
}

// Driver returns the Driver the Waker runs its function on.
func (w *Waker) Driver() *Driver { return w.d }

// enqueue queues a run unless one is queued already or the Driver's loop
// has ended: added reports that it queued one, ok that a run follows.
func (w *Waker) enqueue() (added, ok bool) {
	if !w.queued.CompareAndSwap(false, true) {
		return false, true // queued and not yet begun: that run will see this
	}
	d := w.d
	d.mu.Lock()
	if d.ended {
		d.mu.Unlock()
		w.queued.Store(false)
		return false, false
	}
	d.push(&w.node)
	d.mu.Unlock()
	return true, true
}

// push appends t to the queue; d.mu is held.
func (d *Driver) push(t *task) {
	if d.tail == nil {
		d.head = t
	} else {
		d.tail.next = t
	}
	d.tail = t
	d.queued.Add(1)
}

// signal tells the loop that it may have something to do.
func (d *Driver) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// runQueued runs up to maxRun of the queued functions and wake-ups, in
// order, and signals the loop when more are left, so the next turn comes
// back to them after what else is ready. The Conn is held.
func (d *Driver) runQueued() int {
	if d.queued.Load() == 0 {
		return 0 // the common case, without the queue's lock
	}
	ran := 0
	for ; ran < maxRun; ran++ {
		d.mu.Lock()
		t := d.head
		if t == nil {
			d.mu.Unlock()
			return ran
		}
		d.head, t.next = t.next, nil
		if d.head == nil {
			d.tail = nil
		}
		d.queued.Add(-1)
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
	if d.queued.Load() != 0 {
		d.signal()
	}
	return ran
}

// drain ends the queue: Do and Wake refuse from now on, and what they had
// accepted runs now, in order. The Conn is held.
func (d *Driver) drain() {
	d.mu.Lock()
	d.ended = true
	t := d.head
	d.head, d.tail, d.spare, d.nspare = nil, nil, nil, 0
	d.queued.Store(0)
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

// inline reports that a goroutine other than the loop that holds the
// Conn may run the engine: the loop runs, and is not feeding a failed
// write's last reads. The Conn is held.
func (d *Driver) inline() bool { return d.live && !d.handoff }

// release ends a hold of the Conn by a goroutine other than the loop:
// it runs what was queued meanwhile, then the timers, writes the output
// and lets go of the Conn. Then, once, it looks at the queue again: what
// was queued while it let go is run at once if the Conn is free, else
// left to its holder or the loop.
func (d *Driver) release() {
	for again := true; ; again = false {
		d.runQueued()
		look := d.turn()
		d.emu.Unlock()
		if look {
			d.signal()
		}
		if d.queued.Load() == 0 {
			return
		}
		if !again || !d.emu.TryLock() {
			d.signal() // its holder, or the loop, runs it
			return
		}
		if !d.inline() {
			d.emu.Unlock()
			d.signal()
			return
		}
	}
}

// turn runs the Conn's timers, notes the end of the connection, and
// writes what it can when no write is with the writer; the Conn is held.
// It reports whether the loop must look at the Conn: it is done, a timer
// is due before the loop's, or a read the loop holds can be fed now.
func (d *Driver) turn() bool {
	c := d.c
	now := time.Now()
	next := c.Tick(now)
	if c.Closed() && d.overAt.IsZero() {
		// Over: what is left of the output has a deadline now.
		d.overAt = now
		d.extend(now)
	}
	if !d.writing {
		d.write()
	}
	if d.returned && c.Closing() {
		// The read side rests, and the peer's close is to come: the
		// reader reads it now, not once the rest is over.
		select {
		case d.back <- struct{}{}:
		default:
		}
	}
	if d.leading {
		if d.leaderIn {
			d.leaderIn = false // its own turn: it looks itself
		} else {
			// Another goroutine ran the engine while a caller reads
			// (ReadUntil): the caller's answer may be in; its Read
			// returns, and it looks.
			d.setReadDeadline(aLongTimeAgo)
		}
	}
	look := false
	if !next.IsZero() && (d.armed.IsZero() || next.Before(d.armed)) {
		d.armed = next // the loop sets its timer for it
		look = true
	}
	return look || !d.writing && c.Done() || d.handed > 0 && d.reading && c.WantRead()
}

// write writes the Conn's output when no write is with the writer: while
// the connection is up and the network connection is a socket, inline,
// without blocking, at most maxWrite bytes; what is left goes to the
// writer. The Conn is held.
func (d *Driver) write() {
	c := d.c
	for budget := maxWrite; ; {
		out := c.Output()
		if len(out) == 0 {
			return
		}
		out = out[:min(len(out), maxWrite)]
		if d.raw == nil || !d.overAt.IsZero() || budget <= 0 {
			d.writes <- out // the writer is idle: never blocks
			d.writing = true
			d.stats.handed++
			return
		}
		n := d.raw.write(out[:min(len(out), budget)])
		if n > 0 {
			c.Written(n)
			budget -= n
		}
		if n < len(out) {
			budget = 0 // the socket is full, or failed: the writer finds out
		}
	}
}

// Close closes the connection, without waiting: the close it sends
// carries amqp:connection:forced "shutdown" (which Wait does not report
// as an error), and the network connection is closed once the peer has
// answered, or 5 s after. It may be called from any goroutine, while the
// Driver is blocked in nothing: a write to a peer that does not read
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
// connection before it returns, runs what Do and Wake queued and was not
// run, and returns the connection's error (nil after a clean close).
func (d *Driver) Run(ctx context.Context) error {
	defer close(d.done)
	c := d.c
	d.emu.Lock()
	if c.Config().TLSHeader {
		if err := d.upgrade(ctx); err != nil {
			c.ReadFailed(err)
		}
	}
	d.raw = newRawWriter(d.nc)
	for range 2 {
		d.free <- make([]byte, readSize)
	}
	d.live, d.reading = true, true
	go d.reader()
	go d.writer()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	stop := d.stop
	ctxDone := ctx.Done()
	var grace <-chan time.Time
loop:
	for {
		d.turn()
		if !d.writing && c.Done() {
			break
		}
		if d.armed.IsZero() {
			timer.Reset(time.Hour)
		} else {
			timer.Reset(time.Until(d.armed))
		}
		reads := d.reads
		if !d.reading || !c.WantRead() {
			reads = nil
		}
		d.emu.Unlock()
		select {
		case r := <-reads:
			d.emu.Lock()
			d.handed--
			d.stats.loopFeeds++
			d.feed(r)
		case r := <-d.wrote:
			d.emu.Lock()
			d.writing = false
			c.Written(r.n)
			if r.err != nil && d.reading && d.overAt.IsZero() {
				d.reading = d.feedRest()
			}
			if !d.wrote1(r) {
				break loop
			}
		case <-d.wake:
			d.emu.Lock()
			d.stats.loopRuns += d.runQueued()
		case <-timer.C:
			d.emu.Lock()
			d.armed = time.Time{} // fired: the turn sets it again
		case <-stop:
			d.emu.Lock()
			stop = nil
			d.shutdown()
			grace = time.After(shutdownGrace)
		case <-ctxDone:
			d.emu.Lock()
			ctxDone = nil
			d.shutdown()
			grace = time.After(shutdownGrace)
		case <-grace:
			d.emu.Lock()
			d.readEnded(errShutdownGrace)
			break loop
		}
	}
	// The Conn is held from here to the end: the reader and DoNow find
	// the loop over, and run nothing.
	d.live = false
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
	d.emu.Unlock()
	return d.err
}

// feed feeds the Conn a read and hands its buffer back; the Conn is held.
func (d *Driver) feed(r readResult) {
	if r.n > 0 {
		d.c.Feed(r.buf[:r.n], time.Now())
	}
	d.free <- r.buf // two buffers, room for both: never blocks
	if r.err != nil {
		d.reading = false
		d.readEnded(r.err)
	}
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

// feedRest feeds the engine what the peer sent before a write failed,
// while the connection was up, until the read side ends (a peer that
// shut its socket gives EOF or a reset at once) or for at most linger:
// a peer that wrote its last frames (an accept, its close) and shut its
// socket is heard, not lost with the write that failed. It reports
// whether the read side is still open. The Conn is held, and let go
// while it waits: meanwhile the reader hands every read to it, and
// DoNow queues.
func (d *Driver) feedRest() bool {
	d.handoff = true
	d.emu.Unlock()
	defer func() {
		d.emu.Lock()
		d.handoff = false
	}()
	t := time.NewTimer(linger)
	defer t.Stop()
	for {
		select {
		case r := <-d.reads:
			d.emu.Lock()
			d.handed--
			if r.n > 0 {
				d.c.Feed(r.buf[:r.n], time.Now())
			}
			d.emu.Unlock()
			d.free <- r.buf
			if r.err != nil {
				return false
			}
		case <-t.C:
			return true
		}
	}
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

// writer writes what a holder of the Conn hands it, one write at a time,
// and hands the result to the loop.
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

// reader reads and feeds the Conn itself (readInline), or, when it
// cannot, hands the read to the loop, in order.
func (d *Driver) reader() {
	var buf []byte // kept while the reads are fed inline
	for {
		if buf == nil {
			select {
			case buf = <-d.free:
			case <-d.done:
				return
			}
		}
		n, err := d.readNet(buf)
		if err != nil && d.raw != nil && errors.Is(err, os.ErrDeadlineExceeded) {
			// A caller asks for the read side (ReadUntil), or asked
			// and has given up: nothing else sets a read deadline on a
			// socket while the loop runs.
			if n > 0 {
				r := readResult{buf, n, nil}
				fed, over := d.readInline(r)
				if over {
					return
				}
				if !fed {
					buf = nil
					select {
					case d.reads <- r:
					case <-d.done:
						return
					}
				}
			}
			var over bool
			if buf, over = d.lend(buf); over {
				return
			}
			continue
		}
		r := readResult{buf, n, err}
		fed, over := d.readInline(r)
		if over {
			return
		}
		if !fed {
			buf = nil // the loop's now, back through free
			select {
			case d.reads <- r:
			case <-d.done:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// readNet is a read of the network connection by whoever holds the
// read side (the reader goroutine, or a caller in ReadUntil): through
// the raw socket when there is one (rawWriter.read: no scheduler
// bookkeeping for a call that does not block), else its Read.
func (d *Driver) readNet(buf []byte) (int, error) {
	if r := d.raw; r != nil {
		return r.read(buf)
	}
	return d.nc.Read(buf)
}

// lend hands the read side, with buf (nil: none), to the caller that
// asked for it (ReadUntil), waits until it is handed back and not taken
// again and returns the buffer then (nil: the reader takes a free one);
// over reports that
// the read side or the loop has ended meanwhile. With no caller asking
// (it gave up), it clears the read deadline that interrupted the read,
// and the reader reads on.
func (d *Driver) lend(buf []byte) (_ []byte, over bool) {
	d.emu.Lock()
	if !d.live {
		d.emu.Unlock()
		return nil, true
	}
	if !d.leadWant {
		d.setReadDeadline(time.Time{})
		d.emu.Unlock()
		return buf, false
	}
	d.leadWant, d.leading, d.leadBuf = false, true, buf
	d.stats.led++
	d.emu.Unlock()
	d.lead <- struct{}{} // 1-buffered, one lender at a time: never blocks
	for {
		select {
		case <-d.back:
			d.emu.Lock()
		case now := <-d.rest.C:
			d.emu.Lock()
			d.restArmed = false
			if d.returned && now.Before(d.restUntil) {
				// Given back again since the timer was set: it
				// rests on, for what is left.
				d.restArmed = true
				d.stats.restArms++
				d.rest.Reset(d.restUntil.Sub(now))
				d.emu.Unlock()
				continue
			}
		case <-d.done:
			return nil, true
		}
		if !d.live || !d.reading {
			d.emu.Unlock()
			return nil, true
		}
		if d.returned { // not taken again meanwhile: the reader's again
			d.returned = false
			buf, d.leadBuf = d.leadBuf, nil
			d.setReadDeadline(time.Time{})
			d.emu.Unlock()
			return buf, false
		}
		d.emu.Unlock()
	}
}

// setReadDeadline sets nc's read deadline to t unless it is set to t
// already; the Conn is held.
func (d *Driver) setReadDeadline(t time.Time) {
	if t.Equal(d.rdl) {
		return
	}
	d.rdl = t
	d.stats.deadlines++
	d.nc.SetReadDeadline(t)
}

// readInline feeds the Conn a read on the reader's goroutine and reports
// true, unless the loop has ended (over), or the loop must feed it: it
// holds an earlier read, it is feeding a failed write's last reads, or
// the Conn does not want to read (WantRead). Then the read is counted as
// handed to the loop, which feeds it when the Conn wants it.
func (d *Driver) readInline(r readResult) (fed, over bool) {
	d.emu.Lock()
	if !d.live {
		d.emu.Unlock()
		return false, true
	}
	if d.handoff || d.handed > 0 || !d.reading || !d.c.WantRead() {
		d.handed++
		d.emu.Unlock()
		return false, false
	}
	d.stats.readerFeeds++
	if r.n > 0 {
		d.c.Feed(r.buf[:r.n], time.Now())
	}
	if r.err != nil {
		d.reading = false
		d.readEnded(r.err)
	}
	d.release()
	return true, false
}

// Dial connects to addr (network "tcp") as a client and runs the
// connection (Run) on a new goroutine: events reach h one at a time, as
// the Driver's documentation says where. With tlsConfig set the
// connection is TLS (amqps). Use the Driver's Do or DoNow to act on the
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

// rawWriter writes to a socket without blocking, on the goroutine that
// holds the Conn (rawwrite_unix.go): one write system call, what the
// socket takes at once. The reader goroutine reads through it too (read).
type rawWriter struct {
	rc syscall.RawConn
	nc net.Conn              // for the addresses of a read's error
	fn func(fd uintptr) bool // w.try, made once: a method value allocates
	b  []byte
	n  int
	// read's: of whoever holds the read side (the reader, or a caller in ReadUntil)
	rfn  func(fd uintptr) bool // w.tryRead
	rb   []byte
	rn   int
	rerr error
}

// write writes what of b the socket takes at once and returns how much
// that was: 0 when it takes nothing (full), when it failed, or when the
// network connection is closed or past a deadline.
func (w *rawWriter) write(b []byte) int {
	w.b, w.n = b, 0
	w.rc.Write(w.fn) // an error: nothing written, and the writer finds out
	w.b = nil
	return w.n
}

// read is the Read of the socket by whoever holds the read side: it
// waits, as Read does, for the socket to be readable within the read
// deadline (an error matching os.ErrDeadlineExceeded past it,
// net.ErrClosed once closed), and reads with one raw system call
// (tryRead).
func (w *rawWriter) read(b []byte) (int, error) {
	w.rb, w.rn, w.rerr = b, 0, nil
	err := w.rc.Read(w.rfn)
	w.rb = nil
	if err != nil {
		if oe, ok := err.(*net.OpError); ok && oe.Op == "raw-read" {
			oe.Op = "read" // as the connection's Read says it
		}
		return 0, err
	}
	return w.rn, w.rerr
}
