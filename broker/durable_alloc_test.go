package broker

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/require"
)

// durableClient is an engine client in memory with the broker's durable
// links: a producer whose target is durable (receiver settle mode
// second, tags of its own), a durable subscription it receives and
// accepts on, and one it detached, which the broker keeps.
type durableClient struct {
	engine.NopHandler
	snd, sub, away *engine.Link
	tag            [8]byte
	seq            uint64
	got, outcomes  int
}

func (h *durableClient) OnConnectionOpen(c *engine.Conn) { c.Begin() }

func (h *durableClient) OnSessionBegin(s *engine.Session) {
	src := func() *frame.Source {
		return &frame.Source{Address: []byte("topic/x"), Durable: frame.DurabilityUnsettledState, ExpiryPolicy: frame.ExpiryNever}
	}
	h.away, _ = s.AttachReceiver(engine.LinkOptions{Name: "away", Source: src()})
	h.sub, _ = s.AttachReceiver(engine.LinkOptions{Name: "sub", Source: src(), Credit: 100})
	h.snd, _ = s.AttachSender(engine.LinkOptions{Name: "producer", Unsettled: true, RcvSecond: true,
		Target: &frame.Target{Address: []byte("topic/x"), Durable: frame.DurabilityUnsettledState, ExpiryPolicy: frame.ExpiryNever}})
}

func (h *durableClient) OnDelivery(l *engine.Link, d engine.Delivery) {
	d.Accept()
	h.got++
}

func (h *durableClient) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) { h.outcomes++ }

func (h *durableClient) send(payload []byte) error {
	h.seq++
	binary.BigEndian.PutUint64(h.tag[:], h.seq)
	_, err := h.snd.Send(h.tag[:], payload, false)
	return err
}

// shuttle moves the bytes between two connections until neither has
// any to write.
func shuttle(t *testing.T, a, b *engine.Conn, now time.Time) {
	for range 1000 {
		moved := false
		for _, p := range [2][2]*engine.Conn{{a, b}, {b, a}} {
			if out := p[0].Output(); len(out) > 0 {
				if err := p[1].Feed(out, now); err != nil {
					t.Fatal(err)
				}
				p[0].Written(len(out))
				moved = true
			}
		}
		if !moved {
			return
		}
	}
	t.Fatal("no end")
}

// TestDurablePathAllocs: once warm, a message sent on a durable
// producer's link (settle mode second: accepted by the broker, settled
// by the producer), copied to a fan-out node's attached durable
// subscription (its tag the broker's number, accepted by the consumer)
// and to its detached one (kept for it, then dropped here by hand so
// that it does not fill), allocates nothing: the broker's and both
// engines' whole path.
func TestDurablePathAllocs(t *testing.T) {
	b := New(Options{FanoutPrefixes: []string{"topic/"}})
	h := &durableClient{}
	now := time.Unix(1_800_000_000, 0)
	cli := engine.NewClient(engine.Config{ContainerID: "alloc"}, h)
	srv := engine.NewServer(b.cfg, handler{b})
	shuttle(t, cli, srv, now)
	require.NotNil(t, h.away)
	require.NoError(t, h.away.DetachOnly(nil))
	shuttle(t, cli, srv, now)
	st, ok := b.Queue("topic/x")
	require.True(t, ok)
	require.Equal(t, 1, st.Detached)
	require.Equal(t, 1, st.Consumers)
	payload := data(1000)
	step := func() {
		if err := h.send(payload); err != nil {
			t.Fatal(err)
		}
		shuttle(t, cli, srv, now)
		b.mu.Lock()
		n := b.nodes["topic/x"]
		for _, c := range n.detached {
			b.dropLocked(n, c.own)
		}
		b.mu.Unlock()
	}
	for range 300 {
		step()
	}
	require.Zero(t, testing.AllocsPerRun(1000, step))
	const total = 300 + 1 + 1000 // AllocsPerRun runs it once more, to warm up
	st, _ = b.Queue("topic/x")
	require.Equal(t, uint64(total), st.Enqueued)
	require.Equal(t, uint64(total), st.Accepted, "each accepted by the subscription")
	require.Equal(t, uint64(total), st.Dropped, "each kept for the detached one (dropped here)")
	require.Equal(t, 0, st.Unsettled)
	require.Equal(t, total, h.got)
	require.Equal(t, total, h.outcomes)
	require.Len(t, h.snd.Unsettled(), 0, "the producer settled each")
}

// data is a message of one data section of n bytes.
func data(n int) []byte {
	b := []byte{0x00, 0x53, 0x75, 0xb0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[4:], uint32(n))
	return append(b, make([]byte, n)...)
}
