package message

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/stream"
	"github.com/google/uuid"
)

// ErrGoType: Values.Any was given a Go value of a type with no AMQP
// encoding (see the package documentation's table), or nested deeper
// than 100 levels.
var ErrGoType = errors.New("message: a Go value of a type with no AMQP encoding")

// Values encodes values for a [Message] to be built from — typed, from Go
// values, or already encoded — into one buffer it reuses, and hands out
// each as a stream.Value view of its encoding, ready for a [Field] or a
// [Body]. Every value is written in its smallest encoding, as package
// encode writes it.
//
// The views stay valid until Reset; Reset and build again, and a warm
// Values (its buffer grown to the messages built) allocates nothing. The
// zero Values is ready to use; a Values is not for concurrent use.
type Values struct {
	buf  []byte
	keys []string      // scratch for sorting map keys
	cur  stream.Cursor // makes the views, kept so that it is not zeroed for each
}

// Reset forgets the values handed out, keeping the buffer for the next
// message. Views from before Reset are invalid afterwards.
func (vs *Values) Reset() { vs.buf = vs.buf[:0] }

// view returns the value encoded at vs.buf[start:], which package encode
// wrote (or Raw checked), so it is well-formed: the cursor need only read
// its constructor and length.
func (vs *Values) view(start int) stream.Value {
	vs.cur.Reset(vs.buf[start:len(vs.buf):len(vs.buf)])
	vs.cur.Next()
	return vs.cur.Value()
}

// Null returns an encoded null.
func (vs *Values) Null() stream.Value {
	n := len(vs.buf)
	vs.buf = encode.AppendNull(vs.buf)
	return vs.view(n)
}

// Bool returns an encoded boolean.
func (vs *Values) Bool(v bool) stream.Value {
	n := len(vs.buf)
	vs.buf = encode.AppendBool(vs.buf, v)
	return vs.view(n)
}

// Ubyte returns an encoded ubyte.
func (vs *Values) Ubyte(v uint8) stream.Value {
	n := len(vs.buf)
	vs.buf = encode.AppendUbyte(vs.buf, v)
	return vs.view(n)
}

// Ushort returns an encoded ushort.
func (vs *Values) Ushort(v uint16) stream.Value {
	n := len(vs.buf)
	vs.buf = encode.AppendUshort(vs.buf, v)
	return vs.view(n)
}

// Uint returns an encoded uint.
func (vs *Values) Uint(v uint32) stream.Value {
	n := len(vs.buf)
	vs.buf = encode.AppendUint(vs.buf, v)
	return vs.view(n)
}

// Ulong returns an encoded ulong.
func (vs *Values) Ulong(v uint64) stream.Value {
	n := len(vs.buf)
	vs.buf = encode.AppendUlong(vs.buf, v)
	return vs.view(n)
}

// Byte returns an encoded byte (a signed 8-bit integer).
func (vs *Values) Byte(v int8) stream.Value {
	n := len(vs.buf)
	vs.buf = encode.AppendByte(vs.buf, v)
	return vs.view(n)
}

// Short returns an encoded short.
func (vs *Values) Short(v int16) stream.Value {
	n := len(vs.buf)
	vs.buf = encode.AppendShort(vs.buf, v)
	return vs.view(n)
}

// Int returns an encoded int.
func (vs *Values) Int(v int32) stream.Value {
	n := len(vs.buf)
	vs.buf = encode.AppendInt(vs.buf, v)
	return vs.view(n)
}

// Long returns an encoded long.
func (vs *Values) Long(v int64) stream.Value {
	n := len(vs.buf)
	vs.buf = encode.AppendLong(vs.buf, v)
	return vs.view(n)
}

// Float returns an encoded float.
func (vs *Values) Float(v float32) stream.Value {
	n := len(vs.buf)
	vs.buf = encode.AppendFloat(vs.buf, v)
	return vs.view(n)
}

// Double returns an encoded double.
func (vs *Values) Double(v float64) stream.Value {
	n := len(vs.buf)
	vs.buf = encode.AppendDouble(vs.buf, v)
	return vs.view(n)
}

// Char returns an encoded char (a Unicode code point; a rune is an int32
// in Go, which Any writes as an int).
func (vs *Values) Char(v rune) stream.Value {
	n := len(vs.buf)
	vs.buf = encode.AppendChar(vs.buf, v)
	return vs.view(n)
}

// Timestamp returns an encoded timestamp of ms milliseconds since the
// Unix epoch.
func (vs *Values) Timestamp(ms int64) stream.Value {
	n := len(vs.buf)
	vs.buf = encode.AppendTimestamp(vs.buf, ms)
	return vs.view(n)
}

// Time returns t as an encoded timestamp: milliseconds since the Unix
// epoch (t.UnixMilli; finer precision is dropped).
func (vs *Values) Time(t time.Time) stream.Value { return vs.Timestamp(t.UnixMilli()) }

// UUID returns an encoded uuid.
func (vs *Values) UUID(v uuid.UUID) stream.Value {
	n := len(vs.buf)
	vs.buf = encode.AppendUUID(vs.buf, v)
	return vs.view(n)
}

// Binary returns an encoded binary holding a copy of v.
func (vs *Values) Binary(v []byte) stream.Value {
	n := len(vs.buf)
	vs.buf = encode.AppendBinary(vs.buf, v)
	return vs.view(n)
}

// String returns an encoded string (its text is not checked for UTF-8,
// as package encode does not check it).
func (vs *Values) String(v string) stream.Value {
	n := len(vs.buf)
	vs.buf = encode.AppendString(vs.buf, v)
	return vs.view(n)
}

// Symbol returns an encoded symbol (not checked for ASCII).
func (vs *Values) Symbol(v string) stream.Value {
	n := len(vs.buf)
	vs.buf = encode.AppendSymbol(vs.buf, v)
	return vs.view(n)
}

// Raw returns the value encoded, a copy of which is kept: it must be
// exactly one well-formed AMQP value, checked whole as Append checks the
// values of an edit; anything else is an *amqpsax.Error with Op
// "message/build" and the offset in encoded.
func (vs *Values) Raw(encoded []byte) (stream.Value, error) {
	if _, err := stream.ParseValue(encoded); err != nil {
		return stream.Value{}, relabelOp(err, "message/build")
	}
	n := len(vs.buf)
	vs.buf = append(vs.buf, encoded...)
	return vs.view(n), nil
}

// Any returns the Go value v encoded, by the package documentation's
// table: nil, bool, the sized integers, int and uint (as long and ulong),
// float32, float64, the amqpsax decimals, time.Time, uuid.UUID, []byte,
// string, stream.Symbol, []any (a list), map[string]any,
// map[stream.Symbol]any and map[any]any (maps, keys sorted), []string,
// []stream.Symbol and []int64 (arrays), stream.Described and stream.Value
// (written as it is encoded). Map keys are written in a fixed order —
// string and symbol keys in byte order, other keys by their encodings'
// bytes — so the same map gives the same bytes on every run.
//
// Any other type, or nesting deeper than 100 levels, is an error wrapping
// ErrGoType, and nothing is kept.
func (vs *Values) Any(v any) (stream.Value, error) { return vs.anyAt(v, 0) }

// anyAt is Any for a value nested depth levels deep (1 inside
// entriesOf, whose keys are in vs.keys).
func (vs *Values) anyAt(v any, depth int) (stream.Value, error) {
	n := len(vs.buf)
	b, err := vs.appendAny(vs.buf, v, depth)
	if err != nil {
		vs.buf = vs.buf[:n]
		return stream.Value{}, err
	}
	vs.buf = b
	return vs.view(n), nil
}

// PropertiesOf returns the entries of m as application properties
// (string keys): values by Any's table, keys in byte order, so that the
// same map gives the same bytes every time. A nil m gives the zero
// (absent) Entries; an empty one, an empty section. The Entries view the
// map encoded in vs (a map32, as Proton writes map sections), valid until
// Reset.
func (vs *Values) PropertiesOf(m map[string]any) (Entries, error) {
	return vs.entriesOf(m, false)
}

// AnnotationsOf is PropertiesOf for annotations and footers: the keys are
// written as symbols.
func (vs *Values) AnnotationsOf(m map[string]any) (Entries, error) {
	return vs.entriesOf(m, true)
}

func (vs *Values) entriesOf(m map[string]any, symbols bool) (Entries, error) {
	if m == nil {
		return Entries{}, nil
	}
	keys := vs.sortedKeys(m)
	// The map itself, encoded as a map32 (as Proton writes map sections),
	// becomes the Entries: no view is made per entry.
	start := len(vs.buf)
	b := append(vs.buf, byte(amqpsax.CodeMap32), 0, 0, 0, 0, 0, 0, 0, 0)
	var err error
	for _, k := range keys {
		if symbols {
			b = encode.AppendSymbol(b, k)
		} else {
			b = encode.AppendString(b, k)
		}
		if b, err = vs.appendAny(b, m[k], 1); err != nil {
			clear(keys)
			return Entries{}, err
		}
	}
	clear(keys)
	size, count := len(b)-start-5, 2*len(keys)
	binary.BigEndian.PutUint32(b[start+1:], uint32(size))
	binary.BigEndian.PutUint32(b[start+5:], uint32(count))
	vs.buf = b
	return Entries{raw: b[start:len(b):len(b)]}, nil
}

// sortedKeys returns m's keys in byte order, in vs's scratch.
func (vs *Values) sortedKeys(m map[string]any) []string {
	keys := vs.keys[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	vs.keys = keys
	return keys
}

const maxAnyDepth = 100

func goTypeErr(v any) error {
	return &amqpsax.Error{Op: "message/build", Err: fmt.Errorf("%w: %T", ErrGoType, v)}
}

// appendAny appends the encoding of v. Maps with string keys sort them in
// vs.keys when they are the outermost map; nested ones sort in their own
// slice (an allocation).
func (vs *Values) appendAny(b []byte, v any, depth int) ([]byte, error) {
	if depth > maxAnyDepth {
		return b, goTypeErr(v)
	}
	var err error
	switch v := v.(type) {
	case nil:
		return encode.AppendNull(b), nil
	case bool:
		return encode.AppendBool(b, v), nil
	case uint8:
		return encode.AppendUbyte(b, v), nil
	case uint16:
		return encode.AppendUshort(b, v), nil
	case uint32:
		return encode.AppendUint(b, v), nil
	case uint64:
		return encode.AppendUlong(b, v), nil
	case uint:
		return encode.AppendUlong(b, uint64(v)), nil
	case int8:
		return encode.AppendByte(b, v), nil
	case int16:
		return encode.AppendShort(b, v), nil
	case int32:
		return encode.AppendInt(b, v), nil
	case int64:
		return encode.AppendLong(b, v), nil
	case int:
		return encode.AppendLong(b, int64(v)), nil
	case float32:
		return encode.AppendFloat(b, v), nil
	case float64:
		return encode.AppendDouble(b, v), nil
	case amqpsax.Decimal32:
		return encode.AppendDecimal32(b, v), nil
	case amqpsax.Decimal64:
		return encode.AppendDecimal64(b, v), nil
	case amqpsax.Decimal128:
		return encode.AppendDecimal128(b, v), nil
	case time.Time:
		return encode.AppendTimestamp(b, v.UnixMilli()), nil
	case uuid.UUID:
		return encode.AppendUUID(b, v), nil
	case []byte:
		return encode.AppendBinary(b, v), nil
	case string:
		return encode.AppendString(b, v), nil
	case stream.Symbol:
		return encode.AppendSymbol(b, string(v)), nil
	case stream.Value:
		if !standalone(&v) {
			return b, &amqpsax.Error{Op: "message/build", Err: ErrNoValue}
		}
		return append(b, v.Raw()...), nil
	case stream.Described:
		b = encode.AppendDescribed(b)
		if b, err = vs.appendAny(b, v.Descriptor, depth+1); err != nil {
			return b, err
		}
		return vs.appendAny(b, v.Value, depth+1)
	case []any:
		start := len(b)
		b = encode.BeginList(b)
		for _, e := range v {
			if b, err = vs.appendAny(b, e, depth+1); err != nil {
				return b, err
			}
		}
		return encode.EndList(b, start, len(v)), nil
	case map[string]any:
		return vs.appendStringMap(b, v, false, depth)
	case map[stream.Symbol]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[string(k)] = e
		}
		return vs.appendStringMap(b, m, true, depth)
	case map[any]any:
		return vs.appendAnyMap(b, v, depth)
	case []string:
		return appendStrings(b, v, amqpsax.CodeStr8, amqpsax.CodeStr32), nil
	case []stream.Symbol:
		s := make([]string, len(v))
		for i := range v {
			s[i] = string(v[i])
		}
		return appendStrings(b, s, amqpsax.CodeSym8, amqpsax.CodeSym32), nil
	case []int64:
		start := len(b)
		b = encode.BeginArray(b, amqpsax.CodeLong)
		for _, e := range v {
			b = encode.AppendIntElem(b, amqpsax.CodeLong, e)
		}
		return encode.EndArray(b, start, len(v)), nil
	}
	return b, goTypeErr(v)
}

func (vs *Values) appendStringMap(b []byte, m map[string]any, symbols bool, depth int) ([]byte, error) {
	var keys []string
	if depth == 0 {
		keys = vs.sortedKeys(m)
		defer clear(keys)
	} else {
		keys = make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
	}
	start := len(b)
	b = encode.BeginMap(b)
	var err error
	for _, k := range keys {
		if symbols {
			b = encode.AppendSymbol(b, k)
		} else {
			b = encode.AppendString(b, k)
		}
		if b, err = vs.appendAny(b, m[k], depth+1); err != nil {
			return b, err
		}
	}
	return encode.EndMap(b, start, len(keys)), nil
}

// appendAnyMap writes a map[any]any with its entries ordered by their
// keys' encodings.
func (vs *Values) appendAnyMap(b []byte, m map[any]any, depth int) ([]byte, error) {
	type kv struct {
		key []byte
		val any
	}
	entries := make([]kv, 0, len(m))
	for k, v := range m {
		enc, err := vs.appendAny(nil, k, depth+1)
		if err != nil {
			return b, err
		}
		entries = append(entries, kv{enc, v})
	}
	slices.SortFunc(entries, func(x, y kv) int { return bytes.Compare(x.key, y.key) })
	start := len(b)
	b = encode.BeginMap(b)
	var err error
	for _, e := range entries {
		b = append(b, e.key...)
		if b, err = vs.appendAny(b, e.val, depth+1); err != nil {
			return b, err
		}
	}
	return encode.EndMap(b, start, len(entries)), nil
}

// appendStrings writes an array of strings or symbols: 8-bit elements
// when every one fits, else 32-bit.
func appendStrings(b []byte, v []string, small, large amqpsax.Code) []byte {
	code := small
	for _, s := range v {
		if len(s) > 255 {
			code = large
			break
		}
	}
	start := len(b)
	b = encode.BeginArray(b, code)
	for _, s := range v {
		b = encode.AppendStringElem(b, code, s)
	}
	return encode.EndArray(b, start, len(v))
}

// relabelOp gives an *amqpsax.Error the Op op.
func relabelOp(err error, op string) error {
	var e *amqpsax.Error
	if !errors.As(err, &e) {
		return err
	}
	c := *e
	c.Op = op
	return &c
}
