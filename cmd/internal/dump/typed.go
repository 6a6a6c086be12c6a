package dump

import (
	"strconv"

	"github.com/amqpsax/amqpsax"
)

// typedValue writes the value the cursor is on with its AMQP type (see
// the package doc): {"type":"uint","value":7}. bare writes only what
// would be the "value" member: an array's elements share the array's
// type, given once. When the value is field i of the composite of (named)
// and the field is of an enumerated type, the object also has "name".
func (j *jsonw) typedValue(of amqpsax.Descriptor, i int, named, bare bool) bool {
	c, o := &j.c, j.out
	k := c.Kind()
	// An array's elements share its type: bare, but for arrays (each has
	// an element type of its own). Even an empty list is "[]": an array of
	// thousands of zero-width lists in a few bytes stays within a bound of
	// output per input byte.
	bare = bare && k != amqpsax.KindArray
	if !bare {
		o.buf = append(o.buf, `{"type":`...)
		o.buf = appendJSONString(o.buf, []byte(k.String()))
		switch k {
		case amqpsax.KindArray:
			o.buf = append(o.buf, `,"of":`...)
			o.buf = appendJSONString(o.buf, []byte(c.ArrayElem().String()))
			if c.ArrayElem() == amqpsax.KindDescribed {
				return j.typedDescribedArray()
			}
		case amqpsax.KindDescribed:
			return j.typedDescribed()
		}
		o.buf = append(o.buf, `,"value":`...)
	}
	var ok bool
	switch k {
	case amqpsax.KindList:
		ok = j.typedList()
	case amqpsax.KindMap:
		ok = j.typedMap()
	case amqpsax.KindArray:
		ok = j.typedArray()
	default:
		o.buf = appendJSONPrimitive(o.buf, c)
		if named && !bare {
			if s := enumName(of, i, c); s != "" {
				o.buf = append(o.buf, `,"name":`...)
				o.buf = appendJSONString(o.buf, []byte(s))
			}
		}
		ok = j.ok()
	}
	if !ok {
		return false
	}
	if !bare {
		o.buf = append(o.buf, '}')
	}
	return true
}

// typedList writes a list's elements as a JSON array, each typed.
func (j *jsonw) typedList() bool {
	c, o := &j.c, j.out
	if !c.Enter() {
		return false
	}
	o.buf = append(o.buf, '[')
	for i := 0; c.Next(); i++ {
		j.work++
		if i > 0 {
			o.buf = append(o.buf, ',')
		}
		if !j.typedValue(0, 0, false, false) {
			return false
		}
	}
	o.buf = append(o.buf, ']')
	return c.Err() == nil && c.Exit() && j.ok()
}

// typedMap writes a map's pairs as a JSON array of [key, value] arrays,
// each typed: keys of any type keep their type.
func (j *jsonw) typedMap() bool {
	c, o := &j.c, j.out
	if !c.Enter() {
		return false
	}
	o.buf = append(o.buf, '[')
	for i := 0; c.Next(); i++ {
		j.work++
		if i > 0 {
			o.buf = append(o.buf, ',')
		}
		o.buf = append(o.buf, '[')
		if !j.typedValue(0, 0, false, false) {
			return false
		}
		o.buf = append(o.buf, ',')
		if !c.Next() {
			return false
		}
		j.work++
		if !j.typedValue(0, 0, false, false) {
			return false
		}
		o.buf = append(o.buf, ']')
	}
	o.buf = append(o.buf, ']')
	return c.Err() == nil && c.Exit() && j.ok()
}

// typedArray writes an array's elements bare: their type is the array's
// "of" (an element that is an array keeps its type, and its own "of").
func (j *jsonw) typedArray() bool {
	c, o := &j.c, j.out
	if !c.Enter() {
		return false
	}
	o.buf = append(o.buf, '[')
	for i := 0; c.Next(); i++ {
		j.work++
		if i > 0 {
			o.buf = append(o.buf, ',')
		}
		if !j.typedValue(0, 0, false, true) {
			return false
		}
	}
	o.buf = append(o.buf, ']')
	return c.Err() == nil && c.Exit() && j.ok()
}

// typedDescribedArray writes the rest of an array of described values,
// after its "of": the descriptor once ("descriptor"), the type of the
// elements' values ("value-type") and "value", the elements' values bare
// (a list of named fields as the object of its fields).
func (j *jsonw) typedDescribedArray() bool {
	c, o := &j.c, j.out
	d, sym, ok := c.Descriptor()
	named := false
	o.buf = append(o.buf, `,"descriptor":`...)
	switch {
	case ok && (sym == nil && d.Name() != "" || sym != nil && d != 0):
		o.buf = appendJSONString(o.buf, []byte(d.Name()))
		named = hasFields(d)
	case ok && sym != nil:
		o.buf = append(o.buf, `{"type":"symbol","value":`...)
		o.buf = appendJSONString(o.buf, sym)
		o.buf = append(o.buf, '}')
	case ok:
		o.buf = append(o.buf, `{"type":"ulong","value":`...)
		o.buf = strconv.AppendUint(o.buf, uint64(d), 10)
		o.buf = append(o.buf, '}')
	default:
		o.buf = append(o.buf, "null"...)
	}
	if !c.Enter() {
		return false
	}
	n := 0
	for i := 0; c.Next(); i++ {
		j.work++
		if !c.EnterValue() {
			return false
		}
		j.work += 2
		if i == 0 {
			o.buf = append(o.buf, `,"value-type":`...)
			o.buf = appendJSONString(o.buf, []byte(c.Kind().String()))
			o.buf = append(o.buf, `,"value":[`...)
		} else {
			o.buf = append(o.buf, ',')
		}
		var ok bool
		if named && c.Kind() == amqpsax.KindList {
			ok = j.list(d, true)
		} else {
			ok = j.typedValue(0, 0, false, true)
		}
		if !ok || c.Next() || c.Err() != nil || !c.Exit() {
			return false
		}
		n++
	}
	if n == 0 {
		o.buf = append(o.buf, `,"value":[`...)
	}
	o.buf = append(o.buf, "]}"...)
	return c.Err() == nil && c.Exit() && j.ok()
}

// typedDescribed writes the rest of a described value's object, after
// its "type": "descriptor" (the name of a descriptor the spec defines,
// else the descriptor typed), then "fields" (the object of its named
// fields, each typed) for a list the spec names the fields of, or
// "value" (typed).
func (j *jsonw) typedDescribed() bool {
	c, o := &j.c, j.out
	if !c.Enter() || !c.Next() {
		return false
	}
	j.work++
	o.buf = append(o.buf, `,"descriptor":`...)
	d, known := j.descriptor()
	if !known && !j.typedValue(0, 0, false, false) {
		return false
	}
	if !c.Next() {
		return false
	}
	j.work++
	if known && hasFields(d) && c.Kind() == amqpsax.KindList {
		o.buf = append(o.buf, `,"fields":`...)
		if !j.list(d, true) {
			return false
		}
	} else {
		o.buf = append(o.buf, `,"value":`...)
		if !j.typedValue(0, 0, false, false) {
			return false
		}
	}
	o.buf = append(o.buf, '}')
	return !c.Next() && c.Err() == nil && c.Exit() && j.ok()
}
