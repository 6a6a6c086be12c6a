package client_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/amqptest"
	"github.com/amqpsax/amqpsax/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResumeBroker is the must-hold against package broker
// (amqptest.NewServer): 10,000 unsettled SendAsync of distinct messages
// on a resumable sender, the connection cut in the middle of them
// (after 100,003, 380,001 or 650,007 of the about 760,000 bytes: within
// frames); each Pending.Wait returns nil once, and the queue then holds
// exactly 10,000 messages, each body once, as a Receiver drains it.
func TestResumeBroker(t *testing.T) {
	for _, after := range []int64{100_003, 380_001, 650_007} {
		t.Run("cut="+strconv.FormatInt(after, 10), func(t *testing.T) { resumeBroker(t, after) })
	}
}

func resumeBroker(t *testing.T, after int64) {
	const n = 10000
	srv := amqptest.NewServer(t, nil)
	ctx := testCtx(t)
	d := &cutDialer{after: after}
	_, snd := dialDurable(t, ctx, srv.Addr, d)
	sendAllOnce(t, ctx, snd, d, n)
	q, ok := srv.Queue("orders")
	require.True(t, ok)
	require.Equal(t, n, q.Depth, "the queue holds every message")
	require.Equal(t, uint64(n), q.Enqueued, "none stored twice")

	// Drain it from another connection: each body once.
	c2, err := client.Dial(ctx, srv.URL, nil)
	require.NoError(t, err)
	defer c2.Close()
	s2, err := c2.NewSession(ctx, nil)
	require.NoError(t, err)
	rcv, err := s2.NewReceiver(ctx, "orders", &client.ReceiverOptions{Credit: 500})
	require.NoError(t, err)
	seen := make(map[string]int, n)
	var dl client.Delivery
	for range n {
		require.NoError(t, rcv.ReceiveInto(ctx, &dl, nil))
		seen[string(dl.Message.Body.Data[0])]++
		require.NoError(t, dl.Accept(ctx))
	}
	for i := range n {
		require.Equal(t, 1, seen["message "+strconv.Itoa(i)], "message %d received once", i)
	}
	require.Eventually(t, func() bool { q, _ := srv.Queue("orders"); return q.Depth == 0 && q.Unsettled == 0 },
		10*time.Second, time.Millisecond, "the queue is empty once drained")
	attached, detached := srv.Broker.DurableLinks()
	t.Logf("the broker keeps %d durable links attached, %d detached", attached, detached)
}

// TestResumeReceiverBroker: a resumable receiver against package
// broker's durable subscriptions: of 10 messages it has received six
// (two accepted) and holds four unreceived when the connection is cut;
// it accepts one during the outage (while 10 more are sent) and the
// other three received before the loss after it, and takes the four
// dropped again (Resumed) and the 10 new. The broker counts each of the
// 20 accepted once, the 8 resumed as redelivered; the receiver gets each
// once; the queue ends empty.
func TestResumeReceiverBroker(t *testing.T) {
	srv := amqptest.NewServer(t, nil)
	ctx := testCtx(t)
	c0, err := client.Dial(ctx, srv.URL, nil)
	require.NoError(t, err)
	defer c0.Close()
	s0, err := c0.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s0.NewSender(ctx, "sub", nil)
	require.NoError(t, err)
	for i := range 10 {
		require.NoError(t, snd.Send(ctx, dataMsg("m"+strconv.Itoa(i)), nil))
	}

	d, rcv, before, got := receiveSix(t, ctx, srv.Addr)
	require.Eventually(t, func() bool { q, _ := srv.Queue("sub"); return q.Unsettled == 8 && q.Depth == 0 },
		10*time.Second, time.Millisecond, "two settled, eight sent to the receiver")

	d.cutHeld(t, ctx)
	require.NoError(t, before[2].Accept(ctx), "settled while the connection is down")
	for i := 10; i < 20; i++ { // more while the subscription is detached
		require.NoError(t, snd.Send(ctx, dataMsg("m"+strconv.Itoa(i)), nil))
	}
	close(d.gate)
	resumed := 0
	for range 14 {
		dl, err := rcv.Receive(ctx, nil)
		require.NoError(t, err)
		got[string(dl.Message.Body.Data[0])]++
		if dl.Resumed {
			resumed++
		}
		require.NoError(t, dl.Accept(ctx))
	}
	assert.Equal(t, 4, resumed, "the four dropped unreceived came again, resumed")
	for _, dl := range before[3:] {
		require.NoError(t, dl.Accept(ctx), "received before the loss, settled after it")
	}
	require.Eventually(t, func() bool { q, _ := srv.Queue("sub"); return q.Unsettled == 0 && q.Depth == 0 },
		10*time.Second, time.Millisecond, "every message settled")
	q, _ := srv.Queue("sub")
	assert.Equal(t, uint64(20), q.Accepted, "each accepted once")
	assert.Equal(t, uint64(8), q.Redelivered, "the eight unsettled at the loss resumed")
	for i := range 20 {
		assert.Equal(t, 1, got["m"+strconv.Itoa(i)], "m%d received once", i)
	}
}
