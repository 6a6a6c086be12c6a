package driver

import (
	"context"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// These tests hold the Driver to where it runs the engine, by counting
// its hand-offs between goroutines (Driver.stats), never by timing: a
// request on an idle connection is run and written by the goroutine that
// makes it (DoNow, WakeNow), and the answer is fed by the reader
// goroutine that read it, on both ends; neither loop nor writer
// goroutine takes part. And DoNow and WakeNow keep Do's and Wake's
// contract: order, exactly once, no wake-up lost.

// oneSender is a client handler with one sending link: it notes the
// first credit and hands every settled disposition to settled.
type oneSender struct {
	engine.NopHandler
	link    *engine.Link
	ready   chan struct{} // closed once the link has credit
	once    sync.Once
	settled chan struct{}
}

func newOneSender() *oneSender {
	return &oneSender{ready: make(chan struct{}), settled: make(chan struct{}, 4096)}
}

func (h *oneSender) OnConnectionOpen(c *engine.Conn) {
	s, _ := c.Begin()
	h.link, _ = s.AttachSender(engine.LinkOptions{Address: "q", Unsettled: true})
}

func (h *oneSender) OnFlow(l *engine.Link) {
	if l.Credit() > 0 {
		h.once.Do(func() { close(h.ready) })
	}
}

func (h *oneSender) OnDisposition(_ *engine.Link, d engine.DeliveryUpdate) {
	if d.Settled {
		h.settled <- struct{}{}
	}
}

// acceptor is a server handler that notes its connection's Driver.
type acceptor struct {
	engine.NopHandler
	drv chan *Driver
}

func (h *acceptor) OnConnectionOpen(c *engine.Conn) { h.drv <- Of(c) }

// pair dials a client with h to a server that accepts every delivery
// (credit and window enough for the test, so that no flow of theirs
// comes unasked) and returns both Drivers once h's link has credit.
func pair(t *testing.T, h *oneSender) (cli, srv *Driver) {
	t.Helper()
	a := &acceptor{drv: make(chan *Driver, 1)}
	cli = dialSender(t, &Server{Config: engine.Config{Credit: 100_000, Window: 100_000, AutoAccept: true}, Handler: a}, h)
	return cli, <-a.drv
}

// dialSender serves srv, dials a client with h to it, closed when the
// test ends, and returns it once h's link has credit.
func dialSender(t *testing.T, srv *Server, h *oneSender) *Driver {
	t.Helper()
	addr := serve(t, srv)
	cli, err := Dial(context.Background(), "tcp", addr, engine.Config{}, nil, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cli.Close()
		cli.Wait()
	})
	select {
	case <-h.ready:
	case <-time.After(20 * time.Second):
		t.Fatal("the sender got no credit")
	}
	return cli
}

// waitFree waits until no goroutine holds d's Conn.
func waitFree(t *testing.T, d *Driver) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !d.emu.TryLock() {
		if time.Now().After(deadline) {
			t.Fatal("the Conn is held for 20 s")
		}
		runtime.Gosched()
	}
	d.emu.Unlock()
}

func statsOf(d *Driver) hops {
	d.emu.Lock()
	defer d.emu.Unlock()
	return d.stats
}

func waitSettled(t *testing.T, h *oneSender) {
	t.Helper()
	select {
	case <-h.settled:
	case <-time.After(20 * time.Second):
		t.Fatal("no disposition in 20 s")
	}
}

// A request on an idle connection, by DoNow or by WakeNow, and its
// answer: written by the caller, fed and answered by the server's
// reader, the answer fed by the client's reader. Neither Driver's loop
// runs anything or feeds a read, and neither hands a write to its
// writer goroutine (a request of 100 bytes goes into an empty socket
// buffer at once).
func TestDriverRoundTripHops(t *testing.T) {
	t.Parallel()
	h := newOneSender()
	cli, srv := pair(t, h)
	payload := make([]byte, 100)
	send := func(*engine.Conn) {
		if _, err := h.link.Send(nil, payload, false); err != nil {
			t.Error(err)
		}
	}
	w := cli.NewWaker(send)
	waitFree(t, cli)
	waitFree(t, srv)
	c0, s0 := statsOf(cli), statsOf(srv)
	const n = 200
	for i := range n {
		waitFree(t, cli)
		waitFree(t, srv)
		var ok bool
		if i%2 == 0 {
			ok = cli.DoNow(send)
		} else {
			ok = w.WakeNow()
		}
		if !ok {
			t.Fatal("DoNow or WakeNow on a running Driver returned false")
		}
		waitSettled(t, h)
	}
	c1, s1 := statsOf(cli), statsOf(srv)
	for _, x := range []struct {
		end  string
		a, b hops
	}{{"client", c0, c1}, {"server", s0, s1}} {
		if d := x.b.loopRuns - x.a.loopRuns; d != 0 {
			t.Errorf("%s: the loop ran %d functions in %d round trips, want 0: the request was not run on the caller's goroutine", x.end, d, n)
		}
		if d := x.b.loopFeeds - x.a.loopFeeds; d != 0 {
			t.Errorf("%s: the loop fed %d reads in %d round trips, want 0: the reader did not feed them", x.end, d, n)
		}
		if d := x.b.handed - x.a.handed; d != 0 {
			t.Errorf("%s: %d writes went to the writer goroutine in %d round trips, want 0", x.end, d, n)
		}
	}
}

// DoNow and WakeNow while another goroutine holds the Conn queue their
// function behind what was queued before, and it runs once, in order;
// from a function run with this Conn they queue too (and do not wait
// for themselves).
func TestDriverDoNowQueuesWhileHeld(t *testing.T) {
	t.Parallel()
	h := newOneSender()
	d, _ := pair(t, h)
	var order []int // with the Conn held
	hold, held := make(chan struct{}), make(chan struct{})
	if !d.Do(func(*engine.Conn) { close(held); <-hold }) {
		t.Fatal("Do refused")
	}
	<-held
	w := d.NewWaker(func(*engine.Conn) { order = append(order, 2) })
	var nested atomic.Bool
	d.DoNow(func(*engine.Conn) {
		order = append(order, 1)
		// Held here by this goroutine: queued behind 3.
		d.DoNow(func(*engine.Conn) { order = append(order, 4); nested.Store(true) })
	})
	w.WakeNow()
	d.Do(func(*engine.Conn) { order = append(order, 3) })
	close(hold)
	done := make(chan []int, 1)
	deadline := time.Now().Add(20 * time.Second)
	for !nested.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the nested DoNow did not run in 20 s")
		}
		runtime.Gosched()
	}
	d.DoNow(func(*engine.Conn) { done <- append([]int(nil), order...) })
	select {
	case got := <-done:
		if len(got) != 4 || got[0] != 1 || got[1] != 2 || got[2] != 3 || got[3] != 4 {
			t.Fatalf("ran in the order %v, want [1 2 3 4]", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the last DoNow did not run")
	}
}

// Goroutines that hand work to one Driver at once with DoNow, WakeNow,
// Do and Wake, while its reader feeds the answers to what they send:
// every function runs exactly once, and every change made before a Wake
// or WakeNow is seen by a run of the Waker that follows (a lost wake-up
// leaves its goroutine waiting).
func TestDriverDoNowContended(t *testing.T) {
	t.Parallel()
	h := newOneSender()
	d, _ := pair(t, h)
	const workers, rounds = 4, 300
	var posted, seen [workers]atomic.Int64
	var saw [workers]chan struct{}
	for i := range saw {
		saw[i] = make(chan struct{}, 1)
	}
	payload := make([]byte, 10)
	sent := 0 // with the Conn held
	w := d.NewWaker(func(*engine.Conn) {
		for i := range workers {
			if p := posted[i].Load(); p > seen[i].Load() {
				seen[i].Store(p)
				select {
				case saw[i] <- struct{}{}:
				default:
				}
			}
		}
	})
	var ran atomic.Int64
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := int64(1); k <= rounds; k++ {
				f := func(*engine.Conn) {
					ran.Add(1)
					if _, err := h.link.Send(nil, payload, false); err == nil {
						sent++
					}
				}
				var ok bool
				if k%2 == 0 {
					ok = d.DoNow(f)
				} else {
					ok = d.Do(f)
				}
				posted[i].Store(k)
				if k%3 == 0 {
					ok = w.Wake() && ok
				} else {
					ok = w.WakeNow() && ok
				}
				if !ok {
					t.Error("a Driver that runs refused work")
					return
				}
				deadline := time.After(20 * time.Second)
				for seen[i].Load() < k {
					select {
					case <-saw[i]:
					case <-deadline:
						t.Errorf("worker %d: the change before wake-up %d was not seen in 20 s: a wake-up was lost", i, k)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	total := make(chan [2]int64, 1)
	d.DoNow(func(*engine.Conn) { total <- [2]int64{ran.Load(), int64(sent)} })
	got := <-total
	if got[0] != workers*rounds {
		t.Fatalf("%d functions ran, want %d", got[0], workers*rounds)
	}
	for range got[1] {
		waitSettled(t, h)
	}
}

// The reader feeds the Conn only when it wants to read (WantRead), and
// in order: a read made while the Conn's output is over MaxOutput is
// handed to the loop, and so is every read after it until the loop has
// fed it.
func TestDriverReaderBackPressure(t *testing.T) {
	t.Parallel()
	// A client's protocol header (8 bytes) is its first output: over a
	// MaxOutput of 1 until written.
	c := engine.NewClient(engine.Config{MaxOutput: 1}, &engine.NopHandler{})
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	d := NewDriver(a, c)
	d.live, d.reading = true, true // as Run sets them, without its goroutines
	if c.WantRead() {
		t.Fatal("WantRead with the header unwritten over MaxOutput 1: this tests nothing")
	}
	hdr := frame.AppendProtocolHeader(nil, frame.HeaderAMQP)
	if fed, over := d.readInline(readResult{buf: hdr, n: len(hdr)}); fed || over {
		t.Fatalf("readInline while the Conn does not want to read: fed %v, over %v; want the read handed to the loop", fed, over)
	}
	c.Written(len(c.Output()))
	if !c.WantRead() {
		t.Fatal("no WantRead once the output is written")
	}
	if fed, _ := d.readInline(readResult{buf: hdr, n: len(hdr)}); fed {
		t.Fatal("readInline fed a read while an earlier one waits for the loop: out of order")
	}
	if d.handed != 2 {
		t.Fatalf("%d reads handed to the loop, want 2", d.handed)
	}
	d.handed = 0 // the loop fed them
	if fed, _ := d.readInline(readResult{buf: hdr, n: len(hdr)}); !fed {
		t.Fatal("readInline did not feed a read the Conn wants, with none waiting for the loop")
	}
}
