package dump

import (
	"bytes"
	"strconv"

	"github.com/amqpsax/amqpsax"
)

// textSink prints the walk as an indented tree, one value a line (see the
// package doc).
type textSink struct {
	out  *Out
	runs []*run // by depth: the run of identical values at that level
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

func (t *textSink) ok() bool { return t.out.err == nil }

// begin starts the line of a value.
func (t *textSink) begin(w *walker, n *node) {
	o := t.out
	o.begin(w.segs.offset(n.at), n.indent)
	if n.name != "" {
		o.buf = append(o.buf, n.name...)
		o.buf = append(o.buf, ": "...)
	}
	o.buf = append(o.buf, n.label...)
}

func (t *textSink) primitive(w *walker, n *node) bool {
	c := &w.c
	t.begin(w, n)
	annot := ""
	if n.name != "" {
		annot = enumName(n.fieldOf, n.field, c)
	}
	t.out.buf = appendPrimitive(t.out.buf, c, n.elem, annot)
	t.out.end()
	return t.out.err == nil
}

// countLine prints the line that opens a list or map: "list[3]" or
// "map[2]" with its encoding.
func (t *textSink) countLine(w *walker, n *node, kind string) bool {
	c, o := &w.c, t.out
	t.begin(w, n)
	o.buf = append(o.buf, kind...)
	o.buf = append(o.buf, '[')
	o.buf = strconv.AppendInt(o.buf, int64(c.Count()), 10)
	o.buf = append(o.buf, ']')
	o.buf = appendSuffix(o.buf, kind, c.Code(), n.elem)
	o.end()
	return o.err == nil
}

// A list (part 1 §1.6.22): a line with its count, then its elements one
// level deeper, named when the list is a described type's.
func (t *textSink) listOpen(w *walker, n *node) bool                 { return t.countLine(w, n, "list") }
func (t *textSink) listElem(w *walker, n *node, i int, e *node) bool { return true }
func (t *textSink) listClose(w *walker, n *node) bool                { return true }

// A map (part 1 §1.6.23): a line with its number of pairs, then one line a
// pair, "key => value", one level deeper; a key that is not a primitive is
// printed as a tree of its own ("key: "), and so is its value ("value: ").
func (t *textSink) mapOpen(w *walker, n *node) bool { return t.countLine(w, n, "map") }

func (t *textSink) mapKey(w *walker, n *node, i int, k *node) bool {
	c := &w.c
	if isPrimitive(c.Kind()) {
		k.label = string(appendPrimitive(nil, c, false, "")) + " => "
		return false
	}
	k.label = "key: "
	return true
}

func (t *textSink) mapValue(w *walker, n *node, k, v *node) {
	*v = *k // (v may be k)
	if v.label == "key: " {
		v.label, v.at = "value: ", w.c.Offset()
	}
}

func (t *textSink) mapPairEnd(w *walker, n *node)    {}
func (t *textSink) mapClose(w *walker, n *node) bool { return true }

// An array (part 1 §1.6.24): a line with its count, encoding and element
// type, then its elements one level deeper. The element constructor is
// read from the first element: the array's line is printed with it. In an
// array of described values the descriptor is written once, in the
// array's constructor, so it is shown on the array's line and each
// element is printed as the described value's value.
//
// An empty array shows the element encoding of its constructor
// (Cursor.ArrayCode), and an empty array of described values the encoding
// of its descriptor (Cursor.ArrayDescriptor).
func (t *textSink) arrayOpen(w *walker, n *node) bool {
	c, o := &w.c, t.out
	n.count, n.code = c.Count(), c.Code()
	if n.count > 0 {
		return true // the line is printed with the first element
	}
	t.begin(w, n)
	o.buf = appendArrayHead(o.buf, n.code, 0, n.elem)
	if c.ElemKind() == amqpsax.KindDescribed {
		o.buf = append(o.buf, "described"...)
		d, sym, ok := c.Descriptor()
		dcode := amqpsax.Code(c.ArrayDescriptor()[0])
		switch {
		case sym != nil:
			o.buf = appendDescName(o.buf, d, true)
			o.buf = append(o.buf, " (symbol "...)
			o.buf = appendQuoted(o.buf, sym)
			o.buf = appendSuffix(o.buf, "symbol", dcode, false)
			o.buf = append(o.buf, ')')
		case ok:
			o.buf = appendDescName(o.buf, d, d.Name() != "")
			o.buf = append(o.buf, " (ulong 0x"...)
			o.buf = strconv.AppendUint(o.buf, uint64(d), 16)
			o.buf = appendSuffix(o.buf, "ulong", dcode, false)
			o.buf = append(o.buf, ')')
		default:
			o.buf = append(o.buf, " (descriptor "...)
			o.buf = appendKind(o.buf, dcode.Kind(), dcode)
			o.buf = append(o.buf, ')')
		}
		o.buf = append(o.buf, " of "...)
	}
	o.buf = appendKind(o.buf, c.ArrayCode().Kind(), c.ArrayCode())
	o.end()
	// Entered all the same: it is a level of nesting, and its size is
	// checked at its end.
	return o.err == nil
}

func (t *textSink) arrayElem(w *walker, n *node, i int, e *node) bool {
	if i == 0 {
		c, o := &w.c, t.out
		t.begin(w, n)
		o.buf = appendArrayHead(o.buf, n.code, n.count, n.elem)
		o.buf = appendKind(o.buf, c.Kind(), c.Code())
		o.end()
	}
	return true
}

func (t *textSink) arrayDescriptor(w *walker, n *node, i int) {
	if i == 0 {
		n.dtext = t.descriptorText(w)
	}
}

func (t *textSink) arrayDescribed(w *walker, n *node, i int, d desc, e *node) bool {
	if i == 0 {
		c, o := &w.c, t.out
		t.begin(w, n)
		o.buf = appendArrayHead(o.buf, n.code, n.count, n.elem)
		o.buf = append(o.buf, "described"...)
		o.buf = appendDescName(o.buf, d.d, d.d != 0)
		o.buf = append(o.buf, " ("...)
		o.buf = append(o.buf, n.dtext...)
		o.buf = append(o.buf, ") "...)
		o.buf = appendKind(o.buf, c.Kind(), c.Code())
		o.end()
	}
	e.fields, e.named = d.d, d.known && hasFields(d.d)
	return true
}

func (t *textSink) arrayClose(w *walker, n *node) bool { return true }

// A described value (part 1 §1.5): a line naming its descriptor, then its
// value one level deeper. A compound or described descriptor is printed
// as a value ("descriptor: ").
func (t *textSink) describedOpen(w *walker, n *node, d desc, dn *node) bool {
	o := t.out
	if isPrimitive(w.c.Kind()) {
		text := t.descriptorText(w)
		t.begin(w, n)
		o.buf = append(o.buf, "described"...)
		o.buf = appendDescName(o.buf, d.d, d.known)
		o.buf = append(o.buf, " ("...)
		o.buf = append(o.buf, text...)
		o.buf = append(o.buf, ')')
		o.end()
		return false
	}
	t.begin(w, n)
	o.buf = append(o.buf, "described"...)
	o.end()
	*dn = node{at: w.c.Offset(), indent: n.indent + 1, label: "descriptor: "}
	return true
}

func (t *textSink) describedValue(w *walker, n *node, d desc, v *node) bool { return true }
func (t *textSink) describedClose(w *walker, n *node) bool                  { return true }

// descriptorText is the text of the primitive descriptor the cursor is
// on: "ulong 0x70 <smallulong>", `symbol "a:b"`.
func (t *textSink) descriptorText(w *walker) string {
	c := &w.c
	if c.Kind() == amqpsax.KindUlong {
		b := strconv.AppendUint([]byte("ulong 0x"), c.Uint(), 16)
		return string(appendSuffix(b, "ulong", c.Code(), false))
	}
	return string(appendPrimitive(nil, c, false, ""))
}

func (t *textSink) runStart(depth int) *run {
	for len(t.runs) <= depth {
		t.runs = append(t.runs, new(run))
	}
	r := t.runs[depth]
	*r = run{}
	return r
}

// repeat reports whether the current value repeats the values before it
// (same constructor, same bytes) past the first shownRepeats, so that its
// line is left out. Raw is O(1) for everything it is called on: any value
// but a described one, whose end is found by walking it, or an element of
// an array of described values. A value left out is not entered: bytes
// identical to a value already walked, at the same depth, hold the same
// faults, so none is missed.
func (t *textSink) repeat(w *walker, r *run, indent int) bool {
	c := &w.c
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
	t.runEnd(w, r, indent)
	r.code, r.raw, r.n = code, raw, 1
	return false
}

// runEnd prints the line that sums up the values of r left out.
func (t *textSink) runEnd(w *walker, r *run, indent int) {
	if r.n > shownRepeats {
		o := t.out
		o.begin(w.segs.offset(r.at), indent)
		o.buf = append(o.buf, "… "...)
		o.buf = strconv.AppendInt(o.buf, int64(r.n-shownRepeats), 10)
		o.buf = append(o.buf, " more "...)
		o.buf = append(o.buf, r.text...)
		o.end()
	}
	r.n, r.raw = 0, nil
}
