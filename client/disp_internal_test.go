package client

import (
	"context"
	"testing"
)

// Accepts that come while the connection's goroutine writes the
// dispositions queued before them (run, between taking the queue and
// giving its storage back) reuse storage: a stream of Receive and Accept
// allocates nothing for its dispositions.
func TestDispositionStorageReused(t *testing.T) {
	r := &Receiver{}
	ctx := context.Background()
	var id uint32
	cycle := func() {
		for range 4 {
			id++
			if err := r.dispose(ctx, dispReq{id: id}); err != nil {
				t.Fatal(err)
			}
		}
		r.mu.Lock()
		disp := r.takeDispLocked()
		r.mu.Unlock()
		if len(disp) == 0 {
			t.Fatal("no dispositions taken")
		}
		for range 3 { // Accepts while run writes disp
			id++
			if err := r.dispose(ctx, dispReq{id: id}); err != nil {
				t.Fatal(err)
			}
		}
		clear(disp)
		r.mu.Lock()
		r.dispSpare = disp[:0]
		r.mu.Unlock()
	}
	for range 3 {
		cycle()
	}
	if n := testing.AllocsPerRun(100, cycle); n != 0 {
		t.Fatalf("%.1f allocations per cycle of queued dispositions, want 0", n)
	}
}
