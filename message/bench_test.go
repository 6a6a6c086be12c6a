package message

import (
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
)

// benchMessage: header, message annotations, properties, five application
// properties and a data body of bodySize bytes.
func benchMessage(bodySize int) []byte {
	b := AppendHeader(nil, Header{Durable: true, Priority: 4, TTL: 60000, HasTTL: true})
	b = append(b, mkSection(amqpsax.DescriptorMessageAnnotations, false,
		strMap("x-opt-partition-key", "customer-42", "x-opt-enqueued-time", "2026-11-29"))...)
	b = append(b, mkSection(amqpsax.DescriptorProperties, false, list(
		strv("msg-000000042"), bin("user"), strv("/queues/orders"), strv("order.created"),
		strv("/queues/replies"), strv("corr-7")))...)
	b = append(b, mkSection(amqpsax.DescriptorApplicationProperties, false,
		strMap("tenant", "acme", "attempt", "1", "trace-id", "4bf92f3577b34da6", "urgent", "no", "region", "eu-west-1"))...)
	b = encode.AppendDescribed(b)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorData))
	return encode.AppendBinary(b, make([]byte, bodySize))
}

var bodySizes = []struct {
	name string
	size int
}{{"1KiB", 1 << 10}, {"64KiB", 64 << 10}, {"1MiB", 1 << 20}}

// routeAndStamp is a broker's whole job for one message: scan, read the
// header, properties.to and one application property, then forward with
// delivery-count + 1 and an annotation added.
func routeAndStamp(msg, buf []byte, set []Entry) ([]byte, error) {
	s, err := Scan(msg)
	if err != nil {
		return buf, err
	}
	h, err := ParseHeader(s.Header)
	if err != nil {
		return buf, err
	}
	p, err := ParseProperties(s.Properties)
	if err != nil || len(p.To) == 0 {
		return buf, err
	}
	if _, err := Lookup(s.ApplicationProperties, "region"); err != nil {
		return buf, err
	}
	h.AddDelivery()
	return Append(buf[:0], s, &Changes{Header: &h, MessageAnnotations: Edit{Set: set}})
}

func BenchmarkMessage(b *testing.B) {
	set := []Entry{{SymbolKey("x-opt-routed-by"), encode.AppendString(nil, "amqpsax")}}
	for _, bs := range bodySizes {
		msg := benchMessage(bs.size)
		b.Run("op=scan/body="+bs.name, func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Scan(msg); err != nil {
					b.Fatal(err)
				}
			}
		})
		s, _ := Scan(msg)
		b.Run("op=accessors/body="+bs.name, func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				ParseHeader(s.Header)
				ParseProperties(s.Properties)
				Lookup(s.ApplicationProperties, "region")
			}
		})
		buf := make([]byte, 0, len(msg)+256)
		b.Run("op=route+splice/body="+bs.name, func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				buf, _ = routeAndStamp(msg, buf, set)
			}
		})
	}
}

// TestBenchmarkBodies runs each benchmark body once, checking its result.
func TestBenchmarkBodies(t *testing.T) {
	set := []Entry{{SymbolKey("x-opt-routed-by"), encode.AppendString(nil, "amqpsax")}}
	for _, bs := range bodySizes {
		msg := benchMessage(bs.size)
		s, err := Scan(msg)
		if err != nil || s.BodyKind != BodyData || len(s.Body) < bs.size {
			t.Fatalf("%s: %v %v", bs.name, err, s.BodyKind)
		}
		v, err := Lookup(s.ApplicationProperties, "region")
		if err != nil || v.Kind() == amqpsax.KindInvalid {
			t.Fatalf("lookup: %v", err)
		}
		out, err := routeAndStamp(msg, nil, set)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := Scan(out)
		if err != nil || string(s2.Bare) != string(s.Bare) {
			t.Fatalf("splice: %v", err)
		}
	}
}
