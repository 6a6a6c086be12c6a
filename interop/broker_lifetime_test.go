package interop

import (
	"context"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/amqpsax/amqpsax/amqptest"
	"github.com/amqpsax/amqpsax/broker"
	"github.com/stretchr/testify/require"
)

// TestPackageBrokerLifetimeGoAMQP runs go-amqp v1.7.0 against package
// broker's message lifetimes: time-to-live (the header's ttl and the
// properties' absolute-expiry-time), dead-lettering after
// MaxDeliveryCount, priorities, and scheduled delivery (Artemis' and
// Service Bus' annotations). The broker's clock is a fake one the test
// moves (Options.Now); reading the statistics makes what is due happen.
func TestPackageBrokerLifetimeGoAMQP(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	now := func() time.Time { return time.UnixMilli(clock.Load()) }
	advance := func(d time.Duration) { clock.Add(d.Milliseconds()) }
	srv := amqptest.NewServer(t, &broker.Options{Now: now, MaxDeliveryCount: 3, DeadLetterAddress: "dlq", ExpiryAddress: "expired"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := amqp.Dial(ctx, srv.URL, nil)
	require.NoError(t, err)
	defer conn.Close()
	s, err := conn.NewSession(ctx, nil)
	require.NoError(t, err)
	send := func(t *testing.T, addr string, ms ...*amqp.Message) {
		snd, err := s.NewSender(ctx, addr, nil)
		require.NoError(t, err)
		defer snd.Close(ctx)
		for _, m := range ms {
			require.NoError(t, snd.Send(ctx, m, nil))
		}
	}
	receiver := func(t *testing.T, addr string) *amqp.Receiver {
		r, err := s.NewReceiver(ctx, addr, &amqp.ReceiverOptions{Credit: 20})
		require.NoError(t, err)
		return r
	}
	receive := func(t *testing.T, r *amqp.Receiver) *amqp.Message {
		m, err := r.Receive(ctx, nil)
		require.NoError(t, err)
		require.NoError(t, r.AcceptMessage(ctx, m))
		return m
	}
	stats := func(t *testing.T, name string) broker.QueueStats {
		st, ok := srv.Queue(name)
		require.True(t, ok, name)
		return st
	}

	t.Run("ttl", func(t *testing.T) {
		past := now().Add(-time.Second)
		gone := amqp.NewMessage([]byte("gone"))
		gone.Properties = &amqp.MessageProperties{AbsoluteExpiryTime: &past}
		short := amqp.NewMessage([]byte("short"))
		short.Header = &amqp.MessageHeader{Priority: 4, TTL: time.Second}
		send(t, "ttl", gone, short, amqp.NewMessage([]byte("kept")))
		advance(2 * time.Second)
		st := stats(t, "ttl")
		require.Equal(t, uint64(2), st.Expired)
		require.Equal(t, 1, st.Depth)
		require.Equal(t, "kept", string(receive(t, receiver(t, "ttl")).GetData()))
		x := receiver(t, "expired")
		for _, want := range []string{"gone", "short"} {
			m := receive(t, x)
			require.Equal(t, want, string(m.GetData()))
			require.Equal(t, broker.ReasonExpired, m.Annotations[broker.AnnotationDeadLetterReason])
			require.Equal(t, "ttl", m.Annotations[broker.AnnotationOriginalAddress])
		}
	})

	t.Run("max delivery count", func(t *testing.T) {
		send(t, "work", amqp.NewMessage([]byte("poison")))
		r := receiver(t, "work")
		for i := range 3 {
			m, err := r.Receive(ctx, nil)
			require.NoError(t, err)
			if i > 0 { // the broker wrote a header with the count
				require.Equal(t, uint32(i), m.Header.DeliveryCount)
			}
			require.NoError(t, r.ModifyMessage(ctx, m, &amqp.ModifyMessageOptions{DeliveryFailed: true,
				Annotations: amqp.Annotations{"x-opt-attempt": int64(i)}}))
		}
		m := receive(t, receiver(t, "dlq"))
		require.Equal(t, "poison", string(m.GetData()))
		require.Equal(t, uint32(3), m.Header.DeliveryCount)
		require.Equal(t, broker.ReasonMaxDeliveryCount, m.Annotations[broker.AnnotationDeadLetterReason])
		require.Equal(t, int64(2), m.Annotations["x-opt-attempt"], "the modified outcome's annotations kept")
		require.Equal(t, uint64(1), stats(t, "work").DeadLettered)
	})

	t.Run("priority", func(t *testing.T) {
		var ms []*amqp.Message
		for i, p := range []uint8{0, 9, 4, 9, 1, 7} {
			m := amqp.NewMessage([]byte{'a' + byte(i)})
			m.Header = &amqp.MessageHeader{Priority: p}
			ms = append(ms, m)
		}
		send(t, "prio", ms...)
		r := receiver(t, "prio")
		var got string
		for range ms {
			got += string(receive(t, r).GetData())
		}
		require.Equal(t, "bdfcea", got, "9, 9, 7, 4, 1, 0; in order within a priority")
	})

	t.Run("scheduled", func(t *testing.T) {
		at := amqp.NewMessage([]byte("at"))
		at.Annotations = amqp.Annotations{broker.AnnotationDeliveryTime: now().Add(time.Minute)}
		sb := amqp.NewMessage([]byte("service-bus"))
		sb.Annotations = amqp.Annotations{broker.AnnotationScheduledEnqueueTime: now().Add(2 * time.Minute)}
		delay := amqp.NewMessage([]byte("delayed"))
		delay.Annotations = amqp.Annotations{broker.AnnotationDeliveryDelay: int64(3 * time.Minute / time.Millisecond)}
		send(t, "later", delay, sb, at)
		require.Equal(t, 3, stats(t, "later").Scheduled)
		r := receiver(t, "later")
		for _, want := range []string{"at", "service-bus", "delayed"} {
			advance(time.Minute)
			stats(t, "later") // what is due is made visible, the receiver woken
			require.Equal(t, want, string(receive(t, r).GetData()))
		}
	})
}

// TestPackageBrokerLifetimeProton runs Qpid Proton's python client
// (proton/broker_lifetime.py) against package broker's message
// lifetimes: an expired message never delivered, priorities, a message
// dead-lettered after MaxDeliveryCount failed deliveries, a delayed one
// delivered by the broker's timer.
func TestPackageBrokerLifetimeProton(t *testing.T) {
	if err := exec.Command(python, "-c", "import proton").Run(); err != nil {
		skip(t, "Debian's python3-qpid-proton is not installed for %s", python)
	}
	srv := amqptest.NewServer(t, &broker.Options{MaxDeliveryCount: 2, DeadLetterAddress: "dlq"})
	cmd := exec.Command(python, "proton/broker_lifetime.py")
	cmd.Env = append(os.Environ(), "AMQP_ADDR="+srv.Addr)
	out, err := cmd.CombinedOutput()
	t.Log(string(out))
	require.NoError(t, err, "the proton client failed")
	st, ok := srv.Queue("ttl")
	require.True(t, ok)
	require.Equal(t, uint64(1), st.Expired)
	st, ok = srv.Queue("work")
	require.True(t, ok)
	require.Equal(t, uint64(1), st.DeadLettered)
	st, ok = srv.Queue("later")
	require.True(t, ok)
	require.Zero(t, st.Scheduled)
	require.Equal(t, uint64(1), st.Delivered)
}
