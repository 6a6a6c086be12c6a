package stream

import (
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/internal/cases"
	"github.com/amqpsax/amqpsax/internal/corpus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestElem(t *testing.T) {
	var c Cursor
	c.Reset(cases.Bytes("c00704" + "5201" + "5202" + "40" + "41"))
	require.True(t, c.Next())
	require.True(t, c.Enter())
	require.True(t, c.Seek(1))
	assert.Equal(t, uint64(2), c.Uint())
	require.True(t, c.Seek(1), "staying put")
	assert.False(t, c.Seek(0), "cannot go back")
	require.True(t, c.Seek(3))
	assert.True(t, c.Bool())
	assert.False(t, c.Seek(4))
	require.NoError(t, c.Err())
}

func TestLookup(t *testing.T) {
	b := encode.BeginMap(nil)
	b = encode.AppendSymbol(b, "a")
	b = encode.AppendString(b, "A")
	b = encode.AppendUint(b, 7) // a non-string key
	b = encode.AppendString(b, "seven")
	b = encode.AppendString(b, "region")
	b = encode.AppendString(b, "eu-west")
	b = encode.AppendString(b, "x")
	ls := len(b)
	b = encode.BeginList(b) // a value that must be skipped, not read
	b = encode.AppendNull(b)
	b = encode.EndList(b, ls, 1)
	b = encode.EndMap(b, 0, 4)
	var c Cursor
	c.Reset(b)
	require.True(t, c.Next())
	require.NoError(t, c.Err())
	require.True(t, c.Enter())
	require.True(t, c.SeekKey("region"))
	assert.Equal(t, "eu-west", string(c.Bytes()))
	assert.False(t, c.SeekKey("a"), "searches forward only")
	require.NoError(t, c.Err())
	require.True(t, c.Exit())
	assert.False(t, c.Next())
	require.NoError(t, c.Err())
}

func TestDescriptor(t *testing.T) {
	var c Cursor
	for _, tc := range []struct {
		hex string
		d   amqpsax.Descriptor
		sym string
		ok  bool
	}{
		{"005373" + "45", amqpsax.DescriptorProperties, "", true},
		{"00800000000000000073" + "45", amqpsax.DescriptorProperties, "", true},
		{"0044" + "45", 0, "", true},
		{"00a314616d71703a70726f706572746965733a6c697374" + "45", amqpsax.DescriptorProperties, "amqp:properties:list", true},
		{"00a30178" + "45", 0, "x", true},
		{"005201" + "45", 0, "", false},
		{"45", 0, "", false},
	} {
		c.Reset(cases.Bytes(tc.hex))
		require.True(t, c.Next())
		d, sym, ok := c.Descriptor()
		assert.Equal(t, tc.ok, ok, tc.hex)
		assert.Equal(t, tc.d, d, tc.hex)
		assert.Equal(t, tc.sym, string(sym), tc.hex)
	}
	// inside an array of described values, without entering the element
	c.Reset(cases.Bytes("e00702005373" + "52" + "0102"))
	require.True(t, c.Next())
	require.True(t, c.Enter())
	require.True(t, c.Next())
	d, _, ok := c.Descriptor()
	assert.True(t, ok)
	assert.Equal(t, amqpsax.DescriptorProperties, d)
}

func TestAppendNumbers(t *testing.T) {
	var c Cursor
	c.Reset(cases.Bytes("e00a0271ffffffff00000001"))
	require.True(t, c.Next())
	assert.Equal(t, []int64{-1, 1}, c.AppendInts(nil))
	c.Reset(cases.Bytes("e004025201ff"))
	require.True(t, c.Next())
	assert.Equal(t, []uint64{1, 255}, c.AppendUints(nil))
	c.Reset(cases.Bytes("e00a01823ff0000000000000"))
	require.True(t, c.Next())
	assert.Equal(t, []float64{1}, c.AppendDoubles(nil))
	c.Reset(cases.Bytes("e00601723f800000"))
	require.True(t, c.Next())
	assert.Equal(t, []float32{1}, c.AppendFloats(nil))
	c.Reset(cases.Bytes("e00a0183000000000000000a"))
	require.True(t, c.Next())
	assert.Equal(t, []int64{10}, c.AppendTimestamps(nil))
	dst := make([]int64, 0, 8)
	c.Reset(cases.Bytes("e00a0271ffffffff00000001"))
	c.Next()
	assert.Zero(t, testing.AllocsPerRun(100, func() { dst = c.AppendInts(dst[:0]) }))
	// wrong kind
	c.Reset(cases.Bytes("e0040250" + "0102"))
	c.Next()
	assert.Nil(t, c.AppendInts(nil))
	assert.ErrorIs(t, c.Err(), amqpsax.ErrWrongKind)
}

// walkAll reads every value and calls every getter that fits, discarding
// the results: the allocation test's full walk.
func walkAll(c *Cursor) {
	for c.Next() {
		switch c.Kind() {
		case amqpsax.KindBool:
			c.Bool()
		case amqpsax.KindUbyte, amqpsax.KindUshort, amqpsax.KindUint, amqpsax.KindUlong:
			c.Uint()
		case amqpsax.KindByte, amqpsax.KindShort, amqpsax.KindInt, amqpsax.KindLong:
			c.Int()
		case amqpsax.KindFloat:
			c.Float()
		case amqpsax.KindDouble:
			c.Double()
		case amqpsax.KindDecimal32:
			c.Decimal32()
		case amqpsax.KindDecimal64:
			c.Decimal64()
		case amqpsax.KindDecimal128:
			c.Decimal128()
		case amqpsax.KindChar:
			c.Char()
		case amqpsax.KindTimestamp:
			c.Timestamp()
		case amqpsax.KindUUID:
			c.UUID()
		case amqpsax.KindBinary, amqpsax.KindString, amqpsax.KindSymbol:
			c.Bytes()
		case amqpsax.KindList, amqpsax.KindMap, amqpsax.KindArray, amqpsax.KindDescribed:
			c.Raw()
			c.Count()
			if c.Enter() {
				walkAll(c)
				c.Exit()
			}
		}
	}
}

// TestAllocs: zero allocations for a full walk calling every getter, and
// for a skip-only walk, over the case table and the whole Proton corpus.
func TestAllocs(t *testing.T) {
	var inputs [][]byte
	for _, tc := range cases.Valid {
		inputs = append(inputs, cases.Bytes(tc.Hex))
	}
	for _, e := range corpus.All(t) {
		inputs = append(inputs, e.Data)
	}
	var c Cursor
	full := func() {
		for _, in := range inputs {
			c.Reset(in)
			walkAll(&c)
		}
	}
	full()
	for _, in := range inputs {
		c.Reset(in)
		walkAll(&c)
		require.NoError(t, c.Err())
	}
	assert.Zero(t, testing.AllocsPerRun(5, full), "full walk")
	skip := func() {
		for _, in := range inputs {
			c.Reset(in)
			for c.Next() {
			}
		}
	}
	assert.Zero(t, testing.AllocsPerRun(5, skip), "skip-only walk")
}

func TestAppendBytes(t *testing.T) {
	var c Cursor
	for _, h := range []string{"e00702a3" + "0161" + "026263", "e00b02b1" + "0000000161" + "00000000"} {
		c.Reset(cases.Bytes(h))
		require.True(t, c.Next())
		got := c.AppendBytes(nil)
		require.NoError(t, c.Err())
		require.Len(t, got, 2)
		assert.Equal(t, "a", string(got[0]))
	}
	// Faults agree with a walk of the same array, for every case of the
	// table that is an array of variable-width elements, cut or whole.
	var w Cursor
	checked := 0
	for _, tc := range append(cases.Valid, cases.Case{Name: "bad elem", Hex: "e00402a1" + "0561"}) {
		in := cases.Bytes(tc.Hex)
		if in[0] != 0xe0 && in[0] != 0xf0 {
			continue
		}
		c.Reset(in)
		if !c.Next() || c.ElemKind() < amqpsax.KindBinary || c.ElemKind() > amqpsax.KindSymbol {
			continue
		}
		got := c.AppendBytes(nil)
		checked++
		w.Reset(in)
		var rec []string
		walkErr := func() error {
			w.Next()
			w.Enter()
			for w.Next() {
				rec = append(rec, string(w.Bytes()))
			}
			return w.Err()
		}()
		assert.True(t, sameFault(c.Err(), walkErr), "%s: %v vs %v", tc.Name, c.Err(), walkErr)
		if walkErr == nil {
			assert.Len(t, got, len(rec), tc.Name)
		}
	}
	assert.GreaterOrEqual(t, checked, 7, "arrays of binary, string and symbol in the case table")
	dst := make([][]byte, 0, 4)
	c.Reset(cases.Bytes("e00702a3" + "0161" + "026263"))
	c.Next()
	assert.Zero(t, testing.AllocsPerRun(100, func() { dst = c.AppendBytes(dst[:0]) }))
	c.Reset(cases.Bytes("e0040250" + "0102"))
	c.Next()
	assert.Nil(t, c.AppendBytes(nil))
	assert.ErrorIs(t, c.Err(), amqpsax.ErrWrongKind)
}

// Descriptor on an array of described values gives the descriptor its
// elements share, also when there are none.
func TestArrayDescriptor(t *testing.T) {
	for _, tt := range []struct {
		in  string
		d   amqpsax.Descriptor
		sym string
	}{
		{"e005000053" + "70" + "40", 0x70, ""},
		{"e00702005373" + "52" + "0102", 0x73, ""},
		{"e0190000a3" + "14616d71703a70726f706572746965733a6c697374" + "45", 0x73, "amqp:properties:list"},
	} {
		var c Cursor
		c.Reset(cases.Bytes(tt.in))
		require.True(t, c.Next())
		d, sym, ok := c.Descriptor()
		require.True(t, ok, tt.in)
		assert.Equal(t, tt.d, d)
		assert.Equal(t, tt.sym, string(sym))
	}
	var c Cursor
	c.Reset(cases.Bytes("e0020071"))
	require.True(t, c.Next())
	_, _, ok := c.Descriptor()
	assert.False(t, ok, "an array of int has no descriptor")
}

// ArrayCode and ArrayDescriptor give an array's constructor, empty or not.
func TestArrayCodeAndDescriptor(t *testing.T) {
	var c Cursor
	c.Reset(cases.Bytes("f0000000050000000071"))
	require.True(t, c.Next())
	assert.Equal(t, amqpsax.CodeInt, c.ArrayCode())
	assert.Nil(t, c.ArrayDescriptor())
	c.Reset(cases.Bytes("e0060000a1016141"))
	require.True(t, c.Next())
	assert.Equal(t, amqpsax.CodeTrue, c.ArrayCode())
	assert.Equal(t, cases.Bytes("a10161"), c.ArrayDescriptor())
	c.Reset(cases.Bytes("40"))
	c.Next()
	assert.Equal(t, amqpsax.Code(0), c.ArrayCode())
	assert.Nil(t, c.ArrayDescriptor())
	assert.NoError(t, c.Err())
}
