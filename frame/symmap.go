package frame

import "github.com/amqpsax/amqpsax/encode"

// SelectorFilterCode and SelectorFilterKey name the JMS selector filter
// of the AMQP filter registry ("apache.org:selector-filter:string"), the
// filter of a source (part 3 §3.5.3, filter-set §3.5.8) that Qpid
// brokers, ActiveMQ Artemis, RabbitMQ and Azure Service Bus read: a
// string in SQL-92 syntax, described by this code, under this key.
const (
	SelectorFilterCode = 0x0000_468C_0000_0004
	SelectorFilterKey  = "apache.org:selector-filter:string"
)

// SymbolMap builds a [Map] whose keys are symbols: the properties of an
// open, begin or attach (fields, part 2 §2.8.13), a source's filter-set
// (part 3 §3.5.8: its values are described filters) and a terminus's
// dynamic-node-properties (node-properties, part 3 §3.5.9). Each method
// appends one entry, in order, encoded by package encode in its smallest
// form, and returns the builder for the next; Map returns the map. The
// zero value is an empty builder; Reset empties it and keeps its
// storage, so a builder reused (with Append) builds maps without
// allocating once warm.
//
//	var p frame.SymbolMap
//	p.String("product", "amqpsax").Uint("com.microsoft:timeout", 60000)
//	cfg.Properties = p.Map()
//
// A key is not checked for duplicates: a map that repeats a key is
// written as built (the spec leaves its meaning undefined).
type SymbolMap struct {
	b     []byte // the entries so far, keys and values alternately
	pairs int
}

// Reset empties the map, keeping its storage.
func (m *SymbolMap) Reset() { m.b, m.pairs = m.b[:0], 0 }

// Len returns the number of entries.
func (m *SymbolMap) Len() int { return m.pairs }

// Map returns the map built, in a new slice of its exact size (a map8
// when it fits, else a map32); nil, the field absent, when it has no
// entry. The builder can go on: later entries are not in this map.
func (m *SymbolMap) Map() Map {
	if m.pairs == 0 {
		return nil
	}
	return Map(m.Append(make([]byte, 0, len(m.b)+9)))
}

// Append appends the map built to dst (even with no entry: an empty map)
// and returns it; with room in dst it does not allocate.
func (m *SymbolMap) Append(dst []byte) []byte {
	start := len(dst)
	dst = encode.BeginMap(dst)
	dst = append(dst, m.b...)
	return encode.EndMap(dst, start, m.pairs)
}

func (m *SymbolMap) key(k string) {
	m.b = encode.AppendSymbol(m.b, k)
	m.pairs++
}

// Value adds key with a value already encoded (one whole AMQP value,
// such as encode.Append… writes; it is copied as it is, not checked).
func (m *SymbolMap) Value(key string, v []byte) *SymbolMap {
	m.key(key)
	m.b = append(m.b, v...)
	return m
}

// String adds key with a string value.
func (m *SymbolMap) String(key, v string) *SymbolMap {
	m.key(key)
	m.b = encode.AppendString(m.b, v)
	return m
}

// Symbol adds key with a symbol value.
func (m *SymbolMap) Symbol(key, v string) *SymbolMap {
	m.key(key)
	m.b = encode.AppendSymbol(m.b, v)
	return m
}

// Binary adds key with a binary value.
func (m *SymbolMap) Binary(key string, v []byte) *SymbolMap {
	m.key(key)
	m.b = encode.AppendBinary(m.b, v)
	return m
}

// Bool adds key with a boolean value.
func (m *SymbolMap) Bool(key string, v bool) *SymbolMap {
	m.key(key)
	m.b = encode.AppendBool(m.b, v)
	return m
}

// Uint adds key with a uint value.
func (m *SymbolMap) Uint(key string, v uint32) *SymbolMap {
	m.key(key)
	m.b = encode.AppendUint(m.b, v)
	return m
}

// Ulong adds key with a ulong value.
func (m *SymbolMap) Ulong(key string, v uint64) *SymbolMap {
	m.key(key)
	m.b = encode.AppendUlong(m.b, v)
	return m
}

// Int adds key with an int value.
func (m *SymbolMap) Int(key string, v int32) *SymbolMap {
	m.key(key)
	m.b = encode.AppendInt(m.b, v)
	return m
}

// Long adds key with a long value.
func (m *SymbolMap) Long(key string, v int64) *SymbolMap {
	m.key(key)
	m.b = encode.AppendLong(m.b, v)
	return m
}

// Described adds key with a value described by the ulong descriptor
// code, the form of a filter in a source's filter-set (part 3 §3.5.8;
// the codes are the AMQP filter registry's): v is the encoded value
// described, copied as it is.
func (m *SymbolMap) Described(key string, code uint64, v []byte) *SymbolMap {
	m.key(key)
	m.b = encode.AppendUlong(encode.AppendDescribed(m.b), code)
	m.b = append(m.b, v...)
	return m
}

// Selector adds the JMS selector filter: the string sql described by
// SelectorFilterCode, under SelectorFilterKey, as go-amqp's
// NewSelectorFilter writes it. (Qpid Proton's python Selector writes
// the key "selector" and the descriptor as its symbol,
// "apache.org:selector-filter:string"; brokers read both: build that
// form with Value when a peer wants it.)
func (m *SymbolMap) Selector(sql string) *SymbolMap {
	m.key(SelectorFilterKey)
	m.b = encode.AppendUlong(encode.AppendDescribed(m.b), SelectorFilterCode)
	m.b = encode.AppendString(m.b, sql)
	return m
}
