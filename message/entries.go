package message

import (
	"encoding/binary"
	"iter"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/stream"
)

// Field is one entry of a map section (annotations, application
// properties, footer): its key and its value, each a stream.Value, read
// with the Value's getters.
type Field struct {
	Key, Value stream.Value
}

// Entries are the entries of a map section — delivery or message
// annotations, application properties, footer — in order: the key and
// value of each as stream.Values, found by key with Get and GetKey and
// walked in order with All. The zero Entries is an absent section.
//
// After [Message.Decode] they view the section's map as encoded, in the
// Message's copy of the input: decoding neither builds nor allocates
// anything per entry, and Append copies the map as it came, byte for
// byte. To build a message, [EntriesOf] makes Entries of Fields, and
// [Values.PropertiesOf] and [Values.AnnotationsOf] Entries that view a map
// they encoded from a Go map.
type Entries struct {
	raw    []byte  // decoded or encoded by Values: the map (constructor, size, count, entries), well-formed
	fields []Field // built
	built  bool    // built: present, though it may have no fields
}

// EntriesOf returns Entries holding fields (not a copy): a present
// section, empty when there are none.
func EntriesOf(fields ...Field) Entries { return Entries{fields: fields, built: true} }

// Present reports whether the section is present (it may be empty).
func (e Entries) Present() bool { return e.raw != nil || e.built }

// Len returns the number of entries.
func (e Entries) Len() int {
	switch {
	case e.raw == nil:
		return len(e.fields)
	case e.raw[0] == byte(amqpsax.CodeMap8):
		return int(e.raw[2]) / 2
	}
	return int(binary.BigEndian.Uint32(e.raw[5:])) / 2
}

// All yields every entry's key and value, in order. It does not
// allocate.
func (e Entries) All() iter.Seq2[stream.Value, stream.Value] {
	return func(yield func(k, v stream.Value) bool) {
		if e.raw == nil {
			for i := range e.fields {
				if !yield(e.fields[i].Key, e.fields[i].Value) {
					return
				}
			}
			return
		}
		var c stream.Cursor
		if !e.open(&c) {
			return
		}
		for c.Next() {
			k := c.Value()
			if !c.Next() || !yield(k, c.Value()) {
				return
			}
		}
	}
}

// AppendFields appends every entry to dst, as Fields, and returns the
// extended slice: to index the entries, or to change them and build
// again with EntriesOf.
func (e Entries) AppendFields(dst []Field) []Field {
	for k, v := range e.All() {
		dst = append(dst, Field{k, v})
	}
	return dst
}

// open makes c read the decoded map's entries.
func (e Entries) open(c *stream.Cursor) bool {
	c.Reset(e.raw)
	return c.Next() && c.Enter()
}

// Get returns the value of the first entry whose key is a string or a
// symbol equal to key, the zero Value (Kind KindInvalid) when there is
// none. Other entries' values are skipped, not read. It does not
// allocate.
func (e Entries) Get(key string) stream.Value {
	if e.raw != nil {
		var c stream.Cursor
		if e.open(&c) && c.SeekKey(key) {
			return c.Value()
		}
		return stream.Value{}
	}
	for i := range e.fields {
		k := &e.fields[i].Key
		if kk := k.Kind(); (kk == amqpsax.KindString || kk == amqpsax.KindSymbol) && string(k.Bytes()) == key {
			return e.fields[i].Value
		}
	}
	return stream.Value{}
}

// GetKey is Get for any [Key]: a symbol or string, or a ulong (a long
// key of the same value matches too, as for [LookupKey]).
func (e Entries) GetKey(key Key) stream.Value {
	if !key.isUlong {
		return e.Get(key.name)
	}
	if e.raw != nil {
		var c stream.Cursor
		if e.open(&c) && c.SeekUlongKey(key.ulong) {
			return c.Value()
		}
		return stream.Value{}
	}
	for i := range e.fields {
		k := &e.fields[i].Key
		switch k.Kind() {
		case amqpsax.KindUlong:
			if k.Uint() == key.ulong {
				return e.fields[i].Value
			}
		case amqpsax.KindLong:
			if n := k.Int(); n >= 0 && uint64(n) == key.ulong {
				return e.fields[i].Value
			}
		}
	}
	return stream.Value{}
}
