package dump

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/stream"
)

// maxShown is how many bytes of a string, symbol or binary a line shows;
// longer ones are cut and their length given.
const maxShown = 64

// shownRepeats is how many of a run of identical values are printed
// before the rest of the run is summed up in one line.
const shownRepeats = 2

// errStopped is the error of a walk the cursor ended without saying why;
// it is not expected to happen.
var errStopped = errors.New("amqpdump: the cursor stopped before the end of a value")

// tree prints encoded AMQP values as an indented tree, one value a line,
// reading them with a stream.Cursor that enters everything: its faults,
// and their offsets, are the ones package dispatch reports.
type tree struct {
	out  *Out
	c    stream.Cursor
	segs *segments
	runs []*run // by depth: the run of identical values at that level
	// work counts the values visited (a test hook: it must grow linearly
	// with the input).
	work int
}

// head says how to print the line of a value.
type head struct {
	at     int    // position shown in the offset column
	indent int    // nesting level
	name   string // the field's name, printed as "name: "
	label  string // printed before the value: `symbol "k" => `, "descriptor: "
	elem   bool   // an array element: its encoding is the array's, not shown
	// fields names the elements of the value, when it is a list: the
	// descriptor of the described value it is the value of
	fields amqpsax.Descriptor
	named  bool
	// fieldOf and field say which field of which composite the value is,
	// for enum names
	fieldOf amqpsax.Descriptor
	field   int
}

// run is a run of identical values at one level (same constructor and
// bytes): the first shownRepeats are printed, the rest summed up.
type run struct {
	code amqpsax.Code
	raw  []byte
	n    int
	at   int    // where the values not printed begin
	text string // the line of the values
}

// all prints every value of data, one after the other, positions mapped
// to input offsets by segs. It stops at the first fault.
func (t *tree) all(data []byte, segs *segments, indent int) error {
	c := &t.c
	t.segs = segs
	c.Reset(data)
	r := t.runAt(0)
	for c.Next() {
		t.work++
		if c.Kind() != amqpsax.KindDescribed && t.skip(r, indent) {
			continue
		}
		if !t.value(head{at: c.Offset(), indent: indent}) {
			return t.err()
		}
	}
	t.endRun(r, indent)
	if c.Err() != nil || t.out.err != nil {
		return t.err()
	}
	return nil
}

// one prints the first value of data (a performative: the payload after it
// is not read).
func (t *tree) one(data []byte, segs *segments, indent int) error {
	c := &t.c
	t.segs = segs
	c.Reset(data)
	if !c.Next() || !t.value(head{at: c.Offset(), indent: indent}) {
		return t.err()
	}
	return nil
}

// err returns the fault that stopped the walk: the output's, or the
// cursor's with Op "amqpdump" and its offset in the input.
func (t *tree) err() error {
	if err := t.out.err; err != nil {
		return err
	}
	return remap(t.c.Err(), t.segs)
}

// remap returns err, an error of a decoder about bytes whose positions
// segs maps to input offsets, as amqpdump reports it: an *amqpsax.Error
// with Op "amqpdump" and the input offset.
func remap(err error, segs *segments) error {
	var ae *amqpsax.Error
	if !errors.As(err, &ae) {
		if err == nil {
			return errStopped
		}
		return err
	}
	e := *ae
	e.Op = "amqpdump"
	e.Offset = int(segs.offset(ae.Offset))
	return &e
}

func (t *tree) runAt(depth int) *run {
	for len(t.runs) <= depth {
		t.runs = append(t.runs, new(run))
	}
	r := t.runs[depth]
	*r = run{}
	return r
}

// skip reports whether the current value repeats the values before it
// (same constructor, same bytes) past the first shownRepeats, so that its
// line is left out. Raw is O(1) for everything it is called on: any value
// but a described one, whose end is found by walking it, or an element of
// an array of described values. A value left out is not entered: bytes
// identical to a value already walked, at the same depth, hold the same
// faults, so none is missed.
func (t *tree) skip(r *run, indent int) bool {
	c := &t.c
	raw, code := c.Raw(), c.Code()
	if r.n > 0 && code == r.code && bytes.Equal(raw, r.raw) {
		r.n++
		switch r.n {
		case shownRepeats:
			t.out.capture = &r.text
		case shownRepeats + 1:
			r.at = c.Offset()
		}
		return r.n > shownRepeats
	}
	t.endRun(r, indent)
	r.code, r.raw, r.n = code, raw, 1
	return false
}

// endRun prints the line that sums up the values of r left out.
func (t *tree) endRun(r *run, indent int) {
	if r.n > shownRepeats {
		o := t.out
		o.begin(t.segs.offset(r.at), indent)
		o.buf = append(o.buf, "… "...)
		o.buf = strconv.AppendInt(o.buf, int64(r.n-shownRepeats), 10)
		o.buf = append(o.buf, " more "...)
		o.buf = append(o.buf, r.text...)
		o.end()
	}
	r.n, r.raw = 0, nil
}

// begin starts the line of a value.
func (t *tree) begin(h head) {
	o := t.out
	o.begin(t.segs.offset(h.at), h.indent)
	if h.name != "" {
		o.buf = append(o.buf, h.name...)
		o.buf = append(o.buf, ": "...)
	}
	o.buf = append(o.buf, h.label...)
}

// value prints the value the cursor is on, and everything in it. It
// returns false on a fault (see err).
func (t *tree) value(h head) bool {
	c := &t.c
	switch c.Kind() {
	case amqpsax.KindList:
		return t.list(h)
	case amqpsax.KindMap:
		return t.dict(h)
	case amqpsax.KindArray:
		return t.array(h)
	case amqpsax.KindDescribed:
		return t.described(h)
	}
	t.begin(h)
	annot := ""
	if h.name != "" {
		annot = enumName(h.fieldOf, h.field, c)
	}
	t.out.buf = appendPrimitive(t.out.buf, c, h.elem, annot)
	t.out.end()
	return t.out.err == nil && c.Err() == nil
}

// countLine prints the line that opens a list or map: "list[3]" or
// "map[2]" with its encoding.
func (t *tree) countLine(h head, kind string) {
	c, o := &t.c, t.out
	t.begin(h)
	o.buf = append(o.buf, kind...)
	o.buf = append(o.buf, '[')
	o.buf = strconv.AppendInt(o.buf, int64(c.Count()), 10)
	o.buf = append(o.buf, ']')
	o.buf = appendSuffix(o.buf, kind, c.Code(), h.elem)
	o.end()
}

// list prints a list (part 1 §1.6.22): a line with its count, then its
// elements one level deeper, named when the list is a described type's.
func (t *tree) list(h head) bool {
	c, o := &t.c, t.out
	t.countLine(h, "list")
	if o.err != nil || !c.Enter() {
		return false
	}
	r := t.runAt(c.Depth())
	for i := 0; c.Next(); i++ {
		t.work++
		eh := head{at: c.Offset(), indent: h.indent + 1}
		if h.named {
			eh.name, eh.fieldOf, eh.field = fieldName(h.fields, i), h.fields, i
		}
		if eh.name == "" && c.Kind() != amqpsax.KindDescribed && t.skip(r, eh.indent) {
			continue
		}
		if !t.value(eh) {
			return false
		}
	}
	t.endRun(r, h.indent+1)
	return c.Err() == nil && o.err == nil && c.Exit()
}

// dict prints a map (part 1 §1.6.23): a line with its number of pairs,
// then one line a pair, "key => value", one level deeper; a key that is
// not a primitive is printed as a tree of its own ("key: "), and so is its
// value ("value: ").
func (t *tree) dict(h head) bool {
	c, o := &t.c, t.out
	t.countLine(h, "map")
	if o.err != nil || !c.Enter() {
		return false
	}
	for c.Next() { // a key
		t.work++
		kh := head{at: c.Offset(), indent: h.indent + 1}
		if isPrimitive(c.Kind()) {
			kh.label = string(appendPrimitive(nil, c, false, "")) + " => "
		} else {
			kh.label = "key: "
			if !t.value(kh) {
				return false
			}
			kh.label = "value: "
		}
		if !c.Next() { // its value: a map's count is even
			return false
		}
		t.work++
		if kh.label == "value: " {
			kh.at = c.Offset()
		}
		if !t.value(kh) {
			return false
		}
	}
	return c.Err() == nil && o.err == nil && c.Exit()
}

// array prints an array (part 1 §1.6.24): a line with its count,
// encoding and element type, then its elements one level deeper. The
// element constructor is read from the first element: the array's line is
// printed with it. In an array of described values the descriptor is
// written once, in the array's constructor, so it is shown on the array's
// line and each element is printed as the described value's value.
//
// An empty array shows the element encoding of its constructor
// (Cursor.ArrayCode), and an empty array of described values the encoding
// of its descriptor (Cursor.ArrayDescriptor).
func (t *tree) array(h head) bool {
	c, o := &t.c, t.out
	count, code := c.Count(), c.Code()
	described := c.ElemKind() == amqpsax.KindDescribed
	if count == 0 {
		t.begin(h)
		o.buf = appendArrayHead(o.buf, code, 0, h.elem)
		if described {
			o.buf = append(o.buf, "described"...)
			d, sym, ok := c.Descriptor()
			switch {
			case sym != nil:
				o.buf = appendDescName(o.buf, d, true)
				o.buf = append(o.buf, " (symbol "...)
				o.buf = appendQuoted(o.buf, sym)
				o.buf = appendSuffix(o.buf, "symbol", amqpsax.Code(c.ArrayDescriptor()[0]), false)
				o.buf = append(o.buf, ')')
			case ok:
				o.buf = appendDescName(o.buf, d, d.Name() != "")
				o.buf = append(o.buf, " (ulong 0x"...)
				o.buf = strconv.AppendUint(o.buf, uint64(d), 16)
				o.buf = appendSuffix(o.buf, "ulong", amqpsax.Code(c.ArrayDescriptor()[0]), false)
				o.buf = append(o.buf, ')')
			default:
				o.buf = append(o.buf, " (descriptor "...)
				o.buf = appendKind(o.buf, amqpsax.Code(c.ArrayDescriptor()[0]).Kind(), amqpsax.Code(c.ArrayDescriptor()[0]))
				o.buf = append(o.buf, ')')
			}
			o.buf = append(o.buf, " of "...)
			o.buf = appendKind(o.buf, c.ArrayCode().Kind(), c.ArrayCode())
		} else {
			o.buf = appendKind(o.buf, c.ArrayCode().Kind(), c.ArrayCode())
		}
		o.end()
		// Entered all the same: it is a level of nesting, and its size is
		// checked at its end.
		return o.err == nil && c.Enter() && !c.Next() && c.Err() == nil && c.Exit()
	}
	if !c.Enter() {
		return false
	}
	r := t.runAt(c.Depth())
	first := true
	var fields amqpsax.Descriptor
	var named bool
	for c.Next() {
		t.work++
		eh := head{at: c.Offset(), indent: h.indent + 1, elem: true}
		if t.skip(r, eh.indent) {
			continue
		}
		if !described {
			if first {
				t.begin(h)
				o.buf = appendArrayHead(o.buf, code, count, h.elem)
				o.buf = appendKind(o.buf, c.Kind(), c.Code())
				o.end()
				first = false
			}
			if !t.value(eh) {
				return false
			}
			continue
		}
		// An element of an array of described values: its descriptor
		// (the array's, replayed), then its value.
		if !c.Enter() || !c.Next() {
			return false
		}
		t.work++
		var dtext string
		if first {
			var known bool
			dtext, fields, known = t.descriptor()
			named = known && hasFields(fields)
			if !known {
				fields = 0
			}
		}
		if !c.Next() {
			return false
		}
		t.work++
		if first {
			t.begin(h)
			o.buf = appendArrayHead(o.buf, code, count, h.elem)
			o.buf = append(o.buf, "described"...)
			o.buf = appendDescName(o.buf, fields, fields != 0)
			o.buf = append(o.buf, " ("...)
			o.buf = append(o.buf, dtext...)
			o.buf = append(o.buf, ") "...)
			o.buf = appendKind(o.buf, c.Kind(), c.Code())
			o.end()
			first = false
		}
		eh.at, eh.fields, eh.named = c.Offset(), fields, named
		if !t.value(eh) || c.Next() || c.Err() != nil || !c.Exit() {
			return false
		}
	}
	t.endRun(r, h.indent+1)
	return c.Err() == nil && o.err == nil && c.Exit()
}

// described prints a described value (part 1 §1.5): a line naming its
// descriptor, then its value one level deeper.
func (t *tree) described(h head) bool {
	c, o := &t.c, t.out
	if !c.Enter() || !c.Next() {
		return false
	}
	t.work++
	var d amqpsax.Descriptor
	var known bool
	if isPrimitive(c.Kind()) {
		var text string
		text, d, known = t.descriptor()
		t.begin(h)
		o.buf = append(o.buf, "described"...)
		o.buf = appendDescName(o.buf, d, known)
		o.buf = append(o.buf, " ("...)
		o.buf = append(o.buf, text...)
		o.buf = append(o.buf, ')')
		o.end()
	} else {
		// A compound or described descriptor: printed as a value.
		t.begin(h)
		o.buf = append(o.buf, "described"...)
		o.end()
		if o.err != nil || !t.value(head{at: c.Offset(), indent: h.indent + 1, label: "descriptor: "}) {
			return false
		}
	}
	if o.err != nil || !c.Next() {
		return false
	}
	t.work++
	vh := head{at: c.Offset(), indent: h.indent + 1, fields: d, named: known && hasFields(d)}
	return t.value(vh) && !c.Next() && c.Err() == nil && c.Exit()
}

// descriptor reads the primitive descriptor the cursor is on: its text
// ("ulong 0x70 <smallulong>"), and the descriptor when it is a ulong or
// a symbol the spec defines.
func (t *tree) descriptor() (text string, d amqpsax.Descriptor, known bool) {
	c := &t.c
	switch c.Kind() {
	case amqpsax.KindUlong:
		d = amqpsax.Descriptor(c.Uint())
		b := strconv.AppendUint([]byte("ulong 0x"), uint64(d), 16)
		return string(appendSuffix(b, "ulong", c.Code(), false)), d, d.Name() != ""
	case amqpsax.KindSymbol:
		d, known = amqpsax.LookupDescriptor(c.Bytes())
	}
	return string(appendPrimitive(nil, c, false, "")), d, known
}

// isPrimitive reports whether a value of kind k fits on one line.
func isPrimitive(k amqpsax.Kind) bool {
	switch k {
	case amqpsax.KindList, amqpsax.KindMap, amqpsax.KindArray, amqpsax.KindDescribed, amqpsax.KindInvalid:
		return false
	}
	return true
}

// appendDescName appends " " and the spec's name of d when known.
func appendDescName(b []byte, d amqpsax.Descriptor, known bool) []byte {
	if known && d.Name() != "" {
		b = append(b, ' ')
		b = append(b, d.Name()...)
	}
	return b
}

// appendArrayHead appends "array[N] <array8> of ".
func appendArrayHead(b []byte, code amqpsax.Code, count int, elem bool) []byte {
	b = append(b, "array["...)
	b = strconv.AppendInt(b, int64(count), 10)
	b = append(b, ']')
	b = appendSuffix(b, "array", code, elem)
	return append(b, " of "...)
}

// appendKind appends an element type and its encoding: "symbol <sym8>".
func appendKind(b []byte, k amqpsax.Kind, c amqpsax.Code) []byte {
	b = append(b, k.String()...)
	return appendSuffix(b, k.String(), c, false)
}

// appendSuffix appends " <code>" when the encoding's name says more than
// the type's (smalluint for a uint, true for a boolean), and nothing for
// an array element, whose encoding is shown on the array's line.
func appendSuffix(b []byte, kind string, c amqpsax.Code, elem bool) []byte {
	if elem || c.String() == kind {
		return b
	}
	b = append(b, " <"...)
	b = append(b, c.String()...)
	return append(b, '>')
}

// appendPrimitive appends the value the cursor is on, a primitive, as
// "type value (annot) <encoding>".
func appendPrimitive(b []byte, c *stream.Cursor, elem bool, annot string) []byte {
	kind := c.Kind()
	name := kind.String()
	switch kind {
	case amqpsax.KindNull:
		b = append(b, "null"...)
	case amqpsax.KindBool:
		b = append(b, name...)
		b = append(b, ' ')
		b = strconv.AppendBool(b, c.Bool())
	case amqpsax.KindUbyte, amqpsax.KindUshort, amqpsax.KindUint, amqpsax.KindUlong:
		b = append(b, name...)
		b = append(b, ' ')
		b = strconv.AppendUint(b, c.Uint(), 10)
	case amqpsax.KindByte, amqpsax.KindShort, amqpsax.KindInt, amqpsax.KindLong:
		b = append(b, name...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, c.Int(), 10)
	case amqpsax.KindFloat:
		b = append(b, "float "...)
		b = strconv.AppendFloat(b, float64(c.Float()), 'g', -1, 32)
	case amqpsax.KindDouble:
		b = append(b, "double "...)
		b = strconv.AppendFloat(b, c.Double(), 'g', -1, 64)
	case amqpsax.KindDecimal32:
		d := c.Decimal32()
		b = appendHexValue(b, name, d[:])
	case amqpsax.KindDecimal64:
		d := c.Decimal64()
		b = appendHexValue(b, name, d[:])
	case amqpsax.KindDecimal128:
		d := c.Decimal128()
		b = appendHexValue(b, name, d[:])
	case amqpsax.KindChar:
		b = appendChar(b, c.Char())
	case amqpsax.KindTimestamp:
		ms := c.Timestamp()
		b = append(b, "timestamp "...)
		b = strconv.AppendInt(b, ms, 10)
		b = append(b, " ("...)
		b = time.UnixMilli(ms).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
		b = append(b, ')')
	case amqpsax.KindUUID:
		u := c.UUID()
		b = append(b, "uuid "...)
		b = append(b, u.String()...)
	case amqpsax.KindBinary:
		v := c.Bytes()
		b = append(b, "binary["...)
		b = strconv.AppendInt(b, int64(len(v)), 10)
		b = append(b, ']')
		if len(v) > 0 {
			b = append(b, ' ')
			b = hex.AppendEncode(b, v[:min(len(v), maxShown/2)])
			if len(v) > maxShown/2 {
				b = append(b, "…"...)
			}
		}
	case amqpsax.KindString, amqpsax.KindSymbol:
		b = append(b, name...)
		b = append(b, ' ')
		b = appendQuoted(b, c.Bytes())
	}
	if annot != "" {
		b = append(b, " ("...)
		b = append(b, annot...)
		b = append(b, ')')
	}
	return appendSuffix(b, name, c.Code(), elem)
}

// appendHexValue appends "decimal32 0x…".
func appendHexValue(b []byte, name string, v []byte) []byte {
	b = append(b, name...)
	b = append(b, " 0x"...)
	return hex.AppendEncode(b, v)
}

// appendChar appends "char U+0041 'A'" (the quoted character only when
// it is a valid code point).
func appendChar(b []byte, r rune) []byte {
	b = fmt.Appendf(b, "char %U", r)
	if utf8.ValidRune(r) {
		b = append(b, ' ')
		b = strconv.AppendQuoteRune(b, r)
	}
	return b
}

// appendQuoted appends v as a Go string literal, cut after maxShown bytes
// (at a character boundary) with its length added.
func appendQuoted(b []byte, v []byte) []byte {
	if len(v) <= maxShown {
		return strconv.AppendQuote(b, string(v))
	}
	n := maxShown
	for n > maxShown-utf8.UTFMax && !utf8.RuneStart(v[n]) {
		n--
	}
	b = strconv.AppendQuote(b, string(v[:n]))
	b = append(b, "… ("...)
	b = strconv.AppendInt(b, int64(len(v)), 10)
	return append(b, " bytes)"...)
}
