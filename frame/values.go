package frame

import (
	"iter"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/stream"
)

// Symbols is the encoding of a field of symbols that the spec marks
// multiple (capabilities, locales, outcomes, SASL mechanisms): one symbol,
// or an array of symbols, exactly as on the wire; nil when absent. A list
// of symbols, which Qpid Proton's python binding writes there
// (doc/peers.md), is taken and read the same way. The
// Parse functions check every element, so reading it cannot fail. It is
// a view into the body it was parsed from.
type Symbols []byte

// Len returns the number of symbols.
func (s Symbols) Len() int {
	var c stream.Cursor
	c.Reset(s)
	if !c.Next() {
		return 0
	}
	switch c.Kind() {
	case amqpsax.KindSymbol:
		return 1
	case amqpsax.KindArray, amqpsax.KindList:
		return c.Count()
	}
	return 0
}

// All returns the symbols one at a time, each a view into s, without
// allocating:
//
//	for sym := range o.OfferedCapabilities.All() { … }
func (s Symbols) All() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		var c stream.Cursor
		c.Reset(s)
		if !c.Next() {
			return
		}
		switch c.Kind() {
		case amqpsax.KindSymbol:
			yield(c.Bytes())
		case amqpsax.KindArray, amqpsax.KindList:
			if (c.Kind() == amqpsax.KindArray && c.ElemKind() != amqpsax.KindSymbol) || !c.Enter() {
				return
			}
			for c.Next() {
				if c.Kind() != amqpsax.KindSymbol || !yield(c.Bytes()) {
					return
				}
			}
		}
	}
}

// Append appends the symbols to dst, each a view into s, and returns it;
// with room in dst (a stack array, say) it does not allocate.
func (s Symbols) Append(dst [][]byte) [][]byte {
	var c stream.Cursor
	c.Reset(s)
	if !c.Next() {
		return dst
	}
	switch c.Kind() {
	case amqpsax.KindSymbol:
		return append(dst, c.Bytes())
	case amqpsax.KindArray:
		if c.ElemKind() == amqpsax.KindSymbol {
			return c.AppendBytes(dst)
		}
	case amqpsax.KindList:
		for sym := range s.All() {
			dst = append(dst, sym)
		}
	}
	return dst
}

// Contains reports whether sym is one of the symbols.
func (s Symbols) Contains(sym string) bool {
	for x := range s.All() {
		if string(x) == sym {
			return true
		}
	}
	return false
}

// AppendSymbols appends an array of the symbols syms, as a field of
// Symbols holds it: an array8 of sym8 when it fits, else an array32 (of
// sym32 when a symbol is longer than 255 bytes). Convert the result to
// Symbols to put it in a performative built in code.
func AppendSymbols(b []byte, syms ...string) []byte {
	code := amqpsax.CodeSym8
	for _, s := range syms {
		if len(s) > 255 {
			code = amqpsax.CodeSym32
		}
	}
	start := len(b)
	b = encode.BeginArray(b, code)
	for _, s := range syms {
		b = encode.AppendStringElem(b, code, s)
	}
	return encode.EndArray(b, start, len(syms))
}

// Map is the encoding of a map field (properties, filter, unsettled,
// info, message-annotations, …): the whole map, constructor included,
// exactly as on the wire; nil when absent. The Parse functions check that
// its keys and values are well-formed values (not what is inside each);
// read a value with a stream.Cursor reset on it. It is a view into the
// body it was parsed from.
type Map []byte

// Len returns the number of key/value pairs.
func (m Map) Len() int {
	var c stream.Cursor
	c.Reset(m)
	if !c.Next() || c.Kind() != amqpsax.KindMap {
		return 0
	}
	return c.Count()
}

// All returns the key/value pairs one at a time, each key and value as
// its whole encoding (a view into m), without allocating:
//
//	for k, v := range a.Properties.All() {
//		var c stream.Cursor
//		c.Reset(k)
//		…
//	}
func (m Map) All() iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) {
		var c stream.Cursor
		c.Reset(m)
		if !c.Next() || c.Kind() != amqpsax.KindMap || !c.Enter() {
			return
		}
		for c.Next() {
			k := c.Raw()
			if !c.Next() {
				return
			}
			if !yield(k, c.Raw()) {
				return
			}
		}
	}
}

// Lookup returns the encoding of the value of the first key that is a
// string or symbol equal to key (a view into m), and whether there is
// one. Values before it are skipped, not read.
func (m Map) Lookup(key string) ([]byte, bool) {
	var c stream.Cursor
	c.Reset(m)
	if !c.Next() || c.Kind() != amqpsax.KindMap || !c.Enter() || !c.SeekKey(key) {
		return nil, false
	}
	return c.Raw(), true
}
