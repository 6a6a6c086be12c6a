package amqp

import (
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
)

// Descriptor codes of the composites and sections this package writes
// and reads (part 1 §1.4, part 2 §2.8.14, part 3 §3.2, §3.4, §3.5).
const (
	codeError        = 0x1d
	codeReceived     = 0x23
	codeAccepted     = 0x24
	codeRejected     = 0x25
	codeReleased     = 0x26
	codeModified     = 0x27
	codeHeader       = 0x70 // message sections, for package amqp
	codeDeliveryAnn  = 0x71
	codeMessageAnn   = 0x72
	codeProperties   = 0x73
	codeAppProps     = 0x74
	codeData         = 0x75
	codeSequence     = 0x76
	codeValue        = 0x77
	codeFooter       = 0x78
	maxVariableBytes = math.MaxUint32 - 1
)

// marshaler is what a value outside this package implements to be
// written by appendValue (go-amqp's marshaler: amqp.Null is one).
type marshaler interface {
	Marshal(*buffer) error
}

// marshalInto appends v to wr as appendValue writes it.
func marshalInto(wr *buffer, v any) error {
	b, err := appendValue(nil, v)
	if err != nil {
		return err
	}
	wr.Append(b)
	return nil
}

var errTooLong = errors.New("too long")

// appendValue appends v to dst encoded as go-amqp v1.7.0 encodes it: the same
// Go types accepted (the scalars and pointers to them, strings, []byte,
// time.Time, the slices that are AMQP arrays, []any, the maps, and this
// package's types), and the same encodings chosen byte for byte: maps
// always map32, lists list0 or list32, composites list32 with trailing
// null fields left out, integers in their smallest encoding, arrays in
// the smallest element width that holds every element. On an error dst
// may hold part of v.
func appendValue(dst []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return encode.AppendNull(dst), nil
	case bool:
		return encode.AppendBool(dst, t), nil
	case *bool:
		return encode.AppendBool(dst, *t), nil
	case uint:
		return encode.AppendUlong(dst, uint64(t)), nil
	case *uint:
		return encode.AppendUlong(dst, uint64(*t)), nil
	case uint64:
		return encode.AppendUlong(dst, t), nil
	case *uint64:
		return encode.AppendUlong(dst, *t), nil
	case uint32:
		return encode.AppendUint(dst, t), nil
	case *uint32:
		return encode.AppendUint(dst, *t), nil
	case uint16:
		return encode.AppendUshort(dst, t), nil
	case *uint16:
		return encode.AppendUshort(dst, *t), nil
	case uint8:
		return encode.AppendUbyte(dst, t), nil
	case *uint8:
		return encode.AppendUbyte(dst, *t), nil
	case int:
		return encode.AppendLong(dst, int64(t)), nil
	case *int:
		return encode.AppendLong(dst, int64(*t)), nil
	case int8:
		return encode.AppendByte(dst, t), nil
	case *int8:
		return encode.AppendByte(dst, *t), nil
	case int16:
		return encode.AppendShort(dst, t), nil
	case *int16:
		return encode.AppendShort(dst, *t), nil
	case int32:
		return encode.AppendInt(dst, t), nil
	case *int32:
		return encode.AppendInt(dst, *t), nil
	case int64:
		return encode.AppendLong(dst, t), nil
	case *int64:
		return encode.AppendLong(dst, *t), nil
	case float32:
		return encode.AppendFloat(dst, t), nil
	case *float32:
		return encode.AppendFloat(dst, *t), nil
	case float64:
		return encode.AppendDouble(dst, t), nil
	case *float64:
		return encode.AppendDouble(dst, *t), nil
	case string:
		return appendString(dst, t)
	case *string:
		return appendString(dst, *t)
	case Symbol:
		return appendSymbol(dst, t)
	case *Symbol:
		return appendSymbol(dst, *t)
	case []byte:
		return appendBinary(dst, t)
	case *[]byte:
		return appendBinary(dst, *t)
	case time.Time:
		return encode.AppendTimestamp(dst, t.UnixMilli()), nil
	case *time.Time:
		return encode.AppendTimestamp(dst, t.UnixMilli()), nil
	case UUID:
		return append(append(dst, byte(amqpsax.CodeUUID)), t[:]...), nil
	case *UUID:
		return append(append(dst, byte(amqpsax.CodeUUID)), t[:]...), nil
	case map[any]any:
		return appendMap(dst, t, appendAnyKey)
	case *map[any]any:
		return appendMap(dst, *t, appendAnyKey)
	case Annotations:
		return appendMap(dst, t, appendAnnotationKey)
	case *Annotations:
		return appendMap(dst, *t, appendAnnotationKey)
	case map[string]any:
		return appendMap(dst, t, appendString)
	case *map[string]any:
		return appendMap(dst, *t, appendString)
	case map[Symbol]any:
		return appendMap(dst, t, appendSymbol)
	case *map[Symbol]any:
		return appendMap(dst, *t, appendSymbol)
	case filter:
		return appendFilter(dst, t)
	case []any:
		return appendList(dst, t)
	case *[]any:
		return appendList(dst, *t)
	case describedType:
		return appendDescribed(dst, &t)
	case *describedType:
		return appendDescribed(dst, t)
	case lifetimePolicy:
		return appendFields(dst, uint8(t), nil, nil)
	case *Error:
		return appendError(dst, t)
	case *StateReceived:
		return appendFields(dst, codeReceived, []any{t.SectionNumber, t.SectionOffset}, []bool{false, false})
	case *StateAccepted:
		return appendFields(dst, codeAccepted, nil, nil)
	case *StateRejected:
		return appendFields(dst, codeRejected, []any{t.Error}, []bool{t.Error == nil})
	case *StateReleased:
		return appendFields(dst, codeReleased, nil, nil)
	case *StateModified:
		return appendFields(dst, codeModified,
			[]any{t.DeliveryFailed, t.UndeliverableHere, t.MessageAnnotations},
			[]bool{!t.DeliveryFailed, !t.UndeliverableHere, t.MessageAnnotations == nil})
	}
	if b, ok, err := appendArray(dst, v); ok {
		return b, err
	}
	if m, ok := v.(marshaler); ok {
		wr := newBuffer(dst)
		if err := m.Marshal(wr); err != nil {
			return dst, err
		}
		return wr.Detach(), nil
	}
	return dst, fmt.Errorf("marshal not implemented for %T", v)
}

func appendString(dst []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return dst, errors.New("not a valid UTF-8 string")
	}
	if uint64(len(s)) > maxVariableBytes {
		return dst, errTooLong
	}
	return encode.AppendString(dst, s), nil
}

func appendSymbol(dst []byte, s Symbol) ([]byte, error) {
	if uint64(len(s)) > maxVariableBytes {
		return dst, errTooLong
	}
	return encode.AppendSymbol(dst, string(s)), nil
}

func appendBinary(dst, p []byte) ([]byte, error) {
	if uint64(len(p)) > maxVariableBytes {
		return dst, errTooLong
	}
	return encode.AppendBinary(dst, p), nil
}

func appendAnyKey(dst []byte, k any) ([]byte, error) { return appendValue(dst, k) }

// appendAnnotationKey writes an annotations key: a string as a symbol,
// an int as a long (part 3 §3.2.10: keys are symbols or ulongs; go-amqp
// writes ints as longs, and so does this).
func appendAnnotationKey(dst []byte, k any) ([]byte, error) {
	switch k := k.(type) {
	case string:
		return appendSymbol(dst, Symbol(k))
	case Symbol:
		return appendSymbol(dst, k)
	case int64:
		return encode.AppendLong(dst, k), nil
	case int:
		return encode.AppendLong(dst, int64(k)), nil
	}
	return dst, fmt.Errorf("unsupported Annotations key type %T", k)
}

// appendMap writes m as a map32, keys by key, values by appendValue.
func appendMap[K comparable](dst []byte, m map[K]any, key func([]byte, K) ([]byte, error)) ([]byte, error) {
	start := len(dst)
	dst = encode.BeginMap(dst)
	var err error
	for k, v := range m {
		if dst, err = key(dst, k); err != nil {
			return dst, err
		}
		if dst, err = appendValue(dst, v); err != nil {
			return dst, err
		}
	}
	return encode.EndMap32(dst, start, len(m)), nil
}

func appendFilter(dst []byte, f filter) ([]byte, error) {
	start := len(dst)
	dst = encode.BeginMap(dst)
	var err error
	for k, v := range f {
		if dst, err = appendSymbol(dst, k); err != nil {
			return dst, err
		}
		if v == nil {
			dst = encode.AppendNull(dst)
			continue
		}
		if dst, err = appendDescribed(dst, v); err != nil {
			return dst, err
		}
	}
	return encode.EndMap32(dst, start, len(f)), nil
}

func appendList(dst []byte, l []any) ([]byte, error) {
	if len(l) == 0 {
		return encode.AppendCodeList0(dst), nil
	}
	start := len(dst)
	dst = encode.BeginList(dst)
	var err error
	for _, v := range l {
		if dst, err = appendValue(dst, v); err != nil {
			return dst, err
		}
	}
	return encode.EndList32(dst, start, len(l)), nil
}

func appendDescribed(dst []byte, t *describedType) ([]byte, error) {
	dst, err := appendValue(encode.AppendDescribed(dst), t.Descriptor)
	if err != nil {
		return dst, err
	}
	return appendValue(dst, t.Value)
}

// appendFields writes a composite (part 1 §1.4): a described list with a
// smallulong descriptor, values[i] written unless omit[i] (then null), the
// list ending at the last value written, list0 when none is (go-amqp's
// encoding: list32 otherwise).
func appendFields(dst []byte, code uint8, values []any, omit []bool) ([]byte, error) {
	n := len(values)
	for n > 0 && omit[n-1] {
		n--
	}
	dst = encode.AppendCodeSmallUlong(encode.AppendDescribed(dst), code)
	if n == 0 {
		return encode.AppendCodeList0(dst), nil
	}
	start := len(dst)
	dst = encode.BeginList(dst)
	var err error
	for i, v := range values[:n] {
		if omit[i] {
			dst = encode.AppendNull(dst)
			continue
		}
		if dst, err = appendValue(dst, v); err != nil {
			return dst, err
		}
	}
	return encode.EndList32(dst, start, n), nil
}

func appendError(dst []byte, e *Error) ([]byte, error) {
	return appendFields(dst, codeError,
		[]any{Symbol(e.Condition), e.Description, e.Info},
		[]bool{false, e.Description == "", len(e.Info) == 0})
}

// appendArray writes the Go slices that are AMQP arrays (part 1 §1.6.24).
// ok is false for a value that is none of them.
func appendArray(dst []byte, v any) (b []byte, ok bool, err error) {
	switch t := v.(type) {
	case []int8:
		return arrayOf(dst, amqpsax.CodeByte, t, func(b []byte, x int8) []byte { return append(b, byte(x)) }), true, nil
	case *[]int8:
		return appendArray(dst, *t)
	case arrayUByte:
		return arrayOf(dst, amqpsax.CodeUbyte, t, func(b []byte, x uint8) []byte { return append(b, x) }), true, nil
	case []uint16:
		return arrayOf(dst, amqpsax.CodeUshort, t, func(b []byte, x uint16) []byte { return encode.AppendUintElem(b, amqpsax.CodeUshort, uint64(x)) }), true, nil
	case *[]uint16:
		return appendArray(dst, *t)
	case []int16:
		return arrayOf(dst, amqpsax.CodeShort, t, func(b []byte, x int16) []byte { return encode.AppendIntElem(b, amqpsax.CodeShort, int64(x)) }), true, nil
	case *[]int16:
		return appendArray(dst, *t)
	case []uint32:
		c := amqpsax.CodeSmallUint
		for _, x := range t {
			if x > math.MaxUint8 {
				c = amqpsax.CodeUint
				break
			}
		}
		return arrayOf(dst, c, t, func(b []byte, x uint32) []byte { return encode.AppendUintElem(b, c, uint64(x)) }), true, nil
	case *[]uint32:
		return appendArray(dst, *t)
	case []uint64:
		c := amqpsax.CodeSmallUlong
		for _, x := range t {
			if x > math.MaxUint8 {
				c = amqpsax.CodeUlong
				break
			}
		}
		return arrayOf(dst, c, t, func(b []byte, x uint64) []byte { return encode.AppendUintElem(b, c, x) }), true, nil
	case *[]uint64:
		return appendArray(dst, *t)
	case []int32:
		c := smallOr(t, amqpsax.CodeSmallInt, amqpsax.CodeInt)
		return arrayOf(dst, c, t, func(b []byte, x int32) []byte { return encode.AppendIntElem(b, c, int64(x)) }), true, nil
	case *[]int32:
		return appendArray(dst, *t)
	case []int64:
		c := smallOr(t, amqpsax.CodeSmallLong, amqpsax.CodeLong)
		return arrayOf(dst, c, t, func(b []byte, x int64) []byte { return encode.AppendIntElem(b, c, x) }), true, nil
	case *[]int64:
		return appendArray(dst, *t)
	case []float32:
		return arrayOf(dst, amqpsax.CodeFloat, t, func(b []byte, x float32) []byte {
			return encode.AppendUintElem(b, amqpsax.CodeUint, uint64(math.Float32bits(x)))
		}), true, nil
	case *[]float32:
		return appendArray(dst, *t)
	case []float64:
		return arrayOf(dst, amqpsax.CodeDouble, t, func(b []byte, x float64) []byte {
			return encode.AppendUintElem(b, amqpsax.CodeUlong, math.Float64bits(x))
		}), true, nil
	case *[]float64:
		return appendArray(dst, *t)
	case []bool:
		return arrayOf(dst, amqpsax.CodeBool, t, func(b []byte, x bool) []byte { return encode.AppendBoolElem(b, amqpsax.CodeBool, x) }), true, nil
	case *[]bool:
		return appendArray(dst, *t)
	case []string:
		for _, s := range t {
			if !utf8.ValidString(s) {
				return dst, true, errors.New("not a valid UTF-8 string")
			}
		}
		c := variableCode(t, amqpsax.CodeStr8)
		return arrayOf(dst, c, t, func(b []byte, x string) []byte { return encode.AppendStringElem(b, c, x) }), true, nil
	case *[]string:
		return appendArray(dst, *t)
	case []Symbol:
		c := variableCode(t, amqpsax.CodeSym8)
		return arrayOf(dst, c, t, func(b []byte, x Symbol) []byte { return encode.AppendStringElem(b, c, string(x)) }), true, nil
	case *[]Symbol:
		return appendArray(dst, *t)
	case [][]byte:
		c := variableCode(t, amqpsax.CodeVbin8)
		return arrayOf(dst, c, t, func(b []byte, x []byte) []byte { return encode.AppendBytesElem(b, c, x) }), true, nil
	case *[][]byte:
		return appendArray(dst, *t)
	case []time.Time:
		return arrayOf(dst, amqpsax.CodeTimestamp, t, func(b []byte, x time.Time) []byte {
			return encode.AppendIntElem(b, amqpsax.CodeTimestamp, arrayMillis(x))
		}), true, nil
	case *[]time.Time:
		return appendArray(dst, *t)
	case []UUID:
		return arrayOf(dst, amqpsax.CodeUUID, t, func(b []byte, x UUID) []byte { return append(b, x[:]...) }), true, nil
	case *[]UUID:
		return appendArray(dst, *t)
	case []map[any]any:
		start := len(dst)
		dst = encode.BeginArray(dst, amqpsax.CodeMap32)
		for _, m := range t {
			var err error
			at := len(dst)
			if dst, err = appendMap(dst, m, appendAnyKey); err != nil {
				return dst, true, err
			}
			dst = append(dst[:at], dst[at+1:]...) // an element has no constructor of its own
		}
		return encode.EndArray32(dst, start, len(t)), true, nil
	case *[]map[any]any:
		return appendArray(dst, *t)
	}
	return dst, false, nil
}

// arrayMillis is the timestamp of an array element as go-amqp v1.7.0
// writes it, UnixNano()/1e6 (rounded toward zero, where a timestamp on
// its own is UnixMilli, rounded down), for the years 1678 to 2262 that
// UnixNano holds; outside them, where go-amqp writes a number UnixNano
// made up, this writes UnixMilli (see the package documentation of amqp).
func arrayMillis(t time.Time) int64 {
	if s := t.Unix(); s > math.MinInt64/int64(time.Second) && s < math.MaxInt64/int64(time.Second) {
		return t.UnixNano() / int64(time.Millisecond)
	}
	return t.UnixMilli()
}

func arrayOf[T any](dst []byte, c amqpsax.Code, xs []T, elem func([]byte, T) []byte) []byte {
	start := len(dst)
	dst = encode.BeginArray(dst, c)
	for _, x := range xs {
		dst = elem(dst, x)
	}
	return encode.EndArray(dst, start, len(xs))
}

// smallOr returns small when every element fits in a signed byte, else
// wide. go-amqp v1.7.0 looks only for elements above 127 and writes one
// below -128 truncated to a byte, so that it reads back as another number;
// this writes it whole (see the package documentation of amqp).
func smallOr[T int32 | int64](xs []T, small, wide amqpsax.Code) amqpsax.Code {
	for _, x := range xs {
		if x > math.MaxInt8 || x < math.MinInt8 {
			return wide
		}
	}
	return small
}

// variableCode returns the 8-bit code c8 unless an element is longer than
// 255 bytes, then its 32-bit code.
func variableCode[T ~string | ~[]byte](xs []T, c8 amqpsax.Code) amqpsax.Code {
	for _, x := range xs {
		if len(x) > math.MaxUint8 {
			return c8 + 0x10
		}
	}
	return c8
}
