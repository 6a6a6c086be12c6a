package wire

import (
	"errors"
	"io"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var specCats = map[string]Cat{"fixed": Fixed, "variable": Variable, "compound": Compound, "array": Array}

// TestTableMatchesSpec checks every row of Table, and the root package's
// Code.Kind and Code.String, against the encodings of the spec's
// types.bare.xml (extracted into spec_table_test.go by specgen.go).
func TestTableMatchesSpec(t *testing.T) {
	require.Len(t, specEncodings, 39)
	seen := map[byte]bool{}
	nameCount := map[string]int{}
	for _, e := range specEncodings {
		nameCount[e.Name]++
	}
	for _, e := range specEncodings {
		seen[e.Code] = true
		c := amqpsax.Code(e.Code)
		row := Table[c]
		assert.Equal(t, e.Type, row.Kind().String(), "kind of %#x", e.Code)
		assert.Equal(t, c.Kind(), row.Kind(), "Code.Kind of %#x", e.Code)
		assert.Equal(t, specCats[e.Category], row.Cat(), "category of %#x", e.Code)
		assert.Equal(t, e.Width, int(row.W()), "width of %#x", e.Code)
		if e.Name != "" && nameCount[e.Name] == 1 {
			assert.Equal(t, e.Name, c.String(), "name of %#x", e.Code)
		} else {
			// unnamed, or a name shared by several types (ieee-754): the type name
			assert.Contains(t, []string{e.Type, "boolean", "utf32"}, c.String(), "name of %#x", e.Code)
		}
	}
	for i := range 256 {
		c := amqpsax.Code(i)
		if seen[byte(i)] || c == amqpsax.CodeDescribed {
			continue
		}
		assert.Equal(t, Invalid, Table[i].Cat(), "undefined code %#x", i)
		assert.Equal(t, amqpsax.KindInvalid, c.Kind(), "undefined code %#x", i)
		assert.Len(t, c.String(), 4, "hex fallback for %#x", i)
	}
	assert.Equal(t, Described, Table[0].Cat())
	assert.Equal(t, "0x3f", amqpsax.Code(0x3f).String())
}

// TestDescriptorsMatchSpec checks the root package's descriptor names
// against every descriptor of the spec.
func TestDescriptorsMatchSpec(t *testing.T) {
	require.Len(t, specDescriptors, 40)
	for _, d := range specDescriptors {
		got := amqpsax.Descriptor(d.Code)
		assert.Equal(t, d.Name, got.Name(), "name of %#x", d.Code)
		assert.Equal(t, d.Type, got.TypeName(), "type name of %#x", d.Code)
		back, ok := amqpsax.LookupDescriptor([]byte(d.Name))
		assert.True(t, ok, d.Name)
		assert.Equal(t, got, back, d.Name)
	}
	_, ok := amqpsax.LookupDescriptor([]byte("amqp:nothing:list"))
	assert.False(t, ok)
	assert.Equal(t, "0x1234", amqpsax.Descriptor(0x1234).String())
	assert.Equal(t, "amqp:header:list", amqpsax.DescriptorHeader.String())
}

func TestBody(t *testing.T) {
	tests := []struct {
		name             string
		code             amqpsax.Code
		in               []byte
		hdr, size, count int
	}{
		{"null", amqpsax.CodeNull, nil, 0, 0, 0},
		{"uint", amqpsax.CodeUint, []byte{0, 0, 0, 1}, 0, 4, 0},
		{"uint short", amqpsax.CodeUint, []byte{0, 0, 0}, int(EOF), 0, 0},
		{"bool 2", amqpsax.CodeBool, []byte{2}, int(BadBool), 0, 0},
		{"str8", amqpsax.CodeStr8, []byte{2, 'h', 'i'}, 1, 2, 0},
		{"str8 past end", amqpsax.CodeStr8, []byte{3, 'h', 'i'}, int(EOF), 0, 0},
		{"str32", amqpsax.CodeStr32, []byte{0, 0, 0, 1, 'h'}, 4, 1, 0},
		{"str32 huge", amqpsax.CodeStr32, []byte{0xff, 0xff, 0xff, 0xff, 'h'}, int(EOF), 0, 0},
		{"list8", amqpsax.CodeList8, []byte{3, 2, 0x40, 0x40}, 2, 2, 2},
		{"list8 size 0", amqpsax.CodeList8, []byte{0, 0}, int(SizeMismatch), 0, 0},
		{"list8 count too large", amqpsax.CodeList8, []byte{3, 3, 0x40, 0x40}, int(CountTooLarge), 0, 0},
		{"list32 count 2^32-1", amqpsax.CodeList32, []byte{0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff}, int(CountTooLarge), 0, 0},
		{"map8 odd", amqpsax.CodeMap8, []byte{2, 1, 0x40}, int(OddMapCount), 0, 0},
		{"array8", amqpsax.CodeArray8, []byte{4, 2, 0x50, 1, 2}, 2, 3, 2},
		{"array8 no ctor", amqpsax.CodeArray8, []byte{1, 0}, int(SizeMismatch), 0, 0},
		{"array32 2^31 nulls", amqpsax.CodeArray32, []byte{0, 0, 0, 5, 0x80, 0, 0, 0, 0x40}, int(CountTooLarge), 0, 0},
		// The wire rule: a header no bytes can satisfy is malformed at
		// once, though the input ends right after it.
		{"array8 size 1, cut", amqpsax.CodeArray8, []byte{1}, int(SizeMismatch), 0, 0},
		{"array32 size 4, cut", amqpsax.CodeArray32, []byte{0, 0, 0, 4}, int(SizeMismatch), 0, 0},
		{"list32 size 3, cut", amqpsax.CodeList32, []byte{0, 0, 0, 3}, int(SizeMismatch), 0, 0},
		{"list8 count > size, cut", amqpsax.CodeList8, []byte{2, 3}, int(CountTooLarge), 0, 0},
		{"map8 odd, cut", amqpsax.CodeMap8, []byte{3, 1}, int(OddMapCount), 0, 0},
		{"array32 2^31 nulls, cut", amqpsax.CodeArray32, []byte{0, 0, 0, 5, 0x80, 0, 0, 0}, int(CountTooLarge), 0, 0},
		{"list8 size cut", amqpsax.CodeList8, nil, int(EOF), 0, 0},
		{"list8 count cut", amqpsax.CodeList8, []byte{2}, int(EOF), 0, 0},
		{"list32 count cut", amqpsax.CodeList32, []byte{0, 0, 0, 8, 0, 0}, int(EOF), 0, 0},
		{"list8 contents cut", amqpsax.CodeList8, []byte{3, 2, 0x40}, int(EOF), 0, 0},
		{"array8 contents cut", amqpsax.CodeArray8, []byte{4, 2, 0x50}, int(EOF), 0, 0},
		{"invalid", amqpsax.Code(0x3f), []byte{1, 2, 3}, int(BadCode), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, s, c := Body(tt.code, tt.in)
			assert.Equal(t, []int{tt.hdr, tt.size, tt.count}, []int{h, s, c})
		})
	}
}

func TestArrayCtor(t *testing.T) {
	tests := []struct {
		name                string
		in                  []byte
		count               int
		elem                amqpsax.Code
		ctorLen, dOff, dLen int
	}{
		{"ubyte", []byte{0x50, 1, 2}, 2, amqpsax.CodeUbyte, 1, 0, 0},
		{"ubyte short", []byte{0x50, 1}, 2, 0, int(CountTooLarge), 0, 0},
		{"ubyte long", []byte{0x50, 1, 2, 3}, 2, 0, int(SizeMismatch), 0, 0},
		{"described", []byte{0x00, 0x53, 0x70, 0x52, 7}, 1, amqpsax.CodeSmallUint, 4, 1, 2},
		{"described sym", []byte{0x00, 0xa3, 1, 'x', 0x40}, 5, amqpsax.CodeNull, 5, 1, 3},
		{"nested described", []byte{0x00, 0x53, 0x70, 0x00, 0x53, 1}, 1, 0, int(BadArrayCode), 3, 0},
		{"compound descriptor", []byte{0x00, 0xc0, 1, 0, 0x40}, 1, 0, int(BadArrayCode), 1, 0},
		{"list0 descriptor", []byte{0x00, 0x45, 0x40}, 1, 0, int(BadArrayCode), 1, 0},
		{"invalid elem", []byte{0x3f}, 0, 0, int(BadCode), 0, 0},
		{"str8", []byte{0xa1, 1, 'a', 0, 1, 2}, 6, 0, int(CountTooLarge), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, cl, o, l := ArrayCtor(tt.in, tt.count)
			assert.Equal(t, tt.ctorLen, cl)
			if cl >= 0 {
				assert.Equal(t, []int{int(tt.elem), tt.dOff, tt.dLen}, []int{int(e), o, l})
			} else {
				assert.Equal(t, tt.dOff, o, "fault offset")
			}
		})
	}
}

func TestSkip(t *testing.T) {
	tests := []struct {
		name   string
		in     []byte
		n, off int
	}{
		{"null", []byte{0x40, 0x40}, 1, 0},
		{"list8", []byte{0xc0, 3, 2, 0x40, 0x40, 0xff}, 5, 0},
		{"described", []byte{0x00, 0x53, 0x70, 0xc0, 1, 0}, 6, 0},
		{"nested descriptor", []byte{0x00, 0x00, 0x53, 1, 0x40, 0x41}, 6, 0},
		{"descriptor without value", []byte{0x00, 0x53, 0x70}, int(EOF), 3},
		{"array bad ctor", []byte{0xe0, 2, 0, 0x3f}, int(BadCode), 3},
		{"empty", nil, int(EOF), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, off := Skip(tt.in)
			assert.Equal(t, tt.n, n)
			if n < 0 {
				assert.Equal(t, tt.off, off)
			}
		})
	}
}

func TestStatusErr(t *testing.T) {
	assert.Nil(t, OK.Err())
	assert.Same(t, io.ErrUnexpectedEOF, EOF.Err())
	for s := EOF; s > lowestStatusOK; s-- {
		assert.NotNil(t, s.Err(), "status %d", s)
	}
	err := NewError("dispatch", OddMapCount, 7, amqpsax.CodeMap8, true)
	assert.True(t, errors.Is(err, amqpsax.ErrMalformed))
	assert.True(t, errors.Is(err, amqpsax.ErrOddMapCount))
	assert.Equal(t, "dispatch: odd map count (map8) at offset 7", err.Error())
	err = NewError("stream", EOF, 3, 0, false)
	assert.Equal(t, "stream: truncated input at offset 3", err.Error())
	var e *amqpsax.Error
	require.True(t, errors.As(err, &e))
	assert.Equal(t, 3, e.Offset)
}

func TestReaders(t *testing.T) {
	assert.Equal(t, uint64(0), Uint(amqpsax.CodeUint0, nil))
	assert.Equal(t, uint64(0xfe), Uint(amqpsax.CodeSmallUlong, []byte{0xfe}))
	assert.Equal(t, uint64(0x0102), Uint(amqpsax.CodeUshort, []byte{1, 2}))
	assert.Equal(t, uint64(0x01020304), Uint(amqpsax.CodeUint, []byte{1, 2, 3, 4}))
	assert.Equal(t, uint64(0x0102030405060708), Uint(amqpsax.CodeUlong, []byte{1, 2, 3, 4, 5, 6, 7, 8}))
	assert.Equal(t, int64(-2), Int(amqpsax.CodeSmallLong, []byte{0xfe}))
	assert.Equal(t, int64(-2), Int(amqpsax.CodeShort, []byte{0xff, 0xfe}))
	assert.Equal(t, int64(-2), Int(amqpsax.CodeInt, []byte{0xff, 0xff, 0xff, 0xfe}))
	assert.Equal(t, int64(-2), Int(amqpsax.CodeLong, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}))
	assert.True(t, Bool(amqpsax.CodeTrue, nil))
	assert.False(t, Bool(amqpsax.CodeFalse, nil))
	assert.True(t, Bool(amqpsax.CodeBool, []byte{1}))
	assert.Equal(t, float32(1), Float([]byte{0x3f, 0x80, 0, 0}))
	assert.Equal(t, 1.0, Double([]byte{0x3f, 0xf0, 0, 0, 0, 0, 0, 0}))
	assert.Equal(t, rune(0x10ffff), Char([]byte{0, 0x10, 0xff, 0xff}))
	assert.Equal(t, int64(-1), Timestamp([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}))
	assert.True(t, ValidASCII([]byte("amqp:header:list")))
	assert.False(t, ValidASCII([]byte("amqp:header:lis\xc3")))
	assert.False(t, ValidASCII([]byte("\x80")))
	assert.True(t, ValidUTF8([]byte("héllo")))
	assert.False(t, ValidUTF8([]byte{0xff}))
}

// TestLevel: the level rules both walkers share.
func TestLevel(t *testing.T) {
	all := []Level{LvTop, LvList, LvMap, LvDescribed, LvArray, LvDescArray, LvDescElem}
	for _, k := range all {
		// Sized: every level but the top, and a described value only
		// when measured.
		sized := k != LvTop && k != LvDescribed
		assert.Equal(t, sized, k.Sized(false), "level %d", k)
		assert.Equal(t, sized || k == LvDescribed, k.Sized(true), "level %d measured", k)
		// Ends: the levels whose size their values must fill.
		ends := k == LvList || k == LvMap || k == LvArray || k == LvDescArray
		assert.Equal(t, ends, k.Ends(), "level %d", k)
		// Replayed: only the descriptor of an element of a described array.
		assert.Equal(t, k == LvDescElem, k.Replayed(1), "level %d", k)
		assert.False(t, k.Replayed(0), "level %d", k)
		// Own constructors: the first four kinds.
		assert.Equal(t, k <= LvDescribed, k < LvArray, "level %d", k)
	}
	assert.Equal(t, EOF, EOF.In(false))
	assert.Equal(t, Overrun, EOF.In(true))
	assert.Equal(t, BadCode, BadCode.In(true))
	assert.Equal(t, OK, OK.In(false))
}
