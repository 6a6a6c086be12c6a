package stream

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
	"github.com/google/uuid"
)

// Value is one encoded AMQP value with its type already read: a view into
// the data it came from (valid as long as that data is), small enough to
// pass by value, read with getters that allocate nothing. Cursor.Value
// and message.Lookup return one; ParseValue makes one from bytes.
//
// The zero Value is an absent value: Kind is KindInvalid and every getter
// returns the zero value. Getters on null, or on a value of another kind,
// also return the zero value (Bytes returns nil); Kind and IsNull tell the
// cases apart. Unlike the Cursor's getters they record no error: a Value
// has been checked whole when it was made.
type Value struct {
	raw  []byte // the whole value: constructor (none for an array element), length fields, payload
	kind amqpsax.Kind
	code amqpsax.Code
	pay  int  // offset of the payload in raw
	elem bool // an array element: raw has no constructor
}

// ParseValue reads the one encoded value b holds, checking it whole, as a
// decoder walking every value in it would (every length field, count and
// constructor; not the text of strings and symbols). It is an error with
// the offset of the fault when b is not exactly one well-formed value. It
// allocates nothing for values nested up to four levels deep.
func ParseValue(b []byte) (Value, error) {
	var c Cursor
	c.Reset(b)
	if !c.Next() {
		if c.err != nil {
			return Value{}, c.err
		}
		return Value{}, wire.NewError("stream", wire.EOF, 0, 0, false)
	}
	v := c.Value()
	if err := c.check(); err != nil {
		return Value{}, err
	}
	if len(v.raw) != len(b) {
		return Value{}, wire.NewErrorAt("stream", wire.Trailing, b, len(v.raw))
	}
	return v, nil
}

// check walks the current value and everything in it, as a decoder
// would, and returns the first fault.
func (c *Cursor) check() error {
	d0 := c.depth
	for {
		if k := c.cur.kind; k >= amqpsax.KindList && k <= amqpsax.KindDescribed {
			if !c.Enter() {
				return c.err
			}
		} else if c.depth == d0 {
			return c.err // a primitive at the level it started from
		}
		for !c.Next() {
			if c.err != nil {
				return c.err
			}
			c.Exit()
			if c.depth == d0 {
				return c.err
			}
		}
	}
}

// Kind returns the value's AMQP type, KindInvalid for the zero Value.
func (v Value) Kind() amqpsax.Kind { return v.kind }

// Code returns the value's format code (for an array element, the array's
// element constructor).
func (v Value) Code() amqpsax.Code { return v.code }

// IsNull reports whether the value is null.
func (v Value) IsNull() bool { return v.kind == amqpsax.KindNull }

// Raw returns the value as encoded, nil for the zero Value.
func (v Value) Raw() []byte { return v.raw }

func (v Value) payload() []byte { return v.raw[v.pay:] }

// Bool returns the value if it is a boolean.
func (v Value) Bool() bool {
	return v.kind == amqpsax.KindBool && wire.Bool(v.code, v.payload())
}

// Uint returns the value if it is a ubyte, ushort, uint or ulong.
func (v Value) Uint() uint64 {
	if v.kind >= amqpsax.KindUbyte && v.kind <= amqpsax.KindUlong {
		return wire.Uint(v.code, v.payload())
	}
	return 0
}

// Int returns the value if it is a byte, short, int or long.
func (v Value) Int() int64 {
	if v.kind >= amqpsax.KindByte && v.kind <= amqpsax.KindLong {
		return wire.Int(v.code, v.payload())
	}
	return 0
}

// Bytes returns the content of a binary, string or symbol: a view.
func (v Value) Bytes() []byte {
	if v.kind >= amqpsax.KindBinary && v.kind <= amqpsax.KindSymbol {
		return v.payload()
	}
	return nil
}

// Float returns the value if it is a float.
func (v Value) Float() float32 {
	if v.kind == amqpsax.KindFloat {
		return wire.Float(v.payload())
	}
	return 0
}

// Double returns the value if it is a double.
func (v Value) Double() float64 {
	if v.kind == amqpsax.KindDouble {
		return wire.Double(v.payload())
	}
	return 0
}

// Char returns the value if it is a char.
func (v Value) Char() rune {
	if v.kind == amqpsax.KindChar {
		return wire.Char(v.payload())
	}
	return 0
}

// Timestamp returns the value if it is a timestamp: ms since the Unix epoch.
func (v Value) Timestamp() int64 {
	if v.kind == amqpsax.KindTimestamp {
		return wire.Timestamp(v.payload())
	}
	return 0
}

// UUID returns the value if it is a uuid.
func (v Value) UUID() (u uuid.UUID) {
	if v.kind == amqpsax.KindUUID {
		u = uuid.UUID(v.payload())
	}
	return u
}

// Decimal32 returns the value's bytes if it is a decimal32.
func (v Value) Decimal32() (d amqpsax.Decimal32) {
	if v.kind == amqpsax.KindDecimal32 {
		d = amqpsax.Decimal32(v.payload())
	}
	return d
}

// Decimal64 returns the value's bytes if it is a decimal64.
func (v Value) Decimal64() (d amqpsax.Decimal64) {
	if v.kind == amqpsax.KindDecimal64 {
		d = amqpsax.Decimal64(v.payload())
	}
	return d
}

// Decimal128 returns the value's bytes if it is a decimal128.
func (v Value) Decimal128() (d amqpsax.Decimal128) {
	if v.kind == amqpsax.KindDecimal128 {
		d = amqpsax.Decimal128(v.payload())
	}
	return d
}
