package engine

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/amqpsax/amqpsax/frame"
)

// Hostile peers: work and memory are bounded by a constant times the
// input, or by the configured limits. Each test counts (bytes allocated,
// bytes written) at two sizes of input; none measures time.

func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// cost feeds the handshake then input to a fresh server, and returns the
// bytes allocated and written, and the server.
func cost(cfg Config, input []byte) (alloc uint64, out int, c *Conn) {
	c = NewServer(cfg, nil)
	now := newRaw(nil, c).now
	c.Feed(handshake(), now)
	c.Written(len(c.Output()))
	alloc = allocated(func() {
		for len(input) > 0 { // in 4 KiB reads, as a driver would
			n := min(4096, len(input))
			c.Feed(input[:n], now)
			out += len(c.Output())
			c.Written(len(c.Output()))
			input = input[n:]
		}
	})
	return alloc, out, c
}

// linear checks that doubling the input at most doubles the cost (with
// slack for buffers grown once).
func linear(t *testing.T, what string, small, large uint64) {
	t.Helper()
	t.Logf("%s: %d at n, %d at 2n", what, small, large)
	if large > 2*small+64<<10 {
		t.Errorf("%s grows faster than the input: %d at n, %d at 2n", what, small, large)
	}
}

func begins(n int) []byte {
	var b []byte
	for i := 1; i <= n; i++ {
		b = perf(b, uint16(i), beginBody)
	}
	return b
}

func TestCountingSessions(t *testing.T) {
	cfg := Config{ChannelMax: 1000}
	a1, o1, _ := cost(cfg, begins(200))
	a2, o2, c := cost(cfg, begins(400))
	linear(t, "bytes allocated", a1, a2)
	linear(t, "bytes written", uint64(o1), uint64(o2))
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
	// Past channel-max: the connection closes; nothing grows with what
	// follows.
	_, _, c = cost(Config{ChannelMax: 100}, begins(400))
	if c.Err() == nil || c.Err().Condition != frame.CondFramingError || len(c.byRemote) > 101 {
		t.Fatalf("err %v, %d channels", c.Err(), len(c.byRemote))
	}
}

func attaches(n int) []byte {
	var b []byte
	for i := 1; i <= n; i++ {
		b = perf(b, 0, attachSender(uint32(i), "l"+strconv.Itoa(i)))
	}
	return b
}

func TestCountingLinks(t *testing.T) {
	cfg := Config{HandleMax: 1000}
	a1, o1, _ := cost(cfg, attaches(200))
	a2, o2, c := cost(cfg, attaches(400))
	linear(t, "bytes allocated", a1, a2)
	linear(t, "bytes written", uint64(o1), uint64(o2))
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
	_, _, c = cost(Config{HandleMax: 100}, attaches(400))
	if c.Err() == nil || c.Err().Condition != frame.CondFramingError || !c.Done() {
		t.Fatalf("err %v", c.Err())
	}
}

func noCredit(n int) []byte {
	var b []byte
	for i := range n {
		b = perf(b, 0, transferBody(0, uint32(i), []byte("payload")))
	}
	return b
}

// A peer sending transfers without credit gets one detach; the rest are
// ignored at a constant cost each (until the window ends the session).
func TestCountingTransfersWithoutCredit(t *testing.T) {
	cfg := Config{Window: 1 << 20}
	a1, o1, _ := cost(cfg, noCredit(2000))
	a2, o2, c := cost(cfg, noCredit(4000))
	linear(t, "bytes allocated", a1, a2)
	if o1 != o2 || o1 > 200 {
		t.Fatalf("wrote %d then %d bytes: one detach expected", o1, o2)
	}
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
}

func echoFlows(n int) []byte {
	var b []byte
	for range n {
		b = perf(b, 0, func(b []byte) []byte {
			return frame.AppendFlow(b, frame.Flow{NextIncomingID: frame.Some[uint32](0), IncomingWindow: 10, OutgoingWindow: 10,
				Handle: frame.Some[uint32](0), DeliveryCount: frame.Some[uint32](0), LinkCredit: frame.Some[uint32](0), Echo: true})
		})
	}
	return b
}

// A peer that sends flows asking for an echo and never reads: the output
// buffer stops growing once over MaxOutput, because WantRead turns false
// and a driver stops feeding.
func TestCountingNeverReads(t *testing.T) {
	const limit = 64 << 10
	c := NewServer(Config{MaxOutput: limit}, nil)
	now := newRaw(nil, c).now
	c.Feed(handshake(), now)
	chunk := echoFlows(200) // ~ 4 KiB
	fed := 0
	for c.WantRead() && fed < 100<<20 {
		c.Feed(chunk, now)
		fed += len(chunk)
	}
	if c.WantRead() {
		t.Fatal("still wants to read after 100 MiB")
	}
	if p := c.unwritten(); p > limit+4*len(chunk) {
		t.Fatalf("%d bytes buffered, limit %d", p, limit)
	}
	t.Logf("stopped after %d bytes fed, %d buffered", fed, c.unwritten())
	c.Written(c.unwritten())
	if !c.WantRead() {
		t.Fatal("does not read again once written")
	}
}

// Incoming deliveries split over many frames on many links: memory is
// bounded by the pending limit, not by what the peer claims.
func TestCountingPartialDeliveries(t *testing.T) {
	var in []byte
	for i := 1; i <= 50; i++ {
		in = perf(in, 0, attachSender(uint32(i), "p"+string(rune('a'+i%26))+string(rune('0'+i/26))))
	}
	cfg := Config{Credit: 10, HandleMax: 100}
	more := func(n int) []byte {
		b := append([]byte(nil), in...)
		for range n {
			for h := 1; h <= 50; h++ {
				b = perf(b, 0, func(b []byte) []byte {
					b = frame.AppendTransfer(b, frame.Transfer{Handle: uint32(h), DeliveryID: frame.Some(uint32(h)),
						DeliveryTag: []byte{1}, More: true})
					return append(b, make([]byte, 100)...)
				})
			}
		}
		return b
	}
	a1, _, _ := cost(cfg, more(20))
	a2, _, c := cost(cfg, more(40))
	linear(t, "bytes allocated", a1, a2)
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
}
