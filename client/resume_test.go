package client_test

import (
	"context"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// durableServer is an engine server that is a durable receiver: it
// stores each message it receives once by delivery-tag, gives it an
// outcome (accepted, unless hold is set), and keeps the unsettled state
// of each link it receives on across connections (a Recoverer), with the
// outcomes it had given: a resumed settled transfer settles one, a
// resumed message it has is not stored again.
type durableServer struct {
	engine.NopHandler
	srv  *driver.Server
	addr string

	hold atomic.Bool // store, give no outcome

	mu       sync.Mutex
	byTag    map[string]string              // tag → payload stored
	order    []string                       // tags as first stored
	bodies   map[string]int                 // payload → times stored
	states   map[string]frame.DeliveryState // tag → outcome given
	kept     map[string][]engine.Unsettled  // link name → its unsettled at the detach
	live     map[string]chan struct{}       // link name → closed at its detach
	forget   map[string]bool                // tags the next Recover leaves out
	recoverN int                            // tags Recover handed back
	forgot   int                            // tags Recover found the sender had settled
	settled  int                            // resumed settlements
	again    int                            // resumed messages it had
	dupNew   int                            // new deliveries with a tag it had: duplicates
	conns    []*driver.Driver
}

func startDurable(t testing.TB) *durableServer { return startDurableWith(t, 0) }

// startDurableWith starts a durableServer whose max-frame-size is
// maxFrame (0: the engine's default).
func startDurableWith(t testing.TB, maxFrame uint32) *durableServer {
	b, err := newDurable(maxFrame)
	require.NoError(t, err)
	t.Cleanup(func() { b.srv.Close() })
	return b
}

func newDurable(maxFrame uint32) (*durableServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &durableServer{addr: ln.Addr().String(), byTag: map[string]string{}, bodies: map[string]int{},
		states: map[string]frame.DeliveryState{}, kept: map[string][]engine.Unsettled{},
		live: map[string]chan struct{}{}, forget: map[string]bool{}}
	b.srv = &driver.Server{Config: engine.Config{ContainerID: "durable-server", Credit: 200, Window: 5000, MaxFrameSize: maxFrame}, Handler: b}
	go b.srv.Serve(ln)
	return b, nil
}

func (b *durableServer) OnConnectionOpen(c *engine.Conn) {
	b.mu.Lock()
	b.conns = append(b.conns, driver.Of(c))
	b.mu.Unlock()
}

func (b *durableServer) OnDelivery(l *engine.Link, d engine.Delivery) {
	tag := string(d.DeliveryTag)
	b.mu.Lock()
	if d.Resumed() && d.Settled && len(d.Payload) == 0 {
		b.settled++ // the sender settles what this end had given an outcome
		delete(b.states, tag)
		b.mu.Unlock()
		return
	}
	if _, have := b.byTag[tag]; !have {
		b.byTag[tag] = string(d.Payload)
		b.order = append(b.order, tag)
		b.bodies[string(d.Payload)]++
	} else if d.Resumed() {
		b.again++
	} else {
		b.dupNew++
	}
	if b.hold.Load() {
		b.mu.Unlock()
		return
	}
	b.states[tag] = engine.Accepted
	b.mu.Unlock()
	d.Accept()
}

// OnDisposition: the sender settled a delivery this end gave an outcome
// (receiver settle mode second).
func (b *durableServer) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	if !l.IsSender() && d.Settled {
		b.mu.Lock()
		delete(b.states, string(d.Tag))
		b.mu.Unlock()
	}
}

func (b *durableServer) OnLinkDetach(l *engine.Link, e *engine.Error) {
	if l.IsSender() {
		return
	}
	name := string(l.Name())
	u := l.Unsettled()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.kept[name] = u
	if ch := b.live[name]; ch != nil {
		close(ch)
		delete(b.live, name)
	}
}

// awaitDetached, called with mu held, waits (mu released meanwhile) for
// the link of that name still live to detach — a connection's loss may
// reach this end after the new attach — then marks the name live again.
func awaitDetached(mu *sync.Mutex, live map[string]chan struct{}, name string) {
	if ch := live[name]; ch != nil {
		mu.Unlock()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
		}
		mu.Lock()
	}
	live[name] = make(chan struct{})
}

// Recover waits for an earlier link of the same name to have detached
// (its connection's loss may reach this end after the new attach), then
// hands back what it left unsettled, with the outcomes given.
func (b *durableServer) Recover(l *engine.Link) []engine.Unsettled {
	if l.IsSender() {
		return nil
	}
	name := string(l.Name())
	b.mu.Lock()
	defer b.mu.Unlock()
	awaitDetached(&b.mu, b.live, name)
	var out []engine.Unsettled
	for _, u := range b.kept[name] {
		if b.forget[string(u.Tag)] {
			continue
		}
		if _, known := l.RemoteUnsettled(u.Tag); !known && !l.RemoteAttach().IncompleteUnsettled {
			// The sender had it settled (its settlement lost with the
			// connection): settled here too.
			delete(b.states, string(u.Tag))
			b.forgot++
			continue
		}
		u.State = b.states[string(u.Tag)]
		out = append(out, u)
	}
	delete(b.kept, name)
	b.recoverN += len(out)
	return out
}

// settledAll waits for the sender to have settled every delivery this
// end gave an outcome (its settlement follows the outcome it completes
// a Pending with).
func (b *durableServer) settledAll(t testing.TB) {
	waitLocked(t, &b.mu, "every outcome settled by the sender", func() bool { return len(b.states) == 0 })
}

// waitLocked waits until cond, called with mu locked, holds: a test's
// bound, 10 s.
func waitLocked(t testing.TB, mu *sync.Mutex, what string, cond func() bool) {
	t.Helper()
	for i := 0; ; i++ {
		mu.Lock()
		ok := cond()
		mu.Unlock()
		if ok {
			return
		}
		if i == 10000 {
			t.Fatalf("not after 10 s: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// cutDialer dials TCP; the first connection it makes is cut after
// after bytes written (0: only when cut is called): the bytes up to
// there go out, a frame may be cut in two, and the connection is closed.
// cut closes the latest connection at once.
type cutDialer struct {
	after  int64
	gate   chan struct{} // when set, the second dial waits for it to close
	tries  atomic.Int32  // dials begun
	dials  atomic.Int32  // connections made
	latest atomic.Pointer[net.Conn]
}

func (d *cutDialer) dial(ctx context.Context, addr string) (net.Conn, error) {
	if d.tries.Add(1) == 2 && d.gate != nil {
		select {
		case <-d.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var dl net.Dialer
	nc, err := dl.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	d.latest.Store(&nc)
	if d.dials.Add(1) > 1 || d.after == 0 {
		return nc, nil
	}
	cc := &cutConn{Conn: nc}
	cc.left.Store(d.after)
	return cc, nil
}

// cut closes the latest connection now.
func (d *cutDialer) cut() { (*d.latest.Load()).Close() }

type cutConn struct {
	net.Conn
	left atomic.Int64
}

func (c *cutConn) Write(p []byte) (int, error) {
	left := c.left.Add(-int64(len(p))) + int64(len(p))
	if left >= int64(len(p)) {
		return c.Conn.Write(p)
	}
	n := 0
	if left > 0 {
		n, _ = c.Conn.Write(p[:left])
	}
	c.Conn.Close()
	return n, net.ErrClosed
}

func dialDurable(t testing.TB, ctx context.Context, addr string, d *cutDialer) (*client.Conn, *client.Sender) {
	c, err := client.Dial(ctx, addr, &client.ConnOptions{Dialer: d.dial,
		Reconnect: &client.ReconnectOptions{Backoff: 20 * time.Millisecond}})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, "orders", &client.SenderOptions{Durable: true})
	require.NoError(t, err)
	return c, snd
}

// TestResumeMidStream is the must-hold against an engine
// server that is a durable receiver: 10,000 unsettled SendAsync of
// distinct messages (about 760,000 bytes from the client), the
// connection cut in the middle of them (after 100,003, 380,001 or
// 650,007 bytes: within a frame); each Pending.Wait returns nil once,
// and the server has each message exactly once, each outcome it gave
// settled by the sender.
func TestResumeMidStream(t *testing.T) {
	for _, after := range []int64{100_003, 380_001, 650_007} {
		t.Run("cut="+strconv.FormatInt(after, 10), func(t *testing.T) { resumeMidStream(t, after) })
	}
}

func resumeMidStream(t *testing.T, after int64) {
	const n = 10000
	b := startDurable(t)
	ctx := testCtx(t)
	d := &cutDialer{after: after}
	_, snd := dialDurable(t, ctx, b.addr, d)
	sendAllOnce(t, ctx, snd, d, n)
	b.settledAll(t)
	b.mu.Lock()
	defer b.mu.Unlock()
	require.Len(t, b.byTag, n, "every message arrived")
	require.Len(t, b.bodies, n, "each a different one")
	for body, k := range b.bodies {
		require.Equal(t, 1, k, "stored once: %q", body)
	}
	require.Zero(t, b.dupNew, "no message sent again as new")
	t.Logf("at the cut the server held %d deliveries unsettled: %d the sender had settled, %d it settled resumed, %d it sent again resumed",
		b.recoverN+b.forgot, b.forgot, b.settled, b.again)
}

// sendAllOnce sends n distinct messages ("message 0", …) with
// SendAsync on snd, whose connection d cuts, and requires each Pending
// to return nil once, and the connection to have been dialled again once.
func sendAllOnce(t *testing.T, ctx context.Context, snd *client.Sender, d *cutDialer, n int) {
	ps := make([]client.Pending, n)
	for i := range ps {
		p, err := snd.SendAsync(ctx, dataMsg("message "+strconv.Itoa(i)), nil)
		require.NoError(t, err)
		ps[i] = p
	}
	for i, p := range ps {
		require.NoError(t, p.Wait(ctx), "message %d", i)
		require.ErrorIs(t, p.Wait(ctx), client.ErrWaited, "message %d: one outcome", i)
	}
	require.Equal(t, int32(2), d.dials.Load(), "the connection was cut, and dialled again once")
}

// heldThirty sends 30 messages on a resumable sender to a durable server
// that holds them without an outcome, and returns once it has all 30.
func heldThirty(t *testing.T) (*durableServer, *cutDialer, []client.Pending) {
	b := startDurable(t)
	b.hold.Store(true)
	ctx := testCtx(t)
	d := &cutDialer{}
	_, snd := dialDurable(t, ctx, b.addr, d)
	ps := make([]client.Pending, 30)
	for i := range ps {
		p, err := snd.SendAsync(ctx, dataMsg("message "+strconv.Itoa(i)), nil)
		require.NoError(t, err)
		ps[i] = p
	}
	waitLocked(t, &b.mu, "30 stored", func() bool { return len(b.order) == len(ps) })
	return b, d, ps
}

// TestResumeOutcomes walks each way a kept delivery is resolved: the
// server held 30 messages without an outcome when the connection went;
// it had meanwhile accepted 0-9 (5 rejected) with the dispositions lost,
// holds 10-19 with no outcome, and lost 20-29. After the reconnect 0-9
// are settled with a resumed transfer and their Pendings return those
// outcomes, 10-19 are sent again resumed and not stored twice, 20-29 are
// sent as new deliveries.
func TestResumeOutcomes(t *testing.T) {
	b, d, ps := heldThirty(t)
	ctx := testCtx(t)
	b.mu.Lock()
	for i, tag := range b.order {
		switch {
		case i == 5:
			b.states[tag] = frame.DeliveryState{Type: frame.StateRejected,
				Error: frame.AMQPError{Condition: []byte("amqp:precondition-failed")}}
		case i < 10:
			b.states[tag] = engine.Accepted
		case i >= 20:
			b.forget[tag] = true
			delete(b.bodies, b.byTag[tag])
			delete(b.byTag, tag)
		}
	}
	b.mu.Unlock()
	b.hold.Store(false)
	d.cut()
	for i, p := range ps {
		err := p.Wait(ctx)
		if i == 5 {
			var oe *client.OutcomeError
			require.ErrorAs(t, err, &oe)
			assert.ErrorIs(t, err, client.ErrRejected)
			continue
		}
		require.NoError(t, err, "message %d", i)
	}
	b.settledAll(t)
	b.mu.Lock()
	defer b.mu.Unlock()
	assert.Equal(t, 20, b.recoverN, "the server handed back what it kept")
	assert.Equal(t, 10, b.settled, "0-9 settled by a resumed transfer")
	assert.Equal(t, 10, b.again, "10-19 sent again resumed")
	assert.Zero(t, b.dupNew)
	assert.Len(t, b.bodies, 30)
	for body, k := range b.bodies {
		assert.Equal(t, 1, k, "stored once: %q", body)
	}
}

// A resumable sender sends unsettled: settle mode settled is refused.
func TestResumeSettledRefused(t *testing.T) {
	b := startDurable(t)
	ctx := testCtx(t)
	c, err := client.Dial(ctx, b.addr, nil)
	require.NoError(t, err)
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	_, err = s.NewSender(ctx, "q", &client.SenderOptions{Durable: true, SettlementMode: client.SenderSettleModeSettled})
	require.Error(t, err)
}

// A resumable sender's Send and SendAsync allocate nothing once warm,
// as a plain sender's do: its tags are kept in the requests it reuses.
func TestResumeSendAllocs(t *testing.T) {
	skipRace(t)
	ctx := testCtx(t)
	url := serveEngine(t, engine.Config{Credit: 1000, AutoAccept: true}, sink{})
	c, err := client.Dial(ctx, url, &client.ConnOptions{Reconnect: &client.ReconnectOptions{}})
	require.NoError(t, err)
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, "sink", &client.SenderOptions{Durable: true})
	require.NoError(t, err)
	msg := benchMsg()
	for range 1000 { // warm
		require.NoError(t, snd.Send(ctx, msg, nil))
	}
	n := testing.AllocsPerRun(2000, func() {
		if err := snd.Send(ctx, msg, nil); err != nil {
			panic(err)
		}
	})
	require.Zero(t, n, "allocations per resumable Send")
	const batch = 100
	var ps [batch]client.Pending
	pipeline := func() {
		for i := range ps {
			p, err := snd.SendAsync(ctx, msg, nil)
			if err != nil {
				panic(err)
			}
			ps[i] = p
		}
		for _, p := range ps {
			if err := p.Wait(ctx); err != nil {
				panic(err)
			}
		}
	}
	for range 100 { // warm: every slot of both ends' rings holds a tag
		pipeline()
	}
	n = testing.AllocsPerRun(50, pipeline)
	require.Zero(t, n/batch, "allocations per resumable SendAsync and Wait")
	t.Logf("resumable SendAsync+Wait: %.2f allocations per %d messages", n, batch)
}

// TestResumeTwice: the connection is lost again while the deliveries
// resumed at the first loss are still without an outcome; they are kept
// and resumed once more, and each message is still stored once, each
// Pending returns once.
func TestResumeTwice(t *testing.T) {
	b, d, ps := heldThirty(t)
	ctx := testCtx(t)
	d.cut()
	waitLocked(t, &b.mu, "30 sent again resumed", func() bool { return b.again == 30 })
	b.hold.Store(false)
	d.cut()
	for i, p := range ps {
		require.NoError(t, p.Wait(ctx), "message %d", i)
	}
	b.settledAll(t)
	b.mu.Lock()
	defer b.mu.Unlock()
	assert.Equal(t, int32(3), d.dials.Load())
	assert.Equal(t, 60, b.again, "resumed at each loss")
	assert.Zero(t, b.dupNew)
	assert.Len(t, b.bodies, 30)
	for body, k := range b.bodies {
		assert.Equal(t, 1, k, "stored once: %q", body)
	}
}

// TestResumeSmallFrames: a peer whose max-frame-size (512) holds the
// unsettled map of one delivery only: the sender keeps one delivery
// unsettled at a time (the next goes when its outcome comes), so that
// what it resumes always fits its attach; 200 messages cut in the middle
// are each stored once and each Pending returns nil.
func TestResumeSmallFrames(t *testing.T) {
	const n = 200
	b := startDurableWith(t, 512)
	ctx := testCtx(t)
	d := &cutDialer{after: 10_001}
	_, snd := dialDurable(t, ctx, b.addr, d)
	sendAllOnce(t, ctx, snd, d, n)
	b.settledAll(t)
	b.mu.Lock()
	defer b.mu.Unlock()
	assert.Len(t, b.bodies, n)
	for body, k := range b.bodies {
		assert.Equal(t, 1, k, "stored once: %q", body)
	}
	assert.Zero(t, b.dupNew)
	assert.LessOrEqual(t, b.recoverN+b.forgot, 1, "one delivery unsettled at the cut, at most")
}
