package encode

import (
	"github.com/amqpsax/amqpsax"
	"github.com/google/uuid"
)

// callRecorder turns Handler events into a list of calls on a Writer, so
// that a test can drive a Writer without parsing in the measured loop.
type callRecorder struct{ calls *[]func(*Writer) }

func (r *callRecorder) add(f func(*Writer)) error { *r.calls = append(*r.calls, f); return nil }

func (r *callRecorder) OnNull() error       { return r.add(func(w *Writer) { w.OnNull() }) }
func (r *callRecorder) OnBool(v bool) error { return r.add(func(w *Writer) { w.OnBool(v) }) }
func (r *callRecorder) OnUbyte(v uint8) error {
	return r.add(func(w *Writer) { w.OnUbyte(v) })
}
func (r *callRecorder) OnUshort(v uint16) error {
	return r.add(func(w *Writer) { w.OnUshort(v) })
}
func (r *callRecorder) OnUint(v uint32) error   { return r.add(func(w *Writer) { w.OnUint(v) }) }
func (r *callRecorder) OnUlong(v uint64) error  { return r.add(func(w *Writer) { w.OnUlong(v) }) }
func (r *callRecorder) OnByte(v int8) error     { return r.add(func(w *Writer) { w.OnByte(v) }) }
func (r *callRecorder) OnShort(v int16) error   { return r.add(func(w *Writer) { w.OnShort(v) }) }
func (r *callRecorder) OnInt(v int32) error     { return r.add(func(w *Writer) { w.OnInt(v) }) }
func (r *callRecorder) OnLong(v int64) error    { return r.add(func(w *Writer) { w.OnLong(v) }) }
func (r *callRecorder) OnFloat(v float32) error { return r.add(func(w *Writer) { w.OnFloat(v) }) }
func (r *callRecorder) OnDouble(v float64) error {
	return r.add(func(w *Writer) { w.OnDouble(v) })
}
func (r *callRecorder) OnDecimal32(v amqpsax.Decimal32) error {
	return r.add(func(w *Writer) { w.OnDecimal32(v) })
}
func (r *callRecorder) OnDecimal64(v amqpsax.Decimal64) error {
	return r.add(func(w *Writer) { w.OnDecimal64(v) })
}
func (r *callRecorder) OnDecimal128(v amqpsax.Decimal128) error {
	return r.add(func(w *Writer) { w.OnDecimal128(v) })
}
func (r *callRecorder) OnChar(v rune) error { return r.add(func(w *Writer) { w.OnChar(v) }) }
func (r *callRecorder) OnTimestamp(v int64) error {
	return r.add(func(w *Writer) { w.OnTimestamp(v) })
}
func (r *callRecorder) OnUUID(v uuid.UUID) error { return r.add(func(w *Writer) { w.OnUUID(v) }) }
func (r *callRecorder) OnBinary(v []byte) error {
	v = append([]byte(nil), v...)
	return r.add(func(w *Writer) { w.OnBinary(v) })
}
func (r *callRecorder) OnString(v []byte) error {
	v = append([]byte(nil), v...)
	return r.add(func(w *Writer) { w.OnString(v) })
}
func (r *callRecorder) OnSymbol(v []byte) error {
	v = append([]byte(nil), v...)
	return r.add(func(w *Writer) { w.OnSymbol(v) })
}
func (r *callRecorder) OnListStart(n int) error { return r.add(func(w *Writer) { w.OnListStart(n) }) }
func (r *callRecorder) OnListEnd() error        { return r.add(func(w *Writer) { w.OnListEnd() }) }
func (r *callRecorder) OnMapStart(n int) error  { return r.add(func(w *Writer) { w.OnMapStart(n) }) }
func (r *callRecorder) OnMapEnd() error         { return r.add(func(w *Writer) { w.OnMapEnd() }) }
func (r *callRecorder) OnArrayStart(n int, k amqpsax.Kind) error {
	return r.add(func(w *Writer) { w.OnArrayStart(n, k) })
}
func (r *callRecorder) OnArrayEnd() error { return r.add(func(w *Writer) { w.OnArrayEnd() }) }
func (r *callRecorder) OnDescribedStart() error {
	return r.add(func(w *Writer) { w.OnDescribedStart() })
}
func (r *callRecorder) OnDescribedEnd() error { return r.add(func(w *Writer) { w.OnDescribedEnd() }) }
