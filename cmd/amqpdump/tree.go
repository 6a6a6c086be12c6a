package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
	"github.com/google/uuid"
)

// maxDepth bounds the nesting of lists, maps, arrays and described values
// the printer follows (it recurses once per level).
const maxDepth = 1000

// maxShown is how many bytes of a string, symbol or binary a line shows;
// longer ones are cut and their length given.
const maxShown = 64

// printer writes encoded AMQP values as an indented tree, one value per
// line: an optional label, the type name, the value, and the encoding
// in angle brackets when its name says more than the type's:
//
//	described amqp:header:list (ulong 0x70 <smallulong>)
//	  list[2] <list8>
//	    durable: boolean true <true>
//	    priority: ubyte 9
//
// It reads the bytes with the primitives of internal/wire, so it knows
// where every value starts: with offsets on, each line begins with the
// offset of its value in the input. Lines are written as values are
// read, so on bad input everything before the fault has been printed.
type printer struct {
	w       *bufio.Writer
	offsets bool // print the offset column
	width   int  // digits of the offset column

	// data holds the bytes being printed; positions are indexes into it.
	// segs maps them to offsets in the input: data[s.pos:] begins at
	// input offset s.off (a delivery reassembled from several frames has
	// one segment per frame). With no segments a position is its offset.
	data  []byte
	segs  []segment
	depth int
}

// segment is a run of data that is contiguous in the input.
type segment struct{ pos, off int }

// newPrinter returns a printer writing to w; inputLen, the length of the
// whole input, sets the width of the offset column.
func newPrinter(w *bufio.Writer, offsets bool, inputLen int) *printer {
	return &printer{w: w, offsets: offsets, width: len(strconv.Itoa(inputLen))}
}

// at returns a printer that shares p's output and prints data, whose
// positions map to input offsets by segs (nil: position = offset).
func (p *printer) at(data []byte, segs []segment) *printer {
	q := *p
	q.data, q.segs, q.depth = data, segs, 0
	return &q
}

// offset maps a position in p.data to an offset in the input.
func (p *printer) offset(pos int) int {
	for i := len(p.segs) - 1; i >= 0; i-- {
		if s := p.segs[i]; pos >= s.pos {
			return s.off + pos - s.pos
		}
	}
	return pos
}

// line prints one line for the value at position pos.
func (p *printer) line(pos, indent int, text string) {
	if p.offsets {
		fmt.Fprintf(p.w, "%*d  ", p.width, p.offset(pos))
	}
	for range indent {
		p.w.WriteString("  ")
	}
	p.w.WriteString(text)
	p.w.WriteByte('\n')
}

// fault builds the error for a fault st at position pos, in a value whose
// constructor is c (hasCode false when the constructor is missing).
func (p *printer) fault(st wire.Status, pos int, c amqpsax.Code, hasCode bool) error {
	return wire.NewError("amqpdump", st, p.offset(pos), c, hasCode)
}

// cutFault is fault for a value in lim: truncation becomes an overrun
// where lim ends before the input (wire.Cut).
func (p *printer) cutFault(lim []byte, st wire.Status, pos int, c amqpsax.Code, hasCode bool) error {
	if st == wire.EOF {
		st = wire.Cut(lim, p.data)
	}
	return p.fault(st, pos, c, hasCode)
}

// all prints the values of p.data[start:end] one after the other.
func (p *printer) all(start, end, indent int) error {
	for pos := start; pos < end; {
		next, err := p.value(p.data[:end], pos, head{at: pos, indent: indent})
		if err != nil {
			return err
		}
		pos = next
	}
	return nil
}

// head says how to print the line of a value.
type head struct {
	at     int      // the position shown in the offset column
	indent int      // nesting level
	label  string   // printed before the value: "durable: ", `symbol "k" => `
	fields []string // the names of a list's elements, from its descriptor
	elem   bool     // an array element: its encoding is the array's, not shown
}

// value prints the value that starts at pos (constructor included) and
// lies within lim, and returns the position after it.
func (p *printer) value(lim []byte, pos int, h head) (int, error) {
	if pos >= len(lim) {
		return pos, p.cutFault(lim, wire.EOF, pos, 0, false)
	}
	return p.body(lim, pos, pos+1, amqpsax.Code(lim[pos]), h)
}

// body prints the value whose constructor is c and whose body begins at
// position body; start is where the value begins (its constructor, or its
// body in an array), for errors. It returns the position after the value.
func (p *printer) body(lim []byte, start, body int, c amqpsax.Code, h head) (int, error) {
	switch wire.Table[c].Cat() {
	case wire.Invalid:
		return start, p.fault(wire.BadCode, start, c, true)
	case wire.Described:
		return p.described(lim, start, body, h)
	case wire.Compound:
		return p.compound(lim, start, body, c, h)
	case wire.Array:
		return p.array(lim, start, body, c, h)
	}
	if c == amqpsax.CodeList0 {
		// A level of nesting, as for the decoders.
		if err := p.enter(start, c); err != nil {
			return start, err
		}
		p.depth--
		p.line(h.at, h.indent, h.label+"list[0]"+codeSuffix("list", c, h.elem))
		return body, nil
	}
	text, end, st := primitive(lim, body, c, h.elem)
	if st < 0 {
		return start, p.cutFault(lim, st, start, c, true)
	}
	p.line(h.at, h.indent, h.label+text)
	return end, nil
}

// enter counts one more level of nesting, failing past maxDepth.
func (p *printer) enter(start int, c amqpsax.Code) error {
	if p.depth++; p.depth > maxDepth {
		return p.fault(wire.TooDeep, start, c, true)
	}
	return nil
}

// described prints a described value (part 1 §1.5): a line naming its
// descriptor, then its value one level deeper.
func (p *printer) described(lim []byte, start, body int, h head) (int, error) {
	if err := p.enter(start, amqpsax.CodeDescribed); err != nil {
		return start, err
	}
	defer func() { p.depth-- }()
	if body >= len(lim) {
		return body, p.cutFault(lim, wire.EOF, body, 0, false)
	}
	var fields []string
	pos := body
	if dc := amqpsax.Code(lim[body]); isPrimitive(dc) {
		text, end, d, known, st := descriptor(lim, body)
		if st < 0 {
			return body, p.cutFault(lim, st, body, dc, true)
		}
		name := "described"
		if known {
			name += " " + d.Name()
			fields = fieldNames[d]
		}
		p.line(h.at, h.indent, h.label+name+" ("+text+")")
		pos = end
	} else {
		// A compound or described descriptor: print it as a value.
		p.line(h.at, h.indent, h.label+"described")
		end, err := p.value(lim, body, head{at: body, indent: h.indent + 1, label: "descriptor: "})
		if err != nil {
			return end, err
		}
		pos = end
	}
	return p.value(lim, pos, head{at: pos, indent: h.indent + 1, fields: fields})
}

// descriptor reads the primitive descriptor at lim[pos]: its text
// ("ulong 0x70 <smallulong>"), the position after it, and the numeric
// descriptor when it is a ulong or a symbol the spec defines.
func descriptor(lim []byte, pos int) (text string, end int, d amqpsax.Descriptor, known bool, st wire.Status) {
	c := amqpsax.Code(lim[pos])
	text, end, st = primitive(lim, pos+1, c, false)
	if st < 0 {
		return "", pos, 0, false, st
	}
	switch c.Kind() {
	case amqpsax.KindUlong:
		hdr, _, _ := wire.Body(c, lim[pos+1:])
		d = amqpsax.Descriptor(wire.Uint(c, lim[pos+1+hdr:]))
		text = "ulong 0x" + strconv.FormatUint(uint64(d), 16) + codeSuffix("ulong", c, false)
		known = d.Name() != ""
	case amqpsax.KindSymbol:
		hdr, size, _ := wire.Body(c, lim[pos+1:])
		d, known = amqpsax.LookupDescriptor(lim[pos+1+hdr : pos+1+hdr+size])
	}
	return text, end, d, known, wire.OK
}

// compound prints a list or map (part 1 §1.6.22, §1.6.23): a line with its
// count, then its elements one level deeper. A map's entries are printed
// one per line, key => value, when the key is a primitive.
func (p *printer) compound(lim []byte, start, body int, c amqpsax.Code, h head) (int, error) {
	hdr, size, count := wire.Body(c, lim[body:])
	if hdr < 0 {
		return start, p.cutFault(lim, wire.Status(hdr), start, c, true)
	}
	if err := p.enter(start, c); err != nil {
		return start, err
	}
	defer func() { p.depth-- }()
	end := body + hdr + size
	sub := lim[:end]
	pos := body + hdr
	kind := c.Kind()
	if kind == amqpsax.KindList {
		p.line(h.at, h.indent, h.label+"list["+strconv.Itoa(count)+"]"+codeSuffix("list", c, h.elem))
		for i := range count {
			eh := head{at: pos, indent: h.indent + 1}
			if i < len(h.fields) {
				eh.label = h.fields[i] + ": "
			}
			next, err := p.value(sub, pos, eh)
			if err != nil {
				return next, err
			}
			pos = next
		}
	} else {
		p.line(h.at, h.indent, h.label+"map["+strconv.Itoa(count/2)+"]"+codeSuffix("map", c, h.elem))
		for range count / 2 {
			next, err := p.entry(sub, pos, h.indent+1)
			if err != nil {
				return next, err
			}
			pos = next
		}
	}
	if pos != end {
		return start, p.fault(wire.SizeMismatch, start, c, true)
	}
	return end, nil
}

// entry prints the map entry whose key starts at pos.
func (p *printer) entry(lim []byte, pos, indent int) (int, error) {
	if pos >= len(lim) {
		return pos, p.cutFault(lim, wire.EOF, pos, 0, false)
	}
	kc := amqpsax.Code(lim[pos])
	if isPrimitive(kc) {
		key, next, st := primitive(lim, pos+1, kc, false)
		if st < 0 {
			return pos, p.cutFault(lim, st, pos, kc, true)
		}
		return p.value(lim, next, head{at: pos, indent: indent, label: key + " => "})
	}
	next, err := p.value(lim, pos, head{at: pos, indent: indent, label: "key: "})
	if err != nil {
		return next, err
	}
	return p.value(lim, next, head{at: next, indent: indent, label: "value: "})
}

// array prints an array (part 1 §1.6.24): a line with its count and
// element type, then its elements one level deeper. In an array of
// described values the descriptor is written once, in the array's
// constructor, so it is shown on the array's line and each element is
// printed as the described value's value.
func (p *printer) array(lim []byte, start, body int, c amqpsax.Code, h head) (int, error) {
	hdr, size, count := wire.Body(c, lim[body:])
	if hdr < 0 {
		return start, p.cutFault(lim, wire.Status(hdr), start, c, true)
	}
	if err := p.enter(start, c); err != nil {
		return start, err
	}
	defer func() { p.depth-- }()
	first := body + hdr
	end := first + size
	sub := lim[:end]
	elem, ctorLen, descOff, descLen := wire.ArrayCtor(sub[first:], count)
	if ctorLen < 0 {
		return first + descOff, p.fault(wire.Status(ctorLen), first+descOff, c, true)
	}
	text := "array[" + strconv.Itoa(count) + "]" + codeSuffix("array", c, h.elem) + " of "
	var fields []string
	if descLen > 0 {
		dtext, _, d, known, _ := descriptor(sub, first+descOff)
		text += "described "
		if known {
			text += d.Name() + " "
			fields = fieldNames[d]
		}
		text += "(" + dtext + ") "
	}
	text += elem.Kind().String() + codeSuffix(elem.Kind().String(), elem, false)
	p.line(h.at, h.indent, h.label+text)
	pos := first + ctorLen
	for range count {
		eh := head{at: pos, indent: h.indent + 1, fields: fields, elem: true}
		next, err := 0, error(nil)
		if descLen > 0 {
			next, err = p.describedElem(sub, pos, elem, eh)
		} else {
			next, err = p.body(sub, pos, pos, elem, eh)
		}
		if err != nil {
			return next, err
		}
		pos = next
	}
	if pos != end {
		return start, p.fault(wire.SizeMismatch, start, c, true)
	}
	return end, nil
}

// isPrimitive reports whether c encodes a value that fits on one line: a
// fixed- or variable-width one other than list0.
func isPrimitive(c amqpsax.Code) bool {
	cat := wire.Table[c].Cat()
	return (cat == wire.Fixed || cat == wire.Variable) && c != amqpsax.CodeList0
}

// describedElem prints the element at pos of an array of described values
// whose element constructor is elem: the value of a described value whose
// descriptor is in the array's constructor. It counts as a level of
// nesting, and its body is checked before the level is entered, as
// package dispatch does.
func (p *printer) describedElem(lim []byte, pos int, elem amqpsax.Code, h head) (int, error) {
	if hdr, _, _ := wire.Body(elem, lim[pos:]); hdr < 0 {
		return pos, p.cutFault(lim, wire.Status(hdr), pos, elem, true)
	}
	if err := p.enter(pos, amqpsax.CodeDescribed); err != nil {
		return pos, err
	}
	defer func() { p.depth-- }()
	return p.body(lim, pos, pos, elem, h)
}

// codeSuffix returns " <code>" when the encoding's name says more than
// the type's (smalluint for a uint, true for a boolean), and nothing for an
// array element, whose encoding is shown on the array's line.
func codeSuffix(kind string, c amqpsax.Code, elem bool) string {
	if elem || c.String() == kind {
		return ""
	}
	return " <" + c.String() + ">"
}

// primitive formats the fixed- or variable-width value whose constructor
// is c and whose body begins at lim[body], as "type value <encoding>". It
// returns the position after the value, or a negative status when the
// value does not fit in lim.
func primitive(lim []byte, body int, c amqpsax.Code, elem bool) (text string, end int, st wire.Status) {
	hdr, size, _ := wire.Body(c, lim[body:])
	if hdr < 0 {
		return "", body, wire.Status(hdr)
	}
	v := lim[body+hdr : body+hdr+size]
	kind := c.Kind()
	var s string
	switch kind {
	case amqpsax.KindNull:
		s = "null"
	case amqpsax.KindBool:
		s = kind.String() + " " + strconv.FormatBool(wire.Bool(c, v))
	case amqpsax.KindUbyte, amqpsax.KindUshort, amqpsax.KindUint, amqpsax.KindUlong:
		s = kind.String() + " " + strconv.FormatUint(wire.Uint(c, v), 10)
	case amqpsax.KindByte, amqpsax.KindShort, amqpsax.KindInt, amqpsax.KindLong:
		s = kind.String() + " " + strconv.FormatInt(wire.Int(c, v), 10)
	case amqpsax.KindFloat:
		s = "float " + strconv.FormatFloat(float64(wire.Float(v)), 'g', -1, 32)
	case amqpsax.KindDouble:
		s = "double " + strconv.FormatFloat(wire.Double(v), 'g', -1, 64)
	case amqpsax.KindDecimal32, amqpsax.KindDecimal64, amqpsax.KindDecimal128:
		s = kind.String() + " 0x" + hex.EncodeToString(v)
	case amqpsax.KindChar:
		r := wire.Char(v)
		s = fmt.Sprintf("char %U", r)
		if utf8.ValidRune(r) {
			s += " " + strconv.QuoteRune(r)
		}
	case amqpsax.KindTimestamp:
		ms := wire.Timestamp(v)
		s = "timestamp " + strconv.FormatInt(ms, 10) + " (" + time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") + ")"
	case amqpsax.KindUUID:
		s = "uuid " + uuid.UUID(v).String()
	case amqpsax.KindBinary:
		s = "binary[" + strconv.Itoa(len(v)) + "]"
		if len(v) > 0 {
			s += " " + hexText(v)
		}
	case amqpsax.KindString, amqpsax.KindSymbol:
		s = kind.String() + " " + quoted(v)
	}
	return s + codeSuffix(kind.String(), c, elem), body + hdr + size, wire.OK
}

// hexText returns v in hex, cut after maxShown/2 bytes.
func hexText(v []byte) string {
	if len(v) <= maxShown/2 {
		return hex.EncodeToString(v)
	}
	return hex.EncodeToString(v[:maxShown/2]) + "…"
}

// quoted returns v as a Go string literal, cut after maxShown bytes (at a
// character boundary) with its length added.
func quoted(v []byte) string {
	if len(v) <= maxShown {
		return strconv.Quote(string(v))
	}
	n := maxShown
	for n > maxShown-utf8.UTFMax && !utf8.RuneStart(v[n]) {
		n--
	}
	var b strings.Builder
	b.WriteString(strconv.Quote(string(v[:n])))
	b.WriteString("… (")
	b.WriteString(strconv.Itoa(len(v)))
	b.WriteString(" bytes)")
	return b.String()
}
