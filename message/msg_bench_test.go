package message

import (
	"testing"
)

// BenchmarkAppendLarge: a megabyte copied whole (the runtime's memmove
// takes its non-temporal path) against appendLarge's pieces, into a
// buffer with room, as Append copies a body.
func BenchmarkAppendLarge(b *testing.B) {
	src := make([]byte, 1<<20)
	dst := make([]byte, 0, len(src)+4096)
	b.Run("whole", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			dst = append(dst[:300], src...)
		}
	})
	b.Run("pieces", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			dst = appendLarge(dst[:300], src)
		}
	})
}

// BenchmarkWholeMessage: decoding into a reused Message and appending it, for
// a message of every section with a small data body.
func BenchmarkWholeMessage(b *testing.B) {
	var vs Values
	app, _ := vs.PropertiesOf(map[string]any{"tenant": "acme", "n": int64(7), "ok": true})
	m := Message{
		Header:                &Header{Durable: true, Priority: 4},
		MessageAnnotations:    EntriesOf(Field{vs.Symbol("x-opt-a"), vs.String("b")}),
		Properties:            &Properties{MessageID: UlongID(7), To: []byte("orders")},
		ApplicationProperties: app,
		Body:                  Body{Kind: BodyData, Data: [][]byte{make([]byte, 64)}},
	}
	data, err := m.Append(nil)
	if err != nil {
		b.Fatal(err)
	}
	var d Message
	b.Run("Decode", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if err := d.Decode(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	buf := make([]byte, 0, 1024)
	b.Run("Append", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = d.Append(buf[:0])
		}
	})
}
