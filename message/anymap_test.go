package message

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAnyMapAllocLinear: AnyMap allocates at most stream's bound (128
// bytes per byte) of the section, and twice the section at most twice
// the bytes: a map whose values are arrays of 255 nulls (four bytes each)
// is refused with stream.ErrAnyLimit, and a map of many small entries,
// each read with its own budget, stays within the bound.
func TestAnyMapAllocLinear(t *testing.T) {
	nulls := func(n int) []byte { // n entries "kNNNNNN" → array8 of 255 nulls
		return mkSection(amqpsax.DescriptorApplicationProperties, false, func(b []byte) []byte {
			s := len(b)
			b = encode.BeginMap(b)
			for i := range n {
				b = encode.AppendString(b, fmt.Sprintf("k%06d", i))
				b = append(b, 0xe0, 0x02, 0xff, 0x40)
			}
			return encode.EndMap32(b, s, n)
		})
	}
	small := func(n int) []byte { // n entries "kNNNNNN" → list0
		return mkSection(amqpsax.DescriptorApplicationProperties, false, func(b []byte) []byte {
			s := len(b)
			b = encode.BeginMap(b)
			for i := range n {
				b = encode.AppendString(b, fmt.Sprintf("k%06d", i))
				b = append(b, 0x45)
			}
			return encode.EndMap32(b, s, n)
		})
	}
	allocated := func(sec []byte) (uint64, error) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m, err := AnyMap(sec)
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(m)
		return after.TotalAlloc - before.TotalAlloc, err
	}
	for _, tc := range []struct {
		name  string
		build func(int) []byte
		limit bool
	}{{"arrays of 255 nulls", nulls, true}, {"small entries", small, false}} {
		t.Run(tc.name, func(t *testing.T) {
			s1, s2 := tc.build(5000), tc.build(10000)
			a1, err1 := allocated(s1)
			a2, err2 := allocated(s2)
			t.Logf("%d bytes: %d allocated; %d bytes: %d", len(s1), a1, len(s2), a2)
			for _, err := range []error{err1, err2} {
				if tc.limit {
					require.ErrorIs(t, err, stream.ErrAnyLimit)
				} else {
					require.NoError(t, err)
				}
			}
			assert.LessOrEqual(t, a1, uint64(128*len(s1)))
			assert.LessOrEqual(t, a2, uint64(128*len(s2)))
			assert.LessOrEqual(t, float64(a2), 2.2*float64(max(a1, 1024)), "twice the section, more than twice the bytes")
		})
	}
}
