package encode_test

import (
	"testing"

	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/internal/corpus"
)

// BenchmarkAppend encodes one value of each common kind per op into a
// reused buffer, each in its smallest encoding.
func BenchmarkAppend(b *testing.B) {
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = buf[:0]
		buf = encode.AppendNull(buf)
		buf = encode.AppendBool(buf, true)
		buf = encode.AppendUint(buf, 7)
		buf = encode.AppendUint(buf, 70000)
		buf = encode.AppendUlong(buf, 1<<40)
		buf = encode.AppendInt(buf, -5)
		buf = encode.AppendLong(buf, -1<<40)
		buf = encode.AppendDouble(buf, 3.25)
		buf = encode.AppendTimestamp(buf, 1767323045678)
		buf = encode.AppendString(buf, "queue://orders.incoming")
		buf = encode.AppendSymbol(buf, "x-opt-partition-key")
		buf = encode.AppendBinary(buf, buf[:16])
		s := len(buf)
		buf = encode.BeginList(buf)
		buf = encode.AppendString(buf, "a")
		buf = encode.AppendNull(buf)
		buf = encode.EndList(buf, s, 2)
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkWriter re-encodes every message of the Proton corpus: dispatch
// into a reused Writer.
func BenchmarkWriter(b *testing.B) {
	var msgs [][]byte
	size := 0
	for _, e := range corpus.Load(b, "messages.jsonl") {
		if len(e.Data) < 4096 {
			msgs = append(msgs, e.Data)
			size += len(e.Data)
		}
	}
	var d dispatch.Decoder
	var w encode.Writer
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, m := range msgs {
			w.Reset()
			if err := d.DecodeAll(m, &w); err != nil {
				b.Fatal(err)
			}
		}
	}
}
