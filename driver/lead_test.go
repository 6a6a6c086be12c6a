package driver

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// These tests hold ReadUntil to its contract by synchronisation: the
// server answers only once the client's caller holds the read side (or
// has given it up), so which goroutine reads the answer is known.

// gate is a server handler that holds every delivery unsettled until the
// test accepts it (accept, with the Conn held).
type gate struct {
	engine.NopHandler
	drv  chan *Driver
	ids  chan uint32 // deliveries arrived
	link *engine.Link
}

func (h *gate) OnConnectionOpen(c *engine.Conn) { h.drv <- Of(c) }

func (h *gate) OnDelivery(l *engine.Link, d engine.Delivery) {
	h.link = l
	h.ids <- d.DeliveryID
}

// accept has srv accept and settle delivery id.
func (h *gate) accept(t *testing.T, srv *Driver, id uint32) {
	t.Helper()
	if !srv.Do(func(*engine.Conn) {
		if err := h.link.Dispose(id, frame.DeliveryState{Type: frame.StateAccepted}, true); err != nil {
			t.Error(err)
		}
	}) {
		t.Fatal("the server's Driver has ended")
	}
}

// gatedPair dials a client with h to a server that holds deliveries
// until the test accepts them, and returns both Drivers once h's link
// has credit.
func gatedPair(t *testing.T, h *oneSender) (cli, srv *Driver, g *gate) {
	t.Helper()
	g = &gate{drv: make(chan *Driver, 1), ids: make(chan uint32, 64)}
	cli = dialSender(t, &Server{Config: engine.Config{Credit: 100_000, Window: 100_000}, Handler: g}, h)
	return cli, <-g.drv, g
}

// waitLeading waits until a caller holds d's read side (or, with want
// false, until none does).
func waitLeading(t *testing.T, d *Driver, want bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		d.emu.Lock()
		leading := d.leading
		d.emu.Unlock()
		if leading == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("read side held by a caller: %v for 20 s", leading)
		}
		runtime.Gosched()
	}
}

func nextID(t *testing.T, g *gate) uint32 {
	t.Helper()
	select {
	case id := <-g.ids:
		return id
	case <-time.After(20 * time.Second):
		t.Fatal("no delivery at the server in 20 s")
		return 0
	}
}

// A caller that sends and then waits in ReadUntil reads the answer
// itself: each answer, which the server sends only once the caller holds
// the read side, is fed by the caller (leadFeeds), never by the loop, and
// ReadUntil, once it has had the read side, reports it done. The read
// side goes back to the reader between round trips or is taken again as
// it is (retaken), and the client's loop runs and feeds nothing.
func TestDriverReadUntil(t *testing.T) {
	t.Parallel()
	h := newOneSender()
	cli, srv, g := gatedPair(t, h)
	cli.leadFor = time.Hour // no give-up: the server answers when the test says
	payload := make([]byte, 100)
	send := func(*engine.Conn) {
		if _, err := h.link.Send(nil, payload, false); err != nil {
			t.Error(err)
		}
	}
	waitFree(t, cli)
	c0 := statsOf(cli)
	const n = 50
	for range n {
		if !cli.DoNow(send) {
			t.Fatal("DoNow on a running Driver returned false")
		}
		res := make(chan bool, 1)
		go func() {
			// Not while another goroutine holds the Conn for a moment
			// (the loop): again then.
			for !cli.ReadUntil(context.Background(), func() bool { return len(h.settled) > 0 }) {
				runtime.Gosched()
			}
			res <- true
		}()
		id := nextID(t, g)
		waitLeading(t, cli, true)
		g.accept(t, srv, id)
		<-res
		waitSettled(t, h)
	}
	c1 := statsOf(cli)
	if got := c1.leadFeeds - c0.leadFeeds; got < n {
		t.Errorf("callers fed %d reads in %d round trips: some answer was not read by its caller", got, n)
	}
	if got := (c1.led - c0.led) + (c1.retaken - c0.retaken); got != n {
		t.Errorf("read side taken %d times (lent %d, taken again %d) in %d ReadUntil", got, c1.led-c0.led, c1.retaken-c0.retaken, n)
	}
	if c1.loopFeeds != c0.loopFeeds || c1.loopRuns != c0.loopRuns {
		t.Errorf("the client's loop fed %d reads and ran %d functions", c1.loopFeeds-c0.loopFeeds, c1.loopRuns-c0.loopRuns)
	}
}

// A ReadUntil that gives up (its ctx ends, or the answer is slow) hands
// the read side back, and the reader goroutine reads the answer that
// comes after: nothing is lost at a hand-over, and the Conn goes on.
func TestDriverReadUntilGivesUp(t *testing.T) {
	t.Parallel()
	h := newOneSender()
	cli, srv, g := gatedPair(t, h)
	payload := make([]byte, 100)
	send := func(*engine.Conn) {
		if _, err := h.link.Send(nil, payload, false); err != nil {
			t.Error(err)
		}
	}
	done := func() bool { return len(h.settled) > 0 }
	for i := range 20 {
		if !cli.DoNow(send) {
			t.Fatal("DoNow on a running Driver returned false")
		}
		id := nextID(t, g)
		if i%2 == 0 {
			// ctx ends while the caller reads: it stops within
			// leadFor (2 ms), its ctx's end seen there.
			ctx, cancel := context.WithCancel(context.Background())
			res := make(chan bool, 1)
			go func() { res <- cli.ReadUntil(ctx, done) }()
			cancel()
			if <-res {
				t.Fatal("ReadUntil reported done with no answer sent")
			}
		} else {
			// The answer is slow: the caller gives up at leadFor.
			if cli.ReadUntil(context.Background(), done) {
				t.Fatal("ReadUntil reported done with no answer sent")
			}
		}
		waitLeading(t, cli, false)
		g.accept(t, srv, id)
		waitSettled(t, h) // read and fed by the reader goroutine
	}
}

// Callers that send and wait in ReadUntil at once, while another
// goroutine keeps running functions with the Conn (each of which may
// interrupt the caller that reads): one caller reads at a time, the
// others wait for the reader or for it, and every answer arrives, once.
func TestDriverReadUntilConcurrent(t *testing.T) {
	t.Parallel()
	h := newOneSender()
	cli, _ := pair(t, h)
	payload := make([]byte, 100)
	send := func(*engine.Conn) {
		if _, err := h.link.Send(nil, payload, false); err != nil {
			t.Error(err)
		}
	}
	done := func() bool { return len(h.settled) > 0 }
	const callers, each = 4, 100
	stop := make(chan struct{})
	poked := make(chan struct{})
	go func() {
		defer close(poked)
		for {
			select {
			case <-stop:
				return
			default:
			}
			cli.DoNow(func(*engine.Conn) {})
			runtime.Gosched()
		}
	}()
	errs := make(chan string, callers)
	for range callers {
		go func() {
			for range each {
				if !cli.DoNow(send) {
					errs <- "DoNow on a running Driver returned false"
					return
				}
				cli.ReadUntil(context.Background(), done)
				select {
				case <-h.settled: // any caller's: as many as were sent
				case <-time.After(20 * time.Second):
					errs <- "no disposition in 20 s"
					return
				}
			}
			errs <- ""
		}()
	}
	for range callers {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
	close(stop)
	<-poked
	if n := len(h.settled); n != 0 {
		t.Errorf("%d dispositions more than deliveries sent", n)
	}
	waitLeading(t, cli, false)
}

// hourPair is pair with a client whose read side rests, and whose
// ReadUntil holds it, for an hour (so that no timer of theirs fires on
// a slow machine), and send, which sends a 100-byte message on h's link.
func hourPair(t *testing.T) (h *oneSender, cli, srv *Driver, send func(*engine.Conn)) {
	h = newOneSender()
	cli, srv = pair(t, h)
	cli.emu.Lock()
	cli.leadFor, cli.restFor = time.Hour, time.Hour
	cli.emu.Unlock()
	payload := make([]byte, 100)
	send = func(*engine.Conn) {
		if _, err := h.link.Send(nil, payload, false); err != nil {
			t.Error(err)
		}
	}
	return h, cli, srv, send
}

// sendAndRead has cli send (DoNow) and waits for the outcome with read
// (ReadUntil or ReadUntilRested) on this goroutine, again while another
// goroutine holds the Conn for a moment (the loop).
func sendAndRead(t *testing.T, h *oneSender, cli *Driver, send func(*engine.Conn), read func(context.Context, func() bool) bool) {
	t.Helper()
	waitFree(t, cli)
	if !cli.DoNow(send) {
		t.Fatal("DoNow on a running Driver returned false")
	}
	for !read(context.Background(), func() bool { return len(h.settled) > 0 }) {
		runtime.Gosched()
	}
	waitSettled(t, h)
}

// A run of round trips, each a request and a ReadUntil on the same
// goroutine, takes the read side as it rests every time after the
// first, and sets neither a read deadline nor the rest's timer again:
// each would reset a runtime timer, and a reset timer wakes an idle
// processor of the Go runtime. (With a rest and a lead of an hour, so
// that no timer fires on a slow machine.) Closed then, it closes
// cleanly, the rest notwithstanding.
func TestDriverReadUntilSetsNoTimerPerRequest(t *testing.T) {
	t.Parallel()
	h, cli, srv, send := hourPair(t)
	waitFree(t, cli)
	waitFree(t, srv)
	c0 := statsOf(cli)
	const n = 100
	for range n {
		sendAndRead(t, h, cli, send, cli.ReadUntil)
	}
	c1 := statsOf(cli)
	if got := c1.retaken - c0.retaken; got < n-1 {
		t.Errorf("the read side was taken as it rested %d times in %d round trips, want %d", got, n, n-1)
	}
	// The first ReadUntil interrupts the reader and sets its deadline.
	if got := c1.deadlines - c0.deadlines; got > 2 {
		t.Errorf("%d read deadlines set in %d round trips, want at most 2", got, n)
	}
	if got := c1.restArms - c0.restArms; got > 1 {
		t.Errorf("the rest's timer set %d times in %d round trips, want at most 1", got, n)
	}
	// Closed while the read side rests (for an hour): the reader reads
	// the peer's close at once, and the close is clean, not cut short
	// by the shutdown's grace.
	cli.Close()
	if err := cli.Wait(); err != nil {
		t.Fatal(err)
	}
	if c2 := statsOf(cli); c2.readerFeeds == c1.readerFeeds {
		t.Fatalf("closed while the read side rests: the reader read nothing more (the peer's close was left to the shutdown's grace): %+v %+v", c1, c2)
	}
}

// ReadUntilRested takes the read side only as it rests: with the reader
// reading, it reads nothing and lends nothing; given back by a ReadUntil
// before it (resting for an hour here), it takes it as it is and reads
// its answer itself.
func TestDriverReadUntilRested(t *testing.T) {
	t.Parallel()
	h, cli, srv, send := hourPair(t)
	settled := func() bool { return len(h.settled) > 0 }
	waitFree(t, cli)
	waitFree(t, srv)
	c0 := statsOf(cli)
	// The reader reads: nothing taken.
	if cli.ReadUntilRested(context.Background(), settled) {
		t.Fatal("done with nothing sent")
	}
	if c1 := statsOf(cli); c1.led != c0.led || c1.retaken != c0.retaken || c1.leadFeeds != c0.leadFeeds {
		t.Fatalf("with the reader reading, ReadUntilRested took the read side: %+v -> %+v", c0, c1)
	}
	// A round trip by ReadUntil leaves the read side resting.
	sendAndRead(t, h, cli, send, cli.ReadUntil)
	c1 := statsOf(cli)
	for range 10 {
		sendAndRead(t, h, cli, send, cli.ReadUntilRested)
	}
	c2 := statsOf(cli)
	if got := c2.retaken - c1.retaken; got != 10 {
		t.Errorf("ReadUntilRested took the resting read side %d times in 10, want 10", got)
	}
	if got := c2.leadFeeds - c1.leadFeeds; got < 10 {
		t.Errorf("ReadUntilRested's callers fed %d reads in 10 round trips", got)
	}
	if c2.led != c1.led {
		t.Errorf("the reader lent the read side %d times: ReadUntilRested interrupted it", c2.led-c1.led)
	}
}
