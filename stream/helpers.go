package stream

import (
	"encoding/binary"
	"slices"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
)

// The helpers below are what a broker asks of a message most often. Each
// is built from Next, Enter and the getters, skipping whatever it does not
// need in O(1).

// Elem moves to element i (from 0) of the level just entered — a list's
// fields, an array's elements — skipping the ones before it without
// reading them. It counts from the start of the level, so it moves
// forward only: it returns false when the level has fewer than i+1 values,
// when the cursor is already past element i, or on error.
func (c *Cursor) Elem(i int) bool {
	if i < c.lv.idx-1 || (i == c.lv.idx-1 && !c.lv.has) {
		return false
	}
	for c.lv.idx-1 < i || !c.lv.has {
		if !c.Next() {
			return false
		}
	}
	return true
}

// Lookup moves to the value of the first key in the map just entered that
// is a string or symbol equal to key, and returns true; the cursor is then
// on that value. Other keys are compared without conversion and values are
// skipped, not read. It returns false when no such key remains (the cursor
// is then at the end of the map) or on error. It searches from the
// cursor's position forward; Enter the map again to search from the start.
func (c *Cursor) Lookup(key string) bool {
	if c.lv.kind != lvMap {
		c.wrongKind()
		return false
	}
	if c.lv.has && (c.lv.idx&1) == 1 {
		// On a key: move past its value first.
		if !c.Next() {
			return false
		}
	}
	for c.Next() { // a key
		k := c.cur.kind
		match := (k == amqpsax.KindString || k == amqpsax.KindSymbol) &&
			string(c.data[c.cur.body+c.cur.hdr:c.cur.end]) == key
		if !c.Next() { // its value
			return false
		}
		if match {
			return true
		}
	}
	return false
}

// Descriptor returns the descriptor of the current described value
// without entering it. When the descriptor is a ulong (of any width), d is
// its value and sym is nil. When it is a symbol, sym is its bytes (a view
// into the data) and d is the numeric descriptor the spec gives that
// symbolic name ("amqp:properties:list" → 0x73), or 0 for a name the spec
// does not define. On an array of described values it returns the
// descriptor the elements share, read from the array's constructor, so it
// is there for an empty array too. ok is false when the current value is
// neither or its descriptor is of another type.
func (c *Cursor) Descriptor() (d amqpsax.Descriptor, sym []byte, ok bool) {
	if !c.lv.has || (c.cur.kind != amqpsax.KindDescribed && (c.cur.kind != amqpsax.KindArray || c.cur.desc < 0)) {
		return 0, nil, false
	}
	at := c.cur.body // the descriptor's constructor
	if c.cur.desc >= 0 {
		at = c.cur.desc
	}
	lim := c.data[:c.lv.end]
	if c.cur.desc >= 0 {
		lim = c.data
	}
	if at >= len(lim) {
		return 0, nil, false
	}
	code := amqpsax.Code(lim[at])
	hdr, size, _ := wire.Body(code, lim[at+1:])
	if hdr < 0 {
		return 0, nil, false
	}
	switch wire.Table[code].Kind {
	case amqpsax.KindUlong:
		return amqpsax.Descriptor(wire.Uint(code, lim[at+1:])), nil, true
	case amqpsax.KindSymbol:
		sym = lim[at+1+hdr : at+1+hdr+size : at+1+hdr+size]
		d, _ = amqpsax.LookupDescriptor(sym)
		return d, sym, true
	}
	return 0, nil, false
}

// arrayBody returns the element bodies of the current array, if its
// elements are of a fixed-width code of kind among kinds.
func (c *Cursor) arrayBody(ok func(amqpsax.Kind) bool) (amqpsax.Code, []byte, int, bool) {
	if !c.lv.has || c.cur.kind != amqpsax.KindArray || c.cur.desc >= 0 ||
		wire.Table[c.cur.ector].Cat != wire.Fixed || !ok(wire.Table[c.cur.ector].Kind) {
		c.wrongKind()
		return 0, nil, 0, false
	}
	return c.cur.ector, c.data[c.cur.body+c.cur.hdr+c.cur.ctor : c.cur.end], c.cur.count, true
}

func isInt(k amqpsax.Kind) bool {
	return k == amqpsax.KindByte || k == amqpsax.KindShort || k == amqpsax.KindInt || k == amqpsax.KindLong
}

func isUint(k amqpsax.Kind) bool {
	return k == amqpsax.KindUbyte || k == amqpsax.KindUshort || k == amqpsax.KindUint || k == amqpsax.KindUlong
}

// AppendInts appends the elements of the current array of byte, short,
// int or long to dst and returns it, in one call and without entering the
// array; with capacity in dst it does not allocate. A current value of
// another kind records ErrWrongKind and returns dst unchanged.
func (c *Cursor) AppendInts(dst []int64) []int64 {
	code, p, n, ok := c.arrayBody(isInt)
	if !ok {
		return dst
	}
	dst = slices.Grow(dst, n)
	// One loop per width, so the loop body has no switch.
	switch wire.Table[code].W {
	case 1:
		for _, x := range p[:n] {
			dst = append(dst, int64(int8(x)))
		}
	case 2:
		for i := range n {
			dst = append(dst, int64(int16(binary.BigEndian.Uint16(p[2*i:]))))
		}
	case 4:
		for i := range n {
			dst = append(dst, int64(int32(binary.BigEndian.Uint32(p[4*i:]))))
		}
	default:
		for i := range n {
			dst = append(dst, int64(binary.BigEndian.Uint64(p[8*i:])))
		}
	}
	return dst
}

// AppendUints appends the elements of the current array of ubyte,
// ushort, uint or ulong to dst, as AppendInts does.
func (c *Cursor) AppendUints(dst []uint64) []uint64 {
	code, p, n, ok := c.arrayBody(isUint)
	if !ok {
		return dst
	}
	// Grown once: an array of uint0 holds up to 32 elements per byte
	// (wire.ZeroWidthPerByte), so dst may grow by 256 bytes per input byte,
	// and no more.
	dst = slices.Grow(dst, n)
	switch wire.Table[code].W {
	case 0:
		for range n {
			dst = append(dst, 0)
		}
	case 1:
		for _, x := range p[:n] {
			dst = append(dst, uint64(x))
		}
	case 2:
		for i := range n {
			dst = append(dst, uint64(binary.BigEndian.Uint16(p[2*i:])))
		}
	case 4:
		for i := range n {
			dst = append(dst, uint64(binary.BigEndian.Uint32(p[4*i:])))
		}
	default:
		for i := range n {
			dst = append(dst, binary.BigEndian.Uint64(p[8*i:]))
		}
	}
	return dst
}

// AppendDoubles appends the elements of the current array of double to
// dst, as AppendInts does.
func (c *Cursor) AppendDoubles(dst []float64) []float64 {
	_, p, n, ok := c.arrayBody(func(k amqpsax.Kind) bool { return k == amqpsax.KindDouble })
	if !ok {
		return dst
	}
	dst = slices.Grow(dst, n)
	for i := range n {
		dst = append(dst, wire.Double(p[8*i:]))
	}
	return dst
}

// AppendFloats appends the elements of the current array of float to
// dst, as AppendInts does.
func (c *Cursor) AppendFloats(dst []float32) []float32 {
	_, p, n, ok := c.arrayBody(func(k amqpsax.Kind) bool { return k == amqpsax.KindFloat })
	if !ok {
		return dst
	}
	dst = slices.Grow(dst, n)
	for i := range n {
		dst = append(dst, wire.Float(p[4*i:]))
	}
	return dst
}

// AppendTimestamps appends the elements of the current array of
// timestamp to dst, as AppendInts does.
func (c *Cursor) AppendTimestamps(dst []int64) []int64 {
	_, p, n, ok := c.arrayBody(func(k amqpsax.Kind) bool { return k == amqpsax.KindTimestamp })
	if !ok {
		return dst
	}
	dst = slices.Grow(dst, n)
	for i := range n {
		dst = append(dst, wire.Timestamp(p[8*i:]))
	}
	return dst
}

// AppendBytes appends the elements of the current array of binary,
// string or symbol to dst, each a view into the data (valid as long as the
// data is), in one call and without entering the array; with capacity in
// dst it does not allocate. Each element's size is checked against the
// array, and with Validate each string's UTF-8 and symbol's ASCII, with
// the errors and offsets a walk of the array reports. A current value of
// another kind records ErrWrongKind and returns dst unchanged.
func (c *Cursor) AppendBytes(dst [][]byte) [][]byte {
	v := &c.cur
	if !c.lv.has || v.kind != amqpsax.KindArray || v.desc >= 0 || wire.Table[v.ector].Cat != wire.Variable {
		c.wrongKind()
		return dst
	}
	code, kind := v.ector, wire.Table[v.ector].Kind
	dst = slices.Grow(dst, v.count)
	pos, end := v.body+v.hdr+v.ctor, v.end
	for range v.count {
		var n, h int
		if wire.Table[code].W == 1 {
			if pos >= end || int(c.data[pos]) > end-pos-1 {
				c.fail(wire.EOF, pos, code, true)
				return dst
			}
			n, h = int(c.data[pos]), 1
		} else {
			if end-pos < 4 || uint64(binary.BigEndian.Uint32(c.data[pos:])) > uint64(end-pos-4) {
				c.fail(wire.EOF, pos, code, true)
				return dst
			}
			n, h = int(binary.BigEndian.Uint32(c.data[pos:])), 4
		}
		b := c.data[pos+h : pos+h+n : pos+h+n]
		if c.Validate {
			if kind == amqpsax.KindString && !wire.ValidUTF8(b) {
				c.fail(wire.BadUTF8, pos, code, true)
				return dst
			}
			if kind == amqpsax.KindSymbol && !wire.ValidASCII(b) {
				c.fail(wire.BadSymbol, pos, code, true)
				return dst
			}
		}
		dst = append(dst, b)
		pos += h + n
	}
	if pos != end {
		c.fail(wire.SizeMismatch, v.start, v.code, true)
	}
	return dst
}
