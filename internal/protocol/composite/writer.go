package composite

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
)

// Writer writes the fields of a composite's list one at a time, in the
// order of its Spec, each either written or left out: fields left out
// before one that is written become nulls (as Qpid Proton writes them),
// trailing ones are not written at all. The value writers write a field
// when told to: when it is mandatory, was seen when parsed, or is off the
// spec's default ([Spec.Off] reads the Default column; package frame's
// plain fields have their default as their zero value, which its tests
// check against the column). A Writer has four fields, so that the
// compiler keeps it in registers.
type Writer struct {
	B     []byte
	start int // of the list
	idx   int // fields considered so far
	n     int // list elements written so far
}

// Begin begins the composite of type s: its descriptor as a smallulong,
// then a list whose size End fills in.
func Begin(b []byte, s *Spec) Writer {
	b = append(b, byte(amqpsax.CodeDescribed), byte(amqpsax.CodeSmallUlong), byte(s.Descriptor)) // every one is below 256
	return Writer{B: encode.BeginList(b), start: len(b)}
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

// Uint writes a uint field when write is true; Ulong, Ushort, Ubyte,
// Bool, String, Symbol, Binary and SymbolText likewise.
func (w *Writer) Uint(write bool, v uint32) {
	if w.Field(write) {
		w.B = encode.AppendUint(w.B, v)
	}
}

func (w *Writer) Ulong(write bool, v uint64) {
	if w.Field(write) {
		w.B = encode.AppendUlong(w.B, v)
	}
}

func (w *Writer) Ushort(write bool, v uint16) {
	if w.Field(write) {
		w.B = encode.AppendUshort(w.B, v)
	}
}

func (w *Writer) Ubyte(write bool, v uint8) {
	if w.Field(write) {
		w.B = encode.AppendUbyte(w.B, v)
	}
}

func (w *Writer) Bool(write bool, v bool) {
	if w.Field(write) {
		w.B = encode.AppendBool(w.B, v)
	}
}

func (w *Writer) String(write bool, v []byte) {
	if w.Field(write) {
		w.B = encode.AppendStringBytes(w.B, v)
	}
}

func (w *Writer) Symbol(write bool, v []byte) {
	if w.Field(write) {
		w.B = encode.AppendSymbolBytes(w.B, v)
	}
}

func (w *Writer) Binary(write bool, v []byte) {
	if w.Field(write) {
		w.B = encode.AppendBinary(w.B, v)
	}
}

func (w *Writer) SymbolText(write bool, v string) {
	if w.Field(write) {
		w.B = encode.AppendSymbol(w.B, v)
	}
}

// Raw writes an encoded value (a map, symbols) when write is true: as it
// is, or as null when it is empty.
func (w *Writer) Raw(write bool, v []byte) {
	if w.Field(write) {
		if len(v) == 0 {
			w.B = encode.AppendNull(w.B)
		} else {
			w.B = append(w.B, v...)
		}
	}
}
