package stream

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// anyBytesPerByte is the bound the package doc's limits give: Any
// allocates at most this many bytes per byte of the value it reads.
const anyBytesPerByte = 128

// list32 wraps count encoded values in a list32.
func list32(count int, body []byte) []byte {
	b := []byte{byte(amqpsax.CodeList32)}
	b = binary.BigEndian.AppendUint32(b, uint32(4+len(body)))
	b = binary.BigEndian.AppendUint32(b, uint32(count))
	return append(b, body...)
}

// array32 is an array32 of count elements with the element constructor
// ctor (a described one included) and the elements' bodies.
func array32(count int, ctor, body []byte) []byte {
	b := []byte{byte(amqpsax.CodeArray32)}
	b = binary.BigEndian.AppendUint32(b, uint32(4+len(ctor)+len(body)))
	b = binary.BigEndian.AppendUint32(b, uint32(count))
	return append(append(b, ctor...), body...)
}

// bin32 is a binary of n zero bytes: the cheapest way to make a value long.
func bin32(n int) []byte {
	b := []byte{byte(amqpsax.CodeVbin32)}
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	return append(b, make([]byte, n)...)
}

func repeat(n int, hex ...byte) []byte {
	var b []byte
	for range n {
		b = append(b, hex...)
	}
	return b
}

// anyShapes are the inputs that make Any allocate the most for their
// length, each built for a size n (about n bytes): zero-width array
// elements as many as the budget allows (two a byte, the rest of the
// value paid for by a binary), small maps, empty lists, described
// values, one-byte strings; and the array of arrays of 255 nulls that
// asked 1,400 times its length before the budget.
var anyShapes = []struct {
	name  string
	build func(n int) []byte
	limit bool // Any refuses it: ErrMapKey
}{
	{"arrays of 255 nulls", func(n int) []byte { return list32(n/4, repeat(n/4, 0xe0, 0x02, 0xff, 0x40)) }, true},
	{"nulls paid by a binary", func(n int) []byte {
		return list32(1+n/130, append(bin32(n), repeat(n/130, 0xe0, 0x02, 0xff, 0x40)...))
	}, false},
	{"list0s paid by a binary", func(n int) []byte {
		return list32(1+n/130, append(bin32(n), repeat(n/130, 0xe0, 0x02, 0xff, 0x45)...))
	}, false},
	{"described nulls paid by their descriptor", func(n int) []byte {
		return array32(n-10, append(append([]byte{0x00}, bin32(n)...), 0x40), nil)
	}, false},
	{"maps of one entry", func(n int) []byte { return list32(n/5, repeat(n/5, 0xc1, 0x03, 0x02, 0x40, 0x40)) }, false},
	{"empty lists", func(n int) []byte { return list32(n, repeat(n, 0x45)) }, false},
	{"described nulls", func(n int) []byte { return list32(n/3, repeat(n/3, 0x00, 0x40, 0x40)) }, false},
	{"one-byte strings", func(n int) []byte { return list32(n/3, repeat(n/3, 0xa1, 0x01, 0x61)) }, false},
}

// anyAllocated returns the bytes Value.Any allocates reading data, and
// its error.
func anyAllocated(t *testing.T, data []byte) (uint64, error) {
	v, err := ParseValue(data)
	require.NoError(t, err)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	x, err := v.Any()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(x)
	return after.TotalAlloc - before.TotalAlloc, err
}

// TestAnyAllocLinear: Any allocates at most anyBytesPerByte a byte of its
// input, and twice the input at most twice the bytes, whatever the input
// claims (counts of zero-width elements included).
func TestAnyAllocLinear(t *testing.T) {
	const n = 60000
	for _, s := range anyShapes {
		t.Run(s.name, func(t *testing.T) {
			small, large := s.build(n), s.build(2*n)
			a1, err1 := anyAllocated(t, small)
			a2, err2 := anyAllocated(t, large)
			t.Logf("%d bytes: %d allocated (%.1f a byte); %d bytes: %d (%.1f)", len(small), a1, float64(a1)/float64(len(small)), len(large), a2, float64(a2)/float64(len(large)))
			for _, err := range []error{err1, err2} {
				if s.limit {
					assert.ErrorIs(t, err, ErrAnyLimit)
				} else {
					assert.NoError(t, err)
				}
			}
			assert.LessOrEqual(t, a1, uint64(anyBytesPerByte*len(small)))
			assert.LessOrEqual(t, a2, uint64(anyBytesPerByte*len(large)))
			assert.LessOrEqual(t, float64(a2), 2.2*float64(max(a1, 1024)), "twice the input, more than twice the bytes")
		})
	}
}

// TestAnyLimit: an array of nulls with more elements than twice its
// bytes is ErrAnyLimit at the array's offset, which stops the cursor; an
// array of described one-byte values, two values a byte, is read, its
// elements sharing the descriptor.
func TestAnyLimit(t *testing.T) {
	var c Cursor
	c.Reset(list32(2, []byte{0x40, 0xe0, 0x02, 0xff, 0x40}))
	require.True(t, c.Next())
	_, err := c.Any()
	assert.ErrorIs(t, err, ErrAnyLimit)
	var e *amqpsax.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 10, e.Offset)
	assert.Equal(t, amqpsax.CodeArray8, e.Code)
	assert.Equal(t, err, c.Err())
	assert.False(t, c.Next())

	// 1000 described ubytes under a symbol descriptor: 1,012 bytes.
	ctor := []byte{0x00, 0xa3, 0x03, 'a', 'b', 'c', byte(amqpsax.CodeUbyte)}
	v, err := ParseValue(array32(1000, ctor, repeat(1000, 7)))
	require.NoError(t, err)
	x, err := v.Any()
	require.NoError(t, err)
	elems := x.([]any)
	require.Len(t, elems, 1000)
	assert.Equal(t, Described{Symbol("abc"), uint8(7)}, elems[999])

	// Any on each element of an array of described nulls: the budget
	// counts the descriptor it is read with.
	c.Reset(array32(3, []byte{0x00, 0xa3, 0x03, 'a', 'b', 'c', 0x40}, nil))
	require.True(t, c.Next())
	require.True(t, c.Enter())
	n := 0
	for c.Next() {
		x, err := c.Any()
		require.NoError(t, err)
		assert.Equal(t, Described{Symbol("abc"), nil}, x)
		n++
	}
	require.NoError(t, c.Err())
	assert.Equal(t, 3, n)
}
