package broker_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/require"
)

func msgs(prefix string, n int) [][]byte {
	var out [][]byte
	for i := range n {
		out = append(out, data(fmt.Sprint(prefix, i)))
	}
	return out
}

func deliveryCount(t *testing.T, payload []byte) uint32 {
	t.Helper()
	s, err := message.Scan(payload)
	require.NoError(t, err)
	if s.Header == nil {
		return 0
	}
	h, err := message.ParseHeader(s.Header)
	require.NoError(t, err)
	return h.DeliveryCount
}

// bare returns the bare message: what the broker must not change.
func bare(t *testing.T, payload []byte) string {
	t.Helper()
	s, err := message.Scan(payload)
	require.NoError(t, err)
	return string(s.Bare)
}

func TestQueueInOrder(t *testing.T) {
	addr, b := start(t, broker.Options{})
	c := dial(t, addr, engine.Config{}, nil)
	snd := c.sender("q")
	in := msgs("m", 100)
	snd.send(in...)
	for range in {
		require.Equal(t, frame.StateAccepted, snd.outcome().Type)
	}
	st, ok := b.Queue("q")
	require.True(t, ok)
	require.Equal(t, 100, st.Depth)
	require.Equal(t, uint64(100), st.Enqueued)
	require.Equal(t, 1, st.Producers)
	require.Greater(t, st.EnqueueRate, 0.0, "messages stored since the node was made")

	rcv := c.receiver("q")
	rcv.flow(1000)
	for i := range in {
		d := rcv.next()
		require.Equal(t, string(in[i]), string(d.payload), "message %d", i)
		rcv.dispose(d.id, engine.Accepted)
	}
	eventually(t, "all accepted", func() bool { st, _ := b.Queue("q"); return st.Accepted == 100 })
	st, _ = b.Queue("q")
	require.Equal(t, 0, st.Depth)
	require.Equal(t, int64(0), st.Bytes)
	require.Equal(t, 0, st.Unsettled)
	require.Equal(t, 1, st.Consumers)
}

// TestCompetingConsumers: two consumers on one queue share its messages,
// each message reaching one of them.
func TestCompetingConsumers(t *testing.T) {
	addr, _ := start(t, broker.Options{})
	c1 := dial(t, addr, engine.Config{}, nil)
	c2 := dial(t, addr, engine.Config{}, nil)
	r1, r2 := c1.receiver("work"), c2.receiver("work")
	r1.flow(10)
	r2.flow(10)
	p := dial(t, addr, engine.Config{}, nil).sender("work")
	p.send(msgs("w", 20)...)
	seen := map[string]int{}
	for range 10 {
		d1, d2 := r1.next(), r2.next()
		seen[string(d1.payload)]++
		seen[string(d2.payload)]++
		r1.dispose(d1.id, engine.Accepted)
		r2.dispose(d2.id, engine.Accepted)
	}
	require.Len(t, seen, 20)
	r1.none()
	r2.none()
}

// TestFlowControl: a queue at its bound withholds credit; the producer
// waits, then resumes as a consumer drains the queue, and nothing is
// rejected.
func TestFlowControl(t *testing.T) {
	const bound, credit, total = 20, 4, 200
	addr, b := start(t, broker.Options{MaxMessages: bound, Credit: credit})
	c := dial(t, addr, engine.Config{}, nil)
	snd := c.sender("fc")
	snd.send(msgs("f", total)...)
	eventually(t, "the producer blocked", func() bool {
		st, _ := b.Queue("fc")
		return st.Blocked == 1 && snd.credit() == 0
	})
	st, _ := b.Queue("fc")
	require.LessOrEqual(t, st.Depth, bound+credit, "the queue holds its bound plus the credit granted before it filled")
	require.GreaterOrEqual(t, st.Depth, bound)
	require.Less(t, snd.sent.Load(), int64(total))

	rcv := dial(t, addr, engine.Config{}, nil).receiver("fc")
	rcv.flow(5)
	for i := range total {
		d := rcv.next()
		require.Equal(t, fmt.Sprint("f", i), string(d.payload[5:]))
		rcv.dispose(d.id, engine.Accepted)
		if i%5 == 4 {
			rcv.flow(5)
		}
		st, _ := b.Queue("fc")
		require.LessOrEqual(t, st.Depth+st.Unsettled, bound+credit)
	}
	for range total {
		require.Equal(t, frame.StateAccepted, snd.outcome().Type)
	}
	eventually(t, "all accepted", func() bool { st, _ := b.Queue("fc"); return st.Accepted == total })
	st, _ = b.Queue("fc")
	require.Equal(t, uint64(0), st.Refused)
}

// TestFlowControlBytes: the bound in bytes holds producers back too.
func TestFlowControlBytes(t *testing.T) {
	body := strings.Repeat("x", 1000)
	addr, b := start(t, broker.Options{MaxBytes: 10_000, Credit: 100})
	c := dial(t, addr, engine.Config{}, nil)
	snd := c.sender("fb")
	var in [][]byte
	for range 100 {
		in = append(in, data(body))
	}
	snd.send(in...)
	eventually(t, "the producer blocked", func() bool { st, _ := b.Queue("fb"); return st.Blocked == 1 })
	st, _ := b.Queue("fb")
	require.Less(t, st.Bytes, int64(20_000), "credit shrinks with the room left in bytes")
	require.GreaterOrEqual(t, st.Bytes, int64(10_000))
}

// TestRejectWhenFull: asked to, a full queue rejects with
// amqp:resource-limit-exceeded.
func TestRejectWhenFull(t *testing.T) {
	addr, b := start(t, broker.Options{MaxMessages: 5, RejectWhenFull: true})
	snd := dial(t, addr, engine.Config{}, nil).sender("rj")
	snd.send(msgs("r", 8)...)
	var acc, rej int
	for range 8 {
		o := snd.outcome()
		switch o.Type {
		case frame.StateAccepted:
			acc++
		case frame.StateRejected:
			rej++
			require.Equal(t, frame.CondResourceLimitExceeded.Symbol(), string(o.Error.Condition))
		}
	}
	require.Equal(t, 5, acc)
	require.Equal(t, 3, rej)
	st, _ := b.Queue("rj")
	require.Equal(t, uint64(3), st.Refused)
}

// TestOutcomes: released comes back as it was, modified with
// delivery-failed comes back with delivery-count one up, rejected is
// dropped, and the bare message never changes.
func TestOutcomes(t *testing.T) {
	addr, b := start(t, broker.Options{})
	c := dial(t, addr, engine.Config{}, nil)
	snd := c.sender("o")
	in := data("payload")
	snd.send(in)
	require.Equal(t, frame.StateAccepted, snd.outcome().Type)
	rcv := c.receiver("o")
	rcv.flow(100)

	d := rcv.next()
	require.Equal(t, uint32(0), deliveryCount(t, d.payload))
	rcv.dispose(d.id, engine.Released)
	d = rcv.next()
	require.Equal(t, string(in), string(d.payload), "released: sent again as it was")

	rcv.dispose(d.id, frame.DeliveryState{Type: frame.StateModified, DeliveryFailed: true})
	d = rcv.next()
	require.Equal(t, uint32(1), deliveryCount(t, d.payload))
	require.Equal(t, bare(t, in), bare(t, d.payload))

	rcv.dispose(d.id, frame.DeliveryState{Type: frame.StateModified, DeliveryFailed: true})
	d = rcv.next()
	require.Equal(t, uint32(2), deliveryCount(t, d.payload))

	rcv.dispose(d.id, frame.DeliveryState{Type: frame.StateModified}) // not failed: count unchanged
	d = rcv.next()
	require.Equal(t, uint32(2), deliveryCount(t, d.payload))

	rcv.dispose(d.id, frame.DeliveryState{Type: frame.StateRejected})
	eventually(t, "rejected", func() bool { st, _ := b.Queue("o"); return st.Rejected == 1 })
	rcv.none()
	st, _ := b.Queue("o")
	require.Equal(t, 0, st.Depth)
	require.Equal(t, 0, st.Unsettled)
	require.Equal(t, int64(0), st.Bytes)
	require.Equal(t, uint64(1), st.Released)
	require.Equal(t, uint64(3), st.Modified)
	require.Equal(t, uint64(4), st.Redelivered)
}

// TestUndeliverableHere: a message modified undeliverable-here goes to
// another consumer, never back to the one that refused it.
func TestUndeliverableHere(t *testing.T) {
	addr, _ := start(t, broker.Options{})
	c := dial(t, addr, engine.Config{}, nil)
	c.sender("u").send(data("x"))
	r1 := c.receiver("u")
	r1.flow(10)
	d := r1.next()
	r1.dispose(d.id, frame.DeliveryState{Type: frame.StateModified, UndeliverableHere: true})
	r2 := dial(t, addr, engine.Config{}, nil).receiver("u")
	r2.flow(10)
	d2 := r2.next()
	require.Equal(t, string(d.payload), string(d2.payload))
	r1.none()
}

// TestRedeliveryOnDetach: the unsettled messages of a consumer that
// goes come back, in order, with delivery-count one up, to the next
// consumer; the settled ones do not.
func TestRedeliveryOnDetach(t *testing.T) {
	addr, _ := start(t, broker.Options{})
	p := dial(t, addr, engine.Config{}, nil).sender("rd")
	p.send(msgs("d", 10)...)
	c1 := dial(t, addr, engine.Config{}, nil)
	r1 := c1.receiver("rd")
	r1.flow(10)
	for i := range 10 {
		d := r1.next()
		if i < 4 {
			r1.dispose(d.id, engine.Accepted)
		}
	}
	r1.detach()
	r2 := dial(t, addr, engine.Config{}, nil).receiver("rd")
	r2.flow(10)
	for i := 4; i < 10; i++ {
		d := r2.next()
		require.Equal(t, string(data(fmt.Sprint("d", i))), bare(t, d.payload))
		require.Equal(t, uint32(1), deliveryCount(t, d.payload))
	}
	r2.none()
}

// TestRedeliveryOnConnectionLoss: the same when the consumer's socket
// closes under it.
func TestRedeliveryOnConnectionLoss(t *testing.T) {
	addr, b := start(t, broker.Options{})
	dial(t, addr, engine.Config{}, nil).sender("cl").send(msgs("c", 5)...)
	c1 := dial(t, addr, engine.Config{}, nil)
	r1 := c1.receiver("cl")
	r1.flow(5)
	for range 5 {
		r1.next()
	}
	c1.d.NetConn().Close()
	eventually(t, "the consumer gone", func() bool { st, _ := b.Queue("cl"); return st.Consumers == 0 })
	r2 := dial(t, addr, engine.Config{}, nil).receiver("cl")
	r2.flow(5)
	for i := range 5 {
		d := r2.next()
		require.Equal(t, string(data(fmt.Sprint("c", i))), bare(t, d.payload))
	}
}

// TestPresettledConsumer: a consumer in snd-settle-mode settled gets
// messages settled, and they are gone at once.
func TestPresettledConsumer(t *testing.T) {
	addr, b := start(t, broker.Options{})
	c := dial(t, addr, engine.Config{}, nil)
	c.sender("ps").send(msgs("p", 3)...)
	rcv := c.attach(false, engine.LinkOptions{Address: "ps", Presettled: true})
	rcv.flow(10)
	for range 3 {
		require.True(t, rcv.next().settled)
	}
	eventually(t, "settled", func() bool { st, _ := b.Queue("ps"); return st.Delivered == 3 && st.Unsettled == 0 })
	st, _ := b.Queue("ps")
	require.Equal(t, int64(0), st.Bytes)
}

// TestRcvSettleModeSecond: a consumer in receiver settle mode second
// gets the broker's settlement after its outcome; a producer in that
// mode gets the broker's outcome unsettled and settles it.
func TestRcvSettleModeSecond(t *testing.T) {
	addr, b := start(t, broker.Options{})
	c := dial(t, addr, engine.Config{}, nil)
	snd := c.attach(true, engine.LinkOptions{Address: "s2", Unsettled: true, RcvSecond: true})
	snd.send(data("two"))
	require.Equal(t, frame.StateAccepted, snd.outcome().Type)
	rcv := c.attach(false, engine.LinkOptions{Address: "s2", RcvSecond: true})
	rcv.flow(1)
	d := rcv.next()
	rcv.dispose(d.id, engine.Accepted)
	select {
	case id := <-rcv.settles:
		require.Equal(t, d.id, id)
	case <-timeAfter():
		t.Fatal("the broker did not settle")
	}
	eventually(t, "accepted", func() bool { st, _ := b.Queue("s2"); return st.Accepted == 1 })
}

// TestFanout: every consumer of a fan-out address gets every message.
func TestFanout(t *testing.T) {
	addr, b := start(t, broker.Options{FanoutPrefixes: []string{"topic/"}})
	var rs []*tlink
	for range 3 {
		r := dial(t, addr, engine.Config{}, nil).receiver("topic/news")
		r.flow(100)
		rs = append(rs, r)
	}
	// a consumer asking for copies makes a fan-out node of another address
	rc := dial(t, addr, engine.Config{}, nil).attach(false,
		engine.LinkOptions{Source: &frame.Source{Address: []byte("events"), DistributionMode: []byte("copy")}})
	rc.flow(100)
	rc2 := dial(t, addr, engine.Config{}, nil).receiver("events")
	rc2.flow(100)

	p := dial(t, addr, engine.Config{}, nil)
	p.sender("topic/news").send(msgs("n", 10)...)
	p.sender("events").send(msgs("e", 5)...)
	for _, r := range rs {
		for i := range 10 {
			d := r.next()
			require.Equal(t, string(data(fmt.Sprint("n", i))), string(d.payload))
			r.dispose(d.id, engine.Accepted)
		}
	}
	for _, r := range []*tlink{rc, rc2} {
		for i := range 5 {
			require.Equal(t, string(data(fmt.Sprint("e", i))), string(r.next().payload))
		}
	}
	st, _ := b.Queue("topic/news")
	require.True(t, st.Fanout)
	require.Equal(t, 3, st.Consumers)
	require.Equal(t, uint64(10), st.Enqueued)
	eventually(t, "all accepted", func() bool { st, _ := b.Queue("topic/news"); return st.Accepted == 30 && st.Bytes == 0 })
}

// TestDynamicReplyQueue: a dynamic source gets an address in the
// attach's answer; a message sent there reaches it; the node goes with
// the link.
func TestDynamicReplyQueue(t *testing.T) {
	addr, b := start(t, broker.Options{})
	c := dial(t, addr, engine.Config{}, nil)
	rcv := c.attach(false, engine.LinkOptions{Source: &frame.Source{Dynamic: true}})
	var reply string
	c.do(func() { reply = string(rcv.l.RemoteSource().Address) })
	require.True(t, strings.HasPrefix(reply, "amqpsax.dynamic."), "address %q", reply)
	st, ok := b.Queue(reply)
	require.True(t, ok)
	require.True(t, st.Dynamic)

	other := dial(t, addr, engine.Config{}, nil)
	snd := other.sender(reply)
	snd.send(data("reply"))
	require.Equal(t, frame.StateAccepted, snd.outcome().Type)
	rcv.flow(1)
	require.Equal(t, string(data("reply")), string(rcv.next().payload))

	// a second dynamic source gets another address
	rcv2 := c.attach(false, engine.LinkOptions{Source: &frame.Source{Dynamic: true}})
	var reply2 string
	c.do(func() { reply2 = string(rcv2.l.RemoteSource().Address) })
	require.NotEqual(t, reply, reply2)

	rcv.detach()
	_, ok = b.Queue(reply)
	require.False(t, ok, "the dynamic node goes with its link")
	select {
	case err := <-snd.detached:
		t.Fatalf("producer detached before it sent: %v", err)
	default:
	}
	snd.send(data("late"))
	select {
	case err := <-snd.detached:
		require.NotNil(t, err)
		require.Equal(t, frame.CondResourceDeleted, err.Condition)
	case <-timeAfter():
		t.Fatal("the producer to a removed node was not detached")
	}
}

// TestDynamicTarget: a dynamic target is a temporary queue too, consumed
// by its connection alone.
func TestDynamicTarget(t *testing.T) {
	addr, b := start(t, broker.Options{})
	c := dial(t, addr, engine.Config{}, nil)
	snd := c.attach(true, engine.LinkOptions{Target: &frame.Target{Dynamic: true}, Unsettled: true})
	var a string
	c.do(func() { a = string(snd.l.RemoteTarget().Address) })
	require.True(t, strings.HasPrefix(a, "amqpsax.dynamic."), "address %q", a)
	snd.send(data("t"))
	require.Equal(t, frame.StateAccepted, snd.outcome().Type)
	rcv := c.receiver(a)
	rcv.flow(1)
	require.Equal(t, string(data("t")), string(rcv.next().payload))
	snd.detach()
	_, ok := b.Queue(a)
	require.False(t, ok)
}

// TestNoAddress: a link with no address that is not dynamic is refused.
func TestNoAddress(t *testing.T) {
	addr, _ := start(t, broker.Options{})
	c := dial(t, addr, engine.Config{}, nil)
	r := c.attach(false, engine.LinkOptions{})
	select {
	case err := <-r.detached:
		require.NotNil(t, err)
		require.Equal(t, frame.CondInvalidField, err.Condition)
	case <-timeAfter():
		t.Fatal("not refused")
	}
}

// TestAutoDelete: with AutoDelete, a queue goes once unused; without,
// it stays.
func TestAutoDelete(t *testing.T) {
	for _, auto := range []bool{false, true} {
		addr, b := start(t, broker.Options{AutoDelete: auto})
		c := dial(t, addr, engine.Config{}, nil)
		snd := c.sender("ad")
		snd.send(data("a"))
		snd.outcome()
		snd.detach()
		_, ok := b.Queue("ad")
		require.True(t, ok, "a queue with a message stays")
		rcv := c.receiver("ad")
		rcv.flow(1)
		d := rcv.next()
		rcv.dispose(d.id, engine.Accepted)
		eventually(t, "accepted", func() bool { st, _ := b.Queue("ad"); return st.Accepted == 1 })
		rcv.detach()
		_, ok = b.Queue("ad")
		require.Equal(t, !auto, ok, "AutoDelete %v", auto)
	}
}

// TestRouting: an application property sends a message to the node it
// names.
func TestRouting(t *testing.T) {
	addr, _ := start(t, broker.Options{RouteKey: "to"})
	c := dial(t, addr, engine.Config{}, nil)
	snd := c.sender("in")
	routed := routedMessage("elsewhere", "hello")
	snd.send(routed, data("stays"))
	snd.outcome()
	snd.outcome()
	r := c.receiver("elsewhere")
	r.flow(10)
	require.Equal(t, string(routed), string(r.next().payload))
	r.none()
	r2 := c.receiver("in")
	r2.flow(10)
	require.Equal(t, string(data("stays")), string(r2.next().payload))
}

// TestDynamicClaim: a peer that names another's dynamic node with
// dynamic set does not own it: its detach leaves the node alone.
func TestDynamicClaim(t *testing.T) {
	addr, b := start(t, broker.Options{})
	c := dial(t, addr, engine.Config{}, nil)
	owner := c.attach(false, engine.LinkOptions{Source: &frame.Source{Dynamic: true}})
	var a string
	c.do(func() { a = string(owner.l.RemoteSource().Address) })
	other := dial(t, addr, engine.Config{}, nil)
	claim := other.attach(false, engine.LinkOptions{Source: &frame.Source{Dynamic: true, Address: []byte(a)}})
	claim.detach()
	st, ok := b.Queue(a)
	require.True(t, ok, "the node stays with its owner")
	require.Equal(t, 1, st.Consumers)
	owner.detach()
	_, ok = b.Queue(a)
	require.False(t, ok)
}

// TestMaxQueues: past its bound in nodes the broker refuses a link to a
// new address, and rejects a message routed to one; known ones still
// work.
func TestMaxQueues(t *testing.T) {
	addr, b := start(t, broker.Options{MaxQueues: 2, RouteKey: "to"})
	c := dial(t, addr, engine.Config{}, nil)
	c.sender("a")
	snd := c.sender("b")
	r := c.attach(false, engine.LinkOptions{Address: "c"})
	select {
	case err := <-r.detached:
		require.NotNil(t, err)
		require.Equal(t, frame.CondResourceLimitExceeded, err.Condition)
	case <-timeAfter():
		t.Fatal("a third queue was not refused")
	}
	snd.send(routedMessage("elsewhere", "x"), routedMessage("a", "y"))
	require.Equal(t, frame.StateRejected, snd.outcome().Type)
	require.Equal(t, frame.StateAccepted, snd.outcome().Type)
	require.Len(t, b.Queues(), 2)
}

// TestDrainedConsumerPassesWake: a consumer whose credit a drain used up
// is still marked as waiting; the message that wakes it goes on to a
// consumer with credit.
func TestDrainedConsumerPassesWake(t *testing.T) {
	addr, _ := start(t, broker.Options{})
	c1 := dial(t, addr, engine.Config{}, nil)
	r1 := c1.receiver("dr")
	r1.flow(10)
	c1.do(func() { r1.l.DrainCredit() })
	eventually(t, "the drain answered", func() bool { return r1.credit() == 0 })
	r2 := dial(t, addr, engine.Config{}, nil).receiver("dr")
	r2.flow(10)
	p := dial(t, addr, engine.Config{}, nil).sender("dr")
	p.send(data("one")) // one message: it wakes r1 first, whose turn it is
	for range 1 {
		d := r2.next()
		r2.dispose(d.id, engine.Accepted)
	}
	r1.none()
}
