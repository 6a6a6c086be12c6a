package dispatch

import (
	"encoding/binary"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
	"github.com/google/uuid"
)

// DefaultMaxDepth is the nesting limit of a Decoder whose MaxDepth is 0.
const DefaultMaxDepth = amqpsax.DefaultMaxDepth

// Decoder is a push decoder: it walks encoded AMQP values and calls a
// Handler once per value, in wire order. Its exported fields are options;
// set them before the first Decode. A Decoder is reusable, and once warm
// (its stack grown to the depth of the input) it decodes with no
// allocation. It is not safe for concurrent use; use one per goroutine.
type Decoder struct {
	// MaxDepth limits how many lists (list0 included), maps, arrays and
	// described values may be open at once; deeper input is an error
	// wrapping amqpsax.ErrTooDeep. Zero means DefaultMaxDepth.
	MaxDepth int
	// Validate makes the decoder check that strings are valid UTF-8 and
	// symbols are ASCII, failing with amqpsax.ErrInvalidUTF8 or
	// amqpsax.ErrInvalidSymbol. Off, string and symbol bytes are passed on
	// unchecked.
	Validate bool

	stack []level
	batch batchBuf
	off   int // Offset: the value being reported
}

// Offset returns, during a call of a Handler method, the offset in the
// input of the value that call reports: its constructor, or in an array
// the start of the element's body (for OnListEnd and the other …End
// methods, of the compound that ends). Between calls it is the offset of
// the last value reported.
func (d *Decoder) Offset() int { return d.off }

// Level kinds. The values of the first four each start with their own
// constructor; those of the rest share their array's.
const (
	lvRoot      = iota // the top level: values until left is 0 (or data ends, for DecodeAll)
	lvList             // a list's elements
	lvMap              // a map's keys and values
	lvDescribed        // a described value: descriptor, then value
	lvArray            // an array's element bodies
	lvDescArray        // an array of described values: each element a described value
	lvDescElem         // one of those: the array's descriptor, then the element's body
)

// level is a level of nesting: the one being read is kept in the locals
// of run, the enclosing ones on the Decoder's stack.
type level struct {
	kind  uint8
	elem  amqpsax.Code // array levels: the element constructor
	code  amqpsax.Code // the constructor of the value this level is (for errors)
	start int          // offset of that value
	end   int          // where the level's values end: lim is data[:end]
	left  int          // values still to read at this level
	desc  int          // lvDescArray, lvDescElem: offset of the descriptor's constructor
	back  int          // lvDescElem: offset of the element's body, read after the descriptor
}

// Decode decodes one value (with everything it contains) from the start
// of data, calling h for each value, and returns the number of bytes the
// value occupies.
//
// On bad input it returns an *amqpsax.Error with the offset of the fault,
// and n is that offset. When h returns amqpsax.SkipAll, Decode stops and
// returns a nil error; when h returns another error, Decode returns it
// unchanged. In both cases n is the offset decoding reached: after the
// value whose event stopped it, or for a …Start event, where that value
// starts.
func (d *Decoder) Decode(data []byte, h amqpsax.Handler) (n int, err error) {
	return d.run(data, h, 1)
}

// DecodeAll decodes values one after another until data ends, as Decode
// does for one. Empty data is no error.
func (d *Decoder) DecodeAll(data []byte, h amqpsax.Handler) error {
	_, err := d.run(data, h, -1)
	return err
}

// Decode decodes one value with a Decoder of default options. The
// Decoder is made afresh, so it allocates for nested input; keep a Decoder
// to reuse.
func Decode(data []byte, h amqpsax.Handler) (int, error) {
	var d Decoder
	return d.Decode(data, h)
}

func fault(st wire.Status, off int, code amqpsax.Code) error {
	return wire.NewError("dispatch", st, off, code, true)
}

// cut is the fault of the value at start, of code c, that does not fit in
// lim: truncation or overrun (wire.Cut).
func cut(lim, data []byte, start int, c amqpsax.Code) error {
	return fault(wire.Cut(lim, data), start, c)
}

// run is the decoding loop. The Go stack does not grow with the nesting
// of the input: each enclosing level is on d.stack, and the level being
// read lives in cur (its values end at len(lim)). Each value is one pass:
// its constructor, one switch on its wire.Op (a jump table), its payload
// read in place and the Handler called.
func (d *Decoder) run(data []byte, h amqpsax.Handler, values int) (int, error) {
	maxDepth := d.MaxDepth
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	stack := d.stack[:0]
	defer func() { d.stack = stack[:0] }()
	cur := level{kind: lvRoot, end: len(data), left: values}
	lim := data
	pos := 0
	var err error
	for {
		if cur.left == 0 {
			if cur.kind == lvRoot {
				return pos, nil
			}
			// The end of a compound or described value.
			d.off = cur.start
			switch cur.kind {
			case lvList, lvMap, lvArray, lvDescArray:
				if pos != cur.end {
					return cur.start, fault(wire.SizeMismatch, cur.start, cur.code)
				}
				switch cur.kind {
				case lvList:
					err = h.OnListEnd()
				case lvMap:
					err = h.OnMapEnd()
				default:
					err = h.OnArrayEnd()
				}
			default:
				err = h.OnDescribedEnd()
			}
			cur = stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			lim = data[:cur.end]
			if err != nil {
				return pos, stop(err)
			}
			continue
		}
		cur.left--

		// The value's constructor: its own, or its array's.
		start := pos
		var c amqpsax.Code
		if cur.kind < lvArray {
			if pos >= len(lim) {
				if cur.kind == lvRoot && values < 0 {
					return pos, nil // DecodeAll: the data ends between values
				}
				return pos, wire.NewError("dispatch", wire.Cut(lim, data), pos, 0, false)
			}
			c = amqpsax.Code(lim[pos])
			pos++
		} else {
			switch cur.kind {
			case lvArray:
				c = cur.elem
			case lvDescArray:
				if err := d.describedElem(h, &cur, &stack, lim, data, &pos, maxDepth); err != nil {
					return pos, stop(err)
				}
				continue
			default: // lvDescElem
				if cur.left == 1 { // the descriptor, replayed from the array's constructor
					start, pos = cur.desc, cur.desc+1
					c = amqpsax.Code(data[cur.desc])
				} else { // the element's body
					start, pos = cur.back, cur.back
					c = cur.elem
				}
			}
		}

		d.off = start
		info := wire.Table[c]
		switch info.Op {
		case wire.OpNull:
			err = h.OnNull()
		case wire.OpTrue:
			err = h.OnBool(true)
		case wire.OpFalse:
			err = h.OnBool(false)
		case wire.OpUint0:
			err = h.OnUint(0)
		case wire.OpUlong0:
			err = h.OnUlong(0)
		case wire.OpSmallUint:
			if pos >= len(lim) {
				return start, cut(lim, data, start, c)
			}
			err = h.OnUint(uint32(lim[pos]))
			pos++
		case wire.OpSmallInt:
			if pos >= len(lim) {
				return start, cut(lim, data, start, c)
			}
			err = h.OnInt(int32(int8(lim[pos])))
			pos++
		case wire.OpSmallUlong:
			if pos >= len(lim) {
				return start, cut(lim, data, start, c)
			}
			err = h.OnUlong(uint64(lim[pos]))
			pos++
		case wire.OpSmallLong:
			if pos >= len(lim) {
				return start, cut(lim, data, start, c)
			}
			err = h.OnLong(int64(int8(lim[pos])))
			pos++
		case wire.OpUbyte:
			if pos >= len(lim) {
				return start, cut(lim, data, start, c)
			}
			err = h.OnUbyte(lim[pos])
			pos++
		case wire.OpByte:
			if pos >= len(lim) {
				return start, cut(lim, data, start, c)
			}
			err = h.OnByte(int8(lim[pos]))
			pos++
		case wire.OpBool:
			if pos >= len(lim) {
				return start, cut(lim, data, start, c)
			}
			if lim[pos] > 1 {
				return start, fault(wire.BadBool, start, c)
			}
			err = h.OnBool(lim[pos] == 1)
			pos++
		case wire.OpUshort, wire.OpShort:
			if len(lim)-pos < 2 {
				return start, cut(lim, data, start, c)
			}
			v := binary.BigEndian.Uint16(lim[pos:])
			if c == amqpsax.CodeUshort {
				err = h.OnUshort(v)
			} else {
				err = h.OnShort(int16(v))
			}
			pos += 2
		case wire.OpUint:
			if len(lim)-pos < 4 {
				return start, cut(lim, data, start, c)
			}
			err = h.OnUint(binary.BigEndian.Uint32(lim[pos:]))
			pos += 4
		case wire.OpInt:
			if len(lim)-pos < 4 {
				return start, cut(lim, data, start, c)
			}
			err = h.OnInt(int32(binary.BigEndian.Uint32(lim[pos:])))
			pos += 4
		case wire.OpFloat, wire.OpChar, wire.OpDecimal32:
			if len(lim)-pos < 4 {
				return start, cut(lim, data, start, c)
			}
			p := lim[pos : pos+4]
			switch c {
			case amqpsax.CodeFloat:
				err = h.OnFloat(wire.Float(p))
			case amqpsax.CodeChar:
				err = h.OnChar(wire.Char(p))
			default:
				err = h.OnDecimal32(amqpsax.Decimal32(p))
			}
			pos += 4
		case wire.OpUlong:
			if len(lim)-pos < 8 {
				return start, cut(lim, data, start, c)
			}
			err = h.OnUlong(binary.BigEndian.Uint64(lim[pos:]))
			pos += 8
		case wire.OpLong:
			if len(lim)-pos < 8 {
				return start, cut(lim, data, start, c)
			}
			err = h.OnLong(int64(binary.BigEndian.Uint64(lim[pos:])))
			pos += 8
		case wire.OpDouble, wire.OpTimestamp, wire.OpDecimal64:
			if len(lim)-pos < 8 {
				return start, cut(lim, data, start, c)
			}
			p := lim[pos : pos+8]
			switch c {
			case amqpsax.CodeDouble:
				err = h.OnDouble(wire.Double(p))
			case amqpsax.CodeTimestamp:
				err = h.OnTimestamp(wire.Timestamp(p))
			default:
				err = h.OnDecimal64(amqpsax.Decimal64(p))
			}
			pos += 8
		case wire.OpUUID, wire.OpDecimal128:
			if len(lim)-pos < 16 {
				return start, cut(lim, data, start, c)
			}
			p := lim[pos : pos+16]
			if c == amqpsax.CodeUUID {
				err = h.OnUUID(uuid.UUID(p))
			} else {
				err = h.OnDecimal128(amqpsax.Decimal128(p))
			}
			pos += 16
		case wire.OpString, wire.OpSymbol, wire.OpBinary:
			hdr, size := wire.Var(info, lim[pos:])
			if hdr < 0 {
				return start, cut(lim, data, start, c)
			}
			end := pos + hdr + size
			v := lim[pos+hdr : end : end]
			pos = end
			// A replayed array descriptor was validated with its array.
			if d.Validate && !(cur.kind == lvDescElem && cur.left == 1) {
				if st := wire.CheckText(info.Kind, v); st != wire.OK {
					return start, fault(st, start, c)
				}
			}
			switch info.Op {
			case wire.OpString:
				err = h.OnString(v)
			case wire.OpSymbol:
				err = h.OnSymbol(v)
			default:
				err = h.OnBinary(v)
			}
		case wire.OpList0:
			// An empty list is a level of nesting like any other (a
			// Cursor enters it), so it counts against MaxDepth.
			if len(stack) >= maxDepth {
				return start, fault(wire.TooDeep, start, c)
			}
			if err = h.OnListStart(0); err == nil {
				err = h.OnListEnd()
			} else if err == amqpsax.SkipValue {
				err = nil
			}
		case wire.OpList, wire.OpMap, wire.OpArray:
			if n, err := d.compound(h, &cur, &stack, &lim, data, &pos, start, c, maxDepth); err != nil {
				return n, stop(err)
			}
			continue
		case wire.OpDescribed:
			if len(stack) >= maxDepth {
				return start, fault(wire.TooDeep, start, c)
			}
			switch err = h.OnDescribedStart(); err {
			case nil:
				stack = append(stack, cur)
				cur = level{kind: lvDescribed, code: c, start: start, end: cur.end, left: 2}
			case amqpsax.SkipValue:
				n, off := wire.Skip(lim[start:])
				if n < 0 {
					st := wire.Status(n)
					if st == wire.EOF {
						st = wire.Cut(lim, data)
					}
					return start + off, wire.NewErrorAt("dispatch", st, lim, start+off)
				}
				pos, err = start+n, nil
			default:
				return start, stop(err)
			}
			continue
		default:
			return start, fault(wire.BadCode, start, c)
		}
		if err != nil {
			return pos, stop(err)
		}
	}
}

// stop maps SkipAll to a clean stop.
func stop(err error) error {
	if err == amqpsax.SkipAll {
		return nil
	}
	return err
}

// compound opens the list, map or array at start, whose constructor c has
// been read (*pos is after it): it checks its length fields and the
// nesting limit, reports its start, and makes it the current level — or
// skips it, when the Handler says SkipValue. On an error it returns the
// offset Decode returns with it: of the fault, or where the Handler
// stopped decoding.
func (d *Decoder) compound(h amqpsax.Handler, cur *level, stack *[]level, lim *[]byte, data []byte, pos *int, start int, c amqpsax.Code, maxDepth int) (int, error) {
	hdr, size, count := wire.Body(c, (*lim)[*pos:])
	if hdr < 0 {
		st := wire.Status(hdr)
		if st == wire.EOF {
			st = wire.Cut(*lim, data)
		}
		return start, fault(st, start, c)
	}
	if len(*stack) >= maxDepth {
		return start, fault(wire.TooDeep, start, c)
	}
	body := *pos + hdr
	nl := level{code: c, start: start, end: body + size, left: count}
	var err error
	switch wire.Table[c].Kind {
	case amqpsax.KindList:
		nl.kind = lvList
		err = h.OnListStart(count)
	case amqpsax.KindMap:
		nl.kind = lvMap
		err = h.OnMapStart(count / 2)
	default:
		el, ctorLen, descOff, descLen := wire.ArrayCtor(data[body:nl.end], count)
		if ctorLen < 0 {
			return body + descOff, fault(wire.Status(ctorLen), body+descOff, c)
		}
		nl.kind, nl.elem = lvArray, el
		body += ctorLen // the first element's body
		kind := wire.Table[el].Kind
		var desc []byte
		if descOff > 0 {
			nl.kind, nl.desc = lvDescArray, body-ctorLen+descOff
			desc = data[nl.desc : nl.desc+descLen : nl.desc+descLen]
			kind = amqpsax.KindDescribed
			if d.Validate {
				if st := wire.CheckDescriptor(desc); st != wire.OK {
					return nl.desc, fault(st, nl.desc, amqpsax.Code(desc[0]))
				}
			}
		}
		err = h.OnArrayStart(count, kind)
		if err == nil && desc != nil {
			if ah, ok := h.(amqpsax.ArrayDescriptorHandler); ok {
				err = ah.OnArrayDescriptor(desc, wire.Table[el].Kind)
			}
		}
		if err == nil && desc == nil && batchable(el) {
			if bh, ok := h.(amqpsax.BatchHandler); ok {
				if err = d.batches(data[body:nl.end], body, bh, el, count); err == nil {
					d.off = start
					if err = h.OnArrayEnd(); err != nil {
						return nl.end, err
					}
				}
				if err == nil || err == amqpsax.SkipValue {
					*pos = nl.end
					return 0, nil
				}
				if e, ok := err.(*amqpsax.Error); ok && e.Op == "dispatch" {
					return e.Offset, err // a bad boolean byte
				}
				return start, err
			}
		}
	}
	switch err {
	case nil:
		*stack = append(*stack, *cur)
		*cur = nl
		*lim = data[:nl.end]
		*pos = body
		return 0, nil
	case amqpsax.SkipValue:
		*pos = nl.end
		return 0, nil
	}
	return start, err
}

// describedElem starts the next element of an array of described values
// (cur): a described value whose descriptor is the array's and whose value
// is the element body at *pos. The body's length fields are checked first,
// as a Cursor landing on the element does.
func (d *Decoder) describedElem(h amqpsax.Handler, cur *level, stack *[]level, lim, data []byte, pos *int, maxDepth int) error {
	start := *pos
	hdr, size, _ := wire.Body(cur.elem, lim[start:])
	if hdr < 0 {
		st := wire.Status(hdr)
		if st == wire.EOF {
			st = wire.Cut(lim, data)
		}
		return fault(st, start, cur.elem)
	}
	if len(*stack) >= maxDepth {
		return fault(wire.TooDeep, start, amqpsax.CodeDescribed)
	}
	d.off = start
	switch err := h.OnDescribedStart(); err {
	case nil:
	case amqpsax.SkipValue:
		*pos = start + hdr + size
		return nil
	default:
		return err
	}
	*stack = append(*stack, *cur)
	*cur = level{kind: lvDescElem, elem: cur.elem, code: amqpsax.CodeDescribed, start: start,
		end: cur.end, left: 2, desc: cur.desc, back: start}
	return nil
}
