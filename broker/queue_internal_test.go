package broker

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/amqpsax/amqpsax/message"

	"github.com/stretchr/testify/require"
)

// A queue whose depth swings (a consumer that keeps up, in bursts)
// keeps its ring: once warm, a swing allocates nothing, where shrinking
// at every dip and growing back copied the ring twice a swing.
func TestFifoSwingKeepsRing(t *testing.T) {
	var r fifo
	swing := func() {
		for range 1500 {
			r.pushBack(msg{count: 1})
		}
		for r.n > 0 {
			r.remove(0)
		}
	}
	swing()
	size := len(r.e)
	require.Equal(t, 2048, size)
	require.Zero(t, testing.AllocsPerRun(50, swing))
	require.Equal(t, size, len(r.e))
}

// A ring that stays mostly empty for as many removals as it has slots
// shrinks, and one of maxIdleRing slots or more shrinks as it empties:
// a drained queue does not keep what its peak needed.
func TestFifoShrinks(t *testing.T) {
	var r fifo
	for range 4096 {
		r.pushBack(msg{})
	}
	for r.n > 100 {
		r.remove(0)
	}
	require.Equal(t, 4096, len(r.e), "a dip alone keeps the ring")
	for range 4096 {
		r.pushBack(msg{count: 7})
		r.remove(0)
	}
	require.Less(t, len(r.e), 4096, "mostly empty for 4096 removals")
	require.Equal(t, 100, r.n)
	for i := range r.n {
		require.Equal(t, uint32(7), r.at(i).count, "order kept")
	}

	var big fifo
	for range maxIdleRing {
		big.pushBack(msg{})
	}
	for big.n > 0 {
		big.remove(0)
	}
	require.Less(t, len(big.e), maxIdleRing)
}

// A message whose body comes first is scanned only when something reads
// its sections (a filter, the relay): what its route, lifetime, relay
// and sections come to is what a scan at once gives, well formed or not.
func TestIncomingBodyFirst(t *testing.T) {
	payloads := [][]byte{
		{0x00, 0x53, 0x75, 0xa0, 0x02, 'h', 'i'},               // data
		{0x00, 0x53, 0x77, 0xa1, 0x02, 'h', 'i'},               // amqp-value
		{0x00, 0x53, 0x76, 0x45},                               // amqp-sequence, empty list
		{0x00, 0x53, 0x75, 0xa0, 0xff, 'h'},                    // data cut short
		{0x00, 0x53, 0x75},                                     // a descriptor alone
		{0x00, 0x53, 0x75, 0xa0, 0x01, 'x', 0x00, 0x53, 0x70},  // a header after the body
		{0x00, 0x53, 0x73, 0x45, 0x00, 0x53, 0x75, 0xa0, 0x00}, // properties first: scanned at once
	}
	for _, p := range payloads {
		var lazy incoming
		lazy.scan(p)
		want := incoming{payload: p}
		want.secs, want.err = message.Scan(p)

		gotRoute, gotOK := lazy.route("k")
		wantRoute, wantOK := want.route("k")
		require.Equal(t, wantOK, gotOK, "%x", p)
		require.Equal(t, wantRoute, gotRoute, "%x", p)
		gm, gat, gttl, gdelay := lifeOf(&lazy)
		wm, wat, wttl, wdelay := lifeOf(&want)
		require.Equal(t, wm, gm, "%x", p)
		require.Equal(t, [3]int64{wat, wttl, wdelay}, [3]int64{gat, gttl, gdelay}, "%x", p)
		_, gotRelay := lazy.relayTo()
		_, wantRelay := want.relayTo()
		require.Equal(t, wantRelay, gotRelay, "%x", p)
		secs, err := lazy.sections()
		require.Equal(t, want.err, err, "%x", p)
		require.Equal(t, want.secs, *secs, "%x", p)
	}
}

// TestSentModel checks a consumer's unsettled messages (sent) against
// a map: ids that ascend across 2^32, taken mostly in order, some out
// of order, some never until the end, and now and then an id that does
// not follow the last (kept aside); all gives them in the order of
// their ids, and the ring stays within a constant of the most held.
func TestSentModel(t *testing.T) {
	var s sent
	model := map[uint32]msg{}
	rng := rand.New(rand.NewPCG(5, 6))
	id := uint32(1<<32 - 3000) // wraps halfway
	var order []uint32         // ids in model, in the order put
	peak := 0
	for i := range 20000 {
		switch op := rng.IntN(20); {
		case op < 9:
			id += uint32(1 + rng.IntN(3))
			m := msg{seq: uint64(i)}
			if op == 0 && len(order) > 0 && rng.IntN(50) == 0 {
				// an id put again: replaced, as a map would
				old := order[rng.IntN(len(order))]
				s.put(old, m)
				model[old] = m
				break
			}
			if op == 1 && rng.IntN(50) == 0 {
				// an id that does not follow the last
				back := id - uint32(5000+rng.IntN(5000))
				if _, ok := model[back]; !ok {
					s.put(back, m)
					model[back] = m
					order = append(order, back)
				}
				break
			}
			s.put(id, m)
			model[id] = m
			order = append(order, id)
		case len(order) > 0:
			j := 0 // in order
			if op >= 17 {
				j = rng.IntN(len(order))
			}
			if j == 0 && len(order) > 1 && i < 15000 && i%1000 < 500 {
				j = 1 // the first left unsettled for a while
			}
			k := order[j]
			got, ok := s.get(k)
			require.True(t, ok, "id %d", k)
			require.Equal(t, model[k], got)
			got, ok = s.take(k)
			require.True(t, ok, "id %d", k)
			require.Equal(t, model[k], got)
			delete(model, k)
			order = slices.Delete(order, j, j+1)
			_, ok = s.get(k)
			require.False(t, ok, "id %d taken", k)
			_, ok = s.take(k)
			require.False(t, ok, "id %d taken", k)
		}
		_, ok := s.get(id + 1)
		require.False(t, ok)
		require.Equal(t, len(model), s.len())
		peak = max(peak, len(model))
		require.LessOrEqual(t, s.n, 2*peak+32, "holes are compacted")
	}
	want := slices.Collect(maps.Keys(model))
	slices.SortFunc(want, func(a, b uint32) int { return int(int32(a - b)) })
	all := s.all()
	require.Len(t, all, len(want))
	for i, k := range want {
		require.Equal(t, model[k], all[i], "in the order of ids")
	}
}

// A consumer's messages sent and settled in order allocate nothing once
// its ring has grown.
func TestSentAllocs(t *testing.T) {
	var s sent
	id := uint32(0)
	step := func() {
		for range 100 {
			s.put(id, msg{seq: uint64(id)})
			id++
		}
		for k := id - 100; k != id; k++ {
			if _, ok := s.get(k); !ok {
				t.Fatal("lost", k)
			}
			s.take(k)
		}
	}
	step()
	require.Zero(t, testing.AllocsPerRun(100, step))
	require.Zero(t, s.len())
}

// A ring is timed (looked at for expiry) while it may hold a message
// with an expiry: from the first pushed, at either end, until it
// empties.
func TestRingTimed(t *testing.T) {
	var r ring
	r.pushBack(msg{seq: 1})
	require.False(t, r.timed, "nothing expires")
	r.pushBack(msg{seq: 2, expiry: 5, prio: 7})
	require.True(t, r.timed)
	r.popFront()
	require.True(t, r.timed, "kept until r empties")
	r.popFront()
	r.pushFront(msg{seq: 3})
	require.False(t, r.timed, "emptied, then a message that does not expire")
	r.pushFront(msg{seq: 4, expiry: 9})
	require.True(t, r.timed)
	require.NoError(t, r.check())
}
