package broker

import (
	"github.com/amqpsax/amqpsax/message"
	"testing"

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
		gm, gttl, gdelay := lifeOf(&lazy)
		wm, wttl, wdelay := lifeOf(&want)
		require.Equal(t, wm, gm, "%x", p)
		require.Equal(t, [2]int64{wttl, wdelay}, [2]int64{gttl, gdelay}, "%x", p)
		_, gotRelay := lazy.relayTo()
		_, wantRelay := want.relayTo()
		require.Equal(t, wantRelay, gotRelay, "%x", p)
		secs, err := lazy.sections()
		require.Equal(t, want.err, err, "%x", p)
		require.Equal(t, want.secs, *secs, "%x", p)
	}
}
