package broker_test

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"testing"

	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/require"
)

// Clients that are not all trusted: each test is a hostile program's
// attack, and what the broker does about it.

// refused waits for l to be detached and returns the condition.
func refused(t *testing.T, l *tlink) frame.Condition {
	t.Helper()
	select {
	case err := <-l.detached:
		require.NotNil(t, err, "detached without an error")
		return err.Condition
	case <-timeAfter():
		t.Fatal("not refused")
	}
	return 0
}

// TestAddressNotUTF8: an address is an AMQP string, UTF-8; one that is
// not (a link's, or a message's route) is refused with
// amqp:invalid-field, and the broker makes no node of it.
func TestAddressNotUTF8(t *testing.T) {
	addr, b := start(t, broker.Options{RouteKey: "to"})
	c := dial(t, addr, engine.Config{}, nil)
	for _, sender := range []bool{false, true} {
		l := c.attach(sender, engine.LinkOptions{Address: "q\xff"})
		require.Equal(t, frame.CondInvalidField, refused(t, l), "sender %v", sender)
	}
	snd := c.sender("ok")
	snd.send(routedMessage("r\xfe", "x"))
	o := snd.outcome()
	require.Equal(t, frame.StateRejected, o.Type)
	require.Equal(t, frame.CondInvalidField.Symbol(), string(o.Error.Condition))
	for _, q := range b.Queues() {
		require.Equal(t, "ok", q.Name)
	}
}

// TestTxnRoutedPastMaxQueues: a message sent in a transaction and
// routed to a new address while the broker holds MaxQueues is rejected,
// as outside a transaction (it crashed the broker at the commit).
func TestTxnRoutedPastMaxQueues(t *testing.T) {
	addr, b := start(t, broker.Options{MaxQueues: 1, RouteKey: "to"})
	h := &txnClient{n: 1, send: true, payload: routedMessage("new", "x")}
	require.Equal(t, "accepted", runTxn(t, addr, h))
	require.Equal(t, 1, h.outcomes["rejected"], "outcomes %v", h.outcomes)
	_, ok := b.Queue("new")
	require.False(t, ok)
	q, _ := b.Queue("q")
	require.Zero(t, q.Depth)
	// the broker is still there
	snd := dial(t, addr, engine.Config{}, nil).sender("q")
	snd.send(data("after"))
	require.Equal(t, frame.StateAccepted, snd.outcome().Type)
}

// TestDynamicExclusive: a dynamic node's address cannot be guessed from
// another's, and only the connection that made it may consume from it
// (others may send to it: replies); another connection's consumer is
// refused with amqp:unauthorized-access.
func TestDynamicExclusive(t *testing.T) {
	addr, _ := start(t, broker.Options{})
	alice := dial(t, addr, engine.Config{}, nil)
	var names []string
	var reply *tlink
	for range 2 {
		reply = alice.attach(false, engine.LinkOptions{Source: &frame.Source{Dynamic: true}})
		var a string
		alice.do(func() { a = string(reply.l.RemoteSource().Address) })
		names = append(names, a)
	}
	for _, a := range names {
		require.Regexp(t, regexp.MustCompile(`^amqpsax\.dynamic\.[A-Za-z0-9_-]{22,}$`), a)
	}
	require.NotEqual(t, names[0], names[1])

	mallory := dial(t, addr, engine.Config{}, nil)
	for _, guess := range []string{names[1], "amqpsax.dynamic.1", "amqpsax.dynamic.2"} {
		l := mallory.receiver(guess)
		if guess == names[1] {
			require.Equal(t, frame.CondUnauthorizedAccess, refused(t, l))
		} else {
			l.detach() // an ordinary address now: a queue of its own
		}
	}
	server := mallory.sender(names[1])
	server.send(data("reply"))
	require.Equal(t, frame.StateAccepted, server.outcome().Type)
	reply.flow(1)
	require.True(t, bytes.Equal(data("reply"), reply.next().payload))
}

// TestPermissions: with Options.Permissions an account reads, writes and
// makes only the nodes its grant names; a link past it is refused with
// amqp:unauthorized-access, at attach, and so is a message its producer
// routes to an address it may not write.
func TestPermissions(t *testing.T) {
	perms, err := broker.NewPermissions(map[string]broker.Grant{
		"alice": {Configure: ".*", Write: ".*", Read: ".*"},
		"bob":   {Write: "orders|public\\..*", Read: "public\\..*"},
	})
	require.NoError(t, err)
	addr, b := start(t, broker.Options{Users: map[string]string{"alice": "a", "bob": "b"}, RouteKey: "to",
		Permissions: perms.Allow})
	bob := dial(t, addr, engine.Config{Username: "bob", Password: "b"}, nil)
	require.Equal(t, frame.CondUnauthorizedAccess, refused(t, bob.sender("orders")), "configure: bob makes no node")
	alice := dial(t, addr, engine.Config{Username: "alice", Password: "a"}, nil)
	alice.sender("orders")
	alice.sender("secret")
	alice.sender("public.news")
	require.Equal(t, frame.CondUnauthorizedAccess, refused(t, bob.receiver("orders")), "read")
	require.Equal(t, frame.CondUnauthorizedAccess, refused(t, bob.sender("secret")), "write")
	require.Equal(t, frame.CondUnauthorizedAccess, refused(t, bob.receiver("secret")), "read")
	snd := bob.sender("orders")
	snd.send(data("o"), routedMessage("secret", "s"), routedMessage("public.news", "n"))
	require.Equal(t, frame.StateAccepted, snd.outcome().Type)
	o := snd.outcome()
	require.Equal(t, frame.StateRejected, o.Type)
	require.Equal(t, frame.CondUnauthorizedAccess.Symbol(), string(o.Error.Condition))
	require.Equal(t, frame.StateAccepted, snd.outcome().Type)
	rcv := bob.receiver("public.news")
	rcv.flow(1)
	require.Equal(t, string(routedMessage("public.news", "n")), string(rcv.next().payload))
	st, _ := b.Queue("secret")
	require.Zero(t, st.Enqueued)
	// no account, no grant
	_, err = broker.NewPermissions(map[string]broker.Grant{"x": {Read: "("}})
	require.Error(t, err)
	require.False(t, perms.Allow("carol", "public.news", broker.Read))
}

// TestDurableLinkIsTheAccounts: another account that sends a durable
// subscription's container-id and link name gets a subscription of its
// own: the victim's connection is not closed, its unsettled messages
// stay its own.
func TestDurableLinkIsTheAccounts(t *testing.T) {
	addr, b := start(t, broker.Options{Users: map[string]string{"alice": "a", "mallory": "m"},
		FanoutPrefixes: []string{"topic/"}})
	src := durableSource("topic/a", frame.DurabilityUnsettledState, frame.ExpiryNever)
	alice := dial(t, addr, engine.Config{ContainerID: "c1", Username: "alice", Password: "a"}, nil)
	sub := alice.attach(false, engine.LinkOptions{Name: "sub", Source: src})
	snd := dial(t, addr, engine.Config{Username: "alice", Password: "a"}, nil).sender("topic/a")
	snd.send(msgs("a", 2)...)
	sub.flow(10)
	sub.next()
	sub.next()
	mallory := dial(t, addr, engine.Config{ContainerID: "c1", Username: "mallory", Password: "m"}, nil)
	stolen := mallory.attach(false, engine.LinkOptions{Name: "sub", Source: src})
	stolen.flow(10)
	attached, _ := b.DurableLinks()
	require.Equal(t, 2, attached)
	snd.send(data("later"))
	require.Equal(t, string(data("later")), string(sub.next().payload), "alice's link is still attached")
	require.Equal(t, string(data("later")), string(stolen.next().payload), "mallory has a subscription of its own")
	stolen.none()
	select {
	case err := <-alice.closed:
		t.Fatalf("alice's connection closed: %v", err)
	default:
	}
}

// TestQuotas: one connection makes at most MaxQueuesPerConnection nodes,
// one account keeps at most MaxDurableLinksPerAccount durable links;
// past them a link is refused with amqp:resource-limit-exceeded, and
// the others' are not.
func TestQuotas(t *testing.T) {
	addr, b := start(t, broker.Options{MaxQueuesPerConnection: 2, MaxDurableLinksPerAccount: 1,
		Users: map[string]string{"alice": "a", "bob": "b"}})
	alice := dial(t, addr, engine.Config{Username: "alice", Password: "a"}, nil)
	alice.sender("a1")
	alice.receiver("a2")
	require.Equal(t, frame.CondResourceLimitExceeded, refused(t, alice.sender("a3")))
	alice.sender("a1") // there already: made by no one now
	bob := dial(t, addr, engine.Config{Username: "bob", Password: "b"}, nil)
	bob.sender("b1")
	src := durableSource("a1", frame.DurabilityConfiguration, frame.ExpiryNever)
	d1 := alice.attach(false, engine.LinkOptions{Name: "d1", Source: src})
	d2 := alice.attach(false, engine.LinkOptions{Name: "d2", Source: src})
	require.Equal(t, frame.CondResourceLimitExceeded, refused(t, d2))
	bob.attach(false, engine.LinkOptions{Name: "d1", Source: src})
	d1.detachOnly()
	attached, kept := b.DurableLinks()
	require.Equal(t, [2]int{1, 1}, [2]int{attached, kept})
}

// TestDurableQuotaPerConnection: one connection of an account that many
// clients share (anonymous) makes at most MaxDurableLinksPerConnection
// durable links, so another connection of it still gets one; taking up
// a state again costs nothing.
func TestDurableQuotaPerConnection(t *testing.T) {
	addr, b := start(t, broker.Options{MaxDurableLinksPerConnection: 2, MaxDurableLinksPerAccount: 10})
	src := durableSource("q", frame.DurabilityConfiguration, frame.ExpiryNever)
	hog := dial(t, addr, engine.Config{ContainerID: "hog"}, nil)
	h1 := hog.attach(false, engine.LinkOptions{Name: "d1", Source: src})
	hog.attach(false, engine.LinkOptions{Name: "d2", Source: src})
	require.Equal(t, frame.CondResourceLimitExceeded, refused(t, hog.attach(false, engine.LinkOptions{Name: "d3", Source: src})))
	h1.detachOnly()
	hog.attach(false, engine.LinkOptions{Name: "d1", Source: src}) // its own again: no new state
	other := dial(t, addr, engine.Config{ContainerID: "other"}, nil)
	other.attach(false, engine.LinkOptions{Name: "d1", Source: src})
	attached, kept := b.DurableLinks()
	require.Equal(t, [2]int{3, 0}, [2]int{attached, kept})
}

// TestMaxConnections: past MaxConnections a connection is closed at
// once; once one ends, another is served.
func TestMaxConnections(t *testing.T) {
	addr, _ := start(t, broker.Options{MaxConnections: 1})
	first := dial(t, addr, engine.Config{}, nil)
	require.Error(t, dialErr(t, addr, engine.Config{}))
	first.d.Close()
	first.d.Wait()
	eventually(t, "a connection served again", func() bool { return dialErr(t, addr, engine.Config{}) == nil })
}

// TestTxnBounded: the messages a transaction holds count in their
// node's bounds and in the connection's memory budget: 256 messages of
// 64 KiB sent in one transaction to a queue of 1 MiB are accepted up to
// the queue's bound, the rest rejected (all were accepted and held, 16
// MiB, outside any bound); with no queue bound, up to the connection's
// budget's half.
func TestTxnBounded(t *testing.T) {
	const size, n = 64 << 10, 256
	payload := data(string(make([]byte, size)))
	for _, tc := range []struct {
		name string
		o    broker.Options
		most int
	}{
		{"queue", broker.Options{MaxBytes: 1 << 20, Engine: engine.Config{MaxMemory: 8 << 20}}, 1 << 20},
		{"budget", broker.Options{MaxBytes: -1, Engine: engine.Config{MaxMemory: 4 << 20}}, 2 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, b := start(t, tc.o)
			h := &txnClient{n: n, send: true, payload: payload}
			require.Equal(t, "accepted", runTxn(t, addr, h))
			acc := h.outcomes["accepted"]
			require.Equal(t, n, acc+h.outcomes["rejected"], "outcomes %v", h.outcomes)
			require.Positive(t, acc)
			require.LessOrEqual(t, acc*len(payload), tc.most, "held: %d messages", acc)
			eventually(t, "committed", func() bool { q, _ := b.Queue("q"); return q.Depth == acc })
		})
	}
}

// linkFlood begins sessions and attaches receivers to "q" on each until
// the broker refuses, counting the links attached (answered with a
// source) and not yet detached, and the most there were at once.
type linkFlood struct {
	engine.NopHandler
	sessions, links  int
	now, most, ended int
	done             chan struct{}
}

func (h *linkFlood) OnConnectionOpen(c *engine.Conn) {
	for range h.sessions {
		c.Begin()
	}
}

func (h *linkFlood) OnSessionBegin(s *engine.Session) {
	for i := range h.links {
		s.AttachReceiver(engine.LinkOptions{Name: fmt.Sprintf("%p-%d", s, i), Address: "q"})
	}
}

func (h *linkFlood) OnLinkAttach(l *engine.Link) {
	if len(l.RemoteSource().Address) > 0 {
		h.now++
		h.most = max(h.most, h.now)
	}
}

func (h *linkFlood) OnLinkDetach(l *engine.Link, _ *engine.Error) {
	if len(l.RemoteSource().Address) > 0 {
		h.now--
	}
	if h.ended++; h.ended == h.sessions*h.links {
		close(h.done)
	}
}

func (h *linkFlood) OnConnectionClose(*engine.Conn, *engine.Error) {
	select {
	case <-h.done:
	default:
		close(h.done)
	}
}

// TestLinkFlood: the broker's state of each link counts in the
// connection's memory budget, so one connection's links are bounded by
// it (65,280 links took 283 MB against a budget of 96 MiB): of 2,000
// attached with a budget of 1 MiB, at most 1 MiB over the engine's and
// the broker's cost of one are there at once.
func TestLinkFlood(t *testing.T) {
	const budget = 1 << 20
	addr, _ := start(t, broker.Options{Engine: engine.Config{MaxMemory: budget}})
	h := &linkFlood{sessions: 8, links: 250, done: make(chan struct{})}
	d, err := driver.Dial(context.Background(), "tcp", addr, engine.Config{}, nil, h)
	require.NoError(t, err)
	select {
	case <-h.done:
	case <-timeAfter():
		t.Fatal("neither all answered nor closed")
	}
	d.Close()
	d.Wait() // h is read after its goroutine's end
	most := h.most
	t.Logf("%d links at most, %d answered", most, h.ended)
	require.Positive(t, most)
	const engineLinkCost = 2560 // engine/budget.go's linkCost: the engine's state of a link, without its attach
	require.LessOrEqual(t, most, budget/(engineLinkCost+512), "links the broker held at once")
}

// TestMemoryAttack: four producers on one connection send 64 messages
// each to a queue of 1 MiB, with no consumer, at two message sizes; the
// messages the broker holds stay within Options.MaxMemory and its
// eighth (each link was granted 256 credits before the broker knew a
// message's size: 256 MiB held of 256 KiB messages), and the heap grows
// by no more than that and the engine's buffers.
func TestMemoryAttack(t *testing.T) {
	const budget = 4 << 20
	for _, size := range []int{64 << 10, 256 << 10} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			addr, b := start(t, broker.Options{MaxBytes: 1 << 20, MaxMemory: budget})
			c := dial(t, addr, engine.Config{}, nil)
			m := data(string(make([]byte, size)))
			var snds []*tlink
			for range 4 {
				snds = append(snds, c.sender("big"))
			}
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for _, snd := range snds {
				snd.send(slices.Repeat([][]byte{m}, 64)...)
			}
			eventually(t, "every producer done or waiting", func() bool {
				for _, snd := range snds {
					if n := snd.sent.Load(); int(n) != len(snd.outcomes) || (n < 64 && snd.credit() > 0) {
						return false
					}
				}
				return true
			})
			var held int64
			for _, q := range b.Queues() {
				held += q.Bytes
			}
			var after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&after)
			t.Logf("held %d bytes; heap %+d", held, int64(after.HeapAlloc)-int64(before.HeapAlloc))
			require.LessOrEqual(t, held, int64(budget+budget/8))
			require.Less(t, int64(after.HeapAlloc)-int64(before.HeapAlloc), int64(budget+budget/8+16<<20))
		})
	}
}
