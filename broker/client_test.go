package broker_test

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/require"
)

// The tests' client: package engine over TCP, driven from the test's
// goroutine through Driver.Do, its events sent on channels.

// wait is how long a test waits for an event before it fails: a bound on
// a hang, not a measure of speed.
const wait = 20 * time.Second

func start(t *testing.T, o broker.Options) (string, *broker.Broker) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	b := broker.New(o)
	go b.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b.Shutdown(ctx)
	})
	return ln.Addr().String(), b
}

// data encodes a message of one data section.
func data(body string) []byte {
	return encode.AppendBinary([]byte{0x00, 0x53, 0x75}, []byte(body))
}

type delivery struct {
	id      uint32
	payload []byte
	settled bool
	tag     []byte
	resumed bool
}

type tlink struct {
	c        *tclient
	l        *engine.Link
	attached chan struct{}
	detached chan *engine.Error

	// sender, on the driver's goroutine
	queue    [][]byte
	settled  bool
	sent     atomic.Int64
	outcomes chan frame.DeliveryState

	// receiver
	deliveries chan delivery
	settles    chan uint32 // the sender settled (rcv-settle-mode second)
}

type tclient struct {
	engine.NopHandler
	t      *testing.T
	d      *driver.Driver
	open   chan struct{}
	closed chan *engine.Error
	sess   *engine.Session
	mu     sync.Mutex
	links  map[*engine.Link]*tlink
}

func dial(t *testing.T, addr string, cfg engine.Config, tc *tls.Config) *tclient {
	t.Helper()
	c := &tclient{t: t, open: make(chan struct{}), closed: make(chan *engine.Error, 1), links: map[*engine.Link]*tlink{}}
	d, err := driver.Dial(context.Background(), "tcp", addr, cfg, tc, c)
	require.NoError(t, err)
	c.d = d
	select {
	case <-c.open:
	case err := <-c.closed:
		t.Fatalf("connection closed before it opened: %v", err)
	case <-time.After(wait):
		t.Fatal("no open")
	}
	t.Cleanup(func() { d.Close(); d.Wait() })
	return c
}

func (c *tclient) OnConnectionOpen(conn *engine.Conn) {
	c.sess, _ = conn.Begin()
	close(c.open)
}

func (c *tclient) OnConnectionClose(_ *engine.Conn, err *engine.Error) { c.closed <- err }

func (c *tclient) do(f func()) {
	done := make(chan struct{})
	if !c.d.Do(func(*engine.Conn) { f(); close(done) }) {
		c.t.Fatal("connection ended")
	}
	<-done
}

func (c *tclient) link(l *engine.Link) *tlink {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.links[l]
}

func (c *tclient) attach(sender bool, o engine.LinkOptions) *tlink {
	tl := &tlink{c: c, attached: make(chan struct{}), detached: make(chan *engine.Error, 1),
		outcomes: make(chan frame.DeliveryState, 1<<16), deliveries: make(chan delivery, 1<<16),
		settles: make(chan uint32, 1<<16), settled: o.Presettled}
	var err error
	c.do(func() {
		if sender {
			tl.l, err = c.sess.AttachSender(o)
		} else {
			tl.l, err = c.sess.AttachReceiver(o)
		}
		if err == nil {
			c.mu.Lock()
			c.links[tl.l] = tl
			c.mu.Unlock()
		}
	})
	require.NoError(c.t, err)
	select {
	case <-tl.attached:
	case <-time.After(wait):
		c.t.Fatal("no attach")
	}
	return tl
}

func (c *tclient) sender(addr string) *tlink {
	return c.attach(true, engine.LinkOptions{Address: addr, Unsettled: true})
}

func (c *tclient) receiver(addr string) *tlink {
	return c.attach(false, engine.LinkOptions{Address: addr})
}

func (c *tclient) OnLinkAttach(l *engine.Link) {
	if tl := c.link(l); tl != nil {
		close(tl.attached)
	}
}

func (c *tclient) OnLinkDetach(l *engine.Link, err *engine.Error) {
	if tl := c.link(l); tl != nil {
		tl.detached <- err
	}
}

func (c *tclient) OnFlow(l *engine.Link) {
	if tl := c.link(l); tl != nil && l.IsSender() {
		tl.pump()
	}
}

func (c *tclient) OnWritable(*engine.Conn) {
	c.mu.Lock()
	var ls []*tlink
	for _, tl := range c.links {
		ls = append(ls, tl)
	}
	c.mu.Unlock()
	for _, tl := range ls {
		if tl.l.IsSender() {
			tl.pump()
		}
	}
}

func (c *tclient) OnDelivery(l *engine.Link, d engine.Delivery) {
	if tl := c.link(l); tl != nil {
		tl.deliveries <- delivery{id: d.DeliveryID, payload: append([]byte(nil), d.Payload...), settled: d.Settled,
			tag: append([]byte(nil), d.DeliveryTag...), resumed: d.Resumed()}
	}
}

func (c *tclient) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	tl := c.link(l)
	if tl == nil {
		return
	}
	if l.IsSender() {
		st := d.State
		st.Raw = nil
		st.Error.Condition = append([]byte(nil), st.Error.Condition...)
		st.Error.Description = nil
		tl.outcomes <- st
	} else if d.Settled {
		tl.settles <- d.ID
	}
}

// send queues messages and sends them as credit allows.
func (tl *tlink) send(msgs ...[]byte) {
	tl.c.do(func() {
		tl.queue = append(tl.queue, msgs...)
		tl.pump()
	})
}

func (tl *tlink) pump() {
	for len(tl.queue) > 0 {
		if _, err := tl.l.Send(nil, tl.queue[0], tl.settled); err != nil {
			return
		}
		tl.queue = tl.queue[1:]
		tl.sent.Add(1)
	}
}

func (tl *tlink) credit() uint32 {
	var n uint32
	tl.c.do(func() { n = tl.l.Credit() })
	return n
}

func (tl *tlink) flow(n uint32) { tl.c.do(func() { tl.l.Flow(n) }) }

func (tl *tlink) dispose(id uint32, st frame.DeliveryState) {
	tl.c.do(func() { tl.l.Dispose(id, st, true) })
}

func (tl *tlink) detach() {
	tl.c.do(func() { tl.l.Detach(nil) })
	select {
	case <-tl.detached:
	case <-time.After(wait):
		tl.c.t.Fatal("no detach")
	}
}

// next returns the next delivery.
func (tl *tlink) next() delivery {
	tl.c.t.Helper()
	select {
	case d := <-tl.deliveries:
		return d
	case <-time.After(wait):
		tl.c.t.Fatal("no delivery")
	}
	return delivery{}
}

// none checks that no delivery is waiting.
func (tl *tlink) none() {
	tl.c.t.Helper()
	select {
	case d := <-tl.deliveries:
		tl.c.t.Fatalf("unexpected delivery %q", d.payload)
	default:
	}
}

// outcome returns the next outcome of a sent message.
func (tl *tlink) outcome() frame.DeliveryState {
	tl.c.t.Helper()
	select {
	case o := <-tl.outcomes:
		return o
	case <-time.After(wait):
		tl.c.t.Fatal("no outcome")
	}
	return frame.DeliveryState{}
}

// eventually waits for cond, polling: a bound on a hang, not a timing.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
