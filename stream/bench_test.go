package stream

import (
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
)

// benchMessage builds a message as brokers see them: header, message
// annotations, properties, five application properties and a data body of
// bodySize bytes.
func benchMessage(bodySize int) []byte {
	b := encode.AppendDescribed(nil)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorHeader))
	s := len(b)
	b = encode.BeginList(b)
	b = encode.AppendBool(b, true)
	b = encode.AppendUbyte(b, 4)
	b = encode.AppendUint(b, 60000)
	b = encode.EndList(b, s, 3)

	b = encode.AppendDescribed(b)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorMessageAnnotations))
	s = len(b)
	b = encode.BeginMap(b)
	b = encode.AppendSymbol(b, "x-opt-partition-key")
	b = encode.AppendString(b, "customer-42")
	b = encode.AppendSymbol(b, "x-opt-sequence-number")
	b = encode.AppendLong(b, 987654321)
	b = encode.EndMap(b, s, 2)

	b = encode.AppendDescribed(b)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorProperties))
	s = len(b)
	b = encode.BeginList(b)
	b = encode.AppendString(b, "msg-000000042")
	b = encode.AppendBinary(b, []byte("user"))
	b = encode.AppendString(b, "/queues/orders")
	b = encode.AppendString(b, "order.created")
	b = encode.AppendString(b, "/queues/replies")
	b = encode.AppendString(b, "corr-7")
	b = encode.AppendSymbol(b, "application/json")
	b = encode.AppendNull(b)
	b = encode.AppendTimestamp(b, 1700000000000)
	b = encode.AppendTimestamp(b, 1700000600000)
	b = encode.EndList(b, s, 10)

	b = encode.AppendDescribed(b)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorApplicationProperties))
	s = len(b)
	b = encode.BeginMap(b)
	b = encode.AppendString(b, "tenant")
	b = encode.AppendString(b, "acme")
	b = encode.AppendString(b, "attempt")
	b = encode.AppendInt(b, 1)
	b = encode.AppendString(b, "trace-id")
	b = encode.AppendString(b, "4bf92f3577b34da6a3ce929d0e0e4736")
	b = encode.AppendString(b, "urgent")
	b = encode.AppendBool(b, false)
	b = encode.AppendString(b, "region")
	b = encode.AppendString(b, "eu-west-1")
	b = encode.EndMap(b, s, 5)

	b = encode.AppendDescribed(b)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorData))
	body := make([]byte, bodySize)
	for i := range body {
		body[i] = byte(i)
	}
	return encode.AppendBinary(b, body)
}

// route reads properties.to and the application property "region",
// skipping everything else: the work a router does per message.
func route(c *Cursor, data []byte) (to, region []byte) {
	c.Reset(data)
	for c.Next() {
		d, _, _ := c.Descriptor()
		switch d {
		case amqpsax.DescriptorProperties:
			c.Enter()
			c.Next()
			c.Next()
			c.Enter()
			if c.Seek(2) {
				to = c.Bytes()
			}
			c.Exit()
			c.Exit()
		case amqpsax.DescriptorApplicationProperties:
			c.Enter()
			c.Next()
			c.Next()
			c.Enter()
			if c.SeekKey("region") {
				region = c.Bytes()
			}
			c.Exit()
			c.Exit()
		}
	}
	return to, region
}

// skipAll moves over the top-level values without entering any.
func skipAll(c *Cursor, data []byte) int {
	c.Reset(data)
	n := 0
	for c.Next() {
		n++
	}
	return n
}

var bodySizes = []struct {
	name string
	size int
}{{"1KiB", 1 << 10}, {"64KiB", 64 << 10}, {"1MiB", 1 << 20}}

func BenchmarkCursor(b *testing.B) {
	for _, bs := range bodySizes {
		msg := benchMessage(bs.size)
		b.Run("op=route/body="+bs.name, func(b *testing.B) {
			var c Cursor
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				route(&c, msg)
			}
		})
		b.Run("op=skip/body="+bs.name, func(b *testing.B) {
			var c Cursor
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				skipAll(&c, msg)
			}
		})
		b.Run("op=walk/body="+bs.name, func(b *testing.B) {
			var c Cursor
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				c.Reset(msg)
				walkAll(&c)
			}
		})
	}
}

// TestBenchmarkBodies runs each benchmark's body once and checks it does
// what it claims, so the benchmarks cannot rot.
func TestBenchmarkBodies(t *testing.T) {
	var c Cursor
	for _, bs := range bodySizes {
		msg := benchMessage(bs.size)
		to, region := route(&c, msg)
		if string(to) != "/queues/orders" || string(region) != "eu-west-1" || c.Err() != nil {
			t.Fatalf("%s: route got %q %q %v", bs.name, to, region, c.Err())
		}
		if n := skipAll(&c, msg); n != 5 || c.Err() != nil {
			t.Fatalf("%s: skip saw %d sections, %v", bs.name, n, c.Err())
		}
		c.Reset(msg)
		walkAll(&c)
		if c.Err() != nil {
			t.Fatal(c.Err())
		}
		if allocs := testing.AllocsPerRun(10, func() { route(&c, msg) }); allocs != 0 {
			t.Fatalf("route allocates %v", allocs)
		}
	}
}

// arrayInputs: arrays as bodies carry them — 10,000 strings of 5–40
// bytes, 10,000 longs.
func arrayInputs() map[string][]byte {
	s := encode.BeginArray(nil, amqpsax.CodeStr8)
	for i := range 10000 {
		s = encode.AppendBytesElem(s, amqpsax.CodeStr8, []byte("string-value-0123456789abcdefghijklmnopqrstuvwxyz"[:5+i%36]))
	}
	s = encode.EndArray(s, 0, 10000)
	l := encode.BeginArray(nil, amqpsax.CodeLong)
	for i := range 10000 {
		l = encode.AppendIntElem(l, amqpsax.CodeLong, int64(i)*7919)
	}
	l = encode.EndArray(l, 0, 10000)
	return map[string][]byte{"strings-10k": s, "longs-10k": l}
}

func BenchmarkCursorArrays(b *testing.B) {
	for name, in := range arrayInputs() {
		b.Run("op=walk/array="+name, func(b *testing.B) {
			var c Cursor
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				c.Reset(in)
				walkAll(&c)
			}
		})
	}
	in := arrayInputs()["longs-10k"]
	b.Run("op=append-ints/array=longs-10k", func(b *testing.B) {
		var c Cursor
		dst := make([]int64, 0, 10000)
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			c.Reset(in)
			c.Next()
			dst = c.AppendInts(dst[:0])
		}
	})
}

func TestArrayBenchmarkBodies(t *testing.T) {
	var c Cursor
	for name, in := range arrayInputs() {
		c.Reset(in)
		walkAll(&c)
		if c.Err() != nil {
			t.Fatal(name, c.Err())
		}
	}
	c.Reset(arrayInputs()["longs-10k"])
	c.Next()
	if got := c.AppendInts(nil); len(got) != 10000 || got[9999] != 9999*7919 {
		t.Fatalf("AppendInts: %d values", len(got))
	}
}
