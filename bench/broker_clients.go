package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// The broker's measurements (broker_*_test.go) drive brokers with these
// clients of package engine: a producer that sends unsettled messages as
// fast as credit allows and counts outcomes and the time it waited for
// credit, and a consumer that takes messages with credit and accepts
// them. (The project's blocking client package is not there yet: these
// are the "same clients" on both sides of every comparison.)

// BrokerProducer sends messages to one address, unsettled.
type BrokerProducer struct {
	d *driver.Driver
	h *brokerSend
}

type brokerSend struct {
	engine.NopHandler
	address string
	link    *engine.Link
	ready   chan error // attached and credited, or failed

	next    func(i int) []byte // the i-th message
	n, sent int
	running bool
	done    chan error

	accepted, rejected, other atomic.Int64
	outstanding               int
	window                    int // unsettled messages in flight at most (0: credit decides)

	waitFrom time.Time     // when a Send last found no credit, zero while sending
	waited   time.Duration // time spent with no credit
	waitMu   sync.Mutex
}

// DialProducer connects to addr and attaches a sender to address.
func DialProducer(ctx context.Context, addr, address string, cfg engine.Config) (*BrokerProducer, error) {
	h := &brokerSend{address: address, ready: make(chan error, 1), done: make(chan error, 1)}
	d, err := dialReady(ctx, addr, cfg, h, h.ready)
	if err != nil {
		return nil, err
	}
	return &BrokerProducer{d: d, h: h}, nil
}

// Send sends n messages, next(i) for i in [0, n), keeping at most window
// unsettled (0: as many as credit allows), and returns once every
// outcome is in (or ctx is done).
func (p *BrokerProducer) Send(ctx context.Context, n, window int, next func(i int) []byte) error {
	h := p.h
	if !p.d.Do(func(*engine.Conn) {
		h.next, h.n, h.sent, h.window, h.running = next, n, 0, window, true
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

// Outcomes returns the outcomes counted: accepted, rejected, any other.
func (p *BrokerProducer) Outcomes() (accepted, rejected, other int64) {
	return p.h.accepted.Load(), p.h.rejected.Load(), p.h.other.Load()
}

// Waited returns the time the producer had messages to send and no
// credit.
func (p *BrokerProducer) Waited() time.Duration {
	h := p.h
	h.waitMu.Lock()
	defer h.waitMu.Unlock()
	w := h.waited
	if !h.waitFrom.IsZero() {
		w += time.Since(h.waitFrom)
	}
	return w
}

// Credit returns the link's credit now.
func (p *BrokerProducer) Credit() uint32 {
	c := make(chan uint32, 1)
	if !p.d.Do(func(*engine.Conn) { c <- p.h.link.Credit() }) {
		return 0
	}
	return <-c
}

// Close closes the connection.
func (p *BrokerProducer) Close() error {
	p.d.Close()
	return p.d.Wait()
}

func (h *brokerSend) OnConnectionOpen(c *engine.Conn) {
	s, err := c.Begin()
	if err != nil {
		h.ready <- err
		return
	}
	if h.link, err = s.AttachSender(engine.LinkOptions{Address: h.address, Unsettled: true}); err != nil {
		h.ready <- err
	}
}

func (h *brokerSend) OnFlow(l *engine.Link) {
	if l.Credit() > 0 {
		select {
		case h.ready <- nil:
		default:
		}
	}
	h.pump()
}

func (h *brokerSend) OnWritable(*engine.Conn) { h.pump() }

func (h *brokerSend) pump() {
	if !h.running {
		return
	}
	for h.sent < h.n && (h.window == 0 || h.outstanding < h.window) {
		if _, err := h.link.Send(nil, h.next(h.sent), false); err != nil {
			if errors.Is(err, engine.ErrNoCredit) {
				h.waitMu.Lock()
				if h.waitFrom.IsZero() {
					h.waitFrom = time.Now()
				}
				h.waitMu.Unlock()
			}
			if !errors.Is(err, engine.ErrNoCredit) && !errors.Is(err, engine.ErrNoWindow) &&
				!errors.Is(err, engine.ErrOutputFull) && !errors.Is(err, engine.ErrBusy) {
				h.finish(err)
			}
			return
		}
		h.waitMu.Lock()
		if !h.waitFrom.IsZero() {
			h.waited += time.Since(h.waitFrom)
			h.waitFrom = time.Time{}
		}
		h.waitMu.Unlock()
		h.sent++
		h.outstanding++
	}
}

func (h *brokerSend) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	switch d.State.Type {
	case frame.StateAccepted:
		h.accepted.Add(1)
	case frame.StateRejected:
		h.rejected.Add(1)
	default:
		h.other.Add(1)
	}
	h.outstanding--
	if h.running && h.sent == h.n && h.outstanding == 0 {
		h.finish(nil)
		return
	}
	h.pump()
}

func (h *brokerSend) OnLinkDetach(l *engine.Link, e *engine.Error) {
	select {
	case h.ready <- fmt.Errorf("detached: %v", e):
	default:
	}
	h.finish(fmt.Errorf("detached: %v", e))
}

func (h *brokerSend) OnConnectionClose(c *engine.Conn, e *engine.Error) {
	select {
	case h.ready <- fmt.Errorf("closed: %v", e):
	default:
	}
	h.finish(fmt.Errorf("connection closed: %v", e))
}

func (h *brokerSend) finish(err error) {
	if !h.running {
		return
	}
	h.running = false
	select {
	case h.done <- err:
	default:
	}
}

// BrokerConsumer receives from one address and accepts every message.
type BrokerConsumer struct {
	d *driver.Driver
	h *brokerRecv
}

type brokerRecv struct {
	engine.NopHandler
	address  string
	credit   uint32
	link     *engine.Link
	ready    chan error
	onMsg    func(payload []byte)
	received atomic.Int64
}

// DialConsumer connects to addr and receives from address, with credit
// kept at credit (0: none until Flow), calling onMsg (on the
// connection's goroutine) before it accepts each message.
func DialConsumer(ctx context.Context, addr, address string, cfg engine.Config, credit uint32, onMsg func([]byte)) (*BrokerConsumer, error) {
	h := &brokerRecv{address: address, credit: credit, ready: make(chan error, 1), onMsg: onMsg}
	d, err := dialReady(ctx, addr, cfg, h, h.ready)
	if err != nil {
		return nil, err
	}
	return &BrokerConsumer{d: d, h: h}, nil
}

// Received returns the messages received.
func (c *BrokerConsumer) Received() int64 { return c.h.received.Load() }

// Flow grants credit for n messages.
func (c *BrokerConsumer) Flow(n uint32) { c.d.Do(func(*engine.Conn) { c.h.link.Flow(n) }) }

// Driver returns the consumer's driver (to cut its socket).
func (c *BrokerConsumer) Driver() *driver.Driver { return c.d }

// Close closes the connection.
func (c *BrokerConsumer) Close() error {
	c.d.Close()
	return c.d.Wait()
}

func (h *brokerRecv) OnConnectionOpen(c *engine.Conn) {
	s, err := c.Begin()
	if err != nil {
		h.ready <- err
		return
	}
	if h.link, err = s.AttachReceiver(engine.LinkOptions{Address: h.address, Credit: h.credit}); err != nil {
		h.ready <- err
	}
}

func (h *brokerRecv) OnLinkAttach(l *engine.Link) {
	select {
	case h.ready <- nil:
	default:
	}
}

func (h *brokerRecv) OnDelivery(l *engine.Link, d engine.Delivery) {
	if d.Aborted {
		return
	}
	if h.onMsg != nil {
		h.onMsg(d.Payload)
	}
	h.received.Add(1)
	if !d.Settled {
		d.Accept()
	}
}

func (h *brokerRecv) OnConnectionClose(c *engine.Conn, e *engine.Error) {
	select {
	case h.ready <- fmt.Errorf("closed: %v", e):
	default:
	}
}

// dialReady dials addr with h and waits for ready (h's link is up, or
// the error it failed with) within ctx.
func dialReady(ctx context.Context, addr string, cfg engine.Config, h engine.Handler, ready <-chan error) (*driver.Driver, error) {
	d, err := driver.Dial(ctx, "tcp", addr, cfg, nil, h)
	if err != nil {
		return nil, err
	}
	select {
	case err := <-ready:
		if err != nil {
			d.Close()
			return nil, err
		}
	case <-ctx.Done():
		d.Close()
		return nil, ctx.Err()
	}
	return d, nil
}
