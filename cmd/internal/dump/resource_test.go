package dump

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The resource tests build adversarial inputs (one delivery in many
// transfers, deep and wide arrays) at two sizes and check that what printing them costs, counted
// (bytes written, values visited, offsets looked up), grows at most
// linearly: doubling the input may at most double it. Nothing is timed.

// cost is what printing an input cost.
type cost struct {
	in, out, work int64
	json          bool
}

// checkLinear fails unless doubling the part of the input that grows
// (large is built as small, with twice as much of it) at most doubled the
// output and the work (with 1% and a constant of slack), and the output
// stays within maxPerByte bytes per input byte.
func checkLinear(t *testing.T, small, large cost) {
	t.Helper()
	t.Logf("input %d → %d bytes; output %d → %d bytes; work %d → %d", small.in, large.in, small.out, large.out, small.work, large.work)
	require.Greater(t, large.in, small.in)
	assert.LessOrEqual(t, large.out, 2*small.out*101/100+1000, "output grows faster than the input")
	assert.LessOrEqual(t, large.work, 2*small.work*101/100+1000, "work grows faster than the input")
	limit := int64(maxPerByte)
	if large.json {
		limit = maxPerByteJSON
	}
	assert.LessOrEqual(t, large.out, limit*large.in, "output per input byte")
}

// scale is the size of the small inputs, in units of each test's choosing:
// smaller with -short (the race detector makes the large ones slow).
func scale(n int) int {
	if testing.Short() {
		return n / 4
	}
	return n
}

// maxPerByte bounds the bytes of text printed per input byte in these
// tests; maxPerByteJSON the bytes of JSON, which leaves nothing out: an
// array of 255 nulls in 4 bytes is 255 "null," and the array's type.
const (
	maxPerByte     = 100
	maxPerByteJSON = 340
)

// printValues prints data as amqpdump does without -frames.
func printValues(t *testing.T, data []byte, opts Options) cost {
	t.Helper()
	var b bytes.Buffer
	out := NewOut(&b)
	out.Offsets, out.Width = true, 10 // a width that does not grow with the input
	v := NewValues(out, opts)
	require.NoError(t, v.Print(data))
	return cost{int64(len(data)), int64(b.Len()), int64(v.Work()), opts.JSON}
}

// printFrames prints data as amqpdump -frames -o does.
func printFrames(t *testing.T, data []byte, opts Options) cost {
	t.Helper()
	var b bytes.Buffer
	out := NewOut(&b)
	out.Offsets, out.Width = true, 10 // a width that does not grow with the input
	opts.OnFault = func(err error) { t.Error(err) }
	s := NewStream(out, opts)
	s.WriteAll(data)
	require.NoError(t, out.Err())
	return cost{int64(len(data)), int64(b.Len()), int64(s.Work()), opts.JSON}
}

// oneDelivery is a connection stream with one delivery spread over n
// transfer frames: a message whose body is a list of 8n distinct ulongs,
// so that it prints about 8n lines, each of whose offsets lies in one of
// the n frames.
func oneDelivery(n int) []byte {
	msg := encode.AppendDescribed(nil)
	msg = encode.AppendUlong(msg, uint64(amqpsax.DescriptorAMQPValue))
	start := len(msg)
	msg = encode.BeginList(msg)
	for i := range 8 * n {
		msg = encode.AppendUlong(msg, uint64(1000+i))
	}
	msg = encode.EndList32(msg, start, 8*n)
	b := frame.AppendProtocolHeader(nil, frame.HeaderAMQP)
	chunk := (len(msg) + n - 1) / n
	for i := 0; i < n; i++ {
		part := msg[min(i*chunk, len(msg)):min((i+1)*chunk, len(msg))]
		tr := frame.Transfer{Handle: 0, DeliveryID: frame.Some[uint32](7), DeliveryTag: []byte{7}, More: i < n-1}
		fs := len(b)
		b = frame.BeginFrame(b, frame.TypeAMQP, 0)
		b = frame.AppendTransfer(b, tr)
		b = append(b, part...)
		b = frame.EndFrame(b, fs)
	}
	return b
}

// TestOneDeliveryManyTransfers: with -o, each line of a
// message joined from n transfers finds its offset among n segments:
// looked up from the start every time, that is quadratic.
func TestOneDeliveryManyTransfers(t *testing.T) {
	n := scale(2000)
	small := printFrames(t, oneDelivery(n), Options{})
	large := printFrames(t, oneDelivery(2*n), Options{})
	checkLinear(t, small, large)
}

// TestOneDeliveryOffsets: the offsets printed inside a message joined
// from many transfers are those of the input.
func TestOneDeliveryOffsets(t *testing.T) {
	data := oneDelivery(50)
	var b bytes.Buffer
	out := NewOut(&b)
	out.Offsets, out.Width = true, 1
	NewStream(out, Options{OnFault: func(err error) { t.Error(err) }}).WriteAll(data)
	// Every ulong line's offset holds the ulong's constructor (smallulong
	// 0x53 or ulong 0x80) followed by its value.
	lines := 0
	for _, line := range bytes.Split(b.Bytes(), []byte("\n")) {
		var off int
		var v uint64
		if _, err := fmt.Sscanf(string(bytes.TrimSpace(line)), "%d ulong %d", &off, &v); err != nil {
			continue
		}
		lines++
		require.Less(t, off, len(data))
		assert.Contains(t, []byte{0x53, 0x80}, data[off], "line %q", line)
	}
	assert.Equal(t, 8*50, lines)
}

// wrapped returns inner inside depth list32s.
func wrapped(depth int, inner []byte) []byte {
	for range depth {
		inner = encode.EndList32(append(encode.BeginList(nil), inner...), 0, 1)
	}
	return inner
}

// zeroWidthArrays returns k arrays of zero-width elements, 4 bytes each:
// array8s of 206 to 255 nulls, trues, falses, uint0s or ulong0s, each
// different from the one before, so none is summed up with its
// neighbours. The pattern repeats every 50 arrays, so that k and 2k
// arrays (k a multiple of 50) print exactly in proportion.
func zeroWidthArrays(k int) []byte {
	var b []byte
	codes := []byte{0x40, 0x41, 0x42, 0x43, 0x44}
	for i := range k {
		b = append(b, 0xe0, 0x02, byte(255-i%50), codes[i%len(codes)])
	}
	return b
}

// TestZeroWidthArraysDeep: zero-width arrays under 995
// wrappers (13,060 bytes printed 525 MB: 255 lines an array, each
// indented by 1,990 spaces).
func TestZeroWidthArraysDeep(t *testing.T) {
	build := func(k int) []byte {
		inner := encode.BeginList(nil)
		inner = append(inner, zeroWidthArrays(k)...)
		return wrapped(995, encode.EndList32(inner, 0, k))
	}
	k := scale(1000)
	small := printValues(t, build(k), Options{})
	large := printValues(t, build(2*k), Options{})
	checkLinear(t, small, large)
	smallJSON := printValues(t, build(k), Options{JSON: true})
	largeJSON := printValues(t, build(2*k), Options{JSON: true})
	checkLinear(t, smallJSON, largeJSON)
}

// TestArraysOfNulls: 400 KB of arrays of 255 nulls
// (232 MB printed), the same array over and over, and arrays that differ
// from their neighbours.
func TestArraysOfNulls(t *testing.T) {
	same := func(k int) []byte { return bytes.Repeat([]byte{0xe0, 0x02, 0xff, 0x40}, k) }
	k := scale(50_000) // 200 KB, then 400 KB
	checkLinear(t, printValues(t, same(k), Options{}), printValues(t, same(2*k), Options{}))
	checkLinear(t, printValues(t, zeroWidthArrays(k), Options{}), printValues(t, zeroWidthArrays(2*k), Options{}))
	checkLinear(t, printValues(t, same(k), Options{JSON: true}), printValues(t, same(2*k), Options{JSON: true}))
}

// TestRunsInFrames: the arrays of nulls inside a message, in frames.
func TestRunsInFrames(t *testing.T) {
	build := func(k int) []byte {
		msg := encode.AppendDescribed(nil)
		msg = encode.AppendUlong(msg, uint64(amqpsax.DescriptorAMQPSequence))
		start := len(msg)
		msg = encode.BeginList(msg)
		msg = append(msg, zeroWidthArrays(k)...)
		msg = encode.EndList32(msg, start, k)
		b := frame.AppendProtocolHeader(nil, frame.HeaderAMQP)
		tr := frame.Transfer{DeliveryID: frame.Some[uint32](0), DeliveryTag: []byte{1}}
		b = frame.BeginFrame(b, frame.TypeAMQP, 0)
		b = frame.AppendTransfer(b, tr)
		b = append(b, msg...)
		return frame.EndFrame(b, 8)
	}
	k := scale(10_000)
	checkLinear(t, printFrames(t, build(k), Options{}), printFrames(t, build(2*k), Options{}))
	checkLinear(t, printFrames(t, build(k), Options{JSON: true}), printFrames(t, build(2*k), Options{JSON: true}))
}

// TestLimit: output stops at the limit, with whole lines, and says where.
func TestLimit(t *testing.T) {
	data := zeroWidthArrays(1000)
	var b bytes.Buffer
	out := NewOut(&b)
	out.Limit = 1000
	err := NewValues(out, Options{}).Print(data)
	var le *LimitError
	require.ErrorAs(t, err, &le)
	assert.LessOrEqual(t, b.Len(), 1000)
	assert.Positive(t, b.Len())
	assert.Equal(t, byte('\n'), b.Bytes()[b.Len()-1], "whole lines")
	assert.Positive(t, le.At)
	assert.Contains(t, err.Error(), "output limit of 1000 bytes reached at input offset ")
}

// longDescriptorArray is a descriptor flood: an array of described
// values whose descriptor is an l-byte sym32 and whose elements are
// zero-width nulls, as many as the decoders accept (255 + 32 × size).
func longDescriptorArray(l int) []byte {
	size := l + 11
	b := []byte{0xf0}
	b = binary.BigEndian.AppendUint32(b, uint32(size))
	b = binary.BigEndian.AppendUint32(b, uint32(255+32*size))
	b = append(b, 0x00, 0xb3)
	b = binary.BigEndian.AppendUint32(b, uint32(l))
	b = append(b, bytes.Repeat([]byte{'a'}, l)...)
	return append(b, 0x40)
}

// TestLongDescriptorArray: the descriptor of an array of described values
// is printed once, not once an element (which would be 32 × l² bytes for
// l bytes of descriptor), in text and in JSON.
func TestLongDescriptorArray(t *testing.T) {
	l := scale(2000)
	checkLinear(t, printValues(t, longDescriptorArray(l), Options{}), printValues(t, longDescriptorArray(2*l), Options{}))
	checkLinear(t, printValues(t, longDescriptorArray(l), Options{JSON: true}), printValues(t, longDescriptorArray(2*l), Options{JSON: true}))
}
