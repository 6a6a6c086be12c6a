package client_test

import (
	"context"
	"testing"

	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/stretchr/testify/require"
)

// stepSender is a server handler whose sending links send only when told
// (send), and which reports the link-credit each flow leaves them.
type stepSender struct {
	engine.NopHandler
	links chan *engine.Link // each sending link, at its attach
	flows chan uint32       // the sender's link-credit after each flow
}

func (h *stepSender) OnLinkAttach(l *engine.Link) {
	if l.IsSender() {
		h.links <- l
	}
}

func (h *stepSender) OnFlow(l *engine.Link) {
	if l != nil && l.IsSender() {
		h.flows <- l.Credit()
	}
}

// flow returns the link-credit the next flow leaves the sender, or fails
// the test when ctx ends first.
func (h *stepSender) flow(t *testing.T, ctx context.Context) uint32 {
	t.Helper()
	select {
	case n := <-h.flows:
		return n
	case <-ctx.Done():
		t.Fatal("no flow came")
		return 0
	}
}

// send sends n deliveries on l, from the test's goroutine.
func (h *stepSender) send(t *testing.T, l *engine.Link, n int) {
	t.Helper()
	require.True(t, driver.Of(l.Conn()).Do(func(*engine.Conn) {
		for range n {
			if _, err := l.Send(nil, []byte{0x00, 0x53, 0x77, 0x40}, true); err != nil { // amqp-value null
				t.Error(err)
			}
		}
	}))
}

// TestEagerCredit: a prefetch of 8, 5 of it used and 2 received.
// EagerCredit tops the credit up then, with 3 still outstanding (the
// flow leaves the sender 5: 8 less the 3 held); the default waits until
// the sender has used it all and Receive has taken half.
func TestEagerCredit(t *testing.T) {
	for _, eager := range []bool{true, false} {
		h := &stepSender{links: make(chan *engine.Link, 1), flows: make(chan uint32, 100)}
		ctx := testCtx(t)
		c, err := client.Dial(ctx, serveEngine(t, engine.Config{}, h), nil)
		require.NoError(t, err)
		s, err := c.NewSession(ctx, nil)
		require.NoError(t, err)
		rcv, err := s.NewReceiver(ctx, "q", &client.ReceiverOptions{Credit: 8, EagerCredit: eager})
		require.NoError(t, err)
		l := <-h.links
		require.Equal(t, uint32(8), h.flow(t, ctx), "the first grant")
		h.send(t, l, 5)
		for range 2 {
			_, err := rcv.Receive(ctx, nil)
			require.NoError(t, err)
		}
		if eager {
			require.Equal(t, uint32(5), h.flow(t, ctx), "eager: topped up with 3 outstanding, 3 held")
		} else {
			h.send(t, l, 3) // all used; 6 held
			for range 2 {   // 4 held: half
				_, err := rcv.Receive(ctx, nil)
				require.NoError(t, err)
			}
			require.Equal(t, uint32(4), h.flow(t, ctx), "drained: topped up once all was used and half taken")
		}
		require.Empty(t, h.flows, "one grant")
		require.NoError(t, c.Close())
	}
}
