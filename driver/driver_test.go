package driver

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/engine"
)

type countSink struct {
	engine.NopHandler
	n atomic.Int64
}

func (s *countSink) OnDelivery(l *engine.Link, d engine.Delivery) { s.n.Add(1) }

// sendN is a client handler that sends n messages on one link, then
// closes the connection.
type sendN struct {
	engine.NopHandler
	n, sent, settled int
	settle           bool
	payload          []byte
	closed           chan *engine.Error
}

func (h *sendN) OnConnectionOpen(c *engine.Conn) {
	s, _ := c.Begin()
	s.AttachSender(engine.LinkOptions{Address: "q", Presettled: h.settle, Unsettled: !h.settle})
}

func (h *sendN) OnFlow(l *engine.Link)     { h.pump(l) }
func (h *sendN) OnWritable(c *engine.Conn) {}

func (h *sendN) pump(l *engine.Link) {
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

func (h *sendN) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	h.settled++
	if h.settled == h.n {
		l.Conn().Close(nil)
	}
}

func (h *sendN) OnConnectionClose(c *engine.Conn, e *engine.Error) { h.closed <- e }

func TestDriverLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sink := &countSink{}
	srv := &Server{Config: engine.Config{Credit: 50, AutoAccept: true}, Handler: sink}
	go srv.Serve(ln)
	defer srv.Close()
	for _, settle := range []bool{true, false} {
		before := sink.n.Load()
		h := &sendN{n: 1000, settle: settle, payload: make([]byte, 100), closed: make(chan *engine.Error, 1)}
		d, err := Dial(context.Background(), "tcp", ln.Addr().String(), engine.Config{}, nil, h)
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

// blaster sends presettled (or unsettled) messages as fast as credit and
// the output buffer allow, until n are sent (and, unsettled, settled).
type blaster struct {
	engine.NopHandler
	n, sent, settled int
	presettled       bool
	payload          []byte
	link             *engine.Link
	done             chan struct{}
}

func (h *blaster) OnConnectionOpen(c *engine.Conn) {
	s, _ := c.Begin()
	h.link, _ = s.AttachSender(engine.LinkOptions{Address: "q", Presettled: h.presettled, Unsettled: !h.presettled})
}
func (h *blaster) OnFlow(l *engine.Link)     { h.pump() }
func (h *blaster) OnWritable(c *engine.Conn) { h.pump() }
func (h *blaster) pump() {
	for h.sent < h.n {
		if _, err := h.link.Send(nil, h.payload, h.presettled); err != nil {
			return
		}
		h.sent++
	}
	if h.presettled && h.sent == h.n {
		h.finish()
	}
}
func (h *blaster) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	if h.settled++; h.settled == h.n {
		h.finish()
	}
}
func (h *blaster) finish() {
	if h.done != nil {
		close(h.done)
		h.done = nil
	}
}

// BenchmarkLoopback sends 100-byte messages engine to engine over one
// loopback TCP connection: one op is one message.
func BenchmarkLoopback(b *testing.B) {
	for _, presettled := range []bool{true, false} {
		name := "unsettled"
		if presettled {
			name = "presettled"
		}
		b.Run(name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			sink := &countSink{}
			srv := &Server{Config: engine.Config{Credit: 5000, Window: 20000, AutoAccept: true}, Handler: sink}
			go srv.Serve(ln)
			defer srv.Close()
			h := &blaster{n: b.N, presettled: presettled, payload: make([]byte, 100), done: make(chan struct{})}
			done := h.done
			b.SetBytes(100)
			b.ReportAllocs()
			b.ResetTimer()
			d, err := Dial(context.Background(), "tcp", ln.Addr().String(), engine.Config{}, nil, h)
			if err != nil {
				b.Fatal(err)
			}
			<-done
			for sink.n.Load() < int64(b.N) {
				time.Sleep(time.Millisecond)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			d.Close()
			d.Wait()
		})
	}
}
