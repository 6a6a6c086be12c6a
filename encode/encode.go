package encode

import (
	"encoding/binary"
	"math"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
	"github.com/google/uuid"
)

// Every Append function below appends one encoded value to b and returns
// the extended slice, like strconv.AppendInt. None allocates when b has
// the capacity.

// AppendNull appends null (0x40).
func AppendNull(b []byte) []byte { return append(b, byte(amqpsax.CodeNull)) }

// AppendBool appends true (0x41) or false (0x42).
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, byte(amqpsax.CodeTrue))
	}
	return append(b, byte(amqpsax.CodeFalse))
}

// AppendCodeBool appends a boolean in its one-byte form (0x56 0x00 or 0x01).
func AppendCodeBool(b []byte, v bool) []byte {
	return append(b, byte(amqpsax.CodeBool), boolByte(v))
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// AppendUbyte appends a ubyte (0x50).
func AppendUbyte(b []byte, v uint8) []byte { return append(b, byte(amqpsax.CodeUbyte), v) }

// AppendUshort appends a ushort (0x60).
func AppendUshort(b []byte, v uint16) []byte {
	return binary.BigEndian.AppendUint16(append(b, byte(amqpsax.CodeUshort)), v)
}

// AppendUint appends a uint in its smallest encoding: uint0 for 0,
// smalluint up to 255, else the four-byte 0x70.
func AppendUint(b []byte, v uint32) []byte {
	switch {
	case v == 0:
		return append(b, byte(amqpsax.CodeUint0))
	case v <= math.MaxUint8:
		return append(b, byte(amqpsax.CodeSmallUint), byte(v))
	}
	return AppendCodeUint(b, v)
}

// AppendCodeUint appends a uint in its four-byte encoding (0x70).
func AppendCodeUint(b []byte, v uint32) []byte {
	return binary.BigEndian.AppendUint32(append(b, byte(amqpsax.CodeUint)), v)
}

// AppendCodeSmallUint appends a uint in its one-byte encoding (smalluint, 0x52).
func AppendCodeSmallUint(b []byte, v uint8) []byte {
	return append(b, byte(amqpsax.CodeSmallUint), v)
}

// AppendCodeUint0 appends the uint 0 in its empty encoding (uint0, 0x43).
func AppendCodeUint0(b []byte) []byte { return append(b, byte(amqpsax.CodeUint0)) }

// AppendUlong appends a ulong in its smallest encoding: ulong0 for 0,
// smallulong up to 255, else the eight-byte 0x80.
func AppendUlong(b []byte, v uint64) []byte {
	switch {
	case v == 0:
		return append(b, byte(amqpsax.CodeUlong0))
	case v <= math.MaxUint8:
		return append(b, byte(amqpsax.CodeSmallUlong), byte(v))
	}
	return AppendCodeUlong(b, v)
}

// AppendCodeUlong appends a ulong in its eight-byte encoding (0x80).
func AppendCodeUlong(b []byte, v uint64) []byte {
	return binary.BigEndian.AppendUint64(append(b, byte(amqpsax.CodeUlong)), v)
}

// AppendCodeSmallUlong appends a ulong in its one-byte encoding (smallulong, 0x53).
func AppendCodeSmallUlong(b []byte, v uint8) []byte {
	return append(b, byte(amqpsax.CodeSmallUlong), v)
}

// AppendCodeUlong0 appends the ulong 0 in its empty encoding (ulong0, 0x44).
func AppendCodeUlong0(b []byte) []byte { return append(b, byte(amqpsax.CodeUlong0)) }

// AppendByte appends a byte (0x51).
func AppendByte(b []byte, v int8) []byte { return append(b, byte(amqpsax.CodeByte), byte(v)) }

// AppendShort appends a short (0x61).
func AppendShort(b []byte, v int16) []byte {
	return binary.BigEndian.AppendUint16(append(b, byte(amqpsax.CodeShort)), uint16(v))
}

// AppendInt appends an int in its smallest encoding: smallint from -128 to
// 127, else the four-byte 0x71.
func AppendInt(b []byte, v int32) []byte {
	if v >= math.MinInt8 && v <= math.MaxInt8 {
		return AppendCodeSmallInt(b, int8(v))
	}
	return AppendCodeInt(b, v)
}

// AppendCodeInt appends an int in its four-byte encoding (0x71).
func AppendCodeInt(b []byte, v int32) []byte {
	return binary.BigEndian.AppendUint32(append(b, byte(amqpsax.CodeInt)), uint32(v))
}

// AppendCodeSmallInt appends an int in its one-byte encoding (smallint, 0x54).
func AppendCodeSmallInt(b []byte, v int8) []byte {
	return append(b, byte(amqpsax.CodeSmallInt), byte(v))
}

// AppendLong appends a long in its smallest encoding: smalllong from -128
// to 127, else the eight-byte 0x81.
func AppendLong(b []byte, v int64) []byte {
	if v >= math.MinInt8 && v <= math.MaxInt8 {
		return AppendCodeSmallLong(b, int8(v))
	}
	return AppendCodeLong(b, v)
}

// AppendCodeLong appends a long in its eight-byte encoding (0x81).
func AppendCodeLong(b []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(append(b, byte(amqpsax.CodeLong)), uint64(v))
}

// AppendCodeSmallLong appends a long in its one-byte encoding (smalllong, 0x55).
func AppendCodeSmallLong(b []byte, v int8) []byte {
	return append(b, byte(amqpsax.CodeSmallLong), byte(v))
}

// AppendFloat appends an IEEE 754 binary32 float (0x72), bits unchanged.
func AppendFloat(b []byte, v float32) []byte {
	return binary.BigEndian.AppendUint32(append(b, byte(amqpsax.CodeFloat)), math.Float32bits(v))
}

// AppendDouble appends an IEEE 754 binary64 double (0x82), bits unchanged.
func AppendDouble(b []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(append(b, byte(amqpsax.CodeDouble)), math.Float64bits(v))
}

// AppendDecimal32 appends a decimal32 (0x74).
func AppendDecimal32(b []byte, v amqpsax.Decimal32) []byte {
	return append(append(b, byte(amqpsax.CodeDecimal32)), v[:]...)
}

// AppendDecimal64 appends a decimal64 (0x84).
func AppendDecimal64(b []byte, v amqpsax.Decimal64) []byte {
	return append(append(b, byte(amqpsax.CodeDecimal64)), v[:]...)
}

// AppendDecimal128 appends a decimal128 (0x94).
func AppendDecimal128(b []byte, v amqpsax.Decimal128) []byte {
	return append(append(b, byte(amqpsax.CodeDecimal128)), v[:]...)
}

// AppendChar appends a char (0x73) as a UTF-32BE code point. The rune is
// written as it is, without checking that it is a valid code point.
func AppendChar(b []byte, v rune) []byte {
	return binary.BigEndian.AppendUint32(append(b, byte(amqpsax.CodeChar)), uint32(v))
}

// AppendTimestamp appends a timestamp (0x83): milliseconds since the Unix
// epoch.
func AppendTimestamp(b []byte, ms int64) []byte {
	return binary.BigEndian.AppendUint64(append(b, byte(amqpsax.CodeTimestamp)), uint64(ms))
}

// AppendUUID appends a uuid (0x98).
func AppendUUID(b []byte, v uuid.UUID) []byte {
	return append(append(b, byte(amqpsax.CodeUUID)), v[:]...)
}

// AppendBinary appends a binary: vbin8 (0xa0) when v is at most 255 bytes
// long, else vbin32 (0xb0).
func AppendBinary(b []byte, v []byte) []byte {
	return appendVariable(b, amqpsax.CodeVbin8, v)
}

// AppendString appends a string: str8-utf8 (0xa1) when v is at most 255
// bytes long, else str32-utf8 (0xb1). v is not checked for valid UTF-8.
func AppendString(b []byte, v string) []byte {
	return appendVariable(b, amqpsax.CodeStr8, v)
}

// AppendStringBytes is AppendString for a string held in a byte slice.
func AppendStringBytes(b []byte, v []byte) []byte {
	return appendVariable(b, amqpsax.CodeStr8, v)
}

// AppendSymbol appends a symbol: sym8 (0xa3) when v is at most 255 bytes
// long, else sym32 (0xb3). v is not checked for ASCII.
func AppendSymbol(b []byte, v string) []byte {
	return appendVariable(b, amqpsax.CodeSym8, v)
}

// AppendSymbolBytes is AppendSymbol for a symbol held in a byte slice.
func AppendSymbolBytes(b []byte, v []byte) []byte {
	return appendVariable(b, amqpsax.CodeSym8, v)
}

// AppendCodeVbin32 appends a binary in its four-byte-size form (vbin32),
// whatever its length.
func AppendCodeVbin32(b []byte, v []byte) []byte {
	return appendVariable32(b, amqpsax.CodeVbin32, v)
}

// AppendCodeStr32 appends a string in its four-byte-size form (str32-utf8).
func AppendCodeStr32(b []byte, v string) []byte {
	return appendVariable32(b, amqpsax.CodeStr32, v)
}

// AppendCodeSym32 appends a symbol in its four-byte-size form (sym32).
func AppendCodeSym32(b []byte, v string) []byte {
	return appendVariable32(b, amqpsax.CodeSym32, v)
}

// appendVariable writes v with the 8-bit code c8 when it fits, else with
// the matching 32-bit code (c8 + 0x10, as the spec lays them out).
func appendVariable[T string | []byte](b []byte, c8 amqpsax.Code, v T) []byte {
	if len(v) <= math.MaxUint8 {
		return append(append(b, byte(c8), byte(len(v))), v...)
	}
	return appendVariable32(b, c8+0x10, v)
}

func appendVariable32[T string | []byte](b []byte, c32 amqpsax.Code, v T) []byte {
	b = binary.BigEndian.AppendUint32(append(b, byte(c32)), uint32(len(v)))
	return append(b, v...)
}

// AppendDescribed appends the descriptor constructor (0x00). Append the
// descriptor next (usually AppendUlong or AppendSymbol), then the value.
func AppendDescribed(b []byte) []byte { return append(b, byte(amqpsax.CodeDescribed)) }

// AppendCodeList0 appends the empty list in its empty encoding (list0, 0x45).
func AppendCodeList0(b []byte) []byte { return append(b, byte(amqpsax.CodeList0)) }

// BeginList appends the header of a list whose size and count are not yet
// known. Append the elements, then call EndList with the length b had
// before BeginList:
//
//	start := len(b)
//	b = encode.BeginList(b)
//	b = encode.AppendUint(b, 1)
//	b = encode.AppendString(b, "two")
//	b = encode.EndList(b, start, 2)
func BeginList(b []byte) []byte { return beginCompound(b, amqpsax.CodeList32) }

// EndList completes the list begun at start with count elements, in its
// smallest encoding: list0 when empty, list8 when the size and count fit
// in a byte (the elements move down by six bytes), else list32.
func EndList(b []byte, start, count int) []byte {
	if count == 0 && len(b) == start+compoundHeader32 {
		b[start] = byte(amqpsax.CodeList0)
		return b[:start+1]
	}
	return endCompound(b, start, count, true)
}

// EndList32 completes the list begun at start with count elements as a
// list32, whatever its size.
func EndList32(b []byte, start, count int) []byte { return endCompound(b, start, count, false) }

// BeginMap appends the header of a map; append keys and values
// alternately, then call EndMap with the length b had before BeginMap.
func BeginMap(b []byte) []byte { return beginCompound(b, amqpsax.CodeMap32) }

// EndMap completes the map begun at start holding pairs key/value pairs,
// as a map8 when it fits, else a map32.
func EndMap(b []byte, start, pairs int) []byte { return endCompound(b, start, 2*pairs, true) }

// EndMap32 completes the map begun at start as a map32, whatever its size.
func EndMap32(b []byte, start, pairs int) []byte { return endCompound(b, start, 2*pairs, false) }

// BeginArray appends the header of an array and its element constructor
// elem. Append count element bodies with the Append…Elem functions (a body
// is a value without its constructor), then call EndArray with the length
// b had before BeginArray. For an array of described values, call
// BeginDescribedArray instead.
func BeginArray(b []byte, elem amqpsax.Code) []byte {
	return append(beginCompound(b, amqpsax.CodeArray32), byte(elem))
}

// BeginDescribedArray appends the header of an array whose elements are
// all described by descriptor (an encoded value, e.g. AppendUlong(nil,
// 0x70)), with element constructor elem.
func BeginDescribedArray(b []byte, descriptor []byte, elem amqpsax.Code) []byte {
	b = append(beginCompound(b, amqpsax.CodeArray32), byte(amqpsax.CodeDescribed))
	return append(append(b, descriptor...), byte(elem))
}

// EndArray completes the array begun at start holding count elements, as
// an array8 when it fits, else an array32.
func EndArray(b []byte, start, count int) []byte { return endCompound(b, start, count, true) }

// EndArray32 completes the array begun at start as an array32.
func EndArray32(b []byte, start, count int) []byte { return endCompound(b, start, count, false) }

// compoundHeader32 is the length of a 32-bit compound header: the code,
// a four-byte size and a four-byte count.
const compoundHeader32 = 9

func beginCompound(b []byte, c32 amqpsax.Code) []byte {
	return append(b, byte(c32), 0, 0, 0, 0, 0, 0, 0, 0)
}

// endCompound patches the size and count of the compound (list, map or
// array) whose 32-bit header is at b[start:]. With small set, a compound
// whose size and count fit in a byte is rewritten in its 8-bit form (code
// - 0x10), moving its contents down by six bytes.
func endCompound(b []byte, start, count int, small bool) []byte {
	content := len(b) - start - compoundHeader32
	if small && content+1 <= math.MaxUint8 && count <= math.MaxUint8 {
		b[start] -= 0x10 // list32 → list8, map32 → map8, array32 → array8
		b[start+1] = byte(content + 1)
		b[start+2] = byte(count)
		n := copy(b[start+3:], b[start+compoundHeader32:])
		return b[:start+3+n]
	}
	binary.BigEndian.PutUint32(b[start+1:], uint32(content+4))
	binary.BigEndian.PutUint32(b[start+5:], uint32(count))
	return b
}

// Array element bodies. Each appends one element of an array whose
// element constructor is c, without the constructor, in c's width.

// AppendUintElem appends the body of an unsigned element (ubyte, ushort,
// uint, smalluint, uint0, ulong, smallulong, ulong0), truncated to c's width.
func AppendUintElem(b []byte, c amqpsax.Code, v uint64) []byte {
	switch wire.Table[c].W() {
	case 0:
		return b
	case 1:
		return append(b, byte(v))
	case 2:
		return binary.BigEndian.AppendUint16(b, uint16(v))
	case 4:
		return binary.BigEndian.AppendUint32(b, uint32(v))
	}
	return binary.BigEndian.AppendUint64(b, v)
}

// AppendIntElem appends the body of a signed element (byte, short, int,
// smallint, long, smalllong), truncated to c's width.
func AppendIntElem(b []byte, c amqpsax.Code, v int64) []byte {
	return AppendUintElem(b, c, uint64(v))
}

// AppendBoolElem appends the body of a boolean element: one byte for 0x56,
// nothing for true (0x41) and false (0x42) arrays.
func AppendBoolElem(b []byte, c amqpsax.Code, v bool) []byte {
	if c == amqpsax.CodeBool {
		return append(b, boolByte(v))
	}
	return b
}

// AppendBytesElem appends the body of a binary, string or symbol element:
// its size in c's width (one byte for vbin8, str8, sym8; else four), then v.
func AppendBytesElem(b []byte, c amqpsax.Code, v []byte) []byte {
	if wire.Table[c].W() == 1 {
		return append(append(b, byte(len(v))), v...)
	}
	return append(binary.BigEndian.AppendUint32(b, uint32(len(v))), v...)
}

// AppendStringElem appends the body of a binary, string or symbol element
// held in a string, as AppendBytesElem does.
func AppendStringElem(b []byte, c amqpsax.Code, v string) []byte {
	if wire.Table[c].W() == 1 {
		return append(append(b, byte(len(v))), v...)
	}
	return append(binary.BigEndian.AppendUint32(b, uint32(len(v))), v...)
}
