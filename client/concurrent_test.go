package client_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/require"
)

// Senders and receivers shared by many goroutines, then closed under
// them: every message arrives once, every call returns (go test -race).
func TestConcurrent(t *testing.T) {
	b := startBroker(t)
	ctx := testCtx(t)
	c := dial(t, b)
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, "q/conc", nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "q/conc", &client.ReceiverOptions{Credit: 20})
	require.NoError(t, err)
	const senders, each = 8, 200
	var wg sync.WaitGroup
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				m := dataMsg(fmt.Sprintf("%d-%d", g, i))
				var err error
				if i%2 == 0 {
					err = snd.Send(ctx, m, nil)
				} else {
					var p client.Pending
					if p, err = snd.SendAsync(ctx, m, nil); err == nil {
						err = p.Wait(ctx)
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var mu sync.Mutex
	seen := map[string]int{}
	accepted := 0
	all := make(chan struct{}) // closed when every message is accepted
	var rg sync.WaitGroup
	for range 4 {
		rg.Add(1)
		go func() {
			defer rg.Done()
			var d client.Delivery
			for {
				if err := rcv.ReceiveInto(ctx, &d, nil); err != nil {
					return // closed below, once all are accepted
				}
				mu.Lock()
				seen[string(d.Message.Body.Data[0])]++
				mu.Unlock()
				// The receiver is closed only once every Accept has
				// returned: each of a received message must succeed.
				if err := d.Accept(ctx); err != nil {
					t.Error(err)
				}
				mu.Lock()
				accepted++
				if accepted == senders*each {
					close(all)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	select {
	case <-all:
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	require.NoError(t, rcv.Close(ctx)) // wakes the receivers still waiting
	rg.Wait()
	for k, n := range seen {
		require.Equal(t, 1, n, "message %s", k)
	}
}

// Messages larger than a frame, and than the session window allows at
// once, go out in pieces and arrive whole.
func TestLargeMessages(t *testing.T) {
	b := startBroker(t)
	ctx := testCtx(t)
	c := dial(t, b)
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, "q/large", nil)
	require.NoError(t, err)
	sizes := []int{0, 1, 65536, 300_000, 1 << 20, 3 << 20}
	for i, n := range sizes {
		m := &message.Message{Body: message.Body{Kind: message.BodyData, Data: [][]byte{bytes.Repeat([]byte{byte(i + 1)}, n)}}}
		require.NoError(t, snd.Send(ctx, m, nil), "%d bytes", n)
	}
	rcv, err := s.NewReceiver(ctx, "q/large", &client.ReceiverOptions{Credit: 2})
	require.NoError(t, err)
	for i, n := range sizes {
		d, err := rcv.Receive(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, bytes.Repeat([]byte{byte(i + 1)}, n), d.Message.Body.Data[0], "%d bytes", n)
		require.NoError(t, d.Accept(ctx))
	}
}

// A peer with an idle time-out gets heartbeats (every half of it): an
// idle connection stays up past it.
func TestIdleHeartbeats(t *testing.T) {
	ctx := testCtx(t)
	url := serveEngine(t, engine.Config{IdleTimeout: time.Second, Credit: 10, AutoAccept: true}, sink{})
	c, err := client.Dial(ctx, url, nil)
	require.NoError(t, err)
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, "sink", nil)
	require.NoError(t, err)
	time.Sleep(2500 * time.Millisecond) // two and a half idle time-outs
	require.NoError(t, snd.Send(ctx, dataMsg("still here"), nil))
	require.NoError(t, c.Err())
}

// SendOptions.Encoded: the bytes go as they are, through Send and
// SendAsync (the receiver gets them byte for byte); a message and
// Encoded both, or neither, is an error and sends nothing.
func TestSendEncoded(t *testing.T) {
	b := startBroker(t)
	ctx := testCtx(t)
	c := dial(t, b)
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, "q/encoded", nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "q/encoded", &client.ReceiverOptions{Credit: 10})
	require.NoError(t, err)

	one, two := dataMsgBytes("one"), dataMsgBytes("two")
	require.NoError(t, snd.Send(ctx, nil, &client.SendOptions{Encoded: one}))
	p, err := snd.SendAsync(ctx, nil, &client.SendOptions{Encoded: two})
	require.NoError(t, err)
	require.NoError(t, p.Wait(ctx))
	require.Error(t, snd.Send(ctx, dataMsg("both"), &client.SendOptions{Encoded: one}))
	require.Error(t, snd.Send(ctx, nil, nil))
	require.Error(t, snd.Send(ctx, nil, &client.SendOptions{}))
	three := dataMsgBytes("three")
	require.NoError(t, snd.Send(ctx, nil, &client.SendOptions{Encoded: three}))
	for _, want := range [][]byte{one, two, three} { // the refused sent nothing between
		d, err := rcv.Receive(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, want, d.Payload())
		require.NoError(t, d.Accept(ctx))
	}
}
