package composite

import (
	"errors"
	"io"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/stream"
)

// The causes of a Fault. Package frame exports them (frame.ErrFieldType
// and its kin); package message reports a field of the wrong type as its
// own ErrSectionType.
var (
	ErrPerformative = errors.New("not the expected performative")
	ErrFieldType    = errors.New("field of the wrong type")
	ErrMissingField = errors.New("mandatory field missing")
	ErrFieldValue   = errors.New("field value not among the spec's choices")
)

// ErrFault is the Err of a Reader that found a Fault, ErrCursor of one
// whose cursor failed: its user turns the Fault, or the cursor's error
// (Rebase), into its own error.
var (
	ErrFault  = errors.New("composite: fault")
	ErrCursor = errors.New("composite: cursor error")
)

// Fault is what a Reader found wrong, for its user to report in its own
// terms (frame as a *FieldError, message as ErrSectionType).
type Fault struct {
	Cause   error // ErrPerformative, ErrFieldType, ErrMissingField or ErrFieldValue
	Off     int   // in the data, Base added
	Code    amqpsax.Code
	HasCode bool
	Type    string // the composite type, as the spec names it
	Field   string // the field; "" when the fault is the composite itself
	Want    string // what the spec requires there
	Found   string // what the input holds
}

// Reader reads one composite value through a stream.Cursor: the described
// value, its list, then its fields one at a time, each checked against
// its Spec. Every composite is read by its own Reader (a Cursor declared
// where it is used holds four levels without allocating; a composite
// needs three). Its error is Err: ErrCursor when the cursor failed (C.Err
// says how), ErrFault with the Fault, or what its user put there (the
// error of a composite the field held).
type Reader struct {
	C     stream.Cursor
	Base  int // offset of the cursor's data, for errors
	Spec  *Spec
	Set   uint32 // bit i: field i was present and not null
	N     uint8  // list elements of the encoding, up to the type's field count
	Wide  bool   // the list was a list32
	list  int    // offset of the list, for errors
	Raw   []byte // the encoding of the current field, for maps, symbols and composites
	I     int    // the current field, set by Next
	Err   error
	Fault Fault
}

// Fail records a fault at off in the cursor's data (the first one only)
// and returns false.
func (r *Reader) Fail(off int, code amqpsax.Code, hasCode bool, cause error, typ, field, want, found string) bool {
	if r.Err == nil {
		r.Err = ErrFault
		r.Fault = Fault{Cause: cause, Off: r.Base + off, Code: code, HasCode: hasCode, Type: typ, Field: field,
			Want: want, Found: found}
	}
	return false
}

// CursorErr records that the cursor failed, if it did, and reports
// whether it did not (nor anything before).
func (r *Reader) CursorErr() bool {
	if r.Err != nil {
		return false
	}
	if r.C.Err() != nil {
		r.Err = ErrCursor
		return false
	}
	return true
}

// Rebase returns a cursor's error err with Op op and its offset plus
// base, the cursor's data starting at base; with overrun, a cut is
// amqpsax.ErrOverrun: the data was complete and no more bytes can mend it.
func Rebase(err error, op string, base int, overrun bool) error {
	var ae *amqpsax.Error
	if errors.As(err, &ae) {
		e := *ae
		e.Op, e.Offset = op, base+ae.Offset
		if overrun && e.Err == io.ErrUnexpectedEOF {
			e.Err = amqpsax.ErrOverrun
		}
		return &e
	}
	return err
}

// Open reads the described value at the start of data, whose offset is
// base, and returns its descriptor and the length of its encoding. The
// cursor is left on it. want names the type wanted, for errors.
func (r *Reader) Open(data []byte, base int, want string) (d amqpsax.Descriptor, end int, ok bool) {
	r.Base = base
	r.C.Reset(data)
	if !r.C.Next() {
		if r.CursorErr() { // no value at all: an empty body
			r.Fail(0, 0, false, ErrPerformative, want, "", want, "empty body")
		}
		return 0, 0, false
	}
	if r.C.Kind() != amqpsax.KindDescribed {
		return 0, 0, r.Fail(r.C.Offset(), r.C.Code(), true, ErrPerformative, want, "", want, r.C.Kind().String())
	}
	d, _, ok = r.C.Descriptor()
	if !ok {
		if r.C.Raw() == nil { // cut or malformed
			return 0, 0, r.CursorErr()
		}
		return 0, 0, r.Fail(r.C.Offset(), r.C.Code(), true, ErrPerformative, want, "", want, "descriptor of another type")
	}
	raw := r.C.Raw()
	if raw == nil {
		return 0, 0, r.CursorErr()
	}
	// an undefined symbolic descriptor is 0, which no type has
	return d, len(raw), true
}

// Wrong reports the described value the cursor is on, of descriptor d,
// as not the composite wanted.
func (r *Reader) Wrong(want string, d amqpsax.Descriptor) bool {
	_, sym, _ := r.C.Descriptor()
	found := d.String()
	if sym != nil && d == 0 {
		found = "descriptor " + string(sym)
	}
	return r.Fail(r.C.Offset(), r.C.Code(), true, ErrPerformative, want, "", want, found)
}

// Fields enters the described value the cursor is on and its list, to
// read the fields of spec.
func (r *Reader) Fields(spec *Spec) bool {
	r.Spec = spec
	if !r.C.Enter() || !r.C.Next() || !r.C.Next() { // the descriptor, then the value
		return r.CursorErr()
	}
	if r.C.Kind() != amqpsax.KindList {
		return r.Fail(r.C.Offset(), r.C.Code(), true, ErrFieldType, spec.Name, "", "list", r.C.Kind().String())
	}
	r.list = r.C.Offset()
	r.N = uint8(min(r.C.Count(), len(spec.Fields)))
	r.Wide = r.C.Code() == amqpsax.CodeList32
	if !r.C.Enter() {
		return r.CursorErr()
	}
	return true
}

// Next moves to the next field that is present and not null, checks it
// against the spec, marks it in Set and sets I to its position. It
// returns false at the end of the list (extra fields, which a later
// version of the spec may define, are skipped) or on error. For a map, a
// symbol field and a composite, Raw is the field's encoding.
func (r *Reader) Next() bool {
	for r.Err == nil && r.C.Next() {
		fields, i, k := r.Spec.Fields, r.C.Index(), r.C.Kind()
		if uint(i) >= uint(len(fields)) || k == amqpsax.KindNull {
			continue
		}
		if fs := &fields[i]; fs.plain&(1<<(k&31)) == 0 && !r.check(fs) { // a scalar of its kind needs no check
			return false
		}
		r.Set |= 1 << (i & 31) // a Spec has at most 32 fields
		r.I = i
		return true
	}
	r.CursorErr()
	return false
}

// check checks the value the cursor is on against field fs. Maps and
// arrays of symbols are walked (their keys and values, their elements),
// so that reading them later cannot fail.
func (r *Reader) check(fs *Field) bool {
	k := r.C.Kind()
	switch {
	case fs.Takes(k):
	case fs.Multiple && k == amqpsax.KindArray && r.C.ElemKind() == fs.Kind:
	case fs.Multiple && k == amqpsax.KindList:
		return r.symbolList(fs)
	default:
		return r.fieldType(fs)
	}
	switch k {
	case amqpsax.KindMap, amqpsax.KindArray, amqpsax.KindDescribed:
		if r.Raw = r.C.Raw(); r.Raw == nil {
			return r.CursorErr()
		}
		if k == amqpsax.KindDescribed {
			return true
		}
		if !r.C.Enter() {
			return r.CursorErr()
		}
		for r.C.Next() {
		}
		if !r.CursorErr() {
			return false
		}
		r.C.Exit()
	case amqpsax.KindSymbol:
		if fs.Multiple {
			r.Raw = r.C.Raw()
		}
	}
	return true
}

// symbolList checks a list given where the spec wants a symbol or an
// array of symbols: Qpid Proton's python binding writes a Python list of
// symbols as one (doc/peers.md), and deployed peers accept it, so a list
// whose elements are all symbols is taken (and kept raw); any other
// element is a field of the wrong type.
func (r *Reader) symbolList(fs *Field) bool {
	off, code := r.C.Offset(), r.C.Code()
	if r.Raw = r.C.Raw(); r.Raw == nil || !r.C.Enter() {
		return r.CursorErr()
	}
	for r.C.Next() {
		if r.C.Kind() != amqpsax.KindSymbol {
			return r.Fail(off, code, true, ErrFieldType, r.Spec.Name, fs.Name, fs.Want,
				"list holding "+r.C.Kind().String())
		}
	}
	if !r.CursorErr() {
		return false
	}
	r.C.Exit()
	return true
}

func (r *Reader) fieldType(fs *Field) bool {
	found := r.C.Kind().String()
	if r.C.Kind() == amqpsax.KindArray {
		found = "array of " + r.C.ElemKind().String()
	}
	return r.Fail(r.C.Offset(), r.C.Code(), true, ErrFieldType, r.Spec.Name, fs.Name, fs.Want, found)
}

// BadValue reports the current field's value as not among the spec's
// choices.
func (r *Reader) BadValue(found string) bool {
	fs := &r.Spec.Fields[r.I]
	return r.Fail(r.C.Offset(), r.C.Code(), true, ErrFieldValue, r.Spec.Name, fs.Name, fs.Want, found)
}

// Done checks the mandatory fields, once the list has been read, and
// reports whether the composite was read without error.
func (r *Reader) Done() bool {
	if r.Err == nil && r.Spec.mand&^r.Set == 0 {
		return true
	}
	return r.missing()
}

func (r *Reader) missing() bool {
	if r.Err != nil {
		return false
	}
	for i, fs := range r.Spec.Fields {
		if fs.Mandatory && r.Set&(1<<i) == 0 {
			return r.Fail(r.list, 0, false, ErrMissingField, r.Spec.Name, fs.Name, fs.Want, "")
		}
	}
	return true
}

// Uint32 and Bool read the field the cursor is on, once Next has checked
// its kind (and inline where the caller's own wrapper would not).
func (r *Reader) Uint32() uint32 { return uint32(r.C.Uint()) }
func (r *Reader) Bool() bool     { return r.C.Bool() }
