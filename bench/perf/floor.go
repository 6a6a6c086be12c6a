// Package perf counts the instructions amqpsax's decoders spend per
// message under callgrind, beside a floor: the least a Go walker must do
// to hand every value of the same message to a handler through an
// interface, with the bounds checks that keep it safe. Instruction counts
// repeat exactly where timings on a shared machine do not. run.sh prints
// the table; see it for how to run.
//
// The floor (Floor) is a yardstick, not a decoder: it checks no exact
// container size, no nesting limit, no boolean byte, no handler error and
// no UTF-8, and takes no array of described values. A decoder that did
// the same work as the floor would show 1.0× beside it.
package perf

import (
	"encoding/binary"
	"errors"
	"math"
)

// Visitor receives every value Floor visits, one interface call a value.
// Strings, symbols, binaries and 16-byte values are views into the input.
type Visitor interface {
	Null()
	Bool(bool)
	Int(int64)
	Uint(uint64)
	Float(float64)
	Bytes(code byte, p []byte)
	Open(code byte, count int) // list, map, array (count: elements), described value (count 2)
	Close()
}

// Errors of the floor walk: what it meets that it does not take.
var (
	ErrCut  = errors.New("perf floor: value runs past its end")
	ErrCode = errors.New("perf floor: format code it does not take")
)

// Payload shapes, one per way of reading a value: the floor's one switch.
const (
	sBad    = iota
	sDesc   // 0x00: a descriptor, then a value
	sNull   //
	sTrue   //
	sFalse  //
	sZero   // uint0, ulong0
	sU8     // ubyte, smalluint, smallulong
	sI8     // byte, smallint, smalllong
	sBool   // 0x56
	sU16    // ushort
	sI16    // short
	sU32    // uint, char, decimal32 (as bits)
	sI32    // int
	sFloat  // binary32
	sU64    // ulong, decimal64 (as bits)
	sI64    // long, timestamp
	sDouble // binary64
	sWide   // 16 bytes: uuid, decimal128
	sVar8   // a 1-byte size, then that many bytes
	sVar32  // a 4-byte size, then that many bytes
	sList0  //
	sList8  // list or map: 1-byte size and count
	sList32 // list or map: 4-byte size and count
	sArr8   // 1-byte size and count, one element constructor
	sArr32  // 4-byte size and count, one element constructor
)

// shapes gives each format code its shape and its payload's width (the
// bytes a fixed-width value takes after its constructor).
var shapes, widths = func() (s, w [256]uint8) {
	set := func(shape, width uint8, codes ...byte) {
		for _, c := range codes {
			s[c], w[c] = shape, width
		}
	}
	set(sDesc, 0, 0x00)
	set(sNull, 0, 0x40)
	set(sTrue, 0, 0x41)
	set(sFalse, 0, 0x42)
	set(sZero, 0, 0x43, 0x44)
	set(sList0, 0, 0x45)
	set(sU8, 1, 0x50, 0x52, 0x53)
	set(sI8, 1, 0x51, 0x54, 0x55)
	set(sBool, 1, 0x56)
	set(sU16, 2, 0x60)
	set(sI16, 2, 0x61)
	set(sU32, 4, 0x70, 0x73, 0x74)
	set(sI32, 4, 0x71)
	set(sFloat, 4, 0x72)
	set(sU64, 8, 0x80, 0x84)
	set(sI64, 8, 0x81, 0x83)
	set(sDouble, 8, 0x82)
	set(sWide, 16, 0x94, 0x98)
	set(sVar8, 1, 0xa0, 0xa1, 0xa3)
	set(sVar32, 4, 0xb0, 0xb1, 0xb3)
	set(sList8, 2, 0xc0, 0xc1)
	set(sList32, 8, 0xd0, 0xd1)
	set(sArr8, 2, 0xe0)
	set(sArr32, 8, 0xf0)
	return s, w
}()

// Floor visits every value of buf, a sequence of top-level values (the
// sections of a message). Each list, map, array or described value is
// walked by a call of its own (the nesting of the workloads is shallow):
// across the Visitor's calls, which keep no register, a loop then has
// only its input, position, count, element constructor and Visitor to
// reload.
func Floor(buf []byte, v Visitor) error {
	_, err := values(buf, 0, -1, 0, v)
	return err
}

// values visits n values of lim from pos (n < 0: until lim ends) and
// returns the offset after them. elem is the element constructor of an
// array's values, or 0 for values that carry their own (the floor takes
// no array of described values, whose element constructor is 0).
func values(lim []byte, pos, n int, elem byte, v Visitor) (int, error) {
	for ; n != 0; n-- {
		c := elem
		if c == 0 {
			if pos >= len(lim) {
				if n < 0 {
					return pos, nil
				}
				return pos, ErrCut
			}
			c = lim[pos]
			pos++
		}
		p := lim[pos:] // the payload, and what follows it
		w := int(widths[c])
		if w > len(p) {
			return pos, ErrCut
		}
		switch shapes[c] {
		case sDesc:
			v.Open(c, 2)
			var err error
			if pos, err = values(lim, pos, 2, 0, v); err != nil {
				return pos, err
			}
			v.Close()
		case sNull:
			v.Null()
		case sTrue:
			v.Bool(true)
		case sFalse:
			v.Bool(false)
		case sZero:
			v.Uint(0)
		case sU8:
			v.Uint(uint64(p[0]))
		case sI8:
			v.Int(int64(int8(p[0])))
		case sBool:
			v.Bool(p[0] == 1)
		case sU16:
			v.Uint(uint64(binary.BigEndian.Uint16(p)))
		case sI16:
			v.Int(int64(int16(binary.BigEndian.Uint16(p))))
		case sU32:
			v.Uint(uint64(binary.BigEndian.Uint32(p)))
		case sI32:
			v.Int(int64(int32(binary.BigEndian.Uint32(p))))
		case sFloat:
			v.Float(float64(math.Float32frombits(binary.BigEndian.Uint32(p))))
		case sU64:
			v.Uint(binary.BigEndian.Uint64(p))
		case sI64:
			v.Int(int64(binary.BigEndian.Uint64(p)))
		case sDouble:
			v.Float(math.Float64frombits(binary.BigEndian.Uint64(p)))
		case sWide:
			v.Bytes(c, p[:16])
		case sVar8, sVar32:
			size := int(p[0])
			if w == 4 {
				size = int(binary.BigEndian.Uint32(p))
			}
			if size > len(p)-w {
				return pos, ErrCut
			}
			v.Bytes(c, p[w:w+size])
			pos += size
		case sList0:
			v.Open(c, 0)
			v.Close()
		case sList8, sList32, sArr8, sArr32:
			size, count := int(p[0]), int(p[1])
			if w == 8 {
				size, count = int(binary.BigEndian.Uint32(p)), int(binary.BigEndian.Uint32(p[4:]))
			}
			end := pos + w/2 + size
			if size < w/2 || end > len(lim) {
				return pos, ErrCut
			}
			first, el := pos+w, byte(0)
			if s := shapes[c]; s == sArr8 || s == sArr32 {
				if first >= end || lim[first] == 0x00 {
					return pos, ErrCode // no constructor, or described elements
				}
				el = lim[first]
				first++
			}
			v.Open(c, count)
			if count > 0 {
				if _, err := values(lim[:end], first, count, el, v); err != nil {
					return pos, err
				}
			}
			v.Close()
			pos = end
			continue
		default:
			return pos, ErrCode
		}
		pos += w
	}
	return pos, nil
}

// Count is a Visitor that counts values and folds them into a sum, so
// that no walk can be optimised away.
type Count struct {
	Values int
	Sum    uint64
}

func (c *Count) Null()                  { c.Values++ }
func (c *Count) Bool(b bool)            { c.Values++; c.Sum += uint64(b2u(b)) }
func (c *Count) Int(x int64)            { c.Values++; c.Sum += uint64(x) }
func (c *Count) Uint(x uint64)          { c.Values++; c.Sum += x }
func (c *Count) Float(x float64)        { c.Values++; c.Sum += math.Float64bits(x) }
func (c *Count) Bytes(_ byte, p []byte) { c.Values++; c.Sum += uint64(len(p)) }
func (c *Count) Open(_ byte, n int)     { c.Values++; c.Sum += uint64(n) }
func (c *Count) Close()                 {}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
