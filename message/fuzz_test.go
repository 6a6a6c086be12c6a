package message

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/internal/cases"
	"github.com/amqpsax/amqpsax/internal/corpus"
	"github.com/amqpsax/amqpsax/stream"
)

// FuzzScan: Scan, the accessors and the splice never panic; errors are
// *amqpsax.Error within the input; and whatever Scan accepts, a splice
// that edits annotations and the header re-scans with the bare message
// and footer unchanged.
func FuzzScan(f *testing.F) {
	for _, e := range corpus.Load(f, "messages.jsonl") {
		if len(e.Data) < 4096 {
			f.Add(e.Data)
		}
	}
	for _, tc := range cases.Valid {
		f.Add(cases.Bytes(tc.Hex))
	}
	set := []Entry{{SymbolKey("x-opt-a"), encode.AppendString(nil, "v")}, {SymbolKey("k"), encode.AppendNull(nil)}, {UlongKey(7), encode.AppendUint(nil, 1)}}
	remove := []Key{SymbolKey("k"), SymbolKey("x-opt-b"), UlongKey(9)}
	var sc Scanner
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Scan(data)
		if s2, err2 := sc.Scan(data); !reflect.DeepEqual(s, s2) || (err == nil) != (err2 == nil) ||
			err != nil && err.Error() != err2.Error() {
			t.Fatalf("Scan: %v, %v; Scanner.Scan: %v, %v", s, err, s2, err2)
		}
		if err != nil {
			checkErr(t, err, len(data))
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				return
			}
			// a prefix: the complete sections are usable
		}
		// The sections Scan returns are complete, so what their accessors
		// find wrong in them is a fault, never a cut.
		complete := func(err error, sec []byte) {
			t.Helper()
			checkErr(t, err, len(sec))
			if errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("a complete section %x: %v", sec, err)
			}
		}
		for _, sec := range [][]byte{s.DeliveryAnnotations, s.MessageAnnotations, s.ApplicationProperties, s.Footer} {
			_, err := Lookup(sec, "k")
			complete(err, sec)
			checkLookupFast(t, sec, "k")
			_, err = LookupKey(sec, UlongKey(7))
			complete(err, sec)
			_, err = AnyMap(sec)
			complete(err, sec)
		}
		for _, err := range BodyValues(s.Body) {
			complete(err, s.Body)
		}
		_, err = ParseProperties(s.Properties)
		complete(err, s.Properties)
		h, err := ParseHeader(s.Header)
		if err != nil {
			complete(err, s.Header)
			return
		}
		h.AddDelivery()
		out, err := Append(nil, s, &Changes{Header: &h,
			DeliveryAnnotations: Edit{Remove: remove},
			MessageAnnotations:  Edit{Set: set, Remove: remove}})
		if err != nil {
			checkErr(t, err, len(data))
			return
		}
		s2, err := Scan(out)
		if err != nil {
			t.Fatalf("splice of %x gave %x, which does not scan: %v", data, out, err)
		}
		// The bare message's sections and the footer are copied byte for
		// byte; when they lay together, so does the whole bare message.
		for i, pair := range [][2][]byte{{s.Properties, s2.Properties}, {s.ApplicationProperties, s2.ApplicationProperties},
			{s.Body, s2.Body}, {s.Footer, s2.Footer}} {
			if !bytes.Equal(pair[0], pair[1]) {
				t.Fatalf("section %d changed: %x, then %x", i, pair[0], pair[1])
			}
		}
		if s.Bare != nil && !bytes.Equal(s.Bare, s2.Bare) {
			t.Fatalf("bare message changed: %x, then %x", s.Bare, s2.Bare)
		}
		h2, err := ParseHeader(s2.Header)
		if err != nil || h2 != h {
			t.Fatalf("header %+v, want %+v (%v)", h2, h, err)
		}
		if v, err := Lookup(s2.MessageAnnotations, "x-opt-a"); err != nil || !bytes.Equal(v.Raw(), set[0].Value) {
			t.Fatalf("annotation not set: %x %v", v.Raw(), err)
		}
		if v, err := LookupKey(s2.MessageAnnotations, UlongKey(7)); err != nil || v.Uint() != 1 {
			t.Fatalf("ulong-keyed annotation not set: %x %v", v.Raw(), err)
		}
		// Append refuses what is not one well-formed value, and writes
		// nothing then.
		bad, err := Append(out[:0:0], s, &Changes{MessageAnnotations: Edit{Set: []Entry{{SymbolKey("x"), data}}}})
		if _, e := stream.ParseValue(data); (e == nil) != (err == nil) {
			t.Fatalf("Append of value %x: %v, ParseValue: %v", data, err, e)
		}
		if err != nil && len(bad) != 0 {
			t.Fatalf("Append wrote %d bytes with an error", len(bad))
		}
	})
}

func checkErr(t *testing.T, err error, n int) {
	t.Helper()
	if err == nil {
		return
	}
	var e *amqpsax.Error
	if !errors.As(err, &e) {
		t.Fatalf("error of type %T: %v", err, err)
	}
	if e.Offset < 0 || e.Offset > n {
		t.Fatalf("offset %d outside %d bytes: %v", e.Offset, n, err)
	}
}
