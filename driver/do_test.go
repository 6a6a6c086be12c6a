package driver

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/engine"
)

// dialOpen dials a client to addr and waits for its connection to open.
func dialOpen(t *testing.T, addr string) *Driver {
	t.Helper()
	h := &openNote{open: make(chan struct{})}
	d, err := Dial(context.Background(), "tcp", addr, engine.Config{}, nil, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.Close()
		select {
		case <-d.Done():
		case <-time.After(20 * time.Second):
			d.NetConn().Close() // a stuck loop is reported by the test; do not hang here
		}
	})
	select {
	case <-h.open:
	case <-time.After(20 * time.Second):
		t.Fatal("the connection did not open")
	}
	return d
}

type openNote struct {
	engine.NopHandler
	open chan struct{}
}

func (h *openNote) OnConnectionOpen(*engine.Conn) { close(h.open) }

// Two connections that hand work to each other in both directions, many
// at once: each function run on one Driver queues two on the other, to a
// depth, so both queues hold thousands while both goroutines are queueing.
// With a bounded, blocking Do each goroutine ends up blocked in the
// other's Do and neither runs again.
func TestDriverDoBothWays(t *testing.T) {
	t.Parallel()
	addr := serve(t, &Server{})
	a, b := dialOpen(t, addr), dialOpen(t, addr)
	const seeds, depth = 16, 10
	var left atomic.Int64
	left.Store(2 * seeds << depth)
	done := make(chan struct{})
	var ran [2]atomic.Int64      // functions run on a, b
	var wrongConn [2]atomic.Bool // each Driver's own functions run on its goroutine
	var hop func(self, other *Driver, i, n int)
	hop = func(self, other *Driver, i, n int) {
		ran[i].Add(1)
		if n == 0 {
			if left.Add(-1) == 0 {
				close(done)
			}
			return
		}
		for range 2 {
			if !other.Do(func(c *engine.Conn) {
				if c != other.Conn() {
					wrongConn[1-i].Store(true)
				}
				hop(other, self, 1-i, n-1)
			}) {
				t.Error("Do on a running Driver returned false")
			}
		}
	}
	for range seeds {
		a.Do(func(*engine.Conn) { hop(a, b, 0, depth) })
		b.Do(func(*engine.Conn) { hop(b, a, 1, depth) })
	}
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("deadlock: %d of %d leaves left after 60 s; ran %d on a, %d on b",
			left.Load(), 2*seeds<<depth, ran[0].Load(), ran[1].Load())
	}
	if wrongConn[0].Load() || wrongConn[1].Load() {
		t.Fatal("a function was handed another Driver's Conn")
	}
}
