package stream

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
	"github.com/google/uuid"
)

// DefaultMaxDepth is the nesting limit of a Cursor whose MaxDepth is 0.
const DefaultMaxDepth = 1000

// Cursor reads encoded AMQP values on demand. See the package doc for the
// call grammar. The zero Cursor is ready after Reset; Reset reuses its
// storage, so a warm Cursor walks without allocating. Set the option
// fields before Reset.
type Cursor struct {
	// MaxDepth limits how many levels Enter may open; entering deeper is
	// an error wrapping amqpsax.ErrTooDeep. Zero means DefaultMaxDepth.
	MaxDepth int
	// Validate makes Next check that a string it lands on is valid UTF-8
	// and a symbol ASCII (amqpsax.ErrInvalidUTF8, amqpsax.ErrInvalidSymbol).
	Validate bool

	data []byte
	err  error
	lv   level // the level being read
	cur  value // the current value of lv (valid when lv.has)
	// The enclosing levels, each with its current value: the first
	// inlineLevels in inl, so a fresh Cursor on the stack of its caller
	// reads a message's sections and fields without allocating, the rest
	// in deep (kept across Reset).
	depth int
	inl   [inlineLevels]saved
	deep  []saved
}

// inlineLevels is how many levels a Cursor holds without allocating.
const inlineLevels = 4

// push saves the current level and value as the parent of a new level.
func (c *Cursor) push(s saved) {
	if c.depth < inlineLevels {
		c.inl[c.depth] = s
	} else {
		c.deep = append(c.deep[:c.depth-inlineLevels], s)
	}
	c.depth++
}

// parent returns the innermost saved level; depth must be > 0.
func (c *Cursor) parent() *saved {
	if c.depth <= inlineLevels {
		return &c.inl[c.depth-1]
	}
	return &c.deep[c.depth-1-inlineLevels]
}

// Level kinds.
const (
	lvTop       = iota // values one after another until the data ends
	lvList             // a list's elements
	lvMap              // a map's keys and values, alternately
	lvArray            // an array's element bodies
	lvDescribed        // a described value: descriptor, value
	lvDescElem         // an element of an array of described values: the array's descriptor, the element's body
)

type level struct {
	kind uint8
	has  bool         // cur is a value of this level not yet moved past
	elem amqpsax.Code // lvArray, lvDescElem: element constructor
	pos  int          // offset of the next value (after cur, once moved past)
	end  int          // lvList, lvMap, lvArray, lvDescElem: where the contents end; else the limit
	left int          // values still to read (lvTop: -1, until the data ends)
	idx  int          // values read so far at this level
	desc int          // lvArray of described values, lvDescElem: offset of the descriptor's code; else -1
	// lvDescribed: end is where the described value ends (it was
	// measured), not only a limit
	exact bool
}

type value struct {
	code  amqpsax.Code
	kind  amqpsax.Kind
	start int  // Offset: the constructor, or the body of an array element
	body  int  // the body: after the constructor
	hdr   int  // bytes of size and count fields
	size  int  // bytes after hdr
	count int  // compounds: elements (a map's keys and values both count)
	end   int  // offset after the value; -1 for a described value not yet measured
	elem  bool // an array element: Raw has no constructor
	// inCtor: the descriptor of an element of an array of described
	// values, which lies in the array's constructor, not at the level's position
	inCtor bool
	// arrays
	ector amqpsax.Code // element constructor
	ctor  int          // length of the element constructor
	desc  int          // offset of the descriptor's code in an array of described values, else -1
}

// set makes v a primitive value, field by field (cheaper than clearing
// the whole struct on the fast path of read).
func (v *value) set(code amqpsax.Code, kind amqpsax.Kind, start, body, hdr, size int, elem bool) {
	v.code, v.kind, v.start, v.body, v.hdr, v.size = code, kind, start, body, hdr, size
	v.count, v.end, v.elem, v.inCtor, v.desc = 0, body+hdr+size, elem, false, -1
}

type saved struct {
	lv  level
	cur value
}

// Reset makes the cursor read data from the start, as a sequence of
// values at the top level, keeping its storage. It clears any error.
func (c *Cursor) Reset(data []byte) {
	c.data = data
	c.err = nil
	c.lv = level{kind: lvTop, end: len(data), left: -1, desc: -1}
	c.cur = value{}
	c.depth = 0
}

// Err returns the first error the cursor met: bad input (an
// *amqpsax.Error with its offset), a getter of the wrong kind, or a move
// that was not allowed. Once set, Next, Enter and Exit return false.
func (c *Cursor) Err() error { return c.err }

func (c *Cursor) fail(st wire.Status, off int, code amqpsax.Code, hasCode bool) bool {
	if c.err == nil {
		c.err = wire.NewError("stream", st, off, code, hasCode)
	}
	c.lv.has = false
	return false
}

// failAt records a fault at data[off], reading its code from data.
func (c *Cursor) failAt(st wire.Status, data []byte, off int) bool {
	if c.err == nil {
		c.err = wire.NewErrorAt("stream", st, data, off)
	}
	c.lv.has = false
	return false
}

// Next moves to the next value of the current level, skipping the current
// one (and everything in it) if it was not entered. It returns false at
// the end of the level or on error; Err tells which. At the end of a list,
// map or array whose values were all read, it checks that they end where
// the compound's size says.
func (c *Cursor) Next() bool {
	if c.err != nil {
		return false
	}
	lv := &c.lv
	if lv.has {
		lv.has = false
		if c.cur.end < 0 && !c.measure() {
			return false
		}
		if !c.cur.inCtor {
			lv.pos = c.cur.end
		}
	}
	if lv.left == 0 {
		switch lv.kind {
		case lvList, lvMap, lvArray:
			if lv.pos != lv.end {
				p := &c.parent().cur
				return c.fail(wire.SizeMismatch, p.start, p.code, true)
			}
		}
		return false
	}
	if lv.left < 0 {
		if lv.pos >= lv.end {
			return false
		}
	} else {
		lv.left--
	}
	lv.idx++
	if wire.Counting {
		wire.Work.Values++
	}
	if !c.read() {
		return false
	}
	lv.has = true
	return true
}

// read reads the header of the next value of the level into c.cur.
func (c *Cursor) read() bool {
	lv := &c.lv
	// Fast path: a fixed-width or 8-bit variable-width value, with its
	// own constructor or as an element of an array of such values, read
	// without clearing the whole value or calling wire.Body. Everything
	// else, and everything near a limit, goes to readSlow.
	var code amqpsax.Code
	pos, body, elem := lv.pos, lv.pos, false
	switch {
	case lv.kind == lvArray && lv.desc < 0:
		code, elem = lv.elem, true
	case lv.kind != lvArray && lv.kind != lvDescElem && pos < lv.end:
		code, body = amqpsax.Code(c.data[pos]), pos+1
	default:
		return c.readSlow()
	}
	e := wire.Table[code]
	rest := lv.end - body
	v := &c.cur
	switch {
	case e.Cat == wire.Fixed && rest >= int(e.W) && code != amqpsax.CodeBool:
		v.set(code, e.Kind, pos, body, 0, int(e.W), elem)
		return true
	case e.Cat == wire.Variable && e.W == 1 && rest >= 1 && int(c.data[body]) < rest && !c.Validate:
		v.set(code, e.Kind, pos, body, 1, int(c.data[body]), elem)
		return true
	}
	return c.readSlow()
}

// readSlow reads any value, checking everything: the general case of read.
func (c *Cursor) readSlow() bool {
	lv := &c.lv
	lim := c.data[:lv.end]
	v := &c.cur
	*v = value{start: lv.pos, desc: -1}
	switch lv.kind {
	case lvArray:
		v.code, v.body, v.elem = lv.elem, lv.pos, true
		if lv.desc >= 0 {
			// An element of an array of described values.
			hdr, size, _ := wire.Body(lv.elem, lim[lv.pos:])
			if hdr < 0 {
				return c.fail(wire.Status(hdr), lv.pos, lv.elem, true)
			}
			v.code, v.kind, v.ector, v.desc = amqpsax.CodeDescribed, amqpsax.KindDescribed, lv.elem, lv.desc
			v.count, v.end = 2, lv.pos+hdr+size
			return true
		}
	case lvDescElem:
		if lv.left == 1 { // the descriptor, read in the array's constructor
			v.start = lv.desc
			v.code = amqpsax.Code(c.data[lv.desc])
			v.body = lv.desc + 1
			v.inCtor = true
			lim = c.data
		} else { // the element's body
			v.code, v.body, v.elem = lv.elem, lv.pos, true
		}
	default:
		if lv.pos >= len(lim) {
			return c.fail(wire.EOF, lv.pos, 0, false)
		}
		v.code = amqpsax.Code(lim[lv.pos])
		v.body = lv.pos + 1
	}
	info := wire.Table[v.code]
	v.kind = info.Kind
	switch info.Cat {
	case wire.Described:
		v.count, v.end = 2, -1
		if lv.kind == lvDescribed && lv.exact && lv.left == 0 {
			// The value of a described value whose end is known ends
			// there too: no walk to measure it (so Raw at every level of
			// a chain of described values costs O(1) a level, not the
			// rest of the chain).
			v.end = lv.end
		}
		return true
	case wire.Invalid:
		return c.fail(wire.BadCode, v.start, v.code, true)
	}
	hdr, size, count := wire.Body(v.code, lim[v.body:])
	if hdr < 0 {
		return c.fail(wire.Status(hdr), v.start, v.code, true)
	}
	v.hdr, v.size, v.count = hdr, size, count
	v.end = v.body + hdr + size
	switch info.Cat {
	case wire.Array:
		el, ctorLen, descOff, descLen := wire.ArrayCtor(lim[v.body+hdr:v.end], count)
		if ctorLen < 0 {
			return c.fail(wire.Status(ctorLen), v.body+hdr+descOff, v.code, true)
		}
		v.ector, v.ctor = el, ctorLen
		if descOff > 0 {
			v.desc = v.body + hdr + descOff
			// Checked once here, where the array is read, and never
			// when the descriptor is replayed for an element.
			if c.Validate {
				if st := wire.CheckDescriptor(lim[v.desc : v.desc+descLen]); st != wire.OK {
					return c.fail(st, v.desc, amqpsax.Code(lim[v.desc]), true)
				}
			}
		}
	case wire.Variable:
		if c.Validate && !v.inCtor {
			if st := wire.CheckText(v.kind, lim[v.body+hdr:v.end]); st != wire.OK {
				return c.fail(st, v.start, v.code, true)
			}
		}
	}
	return true
}

// measure finds the end of the current described value (which carries
// no size) by skipping its descriptor and value.
func (c *Cursor) measure() bool {
	v := &c.cur
	n, off := wire.Skip(c.data[v.start:c.lv.end])
	if n < 0 {
		at := v.start + off
		return c.failAt(wire.Status(n), c.data[:c.lv.end], at)
	}
	v.end = v.start + n
	return true
}

// Enter moves into the current list, map, array or described value: the
// next Next reads its first element (for a map its first key; for a
// described value its descriptor, then its value). It returns false, and
// records an error, when the current value is of another kind or the
// nesting limit would be passed.
func (c *Cursor) Enter() bool {
	if c.err != nil {
		return false
	}
	if !c.lv.has {
		return c.fail(wire.WrongKind, c.lv.pos, 0, false)
	}
	v := &c.cur
	max := c.MaxDepth
	if max <= 0 {
		max = DefaultMaxDepth
	}
	nl := level{pos: v.body + v.hdr, left: v.count, desc: -1}
	switch v.kind {
	case amqpsax.KindList, amqpsax.KindMap:
		if v.code == amqpsax.CodeList0 {
			nl.pos = v.body
		}
		nl.kind, nl.end = lvList, v.end
		if v.kind == amqpsax.KindMap {
			nl.kind = lvMap
		}
	case amqpsax.KindArray:
		nl.kind, nl.end, nl.elem, nl.desc = lvArray, v.end, v.ector, v.desc
		nl.pos += v.ctor
	case amqpsax.KindDescribed:
		if v.desc >= 0 { // an element of an array of described values
			nl.kind, nl.end, nl.elem, nl.desc, nl.pos = lvDescElem, v.end, v.ector, v.desc, v.start
		} else {
			nl.kind, nl.end, nl.pos = lvDescribed, c.lv.end, v.body
			if v.end >= 0 { // measured: the descriptor and value end there
				nl.end, nl.exact = v.end, true
			}
		}
	default:
		return c.fail(wire.WrongKind, v.start, v.code, true)
	}
	if c.depth >= max {
		return c.fail(wire.TooDeep, v.start, v.code, true)
	}
	c.push(saved{lv: c.lv, cur: *v})
	c.lv = nl
	return true
}

// Exit leaves the current level, skipping whatever of it was not read
// (in O(1) for lists, maps and arrays), and makes the value that was
// entered the current value again, moved past. It returns false at the
// top level or after an error.
func (c *Cursor) Exit() bool {
	if c.err != nil || c.depth == 0 {
		return false
	}
	lv := &c.lv
	end := lv.end
	switch lv.kind {
	case lvDescribed:
		// No size: skip what is left of the descriptor and value.
		pos := lv.pos
		if lv.has {
			if c.cur.end < 0 && !c.measure() {
				return false
			}
			pos = c.cur.end
		}
		for range lv.left {
			n, off := wire.Skip(c.data[pos:lv.end])
			if n < 0 {
				at := pos + off
				return c.failAt(wire.Status(n), c.data[:lv.end], at)
			}
			pos += n
		}
		end = pos
	}
	s := c.parent()
	c.depth--
	c.lv, c.cur = s.lv, s.cur
	c.cur.end = end
	c.lv.has = false
	c.lv.pos = end
	return true
}

// Depth returns the number of levels entered and not exited.
func (c *Cursor) Depth() int { return c.depth }

// Kind returns the AMQP type of the current value (KindInvalid when there
// is none). An element of an array of described values is KindDescribed.
func (c *Cursor) Kind() amqpsax.Kind {
	if !c.lv.has {
		return amqpsax.KindInvalid
	}
	return c.cur.kind
}

// Code returns the format code of the current value; inside an array, the
// array's element constructor (CodeDescribed for an element of an array of
// described values).
func (c *Cursor) Code() amqpsax.Code { return c.cur.code }

// Offset returns the offset in the data of the current value: its
// constructor, or inside an array the start of its body.
func (c *Cursor) Offset() int { return c.cur.start }

// Index returns the position of the current value in its level, from 0.
func (c *Cursor) Index() int { return c.lv.idx - 1 }

// Count returns the number of elements of the current list or array, the
// number of key/value pairs of a map, 2 for a described value, else 0.
func (c *Cursor) Count() int {
	if !c.lv.has {
		return 0
	}
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
// carry no size); every other Raw is O(1).
func (c *Cursor) Raw() []byte {
	if !c.lv.has || (c.cur.end < 0 && !c.measure()) {
		return nil
	}
	return c.data[c.cur.start:c.cur.end:c.cur.end]
}

// payload returns the fixed-width payload of the current value when it is
// of kind k, and records ErrWrongKind otherwise.
func (c *Cursor) payload(k amqpsax.Kind) ([]byte, bool) {
	if !c.lv.has || c.cur.kind != k {
		c.wrongKind()
		return nil, false
	}
	return c.data[c.cur.body:c.cur.end], true
}

func (c *Cursor) wrongKind() {
	if c.err == nil {
		c.err = wire.NewError("stream", wire.WrongKind, c.cur.start, c.cur.code, c.lv.has)
	}
}

// Bool returns the current boolean.
func (c *Cursor) Bool() bool {
	p, ok := c.payload(amqpsax.KindBool)
	return ok && wire.Bool(c.cur.code, p)
}

// Uint returns the current ubyte, ushort, uint or ulong.
func (c *Cursor) Uint() uint64 {
	if c.lv.has {
		switch c.cur.kind {
		case amqpsax.KindUbyte, amqpsax.KindUshort, amqpsax.KindUint, amqpsax.KindUlong:
			return wire.Uint(c.cur.code, c.data[c.cur.body:c.cur.end])
		}
	}
	c.wrongKind()
	return 0
}

// Int returns the current byte, short, int or long.
func (c *Cursor) Int() int64 {
	if c.lv.has {
		switch c.cur.kind {
		case amqpsax.KindByte, amqpsax.KindShort, amqpsax.KindInt, amqpsax.KindLong:
			return wire.Int(c.cur.code, c.data[c.cur.body:c.cur.end])
		}
	}
	c.wrongKind()
	return 0
}

// Float returns the current float.
func (c *Cursor) Float() float32 {
	if p, ok := c.payload(amqpsax.KindFloat); ok {
		return wire.Float(p)
	}
	return 0
}

// Double returns the current double.
func (c *Cursor) Double() float64 {
	if p, ok := c.payload(amqpsax.KindDouble); ok {
		return wire.Double(p)
	}
	return 0
}

// Decimal32 returns the current decimal32's bytes.
func (c *Cursor) Decimal32() (d amqpsax.Decimal32) {
	if p, ok := c.payload(amqpsax.KindDecimal32); ok {
		d = amqpsax.Decimal32(p)
	}
	return d
}

// Decimal64 returns the current decimal64's bytes.
func (c *Cursor) Decimal64() (d amqpsax.Decimal64) {
	if p, ok := c.payload(amqpsax.KindDecimal64); ok {
		d = amqpsax.Decimal64(p)
	}
	return d
}

// Decimal128 returns the current decimal128's bytes.
func (c *Cursor) Decimal128() (d amqpsax.Decimal128) {
	if p, ok := c.payload(amqpsax.KindDecimal128); ok {
		d = amqpsax.Decimal128(p)
	}
	return d
}

// Char returns the current char as a code point (not checked for validity).
func (c *Cursor) Char() rune {
	if p, ok := c.payload(amqpsax.KindChar); ok {
		return wire.Char(p)
	}
	return 0
}

// Timestamp returns the current timestamp: milliseconds since the Unix epoch.
func (c *Cursor) Timestamp() int64 {
	if p, ok := c.payload(amqpsax.KindTimestamp); ok {
		return wire.Timestamp(p)
	}
	return 0
}

// UUID returns the current uuid.
func (c *Cursor) UUID() (u uuid.UUID) {
	if p, ok := c.payload(amqpsax.KindUUID); ok {
		u = uuid.UUID(p)
	}
	return u
}

// Bytes returns the content of the current binary, string or symbol: a
// view into the data given to Reset, valid as long as that data is.
func (c *Cursor) Bytes() []byte {
	if c.lv.has {
		switch c.cur.kind {
		case amqpsax.KindBinary, amqpsax.KindString, amqpsax.KindSymbol:
			return c.data[c.cur.body+c.cur.hdr : c.cur.end : c.cur.end]
		}
	}
	c.wrongKind()
	return nil
}

// ArrayElem returns the element kind of the current array (KindDescribed
// for an array of described values), or KindInvalid when the current value
// is not an array.
func (c *Cursor) ArrayElem() amqpsax.Kind {
	if !c.lv.has || c.cur.kind != amqpsax.KindArray {
		return amqpsax.KindInvalid
	}
	if c.cur.desc >= 0 {
		return amqpsax.KindDescribed
	}
	return wire.Table[c.cur.ector].Kind
}
