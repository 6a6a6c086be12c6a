// Package wire holds the byte-level rules of the AMQP 1.0 type encoding
// (AMQP 1.0 part 1 §1.6) that the decoders and the encoder share: the
// 256-entry table of format codes and bounds-checked primitives that read
// the length fields of a value.
//
// Primitives follow the protowire convention: they return lengths as ints
// and report a fault as a negative Status, so that no error value is built
// on the happy path; the caller turns a Status into an *amqpsax.Error with
// the offset once, at its boundary.
//
// Every claimed size and count is compared, as an unsigned 64-bit number,
// against the bytes actually present before it is converted to int, so a
// 4-byte size cannot overflow int on 32-bit platforms and no size a value
// merely claims ever drives an allocation or a loop.
package wire

import (
	"encoding/binary"
	"io"
	"math"
	"unicode/utf8"

	"github.com/amqpsax/amqpsax"
)

// Cat is the category of a format code (§1.6's "category" attribute, with
// Described for the descriptor constructor and Invalid for undefined codes).
type Cat uint8

const (
	Invalid   Cat = iota // not a format code
	Fixed                // fixed-width payload of Info.W bytes (0 for null, true, uint0, list0 …)
	Variable             // Info.W-byte size, then that many bytes (binary, string, symbol)
	Compound             // Info.W-byte size, Info.W-byte count, then count values (list, map)
	Array                // Info.W-byte size, Info.W-byte count, one constructor, then count bodies
	Described            // 0x00: descriptor value, then the described value
)

// Info is one row of the code table.
type Info struct {
	Kind amqpsax.Kind // the AMQP type
	Cat  Cat
	// W is the payload width of a Fixed code, and the width of the size
	// (and count) fields of a Variable, Compound or Array code.
	W uint8
}

// Table describes every byte value as a format code. Undefined codes have
// Cat Invalid and Kind KindInvalid. Indexing it with a byte is a single
// load; decoders read it instead of branching per code where they can.
var Table = [256]Info{
	amqpsax.CodeDescribed:  {amqpsax.KindDescribed, Described, 0},
	amqpsax.CodeNull:       {amqpsax.KindNull, Fixed, 0},
	amqpsax.CodeBool:       {amqpsax.KindBool, Fixed, 1},
	amqpsax.CodeTrue:       {amqpsax.KindBool, Fixed, 0},
	amqpsax.CodeFalse:      {amqpsax.KindBool, Fixed, 0},
	amqpsax.CodeUbyte:      {amqpsax.KindUbyte, Fixed, 1},
	amqpsax.CodeUshort:     {amqpsax.KindUshort, Fixed, 2},
	amqpsax.CodeUint:       {amqpsax.KindUint, Fixed, 4},
	amqpsax.CodeSmallUint:  {amqpsax.KindUint, Fixed, 1},
	amqpsax.CodeUint0:      {amqpsax.KindUint, Fixed, 0},
	amqpsax.CodeUlong:      {amqpsax.KindUlong, Fixed, 8},
	amqpsax.CodeSmallUlong: {amqpsax.KindUlong, Fixed, 1},
	amqpsax.CodeUlong0:     {amqpsax.KindUlong, Fixed, 0},
	amqpsax.CodeByte:       {amqpsax.KindByte, Fixed, 1},
	amqpsax.CodeShort:      {amqpsax.KindShort, Fixed, 2},
	amqpsax.CodeInt:        {amqpsax.KindInt, Fixed, 4},
	amqpsax.CodeSmallInt:   {amqpsax.KindInt, Fixed, 1},
	amqpsax.CodeLong:       {amqpsax.KindLong, Fixed, 8},
	amqpsax.CodeSmallLong:  {amqpsax.KindLong, Fixed, 1},
	amqpsax.CodeFloat:      {amqpsax.KindFloat, Fixed, 4},
	amqpsax.CodeDouble:     {amqpsax.KindDouble, Fixed, 8},
	amqpsax.CodeDecimal32:  {amqpsax.KindDecimal32, Fixed, 4},
	amqpsax.CodeDecimal64:  {amqpsax.KindDecimal64, Fixed, 8},
	amqpsax.CodeDecimal128: {amqpsax.KindDecimal128, Fixed, 16},
	amqpsax.CodeChar:       {amqpsax.KindChar, Fixed, 4},
	amqpsax.CodeTimestamp:  {amqpsax.KindTimestamp, Fixed, 8},
	amqpsax.CodeUUID:       {amqpsax.KindUUID, Fixed, 16},
	amqpsax.CodeVbin8:      {amqpsax.KindBinary, Variable, 1},
	amqpsax.CodeVbin32:     {amqpsax.KindBinary, Variable, 4},
	amqpsax.CodeStr8:       {amqpsax.KindString, Variable, 1},
	amqpsax.CodeStr32:      {amqpsax.KindString, Variable, 4},
	amqpsax.CodeSym8:       {amqpsax.KindSymbol, Variable, 1},
	amqpsax.CodeSym32:      {amqpsax.KindSymbol, Variable, 4},
	amqpsax.CodeList0:      {amqpsax.KindList, Fixed, 0},
	amqpsax.CodeList8:      {amqpsax.KindList, Compound, 1},
	amqpsax.CodeList32:     {amqpsax.KindList, Compound, 4},
	amqpsax.CodeMap8:       {amqpsax.KindMap, Compound, 1},
	amqpsax.CodeMap32:      {amqpsax.KindMap, Compound, 4},
	amqpsax.CodeArray8:     {amqpsax.KindArray, Array, 1},
	amqpsax.CodeArray32:    {amqpsax.KindArray, Array, 4},
}

// Status is the outcome of a primitive: OK, or a negative fault code.
type Status int8

// Fault codes. Each maps to one sentinel cause by Status.Err.
const (
	OK             Status = 0
	EOF            Status = -1  // io.ErrUnexpectedEOF
	BadCode        Status = -2  // amqpsax.ErrInvalidCode
	CountTooLarge  Status = -3  // amqpsax.ErrCountTooLarge
	SizeMismatch   Status = -4  // amqpsax.ErrSizeMismatch
	OddMapCount    Status = -5  // amqpsax.ErrOddMapCount
	BadBool        Status = -6  // amqpsax.ErrInvalidBool
	BadArrayCode   Status = -7  // amqpsax.ErrInvalidArrayCode
	TooDeep        Status = -8  // amqpsax.ErrTooDeep
	BadUTF8        Status = -9  // amqpsax.ErrInvalidUTF8
	BadSymbol      Status = -10 // amqpsax.ErrInvalidSymbol
	WrongKind      Status = -11 // amqpsax.ErrWrongKind
	lowestStatusOK Status = -12
)

var statusErrs = [...]error{
	-EOF:           io.ErrUnexpectedEOF,
	-BadCode:       amqpsax.ErrInvalidCode,
	-CountTooLarge: amqpsax.ErrCountTooLarge,
	-SizeMismatch:  amqpsax.ErrSizeMismatch,
	-OddMapCount:   amqpsax.ErrOddMapCount,
	-BadBool:       amqpsax.ErrInvalidBool,
	-BadArrayCode:  amqpsax.ErrInvalidArrayCode,
	-TooDeep:       amqpsax.ErrTooDeep,
	-BadUTF8:       amqpsax.ErrInvalidUTF8,
	-BadSymbol:     amqpsax.ErrInvalidSymbol,
	-WrongKind:     amqpsax.ErrWrongKind,
}

// Err returns the sentinel cause of a fault, or nil for OK.
func (s Status) Err() error {
	if s >= 0 || s <= lowestStatusOK {
		return nil
	}
	return statusErrs[-s]
}

// NewError builds the public error for a fault found by package op at
// offset off, in a value whose code is c (hasCode false when the
// constructor byte itself is missing). It is the one place errors are made;
// callers reach it only on the error path.
func NewError(op string, st Status, off int, c amqpsax.Code, hasCode bool) error {
	return &amqpsax.Error{Op: op, Offset: off, Code: c, HasCode: hasCode, Err: st.Err()}
}

// NewErrorAt is NewError for a fault at data[off], whose code is read
// from data when the offset is within it (a fault past the end has none).
func NewErrorAt(op string, st Status, data []byte, off int) error {
	if off < len(data) {
		return NewError(op, st, off, amqpsax.Code(data[off]), true)
	}
	return NewError(op, st, off, 0, false)
}

// ZeroWidthLimit bounds the element count of an array whose elements
// occupy no bytes (null, true, false, uint0, ulong0, list0): at most this
// base plus ZeroWidthPerByte per byte of the array's size. Any larger
// count is ErrCountTooLarge, so that the work of walking an array stays
// proportional to its encoded length.
const (
	ZeroWidthBase    = 255
	ZeroWidthPerByte = 32
)

// Body reads the length fields of a value whose constructor c has been
// consumed and whose body starts at b[0]. It returns hdr, the bytes of the
// size and count fields; size, the bytes that follow them (the payload; an
// array's element constructor and elements; a compound's elements); and
// count, the element count of a compound or array. It checks that size fits
// in b and that count can fit in size. For an array it does not read the
// element constructor: see ArrayCtor. c must not be CodeDescribed or
// invalid; a negative hdr is the Status of the fault.
func Body(c amqpsax.Code, b []byte) (hdr, size, count int) {
	e := Table[c]
	switch e.Cat {
	case Fixed:
		if len(b) < int(e.W) {
			return int(EOF), 0, 0
		}
		if c == amqpsax.CodeBool && b[0] > 1 {
			return int(BadBool), 0, 0
		}
		return 0, int(e.W), 0
	case Variable:
		if e.W == 1 {
			if len(b) < 1 || int(b[0]) > len(b)-1 {
				return int(EOF), 0, 0
			}
			return 1, int(b[0]), 0
		}
		if len(b) < 4 {
			return int(EOF), 0, 0
		}
		n := binary.BigEndian.Uint32(b)
		if uint64(n) > uint64(len(b)-4) {
			return int(EOF), 0, 0
		}
		return 4, int(n), 0
	case Compound, Array:
		var sz, cnt uint64
		w := int(e.W)
		if w == 1 {
			if len(b) < 1 || int(b[0]) > len(b)-1 {
				return int(EOF), 0, 0
			}
			sz = uint64(b[0])
			if sz < 1 {
				return int(SizeMismatch), 0, 0
			}
			cnt = uint64(b[1])
		} else {
			if len(b) < 4 {
				return int(EOF), 0, 0
			}
			sz = uint64(binary.BigEndian.Uint32(b))
			if sz > uint64(len(b)-4) {
				return int(EOF), 0, 0
			}
			if sz < 4 {
				return int(SizeMismatch), 0, 0
			}
			cnt = uint64(binary.BigEndian.Uint32(b[4:]))
		}
		rest := sz - uint64(w) // bytes after the count field
		if e.Cat == Compound {
			// Every element takes at least one byte.
			if cnt > rest {
				return int(CountTooLarge), 0, 0
			}
			if e.Kind == amqpsax.KindMap && cnt&1 != 0 {
				return int(OddMapCount), 0, 0
			}
		} else {
			// The element constructor takes at least one byte; the
			// element bodies are checked by ArrayCtor.
			if rest < 1 {
				return int(SizeMismatch), 0, 0
			}
			if cnt > ZeroWidthBase+ZeroWidthPerByte*sz || cnt > math.MaxInt32 {
				return int(CountTooLarge), 0, 0
			}
		}
		return 2 * w, int(rest), int(cnt)
	}
	return int(BadCode), 0, 0
}

// ArrayCtor reads the element constructor of an array at the start of b,
// which holds the array's size bytes after its count field (b is exactly
// that long). It returns the element code, the length of the whole
// constructor (1, or for described elements 1 + the descriptor + 1), and
// the offset and length within b of the descriptor value (0, 0 when the
// elements are not described). It checks that count bodies of the element
// code can fit in the bytes after the constructor, and exactly fill them
// when the code is fixed-width.
//
// A descriptor in an array constructor must be a primitive of fixed or
// variable width other than list0 (a compound kind): descriptors are replayed once per element, and a
// compound one would make the work grow with count × descriptor size. No
// known peer sends another kind. The element code after a descriptor must
// not itself be a descriptor constructor.
//
// On a fault ctorLen is the negative Status and descOff is the offset in b
// of the faulty constructor byte.
func ArrayCtor(b []byte, count int) (elem amqpsax.Code, ctorLen, descOff, descLen int) {
	if len(b) < 1 {
		return 0, int(EOF), 0, 0
	}
	elem = amqpsax.Code(b[0])
	ctorLen = 1
	if elem == amqpsax.CodeDescribed {
		if len(b) < 2 {
			return 0, int(EOF), 1, 0
		}
		dc := amqpsax.Code(b[1])
		switch Table[dc].Cat {
		case Fixed, Variable:
			if dc == amqpsax.CodeList0 {
				return 0, int(BadArrayCode), 1, 0
			}
		case Invalid:
			return 0, int(BadCode), 1, 0
		default:
			return 0, int(BadArrayCode), 1, 0
		}
		h, n, _ := Body(dc, b[2:])
		if h < 0 {
			return 0, h, 1, 0
		}
		descOff, descLen = 1, 1+h+n
		ctorLen = 1 + descLen
		if len(b) <= ctorLen {
			return 0, int(EOF), ctorLen, 0
		}
		elem = amqpsax.Code(b[ctorLen])
		ctorLen++
		if elem == amqpsax.CodeDescribed {
			return 0, int(BadArrayCode), ctorLen - 1, 0
		}
	}
	e := Table[elem]
	if e.Cat == Invalid {
		return 0, int(BadCode), ctorLen - 1, 0
	}
	rest := uint64(len(b) - ctorLen)
	if e.Cat == Fixed {
		if uint64(count)*uint64(e.W) != rest {
			if uint64(count)*uint64(e.W) > rest {
				return 0, int(CountTooLarge), ctorLen - 1, 0
			}
			return 0, int(SizeMismatch), ctorLen - 1, 0
		}
	} else if uint64(count)*uint64(e.W) > rest {
		return 0, int(CountTooLarge), ctorLen - 1, 0
	}
	return elem, ctorLen, descOff, descLen
}

// Skip returns the length of the whole encoded value at the start of b:
// constructor, length fields and contents. Lists, maps and arrays are
// skipped by their size in O(1), after their length fields are checked; a
// described value skips its descriptor and its value, iteratively (no
// recursion). On a fault it returns the negative Status and the offset in b
// of the value at fault.
func Skip(b []byte) (n int, faultOff int) {
	pending := 1 // values still to skip
	for pending > 0 {
		if Counting {
			Work.Skipped++
		}
		if n >= len(b) {
			return int(EOF), n
		}
		c := amqpsax.Code(b[n])
		if c == amqpsax.CodeDescribed {
			n++
			pending++ // descriptor and value replace the described value
			continue
		}
		h, size, count := Body(c, b[n+1:])
		if h < 0 {
			return h, n
		}
		if Table[c].Cat == Array {
			body := b[n+1+h : n+1+h+size]
			if _, cl, off, _ := ArrayCtor(body, count); cl < 0 {
				return cl, n + 1 + h + off
			}
		}
		n += 1 + h + size
		pending--
	}
	return n, 0
}

// CheckText checks the payload p of a value of kind k: a string must be
// valid UTF-8 (§1.6.20), a symbol ASCII (§1.6.21). Other kinds pass. It is
// the one place the decoders' Validate option is applied.
func CheckText(k amqpsax.Kind, p []byte) Status {
	if Counting && (k == amqpsax.KindString || k == amqpsax.KindSymbol) {
		Work.Checked += len(p)
	}
	switch {
	case k == amqpsax.KindString && !ValidUTF8(p):
		return BadUTF8
	case k == amqpsax.KindSymbol && !ValidASCII(p):
		return BadSymbol
	}
	return OK
}

// CheckDescriptor checks the text of an array's descriptor d (the
// descriptor value as encoded, constructor first, as ArrayCtor located
// it). A decoder with validation on calls it once per array, when the
// array is opened — never per element, where the descriptor is replayed —
// so an array of n elements costs the descriptor's length once, not n
// times, and an empty array's descriptor is checked too.
func CheckDescriptor(d []byte) Status {
	c := amqpsax.Code(d[0])
	if Table[c].Cat != Variable {
		return OK
	}
	h, n, _ := Body(c, d[1:])
	return CheckText(Table[c].Kind, d[1+h:1+h+n])
}

// ValidUTF8 reports whether b is valid UTF-8 (strings, §1.6.20).
func ValidUTF8(b []byte) bool { return utf8.Valid(b) }

// ValidASCII reports whether every byte of b is 7-bit ASCII (symbols,
// §1.6.21). It tests eight bytes at a time.
func ValidASCII(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&0x8080808080808080 != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}
