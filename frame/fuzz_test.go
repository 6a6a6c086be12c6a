package frame

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/amqpsax/amqpsax"
)

// FuzzFrame reads the input as a connection's byte stream and as one
// frame body. For every frame: every Parse function runs on its body, and
// none reports a cut (io.ErrUnexpectedEOF: a body is a whole frame's);
// what one of them decodes is written back by its Append function, and
// that encoding decodes to the same struct, written the same (a fixed
// point), with the same bytes after it; transfers go through an
// Assembler, whose deliveries stay within its limit. Every error carries
// an offset within the input. Nothing panics.
func FuzzFrame(f *testing.F) {
	for _, name := range []string{"conn-client.bin", "conn-server.bin", "conn-client-trunc.bin"} {
		f.Add(readStream(f, name))
	}
	for _, e := range loadPerformatives(f) {
		body := append(append([]byte(nil), e.perf...), e.payload...)
		start := 0
		fr := BeginFrame(nil, e.Type, e.Channel)
		fr = EndFrame(append(fr, body...), start)
		f.Add(fr)
		f.Add(body)
	}
	bad := readStream(f, "conn-client.bin")
	bad = bytes.Clone(bad)
	binary.BigEndian.PutUint32(bad[48:], 1<<32-1)
	f.Add(bad)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkBody(t, data)
		r := NewReader(bytes.NewReader(data))
		r.MaxFrameSize = 1 << 16
		a := Assembler{MaxMessageSize: 4096, MaxPending: 4}
		for n := 0; ; n++ {
			fr, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				var re *ReadError
				if !errors.As(err, &re) || re.Offset < 0 || re.Offset > int64(len(data)) {
					t.Fatalf("reader error %v", err)
				}
				return
			}
			if fr.Offset+int64(fr.Size) > int64(len(data)) || n > len(data) {
				t.Fatalf("frame %+v past the input", fr)
			}
			checkBody(t, fr.Body)
			if tr, payload, err := ParseTransfer(fr.Body); err == nil {
				d, done, err := a.Add(fr.Channel, tr, payload)
				if done && (err != nil || len(d.Payload) > 4096) {
					t.Fatalf("delivery of %d bytes, %v", len(d.Payload), err)
				}
			}
		}
	})
}

// checkBody runs every Parse function on body.
func checkBody(t *testing.T, body []byte) {
	d, err := Performative(body)
	checkErr(t, err, body)
	for _, want := range allPerformatives {
		err := parseAs(want, body)
		checkErr(t, err, body)
		if err == nil && want != d {
			t.Fatalf("%s parsed as %s", d, want)
		}
	}
	v, rest, enc, err := parseAny(body)
	if err != nil || v == nil {
		return
	}
	v2, rest2, enc2, err := parseAny(append(bytes.Clone(enc), rest...))
	if err != nil {
		t.Fatalf("%x written as %x, which does not parse: %v", body, enc, err)
	}
	if !sameStruct(v, v2) {
		t.Fatalf("%x parsed as %+v, written as %x, parsed as %+v", body, v, enc, v2)
	}
	if !bytes.Equal(enc, enc2) || !bytes.Equal(rest, rest2) {
		t.Fatalf("%x written as %x, then as %x", body, enc, enc2)
	}
}

func checkErr(t *testing.T, err error, body []byte) {
	if err == nil {
		return
	}
	var ae *amqpsax.Error
	if !errors.As(err, &ae) || ae.Op != "frame" || ae.Offset < 0 || ae.Offset > len(body) {
		t.Fatalf("error without an offset in the body: %v", err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a whole body reported as cut: %v", err)
	}
}
