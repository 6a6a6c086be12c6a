package broker_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/require"
)

// Message lifetimes through package client: time-to-live, dead-letter
// addresses, priorities, scheduled delivery and the modified outcome's
// annotations. Time is a fake clock (Options.Now) that the tests move;
// nothing waits for the wall clock.

// clock is a fake Options.Now.
type clock struct{ ms atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ms.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	return c
}

func (c *clock) now() time.Time           { return time.UnixMilli(c.ms.Load()) }
func (c *clock) add(d time.Duration)      { c.ms.Add(d.Milliseconds()) }
func (c *clock) at(d time.Duration) int64 { return c.ms.Load() + d.Milliseconds() }

// lifeSession starts a broker with o and returns a client session to it.
func lifeSession(t *testing.T, o broker.Options) (*broker.Broker, *client.Session, context.Context) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	b := broker.New(o)
	go b.Serve(ln)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(func() { cancel(); b.Close() })
	c, err := client.Dial(ctx, "amqp://"+ln.Addr().String(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	return b, s, ctx
}

// body is a message whose body is s, with header h (nil: none).
func body(s string, h *message.Header) *message.Message {
	return &message.Message{Header: h, Body: message.Body{Kind: message.BodyData, Data: [][]byte{[]byte(s)}}}
}

func send(t *testing.T, ctx context.Context, s *client.Session, addr string, ms ...*message.Message) {
	t.Helper()
	snd, err := s.NewSender(ctx, addr, nil)
	require.NoError(t, err)
	for _, m := range ms {
		require.NoError(t, snd.Send(ctx, m, nil))
	}
	require.NoError(t, snd.Close(ctx))
}

func receiver(t *testing.T, ctx context.Context, s *client.Session, addr string) *client.Receiver {
	t.Helper()
	r, err := s.NewReceiver(ctx, addr, &client.ReceiverOptions{Credit: 10})
	require.NoError(t, err)
	return r
}

func recv(t *testing.T, ctx context.Context, r *client.Receiver) *client.Delivery {
	t.Helper()
	d, err := r.Receive(ctx, nil)
	require.NoError(t, err)
	return d
}

// count is d's header's delivery-count.
func count(d *client.Delivery) uint32 {
	if d.Message.Header == nil {
		return 0
	}
	return d.Message.Header.DeliveryCount
}

func bodyOf(d *client.Delivery) string { return string(d.Message.Body.Data[0]) }

func annotation(d *client.Delivery, key string) string {
	return string(d.Message.MessageAnnotations.Get(key).Bytes())
}

// settled returns the statistics of node name once the outcomes sent
// to it have come (nothing unsettled).
func settled(t *testing.T, b *broker.Broker, name string) broker.QueueStats {
	t.Helper()
	var st broker.QueueStats
	require.Eventually(t, func() bool {
		st = stats(t, b, name)
		return st.Unsettled == 0
	}, wait, time.Millisecond)
	return st
}

func stats(t *testing.T, b *broker.Broker, name string) broker.QueueStats {
	t.Helper()
	st, ok := b.Queue(name)
	require.True(t, ok, name)
	return st
}

// A message whose ttl (or absolute-expiry-time) has passed is never
// delivered: counted in Expired, moved to the expiry address.
func TestExpiry(t *testing.T) {
	clk := newClock()
	b, s, ctx := lifeSession(t, broker.Options{Now: clk.now, ExpiryAddress: "expired"})
	abs := body("absolute", nil)
	abs.Properties = &message.Properties{}
	abs.Properties.AbsoluteExpiryTime, abs.Properties.HasAbsoluteExpiryTime = clk.at(500*time.Millisecond), true
	send(t, ctx, s, "q",
		body("short", &message.Header{Priority: 4, TTL: 1000, HasTTL: true}),
		abs,
		body("long", &message.Header{Priority: 4, TTL: 60_000, HasTTL: true}),
		body("forever", nil))
	st := stats(t, b, "q")
	require.Equal(t, 4, st.Depth)
	require.Zero(t, st.Expired)

	clk.add(2 * time.Second)
	st = stats(t, b, "q") // expires what is at the front
	require.Equal(t, uint64(2), st.Expired)
	require.Equal(t, uint64(2), st.DeadLettered)
	require.Equal(t, 2, st.Depth)

	r := receiver(t, ctx, s, "q")
	for _, want := range []string{"long", "forever"} {
		d := recv(t, ctx, r)
		require.Equal(t, want, bodyOf(d))
		require.NoError(t, d.Accept(ctx))
	}
	x := receiver(t, ctx, s, "expired")
	for _, want := range []string{"short", "absolute"} {
		d := recv(t, ctx, x)
		require.Equal(t, want, bodyOf(d))
		require.Equal(t, broker.ReasonExpired, annotation(d, broker.AnnotationDeadLetterReason))
		require.Equal(t, "q", annotation(d, broker.AnnotationOriginalAddress))
		require.NoError(t, d.Accept(ctx))
	}

	// Expired when a consumer comes to take it.
	send(t, ctx, s, "q2", body("late", &message.Header{Priority: 4, TTL: 1, HasTTL: true}), body("next", nil))
	clk.add(time.Second)
	d := recv(t, ctx, receiver(t, ctx, s, "q2"))
	require.Equal(t, "next", bodyOf(d))
	require.NoError(t, d.Accept(ctx))
	st = settled(t, b, "q2")
	require.Equal(t, uint64(1), st.Expired)
	require.Equal(t, uint64(1), st.Delivered)
}

// An expired message with no expiry address is dropped; one that comes
// expired is never stored.
func TestExpiryDrops(t *testing.T) {
	clk := newClock()
	b, s, ctx := lifeSession(t, broker.Options{Now: clk.now})
	m := body("past", nil)
	m.Properties = &message.Properties{}
	m.Properties.AbsoluteExpiryTime, m.Properties.HasAbsoluteExpiryTime = clk.at(-time.Second), true
	send(t, ctx, s, "q", m, body("ttl", &message.Header{Priority: 4, TTL: 10, HasTTL: true}))
	st := stats(t, b, "q")
	require.Equal(t, uint64(1), st.Expired)
	require.Equal(t, 1, st.Depth)
	clk.add(time.Second)
	st = stats(t, b, "q")
	require.Equal(t, uint64(2), st.Expired)
	require.Zero(t, st.DeadLettered)
	require.Zero(t, st.Depth)
	require.Zero(t, st.Bytes)
	require.Len(t, b.Queues(), 1, "no expiry node made")
}

// A rejected message goes to the dead-letter address with its error's
// condition and description; one that fails MaxDeliveryCount times
// goes there too.
func TestDeadLetter(t *testing.T) {
	b, s, ctx := lifeSession(t, broker.Options{DeadLetterAddress: "dlq", MaxDeliveryCount: 2})
	send(t, ctx, s, "q", body("bad", nil), body("flaky", nil))
	r := receiver(t, ctx, s, "q")
	d := recv(t, ctx, r)
	require.Equal(t, "bad", bodyOf(d))
	require.NoError(t, d.Reject(ctx, &client.Error{Condition: "app:invalid", Description: "no such order"}))

	for i := range 2 {
		d = recv(t, ctx, r)
		require.Equal(t, "flaky", bodyOf(d))
		require.Equal(t, uint32(i), count(d))
		require.NoError(t, d.Modify(ctx, client.ModifyOptions{DeliveryFailed: true}))
	}

	dl := receiver(t, ctx, s, "dlq")
	d = recv(t, ctx, dl)
	require.Equal(t, "bad", bodyOf(d))
	require.Equal(t, "app:invalid", annotation(d, broker.AnnotationDeadLetterReason))
	require.Equal(t, "no such order", annotation(d, broker.AnnotationDeadLetterDescription))
	require.Equal(t, "q", annotation(d, broker.AnnotationOriginalAddress))
	require.NoError(t, d.Accept(ctx))
	d = recv(t, ctx, dl)
	require.Equal(t, "flaky", bodyOf(d))
	require.Equal(t, broker.ReasonMaxDeliveryCount, annotation(d, broker.AnnotationDeadLetterReason))
	require.Equal(t, uint32(2), count(d))
	require.NoError(t, d.Accept(ctx))

	st := settled(t, b, "q")
	require.Equal(t, uint64(2), st.DeadLettered)
	require.Equal(t, uint64(1), st.Rejected)
	require.Equal(t, uint64(2), st.Modified)
	require.Zero(t, st.Depth)
	require.Zero(t, st.Unsettled)
	require.Equal(t, uint64(2), stats(t, b, "dlq").Enqueued)

	// A message rejected on the dead-letter node itself is dropped.
	send(t, ctx, s, "dlq", body("again", nil))
	d = recv(t, ctx, dl)
	require.NoError(t, d.Reject(ctx, nil))
	st = settled(t, b, "dlq")
	require.Equal(t, uint64(1), st.Dropped)
	require.Zero(t, st.Depth)
}

// Without a dead-letter address, rejected messages and those past
// MaxDeliveryCount are dropped.
func TestDeadLetterNone(t *testing.T) {
	b, s, ctx := lifeSession(t, broker.Options{MaxDeliveryCount: 1})
	send(t, ctx, s, "q", body("a", nil), body("b", nil))
	r := receiver(t, ctx, s, "q")
	require.NoError(t, recv(t, ctx, r).Reject(ctx, nil))
	require.NoError(t, recv(t, ctx, r).Modify(ctx, client.ModifyOptions{DeliveryFailed: true}))
	st := settled(t, b, "q")
	require.Equal(t, uint64(1), st.Dropped)
	require.Zero(t, st.DeadLettered)
	require.Zero(t, st.Depth+st.Unsettled)
	require.Len(t, b.Queues(), 1)
}

// Messages are delivered highest priority first, in the order they came
// within a priority.
func TestPriority(t *testing.T) {
	b, s, ctx := lifeSession(t, broker.Options{})
	var ms []*message.Message
	for _, p := range []struct {
		body string
		prio uint8
	}{{"low", 1}, {"top1", 9}, {"default", 4}, {"top2", 9}, {"zero", 0}, {"over", 200}} {
		ms = append(ms, body(p.body, &message.Header{Priority: p.prio}))
	}
	ms = append(ms, body("none", nil)) // 4
	send(t, ctx, s, "q", ms...)
	require.Equal(t, 7, stats(t, b, "q").Depth)
	r := receiver(t, ctx, s, "q")
	var got []string
	for range 7 {
		d := recv(t, ctx, r)
		got = append(got, bodyOf(d))
		require.NoError(t, d.Accept(ctx))
	}
	require.Equal(t, []string{"top1", "top2", "over", "default", "none", "low", "zero"}, got)
}

// A scheduled message is held until its time, counted as Scheduled,
// then delivered; the three annotations real clients send are read.
func TestScheduled(t *testing.T) {
	clk := newClock()
	b, s, ctx := lifeSession(t, broker.Options{Now: clk.now})
	var vs message.Values
	delay := body("delayed", nil)
	delay.MessageAnnotations = message.EntriesOf(message.Field{Key: vs.Symbol(broker.AnnotationDeliveryDelay), Value: vs.Long(5000)})
	at := body("at", nil)
	at.MessageAnnotations = message.EntriesOf(message.Field{Key: vs.Symbol(broker.AnnotationDeliveryTime), Value: vs.Long(clk.at(3 * time.Second))})
	sb := body("service-bus", nil)
	sb.MessageAnnotations = message.EntriesOf(message.Field{Key: vs.Symbol(broker.AnnotationScheduledEnqueueTime), Value: vs.Timestamp(clk.at(4 * time.Second))})
	past := body("past", nil)
	past.MessageAnnotations = message.EntriesOf(message.Field{Key: vs.Symbol(broker.AnnotationDeliveryTime), Value: vs.Timestamp(clk.at(-time.Second))})
	send(t, ctx, s, "q", delay, at, sb, past)

	st := stats(t, b, "q")
	require.Equal(t, 3, st.Scheduled)
	require.Equal(t, 1, st.Depth)
	require.Equal(t, uint64(4), st.Enqueued)
	r := receiver(t, ctx, s, "q")
	d := recv(t, ctx, r)
	require.Equal(t, "past", bodyOf(d))
	require.NoError(t, d.Accept(ctx))

	for _, step := range []struct {
		by   time.Duration
		want string
	}{{3 * time.Second, "at"}, {time.Second, "service-bus"}, {time.Second, "delayed"}} {
		clk.add(step.by)
		stats(t, b, "q") // makes what is due visible, and wakes the receiver
		d := recv(t, ctx, r)
		require.Equal(t, step.want, bodyOf(d))
		require.NoError(t, d.Accept(ctx))
	}
	st = settled(t, b, "q")
	require.Zero(t, st.Scheduled)
	require.Zero(t, st.Bytes)
}

// A scheduled message's time comes on the broker's own timer, with no
// other activity.
func TestScheduledTimer(t *testing.T) {
	_, s, ctx := lifeSession(t, broker.Options{})
	var vs message.Values
	m := body("soon", nil)
	m.MessageAnnotations = message.EntriesOf(message.Field{Key: vs.Symbol(broker.AnnotationDeliveryDelay), Value: vs.Int(50)})
	r := receiver(t, ctx, s, "q")
	send(t, ctx, s, "q", m)
	d := recv(t, ctx, r)
	require.Equal(t, "soon", bodyOf(d))
	require.NoError(t, d.Accept(ctx))
}

// The modified outcome's message annotations are merged into the
// message delivered again; delivery-failed counts; undeliverable-here
// keeps it from that consumer.
func TestModifiedAnnotations(t *testing.T) {
	_, s, ctx := lifeSession(t, broker.Options{})
	var vs message.Values
	m := body("m", nil)
	m.MessageAnnotations = message.EntriesOf(
		message.Field{Key: vs.Symbol("x-opt-keep"), Value: vs.String("kept")},
		message.Field{Key: vs.Symbol("x-opt-reason"), Value: vs.String("old")})
	send(t, ctx, s, "q", m)
	r := receiver(t, ctx, s, "q")
	d := recv(t, ctx, r)
	require.NoError(t, d.Modify(ctx, client.ModifyOptions{DeliveryFailed: true,
		Annotations: map[string]any{"x-opt-reason": "timeout", "x-opt-retries": int64(1)}}))
	d = recv(t, ctx, r)
	require.Equal(t, "m", bodyOf(d))
	require.Equal(t, uint32(1), count(d))
	require.Equal(t, "kept", annotation(d, "x-opt-keep"))
	require.Equal(t, "timeout", annotation(d, "x-opt-reason"))
	require.Equal(t, int64(1), d.Message.MessageAnnotations.Get("x-opt-retries").Int())

	require.NoError(t, d.Modify(ctx, client.ModifyOptions{UndeliverableHere: true,
		Annotations: map[string]any{"x-opt-reason": "elsewhere"}}))
	other := receiver(t, ctx, s, "q")
	d = recv(t, ctx, other)
	require.Equal(t, "elsewhere", annotation(d, "x-opt-reason"))
	require.Equal(t, uint32(1), count(d), "not failed: not counted")
	require.NoError(t, d.Accept(ctx))
	require.Zero(t, r.Prefetched(), "never sent again to the consumer that called it undeliverable")
}

// DeadLetterAddresses gives single queues a dead-letter address of
// their own, or none.
func TestDeadLetterPerQueue(t *testing.T) {
	b, s, ctx := lifeSession(t, broker.Options{DeadLetterAddress: "dlq",
		DeadLetterAddresses: map[string]string{"orders": "orders/dlq", "noisy": ""}})
	for _, q := range []string{"orders", "noisy", "other"} {
		send(t, ctx, s, q, body(q, nil))
		require.NoError(t, recv(t, ctx, receiver(t, ctx, s, q)).Reject(ctx, nil))
	}
	d := recv(t, ctx, receiver(t, ctx, s, "orders/dlq"))
	require.Equal(t, "orders", bodyOf(d))
	require.Equal(t, broker.ReasonRejected, annotation(d, broker.AnnotationDeadLetterReason))
	require.NoError(t, d.Accept(ctx))
	d = recv(t, ctx, receiver(t, ctx, s, "dlq"))
	require.Equal(t, "other", bodyOf(d))
	require.NoError(t, d.Accept(ctx))
	require.Zero(t, settled(t, b, "noisy").DeadLettered)
	require.Equal(t, uint64(1), settled(t, b, "orders").DeadLettered)
	require.Equal(t, uint64(1), settled(t, b, "dlq").Enqueued, "nothing but other's")
}
