package stream

import (
	"errors"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/internal/cases"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNullIsAbsence: every getter on null returns the zero value and
// records nothing, and IsNull tells; a walk over a list with null fields
// goes on to the end.
func TestNullIsAbsence(t *testing.T) {
	var c Cursor
	c.Reset(cases.Bytes("40"))
	require.True(t, c.Next())
	assert.True(t, c.IsNull())
	assert.False(t, c.Bool())
	assert.Zero(t, c.Uint())
	assert.Zero(t, c.Int())
	assert.Zero(t, c.Float())
	assert.Zero(t, c.Double())
	assert.Zero(t, c.Decimal32())
	assert.Zero(t, c.Decimal64())
	assert.Zero(t, c.Decimal128())
	assert.Zero(t, c.Char())
	assert.Zero(t, c.Timestamp())
	assert.Zero(t, c.UUID())
	assert.Nil(t, c.Bytes())
	assert.Nil(t, c.AppendInts(nil))
	assert.False(t, c.EnterValue())
	assert.NoError(t, c.Err())
	assert.False(t, c.Next())
	assert.NoError(t, c.Err())

	// properties with a subject but no to: the walk reaches the end
	props := encode.AppendDescribed(nil)
	props = encode.AppendUlong(props, 0x73)
	s := len(props)
	props = encode.BeginList(props)
	props = encode.AppendString(props, "id")
	props = encode.AppendNull(props)
	props = encode.AppendNull(props) // to
	props = encode.AppendString(props, "sub")
	props = encode.EndList(props, s, 4)
	c.Reset(props)
	require.True(t, c.Next())
	require.True(t, c.EnterValue())
	require.True(t, c.Enter())
	var got []string
	for c.Next() {
		got = append(got, string(c.Bytes()))
	}
	require.NoError(t, c.Err())
	assert.Equal(t, []string{"id", "", "", "sub"}, got)
}

// TestKindError: a getter on a value of another kind names both kinds.
func TestKindError(t *testing.T) {
	var c Cursor
	c.Reset(cases.Bytes("5401"))
	require.True(t, c.Next())
	assert.Nil(t, c.Bytes())
	err := c.Err()
	require.ErrorIs(t, err, amqpsax.ErrWrongKind)
	var ke *amqpsax.KindError
	require.True(t, errors.As(err, &ke))
	assert.Equal(t, "binary, string or symbol", ke.Want)
	assert.Equal(t, amqpsax.KindInt, ke.Have)
	assert.Equal(t, "stream: value of another kind: want binary, string or symbol, have int (smallint) at offset 0", err.Error())
	assert.False(t, c.Next(), "sticky")
}

// TestEnterValue: into a described value and onto its value in one call.
func TestEnterValue(t *testing.T) {
	var c Cursor
	c.Reset(cases.Bytes("005373c00a03a10161a10162c00100" + "5207"))
	require.True(t, c.Next())
	d, _, _ := c.Descriptor()
	assert.Equal(t, amqpsax.DescriptorProperties, d)
	require.True(t, c.EnterValue())
	assert.Equal(t, amqpsax.KindList, c.Kind())
	require.True(t, c.Enter())
	require.True(t, c.Seek(1))
	assert.Equal(t, "b", string(c.Bytes()))
	require.True(t, c.Exit())
	require.True(t, c.Exit())
	require.True(t, c.Next())
	assert.Equal(t, uint64(7), c.Uint())
	c.Reset(cases.Bytes("5207"))
	c.Next()
	assert.False(t, c.EnterValue())
	assert.ErrorIs(t, c.Err(), amqpsax.ErrWrongKind)
}

// TestLookupUlong finds annotations keyed by ulong.
func TestLookupUlong(t *testing.T) {
	m := encode.BeginMap(nil)
	m = encode.AppendSymbol(m, "x-opt-a")
	m = encode.AppendInt(m, 1)
	m = encode.AppendCodeUlong(m, 300) // the 8-byte form
	m = encode.AppendString(m, "three hundred")
	m = encode.EndMap(m, 0, 2)
	var c Cursor
	c.Reset(m)
	c.Next()
	c.Enter()
	require.True(t, c.SeekUlongKey(300))
	assert.Equal(t, "three hundred", string(c.Bytes()))
	c.Reset(m)
	c.Next()
	c.Enter()
	assert.False(t, c.SeekUlongKey(7))
	assert.NoError(t, c.Err())
}

// TestValue: Value holds a value with its type; ParseValue checks it.
func TestValue(t *testing.T) {
	for _, tc := range cases.Valid {
		in := cases.Bytes(tc.Hex)
		v, err := ParseValue(in)
		require.NoError(t, err, tc.Name)
		assert.Equal(t, in, v.Raw(), tc.Name)
		var c Cursor
		c.Reset(in)
		c.Next()
		w := c.Value()
		assert.Equal(t, c.Kind(), v.Kind(), tc.Name)
		assert.Equal(t, w, v, tc.Name)
		assert.Equal(t, c.Bytes(), v.Bytes(), tc.Name)
		c.Reset(in)
		c.Next()
		assert.Equal(t, c.Int(), v.Int(), tc.Name)
		c.Reset(in)
		c.Next()
		assert.Equal(t, c.Uint(), v.Uint(), tc.Name)
	}
	for _, tc := range cases.Invalid {
		_, err := ParseValue(cases.Bytes(tc.Hex))
		assert.ErrorIs(t, err, tc.Err, tc.Name)
	}
	_, err := ParseValue(cases.Bytes("4040"))
	assert.ErrorIs(t, err, amqpsax.ErrTrailing)
	_, err = ParseValue(nil)
	assert.Error(t, err)
	var zero Value
	assert.Equal(t, amqpsax.KindInvalid, zero.Kind())
	assert.Nil(t, zero.Bytes())
	assert.Zero(t, zero.Int())
	// array elements keep their kind, without a constructor
	var c Cursor
	c.Reset(cases.Bytes("e00a0271ffffffff00000001"))
	c.Next()
	c.Enter()
	c.Next()
	e := c.Value()
	assert.Equal(t, int64(-1), e.Int())
	x, err := e.Any()
	require.NoError(t, err)
	assert.Equal(t, int32(-1), x)
	allocs := testing.AllocsPerRun(100, func() {
		v, _ := ParseValue(cases.Bytes("a10161")[:3:3])
		_ = v.Bytes()
	})
	assert.LessOrEqual(t, allocs, 1.0) // cases.Bytes allocates the input
}

// TestAny turns values into Go values of the documented types.
func TestAny(t *testing.T) {
	id := uuid.MustParse("00112233-4455-6677-8899-aabbccddeeff")
	b := encode.BeginList(nil)
	b = encode.AppendNull(b)
	b = encode.AppendBool(b, true)
	b = encode.AppendUbyte(b, 1)
	b = encode.AppendUshort(b, 2)
	b = encode.AppendUint(b, 3)
	b = encode.AppendUlong(b, 4)
	b = encode.AppendByte(b, -1)
	b = encode.AppendShort(b, -2)
	b = encode.AppendInt(b, -3)
	b = encode.AppendLong(b, -4)
	b = encode.AppendFloat(b, 1.5)
	b = encode.AppendDouble(b, 2.5)
	b = encode.AppendChar(b, 'é')
	b = encode.AppendTimestamp(b, 1767323045678)
	b = encode.AppendUUID(b, id)
	b = encode.AppendBinary(b, []byte{1, 2})
	b = encode.AppendString(b, "s")
	b = encode.AppendSymbol(b, "y")
	m := len(b)
	b = encode.BeginMap(b)
	b = encode.AppendString(b, "k")
	b = encode.AppendUlong(b, 9)
	b = encode.EndMap(b, m, 1)
	b = encode.AppendDescribed(b)
	b = encode.AppendUlong(b, 0x75)
	b = encode.AppendBinary(b, []byte("x"))
	b = encode.EndList(b, 0, 20)
	var c Cursor
	c.Reset(b)
	require.True(t, c.Next())
	v, err := c.Any()
	require.NoError(t, err)
	assert.Equal(t, []any{nil, true, uint8(1), uint16(2), uint32(3), uint64(4), int8(-1), int16(-2), int32(-3), int64(-4),
		float32(1.5), 2.5, 'é', time.UnixMilli(1767323045678).UTC(), id, []byte{1, 2}, "s", Symbol("y"),
		map[any]any{"k": uint64(9)}, Described{uint64(0x75), []byte("x")}}, v)
	assert.False(t, c.Next(), "Any moved past the list")
	assert.NoError(t, c.Err())
	// A key that cannot key a Go map: an error at the key, which stops
	// the cursor. The second map's key is described (found by FuzzScan).
	for _, tc := range []struct {
		hex string
		off int
	}{{"c10502a00140" + "40", 3}, {"c10602" + "00534040" + "40", 3}} {
		c.Reset(cases.Bytes(tc.hex))
		c.Next()
		_, err = c.Any()
		assert.ErrorIs(t, err, ErrMapKey, tc.hex)
		var e *amqpsax.Error
		require.ErrorAs(t, err, &e, tc.hex)
		assert.Equal(t, tc.off, e.Offset, tc.hex)
		assert.Equal(t, err, c.Err(), tc.hex)
		assert.False(t, c.Next(), tc.hex)
	}
}

// TestFieldAndEntry: one call to a typed value, allocating nothing.
func TestFieldAndEntry(t *testing.T) {
	props := encode.AppendDescribed(nil)
	props = encode.AppendUlong(props, 0x73)
	s := len(props)
	props = encode.BeginList(props)
	props = encode.AppendString(props, "id")
	props = encode.AppendNull(props)
	props = encode.AppendNull(props)
	props = encode.AppendString(props, "sub")
	props = encode.EndList(props, s, 4)
	var c Cursor
	allocs := testing.AllocsPerRun(100, func() {
		c.Reset(props)
		c.Next()
		c.EnterValue()
		c.Enter()
		if to := c.Field(2); !to.IsNull() || to.Bytes() != nil {
			t.Fatal("to")
		}
		if string(c.Field(3).Bytes()) != "sub" {
			t.Fatal("subject")
		}
		if c.Field(9).Kind() != amqpsax.KindInvalid || c.Err() != nil {
			t.Fatal("absent field")
		}
	})
	assert.Zero(t, allocs)

	m := encode.BeginMap(nil)
	m = encode.AppendString(m, "region")
	m = encode.AppendString(m, "eu-west")
	m = encode.AppendString(m, "n")
	m = encode.AppendLong(m, 7)
	m = encode.EndMap(m, 0, 2)
	c.Reset(m)
	c.Next()
	c.Enter()
	assert.Equal(t, int64(7), c.Lookup("n").Int())
	c.Reset(m)
	c.Next()
	c.Enter()
	assert.Equal(t, "eu-west", string(c.Lookup("region").Bytes()))
	assert.Equal(t, amqpsax.KindInvalid, c.Lookup("none").Kind())
	assert.NoError(t, c.Err())
}

// go-amqp writes integer annotation keys as longs: LookupUlong takes them.
func TestLookupUlongLongKey(t *testing.T) {
	m := encode.BeginMap(nil)
	m = encode.AppendLong(m, -1)
	m = encode.AppendNull(m)
	m = encode.AppendLong(m, 42)
	m = encode.AppendString(m, "long key")
	m = encode.EndMap(m, 0, 2)
	var c Cursor
	c.Reset(m)
	c.Next()
	c.Enter()
	require.True(t, c.SeekUlongKey(42))
	assert.Equal(t, "long key", string(c.Bytes()))
}

// TestKindErrorStops: a getter's wrong-kind error stops the cursor as bad
// input does, at every depth: Next, Enter and Exit return false after it,
// so a nested walk cannot go on in the wrong level.
func TestKindErrorStops(t *testing.T) {
	b := encode.BeginList(nil)
	b = encode.AppendString(b, "a")
	inner := len(b)
	b = encode.BeginList(b)
	b = encode.AppendUint(b, 1)
	b = encode.AppendUint(b, 2)
	b = encode.EndList(b, inner, 2)
	b = encode.AppendUint(b, 3)
	b = encode.EndList(b, 0, 3)

	var c Cursor
	c.Reset(b)
	require.True(t, c.Next() && c.Enter())
	require.True(t, c.Next())
	require.True(t, c.Next() && c.Enter())
	require.True(t, c.Next())
	assert.Equal(t, "", string(c.Bytes()), "a uint read as bytes")
	require.ErrorIs(t, c.Err(), amqpsax.ErrWrongKind)
	assert.False(t, c.Next(), "Next after the error")
	assert.False(t, c.Enter(), "Enter after the error")
	assert.False(t, c.Exit(), "Exit after the error")
	assert.False(t, c.Next(), "Next after Exit")
	assert.Equal(t, 2, c.Depth(), "still in the level of the error")

	// At the top level too.
	c.Reset(encode.AppendUint(encode.AppendString(nil, "x"), 1))
	require.True(t, c.Next())
	assert.Zero(t, c.Uint())
	assert.False(t, c.Next())
	require.ErrorIs(t, c.Err(), amqpsax.ErrWrongKind)

	// A getter on null records nothing and stops nothing.
	c.Reset(encode.AppendUint(encode.AppendNull(nil), 1))
	require.True(t, c.Next())
	assert.Zero(t, c.Uint())
	require.True(t, c.Next())
	assert.Equal(t, uint64(1), c.Uint())
	assert.NoError(t, c.Err())
}

// TestFieldWithoutEnter: EnterValue lands on a section's list; a field
// asked for there, before Enter, is an error naming what was wanted and
// found, not a silently absent or wrong field.
func TestFieldWithoutEnter(t *testing.T) {
	props := encode.AppendDescribed(nil)
	props = encode.AppendCodeSmallUlong(props, uint8(amqpsax.DescriptorProperties))
	start := len(props)
	props = encode.BeginList(props)
	props = encode.AppendNull(props)
	props = encode.AppendNull(props)
	props = encode.AppendString(props, "queue")
	props = encode.EndList(props, start, 3)

	var c Cursor
	c.Reset(props)
	require.True(t, c.Next() && c.EnterValue())
	assert.Equal(t, amqpsax.KindInvalid, c.Field(2).Kind())
	require.ErrorIs(t, c.Err(), amqpsax.ErrWrongKind)
	assert.Contains(t, c.Err().Error(), "want a list or array entered, have list")

	c.Reset(props)
	require.True(t, c.Next() && c.EnterValue() && c.Enter())
	assert.Equal(t, "queue", string(c.Field(2).Bytes()))
	assert.Equal(t, amqpsax.KindInvalid, c.Field(5).Kind(), "absent: past the list's end")
	assert.NoError(t, c.Err())

	// Any field of a described value's level, not only one past its two
	// values: Field(1) would be the whole list, Field(0) behind the cursor.
	for _, i := range []int{0, 1} {
		c.Reset(props)
		require.True(t, c.Next() && c.EnterValue())
		assert.Equal(t, amqpsax.KindInvalid, c.Field(i).Kind(), "Field(%d)", i)
		require.ErrorIs(t, c.Err(), amqpsax.ErrWrongKind, "Field(%d)", i)
	}
	c.Reset(props)
	require.True(t, c.Next() && c.Enter())
	assert.False(t, c.Seek(1), "Elem in a described value, before its descriptor")
	require.ErrorIs(t, c.Err(), amqpsax.ErrWrongKind)
}

// TestEnterFault: Enter with no current value, or on a value that holds
// none, names what it wanted and what it found, as a getter does.
func TestEnterFault(t *testing.T) {
	var c Cursor
	c.Reset(encode.AppendUint(nil, 7))
	assert.False(t, c.Enter(), "Enter before Next")
	require.ErrorIs(t, c.Err(), amqpsax.ErrWrongKind)
	assert.Equal(t, "stream: value of another kind: want list, map, array or described, have invalid at offset 0", c.Err().Error())
	assert.False(t, c.Next(), "the error stops the cursor")

	c.Reset(encode.AppendUint(nil, 7))
	require.True(t, c.Next())
	assert.False(t, c.Enter())
	assert.Equal(t, "stream: value of another kind: want list, map, array or described, have uint (smalluint) at offset 0", c.Err().Error())
}
