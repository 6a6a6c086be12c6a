package message

import (
	"bytes"
	"errors"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/internal/cases"
	"github.com/amqpsax/amqpsax/internal/corpus"
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
	set := []Entry{{"x-opt-a", encode.AppendString(nil, "v")}, {"k", encode.AppendNull(nil)}}
	remove := []string{"k", "x-opt-b"}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Scan(data)
		if err != nil {
			checkErr(t, err, len(data))
			return
		}
		for _, sec := range [][]byte{s.DeliveryAnnotations, s.MessageAnnotations, s.ApplicationProperties, s.Footer} {
			_, err := Lookup(sec, "k")
			checkErr(t, err, len(sec))
		}
		_, err = ParseProperties(s.Properties)
		checkErr(t, err, len(s.Properties))
		h, err := ParseHeader(s.Header)
		if err != nil {
			checkErr(t, err, len(s.Header))
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
		if !bytes.Equal(s.Bare, s2.Bare) || !bytes.Equal(s.Footer, s2.Footer) {
			t.Fatalf("bare or footer changed")
		}
		h2, err := ParseHeader(s2.Header)
		if err != nil || h2 != h {
			t.Fatalf("header %+v, want %+v (%v)", h2, h, err)
		}
		if v, err := Lookup(s2.MessageAnnotations, "x-opt-a"); err != nil || !bytes.Equal(v, set[0].Value) {
			t.Fatalf("annotation not set: %x %v", v, err)
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
