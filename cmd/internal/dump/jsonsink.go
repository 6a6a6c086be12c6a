package dump

import (
	"encoding/hex"
	"strconv"

	"github.com/amqpsax/amqpsax"
)

// jsonSink writes the walk as JSON (see the package doc): each value with
// its AMQP type ({"type":"uint","value":7}), or, plain, as bare JSON
// values.
type jsonSink struct {
	out   *Out
	w     *walker
	typed bool
}

func (j *jsonSink) ok() bool { return j.w.c.Err() == nil && j.out.spill() }

func (j *jsonSink) put(s string) { j.out.buf = append(j.out.buf, s...) }

// typeOpen writes the start of a typed value's object: {"type":"list".
func (j *jsonSink) typeOpen(k amqpsax.Kind) {
	j.put(`{"type":`)
	j.out.buf = appendJSONString(j.out.buf, []byte(k.String()))
}

func (j *jsonSink) primitive(w *walker, n *node) bool {
	c, o := &w.c, j.out
	var name string
	if n.hasOf {
		name = enumName(n.fieldOf, n.field, c)
	}
	switch {
	case !j.typed && name != "":
		o.buf = appendJSONString(o.buf, []byte(name))
	case !j.typed || n.bare:
		o.buf = appendJSONPrimitive(o.buf, c)
	default:
		j.typeOpen(c.Kind())
		j.put(`,"value":`)
		o.buf = appendJSONPrimitive(o.buf, c)
		if name != "" {
			j.put(`,"name":`)
			o.buf = appendJSONString(o.buf, []byte(name))
		}
		j.put("}")
	}
	return j.ok()
}

// A list is an array, or the object of its fields when it is the value of
// a described type whose fields the spec names (fields past the named
// ones keyed by their index); plain, a described value's fields go into
// its own object (inline).
func (j *jsonSink) listOpen(w *walker, n *node) bool {
	switch {
	case n.inline:
	case n.named:
		j.put("{")
	case j.typed && !n.bare:
		j.typeOpen(amqpsax.KindList)
		j.put(`,"value":[`)
	default:
		j.put("[")
	}
	return true
}

func (j *jsonSink) listElem(w *walker, n *node, i int, e *node) bool {
	if i > 0 || n.inline {
		j.put(",")
	}
	if n.named || n.inline {
		if s := fieldName(n.fields, i); s != "" {
			j.out.buf = appendJSONString(j.out.buf, []byte(s))
		} else {
			j.put(`"`)
			j.out.buf = strconv.AppendInt(j.out.buf, int64(i), 10)
			j.put(`"`)
		}
		j.put(":")
	}
	return true
}

func (j *jsonSink) listClose(w *walker, n *node) bool {
	switch {
	case n.inline:
	case n.named:
		j.put("}")
	case j.typed && !n.bare:
		j.put("]}")
	default:
		j.put("]")
	}
	return j.ok()
}

// A map is, plain, an object: a string or symbol key is the member's
// name, a key of another primitive type its JSON text ("1", "true"), a
// compound or described key its encoding in hex ("0x…"). Typed, it is an
// array of [key, value] pairs, each typed.
func (j *jsonSink) mapOpen(w *walker, n *node) bool {
	switch {
	case !j.typed:
		j.put("{")
	case n.bare:
		j.put("[")
	default:
		j.typeOpen(amqpsax.KindMap)
		j.put(`,"value":[`)
	}
	return true
}

func (j *jsonSink) mapKey(w *walker, n *node, i int, k *node) bool {
	c, o := &w.c, j.out
	if i > 0 {
		j.put(",")
	}
	if j.typed {
		j.put("[")
		return true
	}
	switch kind := c.Kind(); {
	case kind == amqpsax.KindString || kind == amqpsax.KindSymbol:
		o.buf = appendJSONString(o.buf, c.Bytes())
	case isPrimitive(kind):
		var scratch [64]byte
		o.buf = appendJSONString(o.buf, appendJSONPrimitive(scratch[:0], c))
	default:
		j.put(`"0x`)
		o.buf = hex.AppendEncode(o.buf, c.Raw())
		j.put(`"`)
	}
	j.put(":")
	return false
}

func (j *jsonSink) mapValue(w *walker, n *node, k, v *node) {
	if j.typed {
		j.put(",")
	}
	*v = node{}
}

func (j *jsonSink) mapPairEnd(w *walker, n *node) {
	if j.typed {
		j.put("]")
	}
}

func (j *jsonSink) mapClose(w *walker, n *node) bool {
	switch {
	case !j.typed:
		j.put("}")
	case n.bare:
		j.put("]")
	default:
		j.put("]}")
	}
	return j.ok()
}

// An array is a JSON array; typed, {"type":"array","of":E,"value":[…]},
// its elements bare. An array of values described, whose descriptor is
// written once, in its constructor, is {"descriptor":D,"array":[…]}
// (typed: {"type":"array","of":"described","descriptor":D,
// "value-type":V,"value":[…]}): the descriptor once, then the elements'
// values (lists of named fields as objects), so that a long descriptor is
// not repeated for elements that take no bytes. The descriptor is its
// name when the spec defines it, else the ulong or the symbol, or null for
// one of another type (the cursor reads only those from an array's
// constructor).
func (j *jsonSink) arrayOpen(w *walker, n *node) bool {
	c, o := &w.c, j.out
	n.count = c.Count()
	described := c.ElemKind() == amqpsax.KindDescribed
	n.ofDescr = described
	if j.typed {
		j.typeOpen(amqpsax.KindArray)
		j.put(`,"of":`)
		o.buf = appendJSONString(o.buf, []byte(c.ElemKind().String()))
		if !described {
			j.put(`,"value":[`)
			return true
		}
		j.put(`,"descriptor":`)
	} else {
		if !described {
			j.put("[")
			return true
		}
		j.put(`{"descriptor":`)
	}
	d, sym, ok := c.Descriptor()
	switch {
	case ok && (sym == nil && d.Name() != "" || sym != nil && d != 0):
		o.buf = appendJSONString(o.buf, []byte(d.Name()))
	case ok && sym != nil && j.typed:
		j.put(`{"type":"symbol","value":`)
		o.buf = appendJSONString(o.buf, sym)
		j.put("}")
	case ok && sym != nil:
		o.buf = appendJSONString(o.buf, sym)
	case ok && j.typed:
		j.put(`{"type":"ulong","value":`)
		o.buf = strconv.AppendUint(o.buf, uint64(d), 10)
		j.put("}")
	case ok:
		o.buf = strconv.AppendUint(o.buf, uint64(d), 10)
	default:
		j.put("null")
	}
	if !j.typed {
		j.put(`,"array":[`)
	}
	return true
}

func (j *jsonSink) arrayElem(w *walker, n *node, i int, e *node) bool {
	if i > 0 {
		j.put(",")
	}
	e.bare = j.typed
	return true
}

func (j *jsonSink) arrayDescriptor(w *walker, n *node, i int) {}

func (j *jsonSink) arrayDescribed(w *walker, n *node, i int, d desc, e *node) bool {
	switch {
	case j.typed && i == 0:
		j.put(`,"value-type":`)
		j.out.buf = appendJSONString(j.out.buf, []byte(w.c.Kind().String()))
		j.put(`,"value":[`)
	case i > 0:
		j.put(",")
	}
	e.fields, e.named, e.bare = d.d, d.known && hasFields(d.d) && w.c.Kind() == amqpsax.KindList, j.typed
	return true
}

func (j *jsonSink) arrayClose(w *walker, n *node) bool {
	switch {
	case j.typed && n.count == 0 && n.ofDescr:
		j.put(`,"value":[]}`)
	case j.typed:
		j.put("]}")
	case n.ofDescr:
		j.put("]}")
	default:
		j.put("]")
	}
	return j.ok()
}

// A described value is an object: "descriptor" (the name of a descriptor
// the spec defines, else the descriptor as a value), then, when the
// descriptor names the fields of a list, the fields (plain: in the same
// object; typed: "fields"), otherwise "value".
func (j *jsonSink) describedOpen(w *walker, n *node, d desc, dn *node) bool {
	if j.typed {
		j.typeOpen(amqpsax.KindDescribed)
		j.put(`,"descriptor":`)
	} else {
		j.put(`{"descriptor":`)
	}
	if d.known {
		j.out.buf = appendJSONString(j.out.buf, []byte(d.d.Name()))
		return false
	}
	*dn = node{}
	return true
}

func (j *jsonSink) describedValue(w *walker, n *node, d desc, v *node) bool {
	switch {
	case v.named && w.c.Kind() == amqpsax.KindList && j.typed:
		j.put(`,"fields":`)
	case v.named && w.c.Kind() == amqpsax.KindList:
		v.inline = true
	default:
		v.named = false
		j.put(`,"value":`)
	}
	return true
}

func (j *jsonSink) describedClose(w *walker, n *node) bool {
	j.put("}")
	return j.ok()
}

func (j *jsonSink) runStart(depth int) *run                   { return nil }
func (j *jsonSink) repeat(w *walker, r *run, indent int) bool { return false }
func (j *jsonSink) runEnd(w *walker, r *run, indent int)      {}

// fields walks the value of the described value the cursor is on, whose
// descriptor is d: a list as the object of its fields, anything else as
// it is (a performative's "fields", a section's "value").
func (w *walker) fields(d amqpsax.Descriptor) bool {
	c := &w.c
	if !c.EnterValue() {
		return false
	}
	w.work += 2
	return w.value(w.slot(node{fields: d, named: c.Kind() == amqpsax.KindList})) && !c.Next() && c.Err() == nil && c.Exit()
}

// enterValue walks the value of the described value the cursor is on.
func (w *walker) enterValue() bool {
	c := &w.c
	if !c.EnterValue() {
		return false
	}
	w.work += 2
	return w.value(w.slot(node{})) && !c.Next() && c.Err() == nil && c.Exit()
}
