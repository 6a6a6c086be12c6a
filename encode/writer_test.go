package encode

import (
	"encoding/hex"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/internal/cases"
	"github.com/amqpsax/amqpsax/internal/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var writerCases = []struct {
	name, trace, hex string
	wide             string // the hex with Wide set, when it differs
}{
	{"primitives", "null bool:true uint:0 uint:7 ulong:300 int:-1 long:-200 string:6869 symbol:6b binary:",
		"40414352078000000000000001" + "2c54ff81ffffffffffffff38a1026869a3016ba000", ""},
	{"empty list", "list:0 /list", "45", "d0000000040000000" + "0"},
	{"list8", "list:2 uint:1 null /list", "c00402520140", "d0000000070000000252" + "0140"},
	{"map8", "map:1 symbol:6b int:1 /map", "c10602a3016b5401", "d1000000090000000" + "2a3016b5401"},
	{"nested", "list:1 map:1 string:61 list:0 /list /map /list", "c00801c10502a1016145", ""},
	{"described", "described ulong:112 list:1 bool:false /list /described", "005370c0020142", ""},
	{"array of int", "array:2:int int:1 int:-1 /array", "e00a027100000001ffffffff", ""},
	{"array of bool", "array:2:boolean bool:true bool:false /array", "e004025601" + "00", ""},
	{"array of string", "array:1:string string:6869 /array", "e00801b1000000026869", ""},
	{"array of list", "array:2:list list:1 uint:1 /list list:0 /list /array",
		"e01402d0" + "000000060000000152" + "01" + "0000000400000000", ""},
	{"array of array", "array:1:array array:1:ubyte ubyte:9 /array /array",
		"e00c01f0" + "00000006" + "00000001" + "50" + "09", ""},
	{"array of described", "array:2:described described ulong:112 uint:1 /described described ulong:112 uint:2 /described /array",
		"e00d0200537070" + "00000001" + "00000002", ""},
	{"empty described array", "array:0:described /array", "e0040000" + "4040", ""},
	{"empty int array", "array:0:int /array", "e0020071", ""},
	{"array in described", "described symbol:61 array:1:null null /array /described", "00a30161e0020140", ""},
}

func TestWriter(t *testing.T) {
	var w Writer
	for _, tc := range writerCases {
		t.Run(tc.name, func(t *testing.T) {
			for _, wide := range []bool{false, true} {
				w.Reset()
				w.Wide = wide
				require.NoError(t, trace.Replay(tc.trace, &w))
				assert.Zero(t, w.Depth())
				want := tc.hex
				if wide && tc.wide != "" {
					want = tc.wide
				}
				if wide && tc.wide == "" {
					continue // the compact form only
				}
				assert.Equal(t, want, hex.EncodeToString(w.Bytes()), "wide=%v", wide)
			}
		})
	}
}

func TestWriterErrors(t *testing.T) {
	tests := []struct {
		name, trace string
		err         error
	}{
		{"end without start", "/list", ErrUnbalanced},
		{"mismatched end", "list:0 /map", ErrUnbalanced},
		{"odd map", "map:1 uint:1 /map", ErrOddMap},
		{"described arity", "described uint:1 /described", ErrDescribedArity},
		{"described arity 3", "described uint:1 uint:2 uint:3", ErrDescribedArity},
		{"array kind mismatch", "array:1:int uint:1", ErrArrayElement},
		{"described in int array", "array:1:int described", ErrArrayElement},
		{"plain in described array", "array:1:described uint:1", ErrArrayElement},
		{"different descriptors", "array:2:described described ulong:1 uint:1 /described described ulong:2 uint:1", ErrArrayDescriptor},
		{"different value kinds", "array:2:described described ulong:1 uint:1 /described described ulong:1 int:1", ErrArrayDescriptor},
		{"compound descriptor", "array:1:described described list:0", ErrArrayDescriptor},
		{"invalid kind", "", ErrArrayKind},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var w Writer
			var err error
			if tc.trace == "" {
				err = w.OnArrayStart(0, amqpsax.KindInvalid)
			} else {
				err = trace.Replay(tc.trace, &w)
			}
			assert.ErrorIs(t, err, tc.err)
		})
	}
}

// TestWriterAllocs: a warm Writer re-encodes without allocating.
func TestWriterAllocs(t *testing.T) {
	var w Writer
	for _, tc := range writerCases {
		// Replaying a trace parses text, which allocates; so replay into a
		// recorder of calls once, then drive the Writer from that.
		var calls []func(*Writer)
		rec := &callRecorder{calls: &calls}
		require.NoError(t, trace.Replay(tc.trace, rec))
		run := func() {
			w.Reset()
			for _, c := range calls {
				c(&w)
			}
		}
		run()
		assert.Zero(t, testing.AllocsPerRun(50, run), tc.name)
	}
}

// TestWriterBatches: batches write the same bytes as elements one by one.
func TestWriterBatches(t *testing.T) {
	var a, b Writer
	require.NoError(t, trace.Replay("array:3:long long:1 long:-2 long:3 /array", &a))
	require.NoError(t, b.OnArrayStart(3, amqpsax.KindLong))
	require.NoError(t, b.OnLongArray([]int64{1, -2}))
	require.NoError(t, b.OnLongArray([]int64{3}))
	require.NoError(t, b.OnArrayEnd())
	assert.Equal(t, a.Bytes(), b.Bytes())
	assert.ErrorIs(t, b.OnIntArray([]int32{1}), ErrArrayElement) // not in an array
	b.Reset()
	require.NoError(t, b.OnArrayStart(1, amqpsax.KindInt))
	assert.ErrorIs(t, b.OnLongArray([]int64{1}), ErrArrayElement) // wrong kind
	assert.Equal(t, "03616263", hex.EncodeToString(AppendStringElem(nil, amqpsax.CodeSym8, "abc")))
	assert.Equal(t, "00000003616263", hex.EncodeToString(AppendStringElem(nil, amqpsax.CodeStr32, "abc")))
}

// Through OnArrayDescriptor an empty array of described values keeps its
// descriptor and element type in a re-encoding, and the descriptor takes
// its smallest encoding, which the elements' replayed descriptors match.
func TestWriterArrayDescriptor(t *testing.T) {
	for _, tt := range []struct{ in, out string }{
		{"e005000053" + "70" + "40", "e005000053" + "70" + "40"},
		{"e00c00" + "00800000000000000073" + "a1", "e005000053" + "73" + "b1"},
		{"e00b03" + "00b30000000361626340", "e00803" + "00a3036162634" + "0"},
		{"e00e02" + "0080000000000000007352" + "0102", "e00d02005373" + "70" + "00000001" + "00000002"},
	} {
		var w Writer
		_, err := dispatch.Decode(cases.Bytes(tt.in), &w)
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.out, hex.EncodeToString(w.Bytes()), tt.in)
	}
	var w Writer
	require.NoError(t, w.OnArrayStart(0, amqpsax.KindDescribed))
	assert.ErrorIs(t, w.OnArrayDescriptor(cases.Bytes("c00100"), amqpsax.KindNull), ErrArrayDescriptor)
	assert.ErrorIs(t, w.OnArrayDescriptor(cases.Bytes("5373ff"), amqpsax.KindNull), ErrArrayDescriptor)
	assert.ErrorIs(t, w.OnArrayDescriptor(cases.Bytes("5373"), amqpsax.KindDescribed), ErrArrayKind)
	require.NoError(t, w.OnArrayDescriptor(cases.Bytes("5373"), amqpsax.KindNull))
	assert.ErrorIs(t, w.OnArrayDescriptor(cases.Bytes("5373"), amqpsax.KindNull), ErrArrayDescriptor, "twice")
}
