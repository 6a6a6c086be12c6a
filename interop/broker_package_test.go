package interop

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/amqpsax/amqpsax/amqptest"
	"github.com/amqpsax/amqpsax/broker"
	"github.com/stretchr/testify/require"
)

// TestPackageBrokerGoAMQP runs go-amqp v1.7.0 against package broker,
// started through amqptest: a queue, competing receivers, fan-out, a
// dynamic reply queue for request/reply, and flow control with
// long-lived producers that block on credit at the queue's bound and
// resume as a consumer drains it.
func TestPackageBrokerGoAMQP(t *testing.T) {
	const bound = 20
	srv := amqptest.NewServer(t, &broker.Options{MaxMessages: bound, Credit: 5, FanoutPrefixes: []string{"topic/"}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dial := func(t *testing.T) *amqp.Session {
		conn, err := amqp.Dial(ctx, srv.URL, nil)
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close() })
		s, err := conn.NewSession(ctx, nil)
		require.NoError(t, err)
		return s
	}

	t.Run("queue", func(t *testing.T) {
		s := dial(t)
		snd, err := s.NewSender(ctx, "orders", nil)
		require.NoError(t, err)
		for i := range 10 {
			m := amqp.NewMessage([]byte(fmt.Sprint("order ", i)))
			m.ApplicationProperties = map[string]any{"i": int64(i)}
			require.NoError(t, snd.Send(ctx, m, nil))
		}
		q, _ := srv.Queue("orders")
		require.Equal(t, 10, q.Depth)
		// two competing receivers share the queue
		r1, err := dial(t).NewReceiver(ctx, "orders", &amqp.ReceiverOptions{Credit: 1})
		require.NoError(t, err)
		r2, err := dial(t).NewReceiver(ctx, "orders", &amqp.ReceiverOptions{Credit: 1})
		require.NoError(t, err)
		ids := make(chan int64, 10)
		rctx, rcancel := context.WithCancel(ctx)
		for _, r := range []*amqp.Receiver{r1, r2} {
			go func() {
				for {
					m, err := r.Receive(rctx, nil)
					if err != nil {
						return
					}
					i := m.ApplicationProperties["i"].(int64)
					if string(m.GetData()) != fmt.Sprint("order ", i) {
						i = -1
					}
					r.AcceptMessage(rctx, m)
					ids <- i
				}
			}()
		}
		seen := map[int64]bool{}
		for range 10 {
			i := <-ids
			require.GreaterOrEqual(t, i, int64(0), "a body differs")
			require.False(t, seen[i], "message %d twice", i)
			seen[i] = true
		}
		rcancel()
		// a released message comes back (to r1, alone on the queue now)
		require.NoError(t, r2.Close(ctx))
		require.NoError(t, snd.Send(ctx, amqp.NewMessage([]byte("again")), nil))
		m, err := r1.Receive(ctx, nil)
		require.NoError(t, err)
		require.NoError(t, r1.ReleaseMessage(ctx, m))
		m, err = r1.Receive(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, "again", string(m.GetData()))
		require.NoError(t, r1.AcceptMessage(ctx, m))
	})

	t.Run("fanout", func(t *testing.T) {
		var rs []*amqp.Receiver
		for range 3 {
			r, err := dial(t).NewReceiver(ctx, "topic/prices", &amqp.ReceiverOptions{Credit: 10})
			require.NoError(t, err)
			rs = append(rs, r)
		}
		snd, err := dial(t).NewSender(ctx, "topic/prices", nil)
		require.NoError(t, err)
		for i := range 5 {
			require.NoError(t, snd.Send(ctx, amqp.NewMessage([]byte(fmt.Sprint("price ", i))), nil))
		}
		for _, r := range rs {
			for i := range 5 {
				m, err := r.Receive(ctx, nil)
				require.NoError(t, err)
				require.Equal(t, fmt.Sprint("price ", i), string(m.GetData()))
				require.NoError(t, r.AcceptMessage(ctx, m))
			}
		}
		q, _ := srv.Queue("topic/prices")
		require.True(t, q.Fanout)
		require.Equal(t, 3, q.Consumers)
	})

	t.Run("request-reply", func(t *testing.T) {
		// the service: answers each request on its reply-to address
		svc := dial(t)
		reqs, err := svc.NewReceiver(ctx, "requests", &amqp.ReceiverOptions{Credit: 10})
		require.NoError(t, err)
		go func() {
			for {
				m, err := reqs.Receive(ctx, nil)
				if err != nil {
					return
				}
				reqs.AcceptMessage(ctx, m)
				rs, err := svc.NewSender(ctx, *m.Properties.ReplyTo, nil)
				if err != nil {
					return
				}
				reply := amqp.NewMessage(append([]byte("re: "), m.GetData()...))
				reply.Properties = &amqp.MessageProperties{CorrelationID: m.Properties.MessageID}
				rs.Send(ctx, reply, nil)
				rs.Close(ctx)
			}
		}()
		s := dial(t)
		replies, err := s.NewReceiver(ctx, "", &amqp.ReceiverOptions{DynamicAddress: true, Credit: 10})
		require.NoError(t, err)
		addr := replies.Address()
		require.NotEmpty(t, addr)
		q, ok := srv.Queue(addr)
		require.True(t, ok)
		require.True(t, q.Dynamic)
		snd, err := s.NewSender(ctx, "requests", nil)
		require.NoError(t, err)
		for i := range 3 {
			m := amqp.NewMessage([]byte(fmt.Sprint("question ", i)))
			m.Properties = &amqp.MessageProperties{MessageID: fmt.Sprint("q", i), ReplyTo: &addr}
			require.NoError(t, snd.Send(ctx, m, nil))
			r, err := replies.Receive(ctx, nil)
			require.NoError(t, err)
			require.Equal(t, fmt.Sprint("re: question ", i), string(r.GetData()))
			require.Equal(t, fmt.Sprint("q", i), r.Properties.CorrelationID)
			require.NoError(t, replies.AcceptMessage(ctx, r))
		}
		require.NoError(t, replies.Close(ctx))
		_, ok = srv.Queue(addr)
		require.False(t, ok, "the dynamic queue goes with its link")
	})

	t.Run("flow-control", func(t *testing.T) {
		const producers, each = 3, 100
		var sent atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, producers)
		for p := range producers {
			snd, err := dial(t).NewSender(ctx, "bounded", nil)
			require.NoError(t, err)
			wg.Add(1)
			go func() { // a long-lived producer: it blocks on credit and resumes
				defer wg.Done()
				for i := range each {
					m := amqp.NewMessage([]byte(fmt.Sprintf("p%d-%d", p, i)))
					if err := snd.Send(ctx, m, nil); err != nil {
						errs <- err
						return
					}
					sent.Add(1)
				}
			}()
		}
		// No consumer yet: the producers fill the queue to its bound and
		// wait for credit.
		require.Eventually(t, func() bool {
			q, _ := srv.Queue("bounded")
			return q.Blocked == producers
		}, time.Minute, 5*time.Millisecond, "every producer waits for credit")
		q, _ := srv.Queue("bounded")
		require.LessOrEqual(t, q.Depth, bound+producers*5)
		require.Less(t, sent.Load(), int64(producers*each), "the producers are held back")
		held := sent.Load()

		rcv, err := dial(t).NewReceiver(ctx, "bounded", &amqp.ReceiverOptions{Credit: 5})
		require.NoError(t, err)
		got := map[string]bool{}
		for len(got) < producers*each {
			m, err := rcv.Receive(ctx, nil)
			require.NoError(t, err)
			require.False(t, got[string(m.GetData())], "%s twice", m.GetData())
			got[string(m.GetData())] = true
			require.NoError(t, rcv.AcceptMessage(ctx, m))
			q, _ := srv.Queue("bounded")
			require.LessOrEqual(t, q.Depth+q.Unsettled, bound+producers*5)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, int64(producers*each), sent.Load())
		t.Logf("%d producers held at %d messages sent (queue bound %d), then resumed: all %d received once",
			producers, held, bound, producers*each)
	})
}
