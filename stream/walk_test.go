package stream

import (
	"github.com/amqpsax/amqpsax"
)

// walk reports the values of the cursor's current level, and everything
// in them, to h as the push decoder would: the bridge that lets the tests
// compare a cursor walk with dispatch event for event.
func walk(c *Cursor, h amqpsax.Handler) error {
	for c.Next() {
		if err := emit(c, h); err != nil {
			return err
		}
	}
	return c.Err()
}

// emit reports the current value, entering it when it is a compound.
func emit(c *Cursor, h amqpsax.Handler) error {
	switch c.Kind() {
	case amqpsax.KindNull:
		return h.OnNull()
	case amqpsax.KindBool:
		return h.OnBool(c.Bool())
	case amqpsax.KindUbyte:
		return h.OnUbyte(uint8(c.Uint()))
	case amqpsax.KindUshort:
		return h.OnUshort(uint16(c.Uint()))
	case amqpsax.KindUint:
		return h.OnUint(uint32(c.Uint()))
	case amqpsax.KindUlong:
		return h.OnUlong(c.Uint())
	case amqpsax.KindByte:
		return h.OnByte(int8(c.Int()))
	case amqpsax.KindShort:
		return h.OnShort(int16(c.Int()))
	case amqpsax.KindInt:
		return h.OnInt(int32(c.Int()))
	case amqpsax.KindLong:
		return h.OnLong(c.Int())
	case amqpsax.KindFloat:
		return h.OnFloat(c.Float())
	case amqpsax.KindDouble:
		return h.OnDouble(c.Double())
	case amqpsax.KindDecimal32:
		return h.OnDecimal32(c.Decimal32())
	case amqpsax.KindDecimal64:
		return h.OnDecimal64(c.Decimal64())
	case amqpsax.KindDecimal128:
		return h.OnDecimal128(c.Decimal128())
	case amqpsax.KindChar:
		return h.OnChar(c.Char())
	case amqpsax.KindTimestamp:
		return h.OnTimestamp(c.Timestamp())
	case amqpsax.KindUUID:
		return h.OnUUID(c.UUID())
	case amqpsax.KindBinary:
		return h.OnBinary(c.Bytes())
	case amqpsax.KindString:
		return h.OnString(c.Bytes())
	case amqpsax.KindSymbol:
		return h.OnSymbol(c.Bytes())
	}
	kind, count, elem := c.Kind(), c.Count(), c.ArrayElem()
	if !c.Enter() {
		return c.Err()
	}
	var err error
	switch kind {
	case amqpsax.KindList:
		err = h.OnListStart(count)
	case amqpsax.KindMap:
		err = h.OnMapStart(count)
	case amqpsax.KindArray:
		err = h.OnArrayStart(count, elem)
	default:
		err = h.OnDescribedStart()
	}
	if err != nil {
		return err
	}
	if err := walk(c, h); err != nil {
		return err
	}
	switch kind {
	case amqpsax.KindList:
		err = h.OnListEnd()
	case amqpsax.KindMap:
		err = h.OnMapEnd()
	case amqpsax.KindArray:
		err = h.OnArrayEnd()
	default:
		err = h.OnDescribedEnd()
	}
	if err != nil {
		return err
	}
	c.Exit()
	return c.Err()
}
