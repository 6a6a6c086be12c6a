package stream

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
	"github.com/google/uuid"
)

// The getters read the current value. Each converts on demand, only when
// called. On a null value each returns the zero value (Bytes returns nil)
// and records nothing: in AMQP any field may be null, meaning absent, and
// IsNull tells the two apart. On a value of another kind (or with no
// current value) each returns the zero value and records an error naming
// the kind wanted and the kind found (an *amqpsax.KindError cause, which
// unwraps to amqpsax.ErrWrongKind), which Err reports. That error stops
// the cursor as bad input does: Next, Enter and Exit then return false, so
// a walk never goes on past a value it misread. No getter panics, whatever
// the input.

// want records that a getter reading want was called on the current
// value, unless that value is null, and ends the level (as fail does) so
// that the next Next returns false.
func (c *Cursor) want(want string) {
	if c.cur.kind == amqpsax.KindNull || c.err != nil {
		return
	}
	c.err = &amqpsax.Error{Op: "stream", Offset: c.cur.start, Code: c.cur.code,
		HasCode: c.cur.kind != amqpsax.KindInvalid, Err: &amqpsax.KindError{Want: want, Have: c.cur.kind}}
	c.lv.left = 0
}

// payload returns the bytes after the length fields of the current value.
func (c *Cursor) payload() []byte { return c.data[c.cur.pay:c.cur.end:c.cur.end] }

// Bool returns the current boolean.
func (c *Cursor) Bool() bool {
	if c.cur.kind == amqpsax.KindBool {
		return wire.Bool(c.cur.code, c.payload())
	}
	c.want("boolean")
	return false
}

// Uint returns the current ubyte, ushort, uint or ulong.
func (c *Cursor) Uint() uint64 {
	if c.cur.kind-amqpsax.KindUbyte < 4 { // ubyte to ulong
		return uint64(c.cur.num) >> c.cur.sh
	}
	return c.notUint()
}

func (c *Cursor) notUint() uint64 {
	c.want("ubyte, ushort, uint or ulong")
	return 0
}

// Int returns the current byte, short, int or long.
func (c *Cursor) Int() int64 {
	if c.cur.kind-amqpsax.KindByte < 4 { // byte to long
		return c.cur.num >> (c.cur.sh & 63) // < 64 for every integer kind
	}
	return c.notInt()
}

func (c *Cursor) notInt() int64 {
	c.want("byte, short, int or long")
	return 0
}

// Bytes returns the content of the current binary, string or symbol: a
// view into the data given to Reset, valid as long as that data is.
func (c *Cursor) Bytes() []byte {
	if c.cur.kind-amqpsax.KindBinary < 3 { // binary, string or symbol
		return c.payload()
	}
	c.want("binary, string or symbol")
	return nil
}

// fixed returns the payload of the current value if it is of kind k, and
// records the getter's error otherwise.
func (c *Cursor) fixed(k amqpsax.Kind) ([]byte, bool) {
	if c.cur.kind != k {
		c.want(k.String())
		return nil, false
	}
	return c.payload(), true
}

// Float returns the current float.
func (c *Cursor) Float() float32 {
	if p, ok := c.fixed(amqpsax.KindFloat); ok {
		return wire.Float(p)
	}
	return 0
}

// Double returns the current double.
func (c *Cursor) Double() float64 {
	if p, ok := c.fixed(amqpsax.KindDouble); ok {
		return wire.Double(p)
	}
	return 0
}

// Decimal32 returns the current decimal32's bytes.
func (c *Cursor) Decimal32() (d amqpsax.Decimal32) {
	if p, ok := c.fixed(amqpsax.KindDecimal32); ok {
		d = amqpsax.Decimal32(p)
	}
	return d
}

// Decimal64 returns the current decimal64's bytes.
func (c *Cursor) Decimal64() (d amqpsax.Decimal64) {
	if p, ok := c.fixed(amqpsax.KindDecimal64); ok {
		d = amqpsax.Decimal64(p)
	}
	return d
}

// Decimal128 returns the current decimal128's bytes.
func (c *Cursor) Decimal128() (d amqpsax.Decimal128) {
	if p, ok := c.fixed(amqpsax.KindDecimal128); ok {
		d = amqpsax.Decimal128(p)
	}
	return d
}

// Char returns the current char as a code point (not checked for validity).
func (c *Cursor) Char() rune {
	if p, ok := c.fixed(amqpsax.KindChar); ok {
		return wire.Char(p)
	}
	return 0
}

// Timestamp returns the current timestamp: milliseconds since the Unix epoch.
func (c *Cursor) Timestamp() int64 {
	if p, ok := c.fixed(amqpsax.KindTimestamp); ok {
		return wire.Timestamp(p)
	}
	return 0
}

// UUID returns the current uuid.
func (c *Cursor) UUID() (u uuid.UUID) {
	if p, ok := c.fixed(amqpsax.KindUUID); ok {
		u = uuid.UUID(p)
	}
	return u
}
