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

// This file is laid out from the table up:
//
//   - Cat, Op and Info: the code table's columns, and Table itself, built
//     from the root package's kinds and checked against the spec's XML.
//   - Status, its sentinel causes, Cut, and NewError/NewErrorAt, the one
//     place decoding errors are made.
//   - The length-field readers: Var8/Var32 and Compound8/Compound32 (the
//     fast paths, which inline), Body (every code's length fields and
//     the wire rule for compounds), ArrayCtor (an array's element
//     constructor) and Skip (a whole value, iteratively).
//   - Text and descriptor checks: CheckText, CheckDescriptor, ValidUTF8,
//     ValidASCII, Descriptor.
//   - FillElems, the one loop over fixed-width array elements.
//
// The level rules of the walkers are in level.go, the payload readers in
// read.go, the work counters in work*.go.

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

// Op says how to read a code's payload: one dense number per way of
// decoding, so that a decoder's switch on it is a jump table (the codes
// themselves are sparse).
type Op uint8

const (
	OpInvalid Op = iota
	// The plain fixed-width codes, from here to OpLastPlain: a payload of
	// the table's width, any bytes valid. A cursor's fast path takes them
	// with one comparison.
	OpNull       // null
	OpTrue       // true: no payload
	OpFalse      // false: no payload
	OpUint0      // uint 0: no payload
	OpUlong0     // ulong 0: no payload
	OpUbyte      // one byte
	OpSmallUint  // uint in one byte
	OpSmallUlong // ulong in one byte
	OpByte       // one signed byte
	OpSmallInt   // int in one signed byte
	OpSmallLong  // long in one signed byte
	OpUshort     // two bytes
	OpShort      // two bytes, signed
	OpUint       // four bytes
	OpInt        // four bytes, signed
	OpFloat      // IEEE 754 binary32
	OpChar       // UTF-32BE
	OpDecimal32  // four bytes, as they are
	OpUlong      // eight bytes
	OpLong       // eight bytes, signed
	OpDouble     // IEEE 754 binary64
	OpTimestamp  // eight bytes, signed ms
	OpDecimal64  // eight bytes, as they are
	OpUUID       // sixteen bytes
	OpDecimal128 // sixteen bytes, as they are
	// The 8-bit variable-width codes, next to them for the same reason.
	OpBinary8 // vbin8: 8-bit size
	OpString8 // str8-utf8
	OpSymbol8 // sym8
	// The rest.
	OpBool      // 0x56: one byte, 0 or 1
	OpList0     // the empty list: no payload, but a compound
	OpBinary32  // vbin32: 32-bit size
	OpString32  // str32-utf8
	OpSymbol32  // sym32
	OpList8     // 8-bit size and count
	OpMap8      //
	OpList32    // 32-bit size and count
	OpMap32     //
	OpArray8    //
	OpArray32   //
	OpDescribed // 0x00

	OpLastPlain = OpDecimal128
)

// Info is one row of the code table, packed in 32 bits so that a decoder
// loads it once and takes its fields with a shift: Op (bits 0-7), Kind
// (8-15), Cat (16-18), W (19-23) and Sh (24-31).
type Info uint32

func info(op Op, k amqpsax.Kind, cat Cat, w uint8) Info {
	return Info(op) | Info(k)<<8 | Info(cat)<<16 | Info(w)<<19 | Info(uint8(64-8*int(w)))<<24
}

// Op says how to read the code's payload.
func (e Info) Op() Op { return Op(e) }

// Kind is the AMQP type the code encodes.
func (e Info) Kind() amqpsax.Kind { return amqpsax.Kind(e >> 8) }

// Cat is the code's category.
func (e Info) Cat() Cat { return Cat(e>>16) & 7 }

// W is the payload width of a Fixed code, and the width of the size (and
// count) fields of a Variable, Compound or Array code.
func (e Info) W() uint8 { return uint8(e>>19) & 31 }

// Sh is 64 - 8×W, for a fixed-width payload of up to eight bytes: the
// shift that moves its bits to the top of a 64-bit word read so that the
// payload ends where the word ends.
func (e Info) Sh() uint8 { return uint8(e >> 24) }

// Table describes every byte value as a format code. Undefined codes have
// Cat Invalid, Kind KindInvalid and Op OpInvalid. Indexing it with a byte
// is a single load; decoders read it instead of branching per code. The kind of each
// code comes from the root package's one table (amqpsax.Code.Kind); the
// rest is below, and TestTableMatchesSpec checks every row against the
// spec's XML.
var Table = func() (t [256]Info) {
	for _, r := range []struct {
		c   amqpsax.Code
		cat Cat
		w   uint8
		op  Op
	}{
		{amqpsax.CodeDescribed, Described, 0, OpDescribed},
		{amqpsax.CodeNull, Fixed, 0, OpNull},
		{amqpsax.CodeBool, Fixed, 1, OpBool},
		{amqpsax.CodeTrue, Fixed, 0, OpTrue},
		{amqpsax.CodeFalse, Fixed, 0, OpFalse},
		{amqpsax.CodeUbyte, Fixed, 1, OpUbyte},
		{amqpsax.CodeUshort, Fixed, 2, OpUshort},
		{amqpsax.CodeUint, Fixed, 4, OpUint},
		{amqpsax.CodeSmallUint, Fixed, 1, OpSmallUint},
		{amqpsax.CodeUint0, Fixed, 0, OpUint0},
		{amqpsax.CodeUlong, Fixed, 8, OpUlong},
		{amqpsax.CodeSmallUlong, Fixed, 1, OpSmallUlong},
		{amqpsax.CodeUlong0, Fixed, 0, OpUlong0},
		{amqpsax.CodeByte, Fixed, 1, OpByte},
		{amqpsax.CodeShort, Fixed, 2, OpShort},
		{amqpsax.CodeInt, Fixed, 4, OpInt},
		{amqpsax.CodeSmallInt, Fixed, 1, OpSmallInt},
		{amqpsax.CodeLong, Fixed, 8, OpLong},
		{amqpsax.CodeSmallLong, Fixed, 1, OpSmallLong},
		{amqpsax.CodeFloat, Fixed, 4, OpFloat},
		{amqpsax.CodeDouble, Fixed, 8, OpDouble},
		{amqpsax.CodeDecimal32, Fixed, 4, OpDecimal32},
		{amqpsax.CodeDecimal64, Fixed, 8, OpDecimal64},
		{amqpsax.CodeDecimal128, Fixed, 16, OpDecimal128},
		{amqpsax.CodeChar, Fixed, 4, OpChar},
		{amqpsax.CodeTimestamp, Fixed, 8, OpTimestamp},
		{amqpsax.CodeUUID, Fixed, 16, OpUUID},
		{amqpsax.CodeVbin8, Variable, 1, OpBinary8},
		{amqpsax.CodeVbin32, Variable, 4, OpBinary32},
		{amqpsax.CodeStr8, Variable, 1, OpString8},
		{amqpsax.CodeStr32, Variable, 4, OpString32},
		{amqpsax.CodeSym8, Variable, 1, OpSymbol8},
		{amqpsax.CodeSym32, Variable, 4, OpSymbol32},
		{amqpsax.CodeList0, Fixed, 0, OpList0},
		{amqpsax.CodeList8, Compound, 1, OpList8},
		{amqpsax.CodeList32, Compound, 4, OpList32},
		{amqpsax.CodeMap8, Compound, 1, OpMap8},
		{amqpsax.CodeMap32, Compound, 4, OpMap32},
		{amqpsax.CodeArray8, Array, 1, OpArray8},
		{amqpsax.CodeArray32, Array, 4, OpArray32},
	} {
		t[r.c] = info(r.op, r.c.Kind(), r.cat, r.w)
	}
	return t
}()

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
	Overrun        Status = -12 // amqpsax.ErrOverrun
	Trailing       Status = -13 // amqpsax.ErrTrailing
	lowestStatusOK Status = -14
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
	-Overrun:       amqpsax.ErrOverrun,
	-Trailing:      amqpsax.ErrTrailing,
}

// Cut is the fault of a value that does not fit in the bytes its level
// leaves it. sized tells whether that level, or one enclosing it, has a
// size of its own: a list, map or array, or a described value that was
// measured. A decoder enters such a level only once its size fits in the
// input, so the level is complete and no more input can mend the value:
// Overrun, whether the input goes on past the level's end or ends there
// too. Only a value at the top level (or in described values there, which
// carry no size) runs past the end of the input itself: EOF, a cut that
// more input may complete.
func Cut(sized bool) Status {
	if sized {
		return Overrun
	}
	return EOF
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

// Var8 reads the 8-bit size field of a vbin8, str8 or sym8 at b[0] and
// returns the payload's size, or -1 when the size field or the payload
// does not fit in b. It inlines: decoders call it per value.
func Var8(b []byte) int {
	if len(b) == 0 || int(b[0]) >= len(b) {
		return -1
	}
	return int(b[0])
}

// Var32 is Var8 for the 32-bit size field of a vbin32, str32 or sym32.
func Var32(b []byte) int {
	if len(b) < 4 || uint64(binary.BigEndian.Uint32(b)) > uint64(len(b)-4) {
		return -1
	}
	return int(binary.BigEndian.Uint32(b))
}

// Compound8 reads the 8-bit size and count fields of a list8 or map8 at
// b[0], when they are sound: the size fits in b and the count in the
// size. It returns the bytes after the count field and the count, or -1
// for anything else, which Body then names. It inlines: the fast path of
// Body's compound case, for the decoders' loops.
func Compound8(b []byte) (rest, count int) {
	if len(b) < 2 || b[0] == 0 || int(b[0]) >= len(b) || b[1] >= b[0] {
		return -1, 0
	}
	return int(b[0]) - 1, int(b[1])
}

// Compound32 is Compound8 for the 32-bit size and count of a list32 or
// map32.
func Compound32(b []byte) (rest, count int) {
	if len(b) < 8 {
		return -1, 0
	}
	sz, n := binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:])
	if sz < 4 || uint64(sz) > uint64(len(b)-4) || n > sz-4 {
		return -1, 0
	}
	return int(sz) - 4, int(n)
}

// Body reads the length fields of a value whose constructor c has been
// consumed and whose body starts at b[0]. It returns hdr, the bytes of the
// size and count fields; size, the bytes that follow them (the payload; an
// array's element constructor and elements; a compound's elements); and
// count, the element count of a compound or array. It checks that size fits
// in b and that count can fit in size. For an array it does not read the
// element constructor: see ArrayCtor. c must not be CodeDescribed or
// invalid; a negative hdr is the Status of the fault.
//
// Body is the one home of the wire rule for compounds, which both decoders
// (and Skip) apply through it: a size or count field that can never be
// satisfied is malformed at once (SizeMismatch, CountTooLarge,
// OddMapCount), even when the input ends right after it — a size that
// cannot hold its count field (nor, for an array, its element
// constructor), a list or map count larger than the bytes after it (each
// element takes at least one), an odd map count, an array count past the
// zero-width bound. EOF is only for a header that could still be whole:
// a size or count field that is cut, or contents that do not fit in b.
func Body(c amqpsax.Code, b []byte) (hdr, size, count int) {
	e := Table[c]
	switch e.Cat() {
	case Fixed:
		if len(b) < int(e.W()) {
			return int(EOF), 0, 0
		}
		if c == amqpsax.CodeBool && b[0] > 1 {
			return int(BadBool), 0, 0
		}
		return 0, int(e.W()), 0
	case Variable:
		n := Var8(b)
		if e.W() == 4 {
			n = Var32(b)
		}
		if n < 0 {
			return int(EOF), 0, 0
		}
		return int(e.W()), n, 0
	case Compound, Array:
		// The wire rule: a size or count field that no bytes can satisfy
		// is malformed at once, whether or not the input ends inside the
		// value — no byte that follows can mend it. Only a header that
		// could still hold (and whose fields are all here) waits for its
		// contents: EOF, while they do not fit in b.
		w := int(e.W())
		if len(b) < w {
			return int(EOF), 0, 0 // the size field is cut
		}
		var sz uint64
		if w == 1 {
			sz = uint64(b[0])
		} else {
			sz = uint64(binary.BigEndian.Uint32(b))
		}
		// The size must hold the count field and, for an array, its
		// element constructor (at least one byte; an array's elements
		// may have no width at all).
		if sz < uint64(w) || e.Cat() == Array && sz == uint64(w) {
			return int(SizeMismatch), 0, 0
		}
		if len(b) < 2*w {
			return int(EOF), 0, 0 // the count field is cut
		}
		var cnt uint64
		if w == 1 {
			cnt = uint64(b[1])
		} else {
			cnt = uint64(binary.BigEndian.Uint32(b[4:]))
		}
		rest := sz - uint64(w) // bytes after the count field
		if e.Cat() == Compound {
			// Every element takes at least one byte.
			if cnt > rest {
				return int(CountTooLarge), 0, 0
			}
			if e.Kind() == amqpsax.KindMap && cnt&1 != 0 {
				return int(OddMapCount), 0, 0
			}
		} else if cnt > ZeroWidthBase+ZeroWidthPerByte*sz || cnt > math.MaxInt32 {
			// The element bodies are checked by ArrayCtor, once the
			// array is all here.
			return int(CountTooLarge), 0, 0
		}
		if sz > uint64(len(b)-w) {
			return int(EOF), 0, 0 // sound, but its contents are cut
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
// of the faulty constructor byte. b is the array's body, whose size was
// checked to fit in the input, so a constructor that runs past its end is
// Overrun, never a cut (Cut).
func ArrayCtor(b []byte, count int) (elem amqpsax.Code, ctorLen, descOff, descLen int) {
	if len(b) < 1 {
		return 0, int(Overrun), 0, 0
	}
	elem = amqpsax.Code(b[0])
	ctorLen = 1
	if elem == amqpsax.CodeDescribed {
		if len(b) < 2 {
			return 0, int(Overrun), 1, 0
		}
		dc := amqpsax.Code(b[1])
		switch Table[dc].Cat() {
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
		if h == int(EOF) {
			return 0, int(Overrun), 1, 0
		}
		if h < 0 {
			return 0, h, 1, 0
		}
		descOff, descLen = 1, 1+h+n
		ctorLen = 1 + descLen
		if len(b) <= ctorLen {
			return 0, int(Overrun), ctorLen, 0
		}
		elem = amqpsax.Code(b[ctorLen])
		ctorLen++
		if elem == amqpsax.CodeDescribed {
			return 0, int(BadArrayCode), ctorLen - 1, 0
		}
	}
	e := Table[elem]
	if e.Cat() == Invalid {
		return 0, int(BadCode), ctorLen - 1, 0
	}
	rest := uint64(len(b) - ctorLen)
	if e.Cat() == Fixed {
		if uint64(count)*uint64(e.W()) != rest {
			if uint64(count)*uint64(e.W()) > rest {
				return 0, int(CountTooLarge), ctorLen - 1, 0
			}
			return 0, int(SizeMismatch), ctorLen - 1, 0
		}
	} else if uint64(count)*uint64(e.W()) > rest {
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
		if Table[c].Cat() == Array {
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
	if Table[c].Cat() != Variable {
		return OK
	}
	h, n, _ := Body(c, d[1:])
	return CheckText(Table[c].Kind(), d[1+h:1+h+n])
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

// Descriptor reads the descriptor of a described value, the value at the
// start of b (AMQP 1.0 part 1 §1.2: a ulong, or a symbolic name). For a
// ulong of any width, d is its value and sym nil; for a symbol, sym is its
// bytes (a view into b) and d the number the spec gives that name
// (amqpsax.LookupDescriptor), or 0 for a name it does not define. n is the
// length of the descriptor value, or a negative Status when its length
// fields do not fit in b. ok is false for a descriptor of another type
// (which n still measures) and on a fault.
func Descriptor(b []byte) (d amqpsax.Descriptor, sym []byte, n int, ok bool) {
	if len(b) >= 2 && b[0] == byte(amqpsax.CodeSmallUlong) {
		return amqpsax.Descriptor(b[1]), nil, 2, true // the spec's descriptors, as peers write them
	}
	if len(b) == 0 {
		return 0, nil, int(EOF), false
	}
	c := amqpsax.Code(b[0])
	switch Table[c].Kind() {
	case amqpsax.KindUlong:
		h, size, _ := Body(c, b[1:])
		if h < 0 {
			return 0, nil, h, false
		}
		return amqpsax.Descriptor(Uint(c, b[1:])), nil, 1 + h + size, true
	case amqpsax.KindSymbol:
		h, size, _ := Body(c, b[1:])
		if h < 0 {
			return 0, nil, h, false
		}
		sym = b[1+h : 1+h+size : 1+h+size]
		d, _ = amqpsax.LookupDescriptor(sym)
		return d, sym, 1 + h + size, true
	}
	n, _ = Skip(b)
	return 0, nil, n, false
}

// Number is a Go type array elements of fixed-width numeric codes decode
// to.
type Number interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// FillElems decodes len(dst) element bodies of the fixed-width numeric
// code c from p, which holds at least that many (ArrayCtor checked it),
// into dst: integers sign-extended from signed codes, floats by value,
// chars as code points, timestamps as milliseconds, decimals not at all
// (c must be none of those, nor boolean). It is the one loop over array
// elements: dispatch's batches and the cursor's Append helpers both use
// it, one loop per width with no switch inside.
func FillElems[T Number](dst []T, c amqpsax.Code, p []byte) {
	n := len(dst)
	// p cut to the elements' length: then the compiler proves every
	// element's bytes in bounds from i < n (2x faster on ints, measured).
	p = p[:n*int(Table[c].W())]
	switch Table[c].Op() {
	case OpUint0, OpUlong0:
		clear(dst)
	case OpUbyte, OpSmallUint, OpSmallUlong:
		for i, x := range p {
			dst[i] = T(x)
		}
	case OpByte, OpSmallInt, OpSmallLong:
		for i, x := range p {
			dst[i] = T(int8(x))
		}
	case OpUshort:
		for i := range dst {
			dst[i] = T(binary.BigEndian.Uint16(p[2*i : 2*i+2]))
		}
	case OpShort:
		for i := range dst {
			dst[i] = T(int16(binary.BigEndian.Uint16(p[2*i : 2*i+2])))
		}
	case OpUint, OpChar:
		for i := range dst {
			dst[i] = T(binary.BigEndian.Uint32(p[4*i : 4*i+4]))
		}
	case OpInt:
		for i := range dst {
			dst[i] = T(int32(binary.BigEndian.Uint32(p[4*i : 4*i+4])))
		}
	case OpFloat:
		for i := range dst {
			dst[i] = T(Float(p[4*i : 4*i+4]))
		}
	case OpUlong:
		for i := range dst {
			dst[i] = T(binary.BigEndian.Uint64(p[8*i : 8*i+8]))
		}
	case OpLong, OpTimestamp:
		for i := range dst {
			dst[i] = T(int64(binary.BigEndian.Uint64(p[8*i : 8*i+8])))
		}
	case OpDouble:
		for i := range dst {
			dst[i] = T(Double(p[8*i : 8*i+8]))
		}
	}
}
