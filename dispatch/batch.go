package dispatch

import (
	"encoding/binary"

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
// runs of at most batchSize. base is the offset of p in the input, for
// errors.
func (d *Decoder) batches(p []byte, base int, bh amqpsax.BatchHandler, c amqpsax.Code, count int) error {
	w := int(wire.Table[c].W)
	for count > 0 {
		n := min(count, batchSize)
		var err error
		switch wire.Table[c].Kind {
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
						return fault(wire.BadBool, base+i, c, true)
					}
					v[i] = p[i] == 1
				default:
					v[i] = c == amqpsax.CodeTrue
				}
			}
			err = bh.OnBoolArray(v)
		case amqpsax.KindUbyte:
			v := room(&d.batch.u8, n)
			copy(v, p)
			err = bh.OnUbyteArray(v)
		case amqpsax.KindByte:
			v := room(&d.batch.i8, n)
			for i := range v {
				v[i] = int8(p[i])
			}
			err = bh.OnByteArray(v)
		case amqpsax.KindUshort:
			v := room(&d.batch.u16, n)
			for i := range v {
				v[i] = binary.BigEndian.Uint16(p[2*i:])
			}
			err = bh.OnUshortArray(v)
		case amqpsax.KindShort:
			v := room(&d.batch.i16, n)
			for i := range v {
				v[i] = int16(binary.BigEndian.Uint16(p[2*i:]))
			}
			err = bh.OnShortArray(v)
		case amqpsax.KindUint:
			v := room(&d.batch.u32, n)
			switch w {
			case 4:
				for i := range v {
					v[i] = binary.BigEndian.Uint32(p[4*i:])
				}
			case 1:
				for i := range v {
					v[i] = uint32(p[i])
				}
			default: // uint0
				clear(v)
			}
			err = bh.OnUintArray(v)
		case amqpsax.KindInt:
			v := room(&d.batch.i32, n)
			if w == 4 {
				for i := range v {
					v[i] = int32(binary.BigEndian.Uint32(p[4*i:]))
				}
			} else { // smallint
				for i := range v {
					v[i] = int32(int8(p[i]))
				}
			}
			err = bh.OnIntArray(v)
		case amqpsax.KindChar:
			v := room(&d.batch.runes, n)
			for i := range v {
				v[i] = wire.Char(p[4*i:])
			}
			err = bh.OnCharArray(v)
		case amqpsax.KindFloat:
			v := room(&d.batch.f32, n)
			for i := range v {
				v[i] = wire.Float(p[4*i:])
			}
			err = bh.OnFloatArray(v)
		case amqpsax.KindUlong:
			v := room(&d.batch.u64, n)
			switch w {
			case 8:
				for i := range v {
					v[i] = binary.BigEndian.Uint64(p[8*i:])
				}
			case 1:
				for i := range v {
					v[i] = uint64(p[i])
				}
			default: // ulong0
				clear(v)
			}
			err = bh.OnUlongArray(v)
		case amqpsax.KindLong, amqpsax.KindTimestamp:
			v := room(&d.batch.i64, n)
			if w == 8 { // long, timestamp: one loop with no switch in it
				for i := range v {
					v[i] = int64(binary.BigEndian.Uint64(p[8*i:]))
				}
			} else { // smalllong
				for i := range v {
					v[i] = int64(int8(p[i]))
				}
			}
			if c == amqpsax.CodeTimestamp {
				err = bh.OnTimestampArray(v)
			} else {
				err = bh.OnLongArray(v)
			}
		case amqpsax.KindDouble:
			v := room(&d.batch.f64, n)
			for i := range v {
				v[i] = wire.Double(p[8*i:])
			}
			err = bh.OnDoubleArray(v)
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
