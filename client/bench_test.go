package client_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/stretchr/testify/require"
)

// sendAsyncSender is a sender to an in-process engine server that
// accepts everything, granting 1,000 credit.
func sendAsyncSender(tb testing.TB) (context.Context, *client.Sender) {
	ctx := testCtx(tb)
	url := serveEngine(tb, engine.Config{Credit: 1000, AutoAccept: true}, sink{})
	c, err := client.Dial(ctx, url, nil)
	require.NoError(tb, err)
	tb.Cleanup(func() { c.Close() })
	s, err := c.NewSession(ctx, nil)
	require.NoError(tb, err)
	snd, err := s.NewSender(ctx, "sink", nil)
	require.NoError(tb, err)
	return ctx, snd
}

// sendWindow sends n messages with SendAsync, waiting for the outcome
// of the one window places back before queuing the next (window n: all
// queued at once, then all waited for). ps holds window Pendings.
func sendWindow(ctx context.Context, snd *client.Sender, n int, ps []client.Pending) error {
	msg := benchMsg()
	w := len(ps)
	for i := range n {
		if i >= w {
			if err := ps[i%w].Wait(ctx); err != nil {
				return err
			}
		}
		p, err := snd.SendAsync(ctx, msg, nil)
		if err != nil {
			return err
		}
		ps[i%w] = p
	}
	for i := max(0, n-w); i < n; i++ {
		if err := ps[i%w].Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkSendAsync: window=1000 keeps 1,000 outcomes awaited at once;
// window=100000 queues 100,000 messages at once, then waits for them
// (SendAsync's bound on queued messages holds it back meanwhile).
//
//	go test -run '^$' -bench SendAsync -benchmem ./client/
func BenchmarkSendAsync(b *testing.B) {
	for _, w := range []int{1000, 100_000} {
		b.Run("window="+itoa(w), func(b *testing.B) {
			ctx, snd := sendAsyncSender(b)
			ps := make([]client.Pending, w)
			if err := sendWindow(ctx, snd, 2*w, ps); err != nil { // warm
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += 100_000 {
				if err := sendWindow(ctx, snd, min(100_000, b.N-i), ps); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
