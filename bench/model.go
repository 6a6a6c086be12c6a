package bench

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/google/uuid"
)

// The model: the Go values a workload is generated from. A message is a
// slice of sections, each a Described; AppendValue encodes any model value
// with the encode package's Append functions, so it is both the workload
// generator and the "append from Go values" encoder benchmark.
//
// Go type            AMQP encoding
// nil                null
// bool               boolean
// uint8              ubyte
// uint32             uint (smallest width)
// uint64             ulong (smallest width)
// int32              int (smallest width)
// int64              long (smallest width)
// float64            double
// string             string (str8 or str32)
// Symbol             symbol
// Binary             binary
// Timestamp          timestamp
// uuid.UUID          uuid
// List               list
// Map                map, pairs in order
// []int64            array of long
// []string           array of string (str8 elements when all fit, else str32)
// Described          described value with a ulong descriptor
type (
	Symbol    string
	Binary    []byte
	Timestamp int64 // milliseconds since the Unix epoch
	List      []any
	Map       []KV
	KV        struct{ Key, Value any }
	Described struct {
		Descriptor uint64
		Value      any
	}
)

// AppendMessage appends the encoding of every section of msg.
func AppendMessage(b []byte, msg []Described) []byte {
	for i := range msg {
		b = appendDescribed(b, &msg[i])
	}
	return b
}

func appendDescribed(b []byte, d *Described) []byte {
	b = encode.AppendDescribed(b)
	b = encode.AppendUlong(b, d.Descriptor)
	return AppendValue(b, d.Value)
}

// AppendValue appends the encoding of the model value v. It panics on a
// Go type the model does not have (a bug in the generator, not input).
func AppendValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return encode.AppendNull(b)
	case bool:
		return encode.AppendBool(b, v)
	case uint8:
		return encode.AppendUbyte(b, v)
	case uint32:
		return encode.AppendUint(b, v)
	case uint64:
		return encode.AppendUlong(b, v)
	case int32:
		return encode.AppendInt(b, v)
	case int64:
		return encode.AppendLong(b, v)
	case float64:
		return encode.AppendDouble(b, v)
	case string:
		return encode.AppendString(b, v)
	case Symbol:
		return encode.AppendSymbol(b, string(v))
	case Binary:
		return encode.AppendBinary(b, v)
	case Timestamp:
		return encode.AppendTimestamp(b, int64(v))
	case uuid.UUID:
		return encode.AppendUUID(b, v)
	case List:
		start := len(b)
		b = encode.BeginList(b)
		for _, e := range v {
			b = AppendValue(b, e)
		}
		return encode.EndList(b, start, len(v))
	case Map:
		start := len(b)
		b = encode.BeginMap(b)
		for _, kv := range v {
			b = AppendValue(b, kv.Key)
			b = AppendValue(b, kv.Value)
		}
		return encode.EndMap(b, start, len(v))
	case []int64:
		start := len(b)
		b = encode.BeginArray(b, amqpsax.CodeLong)
		for _, e := range v {
			b = encode.AppendIntElem(b, amqpsax.CodeLong, e)
		}
		return encode.EndArray(b, start, len(v))
	case []string:
		return AppendStringArray(b, v)
	case Described:
		return appendDescribed(b, &v)
	}
	panic("bench: no encoding for model value")
}

// AppendStringArray appends an array of strings, with str8 elements when
// every string fits in one. The element bodies are written by hand
// because encode.AppendBytesElem takes []byte and a string would have to
// be converted (and copied) first.
func AppendStringArray(b []byte, v []string) []byte {
	code := amqpsax.CodeStr8
	for _, s := range v {
		if len(s) > 255 {
			code = amqpsax.CodeStr32
			break
		}
	}
	start := len(b)
	b = encode.BeginArray(b, code)
	for _, s := range v {
		if code == amqpsax.CodeStr8 {
			b = append(b, byte(len(s)))
		} else {
			b = append(b, byte(len(s)>>24), byte(len(s)>>16), byte(len(s)>>8), byte(len(s)))
		}
		b = append(b, s...)
	}
	return encode.EndArray(b, start, len(v))
}

// AppendStringMap appends a map of string keys to string values, ranging
// over the Go map (so in no fixed order), as msgp's generated code does:
// the typed encoder for the mobile map shape.
func AppendStringMap(b []byte, m map[string]string) []byte {
	start := len(b)
	b = encode.BeginMap(b)
	for k, v := range m {
		b = encode.AppendString(b, k)
		b = encode.AppendString(b, v)
	}
	return encode.EndMap(b, start, len(m))
}

// countValues returns the number of values a decoder that reports every
// value (compounds, descriptors and nulls included) sees in v.
func countValues(v any) int {
	switch v := v.(type) {
	case List:
		n := 1
		for _, e := range v {
			n += countValues(e)
		}
		return n
	case Map:
		n := 1
		for _, kv := range v {
			n += countValues(kv.Key) + countValues(kv.Value)
		}
		return n
	case []int64:
		return 1 + len(v)
	case []string:
		return 1 + len(v)
	case Described:
		return 2 + countValues(v.Value)
	}
	return 1
}
