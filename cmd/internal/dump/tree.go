package dump

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/stream"
)

// maxShown is how many bytes of a string, symbol or binary a line shows;
// longer ones are cut and their length given.
const maxShown = 64

// shownRepeats is how many of a run of identical values are printed
// before the rest of the run is summed up in one line.
const shownRepeats = 2

// errStopped is the error of a walk the cursor ended without saying why;
// it is not expected to happen.
var errStopped = errors.New("amqpdump: the cursor stopped before the end of a value")

// remap returns err, an error of a decoder about bytes whose positions
// segs maps to input offsets, as amqpdump reports it: an *amqpsax.Error
// with Op "amqpdump" and the input offset.
func remap(err error, segs *segments) error {
	var ae *amqpsax.Error
	if !errors.As(err, &ae) {
		if err == nil {
			return errStopped
		}
		return err
	}
	e := *ae
	e.Op = "amqpdump"
	e.Offset = int(segs.offset(ae.Offset))
	return &e
}

// isPrimitive reports whether a value of kind k fits on one line.
func isPrimitive(k amqpsax.Kind) bool {
	switch k {
	case amqpsax.KindList, amqpsax.KindMap, amqpsax.KindArray, amqpsax.KindDescribed, amqpsax.KindInvalid:
		return false
	}
	return true
}

// appendDescName appends " " and the spec's name of d when known.
func appendDescName(b []byte, d amqpsax.Descriptor, known bool) []byte {
	if known && d.Name() != "" {
		b = append(b, ' ')
		b = append(b, d.Name()...)
	}
	return b
}

// appendArrayHead appends "array[N] <array8> of ".
func appendArrayHead(b []byte, code amqpsax.Code, count int, elem bool) []byte {
	b = append(b, "array["...)
	b = strconv.AppendInt(b, int64(count), 10)
	b = append(b, ']')
	b = appendSuffix(b, "array", code, elem)
	return append(b, " of "...)
}

// appendKind appends an element type and its encoding: "symbol <sym8>".
func appendKind(b []byte, k amqpsax.Kind, c amqpsax.Code) []byte {
	b = append(b, k.String()...)
	return appendSuffix(b, k.String(), c, false)
}

// appendSuffix appends " <code>" when the encoding's name says more than
// the type's (smalluint for a uint, true for a boolean), and nothing for
// an array element, whose encoding is shown on the array's line.
func appendSuffix(b []byte, kind string, c amqpsax.Code, elem bool) []byte {
	if elem || c.String() == kind {
		return b
	}
	b = append(b, " <"...)
	b = append(b, c.String()...)
	return append(b, '>')
}

// appendPrimitive appends the value the cursor is on, a primitive, as
// "type value (annot) <encoding>".
func appendPrimitive(b []byte, c *stream.Cursor, elem bool, annot string) []byte {
	kind := c.Kind()
	name := kind.String()
	switch kind {
	case amqpsax.KindNull:
		b = append(b, "null"...)
	case amqpsax.KindBool:
		b = append(b, name...)
		b = append(b, ' ')
		b = strconv.AppendBool(b, c.Bool())
	case amqpsax.KindUbyte, amqpsax.KindUshort, amqpsax.KindUint, amqpsax.KindUlong:
		b = append(b, name...)
		b = append(b, ' ')
		b = strconv.AppendUint(b, c.Uint(), 10)
	case amqpsax.KindByte, amqpsax.KindShort, amqpsax.KindInt, amqpsax.KindLong:
		b = append(b, name...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, c.Int(), 10)
	case amqpsax.KindFloat:
		b = append(b, "float "...)
		b = strconv.AppendFloat(b, float64(c.Float()), 'g', -1, 32)
	case amqpsax.KindDouble:
		b = append(b, "double "...)
		b = strconv.AppendFloat(b, c.Double(), 'g', -1, 64)
	case amqpsax.KindDecimal32:
		d := c.Decimal32()
		b = appendHexValue(b, name, d[:])
	case amqpsax.KindDecimal64:
		d := c.Decimal64()
		b = appendHexValue(b, name, d[:])
	case amqpsax.KindDecimal128:
		d := c.Decimal128()
		b = appendHexValue(b, name, d[:])
	case amqpsax.KindChar:
		b = appendChar(b, c.Char())
	case amqpsax.KindTimestamp:
		ms := c.Timestamp()
		b = append(b, "timestamp "...)
		b = strconv.AppendInt(b, ms, 10)
		b = append(b, " ("...)
		b = time.UnixMilli(ms).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
		b = append(b, ')')
	case amqpsax.KindUUID:
		u := c.UUID()
		b = append(b, "uuid "...)
		b = append(b, u.String()...)
	case amqpsax.KindBinary:
		v := c.Bytes()
		b = append(b, "binary["...)
		b = strconv.AppendInt(b, int64(len(v)), 10)
		b = append(b, ']')
		if len(v) > 0 {
			b = append(b, ' ')
			b = hex.AppendEncode(b, v[:min(len(v), maxShown/2)])
			if len(v) > maxShown/2 {
				b = append(b, "…"...)
			}
		}
	case amqpsax.KindString, amqpsax.KindSymbol:
		b = append(b, name...)
		b = append(b, ' ')
		b = appendQuoted(b, c.Bytes())
	}
	if annot != "" {
		b = append(b, " ("...)
		b = append(b, annot...)
		b = append(b, ')')
	}
	return appendSuffix(b, name, c.Code(), elem)
}

// appendHexValue appends "decimal32 0x…".
func appendHexValue(b []byte, name string, v []byte) []byte {
	b = append(b, name...)
	b = append(b, " 0x"...)
	return hex.AppendEncode(b, v)
}

// appendChar appends "char U+0041 'A'" (the quoted character only when
// it is a valid code point).
func appendChar(b []byte, r rune) []byte {
	b = fmt.Appendf(b, "char %U", r)
	if utf8.ValidRune(r) {
		b = append(b, ' ')
		b = strconv.AppendQuoteRune(b, r)
	}
	return b
}

// appendQuoted appends v as a Go string literal, cut after maxShown bytes
// (at a character boundary) with its length added.
func appendQuoted(b []byte, v []byte) []byte {
	if len(v) <= maxShown {
		return strconv.AppendQuote(b, string(v))
	}
	n := maxShown
	for n > maxShown-utf8.UTFMax && !utf8.RuneStart(v[n]) {
		n--
	}
	b = strconv.AppendQuote(b, string(v[:n]))
	b = append(b, "… ("...)
	b = strconv.AppendInt(b, int64(len(v)), 10)
	return append(b, " bytes)"...)
}
