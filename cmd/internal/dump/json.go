package dump

import (
	"encoding/hex"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/stream"
)

// jsonw writes encoded AMQP values as JSON (see the package doc for the
// mapping). It is given values that have been checked whole (by
// dispatch), so the cursor meets no fault; the walk still stops if it
// does, or when the output reaches its limit.
type jsonw struct {
	out *Out
	c   stream.Cursor
	// typed writes each value with its AMQP type (typed.go).
	typed bool
	// work counts the values visited (a test hook).
	work int
}

// ok reports whether writing may go on.
func (j *jsonw) ok() bool { return j.c.Err() == nil && j.out.spill() }

// value writes the value the cursor is on. When it is field i of the
// composite with descriptor of (named), an enumerated field is written as
// its name.
func (j *jsonw) value(of amqpsax.Descriptor, i int, named bool) bool {
	if j.typed {
		return j.typedValue(of, i, named, false)
	}
	c, o := &j.c, j.out
	switch c.Kind() {
	case amqpsax.KindList:
		return j.list(0, false)
	case amqpsax.KindMap:
		return j.dict()
	case amqpsax.KindArray:
		return j.array()
	case amqpsax.KindDescribed:
		return j.described()
	}
	if named {
		if s := enumName(of, i, c); s != "" {
			o.buf = appendJSONString(o.buf, []byte(s))
			return j.ok()
		}
	}
	o.buf = appendJSONPrimitive(o.buf, c)
	return j.ok()
}

// list writes a list as an array, or as an object of its fields when it
// is the value of a described type whose fields the spec names (fields
// past the named ones are keyed by their index).
func (j *jsonw) list(d amqpsax.Descriptor, named bool) bool {
	c, o := &j.c, j.out
	if !c.Enter() {
		return false
	}
	open, close := byte('['), byte(']')
	if named {
		open, close = '{', '}'
	}
	o.buf = append(o.buf, open)
	for i := 0; c.Next(); i++ {
		j.work++
		if i > 0 {
			o.buf = append(o.buf, ',')
		}
		if named {
			j.key(d, i)
		}
		if !j.value(d, i, named) {
			return false
		}
	}
	o.buf = append(o.buf, close)
	return c.Err() == nil && c.Exit() && j.ok()
}

// key writes the key of field i of the composite d, and a colon.
func (j *jsonw) key(d amqpsax.Descriptor, i int) {
	o := j.out
	if s := fieldName(d, i); s != "" {
		o.buf = appendJSONString(o.buf, []byte(s))
	} else {
		o.buf = append(o.buf, '"')
		o.buf = strconv.AppendInt(o.buf, int64(i), 10)
		o.buf = append(o.buf, '"')
	}
	o.buf = append(o.buf, ':')
}

// dict writes a map as an object. A string or symbol key is the member's
// name; a key of another primitive type is its JSON text as a name ("1",
// "true"); a compound or described key is its encoding in hex ("0x…").
func (j *jsonw) dict() bool {
	c, o := &j.c, j.out
	if !c.Enter() {
		return false
	}
	o.buf = append(o.buf, '{')
	for i := 0; c.Next(); i++ {
		j.work++
		if i > 0 {
			o.buf = append(o.buf, ',')
		}
		switch k := c.Kind(); {
		case k == amqpsax.KindString || k == amqpsax.KindSymbol:
			o.buf = appendJSONString(o.buf, c.Bytes())
		case isPrimitive(k):
			var scratch [64]byte
			o.buf = appendJSONString(o.buf, appendJSONPrimitive(scratch[:0], c))
		default:
			raw := c.Raw()
			o.buf = append(o.buf, `"0x`...)
			o.buf = hex.AppendEncode(o.buf, raw)
			o.buf = append(o.buf, '"')
		}
		o.buf = append(o.buf, ':')
		if !c.Next() {
			return false
		}
		j.work++
		if !j.value(0, 0, false) {
			return false
		}
	}
	o.buf = append(o.buf, '}')
	return c.Err() == nil && c.Exit() && j.ok()
}

// array writes an array as a JSON array. An array of described values,
// whose descriptor is written once, in its constructor, is written as
// {"descriptor":D,"array":[…]}: the descriptor once, then the elements'
// values (lists of named fields as objects), so that a long descriptor is
// not repeated for elements that take no bytes.
func (j *jsonw) array() bool {
	c, o := &j.c, j.out
	if c.ArrayElem() == amqpsax.KindDescribed {
		return j.describedArray()
	}
	if !c.Enter() {
		return false
	}
	o.buf = append(o.buf, '[')
	for i := 0; c.Next(); i++ {
		j.work++
		if i > 0 {
			o.buf = append(o.buf, ',')
		}
		if !j.value(0, 0, false) {
			return false
		}
	}
	o.buf = append(o.buf, ']')
	return c.Err() == nil && c.Exit() && j.ok()
}

// describedArray writes an array of described values (see array). The
// descriptor is its name when the spec defines it, else the ulong or the
// symbol, or null for one of another type (the cursor reads only those
// from an array's constructor).
func (j *jsonw) describedArray() bool {
	c, o := &j.c, j.out
	d, sym, ok := c.Descriptor()
	named := false
	o.buf = append(o.buf, `{"descriptor":`...)
	switch {
	case ok && (sym == nil && d.Name() != "" || sym != nil && d != 0):
		o.buf = appendJSONString(o.buf, []byte(d.Name()))
		named = hasFields(d)
	case ok && sym != nil:
		o.buf = appendJSONString(o.buf, sym)
	case ok:
		o.buf = strconv.AppendUint(o.buf, uint64(d), 10)
	default:
		o.buf = append(o.buf, "null"...)
	}
	o.buf = append(o.buf, `,"array":[`...)
	if !c.Enter() {
		return false
	}
	for i := 0; c.Next(); i++ {
		j.work++
		if i > 0 {
			o.buf = append(o.buf, ',')
		}
		if !c.EnterValue() {
			return false
		}
		j.work += 2
		var ok bool
		if named && c.Kind() == amqpsax.KindList {
			ok = j.list(d, true)
		} else {
			ok = j.value(0, 0, false)
		}
		if !ok || c.Next() || c.Err() != nil || !c.Exit() {
			return false
		}
	}
	o.buf = append(o.buf, "]}"...)
	return c.Err() == nil && c.Exit() && j.ok()
}

// described writes a described value as an object. When the descriptor
// is one the spec defines for a list of named fields and the value is a
// list, the object holds "descriptor" (its name) and the fields;
// otherwise it holds "descriptor" (the name of a descriptor the spec
// defines, else the descriptor as a value) and "value".
func (j *jsonw) described() bool {
	c, o := &j.c, j.out
	if !c.Enter() || !c.Next() {
		return false
	}
	j.work++
	o.buf = append(o.buf, `{"descriptor":`...)
	d, known := j.descriptor()
	if !known && !j.value(0, 0, false) {
		return false
	}
	if !c.Next() {
		return false
	}
	j.work++
	if known && hasFields(d) && c.Kind() == amqpsax.KindList {
		// The fields, in the same object: {"descriptor":"…","a":1}.
		if !c.Enter() {
			return false
		}
		for i := 0; c.Next(); i++ {
			j.work++
			o.buf = append(o.buf, ',')
			j.key(d, i)
			if !j.value(d, i, true) {
				return false
			}
		}
		if c.Err() != nil || !c.Exit() {
			return false
		}
	} else {
		o.buf = append(o.buf, `,"value":`...)
		if !j.value(0, 0, false) {
			return false
		}
	}
	o.buf = append(o.buf, '}')
	return !c.Next() && c.Err() == nil && c.Exit() && j.ok()
}

// descriptor writes the name of the descriptor the cursor is on when it
// is a ulong or symbol the spec defines, and returns it; otherwise it
// writes nothing and returns known false.
func (j *jsonw) descriptor() (d amqpsax.Descriptor, known bool) {
	c := &j.c
	switch c.Kind() {
	case amqpsax.KindUlong:
		d = amqpsax.Descriptor(c.Uint())
		known = d.Name() != ""
	case amqpsax.KindSymbol:
		d, known = amqpsax.LookupDescriptor(c.Bytes())
	}
	if known {
		j.out.buf = appendJSONString(j.out.buf, []byte(d.Name()))
	}
	return d, known
}

// appendJSONPrimitive appends the primitive the cursor is on as JSON.
func appendJSONPrimitive(b []byte, c *stream.Cursor) []byte {
	switch c.Kind() {
	case amqpsax.KindNull:
		return append(b, "null"...)
	case amqpsax.KindBool:
		return strconv.AppendBool(b, c.Bool())
	case amqpsax.KindUbyte, amqpsax.KindUshort, amqpsax.KindUint, amqpsax.KindUlong:
		return strconv.AppendUint(b, c.Uint(), 10)
	case amqpsax.KindByte, amqpsax.KindShort, amqpsax.KindInt, amqpsax.KindLong:
		return strconv.AppendInt(b, c.Int(), 10)
	case amqpsax.KindFloat:
		return appendJSONFloat(b, float64(c.Float()), 32)
	case amqpsax.KindDouble:
		return appendJSONFloat(b, c.Double(), 64)
	case amqpsax.KindDecimal32:
		d := c.Decimal32()
		return appendJSONHex(b, d[:])
	case amqpsax.KindDecimal64:
		d := c.Decimal64()
		return appendJSONHex(b, d[:])
	case amqpsax.KindDecimal128:
		d := c.Decimal128()
		return appendJSONHex(b, d[:])
	case amqpsax.KindChar:
		r := c.Char()
		if !utf8.ValidRune(r) {
			return appendJSONString(b, appendChar(nil, r))
		}
		return appendJSONString(b, utf8.AppendRune(nil, r))
	case amqpsax.KindTimestamp:
		return strconv.AppendInt(b, c.Timestamp(), 10)
	case amqpsax.KindUUID:
		u := c.UUID()
		return appendJSONString(b, []byte(u.String()))
	case amqpsax.KindBinary:
		b = append(b, '"')
		b = hex.AppendEncode(b, c.Bytes())
		return append(b, '"')
	case amqpsax.KindString, amqpsax.KindSymbol:
		return appendJSONString(b, c.Bytes())
	}
	return append(b, "null"...)
}

// appendJSONFloat appends f, or a string for the values JSON has no
// number for ("NaN", "+Inf", "-Inf").
func appendJSONFloat(b []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		b = append(b, '"')
		b = strconv.AppendFloat(b, f, 'g', -1, bits)
		return append(b, '"')
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}

// appendJSONHex appends v as a string "0x…".
func appendJSONHex(b []byte, v []byte) []byte {
	b = append(b, `"0x`...)
	b = hex.AppendEncode(b, v)
	return append(b, '"')
}

// appendJSONString appends s as a JSON string; bytes that are not UTF-8
// become U+FFFD.
func appendJSONString(b []byte, s []byte) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
