package broker

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/require"
)

// TestPriorityRing checks the ring against a model: a list kept in
// delivery order (priority high to low, stable), through random pushes
// at either end and removals anywhere.
func TestPriorityRing(t *testing.T) {
	var r ring
	type e struct {
		seq  uint64
		prio uint8
	}
	var model []e
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 20000 {
		m := msg{seq: uint64(i), prio: uint8(rng.IntN(levels)), expiry: int64(rng.IntN(8) / 7)}
		switch op := rng.IntN(10); {
		case op < 5:
			r.pushBack(m)
			j := len(model)
			for j > 0 && model[j-1].prio < m.prio {
				j--
			}
			model = slices.Insert(model, j, e{m.seq, m.prio})
		case op < 6:
			r.pushFront(m)
			j := 0
			for j < len(model) && model[j].prio > m.prio {
				j++
			}
			model = slices.Insert(model, j, e{m.seq, m.prio})
		case len(model) > 0:
			j := 0
			if op == 9 {
				j = rng.IntN(len(model))
			}
			require.Equal(t, model[j].seq, r.remove(j).seq)
			model = slices.Delete(model, j, j+1)
		}
		require.Equal(t, len(model), r.n)
		require.NoError(t, r.check())
	}
	for i, x := range model {
		require.Equal(t, x.seq, r.at(i).seq)
	}
}

// lifeMessage is a message with a header (priority, ttl), properties
// (absolute-expiry-time), message annotations (a delivery time in the
// past) and application properties routed to to.
func lifeMessage(to string, prio uint8, ttl uint32, expiry int64) []byte {
	m := message.AppendHeader(nil, message.Header{Priority: prio, TTL: ttl, HasTTL: ttl > 0})
	ann := encode.AppendTimestamp(encode.AppendSymbol(nil, AnnotationDeliveryTime), 1)
	m = append(m, 0x00, 0x53, 0x72, 0xc1, byte(1+len(ann)), 2)
	m = append(m, ann...)
	p := message.Properties{}
	p.AbsoluteExpiryTime, p.HasAbsoluteExpiryTime = expiry, expiry != 0
	m, err := message.AppendProperties(m, p)
	if err != nil {
		panic(err)
	}
	return append(m, routed(to, 1000)...)
}

// TestLifetimePathAllocs: once warm, messages with a priority, a ttl,
// an absolute-expiry-time and a delivery time are stored and taken;
// one rejected is dead-lettered, one given back with delivery-failed
// past MaxDeliveryCount too, one expired goes to the expiry address:
// none allocates.
func TestLifetimePathAllocs(t *testing.T) {
	now := time.Unix(2e9, 0)
	b := New(Options{RouteKey: "to", DeadLetterAddress: "dlq", ExpiryAddress: "dlq", MaxDeliveryCount: 1,
		Now: func() time.Time { return now }})
	n := b.nodeLocked([]byte("orders"), false)
	dlq := b.nodeLocked([]byte("dlq"), false)
	p := &producer{n: n, conn: &conn{}}
	c := &consumer{n: n, q: &n.q, conn: &conn{}}
	n.consumers = append(n.consumers, c)
	_, err := message.Scan(lifeMessage("orders", 7, 1, 1))
	require.NoError(t, err)
	live := lifeMessage("orders", 7, 60_000, now.UnixMilli()+3_600_000)
	short := lifeMessage("orders", 2, 1, 0)
	take := func() msg {
		k, _ := b.takeLocked(c, c.conn.batch[:1], nil)
		if k != 1 {
			t.Fatal("nothing taken")
		}
		return c.conn.batch[0]
	}
	var wb [8]*conn
	step := func() {
		b.mu.Lock()
		for _, m := range [][]byte{live, live, live, short} {
			in := scanned(m)
			dst, e := b.admitLocked(p, &in)
			if e != nil || dst != n {
				t.Fatalf("routed to %v: %v", dst, e)
			}
			b.enqueueLocked(dst, &in, 1, wb[:0])
		}
		now = now.Add(time.Second) // short expires
		b.doneLocked(c, take())
		b.settleLocked(c, take(), &frame.DeliveryState{Type: frame.StateRejected}, wb[:0])
		b.settleLocked(c, take(), &frame.DeliveryState{Type: frame.StateModified, DeliveryFailed: true}, wb[:0])
		if n.q.len() != 1 {
			t.Fatalf("%d left", n.q.len())
		}
		_, wake := b.takeLocked(c, c.conn.batch[:1], wb[:0]) // expires short
		_ = wake
		b.dropLocked(dlq, &dlq.q)
		b.mu.Unlock()
	}
	for range 100 {
		step()
	}
	require.Zero(t, testing.AllocsPerRun(1000, step))
	require.Zero(t, n.q.len())
	require.Zero(t, n.q.bytes)
	require.Zero(t, n.q.unsettled)
	require.Equal(t, uint64(3*1101), n.c.deadLettered)
	require.Equal(t, uint64(1101), n.c.expired)
}

// TestAbsoluteExpiry: reading the absolute-expiry-time alone gives what
// message.ParseProperties gives, with and without the field and the
// fields before it.
func TestAbsoluteExpiry(t *testing.T) {
	for _, p := range []*message.Properties{
		{},
		{MessageID: message.StringID("m"), To: []byte("q"), AbsoluteExpiryTime: 1700000000123, HasAbsoluteExpiryTime: true},
		{AbsoluteExpiryTime: 5, HasAbsoluteExpiryTime: true, GroupID: []byte("g")},
		{CreationTime: 9, HasCreationTime: true, Subject: []byte("s")},
		{MessageID: message.UlongID(7), UserID: []byte("u"), To: []byte("q"), Subject: []byte("s"), ReplyTo: []byte("r"),
			CorrelationID: message.StringID("c"), ContentType: []byte("text/plain"), ContentEncoding: []byte("gzip"),
			AbsoluteExpiryTime: 1 << 40, HasAbsoluteExpiryTime: true, CreationTime: 3, HasCreationTime: true,
			GroupID: []byte("g"), GroupSequence: 4, HasGroupSequence: true, ReplyToGroupID: []byte("rg")},
		{MessageID: message.UlongID(7), To: []byte("q"), ContentType: []byte("text/plain"), GroupID: []byte("g")},
	} {
		m := message.Message{Properties: p, Body: message.Body{Kind: message.BodyData, Data: [][]byte{[]byte("x")}}}
		b, err := m.Append(nil)
		require.NoError(t, err)
		s, err := message.Scan(b)
		require.NoError(t, err)
		want, err := message.ParseProperties(s.Properties)
		require.NoError(t, err)
		got, ok := absoluteExpiry(s.Properties)
		require.Equal(t, want.HasAbsoluteExpiryTime, ok, "%+v", p)
		require.Equal(t, want.AbsoluteExpiryTime, got, "%+v", p)
		// Cut anywhere, or with its list's count broken: no expiry
		// read from past the section, and no panic.
		for k := range len(s.Properties) {
			cut := s.Properties[:k]
			if _, err := message.ParseProperties(cut); err == nil {
				continue
			}
			_, ok := absoluteExpiry(cut)
			require.False(t, ok, "% x", cut)
		}
		if len(s.Properties) > 5 && s.Properties[3] == 0xc0 {
			broken := bytes.Clone(s.Properties)
			broken[5] = 0xff
			_, ok := absoluteExpiry(broken)
			require.False(t, ok, "% x", broken)
		}
	}
	// A list32, as some peers write a properties section.
	wide := []byte{0x00, 0x53, 0x73, 0xd0, 0, 0, 0, 21, 0, 0, 0, 9, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x83, 0, 0, 0, 0, 0, 0, 0x30, 0x39}
	got, ok := absoluteExpiry(wide)
	require.True(t, ok)
	require.Equal(t, int64(12345), got)
	want, err := message.ParseProperties(wide)
	require.NoError(t, err)
	require.Equal(t, want.AbsoluteExpiryTime, got)
}
