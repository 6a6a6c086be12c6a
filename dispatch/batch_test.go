package dispatch

import (
	"fmt"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/internal/cases"
	"github.com/amqpsax/amqpsax/internal/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// batchRecorder records batches as if they were element events, so its
// trace must equal the element-by-element trace.
type batchRecorder struct {
	trace.Recorder
	calls int
}

func each[T any](r *batchRecorder, v []T, f func(T) error) error {
	r.calls++
	for _, x := range v {
		f(x)
	}
	return nil
}

func (r *batchRecorder) OnBoolArray(v []bool) error     { return each(r, v, r.OnBool) }
func (r *batchRecorder) OnUbyteArray(v []uint8) error   { return each(r, v, r.OnUbyte) }
func (r *batchRecorder) OnUshortArray(v []uint16) error { return each(r, v, r.OnUshort) }
func (r *batchRecorder) OnUintArray(v []uint32) error   { return each(r, v, r.OnUint) }
func (r *batchRecorder) OnUlongArray(v []uint64) error  { return each(r, v, r.OnUlong) }
func (r *batchRecorder) OnByteArray(v []int8) error     { return each(r, v, r.OnByte) }
func (r *batchRecorder) OnShortArray(v []int16) error   { return each(r, v, r.OnShort) }
func (r *batchRecorder) OnIntArray(v []int32) error     { return each(r, v, r.OnInt) }
func (r *batchRecorder) OnLongArray(v []int64) error    { return each(r, v, r.OnLong) }
func (r *batchRecorder) OnFloatArray(v []float32) error { return each(r, v, r.OnFloat) }
func (r *batchRecorder) OnDoubleArray(v []float64) error {
	return each(r, v, r.OnDouble)
}
func (r *batchRecorder) OnCharArray(v []rune) error       { return each(r, v, r.OnChar) }
func (r *batchRecorder) OnTimestampArray(v []int64) error { return each(r, v, r.OnTimestamp) }

func TestBatchesMatchElements(t *testing.T) {
	var d Decoder
	for _, tc := range cases.Valid {
		var r batchRecorder
		_, err := d.Decode(cases.Bytes(tc.Hex), &r)
		require.NoError(t, err, tc.Name)
		assert.Equal(t, tc.Trace, r.String(), tc.Name)
	}
}

func TestBatchesChunked(t *testing.T) {
	const n = 1000
	b := encode.BeginArray(nil, amqpsax.CodeLong)
	var want strings.Builder
	fmt.Fprintf(&want, "array:%d:long", n)
	for i := range n {
		b = encode.AppendIntElem(b, amqpsax.CodeLong, int64(i)-500)
		fmt.Fprintf(&want, " long:%d", i-500)
	}
	b = encode.EndArray(b, 0, n)
	want.WriteString(" /array")
	var d Decoder
	var r batchRecorder
	_, err := d.Decode(b, &r)
	require.NoError(t, err)
	assert.Equal(t, want.String(), r.String())
	assert.Equal(t, (n+batchSize-1)/batchSize, r.calls)
}

type batchSkipper struct {
	batchRecorder
}

func (s *batchSkipper) OnIntArray([]int32) error { return amqpsax.SkipValue }

func TestBatchSkipValue(t *testing.T) {
	var d Decoder
	var s batchSkipper
	in := cases.Bytes("c00e02" + "e00a0271ffffffff00000001" + "40")
	n, err := d.Decode(in, &s)
	require.NoError(t, err)
	assert.Equal(t, len(in), n)
	assert.Equal(t, "list:2 array:2:int null /list", s.String())
	var r batchRecorder
	_, err = d.Decode(cases.Bytes("e004025601"+"02"), &r)
	assertFault(t, err, amqpsax.ErrInvalidBool, 5)
}

// batchCounter is a no-op BatchHandler, for allocation tests and benchmarks.
type batchCounter struct {
	amqpsax.NopHandler
	n int
}

func (c *batchCounter) OnBoolArray(v []bool) error       { c.n += len(v); return nil }
func (c *batchCounter) OnUbyteArray(v []uint8) error     { c.n += len(v); return nil }
func (c *batchCounter) OnUshortArray(v []uint16) error   { c.n += len(v); return nil }
func (c *batchCounter) OnUintArray(v []uint32) error     { c.n += len(v); return nil }
func (c *batchCounter) OnUlongArray(v []uint64) error    { c.n += len(v); return nil }
func (c *batchCounter) OnByteArray(v []int8) error       { c.n += len(v); return nil }
func (c *batchCounter) OnShortArray(v []int16) error     { c.n += len(v); return nil }
func (c *batchCounter) OnIntArray(v []int32) error       { c.n += len(v); return nil }
func (c *batchCounter) OnLongArray(v []int64) error      { c.n += len(v); return nil }
func (c *batchCounter) OnFloatArray(v []float32) error   { c.n += len(v); return nil }
func (c *batchCounter) OnDoubleArray(v []float64) error  { c.n += len(v); return nil }
func (c *batchCounter) OnCharArray(v []rune) error       { c.n += len(v); return nil }
func (c *batchCounter) OnTimestampArray(v []int64) error { c.n += len(v); return nil }
