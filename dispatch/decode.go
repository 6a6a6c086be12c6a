package dispatch

import (
	"encoding/binary"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
	"github.com/google/uuid"
)

// DefaultMaxDepth is the nesting limit of a Decoder whose MaxDepth is 0.
const DefaultMaxDepth = 1000

// Decoder is a push decoder: it walks encoded AMQP values and calls a
// Handler once per value, in wire order. Its exported fields are options;
// set them before the first Decode. A Decoder is reusable, and once warm
// (its stack grown to the depth of the input) it decodes with no
// allocation. It is not safe for concurrent use; use one per goroutine.
type Decoder struct {
	// MaxDepth limits how deeply lists, maps, arrays and described values
	// may nest; deeper input is an error wrapping amqpsax.ErrTooDeep. Zero
	// means DefaultMaxDepth.
	MaxDepth int
	// Validate makes the decoder check that strings are valid UTF-8 and
	// symbols are ASCII, failing with amqpsax.ErrInvalidUTF8 or
	// amqpsax.ErrInvalidSymbol. Off, string and symbol bytes are passed on
	// unchecked.
	Validate bool

	stack []frame
	batch batchBuf
}

// Frame kinds.
const (
	fRoot      = iota // the top level: values until left is 0 (or data ends, for DecodeAll)
	fList             // a list's elements
	fMap              // a map's keys and values
	fArray            // an array's element bodies
	fDescribed        // a described value: descriptor, then value
	fDescElem         // an element of an array of described values: its value's body
)

type frame struct {
	kind  uint8
	elem  amqpsax.Code // fArray, fDescElem: element constructor
	code  amqpsax.Code // the constructor of the value this frame is (for errors)
	start int          // offset of the value this frame is
	end   int          // fList, fMap, fArray: where its contents end
	left  int          // values still to read at this level
	desc  int          // fArray of described values: offset of the descriptor's code, else -1
}

// Decode decodes one value (with everything it contains) from the start
// of data, calling h for each value. It returns the number of bytes the
// value occupies. On bad input it returns an *amqpsax.Error with the
// offset of the fault, and n is that offset; an error h returns
// is returned unchanged; when h returns amqpsax.SkipAll, Decode stops and
// returns nil with n the offset it reached.
func (d *Decoder) Decode(data []byte, h amqpsax.Handler) (n int, err error) {
	n, err = d.run(data, h, 1)
	if e, ok := err.(*amqpsax.Error); ok {
		n = e.Offset
	}
	return n, err
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

// fault is an error found at offset off in a value whose constructor is
// code (hasCode false when the constructor is missing).
func fault(st wire.Status, off int, code amqpsax.Code, hasCode bool) error {
	return wire.NewError("dispatch", st, off, code, hasCode)
}

// run is the decoding loop. The Go stack does not grow with the nesting
// of the input: each open compound is a frame in d.stack.
func (d *Decoder) run(data []byte, h amqpsax.Handler, values int) (int, error) {
	maxDepth := d.MaxDepth
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	bh, _ := h.(amqpsax.BatchHandler)
	stack := append(d.stack[:0], frame{kind: fRoot, end: len(data), left: values, desc: -1})
	defer func() { d.stack = stack[:0] }()
	pos := 0
	for {
		top := &stack[len(stack)-1]
		if top.left == 0 {
			if top.kind == fRoot {
				return pos, nil
			}
			if err := d.close(h, top, pos); err != nil {
				return pos, stop(err)
			}
			stack = stack[:len(stack)-1]
			continue
		}
		if pos == len(data) && top.kind == fRoot && top.left < 0 {
			return pos, nil
		}
		top.left--
		if wire.Counting {
			wire.Work.Values++
		}
		// Every value lies within its container: its bytes end at lim.
		lim := data[:top.end]

		// Find the value to decode: its constructor code, where its body
		// starts, and where the value starts (for errors and skipping).
		var c amqpsax.Code
		start, body := pos, pos
		switch top.kind {
		case fArray:
			c = top.elem
			if top.desc >= 0 {
				// An element of an array of described values: a described
				// value whose descriptor is the array's and whose value is
				// this element's body.
				// Its body's length fields are checked first, as a cursor
				// landing on the element does.
				hdr, size, _ := wire.Body(c, lim[pos:])
				if hdr < 0 {
					return pos, fault(wire.Status(hdr), pos, c, true)
				}
				if len(stack) > maxDepth {
					return pos, fault(wire.TooDeep, pos, amqpsax.CodeDescribed, true)
				}
				switch err := h.OnDescribedStart(); err {
				case nil:
				case amqpsax.SkipValue:
					pos += hdr + size
					continue
				case amqpsax.SkipAll:
					return pos, nil
				default:
					return pos, err
				}
				// The descriptor was validated once, when the array was
				// opened: replaying it costs no validation.
				dc := amqpsax.Code(data[top.desc])
				if _, err := d.primitive(lim, h, dc, top.desc+1, top.desc, false); err != nil {
					return pos, stop(err)
				}
				stack = append(stack, frame{kind: fDescElem, elem: c, code: amqpsax.CodeDescribed, start: pos, end: top.end, left: 1, desc: -1})
				continue
			}
		case fDescElem:
			c = top.elem
		default:
			if pos >= len(lim) {
				return pos, fault(wire.EOF, pos, 0, false)
			}
			c = amqpsax.Code(data[pos])
			body = pos + 1
		}

		info := wire.Table[c]
		switch info.Cat {
		case wire.Fixed, wire.Variable:
			// The commonest codes, decoded here without the call to
			// primitive and its second dispatch; the rest, and anything
			// cut short, go to primitive.
			var err error
			next := -1
			switch c {
			case amqpsax.CodeNull:
				next, err = body, h.OnNull()
			case amqpsax.CodeTrue, amqpsax.CodeFalse:
				next, err = body, h.OnBool(c == amqpsax.CodeTrue)
			case amqpsax.CodeUint0:
				next, err = body, h.OnUint(0)
			case amqpsax.CodeUlong0:
				next, err = body, h.OnUlong(0)
			case amqpsax.CodeList0:
				// An empty list is a level of nesting like any other
				// (a Cursor enters it), so it counts against MaxDepth.
				if len(stack) > maxDepth {
					return start, fault(wire.TooDeep, start, c, true)
				}
			case amqpsax.CodeSmallUint:
				if body < len(lim) {
					next, err = body+1, h.OnUint(uint32(lim[body]))
				}
			case amqpsax.CodeSmallUlong:
				if body < len(lim) {
					next, err = body+1, h.OnUlong(uint64(lim[body]))
				}
			case amqpsax.CodeSmallInt:
				if body < len(lim) {
					next, err = body+1, h.OnInt(int32(int8(lim[body])))
				}
			case amqpsax.CodeSmallLong:
				if body < len(lim) {
					next, err = body+1, h.OnLong(int64(int8(lim[body])))
				}
			case amqpsax.CodeStr8, amqpsax.CodeSym8, amqpsax.CodeVbin8:
				if body < len(lim) && !d.Validate {
					if end := body + 1 + int(lim[body]); end <= len(lim) {
						v := lim[body+1 : end : end]
						switch c {
						case amqpsax.CodeStr8:
							err = h.OnString(v)
						case amqpsax.CodeSym8:
							err = h.OnSymbol(v)
						default:
							err = h.OnBinary(v)
						}
						next = end
					}
				}
			}
			if next < 0 {
				next, err = d.primitive(lim, h, c, body, start, d.Validate)
			}
			if err != nil {
				if err == amqpsax.SkipAll {
					return next, nil
				}
				return next, err
			}
			pos = next
			continue
		case wire.Described:
			if len(stack) > maxDepth {
				return pos, fault(wire.TooDeep, start, c, true)
			}
			switch err := h.OnDescribedStart(); err {
			case nil:
			case amqpsax.SkipValue:
				n, off := wire.Skip(lim[start:])
				if n < 0 {
					return start + off, wire.NewErrorAt("dispatch", wire.Status(n), lim, start+off)
				}
				pos = start + n
				continue
			case amqpsax.SkipAll:
				return pos, nil
			default:
				return pos, err
			}
			stack = append(stack, frame{kind: fDescribed, code: c, start: start, end: top.end, left: 2, desc: -1})
			pos = body
			continue
		case wire.Invalid:
			return start, fault(wire.BadCode, start, c, true)
		}

		// A list, map or array.
		hdr, size, count := wire.Body(c, lim[body:])
		if hdr < 0 {
			return start, fault(wire.Status(hdr), start, c, true)
		}
		if len(stack) > maxDepth {
			return start, fault(wire.TooDeep, start, c, true)
		}
		f := frame{code: c, start: start, end: body + hdr + size, left: count, desc: -1}
		var err error
		switch info.Kind {
		case amqpsax.KindList:
			f.kind = fList
			err = h.OnListStart(count)
		case amqpsax.KindMap:
			f.kind = fMap
			err = h.OnMapStart(count / 2)
		default:
			f.kind = fArray
			el, ctorLen, descOff, descLen := wire.ArrayCtor(lim[body+hdr:f.end], count)
			if ctorLen < 0 {
				off := body + hdr + descOff
				return off, fault(wire.Status(ctorLen), off, c, true)
			}
			f.elem = el
			var desc []byte
			if descOff > 0 {
				f.desc = body + hdr + descOff
				desc = data[f.desc : f.desc+descLen : f.desc+descLen]
				if d.Validate {
					if st := wire.CheckDescriptor(desc); st != wire.OK {
						return f.desc, fault(st, f.desc, amqpsax.Code(desc[0]), true)
					}
				}
			}
			pos = body + hdr + ctorLen // the first element body
			kind := wire.Table[el].Kind
			if f.desc >= 0 {
				kind = amqpsax.KindDescribed
			}
			err = h.OnArrayStart(count, kind)
			if err == nil && desc != nil {
				if ah, ok := h.(amqpsax.ArrayDescriptorHandler); ok {
					err = ah.OnArrayDescriptor(desc, wire.Table[el].Kind)
				}
			}
			if err == nil && bh != nil && f.desc < 0 && batchable(el) {
				if err = d.batches(lim[pos:f.end], pos, bh, el, count); err == nil {
					err = h.OnArrayEnd()
				}
				if err == nil || err == amqpsax.SkipValue {
					pos = f.end
					continue
				}
			}
		}
		switch err {
		case nil:
			if info.Kind != amqpsax.KindArray {
				pos = body + hdr
			}
			stack = append(stack, f)
		case amqpsax.SkipValue:
			pos = f.end
		case amqpsax.SkipAll:
			return pos, nil
		default:
			return pos, err
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

// close ends the compound or described value of frame f, whose contents
// ended at pos.
func (d *Decoder) close(h amqpsax.Handler, f *frame, pos int) error {
	var err error
	switch f.kind {
	case fList, fMap, fArray:
		if pos != f.end {
			return fault(wire.SizeMismatch, f.start, f.code, true)
		}
		switch f.kind {
		case fList:
			err = h.OnListEnd()
		case fMap:
			err = h.OnMapEnd()
		default:
			err = h.OnArrayEnd()
		}
	default:
		err = h.OnDescribedEnd()
	}
	return err
}

// primitive decodes the fixed- or variable-width value whose constructor
// is c and whose body starts at data[body], calling h. start is where the
// value starts (its constructor, or its body inside an array), for errors.
// It returns the offset after the value.
//
// validate says whether strings and symbols are checked: d.Validate,
// except for a replayed array descriptor, checked once when its array was
// opened.
func (d *Decoder) primitive(data []byte, h amqpsax.Handler, c amqpsax.Code, body, start int, validate bool) (int, error) {
	p := data[body:]
	var err error
	switch c {
	case amqpsax.CodeNull:
		err = h.OnNull()
		return body, err
	case amqpsax.CodeTrue:
		return body, h.OnBool(true)
	case amqpsax.CodeFalse:
		return body, h.OnBool(false)
	case amqpsax.CodeUint0:
		return body, h.OnUint(0)
	case amqpsax.CodeUlong0:
		return body, h.OnUlong(0)
	case amqpsax.CodeList0:
		if err = h.OnListStart(0); err == nil {
			err = h.OnListEnd()
		} else if err == amqpsax.SkipValue {
			err = nil
		}
		return body, err
	case amqpsax.CodeSmallUint, amqpsax.CodeSmallUlong, amqpsax.CodeUbyte,
		amqpsax.CodeSmallInt, amqpsax.CodeSmallLong, amqpsax.CodeByte, amqpsax.CodeBool:
		if len(p) < 1 {
			return start, fault(wire.EOF, start, c, true)
		}
		v := p[0]
		switch c {
		case amqpsax.CodeSmallUint:
			err = h.OnUint(uint32(v))
		case amqpsax.CodeSmallUlong:
			err = h.OnUlong(uint64(v))
		case amqpsax.CodeUbyte:
			err = h.OnUbyte(v)
		case amqpsax.CodeSmallInt:
			err = h.OnInt(int32(int8(v)))
		case amqpsax.CodeSmallLong:
			err = h.OnLong(int64(int8(v)))
		case amqpsax.CodeByte:
			err = h.OnByte(int8(v))
		default:
			if v > 1 {
				return start, fault(wire.BadBool, start, c, true)
			}
			err = h.OnBool(v == 1)
		}
		return body + 1, err
	case amqpsax.CodeUshort, amqpsax.CodeShort:
		if len(p) < 2 {
			return start, fault(wire.EOF, start, c, true)
		}
		v := binary.BigEndian.Uint16(p)
		if c == amqpsax.CodeUshort {
			err = h.OnUshort(v)
		} else {
			err = h.OnShort(int16(v))
		}
		return body + 2, err
	case amqpsax.CodeUint, amqpsax.CodeInt, amqpsax.CodeFloat, amqpsax.CodeChar, amqpsax.CodeDecimal32:
		if len(p) < 4 {
			return start, fault(wire.EOF, start, c, true)
		}
		switch c {
		case amqpsax.CodeUint:
			err = h.OnUint(binary.BigEndian.Uint32(p))
		case amqpsax.CodeInt:
			err = h.OnInt(int32(binary.BigEndian.Uint32(p)))
		case amqpsax.CodeFloat:
			err = h.OnFloat(wire.Float(p))
		case amqpsax.CodeChar:
			err = h.OnChar(wire.Char(p))
		default:
			err = h.OnDecimal32(amqpsax.Decimal32(p[:4]))
		}
		return body + 4, err
	case amqpsax.CodeUlong, amqpsax.CodeLong, amqpsax.CodeDouble, amqpsax.CodeTimestamp, amqpsax.CodeDecimal64:
		if len(p) < 8 {
			return start, fault(wire.EOF, start, c, true)
		}
		switch c {
		case amqpsax.CodeUlong:
			err = h.OnUlong(binary.BigEndian.Uint64(p))
		case amqpsax.CodeLong:
			err = h.OnLong(int64(binary.BigEndian.Uint64(p)))
		case amqpsax.CodeDouble:
			err = h.OnDouble(wire.Double(p))
		case amqpsax.CodeTimestamp:
			err = h.OnTimestamp(wire.Timestamp(p))
		default:
			err = h.OnDecimal64(amqpsax.Decimal64(p[:8]))
		}
		return body + 8, err
	case amqpsax.CodeUUID, amqpsax.CodeDecimal128:
		if len(p) < 16 {
			return start, fault(wire.EOF, start, c, true)
		}
		if c == amqpsax.CodeUUID {
			err = h.OnUUID(uuid.UUID(p[:16]))
		} else {
			err = h.OnDecimal128(amqpsax.Decimal128(p[:16]))
		}
		return body + 16, err
	}
	// binary, string, symbol
	hdr, size, _ := wire.Body(c, p)
	if hdr < 0 {
		return start, fault(wire.Status(hdr), start, c, true)
	}
	v := p[hdr : hdr+size : hdr+size]
	k := wire.Table[c].Kind
	if validate {
		if st := wire.CheckText(k, v); st != wire.OK {
			return start, fault(st, start, c, true)
		}
	}
	switch k {
	case amqpsax.KindBinary:
		err = h.OnBinary(v)
	case amqpsax.KindString:
		err = h.OnString(v)
	default:
		err = h.OnSymbol(v)
	}
	return body + hdr + size, err
}
