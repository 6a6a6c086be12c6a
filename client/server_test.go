package client_test

import (
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/require"
)

// testBroker is the peer of the tests: an engine server with queues by
// address, which also refuses and misbehaves on purpose, by the address's
// first element:
//
//	refuse/…    the attach is answered without a terminus, then detached
//	            with amqp:not-found (RabbitMQ's way)
//	detach/…    answered, then detached with amqp:unauthorized-access
//	end/…       the session ends with amqp:resource-limit-exceeded
//	close/…     the connection closes with amqp:connection:forced
//	reject/…, release/…, modify/…  each message gets that outcome
//	hold/…      messages are taken, never settled
//	nocredit/…  producers get no credit
//	drop/…      the network connection is cut at the first message
//	late/…      producers get credit (10) only when the test calls grant
//	block/…     the broker's goroutine for the connection blocks at the
//	            attach (its answer is never written) until the test ends
//
// Anything else is a queue: producers' messages are accepted and given to
// its consumers in turn, as their credit allows.
type testBroker struct {
	engine.NopHandler
	srv  *driver.Server
	addr string

	mu     sync.Mutex
	queues map[string]*tqueue
	// counts
	held atomic.Int64
	// blockBegin makes the broker block at a session's begin (never
	// answered) until the test ends.
	blockBegin atomic.Bool
	unblock    chan struct{}
	late       []*engine.Link
	conns      []*driver.Driver
}

func (b *testBroker) OnConnectionOpen(c *engine.Conn) {
	b.mu.Lock()
	b.conns = append(b.conns, driver.Of(c))
	b.mu.Unlock()
}

// vanish cuts every network connection: no close, no FIN first.
func (b *testBroker) vanish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, d := range b.conns {
		if tc, ok := d.NetConn().(*net.TCPConn); ok {
			tc.SetLinger(0) // a reset
		}
		d.NetConn().Close()
	}
}

// grant gives the producers of late/ addresses 10 credit.
func (b *testBroker) grant() {
	b.mu.Lock()
	ls := b.late
	b.mu.Unlock()
	for _, l := range ls {
		driver.Of(l.Conn()).Do(func(*engine.Conn) { l.Flow(10) })
	}
}

type tqueue struct {
	msgs      [][]byte
	consumers []*engine.Link
}

func startBroker(t testing.TB) *testBroker {
	b, err := newBroker()
	require.NoError(t, err)
	t.Cleanup(b.close)
	return b
}

func newBroker() (*testBroker, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &testBroker{addr: ln.Addr().String(), queues: map[string]*tqueue{}, unblock: make(chan struct{})}
	b.srv = &driver.Server{Config: engine.Config{ContainerID: "test-broker", Window: 5000}, Handler: b}
	go b.srv.Serve(ln)
	return b, nil
}

func (b *testBroker) close() { close(b.unblock); b.srv.Close() }

func (b *testBroker) url() string { return "amqp://" + b.addr }

func (b *testBroker) queue(name string) *tqueue {
	q := b.queues[name]
	if q == nil {
		q = &tqueue{}
		b.queues[name] = q
	}
	return q
}

func kind(addr string) string {
	k, _, _ := strings.Cut(addr, "/")
	return k
}

// OnLinkAttach is called after the engine has answered a peer's attach,
// mirroring its terminus; "refuse" links are therefore refused here by
// the detach alone, and by refuseAttach (a raw answer) below.
func (b *testBroker) OnLinkAttach(l *engine.Link) {
	addr := string(l.Address())
	switch kind(addr) {
	case "detach":
		l.Detach(engine.NewError(frame.CondUnauthorizedAccess, "no access to "+addr))
		return
	case "refuse":
		l.Detach(engine.NewError(frame.CondNotFound, "no node "+addr))
		return
	case "end":
		l.Session().End(engine.NewError(frame.CondResourceLimitExceeded, "too many links"))
		return
	case "close":
		l.Conn().Close(engine.NewError(frame.CondConnectionForced, "go away"))
		return
	case "block":
		<-b.unblock
		return
	}
	if !l.IsSender() {
		switch kind(addr) {
		case "nocredit":
		case "late":
			b.mu.Lock()
			b.late = append(b.late, l)
			b.mu.Unlock()
		default:
			l.KeepCredit(200)
		}
		return
	}
	b.mu.Lock()
	q := b.queue(addr)
	q.consumers = append(q.consumers, l)
	b.mu.Unlock()
	b.dispatch(l)
}

func (b *testBroker) OnSessionBegin(s *engine.Session) {
	if b.blockBegin.Load() {
		<-b.unblock
	}
}

func (b *testBroker) OnLinkDetach(l *engine.Link, _ *engine.Error) {
	if !l.IsSender() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queue(string(l.Address()))
	for i, c := range q.consumers {
		if c == l {
			q.consumers = append(q.consumers[:i], q.consumers[i+1:]...)
			break
		}
	}
}

func (b *testBroker) OnDelivery(l *engine.Link, d engine.Delivery) {
	if d.Aborted {
		return
	}
	addr := string(l.Address())
	switch kind(addr) {
	case "reject":
		d.Reject(engine.NewError(frame.CondPreconditionFailed, "no thanks"))
		return
	case "release":
		d.Release()
		return
	case "modify":
		d.Modify(true, true)
		return
	case "hold":
		b.held.Add(1)
		return
	case "drop":
		driver.Of(l.Conn()).NetConn().Close()
		return
	}
	b.mu.Lock()
	q := b.queue(addr)
	q.msgs = append(q.msgs, append([]byte(nil), d.Payload...))
	cs := append([]*engine.Link(nil), q.consumers...)
	b.mu.Unlock()
	if !d.Settled {
		d.Accept()
	}
	for _, c := range cs {
		if c.Conn() == l.Conn() {
			b.dispatch(c)
		} else {
			driver.Of(c.Conn()).Do(func(*engine.Conn) { b.dispatch(c) })
		}
	}
}

func (b *testBroker) OnFlow(l *engine.Link) {
	if l.IsSender() {
		b.dispatch(l)
	}
}

// dispatch sends queued messages while l has credit; on l's connection
// goroutine.
func (b *testBroker) dispatch(l *engine.Link) {
	addr := string(l.Address())
	for l.Credit() > 0 {
		b.mu.Lock()
		q := b.queue(addr)
		if len(q.msgs) == 0 {
			b.mu.Unlock()
			return
		}
		m := q.msgs[0]
		q.msgs = q.msgs[1:]
		b.mu.Unlock()
		if _, err := l.Send(nil, m, l.SndSettleMode() == frame.SndSettled); err != nil {
			b.mu.Lock()
			q.msgs = append([][]byte{m}, q.msgs...)
			b.mu.Unlock()
			return
		}
	}
}

func (b *testBroker) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	// released deliveries of a consumer are not queued again: the tests
	// do not need it.
}

func (b *testBroker) queued(addr string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue(addr).msgs)
}
