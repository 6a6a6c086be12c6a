package broker

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestWakeWork: a message to a queue with many consumers that wait with
// no credit wakes the one that has credit without looking at the others
// (it looked at every one, under the broker's lock: 2,000 sends to a
// queue with 2,000 idle consumers took 16 times as long as with none).
// The consumers looked at are counted, at two numbers of idle ones.
func TestWakeWork(t *testing.T) {
	var visited [2]uint64
	for i, idle := range []int{1000, 2000} {
		b := New(Options{})
		n := b.nodeLocked([]byte("q"), false)
		for range idle {
			n.consumers = append(n.consumers, &consumer{n: n, q: &n.q, conn: &conn{}})
		}
		c := &consumer{n: n, q: &n.q, conn: &conn{}}
		n.consumers = append(n.consumers, c)
		m := data1k()
		for range 1000 {
			b.hungryLocked(c, true)
			in := scanned(m)
			wake := b.enqueueLocked(n, &in, 1, nil)
			require.Equal(t, []*conn{c.conn}, wake, "the consumer with credit is woken")
			k, _ := b.takeLocked(c, c.conn.batch[:1], nil)
			require.Equal(t, 1, k)
			b.doneLocked(c, c.conn.batch[0])
		}
		visited[i] = b.visited
	}
	require.LessOrEqual(t, visited[0], uint64(1000), "one a message")
	require.Equal(t, visited[0], visited[1], "the idle consumers are not looked at")
}

// TestReadyCompacts: consumers that wait and go leave no entries behind
// in their node's ready ring beyond twice those there.
func TestReadyCompacts(t *testing.T) {
	b := New(Options{})
	n := b.nodeLocked([]byte("q"), false)
	stay := &consumer{n: n, q: &n.q}
	b.hungryLocked(stay, true)
	for range 10_000 {
		c := &consumer{n: n, q: &n.q}
		b.hungryLocked(c, true)
		c.gone = true
		b.unreadyLocked(c)
	}
	require.LessOrEqual(t, n.q.ready.n, 2)
	require.Equal(t, []*conn{nil}, b.wakeOneLocked(n, &msg{buf: &buffer{}}, nil), "the one that stayed is woken")
}

// TestLinkStateCost: what the broker charges for a link covers its
// consumer or producer and an empty map of unsettled messages.
func TestLinkStateCost(t *testing.T) {
	const emptyMap = 48
	require.LessOrEqual(t, int(unsafe.Sizeof(consumer{}))+emptyMap, linkStateCost)
	require.LessOrEqual(t, int(unsafe.Sizeof(producer{})), linkStateCost)
}

func data1k() []byte { return make([]byte, 1024) }
