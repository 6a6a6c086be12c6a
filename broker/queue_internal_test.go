package broker

import (
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
