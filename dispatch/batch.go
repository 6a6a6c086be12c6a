package dispatch

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
)

// batchSize is the most elements one BatchHandler call receives.
const batchSize = 256

// batchBuf holds the decoder-owned slices batches are delivered in, each
// made on first use with room for batchSize elements.
type batchBuf struct {
	bools []bool
	u8    []uint8
	u16   []uint16
	u32   []uint32
	u64   []uint64
	i8    []int8
	i16   []int16
	i32   []int32
	i64   []int64
	f32   []float32
	f64   []float64
	runes []rune
}

func room[T any](buf *[]T, n int) []T {
	if cap(*buf) < batchSize {
		*buf = make([]T, batchSize)
	}
	return (*buf)[:n]
}

// batchable reports whether arrays of element code c are delivered in
// batches to a BatchHandler.
func batchable(c amqpsax.Code) bool {
	switch c {
	case amqpsax.CodeBool, amqpsax.CodeTrue, amqpsax.CodeFalse,
		amqpsax.CodeUbyte, amqpsax.CodeUshort,
		amqpsax.CodeUint, amqpsax.CodeSmallUint, amqpsax.CodeUint0,
		amqpsax.CodeUlong, amqpsax.CodeSmallUlong, amqpsax.CodeUlong0,
		amqpsax.CodeByte, amqpsax.CodeShort,
		amqpsax.CodeInt, amqpsax.CodeSmallInt, amqpsax.CodeLong, amqpsax.CodeSmallLong,
		amqpsax.CodeFloat, amqpsax.CodeDouble, amqpsax.CodeChar, amqpsax.CodeTimestamp:
		return true
	}
	return false
}

// batches delivers the count element bodies in p, all of fixed-width code
// c (p holds exactly count of them, as wire.ArrayCtor checked), to bh in
// runs of at most batchSize, each decoded by wire.FillElems. base is the
// offset of p in the input, for errors.
func (d *Decoder) batches(p []byte, base int, bh amqpsax.BatchHandler, c amqpsax.Code, count int) error {
	w := int(wire.Table[c].W())
	for count > 0 {
		n := min(count, batchSize)
		var err error
		switch wire.Table[c].Kind() {
		case amqpsax.KindBool:
			v := room(&d.batch.bools, n)
			for i := range v {
				switch c {
				case amqpsax.CodeBool:
					if p[i] > 1 {
						// Deliver the elements before the bad one, as the
						// element-by-element path would have.
						if i > 0 {
							if err := bh.OnBoolArray(v[:i]); err != nil {
								return err
							}
						}
						return fault(wire.BadBool, base+i, c)
					}
					v[i] = p[i] == 1
				default:
					v[i] = c == amqpsax.CodeTrue
				}
			}
			err = bh.OnBoolArray(v)
		case amqpsax.KindUbyte:
			err = bh.OnUbyteArray(fill(&d.batch.u8, n, c, p))
		case amqpsax.KindByte:
			err = bh.OnByteArray(fill(&d.batch.i8, n, c, p))
		case amqpsax.KindUshort:
			err = bh.OnUshortArray(fill(&d.batch.u16, n, c, p))
		case amqpsax.KindShort:
			err = bh.OnShortArray(fill(&d.batch.i16, n, c, p))
		case amqpsax.KindUint:
			err = bh.OnUintArray(fill(&d.batch.u32, n, c, p))
		case amqpsax.KindInt:
			err = bh.OnIntArray(fill(&d.batch.i32, n, c, p))
		case amqpsax.KindChar:
			err = bh.OnCharArray(fill(&d.batch.runes, n, c, p))
		case amqpsax.KindFloat:
			err = bh.OnFloatArray(fill(&d.batch.f32, n, c, p))
		case amqpsax.KindUlong:
			err = bh.OnUlongArray(fill(&d.batch.u64, n, c, p))
		case amqpsax.KindLong:
			err = bh.OnLongArray(fill(&d.batch.i64, n, c, p))
		case amqpsax.KindTimestamp:
			err = bh.OnTimestampArray(fill(&d.batch.i64, n, c, p))
		case amqpsax.KindDouble:
			err = bh.OnDoubleArray(fill(&d.batch.f64, n, c, p))
		}
		if wire.Counting {
			wire.Work.Values += n
		}
		if err != nil {
			return err
		}
		p = p[n*w:]
		base += n * w
		count -= n
	}
	return nil
}

// fill decodes the next n elements of code c in p into the decoder-owned
// batch buffer buf.
func fill[T wire.Number](buf *[]T, n int, c amqpsax.Code, p []byte) []T {
	v := room(buf, n)
	wire.FillElems(v, c, p)
	return v
}
