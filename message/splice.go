package message

import (
	"errors"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/stream"
)

// Key is a key of an annotations or properties map: a symbol or string,
// or a ulong (annotation keys are symbols or ulongs, part 3 §3.2.10).
// Make one with Symbol or Ulong.
type Key struct {
	name    string
	ulong   uint64
	isUlong bool
}

// SymbolKey is the key named s. Append writes it as a symbol; Lookup and
// Remove match a string or a symbol of that name.
func SymbolKey(s string) Key { return Key{name: s} }

// UlongKey is the ulong key n.
func UlongKey(n uint64) Key { return Key{ulong: n, isUlong: true} }

// String returns the key's name, or its number in decimal.
func (k Key) String() string {
	if k.isUlong {
		var b [20]byte
		i := len(b)
		n := k.ulong
		for {
			i--
			b[i] = byte('0' + n%10)
			if n /= 10; n == 0 {
				break
			}
		}
		return string(b[i:])
	}
	return k.name
}

// matches reports whether the encoded key at the cursor is k.
func (k Key) matches(c *stream.Cursor) bool {
	switch c.Kind() {
	case amqpsax.KindString, amqpsax.KindSymbol:
		return !k.isUlong && string(c.Bytes()) == k.name
	case amqpsax.KindUlong:
		return k.isUlong && c.Uint() == k.ulong
	case amqpsax.KindLong: // go-amqp's integer keys (see stream.Cursor.SeekUlongKey)
		return k.isUlong && c.Int() >= 0 && uint64(c.Int()) == k.ulong
	}
	return false
}

// append writes k: a symbol or a ulong.
func (k Key) append(b []byte) []byte {
	if k.isUlong {
		return encode.AppendUlong(b, k.ulong)
	}
	return encode.AppendSymbol(b, k.name)
}

// Entry is an annotation to set: its key and its value, already encoded
// (for example encode.AppendString(nil, "eu-west")): exactly one
// well-formed AMQP value, which Append checks.
type Entry struct {
	Key   Key
	Value []byte
}

// Edit changes a map section. Entries whose key is in Remove are dropped;
// each entry of Set replaces the value of the entry with its key, in
// place, or is added after the existing entries.
type Edit struct {
	Set    []Entry
	Remove []Key
}

func (e *Edit) empty() bool { return len(e.Set) == 0 && len(e.Remove) == 0 }

// Changes says what Append changes in a message; the zero Changes changes
// nothing.
type Changes struct {
	// Header, when not nil, replaces the header section (for example with
	// DeliveryCount incremented). A header of all defaults is still
	// written, as list0.
	Header *Header
	// Edits of the annotations sections. A section that an edit leaves
	// empty is left out; one that an edit adds to is created.
	DeliveryAnnotations, MessageAnnotations Edit
}

// Append appends to dst the message s was scanned from, in the spec's
// section order, with the changes ch applies to its header, delivery
// annotations and message annotations. The bare message (properties,
// application properties, body) and the footer are copied byte for byte,
// never decoded: signatures and checksums over them stay valid. Sections
// the changes do not touch are copied as they are.
//
// Every value in ch must be exactly one well-formed AMQP value (length
// fields and nesting checked as the decoders check them): anything else —
// nothing, an undefined format code, two values, a truncated one — is an
// *amqpsax.Error with Op "message/edit" and the offset in that value, and
// then nothing is appended: dst comes back as it was. With capacity in
// dst it does not allocate.
func Append(dst []byte, s Sections, ch *Changes) ([]byte, error) {
	var none Changes
	if ch == nil {
		ch = &none
	}
	for _, e := range [...]*Edit{&ch.DeliveryAnnotations, &ch.MessageAnnotations} {
		for i := range e.Set {
			if err := checkValue(e.Set[i].Value); err != nil {
				return dst, err
			}
		}
	}
	start := len(dst)
	if ch.Header != nil {
		dst = AppendHeader(dst, *ch.Header)
	} else {
		dst = append(dst, s.Header...)
	}
	var err error
	if dst, err = appendMapSection(dst, amqpsax.DescriptorDeliveryAnnotations, s.DeliveryAnnotations, &ch.DeliveryAnnotations); err != nil {
		return dst[:start], err
	}
	if dst, err = appendMapSection(dst, amqpsax.DescriptorMessageAnnotations, s.MessageAnnotations, &ch.MessageAnnotations); err != nil {
		return dst[:start], err
	}
	if s.Bare != nil {
		dst = append(dst, s.Bare...)
	} else {
		dst = append(dst, s.Properties...)
		dst = append(dst, s.ApplicationProperties...)
		dst = append(dst, s.Body...)
	}
	dst = append(dst, s.Footer...)
	return dst, nil
}

// checkValue checks that v is exactly one well-formed encoded value.
func checkValue(v []byte) error {
	if _, err := stream.ParseValue(v); err != nil {
		return relabelEdit(err)
	}
	return nil
}

// relabelEdit gives an error about a value of an edit the Op
// "message/edit".
func relabelEdit(err error) error {
	var e *amqpsax.Error
	if !errors.As(err, &e) {
		return err
	}
	c := *e
	c.Op = "message/edit"
	return &c
}

// appendMapSection appends the map section sec (nil when absent) with the
// edit e applied, under descriptor d.
func appendMapSection(dst []byte, d amqpsax.Descriptor, sec []byte, e *Edit) ([]byte, error) {
	if e.empty() {
		return append(dst, sec...), nil
	}
	start := len(dst)
	dst = append(dst, byte(amqpsax.CodeDescribed), byte(amqpsax.CodeSmallUlong), byte(d))
	ms := len(dst)
	dst = encode.BeginMap(dst)
	pairs := 0
	if sec != nil {
		r, _ := rankOf(d)
		var c stream.Cursor
		if err := open(&c, sec, r, amqpsax.KindMap); err != nil {
			return dst[:start], err
		}
		for c.Next() { // a key
			removed, set := inRemove(&c, e.Remove), inSet(&c, e.Set)
			key := c.Raw()
			if !c.Next() { // its value
				break
			}
			if removed {
				continue
			}
			dst = append(dst, key...)
			if set >= 0 {
				dst = append(dst, e.Set[set].Value...)
			} else {
				dst = append(dst, c.Raw()...)
			}
			pairs++
		}
		if c.Err() != nil {
			return dst[:start], relabel(c.Err(), r)
		}
	}
	for i := range e.Set {
		if sec != nil && !removedKey(e.Set[i].Key, e.Remove) {
			if v, _ := LookupKey(sec, e.Set[i].Key); v.Kind() != amqpsax.KindInvalid {
				continue // replaced in place above
			}
		}
		dst = e.Set[i].Key.append(dst)
		dst = append(dst, e.Set[i].Value...)
		pairs++
	}
	if pairs == 0 {
		return dst[:start], nil
	}
	return encode.EndMap(dst, ms, pairs), nil
}

func inRemove(c *stream.Cursor, keys []Key) bool {
	for _, k := range keys {
		if k.matches(c) {
			return true
		}
	}
	return false
}

func inSet(c *stream.Cursor, set []Entry) int {
	for i := range set {
		if set[i].Key.matches(c) {
			return i
		}
	}
	return -1
}

func removedKey(key Key, keys []Key) bool {
	for _, k := range keys {
		if k == key {
			return true
		}
	}
	return false
}
