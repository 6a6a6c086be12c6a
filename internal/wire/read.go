package wire

import (
	"encoding/binary"
	"math"

	"github.com/amqpsax/amqpsax"
)

// The readers below decode a fixed-width payload p whose length Body has
// already checked (len(p) >= Table[c].W()). Each is the single place its
// byte rule is written; both decoders call them.

// Uint decodes ubyte, ushort, uint (0x70, smalluint, uint0) and ulong
// (0x80, smallulong, ulong0) payloads (§1.6.3–§1.6.6).
func Uint(c amqpsax.Code, p []byte) uint64 {
	switch Table[c].W() {
	case 0:
		return 0
	case 1:
		return uint64(p[0])
	case 2:
		return uint64(binary.BigEndian.Uint16(p))
	case 4:
		return uint64(binary.BigEndian.Uint32(p))
	}
	return binary.BigEndian.Uint64(p)
}

// Int decodes byte, short, int (0x71, smallint) and long (0x81, smalllong)
// payloads, two's complement (§1.6.7–§1.6.10).
func Int(c amqpsax.Code, p []byte) int64 {
	switch Table[c].W() {
	case 1:
		return int64(int8(p[0]))
	case 2:
		return int64(int16(binary.BigEndian.Uint16(p)))
	case 4:
		return int64(int32(binary.BigEndian.Uint32(p)))
	}
	return int64(binary.BigEndian.Uint64(p))
}

// Bool decodes true, false and the one-byte boolean (§1.6.2). Body has
// rejected a 0x56 byte other than 0 or 1.
func Bool(c amqpsax.Code, p []byte) bool {
	if c == amqpsax.CodeBool {
		return p[0] != 0
	}
	return c == amqpsax.CodeTrue
}

// Float decodes a binary32 payload (§1.6.11).
func Float(p []byte) float32 { return math.Float32frombits(binary.BigEndian.Uint32(p)) }

// Double decodes a binary64 payload (§1.6.12).
func Double(p []byte) float64 { return math.Float64frombits(binary.BigEndian.Uint64(p)) }

// Char decodes a UTF-32BE payload (§1.6.16). The code point is not
// checked: a value above 0x10FFFF is passed on as it is.
func Char(p []byte) rune { return rune(binary.BigEndian.Uint32(p)) }

// Timestamp decodes an ms64 payload: milliseconds since the Unix epoch
// (§1.6.17).
func Timestamp(p []byte) int64 { return int64(binary.BigEndian.Uint64(p)) }

// IntEnding decodes the byte, short, int or long of code c whose payload
// ends at data[end], where end >= 8: it loads the eight bytes that end
// there at once and sign-extends the payload's width, with no branch on
// the width, so that a getter built on it inlines. Int is the same rule
// for any end.
func IntEnding(data []byte, end int, c amqpsax.Code) int64 {
	sh := 64 - 8*uint(Table[c].W())
	return int64(binary.BigEndian.Uint64(data[end-8:])) << sh >> sh
}

// UintEnding is IntEnding for ubyte, ushort, uint and ulong (and uint0 and
// ulong0, whose zero width leaves 0).
func UintEnding(data []byte, end int, c amqpsax.Code) uint64 {
	sh := 64 - 8*uint(Table[c].W())
	return binary.BigEndian.Uint64(data[end-8:]) << sh >> sh
}
