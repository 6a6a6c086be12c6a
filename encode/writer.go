package encode

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
	"github.com/google/uuid"
)

// Errors a Writer returns when the events it is given do not form a value.
var (
	ErrUnbalanced      = errors.New("encode: end event without its matching start")
	ErrDescribedArity  = errors.New("encode: a described value needs exactly a descriptor and a value")
	ErrOddMap          = errors.New("encode: map key without a value")
	ErrArrayElement    = errors.New("encode: array element of another kind than the array's")
	ErrArrayDescriptor = errors.New("encode: array elements of a described array need one primitive descriptor")
	ErrArrayKind       = errors.New("encode: array element kind cannot be encoded")
)

// Writer encodes the events of amqpsax.Handler: it is a Handler, so
// dispatch.Decode(data, &w) re-encodes data, and a Handler that wraps a
// Writer and forwards only some events is a streaming filter.
//
// Primitives are written in their smallest encoding (as the Append
// functions choose). Lists, maps and arrays are written with back-patched
// size and count: the count given to OnListStart, OnMapStart and
// OnArrayStart is ignored and the number of values actually written is
// used, so a filter may drop or add elements freely. Unless Wide is set, a
// compound is written as list0, or in its 8-bit form when it fits.
//
// Array elements arrive as ordinary values and are written as element
// bodies under one constructor chosen from the array's element kind: the
// full-width code (uint 0x70, long 0x81, boolean 0x56, string str32-utf8,
// list list32 …), since a later element may need it. In an array of
// described values, every element must carry the same primitive
// descriptor, which is written once in the constructor.
//
// The zero Writer is ready to use. After Reset it reuses its buffer, so a
// warm Writer encodes without allocating.
type Writer struct {
	// Wide makes every list, map and array use its 32-bit form, which
	// avoids moving a small compound's contents when it ends.
	Wide bool

	buf   []byte
	stack []frame
}

type frame struct {
	kind amqpsax.Kind // KindList, KindMap, KindArray or KindDescribed
	hdr  int          // offset of the size field (compounds); of 0x00 (described)
	n    int          // values written at this level

	elemBody bool // this compound is an array element: no code, no compaction

	// arrays
	elem     amqpsax.Code // element constructor, 0 until known
	elemKind amqpsax.Kind // kind of the elements (of the described values' values)
	descArr  bool         // an array of described values
	descOff  int          // described arrays: the shared descriptor in buf
	descLen  int
	// described arrays with a text descriptor: the view (into the
	// decoder's input) of the text it was written from, and its kind;
	// see variable
	descView []byte
	descKind amqpsax.Kind

	// a described value that is an element of a described array
	inArray  bool
	scratch  int    // where this element's descriptor was written, to compare
	view     []byte // its text, as given (binary, string or symbol)
	sameDesc bool   // its text was the very view of the array's: nothing written
}

// Bytes returns the encoded values written since the last Reset. It
// aliases the Writer's buffer: valid until the next event or Reset. Values
// still open (a list not yet ended) are incomplete in it.
func (w *Writer) Bytes() []byte { return w.buf }

// Reset empties the Writer, keeping its buffer for reuse.
func (w *Writer) Reset() {
	w.buf = w.buf[:0]
	w.stack = w.stack[:0]
}

// Depth returns the number of compounds and described values now open.
func (w *Writer) Depth() int { return len(w.stack) }

// arrayCodes is the element constructor the Writer uses for each kind.
var arrayCodes = [...]amqpsax.Code{
	amqpsax.KindNull:       amqpsax.CodeNull,
	amqpsax.KindBool:       amqpsax.CodeBool,
	amqpsax.KindUbyte:      amqpsax.CodeUbyte,
	amqpsax.KindUshort:     amqpsax.CodeUshort,
	amqpsax.KindUint:       amqpsax.CodeUint,
	amqpsax.KindUlong:      amqpsax.CodeUlong,
	amqpsax.KindByte:       amqpsax.CodeByte,
	amqpsax.KindShort:      amqpsax.CodeShort,
	amqpsax.KindInt:        amqpsax.CodeInt,
	amqpsax.KindLong:       amqpsax.CodeLong,
	amqpsax.KindFloat:      amqpsax.CodeFloat,
	amqpsax.KindDouble:     amqpsax.CodeDouble,
	amqpsax.KindDecimal32:  amqpsax.CodeDecimal32,
	amqpsax.KindDecimal64:  amqpsax.CodeDecimal64,
	amqpsax.KindDecimal128: amqpsax.CodeDecimal128,
	amqpsax.KindChar:       amqpsax.CodeChar,
	amqpsax.KindTimestamp:  amqpsax.CodeTimestamp,
	amqpsax.KindUUID:       amqpsax.CodeUUID,
	amqpsax.KindBinary:     amqpsax.CodeVbin32,
	amqpsax.KindString:     amqpsax.CodeStr32,
	amqpsax.KindSymbol:     amqpsax.CodeSym32,
	amqpsax.KindList:       amqpsax.CodeList32,
	amqpsax.KindMap:        amqpsax.CodeMap32,
	amqpsax.KindArray:      amqpsax.CodeArray32,
	amqpsax.KindDescribed:  amqpsax.CodeDescribed,
}

// ArrayCode returns the element constructor a Writer uses for arrays of
// kind k (the full-width encoding), and false when k has none.
func ArrayCode(k amqpsax.Kind) (amqpsax.Code, bool) {
	if int(k) >= len(arrayCodes) || k == amqpsax.KindInvalid {
		return 0, false
	}
	return arrayCodes[k], true
}

// value prepares the writing of one value of kind k. It returns elem true
// when the value must be written as an array element body (its
// constructor is the array's), and false when it is written whole.
func (w *Writer) value(k amqpsax.Kind) (elem bool, err error) {
	if len(w.stack) == 0 {
		return false, nil
	}
	f := &w.stack[len(w.stack)-1]
	f.n++
	switch {
	case f.kind == amqpsax.KindArray:
		if f.descArr || k != f.elemKind {
			return false, ErrArrayElement
		}
		return true, nil
	case f.inArray:
		return w.arrayDescribedPart(f, k)
	case f.kind == amqpsax.KindDescribed && f.n > 2:
		return false, ErrDescribedArity
	}
	return false, nil
}

// arrayDescribedPart handles the descriptor (first value) and the value
// (second value) of a described value f that is an element of a described
// array.
func (w *Writer) arrayDescribedPart(f *frame, k amqpsax.Kind) (bool, error) {
	arr := &w.stack[len(w.stack)-2]
	switch f.n {
	case 1: // the descriptor: written whole, compared or kept when the value starts
		if c, _ := ArrayCode(k); k == amqpsax.KindInvalid || wire.Table[c].Cat() > wire.Variable {
			return false, ErrArrayDescriptor
		}
		f.scratch = len(w.buf)
		return false, nil
	case 2: // the value: an element body
		desc := w.buf[f.scratch:]
		if f.sameDesc {
			if k != arr.elemKind {
				return false, ErrArrayDescriptor
			}
			return true, nil
		}
		if wire.Counting {
			wire.Work.Compared += len(desc)
		}
		if f.view != nil {
			arr.descView, arr.descKind = f.view, wire.Table[amqpsax.Code(desc[0])].Kind()
		}
		if arr.elem == 0 {
			// First element: its descriptor stays in the constructor.
			code, ok := ArrayCode(k)
			if !ok || k == amqpsax.KindDescribed {
				return false, ErrArrayKind
			}
			arr.descOff, arr.descLen = f.scratch, len(desc)
			arr.elem, arr.elemKind = code, k
			w.buf = append(w.buf, byte(code))
			return true, nil
		}
		if k != arr.elemKind || string(desc) != string(w.buf[arr.descOff:arr.descOff+arr.descLen]) {
			return false, ErrArrayDescriptor
		}
		w.buf = w.buf[:f.scratch]
		return true, nil
	}
	return false, ErrDescribedArity
}

// elemCode returns the element constructor of the innermost array, or of
// the array that holds the innermost described value.
func (w *Writer) elemCode() amqpsax.Code {
	f := &w.stack[len(w.stack)-1]
	if f.inArray {
		return w.stack[len(w.stack)-2].elem
	}
	return f.elem
}

// OnNull writes null.
func (w *Writer) OnNull() error {
	elem, err := w.value(amqpsax.KindNull)
	if err == nil && !elem {
		w.buf = AppendNull(w.buf)
	}
	return err
}

// OnBool writes true or false (as an array element, the one-byte 0x56 form).
func (w *Writer) OnBool(v bool) error {
	elem, err := w.value(amqpsax.KindBool)
	if err == nil {
		if elem {
			w.buf = AppendBoolElem(w.buf, w.elemCode(), v)
		} else {
			w.buf = AppendBool(w.buf, v)
		}
	}
	return err
}

// fixed writes a fixed-width value: whole with the smallest encoding
// (full), or as an element body of the array's width.
func (w *Writer) fixed(k amqpsax.Kind, v uint64, full func([]byte, uint64) []byte) error {
	elem, err := w.value(k)
	if err == nil {
		if elem {
			w.buf = AppendUintElem(w.buf, w.elemCode(), v)
		} else {
			w.buf = full(w.buf, v)
		}
	}
	return err
}

// OnUbyte writes a ubyte.
func (w *Writer) OnUbyte(v uint8) error {
	return w.fixed(amqpsax.KindUbyte, uint64(v), func(b []byte, v uint64) []byte { return AppendUbyte(b, uint8(v)) })
}

// OnUshort writes a ushort.
func (w *Writer) OnUshort(v uint16) error {
	return w.fixed(amqpsax.KindUshort, uint64(v), func(b []byte, v uint64) []byte { return AppendUshort(b, uint16(v)) })
}

// OnUint writes a uint in its smallest encoding (uint0, smalluint, uint).
func (w *Writer) OnUint(v uint32) error {
	return w.fixed(amqpsax.KindUint, uint64(v), func(b []byte, v uint64) []byte { return AppendUint(b, uint32(v)) })
}

// OnUlong writes a ulong in its smallest encoding (ulong0, smallulong, ulong).
func (w *Writer) OnUlong(v uint64) error {
	return w.fixed(amqpsax.KindUlong, v, AppendUlong)
}

// OnByte writes a byte.
func (w *Writer) OnByte(v int8) error {
	return w.fixed(amqpsax.KindByte, uint64(v), func(b []byte, v uint64) []byte { return AppendByte(b, int8(v)) })
}

// OnShort writes a short.
func (w *Writer) OnShort(v int16) error {
	return w.fixed(amqpsax.KindShort, uint64(v), func(b []byte, v uint64) []byte { return AppendShort(b, int16(v)) })
}

// OnInt writes an int in its smallest encoding (smallint, int).
func (w *Writer) OnInt(v int32) error {
	return w.fixed(amqpsax.KindInt, uint64(v), func(b []byte, v uint64) []byte { return AppendInt(b, int32(v)) })
}

// OnLong writes a long in its smallest encoding (smalllong, long).
func (w *Writer) OnLong(v int64) error {
	return w.fixed(amqpsax.KindLong, uint64(v), func(b []byte, v uint64) []byte { return AppendLong(b, int64(v)) })
}

// OnFloat writes a float.
func (w *Writer) OnFloat(v float32) error {
	return w.fixed(amqpsax.KindFloat, uint64(math.Float32bits(v)), func(b []byte, v uint64) []byte {
		return AppendFloat(b, math.Float32frombits(uint32(v)))
	})
}

// OnDouble writes a double.
func (w *Writer) OnDouble(v float64) error {
	return w.fixed(amqpsax.KindDouble, math.Float64bits(v), func(b []byte, v uint64) []byte {
		return AppendDouble(b, math.Float64frombits(v))
	})
}

// OnChar writes a char.
func (w *Writer) OnChar(v rune) error {
	return w.fixed(amqpsax.KindChar, uint64(uint32(v)), func(b []byte, v uint64) []byte { return AppendChar(b, rune(v)) })
}

// OnTimestamp writes a timestamp (ms since the Unix epoch).
func (w *Writer) OnTimestamp(ms int64) error {
	return w.fixed(amqpsax.KindTimestamp, uint64(ms), func(b []byte, v uint64) []byte { return AppendTimestamp(b, int64(v)) })
}

// raw writes a value whose body is v as it is (decimals, uuid).
func (w *Writer) raw(k amqpsax.Kind, c amqpsax.Code, v []byte) error {
	elem, err := w.value(k)
	if err == nil {
		if !elem {
			w.buf = append(w.buf, byte(c))
		}
		w.buf = append(w.buf, v...)
	}
	return err
}

// OnDecimal32 writes a decimal32, its bytes as they are.
func (w *Writer) OnDecimal32(v amqpsax.Decimal32) error {
	return w.raw(amqpsax.KindDecimal32, amqpsax.CodeDecimal32, v[:])
}

// OnDecimal64 writes a decimal64, its bytes as they are.
func (w *Writer) OnDecimal64(v amqpsax.Decimal64) error {
	return w.raw(amqpsax.KindDecimal64, amqpsax.CodeDecimal64, v[:])
}

// OnDecimal128 writes a decimal128, its bytes as they are.
func (w *Writer) OnDecimal128(v amqpsax.Decimal128) error {
	return w.raw(amqpsax.KindDecimal128, amqpsax.CodeDecimal128, v[:])
}

// OnUUID writes a uuid.
func (w *Writer) OnUUID(v uuid.UUID) error { return w.raw(amqpsax.KindUUID, amqpsax.CodeUUID, v[:]) }

// variable writes a binary, string or symbol.
func (w *Writer) variable(k amqpsax.Kind, c8 amqpsax.Code, v []byte) error {
	if n := len(w.stack); n >= 2 && w.stack[n-1].inArray && w.stack[n-1].n == 0 {
		// The descriptor of an element of an array of described values.
		// A decoder replays the array's one descriptor for each element:
		// when the text is the very view the array's descriptor was
		// written from (same bytes of the same input), it is known equal
		// without writing and comparing it again, so re-encoding the
		// array costs the descriptor's length once, not once per element.
		f, arr := &w.stack[n-1], &w.stack[n-2]
		if sameView(v, arr.descView) && k == arr.descKind {
			f.n++
			f.sameDesc = true
			return nil
		}
		f.view = v
	}
	elem, err := w.value(k)
	if err == nil {
		if elem {
			w.buf = AppendBytesElem(w.buf, w.elemCode(), v)
		} else {
			w.buf = appendVariable(w.buf, c8, v)
		}
	}
	return err
}

// OnBinary writes a binary (vbin8 when it fits; as an array element, vbin32).
func (w *Writer) OnBinary(v []byte) error {
	return w.variable(amqpsax.KindBinary, amqpsax.CodeVbin8, v)
}

// OnString writes a string (str8-utf8 when it fits), its bytes unchecked.
func (w *Writer) OnString(v []byte) error { return w.variable(amqpsax.KindString, amqpsax.CodeStr8, v) }

// OnSymbol writes a symbol (sym8 when it fits), its bytes unchecked.
func (w *Writer) OnSymbol(v []byte) error { return w.variable(amqpsax.KindSymbol, amqpsax.CodeSym8, v) }

// open starts a list, map or array: whole (code and 32-bit header), or as
// an element body (header only).
func (w *Writer) open(k amqpsax.Kind, c32 amqpsax.Code) (*frame, error) {
	elem, err := w.value(k)
	if err != nil {
		return nil, err
	}
	if !elem {
		w.buf = append(w.buf, byte(c32))
	}
	w.stack = append(w.stack, frame{kind: k, hdr: len(w.buf), elemBody: elem})
	w.buf = append(w.buf, 0, 0, 0, 0, 0, 0, 0, 0)
	return &w.stack[len(w.stack)-1], nil
}

// close ends the innermost compound, which must be of kind k, with count
// elements, patching its size and count.
func (w *Writer) close(k amqpsax.Kind) error {
	if len(w.stack) == 0 || w.stack[len(w.stack)-1].kind != k {
		return ErrUnbalanced
	}
	f := w.stack[len(w.stack)-1]
	w.stack = w.stack[:len(w.stack)-1]
	if f.elemBody || w.Wide {
		content := len(w.buf) - f.hdr - 8
		binary.BigEndian.PutUint32(w.buf[f.hdr:], uint32(content+4))
		binary.BigEndian.PutUint32(w.buf[f.hdr+4:], uint32(f.n))
		return nil
	}
	if k == amqpsax.KindList {
		w.buf = EndList(w.buf, f.hdr-1, f.n)
	} else {
		w.buf = endCompound(w.buf, f.hdr-1, f.n, true)
	}
	return nil
}

// OnListStart starts a list; its count is the number of values written before OnListEnd.
func (w *Writer) OnListStart(int) error {
	_, err := w.open(amqpsax.KindList, amqpsax.CodeList32)
	return err
}

// OnListEnd ends the innermost list, back-patching its size and count.
func (w *Writer) OnListEnd() error { return w.close(amqpsax.KindList) }

// OnMapStart starts a map; its count is the number of keys and values written before OnMapEnd.
func (w *Writer) OnMapStart(int) error {
	_, err := w.open(amqpsax.KindMap, amqpsax.CodeMap32)
	return err
}

// OnMapEnd ends the innermost map; an odd number of keys and values is ErrOddMap.
func (w *Writer) OnMapEnd() error {
	if len(w.stack) > 0 && w.stack[len(w.stack)-1].kind == amqpsax.KindMap && w.stack[len(w.stack)-1].n&1 != 0 {
		return ErrOddMap
	}
	return w.close(amqpsax.KindMap)
}

// OnArrayStart starts an array of elements of kind elem (see Writer for the element constructor).
func (w *Writer) OnArrayStart(_ int, elem amqpsax.Kind) error {
	code, ok := ArrayCode(elem)
	if !ok {
		return ErrArrayKind
	}
	f, err := w.open(amqpsax.KindArray, amqpsax.CodeArray32)
	if err != nil {
		return err
	}
	f.elemKind = elem
	if elem == amqpsax.KindDescribed {
		// The constructor is written with the first element, which
		// brings the descriptor and the values' kind.
		f.elemKind = amqpsax.KindInvalid
		f.descArr = true
		return nil
	}
	f.elem = code
	w.buf = append(w.buf, byte(code))
	return nil
}

// OnArrayDescriptor implements amqpsax.ArrayDescriptorHandler: it
// writes the constructor of the array of described values just started,
// with desc (one encoded primitive value other than list0) as the
// descriptor and elem as the elements' kind, so that an empty array keeps
// its descriptor. The descriptor is written in its smallest encoding, as
// the elements that follow must bring it again.
func (w *Writer) OnArrayDescriptor(desc []byte, elem amqpsax.Kind) error {
	if len(w.stack) == 0 {
		return ErrArrayDescriptor
	}
	f := &w.stack[len(w.stack)-1]
	if f.kind != amqpsax.KindArray || !f.descArr || f.elem != 0 {
		return ErrArrayDescriptor
	}
	code, ok := ArrayCode(elem)
	if !ok || elem == amqpsax.KindDescribed {
		return ErrArrayKind
	}
	start := len(w.buf)
	w.buf = append(w.buf, byte(amqpsax.CodeDescribed))
	d := len(w.buf)
	var err error
	if w.buf, err = appendPrimitive(w.buf, desc); err != nil {
		w.buf = w.buf[:start]
		return err
	}
	f.descOff, f.descLen = d, len(w.buf)-d
	f.elem, f.elemKind = code, elem
	if c := amqpsax.Code(desc[0]); wire.Table[c].Cat() == wire.Variable {
		h, _, _ := wire.Body(c, desc[1:])
		f.descView, f.descKind = desc[1+h:], wire.Table[c].Kind()
	}
	w.buf = append(w.buf, byte(code))
	return nil
}

// sameView reports whether a and b are the same non-empty bytes of the
// same memory.
func sameView(a, b []byte) bool {
	return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0]
}

// appendPrimitive appends the value v, one encoded primitive other than
// list0, in the encoding the Writer gives it: the smallest width.
func appendPrimitive(b, v []byte) ([]byte, error) {
	if len(v) == 0 {
		return b, ErrArrayDescriptor
	}
	c := amqpsax.Code(v[0])
	info := wire.Table[c]
	if info.Cat() != wire.Fixed && info.Cat() != wire.Variable || c == amqpsax.CodeList0 {
		return b, ErrArrayDescriptor
	}
	h, n, _ := wire.Body(c, v[1:])
	if h < 0 || 1+h+n != len(v) {
		return b, ErrArrayDescriptor
	}
	p := v[1+h:]
	switch info.Kind() {
	case amqpsax.KindBool:
		return AppendBool(b, wire.Bool(c, p)), nil
	case amqpsax.KindUint:
		return AppendUint(b, uint32(wire.Uint(c, p))), nil
	case amqpsax.KindUlong:
		return AppendUlong(b, wire.Uint(c, p)), nil
	case amqpsax.KindInt:
		return AppendInt(b, int32(wire.Int(c, p))), nil
	case amqpsax.KindLong:
		return AppendLong(b, wire.Int(c, p)), nil
	case amqpsax.KindBinary:
		return AppendBinary(b, p), nil
	case amqpsax.KindString:
		return AppendStringBytes(b, p), nil
	case amqpsax.KindSymbol:
		return AppendSymbolBytes(b, p), nil
	}
	return append(b, v...), nil // one encoding only: null, ubyte, float, uuid …
}

// OnArrayEnd ends the innermost array, back-patching its size and count.
func (w *Writer) OnArrayEnd() error {
	if len(w.stack) > 0 {
		if f := &w.stack[len(w.stack)-1]; f.kind == amqpsax.KindArray && f.elem == 0 {
			// An empty array of described values: no element brought a
			// descriptor, so write a null one over null elements.
			w.buf = append(w.buf, byte(amqpsax.CodeDescribed), byte(amqpsax.CodeNull), byte(amqpsax.CodeNull))
		}
	}
	return w.close(amqpsax.KindArray)
}

// OnDescribedStart starts a described value: the next two values are its descriptor and its value.
func (w *Writer) OnDescribedStart() error {
	if len(w.stack) > 0 {
		if f := &w.stack[len(w.stack)-1]; f.kind == amqpsax.KindArray {
			if !f.descArr {
				return ErrArrayElement // a described value in an array of another kind
			}
			f.n++
			if f.elem == 0 {
				w.buf = append(w.buf, byte(amqpsax.CodeDescribed))
			}
			w.stack = append(w.stack, frame{kind: amqpsax.KindDescribed, hdr: len(w.buf), inArray: true})
			return nil
		}
	}
	if _, err := w.value(amqpsax.KindDescribed); err != nil {
		return err
	}
	w.stack = append(w.stack, frame{kind: amqpsax.KindDescribed, hdr: len(w.buf)})
	w.buf = append(w.buf, byte(amqpsax.CodeDescribed))
	return nil
}

// OnDescribedEnd ends the innermost described value, which must have had exactly two values.
func (w *Writer) OnDescribedEnd() error {
	if len(w.stack) == 0 || w.stack[len(w.stack)-1].kind != amqpsax.KindDescribed {
		return ErrUnbalanced
	}
	if w.stack[len(w.stack)-1].n != 2 {
		return ErrDescribedArity
	}
	w.stack = w.stack[:len(w.stack)-1]
	return nil
}

var (
	_ amqpsax.Handler                = (*Writer)(nil)
	_ amqpsax.ArrayDescriptorHandler = (*Writer)(nil)
)
