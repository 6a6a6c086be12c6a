package amqpsax

import (
	"errors"
	"io"
	"strconv"
)

// Sentinel causes of an *Error, for errors.Is. Truncated input is
// io.ErrUnexpectedEOF, and only truncated input: the input ends before a
// value that claims to go on, so more bytes (the next transfer frame) may
// complete it. The causes that describe inconsistent encodings wrap
// ErrMalformed, so errors.Is(err, ErrMalformed) catches all of them; no
// more input can mend those. ErrTooDeep (a limit of this decoder) and the
// text checks' ErrInvalidUTF8 and ErrInvalidSymbol do not: a caller that
// waits for more input on a cut rejects on every other error.
var (
	// ErrInvalidCode: a byte where a constructor belongs is not a format
	// code the spec defines.
	ErrInvalidCode = wrapMalformed("invalid format code")
	// ErrMalformed: the encoding contradicts itself (size and count disagree,
	// a size too small for its own count field, …).
	ErrMalformed = errors.New("malformed encoding")
	// ErrCountTooLarge: a compound claims more elements than its size can hold.
	ErrCountTooLarge = wrapMalformed("count exceeds size")
	// ErrSizeMismatch: a compound's elements do not end where its size says.
	ErrSizeMismatch = wrapMalformed("size does not match contents")
	// ErrOddMapCount: a map's element count is odd, so a key has no value.
	ErrOddMapCount = wrapMalformed("odd map count")
	// ErrInvalidBool: a 0x56 boolean whose byte is neither 0x00 nor 0x01.
	ErrInvalidBool = wrapMalformed("invalid boolean byte")
	// ErrInvalidArrayCode: an array's element constructor is not usable
	// there (a described constructor nested in a described constructor).
	ErrInvalidArrayCode = wrapMalformed("invalid array element constructor")
	// ErrOverrun: a value runs past the end of the list, map or array
	// that holds it, whether the input goes on or ends there too. (A
	// value no list, map or array holds that runs past the end of the
	// input is io.ErrUnexpectedEOF instead: more bytes may complete it.
	// Here none can.)
	ErrOverrun = wrapMalformed("value overruns its container")
	// ErrTrailing: bytes follow a value where exactly one was expected
	// (stream.ParseValue, message.Append's annotation values).
	ErrTrailing = wrapMalformed("bytes after the value")
	// ErrTooDeep: compounds and described values nest deeper than the
	// decoder's configured limit.
	ErrTooDeep = errors.New("nesting too deep")
	// ErrInvalidUTF8: a string is not valid UTF-8 (only when validation is on).
	ErrInvalidUTF8 = errors.New("invalid UTF-8 in string")
	// ErrInvalidSymbol: a symbol holds a byte outside ASCII (only when
	// validation is on).
	ErrInvalidSymbol = errors.New("non-ASCII byte in symbol")
	// ErrWrongKind: a getter was called on a value of another kind.
	ErrWrongKind = errors.New("value of another kind")
)

type malformed struct{ msg string }

func (e *malformed) Error() string { return e.msg }
func (e *malformed) Unwrap() error { return ErrMalformed }

func wrapMalformed(msg string) error { return &malformed{msg} }

// Error reports a fault in the input: what (Err), in which encoding
// (Code), and where (Offset, in bytes from the start of the input given to
// the decoder). It is the only error type the decoders return for bad
// input; errors a Handler returns are passed through unchanged.
type Error struct {
	Op     string // the package that found the fault: "dispatch", "stream", "message", …
	Offset int    // byte offset of the value at fault (where it starts or would start)
	Code   Code   // the format code of the value at fault, when HasCode
	// HasCode reports whether Code was read: false when the fault is that
	// the constructor byte itself is missing.
	HasCode bool
	Err     error // the cause: io.ErrUnexpectedEOF or one of the Err… sentinels
}

// Error formats the fault as "op: cause (code) at offset N".
func (e *Error) Error() string {
	s := e.Op
	if s != "" {
		s += ": "
	}
	cause := "error"
	if e.Err != nil {
		cause = e.Err.Error()
	}
	if e.Err == io.ErrUnexpectedEOF {
		cause = "truncated input"
	}
	s += cause
	if e.HasCode {
		s += " (" + e.Code.String() + ")"
	}
	return s + " at offset " + strconv.Itoa(e.Offset)
}

// Unwrap returns the cause, so errors.Is(err, io.ErrUnexpectedEOF) and
// errors.Is(err, ErrMalformed) work.
func (e *Error) Unwrap() error { return e.Err }

// KindError is the cause of the error a getter records when it is called
// on a value of another kind (a stream.Cursor getter; a null value is not
// of another kind: getters return the zero value for it). It unwraps to
// ErrWrongKind.
type KindError struct {
	Want string // what the getter reads: "string", "ubyte, ushort, uint or ulong" …
	Have Kind   // what the value is
}

// Error returns "value of another kind: want …, have …".
func (e *KindError) Error() string {
	return "value of another kind: want " + e.Want + ", have " + e.Have.String()
}

// Unwrap returns ErrWrongKind.
func (e *KindError) Unwrap() error { return ErrWrongKind }
