package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// The loopback benchmark (loopback_test.go): amqpsax's engine as a client
// sends 100-byte messages over one TCP connection on 127.0.0.1 to a peer —
// an engine server that takes them (LoopbackSink), or RabbitMQ — as fast
// as credit, the session window and back-pressure allow: pre-settled, or
// unsettled with every outcome awaited.

// LoopbackMessage is the message sent: a data section of 95 bytes, 100
// bytes in all.
var LoopbackMessage = func() []byte {
	b := []byte{0x00, 0x53, 0x75, 0xa0, 95}
	for i := range 95 {
		b = append(b, byte('a'+i%26))
	}
	return b
}()

// LoopbackSink is an engine server that takes every message (credit kept
// granted, unsettled ones accepted) and counts them.
type LoopbackSink struct {
	engine.NopHandler
	Delivered atomic.Int64
	srv       *driver.Server
	Addr      string
}

func (s *LoopbackSink) OnDelivery(l *engine.Link, d engine.Delivery) { s.Delivered.Add(1) }

// StartLoopbackSink serves a LoopbackSink on a free 127.0.0.1 port.
func StartLoopbackSink() (*LoopbackSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &LoopbackSink{Addr: ln.Addr().String()}
	s.srv = &driver.Server{Config: engine.Config{ContainerID: "bench-sink", Credit: 5000, Window: 20000, AutoAccept: true}, Handler: s}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the sink and its connections.
func (s *LoopbackSink) Close() error { return s.srv.Close() }

// LoopbackSender is an engine client with one sending link, ready to send
// once its link has credit.
type LoopbackSender struct {
	d *driver.Driver
	h *loopSender
}

// loopSender is the sending application, run on the driver's goroutine.
type loopSender struct {
	engine.NopHandler
	address    string
	presettled bool
	link       *engine.Link
	ready      chan struct{} // closed once the link has credit
	// One run: send n; pre-settled, then one unsettled fence message
	// whose outcome says the peer has taken all before it.
	n, sent, outcomes int
	fence             bool
	fenceID           uint32
	running           bool
	done              chan error
}

// DialLoopback connects to addr and attaches a sending link to address:
// snd-settle-mode mixed when presettled (pre-settled messages, then an
// unsettled fence), unsettled otherwise.
func DialLoopback(ctx context.Context, addr, address string, cfg engine.Config, presettled bool) (*LoopbackSender, error) {
	h := &loopSender{address: address, presettled: presettled, ready: make(chan struct{}), done: make(chan error, 1)}
	d, err := driver.Dial(ctx, "tcp", addr, cfg, nil, h)
	if err != nil {
		return nil, err
	}
	select {
	case <-h.ready:
	case err := <-h.done:
		d.Close()
		return nil, fmt.Errorf("before the link had credit: %w", err)
	case <-ctx.Done():
		d.Close()
		return nil, ctx.Err()
	}
	return &LoopbackSender{d: d, h: h}, nil
}

// Send sends n messages and returns once the peer has them: all
// outcomes in (unsettled), or the fence's (pre-settled).
func (s *LoopbackSender) Send(ctx context.Context, n int) error {
	h := s.h
	if !s.d.Do(func(*engine.Conn) {
		h.n, h.sent, h.outcomes, h.fence, h.running = n, 0, 0, false, true
		h.pump()
	}) {
		return errors.New("the connection has ended")
	}
	select {
	case err := <-h.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close closes the connection and waits for its end.
func (s *LoopbackSender) Close() error {
	s.d.Close()
	return s.d.Wait()
}

func (h *loopSender) OnConnectionOpen(c *engine.Conn) {
	s, err := c.Begin()
	if err != nil {
		h.finish(err)
		return
	}
	if h.link, err = s.AttachSender(engine.LinkOptions{Name: "bench-loopback", Address: h.address, Unsettled: !h.presettled}); err != nil {
		h.finish(err)
	}
}

func (h *loopSender) OnFlow(l *engine.Link) {
	if l.Credit() > 0 {
		select {
		case <-h.ready:
		default:
			close(h.ready)
		}
	}
	h.pump()
}

func (h *loopSender) OnWritable(*engine.Conn) { h.pump() }

func (h *loopSender) pump() {
	if !h.running {
		return
	}
	for h.sent < h.n {
		if _, err := h.link.Send(nil, LoopbackMessage, h.presettled); err != nil {
			h.wait(err)
			return
		}
		h.sent++
	}
	if h.presettled && !h.fence {
		id, err := h.link.Send(nil, LoopbackMessage, false)
		if err != nil {
			h.wait(err)
			return
		}
		h.fence, h.fenceID = true, id
	}
}

// wait: a Send that must wait for credit, window or output room is
// retried on OnFlow or OnWritable; any other error ends the run.
func (h *loopSender) wait(err error) {
	switch {
	case errors.Is(err, engine.ErrNoCredit), errors.Is(err, engine.ErrNoWindow),
		errors.Is(err, engine.ErrOutputFull), errors.Is(err, engine.ErrBusy):
	default:
		h.finish(err)
	}
}

func (h *loopSender) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	if !h.running {
		return
	}
	if d.State.Type != frame.StateAccepted {
		h.finish(fmt.Errorf("delivery %d: outcome %v", d.ID, d.State.Type))
		return
	}
	if h.presettled {
		if h.fence && d.ID == h.fenceID {
			h.finish(nil)
		}
		return
	}
	if h.outcomes++; h.outcomes == h.n {
		h.finish(nil)
	}
}

func (h *loopSender) OnConnectionClose(c *engine.Conn, e *engine.Error) {
	if e != nil {
		h.finish(e)
		return
	}
	h.finish(errors.New("connection closed"))
}

func (h *loopSender) OnLinkDetach(l *engine.Link, e *engine.Error) {
	if e != nil {
		h.finish(e)
	}
}

func (h *loopSender) finish(err error) {
	if !h.running && err == nil {
		return
	}
	h.running = false
	select {
	case h.done <- err:
	default:
	}
}

// loopbackTimeout bounds one run.
const loopbackTimeout = 5 * time.Minute
