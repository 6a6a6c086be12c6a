package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/internal/cases"
	"github.com/amqpsax/amqpsax/internal/corpus"
)

// FuzzDump: on any input, printing values fails exactly as dispatch does
// (or succeeds when it does), and printing a frame stream ends without
// error or with a *frameError or *amqpsax.Error; neither panics.
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
		got := dump(t, data, false).err
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

		var fe *frameError
		if err := dump(t, data, true).err; err != nil && !errors.As(err, &fe) && !errors.As(err, &ge) {
			t.Fatalf("frames: %v", err)
		}
	})
}
