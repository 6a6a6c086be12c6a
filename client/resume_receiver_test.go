package client_test

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// subServer is an engine server that is a durable sender (a broker's
// durable subscription): it sends its messages once each, tagged "t0",
// "t1", …, keeps the unsettled state of each link it sends on across
// connections (a Recoverer) and, on a link attached again, resumes
// first each delivery the receiver's unsettled map holds.
type subServer struct {
	engine.NopHandler
	srv  *driver.Server
	addr string
	msgs [][]byte

	mu       sync.Mutex
	next     int                           // the next message never sent
	kept     map[string][]engine.Unsettled // link name → unsettled at the detach
	live     map[string]chan struct{}
	resume   map[*engine.Link][][]byte // tags to resume on the link
	outcomes map[string]int            // tag → outcomes given
	resumed  int
}

func startSub(t *testing.T, n int) *subServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	b := &subServer{addr: ln.Addr().String(), kept: map[string][]engine.Unsettled{}, live: map[string]chan struct{}{},
		resume: map[*engine.Link][][]byte{}, outcomes: map[string]int{}}
	for i := range n {
		p, err := dataMsg("m" + strconv.Itoa(i)).Append(nil)
		require.NoError(t, err)
		b.msgs = append(b.msgs, p)
	}
	b.srv = &driver.Server{Config: engine.Config{ContainerID: "sub-server"}, Handler: b}
	go b.srv.Serve(ln)
	t.Cleanup(func() { b.srv.Close() })
	return b
}

func (b *subServer) Recover(l *engine.Link) []engine.Unsettled {
	if !l.IsSender() {
		return nil
	}
	name := string(l.Name())
	b.mu.Lock()
	defer b.mu.Unlock()
	awaitDetached(&b.mu, b.live, name)
	u := b.kept[name]
	delete(b.kept, name)
	for _, d := range u {
		if _, known := l.RemoteUnsettled(d.Tag); known {
			b.resume[l] = append(b.resume[l], d.Tag)
		}
	}
	return u
}

func (b *subServer) OnFlow(l *engine.Link) {
	if !l.IsSender() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for l.Credit() > 0 {
		if tags := b.resume[l]; len(tags) > 0 {
			i, _ := strconv.Atoi(string(tags[0][1:]))
			if _, err := l.SendResume(tags[0], b.msgs[i], false); err != nil {
				return
			}
			b.resume[l] = tags[1:]
			b.resumed++
			continue
		}
		if b.next == len(b.msgs) {
			return
		}
		if _, err := l.Send([]byte("t"+strconv.Itoa(b.next)), b.msgs[b.next], false); err != nil {
			return
		}
		b.next++
	}
}

func (b *subServer) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	if l.IsSender() && d.Settled {
		b.mu.Lock()
		b.outcomes[string(d.Tag)]++
		b.mu.Unlock()
	}
}

func (b *subServer) OnLinkDetach(l *engine.Link, e *engine.Error) {
	if !l.IsSender() {
		return
	}
	name := string(l.Name())
	u := l.Unsettled()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.kept[name] = u
	delete(b.resume, l)
	if ch := b.live[name]; ch != nil {
		close(ch)
		delete(b.live, name)
	}
}

// receiveSix attaches a resumable receiver with credit 10 to "sub" at
// addr over a cutDialer whose second dial waits for its gate, receives
// six deliveries and accepts the first two.
func receiveSix(t *testing.T, ctx context.Context, addr string) (*cutDialer, *client.Receiver, []*client.Delivery, map[string]int) {
	d := &cutDialer{gate: make(chan struct{})}
	c, err := client.Dial(ctx, addr, &client.ConnOptions{Dialer: d.dial,
		Reconnect: &client.ReconnectOptions{Backoff: 10 * time.Millisecond}})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "sub", &client.ReceiverOptions{Credit: 10, Durable: true})
	require.NoError(t, err)
	got := map[string]int{}
	var before []*client.Delivery
	for range 6 {
		dl, err := rcv.Receive(ctx, nil)
		require.NoError(t, err)
		got[string(dl.Message.Body.Data[0])]++
		assert.False(t, dl.Resumed)
		before = append(before, dl)
	}
	require.NoError(t, before[0].Accept(ctx))
	require.NoError(t, before[1].Accept(ctx))
	return d, rcv, before, got
}

// cutHeld cuts the connection and waits for the dial again to have
// begun (held at the gate): the loss has been seen.
func (d *cutDialer) cutHeld(t *testing.T, ctx context.Context) {
	d.cut()
	for d.tries.Load() < 2 {
		require.NoError(t, ctx.Err())
		time.Sleep(time.Millisecond)
	}
}

// TestResumeReceiver: a resumable receiver has taken six of ten
// deliveries (two accepted) and holds four unreceived when the
// connection is cut. It accepts one while the connection is down, and
// the others received before the loss after it: each is settled on the
// delivery the sender resumes; the four dropped unreceived come again,
// Resumed. The sender sees each of the ten settled once, and the
// receiver gets each message once.
func TestResumeReceiver(t *testing.T) {
	b := startSub(t, 10)
	ctx := testCtx(t)
	d, rcv, before, got := receiveSix(t, ctx, b.addr)
	waitLocked(t, &b.mu, "t0 and t1 settled", func() bool { return b.outcomes["t0"] == 1 && b.outcomes["t1"] == 1 })
	waitLocked(t, &b.mu, "all ten sent", func() bool { return b.next == 10 })

	d.cutHeld(t, ctx)
	require.NoError(t, before[2].Accept(ctx), "settled while the connection is down: sent once resumed")
	close(d.gate)
	for range 4 {
		dl, err := rcv.Receive(ctx, nil)
		require.NoError(t, err)
		got[string(dl.Message.Body.Data[0])]++
		assert.True(t, dl.Resumed, "dropped unreceived at the loss, resumed")
		require.NoError(t, dl.Accept(ctx))
	}
	waitLocked(t, &b.mu, "eight resumed", func() bool { return b.resumed == 8 })
	for _, dl := range before[3:] {
		require.NoError(t, dl.Accept(ctx), "received before the loss, settled after it")
	}
	waitLocked(t, &b.mu, "each of the ten settled", func() bool { return len(b.outcomes) == 10 })
	b.mu.Lock()
	for tag, n := range b.outcomes {
		assert.Equal(t, 1, n, "%s settled once", tag)
	}
	b.mu.Unlock()
	for i := range 10 {
		assert.Equal(t, 1, got["m"+strconv.Itoa(i)], "m%d received once", i)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err := rcv.Receive(short, nil)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "nothing more comes")
	require.Error(t, before[0].Accept(ctx), "settled before the loss: its link is gone")
}

// A resumable receiver's ReceiveInto and Accept allocate nothing once
// warm: it follows its unsettled deliveries in a map it reuses.
func TestResumeReceiveAllocs(t *testing.T) {
	skipRace(t)
	ctx := testCtx(t)
	receiveIntoAllocs(t, ctx, benchMsg(), &client.ConnOptions{Reconnect: &client.ReconnectOptions{}},
		&client.ReceiverOptions{Credit: 200, Durable: true})
}
