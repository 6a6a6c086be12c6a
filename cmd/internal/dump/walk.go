package dump

import (
	"slices"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/stream"
)

// walker walks encoded AMQP values with a stream.Cursor that enters
// everything (so that its faults, and their offsets, are the ones package
// dispatch reports) and tells a sink what it meets: the text tree
// (textSink) and JSON (jsonSink) are two sinks of this one walk. The sink
// reads the value the walk is on from the walker's cursor.
type walker struct {
	c    stream.Cursor
	segs *segments
	s    sinks
	out  *Out
	// nodes holds one node for each level of nesting the walk is at, so
	// that a node is not allocated for each value (a node whose address
	// the recursive walk passes on would be).
	nodes []*node
	depth int
	// work counts the values visited (a test hook: it must grow linearly
	// with the input).
	work int
}

// node is where a value lies and what it is to the value it is in.
type node struct {
	at     int    // its position, mapped to an input offset by segs
	indent int    // nesting level
	name   string // the name of the field it is, when its list's fields are named
	label  string // text: printed before the value (`symbol "k" => `, "descriptor: ")
	elem   bool   // an array's element: its encoding, and its type, are the array's
	// fields names the elements of the value, when it is a list: the
	// descriptor of the described value it is the value of (named)
	fields amqpsax.Descriptor
	named  bool
	// inline: JSON, the value is a list whose fields go into the object
	// already open (a described value's, in the plain form)
	inline bool
	// fieldOf and field say which field of which composite the value is,
	// for enum names
	fieldOf amqpsax.Descriptor
	field   int
	hasOf   bool
	// bare: JSON, typed, an array's element: its type is the array's
	bare bool
	// The array's, kept by its sink from arrayOpen to its elements: its
	// count and encoding, and the text of its elements' descriptor.
	count   int
	code    amqpsax.Code
	dtext   string
	ofDescr bool // an array of described values
}

// desc is a descriptor as the walk read it: the spec's, when it defines
// it (known).
type desc struct {
	d     amqpsax.Descriptor
	known bool
}

// sinks receives the walk: the text tree (textSink) or JSON (jsonSink),
// whichever is set. Each method is called with the cursor on the value it
// is about (or, for the Close methods, after its elements); one that
// returns false stops the walk (a fault of the output). (A struct that
// dispatches, not an interface: the nodes passed by pointer stay on the
// walk's stack instead of escaping to the heap, one allocation a value.)
//
// The methods, in the order a walk calls them:
//
//	primitive(w *walker, n *node) bool
//	listOpen(w *walker, n *node) bool
//	listElem(w *walker, n *node, i int, e *node) bool
//	listClose(w *walker, n *node) bool
//	mapOpen(w *walker, n *node) bool
//	// mapKey is called on key i: it fills k and returns whether the walk
//	// is to walk the key as a value (or the sink has written it).
//	mapKey(w *walker, n *node, i int, k *node) (walk bool)
//	// mapValue is called on the key's value: it fills v from k.
//	mapValue(w *walker, n *node, k, v *node)
//	mapPairEnd(w *walker, n *node)
//	mapClose(w *walker, n *node) bool
//	arrayOpen(w *walker, n *node) bool
//	// arrayElem is called on element i of an array of values that are
//	// not described.
//	arrayElem(w *walker, n *node, i int, e *node) bool
//	// arrayDescriptor is called on the descriptor of element i of an
//	// array of described values (the array's, replayed), then
//	// arrayDescribed on its value.
//	arrayDescriptor(w *walker, n *node, i int)
//	arrayDescribed(w *walker, n *node, i int, d desc, e *node) bool
//	arrayClose(w *walker, n *node) bool
//	// describedOpen is called on a described value's descriptor: it
//	// returns whether the walk is to walk the descriptor as a value,
//	// which it fills dn for.
//	describedOpen(w *walker, n *node, d desc, dn *node) (walk bool)
//	// describedValue is called on its value: it fills v.
//	describedValue(w *walker, n *node, d desc, v *node) bool
//	describedClose(w *walker, n *node) bool
//	// Runs of identical values: repeat reports whether the value the
//	// cursor is on repeats the ones before it at its level and is left
//	// out (the text sums such runs up; JSON leaves nothing out).
//	runStart(depth int) *run
//	repeat(w *walker, r *run, indent int) bool
//	runEnd(w *walker, r *run, indent int)
//	// ok reports whether the output can take more.
//	ok() bool
type sinks struct {
	text *textSink
	json *jsonSink
}

func (s sinks) primitive(w *walker, n *node) bool {
	if j := s.json; j != nil {
		return j.primitive(w, n)
	}
	return s.text.primitive(w, n)
}

func (s sinks) listOpen(w *walker, n *node) bool {
	if j := s.json; j != nil {
		return j.listOpen(w, n)
	}
	return s.text.listOpen(w, n)
}

func (s sinks) listElem(w *walker, n *node, i int, e *node) bool {
	if j := s.json; j != nil {
		return j.listElem(w, n, i, e)
	}
	return s.text.listElem(w, n, i, e)
}

func (s sinks) listClose(w *walker, n *node) bool {
	if j := s.json; j != nil {
		return j.listClose(w, n)
	}
	return s.text.listClose(w, n)
}

func (s sinks) mapOpen(w *walker, n *node) bool {
	if j := s.json; j != nil {
		return j.mapOpen(w, n)
	}
	return s.text.mapOpen(w, n)
}

func (s sinks) mapKey(w *walker, n *node, i int, k *node) (walk bool) {
	if j := s.json; j != nil {
		return j.mapKey(w, n, i, k)
	}
	return s.text.mapKey(w, n, i, k)
}

func (s sinks) mapValue(w *walker, n *node, k, v *node) {
	if j := s.json; j != nil {
		j.mapValue(w, n, k, v)
		return
	}
	s.text.mapValue(w, n, k, v)
}

func (s sinks) mapPairEnd(w *walker, n *node) {
	if j := s.json; j != nil {
		j.mapPairEnd(w, n)
		return
	}
	s.text.mapPairEnd(w, n)
}

func (s sinks) mapClose(w *walker, n *node) bool {
	if j := s.json; j != nil {
		return j.mapClose(w, n)
	}
	return s.text.mapClose(w, n)
}

func (s sinks) arrayOpen(w *walker, n *node) bool {
	if j := s.json; j != nil {
		return j.arrayOpen(w, n)
	}
	return s.text.arrayOpen(w, n)
}

func (s sinks) arrayElem(w *walker, n *node, i int, e *node) bool {
	if j := s.json; j != nil {
		return j.arrayElem(w, n, i, e)
	}
	return s.text.arrayElem(w, n, i, e)
}

func (s sinks) arrayDescriptor(w *walker, n *node, i int) {
	if j := s.json; j != nil {
		j.arrayDescriptor(w, n, i)
		return
	}
	s.text.arrayDescriptor(w, n, i)
}

func (s sinks) arrayDescribed(w *walker, n *node, i int, d desc, e *node) bool {
	if j := s.json; j != nil {
		return j.arrayDescribed(w, n, i, d, e)
	}
	return s.text.arrayDescribed(w, n, i, d, e)
}

func (s sinks) arrayClose(w *walker, n *node) bool {
	if j := s.json; j != nil {
		return j.arrayClose(w, n)
	}
	return s.text.arrayClose(w, n)
}

func (s sinks) describedOpen(w *walker, n *node, d desc, dn *node) (walk bool) {
	if j := s.json; j != nil {
		return j.describedOpen(w, n, d, dn)
	}
	return s.text.describedOpen(w, n, d, dn)
}

func (s sinks) describedValue(w *walker, n *node, d desc, v *node) bool {
	if j := s.json; j != nil {
		return j.describedValue(w, n, d, v)
	}
	return s.text.describedValue(w, n, d, v)
}

func (s sinks) describedClose(w *walker, n *node) bool {
	if j := s.json; j != nil {
		return j.describedClose(w, n)
	}
	return s.text.describedClose(w, n)
}

func (s sinks) runStart(depth int) *run {
	if j := s.json; j != nil {
		return j.runStart(depth)
	}
	return s.text.runStart(depth)
}

func (s sinks) repeat(w *walker, r *run, indent int) bool {
	if j := s.json; j != nil {
		return j.repeat(w, r, indent)
	}
	return s.text.repeat(w, r, indent)
}

func (s sinks) runEnd(w *walker, r *run, indent int) {
	if j := s.json; j != nil {
		j.runEnd(w, r, indent)
		return
	}
	s.text.runEnd(w, r, indent)
}

func (s sinks) ok() bool {
	if j := s.json; j != nil {
		return j.ok()
	}
	return s.text.ok()
}

// descOf reads the descriptor the cursor is on: a ulong or symbol the
// spec defines is known.
func descOf(c *stream.Cursor) desc {
	switch c.Kind() {
	case amqpsax.KindUlong:
		d := amqpsax.Descriptor(c.Uint())
		return desc{d, d.Name() != ""}
	case amqpsax.KindSymbol:
		d, ok := amqpsax.LookupDescriptor(c.Bytes())
		return desc{d, ok}
	}
	return desc{}
}

// newWalker returns a walker writing to out: JSON, typed unless plain,
// or text.
func newWalker(out *Out, json, plain bool) *walker {
	w := &walker{out: out}
	if json {
		w.s.json = &jsonSink{out: out, w: w, typed: !plain}
	} else {
		w.s.text = &textSink{out: out}
	}
	return w
}

// err returns the fault that stopped the walk: the output's, or the
// cursor's with Op "amqpdump" and its offset in the input.
func (w *walker) err() error {
	if err := w.out.err; err != nil {
		return err
	}
	return remap(w.c.Err(), w.segs)
}

// slot returns the node of the level below the value being walked, set
// to n.
func (w *walker) slot(n node) *node {
	for len(w.nodes) <= w.depth+1 {
		block := new([16]node) // (nodes never move: pointers to them stay good)
		w.nodes = slices.Grow(w.nodes, len(block))
		for i := range block {
			w.nodes = append(w.nodes, &block[i])
		}
	}
	p := w.nodes[w.depth+1]
	*p = n
	return p
}

// value walks the value the cursor is on, and everything in it; n is
// the slot of its level.
func (w *walker) value(n *node) bool {
	w.depth++
	var ok bool
	switch w.c.Kind() {
	case amqpsax.KindList:
		ok = w.list(n)
	case amqpsax.KindMap:
		ok = w.dict(n)
	case amqpsax.KindArray:
		ok = w.array(n)
	case amqpsax.KindDescribed:
		ok = w.described(n)
	default:
		ok = w.s.primitive(w, n) && w.c.Err() == nil
	}
	w.depth--
	return ok
}

// all walks every value of data, one after the other (at the top level,
// runs of identical values are summed up too).
func (w *walker) all(data []byte, segs *segments, indent int) bool {
	c := &w.c
	w.segs = segs
	c.Reset(data)
	r := w.s.runStart(0)
	for c.Next() {
		w.work++
		if c.Kind() != amqpsax.KindDescribed && w.s.repeat(w, r, indent) {
			continue
		}
		if !w.value(w.slot(node{at: c.Offset(), indent: indent})) {
			return false
		}
	}
	w.s.runEnd(w, r, indent)
	return c.Err() == nil && w.s.ok()
}

// one walks the first value of data (a performative: the payload after it
// is not read).
func (w *walker) one(data []byte, segs *segments, indent int) bool {
	c := &w.c
	w.segs = segs
	c.Reset(data)
	return c.Next() && w.value(w.slot(node{at: c.Offset(), indent: indent}))
}

// list walks a list (part 1 §1.6.22), its elements named when the list is
// a described type's.
func (w *walker) list(n *node) bool {
	c := &w.c
	if !w.s.listOpen(w, n) || !c.Enter() {
		return false
	}
	r := w.s.runStart(c.Depth())
	for i := 0; c.Next(); i++ {
		w.work++
		e := w.slot(node{at: c.Offset(), indent: n.indent + 1})
		if n.named {
			e.name, e.fieldOf, e.field, e.hasOf = fieldName(n.fields, i), n.fields, i, true
		}
		if e.name == "" && c.Kind() != amqpsax.KindDescribed && w.s.repeat(w, r, e.indent) {
			continue
		}
		if !w.s.listElem(w, n, i, e) || !w.value(e) {
			return false
		}
	}
	w.s.runEnd(w, r, n.indent+1)
	return c.Err() == nil && w.s.ok() && c.Exit() && w.s.listClose(w, n)
}

// dict walks a map (part 1 §1.6.23): its keys and values in turn.
func (w *walker) dict(n *node) bool {
	c := &w.c
	if !w.s.mapOpen(w, n) || !c.Enter() {
		return false
	}
	for i := 0; c.Next(); i++ { // a key
		w.work++
		k := w.slot(node{at: c.Offset(), indent: n.indent + 1})
		if w.s.mapKey(w, n, i, k) && !w.value(k) {
			return false
		}
		if !c.Next() { // its value: a map's count is even
			return false
		}
		w.work++
		v := k // the same slot: the key is done with (mapValue reads k first)
		w.s.mapValue(w, n, k, v)
		if !w.value(v) {
			return false
		}
		w.s.mapPairEnd(w, n)
	}
	return c.Err() == nil && w.s.ok() && c.Exit() && w.s.mapClose(w, n)
}

// array walks an array (part 1 §1.6.24). An element of an array of
// described values is entered: its descriptor (the array's, replayed),
// then its value, named by the first element's descriptor.
func (w *walker) array(n *node) bool {
	c := &w.c
	described := c.ElemKind() == amqpsax.KindDescribed
	if !w.s.arrayOpen(w, n) || !c.Enter() {
		return false
	}
	r := w.s.runStart(c.Depth())
	var d desc
	for i := 0; c.Next(); i++ {
		w.work++
		e := w.slot(node{at: c.Offset(), indent: n.indent + 1, elem: true})
		if w.s.repeat(w, r, e.indent) {
			continue
		}
		if !described {
			if !w.s.arrayElem(w, n, i, e) || !w.value(e) {
				return false
			}
			continue
		}
		if !c.Enter() || !c.Next() {
			return false
		}
		w.work++
		if i == 0 {
			d = descOf(c)
			if !d.known {
				d.d = 0
			}
		}
		w.s.arrayDescriptor(w, n, i)
		if !c.Next() {
			return false
		}
		w.work++
		e.at = c.Offset()
		if !w.s.arrayDescribed(w, n, i, d, e) || !w.value(e) || c.Next() || c.Err() != nil || !c.Exit() {
			return false
		}
	}
	w.s.runEnd(w, r, n.indent+1)
	return c.Err() == nil && w.s.ok() && c.Exit() && w.s.arrayClose(w, n)
}

// described walks a described value (part 1 §1.5): its descriptor, then
// its value, named when the descriptor is the spec's.
func (w *walker) described(n *node) bool {
	c := &w.c
	if !c.Enter() || !c.Next() {
		return false
	}
	w.work++
	var d desc
	if isPrimitive(c.Kind()) {
		d = descOf(c)
	}
	dn := w.slot(node{})
	if w.s.describedOpen(w, n, d, dn) && !w.value(dn) {
		return false
	}
	if !w.s.ok() || !c.Next() {
		return false
	}
	w.work++
	v := w.slot(node{at: c.Offset(), indent: n.indent + 1, fields: d.d, named: d.known && hasFields(d.d)})
	return w.s.describedValue(w, n, d, v) && w.value(v) && !c.Next() && c.Err() == nil && c.Exit() &&
		w.s.describedClose(w, n)
}
