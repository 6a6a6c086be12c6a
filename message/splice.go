package message

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
)

// Entry is an annotation to set: its key (written as a symbol, as the
// spec asks of annotation keys) and its value, already encoded (for
// example encode.AppendString(nil, "eu-west")).
type Entry struct {
	Key   string
	Value []byte
}

// Edit changes a map section. Entries whose key (string or symbol) is in
// Remove are dropped; each entry of Set replaces the value of the entry
// with its key, in place, or is added after the existing entries.
type Edit struct {
	Set    []Entry
	Remove []string
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

// Append appends to dst the message s was scanned from, with the changes
// ch applies to its header, delivery annotations and message annotations.
// The bare message (properties, application properties, body) and the
// footer are copied byte for byte, never decoded: signatures and checksums
// over them stay valid. Sections the changes do not touch are copied as
// they are. With capacity in dst it does not allocate.
func Append(dst []byte, s Sections, ch *Changes) ([]byte, error) {
	var none Changes
	if ch == nil {
		ch = &none
	}
	if ch.Header != nil {
		dst = AppendHeader(dst, *ch.Header)
	} else {
		dst = append(dst, s.Header...)
	}
	var err error
	if dst, err = appendMapSection(dst, amqpsax.DescriptorDeliveryAnnotations, s.DeliveryAnnotations, &ch.DeliveryAnnotations); err != nil {
		return dst, err
	}
	if dst, err = appendMapSection(dst, amqpsax.DescriptorMessageAnnotations, s.MessageAnnotations, &ch.MessageAnnotations); err != nil {
		return dst, err
	}
	dst = append(dst, s.Bare...)
	if !s.FooterFirst { // else Bare holds the footer
		dst = append(dst, s.Footer...)
	}
	return dst, nil
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
		it, err := openSection(sec, amqpsax.KindMap)
		if err != nil {
			return dst[:start], err
		}
		for {
			k, ok, err := it.next()
			if err != nil {
				return dst[:start], err
			}
			if !ok {
				break
			}
			v, _, err := it.next()
			if err != nil {
				return dst[:start], err
			}
			if inRemove(sec, k, e.Remove) {
				continue
			}
			dst = append(dst, sec[k.start:k.end]...)
			if i := inSet(sec, k, e.Set); i >= 0 {
				dst = append(dst, e.Set[i].Value...)
			} else {
				dst = append(dst, sec[v.start:v.end]...)
			}
			pairs++
		}
	}
	for i := range e.Set {
		if sec != nil && !removed(e.Set[i].Key, e.Remove) {
			if v, _ := Lookup(sec, e.Set[i].Key); v != nil {
				continue // replaced in place above
			}
		}
		dst = encode.AppendSymbol(dst, e.Set[i].Key)
		dst = append(dst, e.Set[i].Value...)
		pairs++
	}
	if pairs == 0 {
		return dst[:start], nil
	}
	return encode.EndMap(dst, ms, pairs), nil
}

func inRemove(data []byte, k val, keys []string) bool {
	for _, key := range keys {
		if keyIs(data, k, key) {
			return true
		}
	}
	return false
}

func inSet(data []byte, k val, set []Entry) int {
	for i := range set {
		if keyIs(data, k, set[i].Key) {
			return i
		}
	}
	return -1
}

func removed(key string, keys []string) bool {
	for _, k := range keys {
		if k == key {
			return true
		}
	}
	return false
}
