package stream

import (
	"errors"
	"time"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
	"github.com/google/uuid"
)

// Symbol is an AMQP symbol as a Go value (from Any), told apart from a
// string.
type Symbol string

// Described is a described value as Go values (from Any).
type Described struct {
	Descriptor any
	Value      any
}

// anyPerByte is how many Go values Any makes per byte of the value it
// reads (see the package doc's limits): every value a peer can encode takes
// at least a byte, except the elements of an array of zero-width elements
// (null, true, false, uint0, ulong0, list0) and the descriptors of an
// array of described values; two a byte lets an array of described
// one-byte values through and refuses an array of nulls that claims more
// elements than twice its bytes.
const anyPerByte = 2

// ErrAnyLimit is the cause of the error Any returns for a value that
// holds more values than Any makes for its encoded length (see the
// package doc's limits): an array of zero-width elements (nulls, say)
// whose count is larger than its bytes allow.
var ErrAnyLimit = errors.New("more values than Any reads for the bytes they take")

// ErrMapKey is the cause of the error Any returns for a map whose key has
// no Go map key form: a binary, list, map, array or described key.
var ErrMapKey = errors.New("stream: map key of a kind that cannot key a Go map")

// Any returns the current value as a plain Go value, reading a list, map,
// array or described value whole, and moves past it as Next would. It is
// the convenience for when Go values are wanted; it allocates (strings,
// byte slices, slices, maps, boxing), so a hot path reads with the getters
// instead. The types:
//
//	null → nil                     boolean → bool
//	ubyte, ushort, uint, ulong → uint8, uint16, uint32, uint64
//	byte, short, int, long → int8, int16, int32, int64
//	float, double → float32, float64
//	decimal32/64/128 → amqpsax.Decimal32/64/128
//	char → rune                    timestamp → time.Time (UTC)
//	uuid → uuid.UUID               binary → []byte (a copy)
//	string → string                symbol → Symbol
//	list, array → []any            map → map[any]any
//	described → Described
//
// Where a map has a key twice (the spec forbids it, but nothing stops a
// peer), the first entry counts, as it does for Lookup: every way of
// reading a map agrees on its value. A map key that cannot key a Go map
// (binary, list, map, array or described) is an error wrapping ErrMapKey
// at the key's offset. A value that holds more values than Any makes for
// its length (an array of zero-width elements, such as nulls, with a count
// beyond twice its bytes: see the package doc's limits) is an error
// wrapping ErrAnyLimit at the offset of the array that overdraws. Bad
// input is the cursor's error too. Any error stops the cursor, as Err then
// reports.
func (c *Cursor) Any() (any, error) {
	raw := c.Raw()
	if raw == nil && c.err != nil {
		return nil, c.err
	}
	// The budget: anyPerByte values a byte of the value (and its
	// constructor, which an array element's Raw leaves out; and for an
	// element of an array of described values, the descriptor it is
	// read with).
	budget := anyPerByte * (len(raw) + 1)
	if c.lv.kind == wire.LvDescArray && c.lv.desc >= 0 {
		if n, _ := wire.Skip(c.data[c.lv.desc:]); n > 0 {
			budget += anyPerByte * n
		}
	}
	v, err := c.anyValue(&budget)
	if err == nil {
		err = c.err
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

// anyValue reads the current value, charging one to *budget for it and
// for each value in it; a compound whose count overdraws the budget is
// ErrAnyLimit before anything is made for it.
func (c *Cursor) anyValue(budget *int) (any, error) {
	if *budget--; *budget < 0 {
		return nil, c.limitFault()
	}
	switch c.cur.kind {
	case amqpsax.KindNull:
		return nil, nil
	case amqpsax.KindBool:
		return c.Bool(), nil
	case amqpsax.KindUbyte:
		return uint8(c.Uint()), nil
	case amqpsax.KindUshort:
		return uint16(c.Uint()), nil
	case amqpsax.KindUint:
		return uint32(c.Uint()), nil
	case amqpsax.KindUlong:
		return c.Uint(), nil
	case amqpsax.KindByte:
		return int8(c.Int()), nil
	case amqpsax.KindShort:
		return int16(c.Int()), nil
	case amqpsax.KindInt:
		return int32(c.Int()), nil
	case amqpsax.KindLong:
		return c.Int(), nil
	case amqpsax.KindFloat:
		return c.Float(), nil
	case amqpsax.KindDouble:
		return c.Double(), nil
	case amqpsax.KindDecimal32:
		return c.Decimal32(), nil
	case amqpsax.KindDecimal64:
		return c.Decimal64(), nil
	case amqpsax.KindDecimal128:
		return c.Decimal128(), nil
	case amqpsax.KindChar:
		return c.Char(), nil
	case amqpsax.KindTimestamp:
		return time.UnixMilli(c.Timestamp()).UTC(), nil
	case amqpsax.KindUUID:
		return uuid.UUID(c.UUID()), nil
	case amqpsax.KindBinary:
		return append([]byte(nil), c.Bytes()...), nil
	case amqpsax.KindString:
		return string(c.Bytes()), nil
	case amqpsax.KindSymbol:
		return Symbol(c.Bytes()), nil
	case amqpsax.KindList, amqpsax.KindArray:
		if c.Count() > *budget {
			return nil, c.limitFault()
		}
		out := make([]any, 0, c.Count())
		if !c.Enter() {
			return nil, c.err
		}
		// The elements of an array of described values share its
		// descriptor: it is read once, with the first.
		var desc any
		shared := false
		for c.Next() {
			var x any
			var err error
			if c.lv.kind == wire.LvDescArray {
				x, err = c.anyDescribed(budget, &desc, &shared)
			} else {
				x, err = c.anyValue(budget)
			}
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		if c.err != nil {
			return nil, c.err
		}
		c.Exit()
		return out, nil
	case amqpsax.KindMap:
		if 2*c.Count() > *budget {
			return nil, c.limitFault()
		}
		out := make(map[any]any, c.Count())
		if !c.Enter() {
			return nil, c.err
		}
		for c.Next() {
			switch c.cur.kind {
			case amqpsax.KindBinary, amqpsax.KindList, amqpsax.KindMap, amqpsax.KindArray, amqpsax.KindDescribed:
				// (a Described may hold any of them)
				return nil, c.keyFault()
			}
			k, err := c.anyValue(budget)
			if err != nil {
				return nil, err
			}
			if !c.Next() {
				break
			}
			v, err := c.anyValue(budget)
			if err != nil {
				return nil, err
			}
			if _, dup := out[k]; !dup { // the first of equal keys counts, as for Lookup
				out[k] = v
			}
		}
		if c.err != nil {
			return nil, c.err
		}
		c.Exit()
		return out, nil
	case amqpsax.KindDescribed:
		var desc any
		shared := false
		*budget++ // anyDescribed charges it
		return c.anyDescribed(budget, &desc, &shared)
	}
	c.want("a value")
	return nil, c.err
}

// anyDescribed reads the current value, a described value, charging one
// to *budget for it. Its descriptor is *desc when *shared is set (an
// element of an array of described values after the first: the elements
// share the array's descriptor, which is read once); else it is read and
// stored there, and *shared set.
func (c *Cursor) anyDescribed(budget *int, desc *any, shared *bool) (any, error) {
	if *budget--; *budget < 0 {
		return nil, c.limitFault()
	}
	if !c.Enter() {
		return nil, c.err
	}
	var d Described
	var err error
	if c.Next() {
		if *shared {
			d.Descriptor = *desc
		} else if d.Descriptor, err = c.anyValue(budget); err != nil {
			return nil, err
		}
	}
	if c.Next() {
		if d.Value, err = c.anyValue(budget); err != nil {
			return nil, err
		}
	}
	if c.err != nil {
		return nil, c.err
	}
	c.Exit()
	*desc, *shared = d.Descriptor, true
	return d, nil
}

// limitFault records ErrAnyLimit for the current value, one that would
// make Any overdraw its budget, and stops the cursor there.
func (c *Cursor) limitFault() error {
	if c.err == nil {
		c.err = &amqpsax.Error{Op: "stream", Offset: c.cur.start, Code: c.cur.code, HasCode: true, Err: ErrAnyLimit}
	}
	c.fail(wire.OK, c.cur.start, c.cur.code, true) // the error is recorded: this only stops
	return c.err
}

// keyFault records ErrMapKey for the current value, a map key, and stops
// the cursor there, as any error does.
func (c *Cursor) keyFault() error {
	if c.err == nil {
		c.err = &amqpsax.Error{Op: "stream", Offset: c.cur.start, Code: c.cur.code, HasCode: true, Err: ErrMapKey}
	}
	c.fail(wire.OK, c.cur.start, c.cur.code, true) // the error is recorded: this only stops
	return c.err
}

// Any returns the value as a plain Go value, as Cursor.Any does.
func (v Value) Any() (any, error) {
	if v.kind == amqpsax.KindInvalid {
		return nil, nil
	}
	raw := v.raw
	if v.elem {
		// An array element: give it back its constructor.
		raw = append([]byte{byte(v.code)}, raw...)
	}
	var c Cursor
	c.Reset(raw)
	c.Next()
	return c.Any()
}
