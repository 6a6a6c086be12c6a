package broker

import (
	"bytes"
	"strings"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/broker/internal/selector"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/stream"
)

// This file is a consumer's source filters (part 3 §3.5.8, filter-set):
// the ones the broker applies, read from a source's filter map once at
// attach, and matched against each message's encoded sections.
//
//   - apache.org:selector-filter:string (0x0000468C00000004): a JMS
//     message selector (broker/internal/selector), as Qpid JMS, Qpid
//     Proton's Selector, Azure/go-amqp's NewSelectorFilter, ActiveMQ
//     Artemis and Azure Service Bus use it;
//   - apache.org:no-local-filter:list (0x0000468C00000003): no message
//     sent on the consumer's own connection;
//   - amqp:properties-filter (0x173) and amqp:application-properties-filter
//     (0x174), the AMQP Filter Expressions that RabbitMQ 4.1 takes: every
//     field named must equal the message's (a string value "&p:x" matches
//     a prefix x, "&s:x" a suffix, "&&" stands for a literal "&").
//
// Any other filter is not applied, and so left out of the answer's
// source, as part 3 §3.5.8 asks of a node (a filter echoed back claims it
// is applied); a consumer that lists the filter's descriptor among its
// desired capabilities requires it, and is refused with
// amqp:not-implemented.

// Descriptors of the filters the broker applies.
const (
	descSelector  amqpsax.Descriptor = 0x0000468C00000004
	descNoLocal   amqpsax.Descriptor = 0x0000468C00000003
	descPropsFilt amqpsax.Descriptor = 0x173
	descAppFilt   amqpsax.Descriptor = 0x174
)

var filterNames = map[string]amqpsax.Descriptor{
	"apache.org:selector-filter:string":  descSelector,
	"apache.org:no-local-filter:list":    descNoLocal,
	"amqp:properties-filter":             descPropsFilt,
	"amqp:application-properties-filter": descAppFilt,
}

// sourceFilter is what a consumer's filters ask of a message; the zero
// value takes every message.
type sourceFilter struct {
	sel     *selector.Selector
	noLocal bool
	props   []fieldMatch // of the properties section
	app     []fieldMatch // of the application-properties section
	// set is the filter set of the filters above as the source gave
	// them (the answer's): what a shared subscription's receivers must
	// agree on (sameFilters).
	set []byte
}

// fieldMatch is one entry of a properties or application-properties
// filter: the field and the value it must have.
type fieldMatch struct {
	key    string
	want   stream.Value
	mode   byte   // 0 equal, 'p' prefix, 's' suffix (strings only)
	affix  []byte // the prefix or suffix
	strict bool   // want is a string: compare as strings
}

// any reports a filter that looks at messages.
func (f *sourceFilter) any() bool {
	return f.sel != nil || f.noLocal || len(f.props) > 0 || len(f.app) > 0
}

// parseFilters reads a source's filter set: the filters the broker
// applies, and the answer's filter set holding those entries alone (nil
// for none). A filter it applies that does not parse refuses the link
// with amqp:invalid-field; one it does not apply, listed by its
// descriptor's name in desired (the link's desired capabilities),
// refuses it with amqp:not-implemented.
func parseFilters(set frame.Map, desired frame.Symbols) (f sourceFilter, answer []byte, refuse *engine.Error) {
	if len(set) == 0 {
		return f, nil, nil
	}
	start := -1
	pairs := 0
	for k, v := range set.All() {
		var c stream.Cursor
		c.Reset(v)
		if !c.Next() || c.Kind() != amqpsax.KindDescribed {
			return f, nil, engine.NewError(frame.CondInvalidField, "filter "+filterKey(k)+": not a described value")
		}
		d, sym, _ := c.Descriptor()
		if sym != nil {
			d = filterNames[string(sym)]
		}
		if !c.Enter() || !c.Next() || !c.Next() {
			return f, nil, engine.NewError(frame.CondInvalidField, "filter "+filterKey(k)+": malformed")
		}
		val := c.Value()
		var err *engine.Error
		switch d {
		case descSelector:
			if val.Kind() != amqpsax.KindString {
				err = engine.NewError(frame.CondInvalidField, "selector filter "+filterKey(k)+": a string expected")
				break
			}
			sel, perr := selector.Parse(string(val.Bytes()))
			if perr != nil {
				err = engine.NewError(frame.CondInvalidField, "selector filter "+filterKey(k)+": "+perr.Error())
				break
			}
			f.sel = sel
		case descNoLocal:
			f.noLocal = true
		case descPropsFilt, descAppFilt:
			m, perr := parseFieldMatches(val, d == descPropsFilt)
			if perr != "" {
				err = engine.NewError(frame.CondInvalidField, "filter "+filterKey(k)+": "+perr)
				break
			}
			if d == descPropsFilt {
				f.props = append(f.props, m...)
			} else {
				f.app = append(f.app, m...)
			}
		default:
			if name := filterDescName(d, sym); name != "" && desired.Contains(name) {
				return sourceFilter{}, nil, engine.NewError(frame.CondNotImplemented, "filter "+filterKey(k)+" ("+name+") is not supported")
			}
			continue
		}
		if err != nil {
			return sourceFilter{}, nil, err
		}
		if start < 0 {
			answer = encode.BeginMap(answer)
			start = 0
		}
		answer = append(answer, k...)
		answer = append(answer, v...)
		pairs++
	}
	if start >= 0 {
		answer = encode.EndMap(answer, start, pairs)
	}
	f.set = answer
	return f, answer, nil
}

// sameFilters reports that a and b (nil: none) are the same filters: the
// same entries of the filter set, in the same order, encoded alike.
func sameFilters(a, b *sourceFilter) bool {
	if a == nil || b == nil {
		return a == b
	}
	return bytes.Equal(a.set, b.set)
}

// filterKey is a filter's key for an error text.
func filterKey(k []byte) string {
	var c stream.Cursor
	c.Reset(k)
	if c.Next() && (c.Kind() == amqpsax.KindSymbol || c.Kind() == amqpsax.KindString) {
		return strings.ToValidUTF8(string(c.Bytes()), "?")
	}
	return "(not a symbol)"
}

// filterDescName names a filter's descriptor as a capability would.
func filterDescName(d amqpsax.Descriptor, sym []byte) string {
	if sym != nil {
		return string(sym)
	}
	for name, code := range filterNames {
		if code == d {
			return name
		}
	}
	return ""
}

// propertyFields are the properties section's fields a properties filter
// may name (part 3 §3.2.4).
var propertyFields = map[string]bool{
	"message-id": true, "user-id": true, "to": true, "subject": true, "reply-to": true,
	"correlation-id": true, "content-type": true, "content-encoding": true,
	"absolute-expiry-time": true, "creation-time": true, "group-id": true,
	"group-sequence": true, "reply-to-group-id": true,
}

// parseFieldMatches reads a properties or application-properties filter's
// map; it returns a description of what is wrong, or "".
func parseFieldMatches(v stream.Value, props bool) ([]fieldMatch, string) {
	if v.Kind() != amqpsax.KindMap {
		return nil, "a map expected"
	}
	var c stream.Cursor
	c.Reset(v.Raw())
	c.Next()
	c.Enter()
	var out []fieldMatch
	for c.Next() {
		if c.Kind() != amqpsax.KindSymbol && c.Kind() != amqpsax.KindString {
			return nil, "a key that is no symbol or string"
		}
		key := string(c.Bytes())
		if props && !propertyFields[key] {
			return nil, "no properties field " + strings.ToValidUTF8(key, "?")
		}
		if !c.Next() {
			return nil, "a key without a value"
		}
		m := fieldMatch{key: key, want: c.Value()}
		if k := m.want.Kind(); k == amqpsax.KindString || k == amqpsax.KindSymbol {
			m.strict = true
			b := m.want.Bytes()
			switch {
			case bytes.HasPrefix(b, []byte("&p:")):
				m.mode, m.affix = 'p', b[3:]
			case bytes.HasPrefix(b, []byte("&s:")):
				m.mode, m.affix = 's', b[3:]
			case bytes.HasPrefix(b, []byte("&&")):
				m.affix = b[1:]
			default:
				m.affix = b
			}
		}
		out = append(out, m)
	}
	if c.Err() != nil {
		return nil, c.Err().Error()
	}
	return out, ""
}

// match reports whether the consumer takes the message whose sections
// are secs, sent on the connection whose id (conn.id) is from (the
// consumer's own is own).
func (f *sourceFilter) match(secs *message.Sections, from, own uint64) bool {
	if f.noLocal && from != 0 && from == own {
		return false
	}
	for i := range f.app {
		v, err := message.Lookup(secs.ApplicationProperties, f.app[i].key)
		if err != nil || !f.app[i].matches(v) {
			return false
		}
	}
	if len(f.props) > 0 {
		p, err := message.ParseProperties(secs.Properties)
		if err != nil {
			return false
		}
		for i := range f.props {
			if !f.props[i].matchesProperty(&p) {
				return false
			}
		}
	}
	if f.sel != nil {
		ok, err := f.sel.MatchSections(secs)
		return err == nil && ok
	}
	return true
}

// matches compares a message's value with the filter's.
func (m *fieldMatch) matches(v stream.Value) bool {
	if v.Kind() == amqpsax.KindInvalid {
		return false
	}
	if m.strict {
		k := v.Kind()
		return (k == amqpsax.KindString || k == amqpsax.KindSymbol) && m.matchBytes(v.Bytes())
	}
	return valuesEqual(m.want, v)
}

func (m *fieldMatch) matchBytes(b []byte) bool {
	switch m.mode {
	case 'p':
		return bytes.HasPrefix(b, m.affix)
	case 's':
		return bytes.HasSuffix(b, m.affix)
	}
	return bytes.Equal(b, m.affix)
}

// matchesProperty compares one field of the properties section.
func (m *fieldMatch) matchesProperty(p *message.Properties) bool {
	var b []byte
	switch m.key {
	case "message-id", "correlation-id":
		id := p.MessageID
		if m.key == "correlation-id" {
			id = p.CorrelationID
		}
		switch id.Kind {
		case amqpsax.KindNull:
			return false
		case amqpsax.KindString:
			return m.strict && m.matchBytes(id.Bytes)
		case amqpsax.KindBinary:
			return m.want.Kind() == amqpsax.KindBinary && bytes.Equal(m.want.Bytes(), id.Bytes)
		case amqpsax.KindUlong:
			k := m.want.Kind()
			return (k == amqpsax.KindUlong || k == amqpsax.KindUint || k == amqpsax.KindUshort || k == amqpsax.KindUbyte) && m.want.Uint() == id.Ulong
		case amqpsax.KindUUID:
			return m.want.Kind() == amqpsax.KindUUID && m.want.UUID() == id.UUID
		}
		return false
	case "user-id":
		return p.UserID != nil && m.want.Kind() == amqpsax.KindBinary && bytes.Equal(m.want.Bytes(), p.UserID)
	case "absolute-expiry-time":
		return p.HasAbsoluteExpiryTime && m.want.Kind() == amqpsax.KindTimestamp && m.want.Timestamp() == p.AbsoluteExpiryTime
	case "creation-time":
		return p.HasCreationTime && m.want.Kind() == amqpsax.KindTimestamp && m.want.Timestamp() == p.CreationTime
	case "group-sequence":
		k := m.want.Kind()
		return p.HasGroupSequence && (k == amqpsax.KindUint || k == amqpsax.KindUshort || k == amqpsax.KindUbyte || k == amqpsax.KindUlong) &&
			m.want.Uint() == uint64(p.GroupSequence)
	case "to":
		b = p.To
	case "subject":
		b = p.Subject
	case "reply-to":
		b = p.ReplyTo
	case "content-type":
		b = p.ContentType
	case "content-encoding":
		b = p.ContentEncoding
	case "group-id":
		b = p.GroupID
	case "reply-to-group-id":
		b = p.ReplyToGroupID
	}
	return b != nil && m.strict && m.matchBytes(b)
}

// valuesEqual compares two values of the kinds an application property
// holds by value: integers of any width by number, the rest by kind and
// encoding.
func valuesEqual(a, b stream.Value) bool {
	ai, aInt := intOf(a)
	bi, bInt := intOf(b)
	switch {
	case aInt || bInt:
		return aInt && bInt && ai == bi
	case a.Kind() != b.Kind():
		return false
	}
	switch a.Kind() {
	case amqpsax.KindBool:
		return a.Bool() == b.Bool()
	case amqpsax.KindDouble:
		return a.Double() == b.Double()
	case amqpsax.KindFloat:
		return a.Float() == b.Float()
	case amqpsax.KindTimestamp:
		return a.Timestamp() == b.Timestamp()
	case amqpsax.KindNull:
		return true
	}
	return bytes.Equal(a.Bytes(), b.Bytes()) && (a.Bytes() != nil || bytes.Equal(a.Raw(), b.Raw()))
}

// intOf is an integer value of any width and sign, as a comparable pair
// (a ulong above the largest long compares only with itself).
func intOf(v stream.Value) (int128, bool) {
	switch v.Kind() {
	case amqpsax.KindByte, amqpsax.KindShort, amqpsax.KindInt, amqpsax.KindLong:
		n := v.Int()
		hi := int64(0)
		if n < 0 {
			hi = -1
		}
		return int128{hi, uint64(n)}, true
	case amqpsax.KindUbyte, amqpsax.KindUshort, amqpsax.KindUint, amqpsax.KindUlong:
		return int128{0, v.Uint()}, true
	}
	return int128{}, false
}

type int128 struct {
	hi int64
	lo uint64
}
