package stream

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
)

// Emit reports the current value, and everything in it, to h as package
// dispatch would: the same events in the same order (an
// amqpsax.ArrayDescriptorHandler gets the descriptor of an array of
// described values), SkipValue from a …Start method skipping that value
// unread. It is the bridge from a cursor to a Handler: emit a section into
// an encode.Writer to copy it, or into any Handler a program already has.
// A list, map, array or described value is entered and left, so the
// cursor is then past it; after a primitive it stays on it. An error of h
// (amqpsax.SkipAll included) is returned unchanged; bad input is the
// cursor's error, as Err then reports. Emit walks with the cursor's own
// levels, not the Go stack.
func (c *Cursor) Emit(h amqpsax.Handler) error {
	d0 := c.depth
	for {
		if err := c.emitOne(h); err != nil {
			return err
		}
		if c.depth == d0 && c.cur.kind != amqpsax.KindInvalid {
			return c.err // a primitive, or a skipped compound, at the level it started from
		}
		for !c.Next() {
			if c.err != nil {
				return c.err
			}
			if c.depth == d0 {
				return nil
			}
			var err error
			switch wire.Table[c.parent().code].Kind() {
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
			if c.depth == d0 {
				return c.err
			}
		}
	}
}

// emitOne reports the current value to h: a primitive's one event, or a
// compound's start, entering it unless h skips it.
func (c *Cursor) emitOne(h amqpsax.Handler) error {
	switch k := c.cur.kind; k {
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
	case amqpsax.KindInvalid:
		c.want("a value")
		return c.err
	default:
		if c.depth >= c.max { // too deep: no start event, as dispatch
			c.enterFault()
			return c.err
		}
		var err error
		switch k {
		case amqpsax.KindList:
			err = h.OnListStart(c.cur.count)
		case amqpsax.KindMap:
			err = h.OnMapStart(c.cur.count / 2)
		case amqpsax.KindArray:
			err = h.OnArrayStart(c.cur.count, c.ElemKind())
			if desc := c.ArrayDescriptor(); err == nil && desc != nil {
				if ah, ok := h.(amqpsax.ArrayDescriptorHandler); ok {
					err = ah.OnArrayDescriptor(desc, wire.Table[c.cur.ector].Kind())
				}
			}
		default:
			err = h.OnDescribedStart()
		}
		switch err {
		case nil:
			if !c.Enter() {
				return c.err
			}
			return nil
		case amqpsax.SkipValue:
			return nil // not entered: the caller's Next skips it
		}
		return err
	}
}
