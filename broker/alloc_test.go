package broker

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/amqpsax/amqpsax/encode"
	"github.com/stretchr/testify/require"
)

// routed encodes a message with application properties {k: "v", to: to}
// and a data section of n bytes.
func routed(to string, n int) []byte {
	var m []byte
	m = encode.AppendString(encode.AppendString(m, "k"), "v")
	m = encode.AppendString(encode.AppendString(m, "to"), to)
	b := []byte{0x00, 0x53, 0x74, 0xc1, byte(1 + len(m)), 4}
	b = append(b, m...)
	return encode.AppendBinary(append(b, 0x00, 0x53, 0x75), bytes.Repeat([]byte{'x'}, n))
}

// scanned returns payload as a message on its way in, scanned as
// OnDelivery scans it.
func scanned(payload []byte) incoming {
	var in incoming
	in.scan(payload)
	return in
}

// TestRouteAllocs: routing by an application property reads the
// sections before the body and allocates nothing.
func TestRouteAllocs(t *testing.T) {
	m := routed("orders", 1000)
	to, ok := Route(m, "to")
	require.True(t, ok)
	require.Equal(t, "orders", string(to))
	_, ok = Route(m, "absent")
	require.False(t, ok)
	require.Zero(t, testing.AllocsPerRun(1000, func() { Route(m, "to") }))
}

// TestMessagePathAllocs: once warm, a message routed, stored, taken by
// a consumer and settled allocates nothing: the broker's whole path but
// the engine's, with permissions (checked at attach, and once for a
// producer's route).
func TestMessagePathAllocs(t *testing.T) {
	perms, err := NewPermissions(map[string]Grant{"alice": {Configure: ".*", Write: ".*", Read: ".*"}})
	require.NoError(t, err)
	b := New(Options{RouteKey: "to", Permissions: perms.Allow})
	n := b.nodeLocked([]byte("orders"), false)
	p := &producer{n: b.nodeLocked([]byte("in"), false), conn: &conn{identity: "alice"}}
	c := &consumer{n: n, q: &n.q, conn: &conn{}}
	n.consumers = append(n.consumers, c)
	m := routed("orders", 1000)
	var id uint32
	step := func() {
		var wb [8]*conn
		b.mu.Lock()
		in := scanned(m)
		dst, e := b.admitLocked(p, &in)
		if e != nil || dst != n {
			t.Fatalf("routed to %v: %v", dst, e)
		}
		wake := b.enqueueLocked(dst, &in, 1, wb[:0])
		_ = wake
		_ = b.creditLocked(dst)
		k, _ := b.takeLocked(c, c.conn.batch[:1], nil)
		if k != 1 {
			t.Fatal("nothing taken")
		}
		c.unacked.put(id, c.conn.batch[0])
		b.mu.Unlock()
		b.mu.Lock()
		got, _ := c.unacked.get(id)
		c.unacked.take(id)
		b.doneLocked(c, got)
		b.mu.Unlock()
		id++
	}
	for range 100 {
		step()
	}
	require.Zero(t, testing.AllocsPerRun(1000, step))
	require.Equal(t, 0, n.q.len())
	require.Equal(t, int64(0), n.q.bytes)
}

func TestClassOf(t *testing.T) {
	prev := 0
	for n := 0; n <= maxPooled; n++ {
		c, size := classOf(n)
		require.GreaterOrEqual(t, size, n)
		require.Less(t, c, numClasses)
		require.GreaterOrEqual(t, c, 0)
		if n > 64 {
			require.LessOrEqual(t, size, n+n/4+1, "n %d", n)
		}
		require.GreaterOrEqual(t, c, prev)
		prev = c
		if n > 4096 {
			n += rand.IntN(64)
		}
	}
	c, _ := classOf(maxPooled + 1)
	require.Equal(t, -1, c)
}

func TestRing(t *testing.T) {
	var r ring
	var model []uint64
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		switch op := rng.IntN(10); {
		case op < 5:
			r.pushBack(msg{seq: uint64(i)})
			model = append(model, uint64(i))
		case op < 6:
			r.pushFront(msg{seq: uint64(i)})
			model = append([]uint64{uint64(i)}, model...)
		case len(model) > 0:
			j := 0
			if op == 9 {
				j = rng.IntN(len(model))
			}
			require.Equal(t, model[j], r.remove(j).seq)
			model = append(model[:j], model[j+1:]...)
		}
		require.Equal(t, len(model), r.n)
	}
	for i, s := range model {
		require.Equal(t, s, r.at(i).seq)
	}
}

// BenchmarkMessagePath: TestMessagePathAllocs's step, a message routed,
// stored, taken by a consumer and settled, under the broker's lock: the
// broker's whole path but the engine's.
func BenchmarkMessagePath(b *testing.B) {
	perms, err := NewPermissions(map[string]Grant{"alice": {Configure: ".*", Write: ".*", Read: ".*"}})
	require.NoError(b, err)
	br := New(Options{RouteKey: "to", Permissions: perms.Allow})
	n := br.nodeLocked([]byte("orders"), false)
	p := &producer{n: br.nodeLocked([]byte("in"), false), conn: &conn{identity: "alice"}}
	c := &consumer{n: n, q: &n.q, conn: &conn{}}
	n.consumers = append(n.consumers, c)
	m := routed("orders", 100)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		var wb [8]*conn
		br.mu.Lock()
		br.hungryLocked(c, true)
		var in incoming // as OnDelivery scans it
		in.scan(m)
		dst, _ := br.admitLocked(p, &in)
		_ = br.enqueueLocked(dst, &in, 1, wb[:0])
		_ = br.creditLocked(dst)
		br.takeLocked(c, c.conn.batch[:1], nil)
		c.unacked.put(uint32(i), c.conn.batch[0])
		got, _ := c.unacked.get(uint32(i))
		c.unacked.take(uint32(i))
		br.doneLocked(c, got)
		br.mu.Unlock()
	}
}
