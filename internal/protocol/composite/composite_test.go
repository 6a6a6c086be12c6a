package composite

import (
	"encoding/hex"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriter: a field at its default (Spec.Off reads the Default column) is
// left out, as null before the last field written and not at all after
// it; End pads to the elements read and writes a list32 when told.
func TestWriter(t *testing.T) {
	w := Begin(nil, Header)
	w.Bool(Header.OffBool(0, false), false) // durable at its default
	w.Ubyte(Header.Off(1, 4), 4)            // priority at its default
	w.Uint(Header.Off(2, 0), 0)             // ttl: no default, so its zero
	w.Bool(Header.OffBool(3, false), false) // first-acquirer at its default
	w.Uint(Header.Off(4, 0), 0)             // delivery-count at its default
	assert.Equal(t, "005370"+"45", hex.EncodeToString(w.End(0, false)), "all at their defaults: list0")

	w = Begin(nil, Header)
	w.Bool(Header.OffBool(0, false), false)
	w.Ubyte(Header.Off(1, 4), 4)
	w.Uint(Header.Off(2, 0), 0)
	w.Bool(Header.OffBool(3, false), false)
	w.Uint(Header.Off(4, 3), 3)
	assert.Equal(t, "005370"+"c0"+"07"+"05"+"40404040"+"5203", hex.EncodeToString(w.End(0, false)),
		"the fields at their defaults before the last written are null")

	w = Begin(nil, Header)
	w.Bool(true, false) // written although at its default
	w.Ubyte(Header.Off(1, 4), 4)
	w.Uint(Header.Off(2, 0), 0)
	w.Bool(Header.OffBool(3, false), false)
	w.Uint(Header.Off(4, 0), 0)
	assert.Equal(t, "005370"+"c0"+"02"+"01"+"42", hex.EncodeToString(w.End(0, false)))

	w = Begin(nil, Header)
	w.Bool(Header.OffBool(0, false), false)
	w.Ubyte(Header.Off(1, 9), 9)
	w.Uint(Header.Off(2, 0), 0)
	assert.Equal(t, "005370"+"c0"+"05"+"03"+"40"+"5009"+"40", hex.EncodeToString(w.End(3, false)),
		"padded to the elements read")
	w = Begin(nil, Header)
	assert.Equal(t, "005370"+"d0"+"00000004"+"00000000", hex.EncodeToString(w.End(0, true)), "list32 when wide")

	w = Begin(nil, Header)
	assert.Equal(t, "00537045", hex.EncodeToString(w.End(0, false)), "no field: list0")

	w = Begin(nil, Properties)
	w.Binary(false, nil)
	w.String(true, []byte("q"))
	assert.Equal(t, "005373"+"c0"+"05"+"02"+"40"+"a10171", hex.EncodeToString(w.End(0, false)))
}

func section(d amqpsax.Descriptor, fields ...[]byte) []byte {
	b := encode.AppendUlong(encode.AppendDescribed(nil), uint64(d))
	start := len(b)
	b = encode.BeginList(b)
	for _, f := range fields {
		b = append(b, f...)
	}
	return encode.EndList(b, start, len(fields))
}

// TestReader: fields of the kinds the table takes are read and marked,
// nulls and fields past the table skipped; a field of another kind is a
// Fault at its offset (Base added) naming the type and field; a missing
// mandatory field is one at the list; a cut is ErrCursor.
func TestReader(t *testing.T) {
	spec := New("t", 0x70, Mand("a", amqpsax.KindUint), Opt("b", amqpsax.KindString).Or(amqpsax.KindSymbol))
	var r Reader
	data := section(0x70, encode.AppendUint(nil, 7), encode.AppendSymbol(nil, "s"), encode.AppendBool(nil, true))
	_, end, ok := r.Open(data, 0, "t")
	require.True(t, ok)
	assert.Equal(t, len(data), end)
	require.True(t, r.Fields(spec))
	require.True(t, r.Next())
	assert.Equal(t, uint32(7), r.Uint32())
	require.True(t, r.Next())
	assert.Equal(t, "s", string(r.C.Bytes()))
	assert.False(t, r.Next(), "a field past the table is skipped")
	assert.True(t, r.Done())
	assert.Equal(t, uint32(3), r.Set)
	assert.Equal(t, uint8(2), r.N)

	r = Reader{}
	data = section(0x70, encode.AppendUint(nil, 7), encode.AppendUint(nil, 1))
	r.Open(data, 100, "t")
	require.True(t, r.Fields(spec))
	require.True(t, r.Next())
	assert.False(t, r.Next())
	require.Equal(t, ErrFault, r.Err)
	assert.Equal(t, Fault{Cause: ErrFieldType, Off: 100 + len(data) - 2, Code: amqpsax.CodeSmallUint, HasCode: true,
		Type: "t", Field: "b", Want: "string", Found: "uint"}, r.Fault)

	r = Reader{}
	data = section(0x70, encode.AppendNull(nil))
	r.Open(data, 0, "t")
	require.True(t, r.Fields(spec))
	assert.False(t, r.Next())
	assert.False(t, r.Done())
	assert.Equal(t, ErrMissingField, r.Fault.Cause)
	assert.Equal(t, "a", r.Fault.Field)
	assert.Equal(t, 3, r.Fault.Off, "at the list")

	r = Reader{}
	_, _, ok = r.Open(data[:len(data)-1], 0, "t")
	assert.False(t, ok)
	assert.Equal(t, ErrCursor, r.Err)
	assert.Error(t, r.C.Err())
}

// TestFieldCounts: the counts that size message's arrays of fields are
// the tables'.
func TestFieldCounts(t *testing.T) {
	assert.Equal(t, len(Header.Fields), HeaderFields)
	assert.Equal(t, len(Properties.Fields), PropertiesFields)
}
