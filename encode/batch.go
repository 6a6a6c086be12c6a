package encode

import (
	"encoding/binary"
	"math"

	"github.com/amqpsax/amqpsax"
)

// The Writer implements amqpsax.BatchHandler, so a push decoder hands it
// arrays of numbers a batch at a time and the re-encode of such an array
// is one tight loop per batch.

var _ amqpsax.BatchHandler = (*Writer)(nil)

// arrayBatch checks that the innermost open value is an array of kind k
// (not of described values) and counts n more elements in it. It returns
// the element constructor.
func (w *Writer) arrayBatch(k amqpsax.Kind, n int) (amqpsax.Code, error) {
	if len(w.stack) == 0 {
		return 0, ErrArrayElement
	}
	f := &w.stack[len(w.stack)-1]
	if f.kind != amqpsax.KindArray || f.descArr || f.elemKind != k {
		return 0, ErrArrayElement
	}
	f.n += n
	return f.elem, nil
}

// OnBoolArray writes a batch of boolean elements.
func (w *Writer) OnBoolArray(v []bool) error {
	c, err := w.arrayBatch(amqpsax.KindBool, len(v))
	if err == nil && c == amqpsax.CodeBool {
		for _, x := range v {
			w.buf = append(w.buf, boolByte(x))
		}
	}
	return err
}

// OnUbyteArray writes a batch of ubyte elements.
func (w *Writer) OnUbyteArray(v []uint8) error {
	_, err := w.arrayBatch(amqpsax.KindUbyte, len(v))
	if err == nil {
		w.buf = append(w.buf, v...)
	}
	return err
}

// OnByteArray writes a batch of byte elements.
func (w *Writer) OnByteArray(v []int8) error {
	_, err := w.arrayBatch(amqpsax.KindByte, len(v))
	if err == nil {
		for _, x := range v {
			w.buf = append(w.buf, byte(x))
		}
	}
	return err
}

// OnUshortArray writes a batch of ushort elements.
func (w *Writer) OnUshortArray(v []uint16) error {
	_, err := w.arrayBatch(amqpsax.KindUshort, len(v))
	if err == nil {
		for _, x := range v {
			w.buf = binary.BigEndian.AppendUint16(w.buf, x)
		}
	}
	return err
}

// OnShortArray writes a batch of short elements.
func (w *Writer) OnShortArray(v []int16) error {
	_, err := w.arrayBatch(amqpsax.KindShort, len(v))
	if err == nil {
		for _, x := range v {
			w.buf = binary.BigEndian.AppendUint16(w.buf, uint16(x))
		}
	}
	return err
}

// OnUintArray writes a batch of uint elements.
func (w *Writer) OnUintArray(v []uint32) error {
	_, err := w.arrayBatch(amqpsax.KindUint, len(v))
	if err == nil {
		for _, x := range v {
			w.buf = binary.BigEndian.AppendUint32(w.buf, x)
		}
	}
	return err
}

// OnIntArray writes a batch of int elements.
func (w *Writer) OnIntArray(v []int32) error {
	_, err := w.arrayBatch(amqpsax.KindInt, len(v))
	if err == nil {
		for _, x := range v {
			w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(x))
		}
	}
	return err
}

// OnCharArray writes a batch of char elements.
func (w *Writer) OnCharArray(v []rune) error {
	_, err := w.arrayBatch(amqpsax.KindChar, len(v))
	if err == nil {
		for _, x := range v {
			w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(x))
		}
	}
	return err
}

// OnFloatArray writes a batch of float elements.
func (w *Writer) OnFloatArray(v []float32) error {
	_, err := w.arrayBatch(amqpsax.KindFloat, len(v))
	if err == nil {
		for _, x := range v {
			w.buf = binary.BigEndian.AppendUint32(w.buf, math.Float32bits(x))
		}
	}
	return err
}

// OnUlongArray writes a batch of ulong elements.
func (w *Writer) OnUlongArray(v []uint64) error {
	_, err := w.arrayBatch(amqpsax.KindUlong, len(v))
	if err == nil {
		for _, x := range v {
			w.buf = binary.BigEndian.AppendUint64(w.buf, x)
		}
	}
	return err
}

// OnLongArray writes a batch of long elements.
func (w *Writer) OnLongArray(v []int64) error {
	_, err := w.arrayBatch(amqpsax.KindLong, len(v))
	if err == nil {
		for _, x := range v {
			w.buf = binary.BigEndian.AppendUint64(w.buf, uint64(x))
		}
	}
	return err
}

// OnTimestampArray writes a batch of timestamp elements.
func (w *Writer) OnTimestampArray(v []int64) error {
	_, err := w.arrayBatch(amqpsax.KindTimestamp, len(v))
	if err == nil {
		for _, x := range v {
			w.buf = binary.BigEndian.AppendUint64(w.buf, uint64(x))
		}
	}
	return err
}

// OnDoubleArray writes a batch of double elements.
func (w *Writer) OnDoubleArray(v []float64) error {
	_, err := w.arrayBatch(amqpsax.KindDouble, len(v))
	if err == nil {
		for _, x := range v {
			w.buf = binary.BigEndian.AppendUint64(w.buf, math.Float64bits(x))
		}
	}
	return err
}
