package broker_test

import (
	"fmt"
	"testing"

	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func durableSource(addr string, d frame.TerminusDurability, p frame.ExpiryPolicy) *frame.Source {
	return &frame.Source{Address: []byte(addr), Durable: d, ExpiryPolicy: p}
}

// detachOnly detaches tl without closing it and waits for the answer.
func (tl *tlink) detachOnly() {
	tl.c.t.Helper()
	tl.c.do(func() { tl.l.DetachOnly(nil) })
	select {
	case <-tl.detached:
	case <-timeAfter():
		tl.c.t.Fatal("no detach")
	}
}

// TestDurableSubscription: a durable subscription (unsettled-state,
// expiry never) to a fan-out address takes 10 messages and accepts 4,
// then detaches without closing; 10 more arrive while it is away, kept
// for it; the 6 it had not settled stay acquired. Attached again with
// resume, listing 5 of them (2 it had accepted, its accepts lost), the
// broker settles the 2 with resumed transfers, sends the 3 others again
// resumed, and the one it did not list as a new delivery; then the 10
// kept. Each of the 20 messages is accepted once.
func TestDurableSubscription(t *testing.T) {
	addr, b := start(t, broker.Options{FanoutPrefixes: []string{"topic/"}})
	src := durableSource("topic/a", frame.DurabilityUnsettledState, frame.ExpiryNever)
	c := dial(t, addr, engine.Config{ContainerID: "subscriber"}, nil)
	sub := c.attach(false, engine.LinkOptions{Name: "sub", Source: src})
	p := dial(t, addr, engine.Config{}, nil)
	snd := p.sender("topic/a")
	snd.send(msgs("a", 10)...)
	sub.flow(10)
	first := make([]delivery, 10)
	for i := range first {
		first[i] = sub.next()
		require.Len(t, first[i].tag, 8, "a durable subscription's tags are the broker's numbers")
	}
	for _, d := range first[:4] {
		sub.dispose(d.id, engine.Accepted)
	}
	eventually(t, "4 accepted", func() bool { q, _ := b.Queue("topic/a"); return q.Accepted == 4 })
	sub.detachOnly()
	snd.send(msgs("b", 10)...)
	for range 20 {
		require.Equal(t, frame.StateAccepted, snd.outcome().Type)
	}
	q, _ := b.Queue("topic/a")
	assert.Equal(t, 1, q.Detached)
	assert.Equal(t, 0, q.Consumers)
	assert.Equal(t, 10, q.Depth, "kept for it while it is away")
	assert.Equal(t, 6, q.Unsettled, "still acquired by it")

	var resume []engine.Unsettled
	for i, d := range first[4:9] {
		u := engine.Unsettled{Tag: d.tag}
		if i < 2 {
			u.State = engine.Accepted
		}
		resume = append(resume, u)
	}
	sub = c.attach(false, engine.LinkOptions{Name: "sub", Source: src, Resume: resume})
	sub.flow(100)
	accepted := map[string]int{}
	for _, d := range first[:4] {
		accepted[string(d.payload)]++
	}
	for i := range 2 {
		d := sub.next()
		assert.True(t, d.resumed && d.settled && len(d.payload) == 0, "settled by the broker: %+v", d)
		assert.Equal(t, first[4+i].tag, d.tag)
		accepted[string(first[4+i].payload)]++
	}
	for i := range 3 {
		d := sub.next()
		assert.True(t, d.resumed, "sent again, resumed")
		assert.Equal(t, string(first[6+i].payload), string(d.payload))
		sub.dispose(d.id, engine.Accepted)
		accepted[string(d.payload)]++
	}
	for range 11 { // the one it did not list, then the 10 kept
		d := sub.next()
		assert.False(t, d.resumed)
		sub.dispose(d.id, engine.Accepted)
		accepted[string(d.payload)]++
	}
	sub.none()
	require.Len(t, accepted, 20)
	for m, n := range accepted {
		assert.Equal(t, 1, n, "%q", m)
	}
	eventually(t, "20 accepted", func() bool { q, _ := b.Queue("topic/a"); return q.Accepted == 20 })
	q, _ = b.Queue("topic/a")
	assert.Equal(t, 0, q.Depth)
	assert.Equal(t, 0, q.Unsettled)
	assert.Equal(t, 0, q.Detached)
	assert.Equal(t, 1, q.Consumers)
}

// TestDurableQueueConsumer: a durable consumer of a queue keeps what it
// acquired while it is detached (another consumer does not get it);
// attached again with no resume, it gets them again as new deliveries.
// With expiry link-detach (timeout 0) they go back to the queue at its
// detach.
func TestDurableQueueConsumer(t *testing.T) {
	for _, policy := range []frame.ExpiryPolicy{frame.ExpiryNever, frame.ExpiryLinkDetach} {
		t.Run(policy.String(), func(t *testing.T) {
			addr, b := start(t, broker.Options{})
			src := durableSource("work", frame.DurabilityUnsettledState, policy)
			c := dial(t, addr, engine.Config{ContainerID: "worker"}, nil)
			p := dial(t, addr, engine.Config{}, nil)
			p.sender("work").send(msgs("m", 8)...)
			eventually(t, "8 stored", func() bool { q, _ := b.Queue("work"); return q.Depth == 8 })
			w := c.attach(false, engine.LinkOptions{Name: "w", Source: src})
			w.flow(5)
			var got []string
			for range 5 {
				got = append(got, string(w.next().payload))
			}
			w.detachOnly()
			other := p.receiver("work")
			other.flow(100)
			if policy == frame.ExpiryLinkDetach {
				for range 8 {
					d := other.next()
					other.dispose(d.id, engine.Accepted)
				}
				q, _ := b.Queue("work")
				assert.Zero(t, q.Detached)
				return
			}
			for range 3 {
				d := other.next()
				assert.NotContains(t, got, string(d.payload), "acquired by the detached consumer")
				other.dispose(d.id, engine.Accepted)
			}
			other.none()
			eventually(t, "3 accepted", func() bool { q, _ := b.Queue("work"); return q.Accepted == 3 })
			q, _ := b.Queue("work")
			assert.Equal(t, 1, q.Detached)
			assert.Equal(t, 5, q.Unsettled, "acquired by the detached consumer")
			other.detach() // what it gives back is for w alone
			w = c.attach(false, engine.LinkOptions{Name: "w", Source: src})
			w.flow(10)
			for i := range 5 {
				d := w.next()
				assert.False(t, d.resumed)
				assert.Equal(t, got[i], string(d.payload), "in the order first sent")
				w.dispose(d.id, engine.Accepted)
			}
			eventually(t, "all accepted", func() bool { q, _ := b.Queue("work"); return q.Accepted == 8 })
		})
	}
}

// subscribed starts a broker with fan-out addresses "topic/…", attaches
// a subscription with source src, sends n messages to its address, and
// takes the first.
func subscribed(t *testing.T, src *frame.Source, n int) (*broker.Broker, *tlink) {
	t.Helper()
	addr, b := start(t, broker.Options{FanoutPrefixes: []string{"topic/"}})
	c := dial(t, addr, engine.Config{ContainerID: t.Name()}, nil)
	sub := c.attach(false, engine.LinkOptions{Name: "sub", Source: src})
	c.sender(string(src.Address)).send(msgs("m", n)...)
	sub.flow(1)
	sub.next()
	return b, sub
}

// TestDurableSubscriptionClosed: a durable subscription closed (detach
// with closed set) ends: its acquired messages are released and its
// copies dropped.
func TestDurableSubscriptionClosed(t *testing.T) {
	b, sub := subscribed(t, durableSource("topic/c", frame.DurabilityUnsettledState, frame.ExpiryNever), 3)
	sub.detach()
	eventually(t, "gone", func() bool {
		q, _ := b.Queue("topic/c")
		return q.Detached == 0 && q.Depth == 0 && q.Unsettled == 0
	})
	attached, detached := b.DurableLinks()
	assert.Zero(t, attached+detached)
}

// TestDurableSubscriptionBound: a detached subscription keeps at most
// MaxMessages copies; past it copies are dropped for it, and the
// producer is not held back.
func TestDurableSubscriptionBound(t *testing.T) {
	addr, b := start(t, broker.Options{FanoutPrefixes: []string{"topic/"}, MaxMessages: 5})
	src := durableSource("topic/b", frame.DurabilityConfiguration, frame.ExpiryNever)
	c := dial(t, addr, engine.Config{ContainerID: "bounded"}, nil)
	sub := c.attach(false, engine.LinkOptions{Name: "sub", Source: src})
	sub.detachOnly()
	snd := c.sender("topic/b")
	snd.send(msgs("m", 12)...)
	for range 12 {
		require.Equal(t, frame.StateAccepted, snd.outcome().Type)
	}
	q, _ := b.Queue("topic/b")
	assert.Equal(t, 5, q.Depth)
	assert.Equal(t, uint64(7), q.Dropped)
	sub = c.attach(false, engine.LinkOptions{Name: "sub", Source: src})
	sub.flow(10)
	for i := range 5 {
		assert.Equal(t, fmt.Sprint("m", i), string(sub.next().payload[5:]))
	}
	sub.none()
}

// TestDurableSubscriptionLost: a durable subscription outlives a lost
// connection with expiry policy never (attached again from a new
// connection with no resume, it gets what it had not settled as new
// deliveries, then what arrived meanwhile); with session-end, the
// default, and timeout 0 it ends with the connection.
func TestDurableSubscriptionLost(t *testing.T) {
	for _, policy := range []frame.ExpiryPolicy{frame.ExpiryNever, frame.ExpirySessionEnd} {
		t.Run(policy.String(), func(t *testing.T) {
			addr, b := start(t, broker.Options{FanoutPrefixes: []string{"topic/"}})
			src := durableSource("topic/l", frame.DurabilityUnsettledState, policy)
			c := dial(t, addr, engine.Config{ContainerID: "lost"}, nil)
			sub := c.attach(false, engine.LinkOptions{Name: "sub", Source: src})
			p := dial(t, addr, engine.Config{}, nil)
			snd := p.sender("topic/l")
			snd.send(msgs("a", 3)...)
			sub.flow(3)
			for range 3 {
				sub.next()
			}
			c.d.NetConn().Close()
			c.d.Wait()
			snd.send(msgs("b", 2)...)
			for range 5 {
				require.Equal(t, frame.StateAccepted, snd.outcome().Type)
			}
			if policy == frame.ExpirySessionEnd {
				eventually(t, "ended", func() bool {
					q, _ := b.Queue("topic/l")
					return q.Detached == 0 && q.Unsettled == 0 && q.Depth == 0
				})
				return
			}
			eventually(t, "kept", func() bool { q, _ := b.Queue("topic/l"); return q.Detached == 1 })
			c = dial(t, addr, engine.Config{ContainerID: "lost"}, nil)
			sub = c.attach(false, engine.LinkOptions{Name: "sub", Source: src})
			sub.flow(10)
			for _, want := range []string{"a0", "a1", "a2", "b0", "b1"} {
				d := sub.next()
				assert.Equal(t, want, string(d.payload[5:]))
				sub.dispose(d.id, engine.Accepted)
			}
			sub.none()
			eventually(t, "5 accepted", func() bool { q, _ := b.Queue("topic/l"); return q.Accepted == 5 })
		})
	}
}

// TestDurableSubscriptionMoved: the name attached again to another
// address ends the old subscription (its acquired messages back, its
// copies dropped) and starts a new one, with nothing to resume.
func TestDurableSubscriptionMoved(t *testing.T) {
	addr, b := start(t, broker.Options{FanoutPrefixes: []string{"topic/"}})
	c := dial(t, addr, engine.Config{ContainerID: "mover"}, nil)
	sub := c.attach(false, engine.LinkOptions{Name: "sub",
		Source: durableSource("topic/one", frame.DurabilityUnsettledState, frame.ExpiryNever)})
	c.sender("topic/one").send(msgs("m", 3)...)
	sub.flow(2)
	sub.next()
	sub.next()
	sub.detachOnly()
	q, _ := b.Queue("topic/one")
	require.Equal(t, 1, q.Detached)
	require.Equal(t, 2, q.Unsettled)
	sub = c.attach(false, engine.LinkOptions{Name: "sub",
		Source: durableSource("topic/two", frame.DurabilityUnsettledState, frame.ExpiryNever)})
	var answer int
	c.do(func() { answer = sub.l.RemoteAttach().Unsettled.Len() })
	assert.Zero(t, answer, "nothing to resume")
	q, _ = b.Queue("topic/one")
	assert.Zero(t, q.Detached)
	assert.Zero(t, q.Depth+q.Unsettled, "the old subscription's messages went with it")
	q, _ = b.Queue("topic/two")
	assert.Equal(t, 1, q.Consumers)
}

// TestDurableSubscriptionTimeout: with expiry link-detach and a timeout
// of 1 s the subscription is kept at the detach and ends after it.
func TestDurableSubscriptionTimeout(t *testing.T) {
	src := durableSource("topic/t", frame.DurabilityUnsettledState, frame.ExpiryLinkDetach)
	src.Timeout = 1
	b, sub := subscribed(t, src, 2)
	sub.detachOnly()
	q, _ := b.Queue("topic/t")
	require.Equal(t, 1, q.Detached, "kept at the detach")
	eventually(t, "the timeout", func() bool {
		q, _ := b.Queue("topic/t")
		return q.Detached == 0 && q.Depth+q.Unsettled == 0
	})
	attached, detached := b.DurableLinks()
	assert.Zero(t, attached+detached)
}
