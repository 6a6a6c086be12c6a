package dump

import (
	"encoding/hex"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/stream"
)

// appendJSONPrimitive appends the primitive the cursor is on as JSON.
func appendJSONPrimitive(b []byte, c *stream.Cursor) []byte {
	switch c.Kind() {
	case amqpsax.KindNull:
		return append(b, "null"...)
	case amqpsax.KindBool:
		return strconv.AppendBool(b, c.Bool())
	case amqpsax.KindUbyte, amqpsax.KindUshort, amqpsax.KindUint, amqpsax.KindUlong:
		return strconv.AppendUint(b, c.Uint(), 10)
	case amqpsax.KindByte, amqpsax.KindShort, amqpsax.KindInt, amqpsax.KindLong:
		return strconv.AppendInt(b, c.Int(), 10)
	case amqpsax.KindFloat:
		return appendJSONFloat(b, float64(c.Float()), 32)
	case amqpsax.KindDouble:
		return appendJSONFloat(b, c.Double(), 64)
	case amqpsax.KindDecimal32:
		d := c.Decimal32()
		return appendJSONHex(b, d[:])
	case amqpsax.KindDecimal64:
		d := c.Decimal64()
		return appendJSONHex(b, d[:])
	case amqpsax.KindDecimal128:
		d := c.Decimal128()
		return appendJSONHex(b, d[:])
	case amqpsax.KindChar:
		r := c.Char()
		if !utf8.ValidRune(r) {
			return appendJSONString(b, appendChar(nil, r))
		}
		return appendJSONString(b, utf8.AppendRune(nil, r))
	case amqpsax.KindTimestamp:
		return strconv.AppendInt(b, c.Timestamp(), 10)
	case amqpsax.KindUUID:
		u := c.UUID()
		return appendJSONString(b, []byte(u.String()))
	case amqpsax.KindBinary:
		b = append(b, '"')
		b = hex.AppendEncode(b, c.Bytes())
		return append(b, '"')
	case amqpsax.KindString, amqpsax.KindSymbol:
		return appendJSONString(b, c.Bytes())
	}
	return append(b, "null"...)
}

// appendJSONFloat appends f, or a string for the values JSON has no
// number for ("NaN", "+Inf", "-Inf").
func appendJSONFloat(b []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		b = append(b, '"')
		b = strconv.AppendFloat(b, f, 'g', -1, bits)
		return append(b, '"')
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}

// appendJSONHex appends v as a string "0x…".
func appendJSONHex(b []byte, v []byte) []byte {
	b = append(b, `"0x`...)
	b = hex.AppendEncode(b, v)
	return append(b, '"')
}

// appendJSONString appends s as a JSON string; bytes that are not UTF-8
// become U+FFFD.
func appendJSONString(b []byte, s []byte) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
