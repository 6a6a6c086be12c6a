package stream

import (
	"slices"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
)

// The helpers below are what a broker asks of a message most often. Each
// is built from Next, Enter and the getters, skipping whatever it does not
// need in O(1).

// Seek moves to element i (from 0) of the level just entered — a list's
// fields, an array's elements — skipping the ones before it without
// reading them. It counts from the start of the level, so it moves
// forward only: it returns false when the level has fewer than i+1 values,
// when the cursor is already past element i, or on error. In a described
// value (descriptor, then value) it is an error, not an absent element:
// it would read the level around the list or map that EnterValue lands
// on, which must be entered first.
func (c *Cursor) Seek(i int) bool {
	if c.lv.kind == wire.LvDescribed || c.lv.kind == wire.LvDescElem {
		c.want("a list or array entered")
		return false
	}
	if i < c.Index() || (i == c.Index() && c.cur.kind == amqpsax.KindInvalid) {
		return false
	}
	for c.Index() < i || c.cur.kind == amqpsax.KindInvalid {
		if !c.Next() {
			return false
		}
	}
	return true
}

// EnterValue moves into the current described value and onto its value in
// one step (Enter, then Next over the descriptor, then Next): a section's
// or a performative's list or map, whose descriptor Descriptor already
// told. Exit then leaves the described value. It returns false on a null
// value, recording nothing (an absent value), and false with an error on
// a value of another kind.
func (c *Cursor) EnterValue() bool {
	switch c.cur.kind {
	case amqpsax.KindDescribed:
		return c.Enter() && c.Next() && c.Next()
	case amqpsax.KindNull:
		return false
	}
	c.want("described")
	return false
}

// SeekKey moves to the value of the first key in the map just entered that
// is a string or symbol equal to key, and returns true; the cursor is then
// on that value. Other keys are compared without conversion and values are
// skipped, not read. It returns false when no such key remains (the cursor
// is then at the end of the map) or on error. It searches from the
// cursor's position forward; Enter the map again to search from the start.
func (c *Cursor) SeekKey(key string) bool { return c.lookup(key, 0, false) }

// SeekUlongKey is Lookup for a ulong key, as annotations may have (AMQP 1.0
// part 3 §3.2.10: their keys are symbols or ulongs). A long key of the
// same value matches too: Azure/go-amqp writes integer annotation keys as
// longs, which the spec does not allow but deployed peers send
// (doc/peers.md).
func (c *Cursor) SeekUlongKey(key uint64) bool { return c.lookup("", key, true) }

func (c *Cursor) lookup(key string, num uint64, isNum bool) bool {
	if c.lv.kind != wire.LvMap {
		c.want("a map entered")
		return false
	}
	if c.cur.kind != amqpsax.KindInvalid && c.Index()&1 == 0 {
		// On a key: move past its value first.
		if !c.Next() {
			return false
		}
	}
	for c.Next() { // a key
		k := c.cur.kind
		var match bool
		if isNum {
			switch k {
			case amqpsax.KindUlong:
				match = wire.Uint(c.cur.code, c.data[c.cur.pay:]) == num
			case amqpsax.KindLong:
				n := wire.Int(c.cur.code, c.data[c.cur.pay:])
				match = n >= 0 && uint64(n) == num
			}
		} else {
			match = (k == amqpsax.KindString || k == amqpsax.KindSymbol) && string(c.payload()) == key
		}
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
	var at int
	switch {
	case c.cur.kind == amqpsax.KindDescribed && c.cur.desc < 0:
		at = c.cur.pay // the descriptor's constructor
	case c.cur.kind == amqpsax.KindDescribed || (c.cur.kind == amqpsax.KindArray && c.cur.desc >= 0):
		at = c.cur.desc
	default:
		return 0, nil, false
	}
	d, sym, _, ok = wire.Descriptor(c.data[at:])
	return d, sym, ok
}

// Value returns the current value as a Value: a view with its type, to
// keep or hand on after the cursor moves (valid as long as the data is).
// For a described value it walks the value to find its end, as Raw does.
func (c *Cursor) Value() Value {
	raw := c.Raw()
	if raw == nil {
		return Value{}
	}
	elem := c.lv.kind == wire.LvArray || c.lv.kind == wire.LvDescElem && c.lv.left == 0
	return Value{raw: raw, kind: c.cur.kind, code: c.cur.code, pay: c.cur.pay - c.cur.start, elem: elem}
}

// Field is Elem and Value in one call: element i of the level just
// entered as a Value, the zero Value when there is none. With the Value's
// getters, reading a field is one expression that allocates nothing:
// c.Field(2).Bytes() is properties.to, nil when null or absent.
func (c *Cursor) Field(i int) Value {
	if !c.Seek(i) {
		return Value{}
	}
	return c.Value()
}

// Lookup is Lookup and Value in one call: the value of the entry whose key
// is a string or symbol equal to key, in the map just entered, as a
// Value; the zero Value when there is none (the cursor is then at the end
// of the map). c.Lookup("region").Bytes() reads an application property.
func (c *Cursor) Lookup(key string) Value {
	if !c.SeekKey(key) {
		return Value{}
	}
	return c.Value()
}

// arrayBody returns the element bodies of the current array, if its
// elements are of a fixed-width code of a kind in [lo, hi].
func (c *Cursor) arrayBody(lo, hi amqpsax.Kind, want string) (amqpsax.Code, []byte, int, bool) {
	v := &c.cur
	if v.kind == amqpsax.KindArray && v.desc < 0 {
		if e := wire.Table[v.ector]; e.Cat() == wire.Fixed && e.Kind() >= lo && e.Kind() <= hi {
			return v.ector, c.data[v.pay+v.ctor : v.end], v.count, true
		}
	}
	c.want(want)
	return 0, nil, 0, false
}

// appendElems appends the elements of the current array, of a kind in
// [lo, hi], to dst: grown once (an array of uint0 holds up to 255 + 32
// elements per byte of its size, wire.ZeroWidthPerByte, and no more), then
// filled by wire.FillElems.
func appendElems[T wire.Number](c *Cursor, dst []T, lo, hi amqpsax.Kind, want string) []T {
	code, p, n, ok := c.arrayBody(lo, hi, want)
	if !ok {
		return dst
	}
	l := len(dst)
	dst = slices.Grow(dst, n)[:l+n]
	wire.FillElems(dst[l:], code, p)
	return dst
}

// AppendInts appends the elements of the current array of byte, short,
// int or long to dst and returns it, in one call and without entering the
// array; with capacity in dst it does not allocate. A null value appends
// nothing; a value of another kind records the getter's error and returns
// dst unchanged.
func (c *Cursor) AppendInts(dst []int64) []int64 {
	return appendElems(c, dst, amqpsax.KindByte, amqpsax.KindLong, "array of byte, short, int or long")
}

// AppendUints appends the elements of the current array of ubyte,
// ushort, uint or ulong to dst, as AppendInts does.
func (c *Cursor) AppendUints(dst []uint64) []uint64 {
	return appendElems(c, dst, amqpsax.KindUbyte, amqpsax.KindUlong, "array of ubyte, ushort, uint or ulong")
}

// AppendDoubles appends the elements of the current array of double to
// dst, as AppendInts does.
func (c *Cursor) AppendDoubles(dst []float64) []float64 {
	return appendElems(c, dst, amqpsax.KindDouble, amqpsax.KindDouble, "array of double")
}

// AppendFloats appends the elements of the current array of float to
// dst, as AppendInts does.
func (c *Cursor) AppendFloats(dst []float32) []float32 {
	return appendElems(c, dst, amqpsax.KindFloat, amqpsax.KindFloat, "array of float")
}

// AppendTimestamps appends the elements of the current array of
// timestamp to dst, as AppendInts does.
func (c *Cursor) AppendTimestamps(dst []int64) []int64 {
	return appendElems(c, dst, amqpsax.KindTimestamp, amqpsax.KindTimestamp, "array of timestamp")
}

// AppendBytes appends the elements of the current array of binary,
// string or symbol to dst, each a view into the data (valid as long as the
// data is), in one call and without entering the array; with capacity in
// dst it does not allocate. Each element is read as a walk of the array
// reads it — by the cursor itself, on a level of its own — with the
// faults, offsets and validation of a walk. A null value appends nothing;
// a value of another kind records the getter's error and returns dst
// unchanged.
func (c *Cursor) AppendBytes(dst [][]byte) [][]byte {
	v := &c.cur
	if v.kind != amqpsax.KindArray || v.desc >= 0 || wire.Table[v.ector].Cat() != wire.Variable {
		c.want("array of binary, string or symbol")
		return dst
	}
	dst = slices.Grow(dst, v.count)
	if !c.Enter() {
		return dst
	}
	for c.Next() {
		dst = append(dst, c.payload())
	}
	if c.err == nil {
		c.Exit()
	}
	return dst
}
