package amqpsax

import (
	"errors"

	"github.com/google/uuid"
)

// Handler receives the values of an AMQP encoding as events, in wire order,
// from a push decoder (package dispatch). Every encoding width of a type
// reaches the same method: uint0, smalluint and uint all call OnUint.
//
// Compounds are bracketed: OnListStart, the elements, OnListEnd; a map's
// keys and values arrive alternately; an array's elements arrive as
// ordinary values (in an array of described types each element arrives as
// a described value: start, descriptor, value, end). A described value is
// OnDescribedStart, then exactly two values (descriptor, value), then
// OnDescribedEnd.
//
// Byte slices passed to OnBinary, OnString and OnSymbol are views into the
// decoder's input, valid only during the call: copy them to keep them.
//
// An error returned by a method stops decoding and is returned to the
// caller unchanged, except two sentinels: SkipValue returned from a …Start
// method skips that compound without reading its contents (its …End is
// not called), and SkipAll stops decoding with no error.
type Handler interface {
	OnNull() error
	OnBool(v bool) error
	OnUbyte(v uint8) error
	OnUshort(v uint16) error
	OnUint(v uint32) error
	OnUlong(v uint64) error
	OnByte(v int8) error
	OnShort(v int16) error
	OnInt(v int32) error
	OnLong(v int64) error
	OnFloat(v float32) error
	OnDouble(v float64) error
	OnDecimal32(v Decimal32) error   // raw big-endian IEEE 754 decimal bits
	OnDecimal64(v Decimal64) error   // raw big-endian IEEE 754 decimal bits
	OnDecimal128(v Decimal128) error // raw big-endian IEEE 754 decimal bits
	OnChar(v rune) error             // UTF-32 code point
	OnTimestamp(ms int64) error      // milliseconds since the Unix epoch
	OnUUID(v uuid.UUID) error
	OnBinary(v []byte) error     // views into the input: valid only during the call
	OnString(v []byte) error     // UTF-8
	OnSymbol(v []byte) error     // ASCII
	OnListStart(count int) error // elements
	OnListEnd() error
	OnMapStart(pairs int) error // key/value pairs (the wire count / 2)
	OnMapEnd() error
	OnArrayStart(count int, elem Kind) error
	OnArrayEnd() error
	OnDescribedStart() error // then exactly two values: descriptor, value
	OnDescribedEnd() error
}

// SkipValue, returned by a Handler's OnListStart, OnMapStart, OnArrayStart
// or OnDescribedStart, skips that value without reading its contents; the
// matching …End method is not called. Returned from any other method it
// is an ordinary error. (The idiom of io/fs.SkipDir.)
var SkipValue = errors.New("skip this value")

// SkipAll, returned by any Handler method, stops decoding at once with no
// error. (The idiom of io/fs.SkipAll.)
var SkipAll = errors.New("skip everything remaining")

// NopHandler implements every Handler method by doing nothing and
// returning nil. Embed it in a struct to implement only the methods you
// need.
type NopHandler struct{}

func (NopHandler) OnNull() error                 { return nil }
func (NopHandler) OnBool(bool) error             { return nil }
func (NopHandler) OnUbyte(uint8) error           { return nil }
func (NopHandler) OnUshort(uint16) error         { return nil }
func (NopHandler) OnUint(uint32) error           { return nil }
func (NopHandler) OnUlong(uint64) error          { return nil }
func (NopHandler) OnByte(int8) error             { return nil }
func (NopHandler) OnShort(int16) error           { return nil }
func (NopHandler) OnInt(int32) error             { return nil }
func (NopHandler) OnLong(int64) error            { return nil }
func (NopHandler) OnFloat(float32) error         { return nil }
func (NopHandler) OnDouble(float64) error        { return nil }
func (NopHandler) OnDecimal32(Decimal32) error   { return nil }
func (NopHandler) OnDecimal64(Decimal64) error   { return nil }
func (NopHandler) OnDecimal128(Decimal128) error { return nil }
func (NopHandler) OnChar(rune) error             { return nil }
func (NopHandler) OnTimestamp(int64) error       { return nil }
func (NopHandler) OnUUID(uuid.UUID) error        { return nil }
func (NopHandler) OnBinary([]byte) error         { return nil }
func (NopHandler) OnString([]byte) error         { return nil }
func (NopHandler) OnSymbol([]byte) error         { return nil }
func (NopHandler) OnListStart(int) error         { return nil }
func (NopHandler) OnListEnd() error              { return nil }
func (NopHandler) OnMapStart(int) error          { return nil }
func (NopHandler) OnMapEnd() error               { return nil }
func (NopHandler) OnArrayStart(int, Kind) error  { return nil }
func (NopHandler) OnArrayEnd() error             { return nil }
func (NopHandler) OnDescribedStart() error       { return nil }
func (NopHandler) OnDescribedEnd() error         { return nil }

var _ Handler = NopHandler{}

// BatchHandler is an optional interface a Handler may implement to receive
// the elements of arrays of fixed-width numbers in batches, one call per
// batch instead of one per element. When the Handler given to a push
// decoder implements it, an array whose element type is one of those
// below arrives as OnArrayStart, zero or more calls of the matching method
// with consecutive runs of elements (in order, every element exactly
// once), then OnArrayEnd. Arrays of described values and of other types
// arrive element by element as usual.
//
// The slices belong to the decoder and are valid only during the call.
// SkipValue returned by a batch method skips the rest of the array, and
// OnArrayEnd is not called; any other error stops decoding as usual.
type BatchHandler interface {
	OnBoolArray(v []bool) error
	OnUbyteArray(v []uint8) error
	OnUshortArray(v []uint16) error
	OnUintArray(v []uint32) error
	OnUlongArray(v []uint64) error
	OnByteArray(v []int8) error
	OnShortArray(v []int16) error
	OnIntArray(v []int32) error
	OnLongArray(v []int64) error
	OnFloatArray(v []float32) error
	OnDoubleArray(v []float64) error
	OnCharArray(v []rune) error
	OnTimestampArray(ms []int64) error
}

// ArrayDescriptorHandler is an optional interface a Handler may implement
// to receive the descriptor of an array of described values once per
// array, before its elements — also when the array is empty, which has no
// element to carry it. When the Handler given to a push decoder
// implements it, such an array arrives as OnArrayStart(count,
// KindDescribed), OnArrayDescriptor, then the elements as usual (each a
// described value whose descriptor is replayed), then OnArrayEnd.
//
// desc is the descriptor as encoded, constructor included (a ulong or
// symbol in every known peer; read it with a stream.Cursor), a view into
// the input valid only during the call. elem is the kind of the elements'
// values: the type that follows the descriptor in the array's constructor.
// SkipValue skips the array, and OnArrayEnd is not called.
type ArrayDescriptorHandler interface {
	OnArrayDescriptor(desc []byte, elem Kind) error
}
