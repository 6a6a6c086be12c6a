package engine

import (
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/frame"
)

// warmServer returns a server Conn past the handshake with one receiving
// link (handle 0 on channel 0) that the client attached, with automatic
// credit, and the fake clock.
func warmServer(tb testing.TB, scfg Config, unsettled bool) (*Conn, time.Time) {
	tb.Helper()
	var sh NopHandler
	ch := &attachOnOpen{opts: LinkOptions{Name: "bench", Address: "q", Presettled: !unsettled, Unsettled: unsettled}}
	p := newPipe(tb, Config{}, scfg, ch, sh)
	p.run()
	if ch.link == nil || !ch.link.attached() {
		tb.Fatal("link not attached")
	}
	p.s.Written(len(p.s.Output()))
	return p.s, p.now
}

type attachOnOpen struct {
	NopHandler
	opts LinkOptions
	link *Link
}

func (h *attachOnOpen) OnConnectionOpen(c *Conn) {
	s, _ := c.Begin()
	h.link, _ = s.AttachSender(h.opts)
}

// transfers returns n transfer frames on channel 0, handle 0, of
// payloads of size bytes, with delivery-ids from id.
func transfers(n, size int, id uint32, settled bool) []byte {
	var b []byte
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = byte(i)
	}
	for i := 0; i < n; i++ {
		start := len(b)
		b = frame.BeginFrame(b, frame.TypeAMQP, 0)
		tag := []byte{byte(i >> 8), byte(i)}
		b = frame.AppendTransfer(b, frame.Transfer{Handle: 0, DeliveryID: frame.Some(id + uint32(i)),
			DeliveryTag: tag, MessageFormat: frame.Some[uint32](0), Settled: settled})
		b = append(b, payload...)
		b = frame.EndFrame(b, start)
	}
	return b
}

type countDeliveries struct {
	NopHandler
	n, bytes int
}

func (h *countDeliveries) OnDelivery(l *Link, d Delivery) {
	h.n++
	h.bytes += len(d.Payload)
}

func TestReceiverAllocs(t *testing.T) {
	for _, unsettled := range []bool{false, true} {
		h := &countDeliveries{}
		s, now := warmServer(t, Config{Credit: 500, AutoAccept: true}, unsettled)
		s.h = h
		batch := transfers(100, 100, 0, !unsettled)
		id := uint32(0)
		allocs := testing.AllocsPerRun(200, func() {
			if err := s.Feed(batch, now); err != nil {
				t.Fatal(err)
			}
			id += 100
			s.Written(len(s.Output()))
		})
		if allocs != 0 {
			t.Errorf("unsettled=%v: %v allocs per batch of 100 messages", unsettled, allocs)
		}
		if h.n != 201*100 {
			t.Errorf("unsettled=%v: %d deliveries", unsettled, h.n)
		}
	}
}

func benchReceiver(b *testing.B, size int, unsettled bool) {
	h := &countDeliveries{}
	s, now := warmServer(b, Config{Credit: 1000, AutoAccept: true}, unsettled)
	s.h = h
	const n = 100
	batch := transfers(n, size, 0, !unsettled)
	b.SetBytes(int64(len(batch) / n))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += n {
		s.Feed(batch, now)
		s.Written(len(s.Output()))
	}
	b.StopTimer()
	if h.n < b.N {
		b.Fatalf("%d deliveries of %d", h.n, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

func BenchmarkReceiver100(b *testing.B)          { benchReceiver(b, 100, false) }
func BenchmarkReceiver1K(b *testing.B)           { benchReceiver(b, 1024, false) }
func BenchmarkReceiver100Unsettled(b *testing.B) { benchReceiver(b, 100, true) }

// senderPair returns a client Conn with an attached sending link that has
// all the credit and session window it will need.
func senderPair(tb testing.TB, presettled bool) (*pipe, *Link) {
	ch := &attachOnOpen{opts: LinkOptions{Name: "send", Address: "q", Presettled: presettled, Unsettled: !presettled}}
	p := newPipe(tb, Config{}, Config{Credit: 1 << 30, Window: 1 << 30, AutoAccept: true}, ch, &NopHandler{})
	p.run()
	if ch.link == nil || ch.link.Credit() == 0 {
		tb.Fatal("no credit")
	}
	return p, ch.link
}

func TestSenderAllocs(t *testing.T) {
	p, l := senderPair(t, true)
	payload := make([]byte, 100)
	allocs := testing.AllocsPerRun(1000, func() {
		for range 100 {
			if _, err := l.Send(nil, payload, true); err != nil {
				t.Fatal(err)
			}
		}
		p.c.Written(len(p.c.Output()))
	})
	if allocs != 0 {
		t.Errorf("%v allocs per 100 presettled sends", allocs)
	}
}

// TestRoundTripAllocs sends unsettled messages engine to engine, the
// receiver accepting, the sender settling on the outcome: nothing
// allocated per message once warm, on either side.
func TestRoundTripAllocs(t *testing.T) {
	p, l := senderPair(t, false)
	payload := make([]byte, 100)
	var cbuf, sbuf []byte
	allocs := testing.AllocsPerRun(200, func() {
		for range 100 {
			if _, err := l.Send(nil, payload, false); err != nil {
				t.Fatal(err)
			}
		}
		cbuf = append(cbuf[:0], p.c.Output()...)
		p.c.Written(len(cbuf))
		p.s.Feed(cbuf, p.now)
		sbuf = append(sbuf[:0], p.s.Output()...)
		p.s.Written(len(sbuf))
		p.c.Feed(sbuf, p.now)
	})
	if allocs != 0 {
		t.Errorf("%v allocs per 100 unsettled messages", allocs)
	}
	if n := l.Session().Unsettled(); n != 0 {
		t.Errorf("%d deliveries left unsettled", n)
	}
}

func benchSender(b *testing.B, size int) {
	p, l := senderPair(b, true)
	payload := make([]byte, size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := l.Send(nil, payload, true); err != nil {
			b.Fatal(err)
		}
		if i%100 == 99 {
			p.c.Written(len(p.c.Output()))
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

func BenchmarkSender100(b *testing.B) { benchSender(b, 100) }
func BenchmarkSender1K(b *testing.B)  { benchSender(b, 1024) }
