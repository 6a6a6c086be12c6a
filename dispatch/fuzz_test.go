package dispatch

import (
	"errors"
	"io"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/internal/cases"
	"github.com/amqpsax/amqpsax/internal/trace"
	"github.com/amqpsax/amqpsax/internal/wire"
)

// FuzzDecode: no input panics; every error is an *amqpsax.Error whose
// offset lies within the input, and a cut only where the input ends a
// top-level value; whatever decodes re-encodes through the
// Writer to bytes that decode to the same events; and the batch path
// reports the same events as the element path.
func FuzzDecode(f *testing.F) {
	for _, tc := range cases.Valid {
		f.Add(cases.Bytes(tc.Hex))
	}
	for _, tc := range append(cases.Invalid, cases.InvalidText...) {
		f.Add(cases.Bytes(tc.Hex))
	}
	var d Decoder
	var w encode.Writer
	var rec, rec2 trace.Recorder
	var br batchRecorder
	f.Fuzz(func(t *testing.T, data []byte) {
		rec.Reset()
		n, err := d.Decode(data, &rec)
		if err != nil {
			var e *amqpsax.Error
			if !errors.As(err, &e) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			if e.Offset < 0 || e.Offset > len(data) {
				t.Fatalf("offset %d outside input of %d bytes", e.Offset, len(data))
			}
			// A cut is only where the input ends a value no list, map or
			// array holds: a value whose sizes all fit (wire.Skip measures
			// it) has faults, never cuts, inside.
			if m, _ := wire.Skip(data); m > 0 && errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("a cut inside a complete value of %d bytes: %v", m, err)
			}
		} else if n <= 0 || n > len(data) {
			t.Fatalf("n = %d for %d bytes", n, len(data))
		}
		br.Reset()
		n2, err2 := d.Decode(data, &br)
		if n2 != n || (err == nil) != (err2 == nil) || br.String() != rec.String() {
			t.Fatalf("batch path differs: %d %v %q vs %d %v %q", n2, err2, br.String(), n, err, rec.String())
		}
		if err != nil {
			return
		}
		w.Reset()
		if _, err := d.Decode(data, &w); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		rec2.Reset()
		if _, err := d.Decode(w.Bytes(), &rec2); err != nil {
			t.Fatalf("decode of re-encoded %x: %v", w.Bytes(), err)
		}
		if rec2.String() != rec.String() {
			t.Fatalf("round trip: %q != %q", rec2.String(), rec.String())
		}
	})
}
