package client_test

import (
	"testing"

	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/stretchr/testify/require"
)

// grantOnce is a server handler that grants each sender credit once,
// as many as its first grant says, and more only when told (more):
// it accepts everything.
type grantOnce struct {
	engine.NopHandler
	first    uint32
	links    chan *engine.Link // each receiving link, at its attach
	received chan struct{}     // a token per delivery
}

func (h *grantOnce) OnLinkAttach(l *engine.Link) {
	if !l.IsSender() {
		l.Flow(h.first)
		h.links <- l
	}
}

func (h *grantOnce) OnDelivery(l *engine.Link, d engine.Delivery) {
	d.Accept()
	h.received <- struct{}{}
}

// TestSendAsyncBehindStalled: messages queued with SendAsync behind
// ones the link holds for want of credit are not each run through the
// link's work (a wake-up, a turn of the Conn, a write each): they wait
// in the queue, and the peer's next grant sends them all at once. The
// count of runs is bounded by the messages the credit lets go (a run
// sends one or more, or finds the link stalled), not by those queued.
func TestSendAsyncBehindStalled(t *testing.T) {
	const credit, n = 10, 500
	h := &grantOnce{first: credit, links: make(chan *engine.Link, 1), received: make(chan struct{}, n)}
	ctx := testCtx(t)
	c, err := client.Dial(ctx, serveEngine(t, engine.Config{AutoAccept: true}, h), nil)
	require.NoError(t, err)
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, "q", nil)
	require.NoError(t, err)
	l := <-h.links
	msg := benchMsg()
	ps := make([]client.Pending, n)
	for i := range ps {
		ps[i], err = snd.SendAsync(ctx, msg, nil)
		require.NoError(t, err)
	}
	for range credit {
		<-h.received
	}
	require.LessOrEqual(t, client.SenderRuns(snd), int64(3*credit), "runs of the link's work for %d messages, %d of them with credit", n, credit)
	require.True(t, driver.Of(l.Conn()).Do(func(*engine.Conn) { l.Flow(n) }))
	for _, p := range ps {
		require.NoError(t, p.Wait(ctx))
	}
	require.LessOrEqual(t, client.SenderRuns(snd), int64(3*credit), "runs after the grant that sends the rest")
}
