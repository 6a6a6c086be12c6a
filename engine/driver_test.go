package engine

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

type countSink struct {
	NopHandler
	n atomic.Int64
}

func (s *countSink) OnDelivery(l *Link, d Delivery) { s.n.Add(1) }

// sendN is a client handler that sends n messages on one link, then
// closes the connection.
type sendN struct {
	NopHandler
	n, sent, settled int
	settle           bool
	payload          []byte
	closed           chan *Error
}

func (h *sendN) OnConnectionOpen(c *Conn) {
	s, _ := c.Begin()
	s.AttachSender(LinkOptions{Address: "q", Presettled: h.settle, Unsettled: !h.settle})
}

func (h *sendN) OnFlow(l *Link)     { h.pump(l) }
func (h *sendN) OnWritable(c *Conn) {}

func (h *sendN) pump(l *Link) {
	for h.sent < h.n {
		if _, err := l.Send(nil, h.payload, h.settle); err != nil {
			return
		}
		h.sent++
	}
	if h.settle {
		l.Conn().Close(nil)
	}
}

func (h *sendN) OnDisposition(l *Link, d Disposition) {
	h.settled++
	if h.settled == h.n {
		l.Conn().Close(nil)
	}
}

func (h *sendN) OnConnectionClose(c *Conn, e *Error) { h.closed <- e }

func TestDriverLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sink := &countSink{}
	srv := &Server{Config: Config{Credit: 50, AutoAccept: true}, Handler: sink}
	go srv.Serve(ln)
	defer srv.Close()
	for _, settle := range []bool{true, false} {
		before := sink.n.Load()
		h := &sendN{n: 1000, settle: settle, payload: make([]byte, 100), closed: make(chan *Error, 1)}
		d, err := Dial(context.Background(), "tcp", ln.Addr().String(), Config{}, nil, h)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case e := <-h.closed:
			if e != nil {
				t.Fatal(e)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("timeout")
		}
		if err := d.Wait(); err != nil {
			t.Fatal(err)
		}
		if got := sink.n.Load() - before; got != 1000 {
			t.Fatalf("settle=%v: sink got %d", settle, got)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
