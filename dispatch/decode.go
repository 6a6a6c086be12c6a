package dispatch

import (
	"encoding/binary"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
	"github.com/google/uuid"
)

// This file is laid out in the order a Decode runs:
//
//   - Decoder, its options, and the two structs of its loop: state (the
//     level being read, kept where run's loop reads it per value) and
//     level (an enclosing level, on the Decoder's stack; its kinds and
//     their rules are wire.Level's).
//   - Decode, DecodeAll and Decode (the function), then the fault helpers
//     (fault, cut, sized, status), which only the error path reaches.
//   - run, the loop: a level's end (size check, …End event), then one
//     value: its constructor (its own, or its array's), described values
//     before the jump table, then one case per wire.Op that reads the
//     payload in place and calls the Handler. Lists and maps open here.
//   - push and pop, which enter and leave a level.
//   - array (an array's header, constructor, descriptor and batches) and
//     describedElem (an element of an array of described values): the
//     two openings too large to sit in run's switch.

// Decoder is a push decoder: it walks encoded AMQP values and calls a
// Handler once per value, in wire order. Its exported fields are options;
// set them before the first Decode. A Decoder is reusable, and once warm
// (its stack grown to the depth of the input) it decodes with no
// allocation. It is not safe for concurrent use; use one per goroutine.
type Decoder struct {
	// MaxDepth limits how many lists (list0 included), maps, arrays and
	// described values may be open at once; deeper input is an error
	// wrapping amqpsax.ErrTooDeep. Zero means [amqpsax.DefaultMaxDepth].
	MaxDepth int
	// Validate makes the decoder check that strings are valid UTF-8 and
	// symbols are ASCII, failing with amqpsax.ErrInvalidUTF8 or
	// amqpsax.ErrInvalidSymbol. Off, string and symbol bytes are passed on
	// unchecked.
	Validate bool

	stack []level // the enclosing levels
	batch batchBuf
	off   int // Offset: the value being reported
}

// Offset returns, during a call of a Handler method, the offset in the
// input of the value that call reports: its constructor, or in an array
// the start of the element's body (for OnListEnd and the other …End
// methods, of the compound that ends). Between calls it is the offset of
// the last value reported.
func (d *Decoder) Offset() int { return d.off }

// state is where run is: what each value reads of the level being read
// (the top of the Decoder's stack, whose other fields only ends, errors
// and arrays of described values read), its values' limit, and the
// offset of the next value. Entering and leaving a level writes these
// few fields, not a whole level.
type state struct {
	left     int          // the top level's values still to read (its own is stale until a push)
	pos      int          // the next value
	lim      []byte       // data[:top.end]
	kind     wire.Level   // the top level's kind
	elem     amqpsax.Code // and its element constructor
	data     []byte       // the whole input
	maxDepth int          // too deep: len(d.stack) > maxDepth (the stack holds the root too)
}

// level is a level of nesting, on the Decoder's stack: the root at the
// bottom, the one being read at the top.
type level struct {
	kind  wire.Level
	elem  amqpsax.Code // array levels: the element constructor
	code  amqpsax.Code // the constructor of the value this level is (for errors)
	start int          // offset of that value (wire.LvDescElem: the element's body, read after the descriptor)
	end   int          // where the level's values end: lim is data[:end]
	left  int          // values still to read at this level
	desc  int          // wire.LvDescArray, wire.LvDescElem: offset of the descriptor's constructor
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
// the level being read: truncation or overrun (wire.Cut).
func (d *Decoder) cut(start int, c amqpsax.Code) error {
	return fault(wire.Cut(d.sized()), start, c)
}

// sized reports whether the level being read, or one enclosing it, is
// sized (wire.Level.Sized): dispatch never measures a described value, so
// only lists, maps and arrays are.
func (d *Decoder) sized() bool {
	for _, l := range d.stack {
		if l.kind.Sized(false) {
			return true
		}
	}
	return false
}

// run is the decoding loop. The Go stack does not grow with the nesting
// of the input: every level is on d.stack, and what each value needs of
// the one being read is in st (its values end at len(lim)). Each value is
// one pass: its constructor, one switch on its wire.Op (a jump table),
// its payload read in place and the Handler called.
func (d *Decoder) run(data []byte, h amqpsax.Handler, values int) (int, error) {
	// The level being read and the position, kept in memory on purpose
	// (array takes their address): in registers, the compiler spills and
	// reloads them around every Handler call, which costs more.
	st := state{kind: wire.LvTop, left: values, lim: data, data: data, maxDepth: d.MaxDepth}
	if st.maxDepth <= 0 {
		st.maxDepth = amqpsax.DefaultMaxDepth
	}
	if cap(d.stack) == 0 {
		d.stack = make([]level, 1, 8)
	}
	d.stack = d.stack[:1] // the root: kind wire.LvTop; end is all it needs set (left is saved by push)
	d.stack[0].end = len(data)
	var err error
	for {
		if st.left == 0 {
			if st.kind == wire.LvTop {
				return st.pos, nil
			}
			// The end of a compound or described value.
			top := &d.stack[len(d.stack)-1]
			d.off = top.start
			switch st.kind {
			case wire.LvList, wire.LvMap, wire.LvArray, wire.LvDescArray: // wire.Level.Ends, spelled out: a call of it before this switch cost ~30 instructions a small message (callgrind)
				if st.pos != len(st.lim) { // its values end where its size says
					return top.start, fault(wire.SizeMismatch, top.start, top.code)
				}
				switch st.kind {
				case wire.LvList:
					err = h.OnListEnd()
				case wire.LvMap:
					err = h.OnMapEnd()
				default:
					err = h.OnArrayEnd()
				}
			default:
				err = h.OnDescribedEnd()
			}
			d.stack = d.stack[:len(d.stack)-1]
			st.pop(&d.stack[len(d.stack)-1])
			if err != nil {
				return st.pos, stop(err)
			}
			continue
		}
		st.left--
		if wire.Counting {
			wire.Work.Values++
		}

		// The value's constructor: its own, or its array's.
		start := st.pos
		var c amqpsax.Code
		if st.kind < wire.LvArray {
			if st.pos >= len(st.lim) {
				if st.kind == wire.LvTop && values < 0 {
					return st.pos, nil // DecodeAll: the st.data ends between values
				}
				return st.pos, wire.NewError("dispatch", wire.Cut(d.sized()), st.pos, 0, false)
			}
			c = amqpsax.Code(st.lim[st.pos])
			st.pos++
		} else {
			switch st.kind {
			case wire.LvArray:
				c = st.elem
			case wire.LvDescArray:
				// The next element of an array of described values: a
				// described value whose descriptor is the array's and
				// whose value is the element body at st.pos.
				skip, err := d.describedElem(h, st.elem, st.lim, st.pos, st.maxDepth)
				if err != nil {
					return st.pos, stop(err)
				}
				if skip > 0 {
					st.pos += skip
					continue
				}
				top := &d.stack[len(d.stack)-1]
				d.push(&st, level{kind: wire.LvDescElem, elem: st.elem, code: amqpsax.CodeDescribed, start: st.pos,
					end: top.end, left: 2, desc: top.desc})
				continue
			default: // wire.LvDescElem
				top := &d.stack[len(d.stack)-1]
				if st.left == 1 { // the descriptor, replayed from the array's constructor
					start, st.pos = top.desc, top.desc+1
					c = amqpsax.Code(st.data[top.desc])
				} else { // the element's body
					start, st.pos = top.start, top.start
					c = st.elem
				}
			}
		}

		d.off = start
		// Described values (every section and performative) are tested
		// for before the jump table: on messages, the branch predictor
		// guesses this comparison better than the table's jump (bulk
		// messages 6% faster, measured).
		if c == amqpsax.CodeDescribed {
			if len(d.stack) > st.maxDepth {
				return start, fault(wire.TooDeep, start, c)
			}
			switch err = h.OnDescribedStart(); err {
			case nil:
				d.push(&st, level{kind: wire.LvDescribed, code: c, start: start, end: len(st.lim), left: 2})
				if st.pos+1 < len(st.lim) && st.lim[st.pos] == byte(amqpsax.CodeSmallUlong) {
					// The descriptor almost every peer writes (a section's,
					// a performative's): read here, it spares the jump
					// table a dispatch that most often follows another.
					st.left = 1
					if wire.Counting {
						wire.Work.Values++
					}
					d.off = st.pos
					err = h.OnUlong(uint64(st.lim[st.pos+1]))
					st.pos += 2
					if err != nil {
						return st.pos, stop(err)
					}
				}
			case amqpsax.SkipValue:
				n, off := wire.Skip(st.lim[start:])
				if n < 0 {
					return start + off, wire.NewErrorAt("dispatch", d.status(n), st.lim, start+off)
				}
				st.pos, err = start+n, nil
			default:
				return start, stop(err)
			}
			continue
		}
		switch wire.Table[c].Op() {
		case wire.OpNull:
			err = h.OnNull()
		case wire.OpTrue, wire.OpFalse:
			// One target for both: a jump table with two would make
			// the branch predictor guess which, and on random booleans
			// miss half the time (3x slower, measured).
			err = h.OnBool(c == amqpsax.CodeTrue)
		case wire.OpUint0:
			err = h.OnUint(0)
		case wire.OpUlong0:
			err = h.OnUlong(0)
		case wire.OpSmallUint:
			if st.pos >= len(st.lim) {
				return start, d.cut(start, c)
			}
			err = h.OnUint(uint32(st.lim[st.pos]))
			st.pos++
		case wire.OpSmallInt:
			if st.pos >= len(st.lim) {
				return start, d.cut(start, c)
			}
			err = h.OnInt(int32(int8(st.lim[st.pos])))
			st.pos++
		case wire.OpSmallUlong:
			if st.pos >= len(st.lim) {
				return start, d.cut(start, c)
			}
			err = h.OnUlong(uint64(st.lim[st.pos]))
			st.pos++
		case wire.OpSmallLong:
			if st.pos >= len(st.lim) {
				return start, d.cut(start, c)
			}
			err = h.OnLong(int64(int8(st.lim[st.pos])))
			st.pos++
		case wire.OpUbyte:
			if st.pos >= len(st.lim) {
				return start, d.cut(start, c)
			}
			err = h.OnUbyte(st.lim[st.pos])
			st.pos++
		case wire.OpByte:
			if st.pos >= len(st.lim) {
				return start, d.cut(start, c)
			}
			err = h.OnByte(int8(st.lim[st.pos]))
			st.pos++
		case wire.OpBool:
			if st.pos >= len(st.lim) {
				return start, d.cut(start, c)
			}
			if st.lim[st.pos] > 1 {
				return start, fault(wire.BadBool, start, c)
			}
			err = h.OnBool(st.lim[st.pos] == 1)
			st.pos++
		case wire.OpUshort:
			if len(st.lim)-st.pos < 2 {
				return start, d.cut(start, c)
			}
			err = h.OnUshort(binary.BigEndian.Uint16(st.lim[st.pos:]))
			st.pos += 2
		case wire.OpShort:
			if len(st.lim)-st.pos < 2 {
				return start, d.cut(start, c)
			}
			err = h.OnShort(int16(binary.BigEndian.Uint16(st.lim[st.pos:])))
			st.pos += 2
		case wire.OpUint:
			if len(st.lim)-st.pos < 4 {
				return start, d.cut(start, c)
			}
			err = h.OnUint(binary.BigEndian.Uint32(st.lim[st.pos:]))
			st.pos += 4
		case wire.OpInt:
			if len(st.lim)-st.pos < 4 {
				return start, d.cut(start, c)
			}
			err = h.OnInt(int32(binary.BigEndian.Uint32(st.lim[st.pos:])))
			st.pos += 4
		case wire.OpFloat:
			if len(st.lim)-st.pos < 4 {
				return start, d.cut(start, c)
			}
			err = h.OnFloat(wire.Float(st.lim[st.pos:]))
			st.pos += 4
		case wire.OpChar:
			if len(st.lim)-st.pos < 4 {
				return start, d.cut(start, c)
			}
			err = h.OnChar(wire.Char(st.lim[st.pos:]))
			st.pos += 4
		case wire.OpDecimal32:
			if len(st.lim)-st.pos < 4 {
				return start, d.cut(start, c)
			}
			err = h.OnDecimal32(amqpsax.Decimal32(st.lim[st.pos : st.pos+4]))
			st.pos += 4
		case wire.OpUlong:
			if len(st.lim)-st.pos < 8 {
				return start, d.cut(start, c)
			}
			err = h.OnUlong(binary.BigEndian.Uint64(st.lim[st.pos:]))
			st.pos += 8
		case wire.OpLong:
			if len(st.lim)-st.pos < 8 {
				return start, d.cut(start, c)
			}
			err = h.OnLong(int64(binary.BigEndian.Uint64(st.lim[st.pos:])))
			st.pos += 8
		case wire.OpDouble:
			if len(st.lim)-st.pos < 8 {
				return start, d.cut(start, c)
			}
			err = h.OnDouble(wire.Double(st.lim[st.pos:]))
			st.pos += 8
		case wire.OpTimestamp:
			if len(st.lim)-st.pos < 8 {
				return start, d.cut(start, c)
			}
			err = h.OnTimestamp(wire.Timestamp(st.lim[st.pos:]))
			st.pos += 8
		case wire.OpDecimal64:
			if len(st.lim)-st.pos < 8 {
				return start, d.cut(start, c)
			}
			err = h.OnDecimal64(amqpsax.Decimal64(st.lim[st.pos : st.pos+8]))
			st.pos += 8
		case wire.OpUUID:
			if len(st.lim)-st.pos < 16 {
				return start, d.cut(start, c)
			}
			err = h.OnUUID(uuid.UUID(st.lim[st.pos : st.pos+16]))
			st.pos += 16
		case wire.OpDecimal128:
			if len(st.lim)-st.pos < 16 {
				return start, d.cut(start, c)
			}
			err = h.OnDecimal128(amqpsax.Decimal128(st.lim[st.pos : st.pos+16]))
			st.pos += 16
		case wire.OpString8:
			n := wire.Var8(st.lim[st.pos:])
			if n < 0 {
				return start, d.cut(start, c)
			}
			v := st.lim[st.pos+1 : st.pos+1+n : st.pos+1+n]
			if d.Validate && !st.kind.Replayed(st.left) && !wire.ValidUTF8(v) {
				return start, fault(wire.BadUTF8, start, c)
			}
			err = h.OnString(v)
			st.pos += 1 + n
		case wire.OpSymbol8:
			n := wire.Var8(st.lim[st.pos:])
			if n < 0 {
				return start, d.cut(start, c)
			}
			v := st.lim[st.pos+1 : st.pos+1+n : st.pos+1+n]
			if d.Validate && !st.kind.Replayed(st.left) && !wire.ValidASCII(v) {
				return start, fault(wire.BadSymbol, start, c)
			}
			err = h.OnSymbol(v)
			st.pos += 1 + n
		case wire.OpBinary8, wire.OpBinary32:
			// One target for both widths: with two, the jump table's
			// guess between them misses on a mix of sizes (binaries
			// +10%, measured); a comparison misses less.
			hdr, n := 1, 0
			if c == amqpsax.CodeVbin8 {
				n = wire.Var8(st.lim[st.pos:])
			} else {
				hdr, n = 4, wire.Var32(st.lim[st.pos:])
			}
			if n < 0 {
				return start, d.cut(start, c)
			}
			err = h.OnBinary(st.lim[st.pos+hdr : st.pos+hdr+n : st.pos+hdr+n])
			st.pos += hdr + n
		case wire.OpString32, wire.OpSymbol32:
			n := wire.Var32(st.lim[st.pos:])
			if n < 0 {
				return start, d.cut(start, c)
			}
			v := st.lim[st.pos+4 : st.pos+4+n : st.pos+4+n]
			if d.Validate && !st.kind.Replayed(st.left) {
				if s := wire.CheckText(wire.Table[c].Kind(), v); s != wire.OK {
					return start, fault(s, start, c)
				}
			}
			if c == amqpsax.CodeStr32 {
				err = h.OnString(v)
			} else {
				err = h.OnSymbol(v)
			}
			st.pos += 4 + n
		case wire.OpList0:
			// An empty list is a level of nesting like any other (a
			// Cursor enters it), so it counts against MaxDepth.
			if len(d.stack) > st.maxDepth {
				return start, fault(wire.TooDeep, start, c)
			}
			if err = h.OnListStart(0); err == nil {
				err = h.OnListEnd()
			} else if err == amqpsax.SkipValue {
				err = nil
			}
		case wire.OpList8, wire.OpList32, wire.OpMap8, wire.OpMap32:
			// The fast paths first; wire.Body names any fault.
			hdr, size, count := 2, -1, 0
			if c == amqpsax.CodeList8 || c == amqpsax.CodeMap8 {
				size, count = wire.Compound8(st.lim[st.pos:])
			} else {
				hdr = 8
				size, count = wire.Compound32(st.lim[st.pos:])
			}
			if size < 0 || count&1 != 0 && wire.Table[c].Kind() == amqpsax.KindMap {
				if hdr, size, count = wire.Body(c, st.lim[st.pos:]); hdr < 0 {
					return start, fault(d.status(hdr), start, c)
				}
			}
			if len(d.stack) > st.maxDepth {
				return start, fault(wire.TooDeep, start, c)
			}
			nk := wire.LvList
			if wire.Table[c].Kind() == amqpsax.KindList {
				err = h.OnListStart(count)
			} else {
				nk = wire.LvMap
				err = h.OnMapStart(count / 2)
			}
			switch err {
			case nil:
				d.push(&st, level{kind: nk, code: c, start: start, end: st.pos + hdr + size, left: count})
				st.pos += hdr
			case amqpsax.SkipValue:
				st.pos, err = st.pos+hdr+size, nil
			default:
				return start, stop(err)
			}
		case wire.OpArray8, wire.OpArray32:
			nl, next, err := d.array(h, &st, start, c)
			if err != nil {
				return next, stop(err)
			}
			if nl.kind == wire.LvTop { // skipped, or read in batches
				st.pos = next
				continue
			}
			d.push(&st, nl)
			st.pos = next
			continue
		case wire.OpInvalid: // listed, so that the jump table starts at 0
			return start, fault(wire.BadCode, start, c)
		default:
			return start, fault(wire.BadCode, start, c)
		}
		if err != nil {
			return st.pos, stop(err)
		}
	}
}

// push enters the level nl: the current level's count of values left is
// saved on the stack, under nl, and nl becomes the level being read.
func (d *Decoder) push(st *state, nl level) {
	d.stack[len(d.stack)-1].left = st.left
	d.stack = append(d.stack, nl)
	st.pop(&nl)
}

// pop makes top, the top of the stack, the level being read.
func (st *state) pop(top *level) {
	// (lim and data share their array: only the length is written)
	st.kind, st.elem, st.left, st.lim = top.kind, top.elem, top.left, st.lim[:top.end]
}

// status turns a fault of a wire primitive on the values of the level
// being read into the decoder's (wire.Status.In).
func (d *Decoder) status(st int) wire.Status {
	return wire.Status(st).In(d.sized())
}

// array opens the array at start, whose constructor c has been read (pos
// is after it): it checks its length fields, element constructor and the
// nesting limit, and reports its start (and to an ArrayDescriptorHandler
// its descriptor). It returns the array's level to read, with next the
// first element's body — or, when the array was delivered in batches to a
// BatchHandler or skipped, a level of kind wire.LvTop, with next the offset
// after it. On an error, next is the offset Decode returns with it: of the
// fault, or where the Handler stopped decoding.
func (d *Decoder) array(h amqpsax.Handler, st *state, start int, c amqpsax.Code) (nl level, next int, err error) {
	lim, pos, data, maxDepth := st.lim, st.pos, st.data, st.maxDepth
	hdr, size, count := wire.Body(c, lim[pos:])
	if hdr < 0 {
		return nl, start, fault(d.status(hdr), start, c)
	}
	if len(d.stack) > maxDepth {
		return nl, start, fault(wire.TooDeep, start, c)
	}
	body := pos + hdr
	end := body + size
	el, ctorLen, descOff, descLen := wire.ArrayCtor(data[body:end], count)
	if ctorLen < 0 {
		return nl, body + descOff, fault(wire.Status(ctorLen), body+descOff, c)
	}
	nl = level{kind: wire.LvArray, elem: el, code: c, start: start, end: end, left: count}
	kind := wire.Table[el].Kind()
	var desc []byte
	if descOff > 0 {
		nl.kind, nl.desc = wire.LvDescArray, body+descOff
		desc = data[nl.desc : nl.desc+descLen : nl.desc+descLen]
		kind = amqpsax.KindDescribed
		if d.Validate {
			if st := wire.CheckDescriptor(desc); st != wire.OK {
				return nl, nl.desc, fault(st, nl.desc, amqpsax.Code(desc[0]))
			}
		}
	}
	body += ctorLen // the first element's body
	err = h.OnArrayStart(count, kind)
	if err == nil && desc != nil {
		if ah, ok := h.(amqpsax.ArrayDescriptorHandler); ok {
			err = ah.OnArrayDescriptor(desc, wire.Table[el].Kind())
		}
	}
	if err == nil && desc == nil && batchable(el) {
		if bh, ok := h.(amqpsax.BatchHandler); ok {
			if err = d.batches(data[body:end], body, bh, el, count); err == nil {
				d.off = start
				if err = h.OnArrayEnd(); err != nil {
					return nl, end, err
				}
			}
			if err == nil || err == amqpsax.SkipValue {
				return level{}, end, nil
			}
			if e, ok := err.(*amqpsax.Error); ok && e.Op == "dispatch" {
				return nl, e.Offset, err // a bad boolean byte
			}
			return nl, start, err
		}
	}
	switch err {
	case nil:
		return nl, body, nil
	case amqpsax.SkipValue:
		return level{}, end, nil
	}
	return nl, start, err
}

// describedElem starts the element at pos of an array of described values
// whose element constructor is elem: it checks the body's length fields
// (before the start event, as a Cursor landing on the element does) and
// the nesting limit, and reports the start. skip is the length of the
// element when the Handler skipped it, else 0.
func (d *Decoder) describedElem(h amqpsax.Handler, elem amqpsax.Code, lim []byte, pos, maxDepth int) (skip int, err error) {
	hdr, size, _ := wire.Body(elem, lim[pos:])
	if hdr < 0 {
		return 0, fault(d.status(hdr), pos, elem)
	}
	if len(d.stack) > maxDepth {
		return 0, fault(wire.TooDeep, pos, amqpsax.CodeDescribed)
	}
	d.off = pos
	switch err := h.OnDescribedStart(); err {
	case nil:
		return 0, nil
	case amqpsax.SkipValue:
		return hdr + size, nil
	default:
		return 0, err
	}
}

// stop maps SkipAll to a clean stop.
func stop(err error) error {
	if err == amqpsax.SkipAll {
		return nil
	}
	return err
}
