package encode

import (
	"encoding/hex"
	"math"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	s255       = strings.Repeat("a", 255)
	s256       = strings.Repeat("a", 256)
	h255       = strings.Repeat("61", 255)
	h256       = strings.Repeat("61", 256)
	headerDesc = []byte{0x53, 0x70}
	id         = uuid.MustParse("00112233-4455-6677-8899-aabbccddeeff")
)

// appendCases writes every format code of AMQP 1.0 §1.6 at least once,
// with the bytes each must produce.
var appendCases = []struct {
	name string
	code amqpsax.Code // the outer code the bytes must start with
	f    func([]byte) []byte
	hex  string
}{
	{"null", amqpsax.CodeNull, AppendNull, "40"},
	{"true", amqpsax.CodeTrue, func(b []byte) []byte { return AppendBool(b, true) }, "41"},
	{"false", amqpsax.CodeFalse, func(b []byte) []byte { return AppendBool(b, false) }, "42"},
	{"bool56 true", amqpsax.CodeBool, func(b []byte) []byte { return AppendCodeBool(b, true) }, "5601"},
	{"bool56 false", amqpsax.CodeBool, func(b []byte) []byte { return AppendCodeBool(b, false) }, "5600"},
	{"ubyte", amqpsax.CodeUbyte, func(b []byte) []byte { return AppendUbyte(b, 0xfe) }, "50fe"},
	{"ushort", amqpsax.CodeUshort, func(b []byte) []byte { return AppendUshort(b, 0x1234) }, "601234"},
	{"uint0", amqpsax.CodeUint0, func(b []byte) []byte { return AppendUint(b, 0) }, "43"},
	{"smalluint 1", amqpsax.CodeSmallUint, func(b []byte) []byte { return AppendUint(b, 1) }, "5201"},
	{"smalluint 255", amqpsax.CodeSmallUint, func(b []byte) []byte { return AppendUint(b, 255) }, "52ff"},
	{"uint 256", amqpsax.CodeUint, func(b []byte) []byte { return AppendUint(b, 256) }, "7000000100"},
	{"uint max", amqpsax.CodeUint, func(b []byte) []byte { return AppendUint(b, math.MaxUint32) }, "70ffffffff"},
	{"uint32 1", amqpsax.CodeUint, func(b []byte) []byte { return AppendCodeUint(b, 1) }, "7000000001"},
	{"smalluint explicit", amqpsax.CodeSmallUint, func(b []byte) []byte { return AppendCodeSmallUint(b, 0) }, "5200"},
	{"uint0 explicit", amqpsax.CodeUint0, AppendCodeUint0, "43"},
	{"ulong0", amqpsax.CodeUlong0, func(b []byte) []byte { return AppendUlong(b, 0) }, "44"},
	{"smallulong", amqpsax.CodeSmallUlong, func(b []byte) []byte { return AppendUlong(b, 0x70) }, "5370"},
	{"ulong 256", amqpsax.CodeUlong, func(b []byte) []byte { return AppendUlong(b, 256) }, "800000000000000100"},
	{"ulong max", amqpsax.CodeUlong, func(b []byte) []byte { return AppendUlong(b, math.MaxUint64) }, "80ffffffffffffffff"},
	{"ulong64 5", amqpsax.CodeUlong, func(b []byte) []byte { return AppendCodeUlong(b, 5) }, "800000000000000005"},
	{"smallulong explicit", amqpsax.CodeSmallUlong, func(b []byte) []byte { return AppendCodeSmallUlong(b, 0) }, "5300"},
	{"ulong0 explicit", amqpsax.CodeUlong0, AppendCodeUlong0, "44"},
	{"byte", amqpsax.CodeByte, func(b []byte) []byte { return AppendByte(b, -2) }, "51fe"},
	{"short", amqpsax.CodeShort, func(b []byte) []byte { return AppendShort(b, -2) }, "61fffe"},
	{"smallint -128", amqpsax.CodeSmallInt, func(b []byte) []byte { return AppendInt(b, -128) }, "5480"},
	{"smallint 127", amqpsax.CodeSmallInt, func(b []byte) []byte { return AppendInt(b, 127) }, "547f"},
	{"int 128", amqpsax.CodeInt, func(b []byte) []byte { return AppendInt(b, 128) }, "7100000080"},
	{"int -129", amqpsax.CodeInt, func(b []byte) []byte { return AppendInt(b, -129) }, "71ffffff7f"},
	{"int32 0", amqpsax.CodeInt, func(b []byte) []byte { return AppendCodeInt(b, 0) }, "7100000000"},
	{"smallint explicit", amqpsax.CodeSmallInt, func(b []byte) []byte { return AppendCodeSmallInt(b, -1) }, "54ff"},
	{"smalllong 0", amqpsax.CodeSmallLong, func(b []byte) []byte { return AppendLong(b, 0) }, "5500"},
	{"long min", amqpsax.CodeLong, func(b []byte) []byte { return AppendLong(b, math.MinInt64) }, "818000000000000000"},
	{"long64 1", amqpsax.CodeLong, func(b []byte) []byte { return AppendCodeLong(b, 1) }, "810000000000000001"},
	{"smalllong explicit", amqpsax.CodeSmallLong, func(b []byte) []byte { return AppendCodeSmallLong(b, -128) }, "5580"},
	{"float", amqpsax.CodeFloat, func(b []byte) []byte { return AppendFloat(b, 1.5) }, "723fc00000"},
	{"double", amqpsax.CodeDouble, func(b []byte) []byte { return AppendDouble(b, -2) }, "82c000000000000000"},
	{"decimal32", amqpsax.CodeDecimal32, func(b []byte) []byte { return AppendDecimal32(b, amqpsax.Decimal32{0x22, 0x50, 0, 1}) }, "7422500001"},
	{"decimal64", amqpsax.CodeDecimal64, func(b []byte) []byte { return AppendDecimal64(b, amqpsax.Decimal64{1, 2, 3, 4, 5, 6, 7, 8}) }, "840102030405060708"},
	{"decimal128", amqpsax.CodeDecimal128, func(b []byte) []byte {
		return AppendDecimal128(b, amqpsax.Decimal128{15: 9})
	}, "9400000000000000000000000000000009"},
	{"char", amqpsax.CodeChar, func(b []byte) []byte { return AppendChar(b, '€') }, "73000020ac"},
	{"timestamp", amqpsax.CodeTimestamp, func(b []byte) []byte { return AppendTimestamp(b, 1311704463521) }, "830000013167adb8a1"},
	{"uuid", amqpsax.CodeUUID, func(b []byte) []byte { return AppendUUID(b, id) }, "9800112233445566778899aabbccddeeff"},
	{"vbin8 empty", amqpsax.CodeVbin8, func(b []byte) []byte { return AppendBinary(b, nil) }, "a000"},
	{"vbin8 255", amqpsax.CodeVbin8, func(b []byte) []byte { return AppendBinary(b, []byte(s255)) }, "a0ff" + h255},
	{"vbin32 256", amqpsax.CodeVbin32, func(b []byte) []byte { return AppendBinary(b, []byte(s256)) }, "b000000100" + h256},
	{"vbin32 explicit", amqpsax.CodeVbin32, func(b []byte) []byte { return AppendCodeVbin32(b, []byte{1}) }, "b00000000101"},
	{"str8", amqpsax.CodeStr8, func(b []byte) []byte { return AppendString(b, "hé") }, "a10368c3a9"},
	{"str8 255", amqpsax.CodeStr8, func(b []byte) []byte { return AppendString(b, s255) }, "a1ff" + h255},
	{"str32 256", amqpsax.CodeStr32, func(b []byte) []byte { return AppendString(b, s256) }, "b100000100" + h256},
	{"str32 explicit", amqpsax.CodeStr32, func(b []byte) []byte { return AppendCodeStr32(b, "") }, "b100000000"},
	{"str8 bytes", amqpsax.CodeStr8, func(b []byte) []byte { return AppendStringBytes(b, []byte("a")) }, "a10161"},
	{"sym8", amqpsax.CodeSym8, func(b []byte) []byte { return AppendSymbol(b, "amqp") }, "a304616d7170"},
	{"sym32 256", amqpsax.CodeSym32, func(b []byte) []byte { return AppendSymbol(b, s256) }, "b300000100" + h256},
	{"sym32 explicit", amqpsax.CodeSym32, func(b []byte) []byte { return AppendCodeSym32(b, "a") }, "b30000000161"},
	{"sym8 bytes", amqpsax.CodeSym8, func(b []byte) []byte { return AppendSymbolBytes(b, []byte("a")) }, "a30161"},
	{"list0", amqpsax.CodeList0, AppendCodeList0, "45"},
	{"list empty", amqpsax.CodeList0, func(b []byte) []byte { s := len(b); return EndList(BeginList(b), s, 0) }, "45"},
	{"list8", amqpsax.CodeList8, func(b []byte) []byte {
		s := len(b)
		b = AppendUint(BeginList(b), 1)
		return EndList(AppendNull(b), s, 2)
	}, "c00402520140"},
	{"list32 explicit", amqpsax.CodeList32, func(b []byte) []byte {
		s := len(b)
		return EndList32(AppendNull(BeginList(b)), s, 1)
	}, "d0000000050000000140"},
	{"list32 large", amqpsax.CodeList32, func(b []byte) []byte {
		s := len(b)
		return EndList(AppendString(BeginList(b), s255), s, 1)
	}, "d00000010500000001a1ff" + h255},
	{"list8 largest", amqpsax.CodeList8, func(b []byte) []byte {
		s := len(b)
		return EndList(AppendString(BeginList(b), s255[:252]), s, 1)
	}, "c0ff01a1fc" + h255[:504]},
	{"map8", amqpsax.CodeMap8, func(b []byte) []byte {
		s := len(b)
		b = AppendSymbol(BeginMap(b), "k")
		return EndMap(AppendInt(b, -1), s, 1)
	}, "c10602a3016b54ff"},
	{"map8 empty", amqpsax.CodeMap8, func(b []byte) []byte { s := len(b); return EndMap(BeginMap(b), s, 0) }, "c10100"},
	{"map32", amqpsax.CodeMap32, func(b []byte) []byte { s := len(b); return EndMap32(BeginMap(b), s, 0) }, "d10000000400000000"},
	{"array8", amqpsax.CodeArray8, func(b []byte) []byte {
		s := len(b)
		b = BeginArray(b, amqpsax.CodeInt)
		b = AppendIntElem(b, amqpsax.CodeInt, 1)
		b = AppendIntElem(b, amqpsax.CodeInt, -1)
		return EndArray(b, s, 2)
	}, "e00a0271" + "00000001" + "ffffffff"},
	{"array32", amqpsax.CodeArray32, func(b []byte) []byte {
		s := len(b)
		b = BeginArray(b, amqpsax.CodeSym8)
		b = AppendBytesElem(b, amqpsax.CodeSym8, []byte("ab"))
		return EndArray32(b, s, 1)
	}, "f00000000800000001a3026162"},
	{"array8 described", amqpsax.CodeArray8, func(b []byte) []byte {
		s := len(b)
		b = BeginDescribedArray(b, headerDesc, amqpsax.CodeBool)
		b = AppendBoolElem(b, amqpsax.CodeBool, true)
		return EndArray(b, s, 1)
	}, "e0060100537056" + "01"},
	{"array8 of uint0", amqpsax.CodeArray8, func(b []byte) []byte {
		s := len(b)
		b = BeginArray(b, amqpsax.CodeUint0)
		b = AppendUintElem(b, amqpsax.CodeUint0, 0)
		b = AppendBoolElem(b, amqpsax.CodeTrue, true)
		return EndArray(b, s, 2)
	}, "e0020243"},
	{"array8 ushort ulong", amqpsax.CodeArray8, func(b []byte) []byte {
		s := len(b)
		b = BeginArray(b, amqpsax.CodeUlong)
		b = AppendUintElem(b, amqpsax.CodeUlong, 7)
		b = AppendUintElem(b, amqpsax.CodeUshort, 7)
		b = AppendBytesElem(b, amqpsax.CodeVbin32, []byte{})
		return EndArray(b, s, 1)
	}, "e01001800000000000000007000700000000"},
	{"described", amqpsax.CodeDescribed, func(b []byte) []byte {
		return AppendCodeList0(AppendSymbol(AppendDescribed(b), "amqp:accepted:list"))
	}, "00a312616d71703a61636365707465643a6c69737445"},
}

func TestAppend(t *testing.T) {
	codes := map[amqpsax.Code]bool{}
	for _, tc := range appendCases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.f(nil)
			assert.Equal(t, tc.hex, hex.EncodeToString(got))
			require.NotEmpty(t, got)
			assert.Equal(t, tc.code, amqpsax.Code(got[0]))
			// Appending to a non-empty buffer must keep its prefix.
			pre := []byte{0xde, 0xad}
			got2 := tc.f(pre[:2:2])
			assert.Equal(t, "dead"+tc.hex, hex.EncodeToString(got2))
		})
		codes[tc.code] = true
	}
	for c := range 256 {
		if amqpsax.Code(c).Kind() != amqpsax.KindInvalid {
			assert.True(t, codes[amqpsax.Code(c)], "no encoder case writes %v", amqpsax.Code(c))
		}
	}
}

// TestAppendAllocs: no Append function allocates into a buffer with
// capacity.
func TestAppendAllocs(t *testing.T) {
	buf := make([]byte, 0, 4096)
	for _, tc := range appendCases {
		allocs := testing.AllocsPerRun(100, func() { buf = tc.f(buf[:0]) })
		assert.Zero(t, allocs, tc.name)
	}
}
