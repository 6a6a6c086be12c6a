// Package cases is the case table shared by the tests of dispatch, stream
// and encode, and by the fuzz targets' seed corpora: encoded input in hex,
// and the event trace (package internal/trace) a decoder must report, or
// the error and offset it must fail with.
package cases

import (
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
)

// Case is one well-formed value.
type Case struct {
	Name  string
	Hex   string // one encoded value
	Trace string
	Where string // file:line of the row, for test messages
}

func (c Case) String() string { return c.Name + " (" + c.Where + ")" }

// Bad is one malformed input and how decoding it must fail.
type Bad struct {
	Name   string
	Hex    string
	Err    error // the cause, for errors.Is
	Offset int
	Where  string // file:line of the row, for test messages
}

func (c Bad) String() string { return c.Name + " (" + c.Where + ")" }

// where returns the file:line of its caller's caller: a row of a table.
func where() string {
	_, file, line, _ := runtime.Caller(2)
	return filepath.Base(file) + ":" + strconv.Itoa(line)
}

// v and b make a row of the tables, with its file:line.
func v(name, hex, trace string) Case { return Case{name, hex, trace, where()} }
func b(name, hex string, err error, off int) Bad {
	return Bad{name, hex, err, off, where()}
}

// Bytes returns the input of a case.
func Bytes(h string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(h, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

func rep(h string, n int) string { return strings.Repeat(h, n) }

var (
	a255 = rep("61", 255)
	a256 = rep("61", 256)
	a252 = rep("61", 252)
)

// Valid covers every format code, the 8/32-bit boundaries, empty
// compounds, arrays of every element type, described values (nested
// descriptors, inside lists and arrays) and deep nesting.
var Valid = []Case{
	v("null", "40", "null"),
	v("true", "41", "bool:true"),
	v("false", "42", "bool:false"),
	v("bool56 1", "5601", "bool:true"),
	v("bool56 0", "5600", "bool:false"),
	v("ubyte 0", "5000", "ubyte:0"),
	v("ubyte 255", "50ff", "ubyte:255"),
	v("ushort", "60ffff", "ushort:65535"),
	v("uint", "70ffffffff", "uint:4294967295"),
	v("uint 1 wide", "7000000001", "uint:1"),
	v("smalluint", "52ff", "uint:255"),
	v("uint0", "43", "uint:0"),
	v("ulong", "80ffffffffffffffff", "ulong:18446744073709551615"),
	v("smallulong", "5370", "ulong:112"),
	v("ulong0", "44", "ulong:0"),
	v("byte", "5180", "byte:-128"),
	v("short", "618000", "short:-32768"),
	v("int", "7180000000", "int:-2147483648"),
	v("smallint", "54ff", "int:-1"),
	v("long", "818000000000000000", "long:-9223372036854775808"),
	v("smalllong", "557f", "long:127"),
	v("float", "723fc00000", "float:3fc00000"),
	v("float nan", "727fc00000", "float:7fc00000"),
	v("double", "82bff0000000000000", "double:bff0000000000000"),
	v("decimal32", "7401020304", "decimal32:01020304"),
	v("decimal64", "840102030405060708", "decimal64:0102030405060708"),
	v("decimal128", "94000102030405060708090a0b0c0d0e0f", "decimal128:000102030405060708090a0b0c0d0e0f"),
	v("char", "730010ffff", "char:1114111"),
	v("char 0", "7300000000", "char:0"),
	v("timestamp", "83fffffffffffffffe", "timestamp:-2"),
	v("uuid", "9800112233445566778899aabbccddeeff", "uuid:00112233-4455-6677-8899-aabbccddeeff"),
	v("vbin8 empty", "a000", "binary:"),
	v("vbin8 255", "a0ff"+a255, "binary:"+a255),
	v("vbin32 empty", "b000000000", "binary:"),
	v("vbin32 256", "b000000100"+a256, "binary:"+a256),
	v("str8", "a10568c3a9e282", "string:68c3a9e282"), // not valid UTF-8 at the end: unchecked by default
	v("str8 255", "a1ff"+a255, "string:"+a255),
	v("str32 256", "b100000100"+a256, "string:"+a256),
	v("str32 short", "b10000000161", "string:61"),
	v("sym8", "a304616d7170", "symbol:616d7170"),
	v("sym32", "b30000000161", "symbol:61"),
	v("sym32 256", "b300000100"+a256, "symbol:"+a256),
	v("list0", "45", "list:0 /list"),
	v("list8 empty", "c00100", "list:0 /list"),
	v("list32 empty", "d00000000400000000", "list:0 /list"),
	v("list8", "c0030243"+"40", "list:2 uint:0 null /list"),
	v("list8 largest", "c0ff01a1fc"+a252, "list:1 string:"+a252 /* size 255 */ +" /list"),
	v("list32", "d0000000070000000243"+"5201", "list:2 uint:0 uint:1 /list"),
	v("list32 large", "d00000010500000001a1ff"+a255, "list:1 string:"+a255+" /list"),
	v("map8 empty", "c10100", "map:0 /map"),
	v("map8", "c10602a3016b5401", "map:1 symbol:6b int:1 /map"),
	v("map32", "d100000009"+"00000002a3016b5401", "map:1 symbol:6b int:1 /map"),
	v("map mixed keys", "c10b04"+"5201"+"a10161"+"40"+"c0020145", "map:2 uint:1 string:61 null list:1 list:0 /list /list /map"),
	v("nested lists", "c00701c00401c00100", "list:1 list:1 list:0 /list /list /list"),
	v("array8 ubyte", "e0040250"+"0102", "array:2:ubyte ubyte:1 ubyte:2 /array"),
	v("array8 empty", "e0020071", "array:0:int /array"),
	v("array32 empty", "f0000000050000000071", "array:0:int /array"),
	v("array8 bool56", "e00402560100", "array:2:boolean bool:true bool:false /array"),
	v("array8 true", "e0020341", "array:3:boolean bool:true bool:true bool:true /array"),
	v("array8 false", "e0020142", "array:1:boolean bool:false /array"),
	v("array8 null", "e0020340", "array:3:null null null null /array"),
	v("array8 uint0", "e0020243", "array:2:uint uint:0 uint:0 /array"),
	v("array8 ulong0", "e0020144", "array:1:ulong ulong:0 /array"),
	// The amplification of issue 13: 255 values from 4 bytes, the most
	// an array8 allows (AppendUints grows its slice once for them).
	v("array8 255 uint0", "e002ff43", "array:255:uint"+strings.Repeat(" uint:0", 255)+" /array"),
	v("array8 list0", "e0020245", "array:2:list list:0 /list list:0 /list /array"),
	v("array8 smalluint", "e004025201ff", "array:2:uint uint:1 uint:255 /array"),
	v("array8 uint", "e00601700000000a", "array:1:uint uint:10 /array"),
	v("array8 smallulong", "e003015307", "array:1:ulong ulong:7 /array"),
	v("array8 ulong", "e00a01800000000000000007", "array:1:ulong ulong:7 /array"),
	v("array8 ushort", "e004016000ff", "array:1:ushort ushort:255 /array"),
	v("array8 byte", "e0030151ff", "array:1:byte byte:-1 /array"),
	v("array8 short", "e0040161fffe", "array:1:short short:-2 /array"),
	v("array8 smallint", "e00402548001", "array:2:int int:-128 int:1 /array"),
	v("array8 int", "e00a0271ffffffff00000001", "array:2:int int:-1 int:1 /array"),
	v("array8 smalllong", "e0030155fe", "array:1:long long:-2 /array"),
	v("array8 long", "e00a0181fffffffffffffffd", "array:1:long long:-3 /array"),
	v("array8 float", "e00601723f800000", "array:1:float float:3f800000 /array"),
	v("array8 double", "e00a01823ff0000000000000", "array:1:double double:3ff0000000000000 /array"),
	v("array8 decimal32", "e0060174"+"01020304", "array:1:decimal32 decimal32:01020304 /array"),
	v("array8 decimal64", "e00a0184"+"0102030405060708", "array:1:decimal64 decimal64:0102030405060708 /array"),
	v("array8 decimal128", "e0120194"+rep("ab", 16), "array:1:decimal128 decimal128:"+rep("ab", 16)+" /array"),
	v("array8 char", "e006017300000041", "array:1:char char:65 /array"),
	v("array8 timestamp", "e00a0183000000000000000a", "array:1:timestamp timestamp:10 /array"),
	v("array8 uuid", "e0120198"+rep("01", 16), "array:1:uuid uuid:01010101-0101-0101-0101-010101010101 /array"),
	v("array8 vbin8", "e00502a0"+"0161"+"00", "array:2:binary binary:61 binary: /array"),
	v("array8 vbin32", "e00701b0"+"0000000161", "array:1:binary binary:61 /array"),
	v("array8 str8", "e00502a1"+"0161"+"00", "array:2:string string:61 string: /array"),
	v("array8 str32", "e00701b1"+"0000000161", "array:1:string string:61 /array"),
	v("array8 sym8", "e00702a3"+"0161"+"026263", "array:2:symbol symbol:61 symbol:6263 /array"),
	v("array8 sym32", "e00701b3"+"0000000161", "array:1:symbol symbol:61 /array"),
	v("array8 list8", "e00702c0"+"0100"+"020140", "array:2:list list:0 /list list:1 null /list /array"),
	v("array8 list32", "e00b01d0"+"00000005"+"00000001"+"40", "array:1:list list:1 null /list /array"),
	v("array8 map8", "e00601c1"+"03"+"02"+"4041", "array:1:map map:1 null bool:true /map /array"),
	v("array8 map32", "e00a01d1"+"00000004"+"00000000", "array:1:map map:0 /map /array"),
	v("array8 array8", "e00701e0"+"0402"+"50"+"0102", "array:1:array array:2:ubyte ubyte:1 ubyte:2 /array /array"),
	v("array8 array32", "e00c01f0"+"00000006"+"00000001"+"52"+"05", "array:1:array array:1:uint uint:5 /array /array"),
	v("array32 int", "f00000000d0000000271"+"00000001"+"ffffffff", "array:2:int int:1 int:-1 /array"),
	v("array described ulong", "e00702005373"+"52"+"0102",
		"array:2:described described ulong:115 uint:1 /described described ulong:115 uint:2 /described /array"),
	v("array described symbol", "e00602"+"00a30178"+"45",
		"array:2:described described symbol:78 list:0 /list /described described symbol:78 list:0 /list /described /array"),
	v("array described list", "e00801"+"005370"+"c0"+"020140",
		"array:1:described described ulong:112 list:1 null /list /described /array"),
	v("array described empty", "e005000053"+"70"+"40", "array:0:described /array"),
	// The shape of the validation attack, small: a sym32 descriptor
	// replayed for zero-width elements.
	v("array described sym32 descriptor, null elements", "e00b03"+"00b30000000361626340",
		"array:3:described"+rep(" described symbol:616263 null /described", 3)+" /array"),
	v("described", "005370"+"45", "described ulong:112 list:0 /list /described"),
	v("described symbol", "00a30178"+"40", "described symbol:78 null /described"),
	v("described described descriptor", "00"+"00537040"+"5201", "described described ulong:112 null /described uint:1 /described"),
	v("described described value", "005301"+"005302"+"40", "described ulong:1 described ulong:2 null /described /described"),
	v("described list descriptor", "00c0030152"+"0140", "described list:1 uint:1 /list null /described"),
	v("list of described", "c00702005370455201", "list:2 described ulong:112 list:0 /list /described uint:1 /list"),
	v("properties", "005373c0170d"+"a1036d6964"+"40"+"a10471756575"+rep("40", 10),
		"described ulong:115 list:13 string:6d6964 null string:71756575"+rep(" null", 10)+" /list /described"),
}

// Invalid covers every kind of malformed input the decoders must reject,
// with the offset they must report.
var Invalid = []Bad{
	b("empty", "", io.ErrUnexpectedEOF, 0),
	b("invalid code", "3f", amqpsax.ErrInvalidCode, 0),
	b("invalid code in list", "c0020101", amqpsax.ErrInvalidCode, 3),
	b("reserved 0xff", "ff", amqpsax.ErrInvalidCode, 0),
	b("bool56 2", "5602", amqpsax.ErrInvalidBool, 0),
	b("uint short", "70000000", io.ErrUnexpectedEOF, 0),
	b("str8 past end", "a10561", io.ErrUnexpectedEOF, 0),
	b("str32 huge", "b1ffffffff61", io.ErrUnexpectedEOF, 0),
	b("list8 size 0", "c000", amqpsax.ErrSizeMismatch, 0),
	b("list32 size 3", "d000000003000000", amqpsax.ErrSizeMismatch, 0),
	b("list8 count > size", "c00203"+"40", amqpsax.ErrCountTooLarge, 0),
	b("list32 count 2^32-1", "d000000004ffffffff", amqpsax.ErrCountTooLarge, 0),
	b("list8 size > contents", "c00301"+"4040", amqpsax.ErrSizeMismatch, 0),
	b("list8 contents > size", "c00201"+"5201", amqpsax.ErrOverrun, 3),
	b("map odd count", "c1020140", amqpsax.ErrOddMapCount, 0),
	b("map32 odd count", "d10000000500000001"+"40", amqpsax.ErrOddMapCount, 0),
	b("array no ctor", "e00100", amqpsax.ErrSizeMismatch, 0),
	b("array bad elem code", "e002013f", amqpsax.ErrInvalidCode, 3),
	b("array count > bytes", "e0030370"+"00", amqpsax.ErrCountTooLarge, 3),
	b("array fixed size mismatch", "e0040150"+"0102", amqpsax.ErrSizeMismatch, 3),
	b("array 2^31 nulls", "f000000005"+"80000000"+"40", amqpsax.ErrCountTooLarge, 0),
	b("array 2^32-1 nulls", "f000000005"+"ffffffff"+"40", amqpsax.ErrCountTooLarge, 0),
	b("array nested described ctor", "e00601"+"005370"+"005370", amqpsax.ErrInvalidArrayCode, 6),
	b("array compound descriptor", "e00601"+"00c00100"+"40", amqpsax.ErrInvalidArrayCode, 4),
	b("array bool56 2", "e003015602", amqpsax.ErrInvalidBool, 4),
	b("array str8 elems overrun", "e00402a1"+"0561", io.ErrUnexpectedEOF, 4),
	b("array var elems short of size", "e00601a1"+"0161"+"0000", amqpsax.ErrSizeMismatch, 0),
	b("descriptor without value", "005370", io.ErrUnexpectedEOF, 3),
	b("described without descriptor", "00", io.ErrUnexpectedEOF, 1),
	b("invalid descriptor code", "003f", amqpsax.ErrInvalidCode, 1),
	b("list in list past end", "c00401"+"c00501", io.ErrUnexpectedEOF, 3),

	// Cut versus corrupt: a value that runs past its container is
	// truncation only where the input ends first (more bytes may complete
	// it); where the container ends first and the input goes on, no
	// further input can mend it.
	b("str8 in list, input ends", "c00301"+"a105", io.ErrUnexpectedEOF, 3),
	b("str8 overruns list, input goes on", "c00301"+"a105"+"6161616161", amqpsax.ErrOverrun, 3),
	b("key overruns map, input goes on", "c10502"+"a10561"+"40"+"61616161", amqpsax.ErrOverrun, 3),
	b("value overruns map, input goes on", "c10502"+"40"+"a10261"+"61", amqpsax.ErrOverrun, 4),
	b("str8 element overruns array, input goes on", "e00401a1"+"0561"+"61616161", amqpsax.ErrOverrun, 4),
	b("str8 element overruns array, input ends", "e00401a1"+"0561", io.ErrUnexpectedEOF, 4),
	b("described value missing in list, input goes on", "c00401"+"005370"+"45", amqpsax.ErrOverrun, 6),
	b("described value overruns list, input goes on", "c00501"+"005370"+"c0"+"0101"+"40", amqpsax.ErrOverrun, 6),
	b("list overruns list, input goes on", "c00401"+"c00501"+"40404040", amqpsax.ErrOverrun, 3),
	b("list32 overruns list, input goes on", "c00701"+"d000000005"+"00000001"+"4040", amqpsax.ErrOverrun, 3),
	b("array overruns list, input goes on", "c00501"+"e003"+"0150"+"0102", amqpsax.ErrOverrun, 3),
	b("uint overruns list in list, input goes on", "c00601"+"c00301"+"7000"+"000000", amqpsax.ErrOverrun, 6),

	// Found by an attack on the decoders (issue "Hostile input").
	// list0 is a level of nesting for both decoders: the 1001st here.
	b("1000 list32 around list0", Nest(1000, "45"), amqpsax.ErrTooDeep, 9000),
	b("999 list32 around an array of list0", Nest(999, "e0020245"), amqpsax.ErrTooDeep, 8995),
}

// InvalidText holds inputs whose only fault is the text of a string or
// symbol: they decode without error by default and must fail as given
// with validation on (UTF-8 of strings, ASCII of symbols).
var InvalidText = []Bad{
	b("str8 bad UTF-8", "a10568c3a9e282", amqpsax.ErrInvalidUTF8, 0),
	b("sym8 non-ASCII", "a30261c3", amqpsax.ErrInvalidSymbol, 0),
	b("sym8 in array", "e00602a3"+"0161"+"0180", amqpsax.ErrInvalidSymbol, 6),
	// The descriptor of an array of described values is checked once,
	// when the array is read — also when it is empty, although no
	// element replays it (found by an attack on the decoders).
	b("empty described array, bad symbol descriptor", "e0060000a3018040", amqpsax.ErrInvalidSymbol, 4),
	b("empty described array, bad UTF-8 descriptor", "e0060000a101ff40", amqpsax.ErrInvalidUTF8, 4),
	b("described array, bad descriptor, 3 elements", "e0060300a3018040", amqpsax.ErrInvalidSymbol, 4),
}

// Nest returns the hex of depth list32 values, each holding the next, and
// the innermost holding the value inner (hex).
func Nest(depth int, inner string) string {
	var b strings.Builder
	size := 4 + len(inner)/2 // count field and contents
	heads := make([]string, depth)
	for i := depth - 1; i >= 0; i-- {
		heads[i] = fmt.Sprintf("d0%08x00000001", size)
		size += 9
	}
	for _, h := range heads {
		b.WriteString(h)
	}
	b.WriteString(inner)
	return b.String()
}

// TruncOffset returns the offset at which decoding full (one valid
// value) cut to its first cut bytes must report truncation: that of the
// outermost value that runs past the cut, where described values, which
// carry no size, give way to their descriptor or value.
func TruncOffset(full []byte, cut int) int {
	pos := 0
	for pos < cut && full[pos] == byte(amqpsax.CodeDescribed) {
		d := pos + 1
		if d >= cut {
			return d
		}
		n, _ := wire.Skip(full[d:])
		if d+n > cut {
			pos = d
			continue
		}
		pos = d + n
	}
	return pos
}
