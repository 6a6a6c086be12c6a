package dispatch

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/internal/cases"
	"github.com/amqpsax/amqpsax/internal/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValid(t *testing.T) {
	var d Decoder
	var rec trace.Recorder
	for _, tc := range cases.Valid {
		t.Run(tc.String(), func(t *testing.T) {
			rec.Reset()
			in := cases.Bytes(tc.Hex)
			n, err := d.Decode(in, &rec)
			require.NoError(t, err)
			assert.Equal(t, len(in), n)
			assert.Equal(t, tc.Trace, rec.String())
		})
	}
}

func TestInvalid(t *testing.T) {
	var d Decoder
	for _, tc := range cases.Invalid {
		t.Run(tc.String(), func(t *testing.T) {
			_, err := d.Decode(cases.Bytes(tc.Hex), amqpsax.NopHandler{})
			assertFault(t, err, tc.Err, tc.Offset)
		})
	}
	for _, tc := range cases.InvalidText {
		t.Run(tc.String(), func(t *testing.T) {
			_, err := d.Decode(cases.Bytes(tc.Hex), amqpsax.NopHandler{})
			assert.NoError(t, err, "validation off")
			v := Decoder{Validate: true}
			_, err = v.Decode(cases.Bytes(tc.Hex), amqpsax.NopHandler{})
			assertFault(t, err, tc.Err, tc.Offset)
		})
	}
}

func assertFault(t *testing.T, err, cause error, off int) {
	t.Helper()
	require.Error(t, err)
	assert.ErrorIs(t, err, cause)
	var e *amqpsax.Error
	require.True(t, errors.As(err, &e), "%T %v", err, err)
	assert.Equal(t, off, e.Offset, "offset in %v", err)
	assert.True(t, strings.HasPrefix(err.Error(), "dispatch: "), err.Error())
}

// TestTruncation cuts every valid case at every byte.
func TestTruncation(t *testing.T) {
	var d Decoder
	for _, tc := range cases.Valid {
		full := cases.Bytes(tc.Hex)
		for cut := range len(full) {
			_, err := d.Decode(full[:cut:cut], amqpsax.NopHandler{})
			if !assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "%s cut at %d", tc.Name, cut) {
				continue
			}
			var e *amqpsax.Error
			require.True(t, errors.As(err, &e))
			assert.Equal(t, cases.TruncOffset(full, cut), e.Offset, "%s cut at %d: %v", tc.Name, cut, err)
		}
	}
}

func TestDecodeAll(t *testing.T) {
	var all []byte
	var want []string
	for _, tc := range cases.Valid {
		all = append(all, cases.Bytes(tc.Hex)...)
		want = append(want, tc.Trace)
	}
	var d Decoder
	var rec trace.Recorder
	require.NoError(t, d.DecodeAll(all, &rec))
	assert.Equal(t, strings.Join(want, " "), rec.String())
	require.NoError(t, d.DecodeAll(nil, &rec))
	// A trailing fault is reported at its offset.
	err := d.DecodeAll(append(all, 0x3f), amqpsax.NopHandler{})
	assertFault(t, err, amqpsax.ErrInvalidCode, len(all))
}

// TestRoundTrip: decode → encode.Writer → decode gives the same events.
func TestRoundTrip(t *testing.T) {
	var d Decoder
	var w encode.Writer
	var rec trace.Recorder
	for _, tc := range cases.Valid {
		w.Reset()
		_, err := d.Decode(cases.Bytes(tc.Hex), &w)
		require.NoError(t, err, tc.Name)
		rec.Reset()
		n, err := d.Decode(w.Bytes(), &rec)
		require.NoError(t, err, tc.Name)
		assert.Equal(t, len(w.Bytes()), n, tc.Name)
		assert.Equal(t, tc.Trace, rec.String(), tc.Name)
	}
}

// skipper returns SkipValue from every …Start method of the kinds in skip
// and records the events it sees.
type skipper struct {
	trace.Recorder
	skip map[string]bool
}

func (s *skipper) OnListStart(n int) error {
	s.Recorder.OnListStart(n)
	return s.result("list")
}
func (s *skipper) OnMapStart(n int) error {
	s.Recorder.OnMapStart(n)
	return s.result("map")
}
func (s *skipper) OnArrayStart(n int, k amqpsax.Kind) error {
	s.Recorder.OnArrayStart(n, k)
	return s.result("array")
}
func (s *skipper) OnDescribedStart() error {
	s.Recorder.OnDescribedStart()
	return s.result("described")
}
func (s *skipper) result(kind string) error {
	if s.skip[kind] {
		return amqpsax.SkipValue
	}
	return nil
}

func TestSkipValue(t *testing.T) {
	tests := []struct {
		hex, skip, trace string
	}{
		{"c00302" + "43" + "40", "list", "list:2"},
		{"c10602a3016b5401", "map", "map:1"},
		{"e0040250" + "0102", "array", "array:2:ubyte"},
		{"005370" + "45", "described", "described"},
		{"00" + "00537040" + "5201", "described", "described"},
		{"c00702005370455201", "described", "list:2 described uint:1 /list"},
		{"e00702005373" + "52" + "0102", "described", "array:2:described described described /array"},
		{"c00701c00401c00100", "list", "list:1"},
		{"45", "list", "list:0"},
	}
	var d Decoder
	for _, tc := range tests {
		if tc.skip == "" {
			continue
		}
		s := &skipper{skip: map[string]bool{tc.skip: true}}
		in := cases.Bytes(tc.hex)
		n, err := d.Decode(in, s)
		require.NoError(t, err, tc.hex)
		assert.Equal(t, len(in), n, tc.hex)
		assert.Equal(t, tc.trace, s.String(), tc.hex)
	}
}

// TestSkipValueIsO1: a skipped list is not walked, so a list whose
// contents are garbage is skipped without error.
func TestSkipValueIsO1(t *testing.T) {
	in := cases.Bytes("d0000000" + "0c" + "00000003" + "3f3f3f3f3f3f3f3f")
	s := &skipper{skip: map[string]bool{"list": true}}
	n, err := Decode(in, s)
	require.NoError(t, err)
	assert.Equal(t, len(in), n)
	assert.Equal(t, "list:3", s.String())
}

type stopAfter struct {
	amqpsax.NopHandler
	n int
}

func (s *stopAfter) OnUint(uint32) error {
	s.n--
	if s.n == 0 {
		return amqpsax.SkipAll
	}
	return nil
}

func TestSkipAll(t *testing.T) {
	in := cases.Bytes("c00703" + "5201" + "5202" + "5203")
	n, err := Decode(in, &stopAfter{n: 2})
	require.NoError(t, err)
	assert.Equal(t, 7, n) // stopped after the second uint
}

type failing struct {
	amqpsax.NopHandler
	err error
}

func (f failing) OnString([]byte) error { return f.err }

func TestHandlerErrorUnchanged(t *testing.T) {
	myErr := fmt.Errorf("mine")
	_, err := Decode(cases.Bytes("c00401a10161"), failing{err: myErr})
	assert.Same(t, myErr, err)
	// SkipValue from a non-start method is an ordinary error.
	_, err = Decode(cases.Bytes("a10161"), failing{err: amqpsax.SkipValue})
	assert.Same(t, amqpsax.SkipValue, err)
}

func TestValidate(t *testing.T) {
	d := Decoder{Validate: true}
	_, err := d.Decode(cases.Bytes("c00401a101ff"), amqpsax.NopHandler{})
	assertFault(t, err, amqpsax.ErrInvalidUTF8, 3)
	_, err = d.Decode(cases.Bytes("a302"+"61c3"), amqpsax.NopHandler{})
	assertFault(t, err, amqpsax.ErrInvalidSymbol, 0)
	_, err = d.Decode(cases.Bytes("e00602a3"+"0161"+"0180"), amqpsax.NopHandler{})
	assertFault(t, err, amqpsax.ErrInvalidSymbol, 6)
	_, err = d.Decode(cases.Bytes("a10568c3a9e282"), amqpsax.NopHandler{})
	assertFault(t, err, amqpsax.ErrInvalidUTF8, 0)
	_, err = d.Decode(cases.Bytes("a10368c3a9"), amqpsax.NopHandler{})
	assert.NoError(t, err)
	// Off by default.
	_, err = Decode(cases.Bytes("a101ff"), amqpsax.NopHandler{})
	assert.NoError(t, err)
}

func TestMaxDepth(t *testing.T) {
	in := nestLists(3, false)
	d := Decoder{MaxDepth: 4}
	_, err := d.Decode(in, amqpsax.NopHandler{})
	assert.NoError(t, err)
	d.MaxDepth = 3
	_, err = d.Decode(in, amqpsax.NopHandler{})
	// list0 is a level like any list, as it is for a Cursor, which
	// enters it
	assertFault(t, err, amqpsax.ErrTooDeep, 9)
	d.MaxDepth = 2
	_, err = d.Decode(in, amqpsax.NopHandler{})
	assertFault(t, err, amqpsax.ErrTooDeep, 6)
	// described values count as levels
	d.MaxDepth = 1
	_, err = d.Decode(cases.Bytes("005301"+"005302"+"40"), amqpsax.NopHandler{})
	assertFault(t, err, amqpsax.ErrTooDeep, 3)
	_, err = d.Decode(cases.Bytes("e00702005373"+"52"+"0102"), amqpsax.NopHandler{})
	assertFault(t, err, amqpsax.ErrTooDeep, 7)
}

// TestHostile feeds inputs built to make a careless decoder do work or
// take memory in proportion to what they claim, and checks each fails
// fast with little memory.
func TestHostile(t *testing.T) {
	depthBomb := bytes.Repeat([]byte{0xc0, 0x01, 0x01}, 100000) // sizes that cannot hold their count
	depthBomb32 := nestLists(100000, true)                      // consistent sizes all the way down
	descBomb := bytes.Repeat([]byte{0x00}, 100000)
	tests := []struct {
		name  string
		in    []byte
		cause error
	}{
		{"100000 nested list8 headers", depthBomb, amqpsax.ErrCountTooLarge},
		{"100000 nested list32", depthBomb32, amqpsax.ErrTooDeep},
		{"100000 nested descriptors", descBomb, amqpsax.ErrTooDeep},
		{"list32 count 2^32-1, size 2^32-1", cases.Bytes("d0ffffffffffffffff"), amqpsax.ErrCountTooLarge},
		{"list32 count 2^32-1 in size", cases.Bytes("d000000004ffffffff"), amqpsax.ErrCountTooLarge},
		{"map32 count 2^32-2", cases.Bytes("d100000004fffffffe"), amqpsax.ErrCountTooLarge},
		{"array32 2^31 nulls", cases.Bytes("f0000000058000000040"), amqpsax.ErrCountTooLarge},
		{"array32 2^31 list0", cases.Bytes("f0000000058000000045"), amqpsax.ErrCountTooLarge},
		{"array32 2^31 described nulls", cases.Bytes("f0000000078000000000534040"), amqpsax.ErrCountTooLarge},
		{"str32 size 2^32-1", cases.Bytes("b1ffffffff"), io.ErrUnexpectedEOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var d Decoder
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := d.Decode(tc.in, amqpsax.NopHandler{})
			runtime.ReadMemStats(&after)
			assert.ErrorIs(t, err, tc.cause)
			// The decoder's own stack is bounded by MaxDepth frames.
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated")
		})
	}
}

// TestAllocs: a warm decoder with a no-op handler allocates nothing.
func TestAllocs(t *testing.T) {
	var d Decoder
	var all []byte
	for _, tc := range cases.Valid {
		all = append(all, cases.Bytes(tc.Hex)...)
	}
	h := amqpsax.NopHandler{}
	require.NoError(t, d.DecodeAll(all, h))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = d.DecodeAll(all, h) }))
	var bh batchCounter
	require.NoError(t, d.DecodeAll(all, &bh))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = d.DecodeAll(all, &bh) }))
}

// nestLists returns n lists nested in each other around a list0, each
// with a consistent size: list8 (n must be small) or list32.
func nestLists(n int, wide bool) []byte {
	out := make([]byte, 0, 9*n+1)
	// Build from the outside in: the size of level i covers the rest.
	for i := range n {
		if wide {
			inner := 9*(n-i-1) + 1
			out = append(out, 0xd0, 0, 0, 0, 0, 0, 0, 0, 1)
			binary.BigEndian.PutUint32(out[len(out)-8:], uint32(4+inner))
		} else {
			inner := 3*(n-i-1) + 1
			out = append(out, 0xc0, byte(1+inner), 1)
		}
	}
	return append(out, 0x45)
}

// descRecorder records the trace and each array descriptor it is given.
type descRecorder struct {
	trace.Recorder
	descs []string
}

func (r *descRecorder) OnArrayDescriptor(desc []byte, elem amqpsax.Kind) error {
	r.descs = append(r.descs, hex.EncodeToString(desc)+":"+elem.String())
	return nil
}

// An ArrayDescriptorHandler sees the descriptor of every array of
// described values once, before the elements, and also of an empty one.
func TestArrayDescriptor(t *testing.T) {
	for _, tt := range []struct{ in, trace, descs string }{
		{"e005000053" + "70" + "40", "array:0:described /array", "5370:null"},
		{"e00702005373" + "52" + "0102",
			"array:2:described described ulong:115 uint:1 /described described ulong:115 uint:2 /described /array", "5373:uint"},
		{"e00b03" + "00b30000000361626340",
			"array:3:described" + strings.Repeat(" described symbol:616263 null /described", 3) + " /array", "b300000003616263:null"},
		{"c00901" + "e006000080" + "0000", "", ""}, // bad: a short ulong descriptor
	} {
		var r descRecorder
		var d Decoder
		_, err := d.Decode(cases.Bytes(tt.in), &r)
		if tt.trace == "" {
			assert.Error(t, err)
			continue
		}
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.trace, r.String())
		assert.Equal(t, tt.descs, strings.Join(r.descs, " "))
	}
}

// offsetRecorder records Offset at every event.
type offsetRecorder struct {
	trace.Recorder
	d    *Decoder
	offs []int
}

func (r *offsetRecorder) at() { r.offs = append(r.offs, r.d.Offset()) }

func (r *offsetRecorder) OnUint(v uint32) error   { r.at(); return r.Recorder.OnUint(v) }
func (r *offsetRecorder) OnString(v []byte) error { r.at(); return r.Recorder.OnString(v) }
func (r *offsetRecorder) OnListStart(n int) error { r.at(); return r.Recorder.OnListStart(n) }
func (r *offsetRecorder) OnListEnd() error        { r.at(); return r.Recorder.OnListEnd() }
func (r *offsetRecorder) OnArrayStart(n int, k amqpsax.Kind) error {
	r.at()
	return r.Recorder.OnArrayStart(n, k)
}
func (r *offsetRecorder) OnDescribedStart() error { r.at(); return r.Recorder.OnDescribedStart() }
func (r *offsetRecorder) OnUlong(v uint64) error  { r.at(); return r.Recorder.OnUlong(v) }

// TestOffset: during a Handler call, Offset is the offset of the value
// being reported (an array element's body; the compound for an end).
func TestOffset(t *testing.T) {
	var d Decoder
	r := &offsetRecorder{d: &d}
	in := cases.Bytes("c00c03" + "5201" + "a10161" + "e0040252" + "0708")
	_, err := d.Decode(in, r)
	require.NoError(t, err)
	assert.Equal(t, "list:3 uint:1 string:61 array:2:uint uint:7 uint:8 /array /list", r.String())
	assert.Equal(t, []int{0, 3, 5, 8, 12, 13, 0}, r.offs)
	r = &offsetRecorder{d: &d}
	_, err = d.Decode(cases.Bytes("e00702005373"+"52"+"0102"), r)
	require.NoError(t, err)
	// array, element 1 (described start at its body), its replayed
	// descriptor (in the constructor), its value; element 2 likewise
	assert.Equal(t, []int{0, 7, 4, 7, 8, 4, 8}, r.offs)
}

// errAfter fails with its own *amqpsax.Error at the n-th uint.
type errAfter struct {
	amqpsax.NopHandler
	n int
}

var handlerErr = &amqpsax.Error{Op: "handler", Offset: 999, Err: errors.New("no")}

func (h *errAfter) OnUint(uint32) error {
	if h.n--; h.n == 0 {
		return handlerErr
	}
	return nil
}

// TestDecodeNHandlerError: n is where decoding stopped, whatever error the
// Handler returns (even an *amqpsax.Error of its own).
func TestDecodeNHandlerError(t *testing.T) {
	in := cases.Bytes("c00703" + "5201" + "5202" + "5203")
	n, err := Decode(in, &errAfter{n: 2})
	assert.Same(t, handlerErr, err)
	assert.Equal(t, 7, n)
}
