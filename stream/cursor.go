package stream

import (
	"encoding/binary"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
)

// This file holds the Cursor and its moves; getters and helpers are in
// getters.go, helpers.go and value.go. It is laid out as follows:
//
//   - Cursor and its three structs: level (the level being read, or a
//     saved one; its kinds and their rules are wire.Level's), value (the
//     current value, as Next left it) and saved (an enclosing level, in
//     the inline array or the deep slice).
//   - Reset, Err and the fault helpers (fail, stop, sized, status,
//     failAt), which only the error path reaches.
//   - Next, whose fast path reads plain values, 8-bit text and 32-bit
//     lists and maps; nextSlow (a level's end, after an error, or after a
//     described value not yet measured) and readSlow (any value, checked
//     through wire.Body and wire.ArrayCtor); measure, which finds where a
//     described value ends.
//   - Enter, Exit and skipRest: into a compound, and out of it in O(1)
//     for a list, map or array.
//   - The accessors of the current value: Depth, Kind, Code, Offset,
//     Index, Count, Raw and the array accessors.

// Cursor reads encoded AMQP values on demand. See the package doc for the
// call grammar. The zero Cursor is ready after Reset; Reset reuses its
// storage, so a warm Cursor walks without allocating, and a Cursor
// declared where it is used (a local variable) reads four levels deep
// without allocating at all. Set the option fields before Reset.
type Cursor struct {
	// MaxDepth limits how many levels Enter may open; entering deeper is
	// an error wrapping amqpsax.ErrTooDeep. Zero means [amqpsax.DefaultMaxDepth].
	MaxDepth int
	// Validate makes Next check that a string it lands on is valid UTF-8
	// and a symbol ASCII (amqpsax.ErrInvalidUTF8, amqpsax.ErrInvalidSymbol).
	Validate bool

	data []byte
	err  error
	lv   level  // the level being read
	lim  []byte // data[:lv.end]: the bytes its values lie in
	cur  value  // its current value: kind KindInvalid when there is none

	// The enclosing levels, each with its current value: the first
	// inlineLevels in inl, the rest in deep (kept across Reset).
	depth int
	max   int // MaxDepth, or its default, as of Reset
	inl   [inlineLevels]saved
	deep  []saved
}

// The moves (Next, Enter, Exit) are marked go:nosplit: each has
// a small frame and none recurses, so the linker can prove they fit in the
// stack every goroutine has, and dropping the stack check makes each call
// cheaper: 3-5 % of a walk (bench/perf/run.sh counts it).

// inlineLevels is how many levels a Cursor holds without allocating.
const inlineLevels = 4

type level struct {
	kind wire.Level
	// wire.LvDescribed: end is where the described value ends (it was
	// measured), not only a limit
	exact bool
	elem  amqpsax.Code // array levels: the element constructor
	// offset of the next value: after the current one, whose end read
	// knows, or -1 while the current value is a described value not yet
	// measured
	pos   int
	end   int // where the level's values end (for wire.LvTop and wire.LvDescribed, a limit)
	left  int // values still to read (wire.LvTop: negative, until the data ends)
	count int // values in the level (wire.LvTop: -1), so count-left have been read
	desc  int // wire.LvDescArray, wire.LvDescElem: offset of the descriptor's constructor
}

type value struct {
	kind  amqpsax.Kind // KindInvalid: no current value
	code  amqpsax.Code // the constructor; inside an array, the array's element constructor
	start int          // Offset: the constructor, or the body of an array element
	pay   int          // the payload (after the length fields), or for a compound its contents
	end   int          // offset after the value; -1 for a described value not yet measured
	// integers (of every kind up to 8 bytes; kept for all plain values by
	// Next's fast path): the payload's bits at the top of num, to be
	// shifted down by sh, arithmetically by Int and logically by Uint, so
	// that those getters inline (sh is 64 only for uint0 and ulong0)
	num int64
	sh  uint8
	// compounds only (Next's fast path leaves them stale; every reader
	// checks kind first)
	count int          // elements (a map's keys and values both count); 2 for described
	ector amqpsax.Code // arrays, elements of described arrays: the element constructor
	ctor  int          // arrays: length of the element constructor
	desc  int          // arrays of described values and their elements: offset of the descriptor, else -1
}

// saved is an enclosing level and what Exit and the size check at the end
// of a level need of the value entered from it.
type saved struct {
	lv    level
	start int          // the entered value's offset
	end   int          // where it ends; -1 for a described value not measured
	code  amqpsax.Code // its constructor
}

// push saves the current level, with what Exit needs of the value v
// entered from it, as the parent of a new level.
func (c *Cursor) push(v *value) {
	var s *saved
	if c.depth < inlineLevels {
		s = &c.inl[c.depth]
	} else {
		c.deep = append(c.deep[:c.depth-inlineLevels], saved{})
		s = &c.deep[c.depth-inlineLevels]
	}
	s.lv, s.start, s.end, s.code = c.lv, v.start, v.end, v.code
	c.depth++
}

// parent returns the innermost saved level; depth must be > 0.
func (c *Cursor) parent() *saved {
	if c.depth <= inlineLevels {
		return &c.inl[c.depth-1]
	}
	return &c.deep[c.depth-1-inlineLevels]
}

// Reset makes the cursor read data from the start, as a sequence of
// values at the top level, keeping its storage. It clears any error.
func (c *Cursor) Reset(data []byte) {
	c.data = data
	c.err = nil
	c.lv = level{kind: wire.LvTop, end: len(data), left: -1, count: -1, desc: -1}
	c.lim = data
	c.max = c.MaxDepth
	if c.max <= 0 {
		c.max = amqpsax.DefaultMaxDepth
	}
	c.cur.kind = amqpsax.KindInvalid
	c.depth = 0
}

// Err returns the first error the cursor met: bad input (an
// *amqpsax.Error with its offset), a getter of the wrong kind, or a move
// that was not allowed. Once set, Next, Enter and Exit return false.
func (c *Cursor) Err() error { return c.err }

// fail records the fault st at offset off, in a value whose constructor
// is code, and stops the cursor: the current value and the level's
// remaining values are gone, so every move returns false.
//
//go:noinline
func (c *Cursor) fail(st wire.Status, off int, code amqpsax.Code, hasCode bool) bool {
	if c.err == nil {
		c.err = wire.NewError("stream", st, off, code, hasCode)
	}
	return c.stop()
}

// stop ends the cursor's walk once an error is recorded: no current value,
// and no values left in the level, so every move returns false.
func (c *Cursor) stop() bool {
	c.cur.kind = amqpsax.KindInvalid
	c.lv.left = 0
	return false
}

// sized reports whether the level being read, or one enclosing it, has a
// size of its own that was checked to fit in the data when it was
// entered: a list, map or array (or an element of an array), or a
// described value that was measured (wire.Cut).
func (c *Cursor) sized() bool {
	if c.lv.sized() {
		return true
	}
	for i := range c.inl[:min(c.depth, inlineLevels)] {
		if c.inl[i].lv.sized() {
			return true
		}
	}
	for i := range c.deep[:max(c.depth-inlineLevels, 0)] {
		if c.deep[i].lv.sized() {
			return true
		}
	}
	return false
}

// sized reports whether the level has a size of its own (Cursor.sized):
// a described value's only when it was measured (exact).
func (lv *level) sized() bool {
	return lv.kind.Sized(lv.exact)
}

// Next moves to the next value of the current level, skipping the current
// one (and everything in it) if it was not entered. It returns false at
// the end of the level or on error; Err tells which. At the end of a list,
// map or array whose values were all read, it checks that they end where
// the compound's size says.
//
//go:nosplit
func (c *Cursor) Next() bool {
	// The fast path reads a fixed-width or 8-bit variable-width value,
	// with its own constructor or as an element of an array of such
	// values, and sets only the fields such a value has; everything else,
	// and everything near a limit, goes to nextSlow.
	lv := &c.lv
	pos := lv.pos
	if lv.left == 0 || pos < 0 {
		if lv.left == 0 && pos >= 0 && (pos == lv.end || lv.kind == wire.LvDescribed) {
			// The end of a level: of a described value, or of a list,
			// map or array whose contents end where its size says (or
			// after an error, which is recorded already).
			c.cur.kind = amqpsax.KindInvalid
			return false
		}
		return c.nextSlow()
	}
	lv.left--
	if wire.Counting {
		wire.Work.Values++
	}
	lim := c.lim // the level's bytes: checking against its length is the bounds check
	var code amqpsax.Code
	body := pos
	switch {
	case lv.kind < wire.LvArray && pos < len(lim):
		code, body = amqpsax.Code(lim[pos]), pos+1
	case lv.kind == wire.LvArray:
		code = lv.elem
	default:
		return c.readSlow()
	}
	e := wire.Table[code]
	v := &c.cur
	if e.Op()-1 < wire.OpLastPlain { // OpNull to OpLastPlain; not OpInvalid, which wraps
		if end := body + int(e.W()); end <= len(lim) && end >= 8 {
			// (&63: a zero width leaves the bits unshifted, and Uint's
			// shift by 64 then leaves 0)
			sh := e.Sh()
			v.kind, v.code, v.start, v.pay, v.end = e.Kind(), code, pos, body, end
			v.num, v.sh = int64(binary.BigEndian.Uint64(lim[end-8:end])<<(sh&63)), sh
			lv.pos = end
			return true
		}
	} else if e.Op()-1 < wire.OpSymbol8 && body < len(lim) && !c.Validate { // 8-bit text
		if end := body + 1 + int(lim[body]); end <= len(lim) {
			v.kind, v.code, v.start, v.pay, v.end = e.Kind(), code, pos, body+1, end
			lv.pos = end
			return true
		}
	} else if op := e.Op(); op == wire.OpList32 || op == wire.OpMap32 {
		// The 32-bit list or map every peer's encoder writes. (wire.Body,
		// through readSlow, names any fault.)
		if body <= len(lim) {
			if rest, count := wire.Compound32(lim[body:]); rest >= 0 && (count&1 == 0 || op == wire.OpList32) {
				v.kind, v.code, v.start, v.pay, v.count = e.Kind(), code, pos, body+8, count
				v.end = v.pay + rest
				lv.pos = v.end
				return true
			}
		}
	} else if op == wire.OpDescribed && lv.kind != wire.LvDescribed {
		// A described value with its own constructor, whose end is not
		// known until it is measured (see readSlow for a described
		// value's value, whose end may be known).
		v.kind, v.code, v.start, v.pay, v.end, v.count, v.desc = amqpsax.KindDescribed, code, pos, body, -1, 2, -1
		lv.pos = -1
		return true
	}
	return c.readSlow()
}

// nextSlow is Next after an error, at the end of a level (where a list's,
// map's or array's contents must end where its size says), or after a
// described value not yet measured.
func (c *Cursor) nextSlow() bool {
	if c.err != nil {
		c.cur.kind = amqpsax.KindInvalid
		return false
	}
	if c.lv.pos < 0 {
		return c.measure() && c.Next()
	}
	c.cur.kind = amqpsax.KindInvalid
	if c.lv.kind.Ends() && c.lv.pos != c.lv.end {
		p := c.parent()
		return c.fail(wire.SizeMismatch, p.start, p.code, true)
	}
	return false
}

// readSlow reads any value, checking everything: the general case of read.
func (c *Cursor) readSlow() bool {
	lv := &c.lv
	v := &c.cur // written field by field: the fields a value of its kind has
	v.start, v.desc = lv.pos, -1
	body := lv.pos
	switch lv.kind {
	case wire.LvArray:
		v.code = lv.elem
	case wire.LvDescArray:
		// An element of an array of described values: its body's length
		// fields are checked now, as dispatch does before reporting it.
		hdr, size, _ := wire.Body(lv.elem, c.data[lv.pos:lv.end])
		if hdr < 0 {
			return c.fail(c.status(hdr), lv.pos, lv.elem, true)
		}
		v.kind, v.code, v.end = amqpsax.KindDescribed, amqpsax.CodeDescribed, lv.pos+hdr+size
		v.count, v.ector, v.desc = 2, lv.elem, lv.desc
		lv.pos = v.end
		return true
	case wire.LvDescElem:
		if lv.left == 1 { // the descriptor, replayed from the array's constructor
			v.start = lv.desc
			v.code = amqpsax.Code(c.data[lv.desc])
			body = lv.desc + 1
		} else { // the element's body
			v.start = c.parent().start // the element entered
			body = v.start
			v.code = lv.elem
		}
	default:
		if lv.pos >= lv.end {
			if lv.kind == wire.LvTop {
				v.kind = amqpsax.KindInvalid
				return false // the end of the data: a clean end
			}
			return c.fail(wire.Cut(c.sized()), lv.pos, 0, false)
		}
		v.code = amqpsax.Code(c.data[lv.pos])
		body = lv.pos + 1
	}
	info := wire.Table[v.code]
	switch info.Cat() {
	case wire.Described:
		v.kind, v.pay, v.count, v.end = amqpsax.KindDescribed, body, 2, -1
		if lv.kind == wire.LvDescribed && lv.exact && lv.left == 0 {
			// The value of a described value whose end is known ends
			// there too: no walk to measure it (so Raw at every level of
			// a chain of described values costs O(1) a level, not the
			// rest of the chain).
			v.end = lv.end
		}
		lv.pos = v.end // -1 until measured
		return true
	case wire.Invalid:
		return c.fail(wire.BadCode, v.start, v.code, true)
	}
	// Lists and maps: the fast paths first; wire.Body names any fault.
	var hdr, size, count int
	switch info.Op() {
	case wire.OpList8, wire.OpMap8:
		hdr = 2
		size, count = wire.Compound8(c.data[body:lv.end])
	case wire.OpList32, wire.OpMap32:
		hdr = 8
		size, count = wire.Compound32(c.data[body:lv.end])
	default:
		size = -1
	}
	if size < 0 || count&1 != 0 && info.Kind() == amqpsax.KindMap {
		if hdr, size, count = wire.Body(v.code, c.data[body:lv.end]); hdr < 0 {
			return c.fail(c.status(hdr), v.start, v.code, true)
		}
	}
	v.pay, v.count = body+hdr, count
	v.end = v.pay + size
	switch info.Cat() {
	case wire.Array:
		el, ctorLen, descOff, descLen := wire.ArrayCtor(c.data[v.pay:v.end], count)
		if ctorLen < 0 {
			return c.fail(wire.Status(ctorLen), v.pay+descOff, v.code, true)
		}
		v.ector, v.ctor = el, ctorLen
		if descOff > 0 {
			v.desc = v.pay + descOff
			// Checked once here, where the array is read, and never
			// when the descriptor is replayed for an element.
			if c.Validate {
				if st := wire.CheckDescriptor(c.data[v.desc : v.desc+descLen]); st != wire.OK {
					return c.fail(st, v.desc, amqpsax.Code(c.data[v.desc]), true)
				}
			}
		}
	case wire.Variable:
		if c.Validate && !lv.kind.Replayed(lv.left) {
			if st := wire.CheckText(info.Kind(), c.data[v.pay:v.end]); st != wire.OK {
				return c.fail(st, v.start, v.code, true)
			}
		}
	case wire.Fixed:
		if info.W() <= 8 {
			v.sh = info.Sh()
			v.num = int64(wire.Uint(v.code, c.data[v.pay:]) << v.sh)
		}
	}
	v.kind = info.Kind()
	lv.pos = v.end
	return true
}

// status turns a fault of a wire primitive in the current level into the
// cursor's (wire.Status.In).
func (c *Cursor) status(st int) wire.Status {
	return wire.Status(st).In(c.sized())
}

// measure finds the end of the current described value (which carries
// no size) by skipping its descriptor and value.
func (c *Cursor) measure() bool {
	v := &c.cur
	n, off := wire.Skip(c.data[v.start:c.lv.end])
	if n < 0 {
		return c.failAt(c.status(n), v.start+off)
	}
	v.end = v.start + n
	c.lv.pos = v.end
	return true
}

// failAt records the fault st at data[off], whose code is read from the
// data when off is within it.
func (c *Cursor) failAt(st wire.Status, off int) bool {
	if off < len(c.data) {
		return c.fail(st, off, amqpsax.Code(c.data[off]), true)
	}
	return c.fail(st, off, 0, false)
}

// Enter moves into the current list, map, array or described value: the
// next Next reads its first element (for a map its first key; for a
// described value its descriptor, then its value). It returns false, and
// records an error, when the current value is of another kind or the
// nesting limit would be passed.
//
//go:nosplit
func (c *Cursor) Enter() bool {
	v := &c.cur
	if v.kind < amqpsax.KindList || c.depth >= c.max || c.err != nil {
		return c.enterFault()
	}
	c.push(v)
	// The new level, written over the one just saved.
	// (desc and exact are read only by the levels that set them.)
	lv := &c.lv
	lv.pos, lv.end, lv.left, lv.count = v.pay, v.end, v.count, v.count
	switch v.kind {
	case amqpsax.KindList:
		lv.kind = wire.LvList
	case amqpsax.KindMap:
		lv.kind = wire.LvMap
	case amqpsax.KindArray:
		lv.kind, lv.elem, lv.pos = wire.LvArray, v.ector, v.pay+v.ctor
		if v.desc >= 0 {
			lv.kind, lv.desc = wire.LvDescArray, v.desc
		}
	default: // KindDescribed
		if v.desc >= 0 { // an element of an array of described values
			lv.kind, lv.elem, lv.desc, lv.pos = wire.LvDescElem, v.ector, v.desc, v.start
		} else {
			lv.kind, lv.end, lv.exact = wire.LvDescribed, c.parent().lv.end, false
			if v.end >= 0 { // measured: the descriptor and value end there
				lv.end, lv.exact = v.end, true
			}
		}
	}
	c.lim = c.lim[:lv.end] // the same array: only the length is written
	v.kind = amqpsax.KindInvalid
	return true
}

// enterFault is Enter on a value it cannot enter.
func (c *Cursor) enterFault() bool {
	v := &c.cur
	switch {
	case c.err != nil:
		return false
	case v.kind < amqpsax.KindList:
		// No current value (Enter before Next), or one of another kind.
		off, has := v.start, v.kind != amqpsax.KindInvalid
		if !has {
			off = c.lv.pos
		}
		c.err = &amqpsax.Error{Op: "stream", Offset: off, Code: v.code, HasCode: has,
			Err: &amqpsax.KindError{Want: "list, map, array or described", Have: v.kind}}
		return c.stop()
	}
	return c.fail(wire.TooDeep, v.start, v.code, true)
}

// Exit leaves the current level, skipping whatever of it was not read
// (in O(1) for lists, maps and arrays), and makes the value that was
// entered the current value again, moved past: the next Next reads the
// value after it. It returns false at the top level or after an error.
//
//go:nosplit
func (c *Cursor) Exit() bool {
	if c.err != nil || c.depth == 0 {
		return false
	}
	s := c.parent()
	end := s.end
	if end < 0 { // a described value not measured: its end is after its last value
		if end = c.lv.pos; c.lv.left != 0 || end < 0 {
			if end = c.skipRest(); end < 0 {
				return false
			}
		}
	}
	c.depth--
	c.lv = s.lv
	c.lim = c.lim[:c.lv.end]
	c.lv.pos = end
	c.cur.kind = amqpsax.KindInvalid
	return true
}

// skipRest skips the values of the level not yet read and returns the
// offset after them, or -1 after recording a fault.
func (c *Cursor) skipRest() int {
	if c.lv.pos < 0 && !c.measure() {
		return -1
	}
	pos := c.lv.pos
	for range c.lv.left {
		n, off := wire.Skip(c.data[pos:c.lv.end])
		if n < 0 {
			c.failAt(c.status(n), pos+off)
			return -1
		}
		pos += n
	}
	return pos
}

// Depth returns the number of levels entered and not exited.
func (c *Cursor) Depth() int { return c.depth }

// Kind returns the AMQP type of the current value (KindInvalid when there
// is none). An element of an array of described values is KindDescribed.
func (c *Cursor) Kind() amqpsax.Kind { return c.cur.kind }

// IsNull reports whether the current value is null: in AMQP any field
// may be null, meaning absent, and every getter on it returns the zero
// value without recording an error.
func (c *Cursor) IsNull() bool { return c.cur.kind == amqpsax.KindNull }

// Code returns the format code of the current value; inside an array, the
// array's element constructor (CodeDescribed for an element of an array of
// described values).
func (c *Cursor) Code() amqpsax.Code { return c.cur.code }

// Offset returns the offset in the data of the current value: its
// constructor, or inside an array the start of its body.
func (c *Cursor) Offset() int { return c.cur.start }

// Index returns the position of the current value in its level, from 0.
func (c *Cursor) Index() int { return c.lv.count - c.lv.left - 1 }

// Count returns the number of elements of the current list or array, the
// number of key/value pairs of a map, 2 for a described value, else 0.
func (c *Cursor) Count() int {
	switch c.cur.kind {
	case amqpsax.KindMap:
		return c.cur.count / 2
	case amqpsax.KindList, amqpsax.KindArray, amqpsax.KindDescribed:
		return c.cur.count
	}
	return 0
}

// Raw returns the bytes of the current value as encoded: constructor,
// length fields and contents; inside an array, the element's body without
// a constructor. It is a view into the data given to Reset. For a
// described value it walks the value to find its end (described values
// carry no size), once; every other Raw is O(1).
func (c *Cursor) Raw() []byte {
	if c.cur.kind == amqpsax.KindInvalid || (c.cur.end < 0 && !c.measure()) {
		return nil
	}
	return c.data[c.cur.start:c.cur.end:c.cur.end]
}

// ArrayCode returns the element constructor of the current array — for
// an array of described values, the code of the elements' values, after
// the descriptor — or 0 (CodeDescribed) when the current value is not an
// array. An empty array has one too: the encoding its elements would have.
func (c *Cursor) ArrayCode() amqpsax.Code {
	if c.cur.kind != amqpsax.KindArray {
		return 0
	}
	return c.cur.ector
}

// ArrayDescriptor returns the descriptor of the current array of described
// values as encoded, constructor included — a view into the data — or nil
// when the current value is not such an array. An empty array has one too.
// (Descriptor decodes it when it is a ulong or a symbol.)
func (c *Cursor) ArrayDescriptor() []byte {
	if c.cur.kind != amqpsax.KindArray || c.cur.desc < 0 {
		return nil
	}
	_, _, n, _ := wire.Descriptor(c.data[c.cur.desc:])
	return c.data[c.cur.desc : c.cur.desc+n : c.cur.desc+n]
}

// ElemKind returns the element kind of the current array (KindDescribed
// for an array of described values), or KindInvalid when the current value
// is not an array.
func (c *Cursor) ElemKind() amqpsax.Kind {
	if c.cur.kind != amqpsax.KindArray {
		return amqpsax.KindInvalid
	}
	if c.cur.desc >= 0 {
		return amqpsax.KindDescribed
	}
	return wire.Table[c.cur.ector].Kind()
}
