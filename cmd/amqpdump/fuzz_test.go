package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/cmd/internal/dump"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/internal/cases"
	"github.com/amqpsax/amqpsax/internal/corpus"
)

// FuzzDump: on any input, printing values fails exactly as dispatch does
// (or succeeds when it does); printing a frame stream reports only
// *dump.FrameError and *amqpsax.Error faults; the JSON output of both is
// one valid JSON object a line; no output is longer than maxPerByte bytes
// per input byte (plus a constant); nothing panics.
func FuzzDump(f *testing.F) {
	for _, c := range cases.Valid {
		f.Add(cases.Bytes(c.Hex))
	}
	for _, c := range append(cases.Invalid, cases.InvalidText...) {
		f.Add(cases.Bytes(c.Hex))
	}
	for _, e := range corpus.Load(f, "messages.jsonl") {
		if len(e.Data) < 300 { // small seeds minimize fast
			f.Add(e.Data)
		}
	}
	// The start of a connection stream: protocol headers, SASL frames,
	// open, begin (whole streams make seeds too slow to minimize).
	data, err := os.ReadFile(filepath.Join(corpus.Dir(), "conn-server.bin"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data[:165])
	var d dispatch.Decoder
	f.Fuzz(func(t *testing.T, data []byte) {
		want := d.DecodeAll(data, amqpsax.NopHandler{})
		r := dumpBytes(t, data, false)
		got := r.err
		var we, ge *amqpsax.Error
		switch {
		case want == nil && got != nil, want != nil && got == nil:
			t.Fatalf("dispatch: %v; amqpdump: %v", want, got)
		case want != nil:
			if !errors.As(want, &we) || !errors.As(got, &ge) ||
				we.Offset != ge.Offset || we.Err != ge.Err || we.Code != ge.Code || we.HasCode != ge.HasCode {
				t.Fatalf("dispatch: %v; amqpdump: %v", want, got)
			}
		}
		checkBounded(t, data, r.out)

		r = dumpBytes(t, data, true)
		for _, err := range r.faults {
			var fe *dump.FrameError
			if !errors.As(err, &fe) && !errors.As(err, &ge) {
				t.Fatalf("frames: %T %v", err, err)
			}
		}
		checkBounded(t, data, r.out)

		for _, frames := range []bool{false, true} {
			r := dumpJSON(t, data, frames)
			checkBoundedJSON(t, data, r)
			for line := range strings.SplitSeq(strings.TrimSuffix(r, "\n"), "\n") {
				if line != "" && !json.Valid([]byte(line)) {
					t.Fatalf("frames %v: not JSON: %s", frames, line)
				}
			}
		}
	})
}

// maxPerByte bounds the output per input byte: an array of 255 nulls in
// 4 bytes prints 4 lines, 34 bytes of lists nested deeper than the
// indentation shown print 34 lines of at most 80 bytes, and a frame
// prints a few lines of its own.
const maxPerByte = 200

// checkBounded fails when out is longer than maxPerByte per input byte,
// plus a constant.
func checkBounded(t *testing.T, data []byte, out string) {
	t.Helper()
	if len(out) > maxPerByte*len(data)+1000 {
		t.Fatalf("%d bytes printed for %d bytes of input", len(out), len(data))
	}
}

// maxPerByteJSON bounds the JSON output per input byte: JSON leaves
// nothing out, so an array of 255 nulls in 4 bytes is 255 "null,".
const maxPerByteJSON = 340

// checkBoundedJSON is checkBounded for JSON.
func checkBoundedJSON(t *testing.T, data []byte, out string) {
	t.Helper()
	if len(out) > maxPerByteJSON*len(data)+1000 {
		t.Fatalf("%d bytes of JSON printed for %d bytes of input", len(out), len(data))
	}
}

// dumpJSON prints data as amqpdump -json does.
func dumpJSON(t testing.TB, data []byte, frames bool) string {
	t.Helper()
	var b bytes.Buffer
	out := dump.NewOut(&b)
	opts := dump.Options{JSON: true, MaxMessageSize: len(data) + 1}
	if frames {
		dump.NewStream(out, opts).WriteAll(data)
	} else {
		dump.NewValues(out, opts).Print(data)
	}
	out.Flush()
	return b.String()
}
