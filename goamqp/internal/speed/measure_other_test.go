//go:build !linux

package speed

import "testing"

// Elsewhere than on Linux the benchmarks report time, bytes and
// allocations only.
func measureBegin() {}

func measureEnd(*testing.B) {}
