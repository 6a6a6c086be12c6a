package broker_test

import (
	"testing"

	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// colorMsg encodes a message whose application property color is color,
// its body the color too, and its properties' to, when given, to.
func colorMsg(t *testing.T, color, to string) []byte {
	var vs message.Values
	e, err := vs.PropertiesOf(map[string]any{"color": color})
	require.NoError(t, err)
	m := message.Message{ApplicationProperties: e, Body: message.Body{Kind: message.BodyData, Data: [][]byte{[]byte(color)}}}
	if to != "" {
		m.Properties = &message.Properties{To: []byte(to)}
	}
	b, err := m.Append(nil)
	require.NoError(t, err)
	return b
}

// dataOf is a delivery's data section.
func dataOf(t *testing.T, d delivery) string {
	var m message.Message
	require.NoError(t, m.Decode(d.payload))
	require.Len(t, m.Body.Data, 1)
	return string(m.Body.Data[0])
}

// filtered attaches a receiver of addr whose source's filter-set is set.
func (c *tclient) filtered(addr string, set frame.Map, desired frame.Symbols) *tlink {
	return c.attach(false, engine.LinkOptions{Source: &frame.Source{Address: []byte(addr), Filter: set}, DesiredCapabilities: desired})
}

func selector(sql string) frame.Map {
	var m frame.SymbolMap
	return m.Selector(sql).Map()
}

// TestSelectorConsumers: consumers of a queue each get the messages
// their selector takes and no other; a message none takes stays in the
// queue, counted as filtered; the answer's filter-set holds the
// selector, not a filter the broker does not apply.
func TestSelectorConsumers(t *testing.T) {
	addr, b := start(t, broker.Options{})
	c := dial(t, addr, engine.Config{}, nil)
	var set frame.SymbolMap
	set.Selector("color = 'red'").Described("xq", 0x0000468C00000099, encode.AppendString(nil, "//a"))
	red := c.filtered("sel", set.Map(), nil)
	blue := c.filtered("sel", selector("color = 'blue'"), nil)
	var want frame.SymbolMap
	want.Selector("color = 'red'")
	assert.Equal(t, []byte(want.Map()), []byte(red.l.RemoteSource().Filter), "only the filter applied is in the answer")
	red.flow(100)
	blue.flow(100)
	snd := c.sender("sel")
	colors := []string{"red", "blue", "green", "red", "blue", "red"}
	for _, col := range colors {
		snd.send(colorMsg(t, col, ""))
	}
	for range colors {
		snd.outcome()
	}
	for range 3 {
		d := red.next()
		assert.Equal(t, "red", dataOf(t, d))
		red.dispose(d.id, engine.Accepted)
	}
	for range 2 {
		d := blue.next()
		assert.Equal(t, "blue", dataOf(t, d))
		blue.dispose(d.id, engine.Accepted)
	}
	eventually(t, "the green message left alone", func() bool {
		s, _ := b.Queue("sel")
		return s.Depth == 1 && s.Accepted == 5 && s.Unsettled == 0
	})
	red.none()
	blue.none()
	s, _ := b.Queue("sel")
	assert.NotZero(t, s.Filtered)

	all := c.receiver("sel")
	all.flow(10)
	assert.Equal(t, "green", dataOf(t, all.next()), "a consumer without a filter is not blocked by selective ones")
}

// TestFilterRefused: a selector that does not parse refuses the link
// with amqp:invalid-field naming its column; a filter the broker does
// not apply, that the consumer requires, with amqp:not-implemented.
func TestFilterRefused(t *testing.T) {
	addr, _ := start(t, broker.Options{})
	c := dial(t, addr, engine.Config{}, nil)
	r := c.filtered("q", selector("color = "), nil)
	err := <-r.detached
	require.NotNil(t, err)
	assert.Equal(t, frame.CondInvalidField, err.Condition)
	assert.Contains(t, err.Description, "column")
	assert.Nil(t, r.l.RemoteSource().Filter)

	var set frame.SymbolMap
	set.Described("xq", 0x0000468C00000099, encode.AppendString(nil, "//a"))
	r = c.filtered("q", set.Map(), frame.Symbols(frame.AppendSymbols(nil, "apache.org:xquery-filter:string", "other")))
	// The descriptor has no name the broker knows: it is left out, not
	// refused; a symbolic one it does not apply, required, is refused.
	select {
	case err := <-r.detached:
		t.Fatalf("refused: %v", err)
	default:
	}
	set.Reset()
	set.Value("xq", encode.AppendString(encode.AppendSymbol(encode.AppendDescribed(nil), "apache.org:xquery-filter:string"), "//a"))
	r = c.filtered("q", set.Map(), frame.Symbols(frame.AppendSymbols(nil, "apache.org:xquery-filter:string")))
	err = <-r.detached
	require.NotNil(t, err)
	assert.Equal(t, frame.CondNotImplemented, err.Condition)
}

// TestNoLocal: a subscription with the no-local filter gets no message
// sent on its own connection.
func TestNoLocal(t *testing.T) {
	addr, _ := start(t, broker.Options{FanoutPrefixes: []string{"topic/"}})
	c1 := dial(t, addr, engine.Config{}, nil)
	c2 := dial(t, addr, engine.Config{}, nil)
	var set frame.SymbolMap
	set.Described("nl", 0x0000468C00000003, encode.AppendCodeList0(nil))
	sub := c1.filtered("topic/a", set.Map(), nil)
	sub.flow(10)
	mine, theirs := c1.sender("topic/a"), c2.sender("topic/a")
	mine.send(colorMsg(t, "mine", ""))
	mine.outcome()
	theirs.send(colorMsg(t, "theirs", ""))
	theirs.outcome()
	assert.Equal(t, "theirs", dataOf(t, sub.next()))
	sub.none()
}

// TestBrowse: a consumer with distribution-mode copy on a queue is sent
// every message, takes none, and raises no delivery-count: a consumer
// after it gets them all, as they were sent.
func TestBrowse(t *testing.T) {
	addr, b := start(t, broker.Options{})
	c := dial(t, addr, engine.Config{}, nil)
	snd := c.sender("br")
	var sent [][]byte
	for _, col := range []string{"a", "b", "c"} {
		m := colorMsg(t, col, "")
		sent = append(sent, m)
		snd.send(m)
		snd.outcome()
	}
	br := c.attach(false, engine.LinkOptions{Source: &frame.Source{Address: []byte("br"), DistributionMode: []byte("copy")}})
	br.flow(10)
	for i := range sent {
		d := br.next()
		assert.Equal(t, sent[i], d.payload)
		br.dispose(d.id, frame.DeliveryState{Type: frame.StateModified, DeliveryFailed: true})
	}
	snd.send(colorMsg(t, "d", ""))
	snd.outcome()
	assert.Equal(t, "d", dataOf(t, br.next()), "a browser is sent new messages too")
	br.none()
	s, _ := b.Queue("br")
	assert.Equal(t, 4, s.Depth)
	br.detach()
	r := c.receiver("br")
	r.flow(10)
	for i := range sent {
		assert.Equal(t, sent[i], r.next().payload, "as sent: no delivery-count")
	}
}

// TestAnonymousRelay: the broker offers ANONYMOUS-RELAY; a producer
// with no target address sends each message to its to; one without a
// to, or to an address it may not write, is rejected.
func TestAnonymousRelay(t *testing.T) {
	calls := map[string]int{}
	addr, b := start(t, broker.Options{Permissions: func(id, address string, op broker.Op) bool {
		calls[address+"/"+op.String()]++ // under the broker's lock
		return address != "secret"
	}})
	c := dial(t, addr, engine.Config{}, nil)
	var offered frame.Symbols
	c.do(func() { offered = c.d.Conn().RemoteOpen().OfferedCapabilities })
	require.True(t, offered.Contains("ANONYMOUS-RELAY"))
	relay := c.attach(true, engine.LinkOptions{Unsettled: true})
	for range 10 {
		relay.send(colorMsg(t, "x", "q1"), colorMsg(t, "y", "q2"))
	}
	for range 20 {
		require.Equal(t, frame.StateAccepted, relay.outcome().Type)
	}
	relay.send(colorMsg(t, "z", ""))
	o := relay.outcome()
	assert.Equal(t, frame.StateRejected, o.Type)
	assert.Equal(t, "amqp:not-found", string(o.Error.Condition))
	relay.send(colorMsg(t, "z", "secret"))
	o = relay.outcome()
	assert.Equal(t, frame.StateRejected, o.Type)
	assert.Equal(t, "amqp:unauthorized-access", string(o.Error.Condition))
	for _, q := range []string{"q1", "q2"} {
		s, ok := b.Queue(q)
		require.True(t, ok)
		assert.Equal(t, 10, s.Depth)
	}
	b.Queues() // the broker's lock: calls is read after its writes
	assert.Equal(t, 1, calls["q1/write"], "checked once a link")
	assert.Equal(t, 1, calls["q2/write"])
}

// sharedReceiver attaches a receiver of subscription link name to addr
// with capabilities caps (shared, global).
func (c *tclient) sharedReceiver(name, addr string, caps ...string) *tlink {
	return c.attach(false, engine.LinkOptions{Name: name,
		Source: &frame.Source{Address: []byte(addr), Capabilities: frame.Symbols(frame.AppendSymbols(nil, caps...))}})
}

// TestSharedSubscription: receivers of one shared subscription to a
// fan-out node ("sub", "sub|2": Qpid JMS's names) split its messages;
// another subscription gets each too; a global one is shared across
// containers, one that is not is the container's own.
func TestSharedSubscription(t *testing.T) {
	const n = 20
	addr, b := start(t, broker.Options{FanoutPrefixes: []string{"topic/"}})
	c1 := dial(t, addr, engine.Config{ContainerID: "one"}, nil)
	c2 := dial(t, addr, engine.Config{ContainerID: "two"}, nil)
	r1 := c1.sharedReceiver("sub", "topic/s", "shared")
	r2 := c1.sharedReceiver("sub|2", "topic/s", "shared")
	g1 := c1.sharedReceiver("g|global", "topic/s", "shared", "global")
	g2 := c2.sharedReceiver("g|global2", "topic/s", "shared", "global")
	own := c2.sharedReceiver("sub", "topic/s", "shared") // container two's "sub"
	for _, r := range []*tlink{r1, r2, g1, g2} {
		r.flow(n / 2) // so that each takes half
	}
	own.flow(n)
	snd := c1.sender("topic/s")
	for i := range n {
		snd.send(colorMsg(t, string(rune('a'+i)), ""))
	}
	for range n {
		snd.outcome()
	}
	split := func(a, b *tlink) (int, int) {
		seen := map[string]bool{}
		na, nb := 0, 0
		for len(seen) < n {
			select {
			case d := <-a.deliveries:
				seen[dataOf(t, d)] = true
				na++
				a.dispose(d.id, engine.Accepted)
			case d := <-b.deliveries:
				seen[dataOf(t, d)] = true
				nb++
				b.dispose(d.id, engine.Accepted)
			case <-timeAfter():
				t.Fatalf("%d of %d", len(seen), n)
			}
		}
		require.Equal(t, n, na+nb, "each message once")
		return na, nb
	}
	na, nb := split(r1, r2)
	assert.Equal(t, [2]int{n / 2, n / 2}, [2]int{na, nb}, "the receivers of the subscription take turns")
	na, nb = split(g1, g2)
	assert.Equal(t, [2]int{n / 2, n / 2}, [2]int{na, nb}, "a global subscription across containers")
	for range n {
		d := own.next()
		own.dispose(d.id, engine.Accepted)
	}
	r1.none()
	r2.none()
	eventually(t, "all settled", func() bool {
		s, _ := b.Queue("topic/s")
		return s.Depth == 0 && s.Unsettled == 0 && s.Consumers == 5 && s.Accepted == 3*n
	})
}

// TestSharedDurableSubscription: a durable shared subscription stays
// while its receivers are detached (its copies kept), and ends when its
// last receiver closes its link; a volatile one ends with its last
// receiver.
func TestSharedDurableSubscription(t *testing.T) {
	addr, b := start(t, broker.Options{FanoutPrefixes: []string{"topic/"}})
	c := dial(t, addr, engine.Config{ContainerID: "dur"}, nil)
	caps := frame.Symbols(frame.AppendSymbols(nil, "shared"))
	durable := func(name string) *tlink {
		return c.attach(false, engine.LinkOptions{Name: name, Source: &frame.Source{Address: []byte("topic/d"),
			Capabilities: caps, Durable: frame.DurabilityConfiguration, ExpiryPolicy: frame.ExpiryNever}})
	}
	r := durable("dsub")
	vol := c.sharedReceiver("vsub|volatile1", "topic/d", "shared")
	r.c.do(func() { r.l.DetachOnly(nil) })
	<-r.detached
	vol.detach()
	snd := c.sender("topic/d")
	snd.send(colorMsg(t, "kept", ""))
	snd.outcome()
	s, _ := b.Queue("topic/d")
	require.Equal(t, 1, s.Depth, "kept for the durable subscription alone")
	r = durable("dsub|2")
	r.flow(1)
	d := r.next()
	assert.Equal(t, "kept", dataOf(t, d))
	r.dispose(d.id, engine.Accepted)
	r.detach() // closed: the subscription ends
	snd.send(colorMsg(t, "dropped", ""))
	snd.outcome()
	s, _ = b.Queue("topic/d")
	assert.Zero(t, s.Depth)
	assert.EqualValues(t, 1, s.Dropped, "no subscription left")
}

// TestSharedSubscriptionFilters: a shared subscription has the filters
// of the receiver that made it; a receiver that gives others (or none)
// while it has receivers is refused with amqp:precondition-failed and
// the subscription goes on; one with the same filters shares it. A
// durable subscription kept with no receiver is replaced by a receiver
// with other filters: its kept messages go with it.
func TestSharedSubscriptionFilters(t *testing.T) {
	addr, b := start(t, broker.Options{FanoutPrefixes: []string{"topic/"}})
	c := dial(t, addr, engine.Config{ContainerID: "jms"}, nil)
	caps := frame.Symbols(frame.AppendSymbols(nil, "shared"))
	recv := func(name string, set frame.Map, durable bool) *tlink {
		src := &frame.Source{Address: []byte("topic/f"), Capabilities: caps, Filter: set}
		if durable {
			src.Durable, src.ExpiryPolicy = frame.DurabilityConfiguration, frame.ExpiryNever
		}
		return c.attach(false, engine.LinkOptions{Name: name, Source: src})
	}
	refused := func(l *tlink) {
		t.Helper()
		select {
		case err := <-l.detached:
			require.NotNil(t, err)
			assert.Equal(t, frame.CondPreconditionFailed, err.Condition, err.Description)
		case <-timeAfter():
			t.Fatal("a receiver with other filters was not refused")
		}
	}
	red := recv("sub", selector("color = 'red'"), false)
	refused(recv("sub|2", selector("color = 'blue'"), false))
	refused(recv("sub|3", nil, false))
	red2 := recv("sub|4", selector("color = 'red'"), false)
	red.flow(2)
	red2.flow(2)
	snd := c.sender("topic/f")
	for _, color := range []string{"red", "blue", "red"} {
		snd.send(colorMsg(t, color, ""))
		snd.outcome()
	}
	for range 2 {
		select {
		case d := <-red.deliveries:
			assert.Equal(t, "red", dataOf(t, d))
			red.dispose(d.id, engine.Accepted)
		case d := <-red2.deliveries:
			assert.Equal(t, "red", dataOf(t, d))
			red2.dispose(d.id, engine.Accepted)
		case <-timeAfter():
			t.Fatal("the subscription's red messages not delivered")
		}
	}
	red.none()
	red2.none()

	kept := recv("dsub", selector("color = 'red'"), true)
	kept.c.do(func() { kept.l.DetachOnly(nil) })
	<-kept.detached
	snd.send(colorMsg(t, "red", ""))
	snd.outcome()
	s, _ := b.Queue("topic/f")
	require.Equal(t, 1, s.Depth, "kept for the durable subscription")
	blue := recv("dsub|2", selector("color = 'blue'"), true)
	blue.flow(2)
	eventually(t, "the kept subscription replaced", func() bool {
		s, _ := b.Queue("topic/f")
		return s.Depth == 0 && s.Consumers == 3
	})
	for _, color := range []string{"red", "blue"} {
		snd.send(colorMsg(t, color, ""))
		snd.outcome()
	}
	d := blue.next()
	assert.Equal(t, "blue", dataOf(t, d))
	blue.dispose(d.id, engine.Accepted)
	blue.none()
}
