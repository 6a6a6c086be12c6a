package dump

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/amqpsax/amqpsax/internal/corpus"
)

// BenchmarkStream prints Proton's client stream (SASL, open, attach, eight
// transfers, dispositions) as amqpdump -frames does, in text and in JSON:
// what amqpspy's printer costs per byte of a real connection.
func BenchmarkStream(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(corpus.Dir(), "conn-client.bin"))
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name string
		opts Options
	}{{"text", Options{}}, {"json", Options{JSON: true}}, {"plain-json", Options{JSON: true, Plain: true}}} {
		b.Run(mode.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			out := NewOut(io.Discard)
			for range b.N {
				s := NewStream(out, mode.opts)
				s.Write(data)
				s.Close()
			}
		})
	}
}
