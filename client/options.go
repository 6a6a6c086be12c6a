package client

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/stream"
)

// symbolMap encodes m as an AMQP map of symbol keys (fields, annotations,
// an error's info: part 2 §2.8.13, part 3 §3.2.10), its values by
// message.Values.Any (so the Go types a message's properties take), its
// keys in sorted order; nil for an empty m.
func symbolMap(m map[string]any) (frame.Map, error) {
	if len(m) == 0 {
		return nil, nil
	}
	var vs message.Values
	e, err := vs.AnnotationsOf(m)
	if err != nil {
		return nil, err
	}
	b := encode.BeginMap(nil)
	n := 0
	for k, v := range e.All() {
		b = append(append(b, k.Raw()...), v.Raw()...)
		n++
	}
	return frame.Map(encode.EndMap(b, 0, n)), nil
}

// LinkFilter is one filter of a receiver's source (part 3 §3.5.8
// filter-set): a described value under a symbol key. NewSelectorFilter
// and NewLinkFilter make them; ReceiverOptions.Filters sends them.
type LinkFilter struct {
	name  string
	code  uint64
	value any
}

// The JMS selector filter of the AMQP filter registry, which Qpid
// brokers, ActiveMQ Artemis, RabbitMQ 4 and Azure Service Bus read.
const (
	selectorFilterName = "apache.org:selector-filter:string"
	selectorFilterCode = 0x0000468C00000004
)

// NewSelectorFilter is a JMS selector filter: an SQL-92 condition on a
// message's header, properties and application properties, such as
// "color = 'red' AND weight > 10".
func NewSelectorFilter(selector string) LinkFilter {
	return LinkFilter{name: selectorFilterName, code: selectorFilterCode, value: selector}
}

// NewLinkFilter is any filter: value, described by code, under the key
// name; a code of 0 describes it by name as a symbol instead, as
// go-amqp's NewLinkFilter does (RabbitMQ 4 reads its stream filters,
// such as NewLinkFilter("rabbitmq:stream-offset-spec", 0, int64(40)),
// only so). Event Hubs' offset filter is
// NewLinkFilter("apache.org:selector-filter:string", 0x0000468C00000004,
// "amqp.annotation.x-opt-offset > '100'"); value takes the Go types a
// message's properties take.
func NewLinkFilter(name string, code uint64, value any) LinkFilter {
	return LinkFilter{name: name, code: code, value: value}
}

// filterSet encodes fs as a source's filter-set: a map of symbol keys to
// described values; nil for none.
func filterSet(fs []LinkFilter) (frame.Map, error) {
	if len(fs) == 0 {
		return nil, nil
	}
	var vs message.Values
	b := encode.BeginMap(nil)
	for _, f := range fs {
		v, err := vs.Any(f.value)
		if err != nil {
			return nil, err
		}
		b = encode.AppendSymbol(b, f.name)
		if f.code == 0 {
			b = encode.AppendSymbol(encode.AppendDescribed(b), f.name)
		} else {
			b = encode.AppendUlong(encode.AppendDescribed(b), f.code)
		}
		b = append(b, v.Raw()...)
	}
	return frame.Map(encode.EndMap(b, 0, len(fs))), nil
}

// filterValue is the value of the filter under name in an encoded
// filter-set (the described value's own), or nil.
func filterValue(set frame.Map, name string) any {
	var c stream.Cursor
	c.Reset(set)
	if !c.Next() || c.Kind() != amqpsax.KindMap || !c.Enter() || !c.SeekKey(name) {
		return nil
	}
	v, err := c.Any()
	if err != nil {
		return nil
	}
	if d, ok := v.(stream.Described); ok {
		return d.Value
	}
	return v
}

// peerFields is what the peer's open or attach said of itself, as the
// client hands it back (Properties, OfferedCapabilities,
// DesiredCapabilities): converted once, when it arrived, and never
// changed after, so the same values go to every caller.
type peerFields struct {
	props            map[string]any
	offered, desired []string
}

// peerOf converts the peer's fields.
func peerOf(props frame.Map, offered, desired frame.Symbols) peerFields {
	return peerFields{props: anyMap(props), offered: symbolStrings(offered), desired: symbolStrings(desired)}
}

// symbolStrings is a field of symbols as strings (nil for none).
func symbolStrings(s frame.Symbols) []string {
	if s.Len() == 0 {
		return nil
	}
	out := make([]string, 0, min(s.Len(), 64))
	for sym := range s.All() {
		out = append(out, string(sym))
	}
	return out
}

// anyMap decodes an encoded map of string or symbol keys (fields, an
// error's info) as Go values (stream.Cursor.Any's types); nil for none,
// or for a map that does not decode.
func anyMap(m frame.Map) map[string]any {
	if len(m) == 0 {
		return nil
	}
	var c stream.Cursor
	c.Reset(m)
	if !c.Next() || c.Kind() != amqpsax.KindMap {
		return nil
	}
	out := make(map[string]any, min(c.Count(), 64))
	if !c.Enter() {
		return nil
	}
	for c.Next() {
		if k := c.Kind(); k != amqpsax.KindString && k != amqpsax.KindSymbol {
			return nil
		}
		key := string(c.Bytes())
		if !c.Next() {
			return nil
		}
		v, err := c.Any()
		if err != nil {
			return nil
		}
		if _, dup := out[key]; !dup { // the first of equal keys counts
			out[key] = v
		}
	}
	if c.Err() != nil {
		return nil
	}
	return out
}
