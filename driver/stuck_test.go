package driver

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// These tests hold the Driver to its deadlines with a peer that stops
// reading: the Driver's writes block, and its timers (idle time-out,
// handshake time-out, CloseWait, the shutdown grace) must still end the
// connection and the Driver's goroutine. Each waits with a generous bound
// and fails only when the connection is still open after it: no test
// here measures how fast anything is.

// isCond reports that e's condition is cond.
func isCond(e *engine.Error, cond frame.Condition) bool {
	return e != nil && e.Condition == cond
}

// streamer is a server handler that sends presettled messages of payload
// to every link the peer attaches as a receiver, as fast as credit and
// the output buffer allow.
type streamer struct {
	engine.NopHandler
	payload     []byte
	link        *engine.Link
	full        atomic.Bool // Send has reported ErrOutputFull
	closeOnFull bool        // then Close the connection (on the driver's goroutine)
	drv         chan *Driver
	closed      chan *engine.Error
}

func newStreamer(size int) *streamer {
	return &streamer{payload: make([]byte, size), drv: make(chan *Driver, 1), closed: make(chan *engine.Error, 1)}
}

func (h *streamer) OnConnectionOpen(c *engine.Conn) { h.drv <- Of(c) }
func (h *streamer) OnLinkAttach(l *engine.Link) {
	if l.IsSender() {
		h.link = l
	}
}
func (h *streamer) OnFlow(*engine.Link)                               { h.pump() }
func (h *streamer) OnWritable(*engine.Conn)                           { h.pump() }
func (h *streamer) OnConnectionClose(_ *engine.Conn, e *engine.Error) { h.closed <- e }

func (h *streamer) pump() {
	for h.link != nil {
		_, err := h.link.Send(nil, h.payload, true)
		if err == nil {
			continue
		}
		if err == engine.ErrOutputFull && !h.full.Swap(true) && h.closeOnFull {
			h.link.Conn().Close(nil)
		}
		return
	}
}

// attacher is the handler of stuckReceiver's client: it attaches one
// receiver and notes when it is attached.
type attacher struct {
	engine.NopHandler
	credit   uint32
	attached bool
}

func (h *attacher) OnConnectionOpen(c *engine.Conn) {
	s, _ := c.Begin()
	s.AttachReceiver(engine.LinkOptions{Address: "q", Credit: h.credit, Presettled: true})
}
func (h *attacher) OnLinkAttach(*engine.Link) { h.attached = true }

// stuckReceiver connects to addr, attaches a receiver with credit and,
// from then on, neither reads nor writes (it keeps the socket open until
// the test ends): a peer that stops reading.
func stuckReceiver(t *testing.T, addr string, credit uint32) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	h := &attacher{credit: credit}
	c := engine.NewClient(engine.Config{NoSASL: true}, h)
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	buf := make([]byte, 4096)
	for {
		if out := c.Output(); len(out) > 0 {
			n, err := nc.Write(out)
			c.Written(n)
			if err != nil {
				t.Fatal(err)
			}
		}
		if h.attached && len(c.Output()) == 0 {
			break // the flow granting credit is written: stop here
		}
		n, err := nc.Read(buf)
		if err != nil {
			t.Fatal("stuck receiver, before it is attached:", err)
		}
		c.Feed(buf[:n], time.Now())
	}
	nc.SetDeadline(time.Time{})
	return nc
}

// serve runs srv on a loopback listener until the test ends and returns
// its address.
func serve(t *testing.T, srv *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// waitEnded waits up to bound for d's loop to end and checks that its
// network connection is closed.
func waitEnded(t *testing.T, d *Driver, bound time.Duration, what string) {
	t.Helper()
	select {
	case <-d.Done():
	case <-time.After(bound):
		t.Fatalf("%s: the server's Driver is still running after %v", what, bound)
	}
	if _, err := d.NetConn().Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("%s: the network connection is not closed after the Driver ended: Read: %v", what, err)
	}
}

// A bug once measured: a server with an idle time-out sends 60 kB
// messages to a receiver that granted credit 1000 and then neither reads
// nor sends. The server's writes block; it must still close the peer at
// its idle time-out (resource-limit-exceeded) and end its Driver.
func TestDriverIdleTimeoutStuckReader(t *testing.T) {
	t.Parallel()
	const idle = time.Second
	h := newStreamer(60_000)
	addr := serve(t, &Server{Config: engine.Config{IdleTimeout: idle}, Handler: h})
	stuckReceiver(t, addr, 1000)
	d := <-h.drv
	waitEnded(t, d, 20*idle, "idle time-out")
	if !h.full.Load() {
		t.Fatal("the server never filled its output: the peer did not stop it writing, so this tested nothing")
	}
	if e := <-h.closed; !isCond(e, frame.CondResourceLimitExceeded) {
		t.Fatalf("OnConnectionClose: %v, want amqp:resource-limit-exceeded", e)
	}
	if err := d.Wait(); !isCond(asError(err), frame.CondResourceLimitExceeded) {
		t.Fatalf("Wait: %v, want amqp:resource-limit-exceeded", err)
	}
}

func asError(err error) *engine.Error {
	var e *engine.Error
	errors.As(err, &e)
	return e
}

// A close the peer does not answer, because it has stopped reading (the
// close waits behind megabytes it does not take): the connection is over
// at CloseWait and the Driver ends.
func TestDriverCloseWaitStuckReader(t *testing.T) {
	if testing.Short() {
		t.Skip("waits CloseWait (10 s)")
	}
	t.Parallel()
	h := newStreamer(60_000)
	h.closeOnFull = true
	addr := serve(t, &Server{Handler: h})
	stuckReceiver(t, addr, 1000)
	d := <-h.drv
	waitEnded(t, d, 4*engine.CloseWait, "CloseWait")
	if !h.full.Load() {
		t.Fatal("the server never filled its output: nothing blocked its close")
	}
	if e := <-h.closed; e != nil {
		t.Fatalf("OnConnectionClose: %v, want nil (this end closed without error)", e)
	}
}

// A peer that sends its protocol header and never reads: the server's
// answer blocks (net.Pipe has no buffer), and the handshake time-out must
// still end the connection.
func TestDriverHandshakeTimeoutStuckReader(t *testing.T) {
	t.Parallel()
	const hs = 300 * time.Millisecond
	srvEnd, peer := net.Pipe()
	defer peer.Close()
	h := newStreamer(0)
	d := NewDriver(srvEnd, engine.NewServer(engine.Config{HandshakeTimeout: hs}, h))
	go d.Run(context.Background())
	go peer.Write(frame.AppendProtocolHeader(nil, frame.HeaderAMQP))
	waitEnded(t, d, 20*time.Second, "handshake time-out")
	if e := <-h.closed; !isCond(e, frame.CondResourceLimitExceeded) {
		t.Fatalf("OnConnectionClose: %v, want amqp:resource-limit-exceeded", e)
	}
}
