package broker

import (
	"testing"

	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/require"
)

// colored encodes a message whose application property color is color.
func colored(t testing.TB, color string) []byte {
	var vs message.Values
	e, err := vs.PropertiesOf(map[string]any{"color": color})
	require.NoError(t, err)
	m := message.Message{ApplicationProperties: e, Body: message.Body{Kind: message.BodyValue, Value: vs.String("x")}}
	b, err := m.Append(nil)
	require.NoError(t, err)
	return b
}

// take is takeLocked's count.
func take(b *Broker, c *consumer, out []msg) int {
	k, _ := b.takeLocked(c, out, nil)
	return k
}

// selective returns a consumer of queue node n whose selector is sel.
func selective(t testing.TB, n *node, sel string) *consumer {
	f, _, refuse := parseFilters(filterSet(filterEntry{"s", "apache.org:selector-filter:string", 0, str(sel)}), nil)
	require.Nil(t, refuse)
	c := &consumer{n: n, q: &n.q, conn: &conn{id: 7}, filt: &f}
	n.consumers = append(n.consumers, c)
	return c
}

// TestSelectiveConsumerCost: a selective consumer looks at the messages
// of a deep queue it does not take once, not at each dispatch: after
// its first look, a new message costs it no look at the old ones; a
// message put back at the front makes it look again, once.
func TestSelectiveConsumerCost(t *testing.T) {
	b := New(Options{MaxMessages: -1, MaxBytes: -1})
	n := b.nodeLocked([]byte("q"), false)
	blue, red := colored(t, "blue"), colored(t, "red")
	for range 10_000 {
		in := scanned(blue)
		b.enqueueLocked(n, &in, 1, nil)
	}
	c := selective(t, n, "color = 'red'")
	out := c.conn.batch[:1]
	require.Zero(t, take(b, c, out))
	require.EqualValues(t, 10_000, n.c.filtered, "each message looked at once")
	for i := range 100 {
		in := scanned(red)
		b.enqueueLocked(n, &in, 1, nil)
		require.Equal(t, 1, take(b, c, out), i)
		b.doneLocked(c, out[0])
	}
	require.EqualValues(t, 10_000, n.c.filtered, "no message looked at again")
	require.Equal(t, 10_000, n.q.len(), "the blue messages stay for other consumers")

	other := &consumer{n: n, q: &n.q, conn: &conn{id: 8}}
	require.Equal(t, 1, take(b, other, out))
	b.requeueLocked(other, out[0], false, false, nil)
	require.Zero(t, take(b, c, out))
	require.EqualValues(t, 20_000, n.c.filtered, "a message put back: the queue looked at again, once")
	in := scanned(red)
	b.enqueueLocked(n, &in, 1, nil)
	require.Equal(t, 1, take(b, c, out))
	require.EqualValues(t, 20_000, n.c.filtered)
}

// TestSelectivePathAllocs: a message stored, matched by a selective
// consumer's selector, taken and settled allocates nothing once warm;
// and so does one on a fan-out node a subscription's filter leaves.
func TestSelectivePathAllocs(t *testing.T) {
	b := New(Options{})
	n := b.nodeLocked([]byte("q"), false)
	c := selective(t, n, "color = 'red' AND color <> 'blue'")
	red := colored(t, "red")
	step := func() {
		b.mu.Lock()
		in := scanned(red)
		b.enqueueLocked(n, &in, 1, nil)
		if take(b, c, c.conn.batch[:1]) != 1 {
			t.Fatal("nothing taken")
		}
		b.doneLocked(c, c.conn.batch[0])
		b.mu.Unlock()
	}
	for range 100 {
		step()
	}
	require.Zero(t, testing.AllocsPerRun(1000, step))

	f := b.nodeLocked([]byte("t"), true)
	s := selective(t, f, "color = 'blue'")
	s.own = &queue{}
	s.q = s.own
	fan := func() {
		in := scanned(red)
		b.enqueueLocked(f, &in, 1, nil)
	}
	for range 100 {
		fan()
	}
	require.Zero(t, testing.AllocsPerRun(1000, fan))
	require.Zero(t, s.q.len())
	require.EqualValues(t, 100+1+1000, f.c.filtered) // AllocsPerRun runs once more
}

// TestRelayPathAllocs: a message to the anonymous relay, routed by its
// to, allocates nothing once warm, permissions checked once.
func TestRelayPathAllocs(t *testing.T) {
	calls := 0
	b := New(Options{Permissions: func(string, string, Op) bool { calls++; return true }})
	var p message.Properties
	p.To = []byte("orders")
	pb, err := message.AppendProperties(nil, p)
	require.NoError(t, err)
	m := encode.AppendBinary(append(pb, 0x00, 0x53, 0x75), []byte("body"))
	pr := &producer{conn: &conn{identity: "alice", made: &made{}}}
	step := func() {
		b.mu.Lock()
		in := scanned(m)
		n, e := b.admitLocked(pr, &in)
		if e != nil || n.name != "orders" {
			t.Fatalf("routed to %v: %v", n, e)
		}
		b.mu.Unlock()
	}
	for range 100 {
		step()
	}
	require.Zero(t, testing.AllocsPerRun(1000, step))
	require.Equal(t, 2, calls, "write and configure, the first time")
}
