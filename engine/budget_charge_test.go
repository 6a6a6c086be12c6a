package engine

import "testing"

// TestCharge: what the application charges counts in Held, within
// MaxMemory; a link's charge is given back with the link.
func TestCharge(t *testing.T) {
	c := NewServer(Config{MaxMemory: 10_000}, NopHandler{})
	base, _ := c.Held()
	if !c.Charge(4000) || c.Charge(10_000-base-4000+1) || c.Charge(-1) {
		t.Fatal("a charge within the budget refused, or one past it taken")
	}
	if now, _ := c.Held(); now != base+4000 {
		t.Fatalf("held %d, want %d", now, base+4000)
	}
	c.Refund(4000)
	if now, _ := c.Held(); now != base {
		t.Fatalf("held %d after the refund, want %d", now, base)
	}
}
