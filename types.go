package amqpsax

import "strconv"

// Code is a format code: the constructor byte that starts every encoded
// AMQP value (AMQP 1.0 part 1 §1.6). It names a wire encoding, not a type:
// CodeSmallUint, CodeUint0 and CodeUint are three encodings of KindUint.
type Code uint8

// The format codes of AMQP 1.0 part 1 §1.6, one per encoding, and
// CodeDescribed, the constructor of a described type (§1.2).
const (
	CodeDescribed Code = 0x00 // descriptor constructor

	CodeNull       Code = 0x40 // null
	CodeBool       Code = 0x56 // boolean, one byte 0x00 or 0x01
	CodeTrue       Code = 0x41 // boolean true, no payload
	CodeFalse      Code = 0x42 // boolean false, no payload
	CodeUbyte      Code = 0x50 // ubyte
	CodeUshort     Code = 0x60 // ushort
	CodeUint       Code = 0x70 // uint, four bytes
	CodeSmallUint  Code = 0x52 // uint, one byte
	CodeUint0      Code = 0x43 // uint 0, no payload
	CodeUlong      Code = 0x80 // ulong, eight bytes
	CodeSmallUlong Code = 0x53 // ulong, one byte
	CodeUlong0     Code = 0x44 // ulong 0, no payload
	CodeByte       Code = 0x51 // byte
	CodeShort      Code = 0x61 // short
	CodeInt        Code = 0x71 // int, four bytes
	CodeSmallInt   Code = 0x54 // int, one signed byte
	CodeLong       Code = 0x81 // long, eight bytes
	CodeSmallLong  Code = 0x55 // long, one signed byte
	CodeFloat      Code = 0x72 // float, IEEE 754 binary32
	CodeDouble     Code = 0x82 // double, IEEE 754 binary64
	CodeDecimal32  Code = 0x74 // decimal32, IEEE 754 decimal32
	CodeDecimal64  Code = 0x84 // decimal64, IEEE 754 decimal64
	CodeDecimal128 Code = 0x94 // decimal128, IEEE 754 decimal128
	CodeChar       Code = 0x73 // char, UTF-32BE code point
	CodeTimestamp  Code = 0x83 // timestamp, ms64
	CodeUUID       Code = 0x98 // uuid, 16 bytes
	CodeVbin8      Code = 0xa0 // binary, 1-byte size
	CodeVbin32     Code = 0xb0 // binary, 4-byte size
	CodeStr8       Code = 0xa1 // string, 1-byte size, UTF-8
	CodeStr32      Code = 0xb1 // string, 4-byte size, UTF-8
	CodeSym8       Code = 0xa3 // symbol, 1-byte size, ASCII
	CodeSym32      Code = 0xb3 // symbol, 4-byte size, ASCII
	CodeList0      Code = 0x45 // empty list, no payload
	CodeList8      Code = 0xc0 // list, 1-byte size and count
	CodeList32     Code = 0xd0 // list, 4-byte size and count
	CodeMap8       Code = 0xc1 // map, 1-byte size and count
	CodeMap32      Code = 0xd1 // map, 4-byte size and count
	CodeArray8     Code = 0xe0 // array, 1-byte size and count
	CodeArray32    Code = 0xf0 // array, 4-byte size and count
)

// codeNames holds the spec's name of each encoding; where the spec names
// none, or shares one name between types ("ieee-754"), the type's name.
var codeNames = [256]string{
	CodeDescribed:  "described",
	CodeNull:       "null",
	CodeBool:       "boolean",
	CodeTrue:       "true",
	CodeFalse:      "false",
	CodeUbyte:      "ubyte",
	CodeUshort:     "ushort",
	CodeUint:       "uint",
	CodeSmallUint:  "smalluint",
	CodeUint0:      "uint0",
	CodeUlong:      "ulong",
	CodeSmallUlong: "smallulong",
	CodeUlong0:     "ulong0",
	CodeByte:       "byte",
	CodeShort:      "short",
	CodeInt:        "int",
	CodeSmallInt:   "smallint",
	CodeLong:       "long",
	CodeSmallLong:  "smalllong",
	CodeFloat:      "float",
	CodeDouble:     "double",
	CodeDecimal32:  "decimal32",
	CodeDecimal64:  "decimal64",
	CodeDecimal128: "decimal128",
	CodeChar:       "utf32",
	CodeTimestamp:  "ms64",
	CodeUUID:       "uuid",
	CodeVbin8:      "vbin8",
	CodeVbin32:     "vbin32",
	CodeStr8:       "str8-utf8",
	CodeStr32:      "str32-utf8",
	CodeSym8:       "sym8",
	CodeSym32:      "sym32",
	CodeList0:      "list0",
	CodeList8:      "list8",
	CodeList32:     "list32",
	CodeMap8:       "map8",
	CodeMap32:      "map32",
	CodeArray8:     "array8",
	CodeArray32:    "array32",
}

// codeKinds maps every defined code to its type; undefined codes map to
// KindInvalid. It is the one table of the kind of each code: internal/wire
// builds the decoders' code table from it.
var codeKinds = [256]Kind{
	CodeDescribed:  KindDescribed,
	CodeNull:       KindNull,
	CodeBool:       KindBool,
	CodeTrue:       KindBool,
	CodeFalse:      KindBool,
	CodeUbyte:      KindUbyte,
	CodeUshort:     KindUshort,
	CodeUint:       KindUint,
	CodeSmallUint:  KindUint,
	CodeUint0:      KindUint,
	CodeUlong:      KindUlong,
	CodeSmallUlong: KindUlong,
	CodeUlong0:     KindUlong,
	CodeByte:       KindByte,
	CodeShort:      KindShort,
	CodeInt:        KindInt,
	CodeSmallInt:   KindInt,
	CodeLong:       KindLong,
	CodeSmallLong:  KindLong,
	CodeFloat:      KindFloat,
	CodeDouble:     KindDouble,
	CodeDecimal32:  KindDecimal32,
	CodeDecimal64:  KindDecimal64,
	CodeDecimal128: KindDecimal128,
	CodeChar:       KindChar,
	CodeTimestamp:  KindTimestamp,
	CodeUUID:       KindUUID,
	CodeVbin8:      KindBinary,
	CodeVbin32:     KindBinary,
	CodeStr8:       KindString,
	CodeStr32:      KindString,
	CodeSym8:       KindSymbol,
	CodeSym32:      KindSymbol,
	CodeList0:      KindList,
	CodeList8:      KindList,
	CodeList32:     KindList,
	CodeMap8:       KindMap,
	CodeMap32:      KindMap,
	CodeArray8:     KindArray,
	CodeArray32:    KindArray,
}

// Kind returns the AMQP type the code encodes, or KindInvalid for a byte
// the spec does not define.
func (c Code) Kind() Kind { return codeKinds[c] }

// String returns the spec's name of the encoding ("smalluint", "str8-utf8",
// "list32", …), or "0x" and two hex digits for an undefined code.
func (c Code) String() string {
	if s := codeNames[c]; s != "" {
		return s
	}
	const hex = "0123456789abcdef"
	return "0x" + string([]byte{hex[c>>4], hex[c&0xf]})
}

// Kind is an AMQP type (AMQP 1.0 part 1 §1.6), whatever its encoding.
// The zero Kind is KindInvalid.
type Kind uint8

// The AMQP types, primitive then compound, then described.
const (
	KindInvalid Kind = iota
	KindNull
	KindBool
	KindUbyte
	KindUshort
	KindUint
	KindUlong
	KindByte
	KindShort
	KindInt
	KindLong
	KindFloat
	KindDouble
	KindDecimal32
	KindDecimal64
	KindDecimal128
	KindChar
	KindTimestamp
	KindUUID
	KindBinary
	KindString
	KindSymbol
	KindList
	KindMap
	KindArray
	KindDescribed
)

var kindNames = [...]string{
	KindInvalid:    "invalid",
	KindNull:       "null",
	KindBool:       "boolean",
	KindUbyte:      "ubyte",
	KindUshort:     "ushort",
	KindUint:       "uint",
	KindUlong:      "ulong",
	KindByte:       "byte",
	KindShort:      "short",
	KindInt:        "int",
	KindLong:       "long",
	KindFloat:      "float",
	KindDouble:     "double",
	KindDecimal32:  "decimal32",
	KindDecimal64:  "decimal64",
	KindDecimal128: "decimal128",
	KindChar:       "char",
	KindTimestamp:  "timestamp",
	KindUUID:       "uuid",
	KindBinary:     "binary",
	KindString:     "string",
	KindSymbol:     "symbol",
	KindList:       "list",
	KindMap:        "map",
	KindArray:      "array",
	KindDescribed:  "described",
}

// String returns the AMQP type name ("uint", "boolean", "list", …), or
// "Kind(N)" for a value outside the defined set.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Decimal32 is an IEEE 754 decimal32 value as its four encoded bytes,
// big-endian, exactly as on the wire. The library does no decimal
// arithmetic; the bytes are handed to the caller unchanged.
type Decimal32 [4]byte

// Decimal64 is an IEEE 754 decimal64 value as its eight encoded bytes.
type Decimal64 [8]byte

// Decimal128 is an IEEE 754 decimal128 value as its sixteen encoded bytes.
type Decimal128 [16]byte

// DefaultMaxDepth is the nesting limit of a decoder whose MaxDepth option
// is 0: how many lists, maps, arrays and described values may be open at
// once.
const DefaultMaxDepth = 1000
