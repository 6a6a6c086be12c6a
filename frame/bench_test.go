package frame

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/amqpsax/amqpsax"
)

// benchCase is one benchmark body: Run does the work once. Every body
// also runs once in TestBenchmarks, so a broken benchmark fails the
// tests.
type benchCase struct {
	name   string
	bytes  int // input bytes per run, for b.SetBytes
	frames int // frames per run, for the frames/s metric (0: none)
	run    func() error
}

// transferStream returns a connection's worth of transfers: n frames on
// channel 0, each a transfer with a message of size bytes.
func transferStream(n, size int) []byte {
	msg := routedMessage("eu-west", size)
	var b []byte
	for i := range n {
		t := Transfer{Handle: 0, DeliveryID: Some(uint32(i)), DeliveryTag: []byte{byte(i), byte(i >> 8)},
			MessageFormat: Some[uint32](0), Settled: true}
		start := len(b)
		b = BeginFrame(b, TypeAMQP, 0)
		b = AppendTransfer(b, t)
		b = append(b, msg...)
		b = EndFrame(b, start)
	}
	return b
}

func benchCases(tb testing.TB) []benchCase {
	var cases []benchCase
	streamsIn := []struct {
		name string
		data []byte
	}{
		{"conn=proton-client", readStream(tb, "conn-client.bin")},
		{"conn=proton-server", readStream(tb, "conn-server.bin")},
		{"conn=transfers-1k", transferStream(1000, 200)},
	}
	for _, s := range streamsIn {
		data := s.data
		src := bytes.NewReader(data)
		r := NewReader(src)
		frames := 0
		for {
			if _, err := r.Next(); err != nil {
				break
			}
			frames++
		}
		cases = append(cases, benchCase{"Reader/" + s.name, len(data), frames, func() error {
			src.Reset(data)
			r.Reset(src)
			for {
				if _, err := r.Next(); err != nil {
					if err == io.EOF {
						return nil
					}
					return err
				}
			}
		}})
		cases = append(cases, benchCase{"Split/" + s.name, len(data), frames, func() error {
			for b := data; len(b) > 0; {
				_, n, err := Split(b, 0)
				if err != nil {
					return err
				}
				if n == 0 {
					return io.ErrUnexpectedEOF
				}
				b = b[n:]
			}
			return nil
		}})
		var a Assembler
		cases = append(cases, benchCase{"Loop/" + s.name, len(data), frames, func() error {
			src.Reset(data)
			r.Reset(src)
			for {
				f, err := r.Next()
				if err == io.EOF {
					return nil
				}
				if err != nil {
					return err
				}
				if d, err := Performative(f.Body); err != nil || d != amqpsax.DescriptorTransfer {
					continue
				}
				t, payload, err := ParseTransfer(f.Body)
				if err != nil {
					return err
				}
				if _, _, err := a.Add(f.Channel, t, payload); err != nil {
					return err
				}
			}
		}})
	}

	// One of each performative of the corpus, the first met.
	seen := map[string]bool{}
	for _, e := range loadPerformatives(tb) {
		if seen[e.Name] {
			continue
		}
		seen[e.Name] = true
		body := append(append([]byte(nil), e.perf...), e.payload...)
		d, _ := Performative(body)
		cases = append(cases, benchCase{"Parse/perf=" + e.Name, len(e.perf), 1, func() error { return parseAs(d, body) }})
		v, _, _, err := parseAny(body)
		if err != nil {
			tb.Fatal(err)
		}
		buf := make([]byte, 0, 1024)
		var appendFn func() []byte
		switch x := v.(type) {
		case *Transfer:
			appendFn = func() []byte { return AppendTransfer(buf, *x) }
		case *Attach:
			appendFn = func() []byte { return AppendAttach(buf, *x) }
		case *Disposition:
			appendFn = func() []byte { return AppendDisposition(buf, *x) }
		case *Flow:
			appendFn = func() []byte { return AppendFlow(buf, *x) }
		default:
			continue
		}
		want := e.perf
		cases = append(cases, benchCase{"Append/perf=" + e.Name, len(e.perf), 1, func() error {
			if !bytes.Equal(appendFn(), want) {
				return errors.New("written otherwise")
			}
			return nil
		}})
	}

	// A typical transfer header of 22 bytes (handle 1, delivery-id 300,
	// a 4-byte tag, format 0, settled and more false) before 200 bytes of
	// message: the receiver's fast path beside the whole parse.
	head := append([]byte{0x00, 0x53, 0x14, 0xc0, 0x11, 0x06, 0x52, 0x01, 0x70, 0, 0, 1, 0x2c, 0xa0, 0x04, 1, 2, 3, 4,
		0x43, 0x42, 0x42}, make([]byte, 200)...)
	var th TransferHead
	cases = append(cases, benchCase{"TransferHead/head=22B", 22, 1, func() error {
		if p, ok := th.Parse(head); !ok || len(p) != 200 || th.DeliveryID != 300 {
			return errors.New("not taken")
		}
		return nil
	}}, benchCase{"ParseTransferHead/head=22B", 22, 1, func() error {
		if h, p, ok := ParseTransferHead(head); !ok || len(p) != 200 || h.DeliveryID != 300 {
			return errors.New("not taken")
		}
		return nil
	}}, benchCase{"ParseTransfer/head=22B", 22, 1, func() error {
		if t, p, err := ParseTransfer(head); err != nil || len(p) != 200 || t.DeliveryID.Or(0) != 300 {
			return errors.New("not parsed")
		}
		return nil
	}})

	// The four transfers of the large message of the Proton client.
	var ts []Transfer
	var ps [][]byte
	r := NewReader(bytes.NewReader(readStream(tb, "conn-client.bin")))
	for {
		f, err := r.Next()
		if err != nil {
			break
		}
		if t, p, err := ParseTransfer(f.Body); err == nil && t.DeliveryID == Some[uint32](4) && f.Channel == 0 {
			ts, ps = append(ts, t), append(ps, bytes.Clone(p))
		}
	}
	total := 0
	for _, p := range ps {
		total += len(p)
	}
	var a Assembler
	cases = append(cases, benchCase{"Assemble/frames=4", total, 4, func() error {
		for i := range ts {
			d, done, err := a.Add(0, ts[i], ps[i])
			if err != nil {
				return err
			}
			if done != (i == len(ts)-1) || (done && len(d.Payload) != total) {
				return errors.New("not joined")
			}
		}
		return nil
	}})
	return cases
}

// BenchmarkFrame measures the Reader and Split over whole captured connections (and
// a generated one of 1000 transfers), the frame loop a broker runs (Next,
// Performative, ParseTransfer, Assembler.Add), each Parse function, some
// Append functions, and the joining of a delivery of four transfers.
//
//	go test ./frame -run '^$' -bench . -benchmem
func BenchmarkFrame(b *testing.B) {
	for _, c := range benchCases(b) {
		b.Run(c.name, func(b *testing.B) {
			if err := c.run(); err != nil { // warm
				b.Fatal(err)
			}
			b.SetBytes(int64(c.bytes))
			b.ReportAllocs()
			for b.Loop() {
				if err := c.run(); err != nil {
					b.Fatal(err)
				}
			}
			if c.frames > 0 {
				b.ReportMetric(float64(c.frames)*float64(b.N)/b.Elapsed().Seconds(), "frames/s")
			}
		})
	}
}

// TestBenchmarks runs every benchmark body once, and checks it is
// allocation-free once warm.
func TestBenchmarks(t *testing.T) {
	for _, c := range benchCases(t) {
		if err := c.run(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if allocs := testing.AllocsPerRun(5, func() {
			if err := c.run(); err != nil {
				panic(err)
			}
		}); allocs != 0 {
			t.Errorf("%s: %v allocs per run", c.name, allocs)
		}
	}
}
