package broker_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// durProducer is a resumable producer scripted in events, as package
// client's reconnecting sender is to be: a durable target
// (unsettled-state), receiver settle mode second asked for, tags of its
// own; after a lost connection it attaches again with the same
// container-id and link name, its unsettled deliveries as Resume, and
// resolves each by the broker's unsettled map (engine/recover.go).
type durProducer struct {
	engine.NopHandler
	target *frame.Target
	n      int
	cutAt  int           // resolved deliveries after which cut is closed
	cut    chan struct{} // the test closes the socket then
	done   chan struct{} // every delivery resolved

	mu       sync.Mutex // the fields below: the driver's goroutine, and the test's once it ended
	l        *engine.Link
	next     int                // the next message sent fresh
	resume   []engine.Unsettled // what the last link left unsettled
	todo     []engine.Unsettled // of resume, still to resolve on this link
	resolved map[string]int     // tag → times settled
	answer   *frame.Attach      // the broker's answer to the last attach
	resumedN int
}

func newDurProducer(n, cutAt int, target *frame.Target) *durProducer {
	return &durProducer{target: target, n: n, cutAt: cutAt, cut: make(chan struct{}), done: make(chan struct{}),
		resolved: map[string]int{}}
}

func durTag(i int) []byte          { return []byte(fmt.Sprintf("m%04d", i)) }
func durPayload(tag []byte) []byte { return data("body " + string(tag)) }

func (p *durProducer) OnConnectionOpen(c *engine.Conn) { c.Begin() }

func (p *durProducer) OnSessionBegin(s *engine.Session) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.todo = p.resume
	l, err := s.AttachSender(engine.LinkOptions{Name: "durable-producer", Target: p.target, Unsettled: true,
		RcvSecond: true, Resume: p.resume})
	if err == nil {
		p.l = l
	}
}

func (p *durProducer) OnLinkAttach(l *engine.Link) {
	p.mu.Lock()
	a := *l.RemoteAttach()
	p.answer = &a
	p.mu.Unlock()
}

func (p *durProducer) OnFlow(l *engine.Link) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pump()
}

// pump resolves what the last link left, then sends fresh messages, as
// credit allows.
func (p *durProducer) pump() {
	for len(p.todo) > 0 && p.l.Credit() > 0 {
		tag := p.todo[0].Tag
		st, known := p.l.RemoteUnsettled(tag)
		var err error
		switch {
		case known && st.Type != frame.StateNone: // an outcome: settle it
			if _, err = p.l.SendResume(tag, nil, true); err == nil {
				p.resolved[string(tag)]++
				p.resumedN++
			}
		case known:
			_, err = p.l.SendResume(tag, durPayload(tag), false)
		default: // the broker never had it whole
			_, err = p.l.Send(tag, durPayload(tag), false)
		}
		if err != nil {
			return
		}
		p.todo = p.todo[1:]
	}
	for len(p.todo) == 0 && p.next < p.n && p.l.Credit() > 0 {
		tag := durTag(p.next)
		if _, err := p.l.Send(tag, durPayload(tag), false); err != nil {
			return
		}
		p.next++
	}
	p.check()
}

func (p *durProducer) check() {
	if len(p.resolved) == p.n && p.done != nil {
		close(p.done)
		p.done = nil
	}
}

func (p *durProducer) OnWritable(*engine.Conn) { p.OnFlow(nil) }

func (p *durProducer) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	if d.State.Type == frame.StateNone {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.resolved[string(d.Tag)]++ // the engine settles it (Config.ManualSettle unset)
	if len(p.resolved) == p.cutAt && p.cut != nil {
		close(p.cut)
		p.cut = nil
	}
	p.check()
}

func (p *durProducer) OnLinkDetach(l *engine.Link, _ *engine.Error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l == p.l {
		p.resume = l.Unsettled()
	}
}

func dialAs(t *testing.T, addr, container string, h engine.Handler) *driver.Driver {
	t.Helper()
	d, err := driver.Dial(context.Background(), "tcp", addr, engine.Config{ContainerID: container}, nil, h)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close(); d.Wait() })
	return d
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(wait):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestDurableProducerResume: 1,000 unsettled sends on a durable link
// (receiver settle mode second), the connection cut (the socket closed)
// once 500 are settled, the link attached again from a new connection
// with resume: the queue holds each message exactly once, and every
// delivery was settled once.
func TestDurableProducerResume(t *testing.T) {
	addr, b := start(t, broker.Options{})
	tgt := &frame.Target{Address: []byte("dq"), Durable: frame.DurabilityUnsettledState, ExpiryPolicy: frame.ExpiryNever}
	p := newDurProducer(1000, 500, tgt)
	done, cut := p.done, p.cut
	d1 := dialAs(t, addr, "producer-1", p)
	waitFor(t, cut, "500 settled")
	d1.NetConn().Close()
	d1.Wait()
	p.mu.Lock()
	require.Equal(t, frame.RcvSecond, p.answer.RcvSettleMode, "the broker answers in the mode asked for")
	left, settled := len(p.resume), len(p.resolved)
	p.mu.Unlock()
	t.Logf("at the cut: %d settled, %d unsettled at the producer", settled, left)

	dialAs(t, addr, "producer-1", p)
	waitFor(t, done, "every delivery settled")
	p.mu.Lock()
	for i := range 1000 {
		require.Equal(t, 1, p.resolved[string(durTag(i))], "delivery %d settled once", i)
	}
	t.Logf("on the new link: %d settled by a resumed transfer; the broker's map held %d", p.resumedN,
		p.answer.Unsettled.Len())
	p.mu.Unlock()

	eventually(t, "1,000 stored", func() bool { q, _ := b.Queue("dq"); return q.Depth == 1000 })
	q, _ := b.Queue("dq")
	assert.Equal(t, uint64(1000), q.Enqueued, "none stored twice")
	c := dial(t, addr, engine.Config{}, nil)
	rcv := c.receiver("dq")
	rcv.flow(1000)
	seen := map[string]bool{}
	for range 1000 {
		d := rcv.next()
		require.False(t, seen[string(d.payload)], "duplicate %q", d.payload)
		seen[string(d.payload)] = true
		rcv.dispose(d.id, engine.Accepted)
	}
	for i := range 1000 {
		require.True(t, seen[string(durPayload(durTag(i)))], "message %d", i)
	}
	rcv.none()
}

// keptProducer sends n messages on a durable link and settles none of
// the broker's outcomes (Config.ManualSettle): the broker holds them
// all unsettled when the connection is cut.
type keptProducer struct {
	engine.NopHandler
	target  *frame.Target
	n, sent int
	resume  []engine.Unsettled
	got     chan int
	answers chan *frame.Attach
}

func (p *keptProducer) OnConnectionOpen(c *engine.Conn) { c.Begin() }

func (p *keptProducer) OnSessionBegin(s *engine.Session) {
	s.AttachSender(engine.LinkOptions{Name: "kept", Target: p.target, Unsettled: true, RcvSecond: true, Resume: p.resume})
}

func (p *keptProducer) OnLinkAttach(l *engine.Link) {
	a := *l.RemoteAttach()
	p.answers <- &a
}

func (p *keptProducer) OnFlow(l *engine.Link) {
	for p.sent < p.n && l.Credit() > 0 {
		if _, err := l.Send(durTag(p.sent), durPayload(durTag(p.sent)), false); err != nil {
			return
		}
		p.sent++
	}
}

func (p *keptProducer) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) { p.got <- 1 }

func (p *keptProducer) OnLinkDetach(l *engine.Link, _ *engine.Error) { p.resume = l.Unsettled() }

// keptCut sends 10 messages on a durable link with expiry policy
// policy (timeout 0) as container, and cuts the connection once the
// broker has accepted them all.
func keptCut(t *testing.T, addr, container string, policy frame.ExpiryPolicy) *keptProducer {
	t.Helper()
	tgt := &frame.Target{Address: []byte("kq"), Durable: frame.DurabilityUnsettledState, ExpiryPolicy: policy}
	p := &keptProducer{target: tgt, n: 10, got: make(chan int, 100), answers: make(chan *frame.Attach, 2)}
	d := keptDial(t, addr, container, p)
	for range 10 {
		select {
		case <-p.got:
		case <-time.After(wait):
			t.Fatal("no outcome")
		}
	}
	d.NetConn().Close()
	d.Wait()
	require.Len(t, p.resume, 10)
	return p
}

// keptDial connects p as container and waits for its link's answer.
func keptDial(t *testing.T, addr, container string, p *keptProducer) *driver.Driver {
	t.Helper()
	d, err := driver.Dial(context.Background(), "tcp", addr, engine.Config{ContainerID: container, ManualSettle: true}, nil, p)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close(); d.Wait() })
	select {
	case <-p.answers:
	case <-time.After(wait):
		t.Fatal("no answer")
	}
	return d
}

// keptAgain attaches p's link again as container, with resume, and
// returns the broker's answer.
func keptAgain(t *testing.T, addr, container string, p *keptProducer) *frame.Attach {
	t.Helper()
	d, err := driver.Dial(context.Background(), "tcp", addr, engine.Config{ContainerID: container, ManualSettle: true}, nil, p)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close(); d.Wait() })
	select {
	case a := <-p.answers:
		return a
	case <-time.After(wait):
		t.Fatal("no answer")
	}
	return nil
}

// TestDurableProducerExpiry: a durable producer's state outlives its
// connection with expiry policy never (the broker's answer lists the 10
// it holds, accepted), and is gone with link-detach and timeout 0.
func TestDurableProducerExpiry(t *testing.T) {
	addr, b := start(t, broker.Options{})
	p := keptCut(t, addr, "never", frame.ExpiryNever)
	eventually(t, "the state kept", func() bool { _, detached := b.DurableLinks(); return detached == 1 })
	a := keptAgain(t, addr, "never", p)
	assert.Equal(t, 10, a.Unsettled.Len(), "never: the state is kept")
	for k, v := range a.Unsettled.All() {
		st, err := frame.ParseDeliveryState(v)
		require.NoError(t, err)
		assert.Equal(t, frame.StateAccepted, st.Type, "%x", k)
	}
	p = keptCut(t, addr, "link-detach", frame.ExpiryLinkDetach)
	a = keptAgain(t, addr, "link-detach", p)
	assert.Zero(t, a.Unsettled.Len(), "link-detach, timeout 0: the state is gone")
	q, _ := b.Queue("kq")
	assert.Equal(t, uint64(20), q.Enqueued)
}

// TestDurableLinksBound: past Options.MaxDurableLinks the durable link
// detached longest loses its state.
func TestDurableLinksBound(t *testing.T) {
	addr, b := start(t, broker.Options{MaxDurableLinks: 2})
	var ps []*keptProducer
	for i := range 3 {
		ps = append(ps, keptCut(t, addr, fmt.Sprint("c", i), frame.ExpiryNever))
		eventually(t, "the state kept", func() bool { a, _ := b.DurableLinks(); return a == 0 })
	}
	attached, detached := b.DurableLinks()
	assert.Equal(t, 0, attached)
	assert.Equal(t, 2, detached)
	assert.Zero(t, keptAgain(t, addr, "c0", ps[0]).Unsettled.Len(), "the oldest expired")
	assert.Equal(t, 10, keptAgain(t, addr, "c2", ps[2]).Unsettled.Len(), "the newest kept")
	attached, detached = b.DurableLinks()
	assert.Equal(t, 2, attached)
	assert.Equal(t, 1, detached)
}

// TestDurableTakeover: an attach of a durable name still attached on
// another connection of the same container (one the broker has not
// seen fail) takes it over: the old connection is closed, and the new
// attach gets the state it left.
func TestDurableTakeover(t *testing.T) {
	addr, _ := start(t, broker.Options{})
	tgt := &frame.Target{Address: []byte("kq"), Durable: frame.DurabilityUnsettledState, ExpiryPolicy: frame.ExpiryNever}
	p := &keptProducer{target: tgt, n: 10, got: make(chan int, 100), answers: make(chan *frame.Attach, 2)}
	d1 := keptDial(t, addr, "twice", p)
	for range 10 {
		select {
		case <-p.got:
		case <-time.After(wait):
			t.Fatal("no outcome")
		}
	}
	p2 := &keptProducer{target: tgt, answers: make(chan *frame.Attach, 2), got: make(chan int, 100)}
	for i := range 10 {
		p2.resume = append(p2.resume, engine.Unsettled{Tag: durTag(i)})
	}
	a := keptAgain(t, addr, "twice", p2)
	assert.Equal(t, 10, a.Unsettled.Len(), "the state the old link left")
	waitFor(t, d1.Done(), "the old connection closed")
}

// stickyListener's connections ignore Close until let go: a connection
// the broker closes that has not failed yet (its peer's host is gone,
// and the OS has not noticed).
type stickyListener struct {
	net.Listener
	mu    sync.Mutex
	conns []*stickyConn
}

type stickyConn struct {
	net.Conn
	mu     sync.Mutex
	sticky bool
}

func (l *stickyListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c := &stickyConn{Conn: nc, sticky: true}
	l.mu.Lock()
	l.conns = append(l.conns, c)
	l.mu.Unlock()
	return c, nil
}

func (c *stickyConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sticky {
		return nil
	}
	return c.Conn.Close()
}

// letGo makes c close, and closes it.
func (c *stickyConn) letGo() {
	c.mu.Lock()
	c.sticky = false
	c.mu.Unlock()
	c.Close()
}

// takingOver is the handler of a connection that takes durable link
// "kept" over (its attach resumes) and, beside it, sends one message to
// queue "other" on a link of its own.
type takingOver struct {
	engine.NopHandler
	resume   []engine.Unsettled
	answers  chan *frame.Attach // the answer to "kept"
	outcomes chan frame.DeliveryState
}

func (h *takingOver) OnConnectionOpen(c *engine.Conn) { c.Begin() }

func (h *takingOver) OnSessionBegin(s *engine.Session) {
	tgt := &frame.Target{Address: []byte("kq"), Durable: frame.DurabilityUnsettledState, ExpiryPolicy: frame.ExpiryNever}
	s.AttachSender(engine.LinkOptions{Name: "kept", Target: tgt, Unsettled: true, RcvSecond: true, Resume: h.resume})
	s.AttachSender(engine.LinkOptions{Name: "other", Address: "other", Unsettled: true})
}

func (h *takingOver) OnLinkAttach(l *engine.Link) {
	if string(l.Name()) == "kept" {
		a := *l.RemoteAttach()
		h.answers <- &a
	}
}

func (h *takingOver) OnFlow(l *engine.Link) {
	if string(l.Name()) == "other" && l.Credit() > 0 && l.DeliveryCount() == 0 {
		l.Send(nil, data("beside"), false)
	}
}

func (h *takingOver) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) { h.outcomes <- d.State }

// TestDurableTakeoverHeld: the answer to an attach that takes a durable
// link over waits for the old connection to let go of it, and the
// connection of the attach goes on meanwhile: its other link sends and
// has its outcome while the old connection, closed by the broker, has
// not ended; once it ends, the held attach is answered with the state
// the old link left.
func TestDurableTakeoverHeld(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	sl := &stickyListener{Listener: ln}
	b := broker.New(broker.Options{})
	go b.Serve(sl)
	t.Cleanup(func() {
		sl.mu.Lock()
		for _, c := range sl.conns {
			c.letGo()
		}
		sl.mu.Unlock()
		b.Close()
	})
	addr := ln.Addr().String()
	tgt := &frame.Target{Address: []byte("kq"), Durable: frame.DurabilityUnsettledState, ExpiryPolicy: frame.ExpiryNever}
	p := &keptProducer{target: tgt, n: 10, got: make(chan int, 100), answers: make(chan *frame.Attach, 2)}
	keptDial(t, addr, "held", p)
	for range 10 {
		select {
		case <-p.got:
		case <-time.After(wait):
			t.Fatal("no outcome")
		}
	}
	h := &takingOver{answers: make(chan *frame.Attach, 1), outcomes: make(chan frame.DeliveryState, 1)}
	for i := range 10 {
		h.resume = append(h.resume, engine.Unsettled{Tag: durTag(i)})
	}
	d, err := driver.Dial(context.Background(), "tcp", addr, engine.Config{ContainerID: "held", ManualSettle: true}, nil, h)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close(); d.Wait() })
	select {
	case st := <-h.outcomes:
		assert.Equal(t, frame.StateAccepted, st.Type, "the other link's message")
	case <-time.After(wait):
		t.Fatal("the connection that takes a durable link over is held up")
	}
	select {
	case <-h.answers:
		t.Fatal("answered before the old connection let go")
	default:
	}
	sl.mu.Lock()
	old := sl.conns[0]
	sl.mu.Unlock()
	old.letGo()
	select {
	case a := <-h.answers:
		assert.Equal(t, 10, a.Unsettled.Len(), "the state the old link left")
	case <-time.After(wait):
		t.Fatal("the held attach was not answered")
	}
}
