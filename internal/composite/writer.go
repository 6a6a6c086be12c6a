package composite

import (
	"github.com/amqpsax/amqpsax/encode"
)

// Writer writes the fields of a composite's list one at a time, in the
// order of its Spec, each either written or left out: fields left out
// before one that is written become nulls (as Qpid Proton writes them),
// trailing ones are not written at all. The value writers write a field
// when told to (has: it is mandatory, or was seen when parsed) or when its
// value is not the spec's default (the Default column), and leave it out
// otherwise.
type Writer struct {
	B     []byte
	spec  *Spec
	start int // of the list
	idx   int // fields considered so far
	n     int // list elements written so far
}

// Begin begins the composite of type s: its descriptor as a smallulong,
// then a list whose size End fills in.
func Begin(b []byte, s *Spec) Writer {
	b = encode.AppendUlong(encode.AppendDescribed(b), uint64(s.Descriptor))
	return Writer{B: encode.BeginList(b), spec: s, start: len(b)}
}

// Field considers the next field and reports whether to write it, after
// the nulls of the fields left out before it; the caller then appends
// its value to B.
func (w *Writer) Field(write bool) bool {
	if write {
		for w.n < w.idx {
			w.B = encode.AppendNull(w.B)
			w.n++
		}
		w.n++
	}
	w.idx++
	return write
}

// differs reports whether v is not the default of the next field.
func (w *Writer) differs(v uint64) bool { return v != w.spec.Fields[w.idx].def }

// End completes the list with at least elements elements (trailing
// nulls, as many as the composite had when read), in its smallest
// encoding, or as a list32 when wide.
func (w *Writer) End(elements int, wide bool) []byte {
	for w.n < min(elements, w.idx) {
		w.B = encode.AppendNull(w.B)
		w.n++
	}
	if wide {
		return encode.EndList32(w.B, w.start, w.n)
	}
	return encode.EndList(w.B, w.start, w.n)
}

// Uint writes a uint field when has or when v is not its default; Ulong,
// Ushort, Ubyte and Bool likewise.
func (w *Writer) Uint(has bool, v uint32) {
	if w.Field(has || w.differs(uint64(v))) {
		w.B = encode.AppendUint(w.B, v)
	}
}

func (w *Writer) Ulong(has bool, v uint64) {
	if w.Field(has || w.differs(v)) {
		w.B = encode.AppendUlong(w.B, v)
	}
}

func (w *Writer) Ushort(has bool, v uint16) {
	if w.Field(has || w.differs(uint64(v))) {
		w.B = encode.AppendUshort(w.B, v)
	}
}

func (w *Writer) Ubyte(has bool, v uint8) {
	if w.Field(has || w.differs(uint64(v))) {
		w.B = encode.AppendUbyte(w.B, v)
	}
}

func (w *Writer) Bool(has bool, v bool) {
	var u uint64
	if v {
		u = 1
	}
	if w.Field(has || w.differs(u)) {
		w.B = encode.AppendBool(w.B, v)
	}
}

// String writes a string field when has or when v is not nil (absent);
// Symbol and Binary likewise.
func (w *Writer) String(has bool, v []byte) {
	if w.Field(has || v != nil) {
		w.B = encode.AppendStringBytes(w.B, v)
	}
}

func (w *Writer) Symbol(has bool, v []byte) {
	if w.Field(has || v != nil) {
		w.B = encode.AppendSymbolBytes(w.B, v)
	}
}

func (w *Writer) Binary(has bool, v []byte) {
	if w.Field(has || v != nil) {
		w.B = encode.AppendBinary(w.B, v)
	}
}

// SymbolText writes a symbol field when has or when v is not its default
// (a symbol's default is its text: "session-end").
func (w *Writer) SymbolText(has bool, v string) {
	if w.Field(has || v != w.spec.Fields[w.idx].Default) {
		w.B = encode.AppendSymbol(w.B, v)
	}
}

// Raw writes an encoded value (a map, symbols) as it is when has or when
// v is not nil, as null when it is empty.
func (w *Writer) Raw(has bool, v []byte) {
	if w.Field(has || v != nil) {
		if len(v) == 0 {
			w.B = encode.AppendNull(w.B)
		} else {
			w.B = append(w.B, v...)
		}
	}
}
