package bench

import (
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/amqpsax/amqpsax"
	"github.com/google/uuid"
)

// Digest summarises what a decoder saw, so that implementations which
// hand out very different things (events, a cursor, a go-amqp Message, a
// Proton pn_data_t tree, a JSON tree) can be checked to have read the
// same content: the apples-to-apples test. Sums wrap and are
// order-independent, because Go maps have no order.
type Digest struct {
	// Values counts every value: compounds, descriptors and nulls too.
	// Only decoders that report every value fill it (dispatch, stream,
	// Proton's pn_data_t); object builders leave it 0.
	Values int

	Text     int // strings, symbols and binaries, map keys included
	TextLen  int // their bytes
	Ints     int // every integer type, chars and timestamps (in ms)
	IntSum   uint64
	Floats   int
	FloatSum uint64 // sum of the float64 bits
	Bools    int
	Trues    int
	UUIDs    int
	UUIDSum  uint64 // sum of the first eight bytes, big-endian
}

// Leaves is d without Values, for implementations that do not see every
// value.
func (d Digest) Leaves() Digest { d.Values = 0; return d }

func (d Digest) String() string {
	return fmt.Sprintf("values=%d text=%d/%dB ints=%d/%#x floats=%d/%#x bools=%d/%d uuids=%d/%#x",
		d.Values, d.Text, d.TextLen, d.Ints, d.IntSum, d.Floats, d.FloatSum, d.Bools, d.Trues, d.UUIDs, d.UUIDSum)
}

func (d *Digest) text(n int)      { d.Text++; d.TextLen += n }
func (d *Digest) uint(v uint64)   { d.Ints++; d.IntSum += v }
func (d *Digest) int(v int64)     { d.Ints++; d.IntSum += uint64(v) }
func (d *Digest) float(v float64) { d.Floats++; d.FloatSum += math.Float64bits(v) }
func (d *Digest) bool(v bool)     { d.Bools++; d.Trues += b2i(v) }
func (d *Digest) uuid(v [16]byte) { d.UUIDs++; d.UUIDSum += be64(v[:8]) }
func be64(b []byte) (v uint64) {
	return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 | uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
}
func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

var (
	timeType = reflect.TypeFor[time.Time]()
	durType  = reflect.TypeFor[time.Duration]()
)

// DigestOf walks any Go value tree (the model, a tree the keep handler
// built, a go-amqp Message's values, a JSON tree) by reflection. It is
// for tests only. [16]byte arrays are UUIDs, []byte is binary,
// time.Time counts as its Unix milliseconds, time.Duration as
// milliseconds. Values is left 0.
func DigestOf(v any) Digest {
	var d Digest
	d.walk(reflect.ValueOf(v))
	return d
}

func (d *Digest) walk(v reflect.Value) {
	if !v.IsValid() {
		return // nil: a null
	}
	switch v.Type() {
	case timeType:
		d.int(v.Interface().(time.Time).UnixMilli())
		return
	case durType:
		d.int(int64(v.Interface().(time.Duration) / time.Millisecond))
		return
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if !v.IsNil() {
			d.walk(v.Elem())
		}
	case reflect.Bool:
		d.bool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		d.int(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		d.uint(v.Uint())
	case reflect.Float32, reflect.Float64:
		d.float(v.Float())
	case reflect.String:
		d.text(v.Len())
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			d.text(v.Len())
			return
		}
		for i := range v.Len() {
			d.walk(v.Index(i))
		}
	case reflect.Array:
		if v.Len() == 16 && v.Type().Elem().Kind() == reflect.Uint8 {
			var u [16]byte
			reflect.Copy(reflect.ValueOf(u[:]), v)
			d.uuid(u)
			return
		}
		for i := range v.Len() {
			d.walk(v.Index(i))
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			d.walk(it.Key())
			d.walk(it.Value())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				d.walk(v.Field(i))
			}
		}
	default:
		panic("bench: digest of " + v.Type().String())
	}
}

// digestHandler is a dispatch Handler that computes the Digest of what
// it is given, Values included.
type digestHandler struct{ d Digest }

var _ amqpsax.Handler = (*digestHandler)(nil)

func (h *digestHandler) OnNull() error                         { h.d.Values++; return nil }
func (h *digestHandler) OnBool(v bool) error                   { h.d.Values++; h.d.bool(v); return nil }
func (h *digestHandler) OnUbyte(v uint8) error                 { h.d.Values++; h.d.uint(uint64(v)); return nil }
func (h *digestHandler) OnUshort(v uint16) error               { h.d.Values++; h.d.uint(uint64(v)); return nil }
func (h *digestHandler) OnUint(v uint32) error                 { h.d.Values++; h.d.uint(uint64(v)); return nil }
func (h *digestHandler) OnUlong(v uint64) error                { h.d.Values++; h.d.uint(v); return nil }
func (h *digestHandler) OnByte(v int8) error                   { h.d.Values++; h.d.int(int64(v)); return nil }
func (h *digestHandler) OnShort(v int16) error                 { h.d.Values++; h.d.int(int64(v)); return nil }
func (h *digestHandler) OnInt(v int32) error                   { h.d.Values++; h.d.int(int64(v)); return nil }
func (h *digestHandler) OnLong(v int64) error                  { h.d.Values++; h.d.int(v); return nil }
func (h *digestHandler) OnFloat(v float32) error               { h.d.Values++; h.d.float(float64(v)); return nil }
func (h *digestHandler) OnDouble(v float64) error              { h.d.Values++; h.d.float(v); return nil }
func (h *digestHandler) OnDecimal32(amqpsax.Decimal32) error   { h.d.Values++; return nil }
func (h *digestHandler) OnDecimal64(amqpsax.Decimal64) error   { h.d.Values++; return nil }
func (h *digestHandler) OnDecimal128(amqpsax.Decimal128) error { h.d.Values++; return nil }
func (h *digestHandler) OnChar(v rune) error                   { h.d.Values++; h.d.int(int64(v)); return nil }
func (h *digestHandler) OnTimestamp(ms int64) error            { h.d.Values++; h.d.int(ms); return nil }
func (h *digestHandler) OnUUID(v uuid.UUID) error              { h.d.Values++; h.d.uuid(v); return nil }
func (h *digestHandler) OnBinary(v []byte) error               { h.d.Values++; h.d.text(len(v)); return nil }
func (h *digestHandler) OnString(v []byte) error               { h.d.Values++; h.d.text(len(v)); return nil }
func (h *digestHandler) OnSymbol(v []byte) error               { h.d.Values++; h.d.text(len(v)); return nil }
func (h *digestHandler) OnListStart(int) error                 { h.d.Values++; return nil }
func (h *digestHandler) OnListEnd() error                      { return nil }
func (h *digestHandler) OnMapStart(int) error                  { h.d.Values++; return nil }
func (h *digestHandler) OnMapEnd() error                       { return nil }
func (h *digestHandler) OnArrayStart(int, amqpsax.Kind) error  { h.d.Values++; return nil }
func (h *digestHandler) OnArrayEnd() error                     { return nil }
func (h *digestHandler) OnDescribedStart() error               { h.d.Values++; return nil }
func (h *digestHandler) OnDescribedEnd() error                 { return nil }
