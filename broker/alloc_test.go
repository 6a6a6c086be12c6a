package broker

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/require"
)

// routed encodes a message with application properties {k: "v", to: to}
// and a data section of n bytes.
func routed(to string, n int) []byte {
	var m []byte
	m = encode.AppendString(encode.AppendString(m, "k"), "v")
	m = encode.AppendString(encode.AppendString(m, "to"), to)
	b := []byte{0x00, 0x53, 0x74, 0xc1, byte(1 + len(m)), 4}
	b = append(b, m...)
	return encode.AppendBinary(append(b, 0x00, 0x53, 0x75), bytes.Repeat([]byte{'x'}, n))
}

// TestRouteAllocs: routing by an application property reads the
// sections before the body and allocates nothing.
func TestRouteAllocs(t *testing.T) {
	m := routed("orders", 1000)
	to, ok := Route(m, "to")
	require.True(t, ok)
	require.Equal(t, "orders", string(to))
	_, ok = Route(m, "absent")
	require.False(t, ok)
	require.Zero(t, testing.AllocsPerRun(1000, func() { Route(m, "to") }))
}

// TestMessagePathAllocs: once warm, a message routed, stored, taken by
// a consumer and settled allocates nothing: the broker's whole path but
// the engine's.
func TestMessagePathAllocs(t *testing.T) {
	b := New(Options{RouteKey: "to"})
	n := b.nodeLocked([]byte("orders"), false)
	c := &consumer{n: n, q: &n.q, unacked: map[uint32]msg{}}
	n.consumers = append(n.consumers, c)
	m := routed("orders", 1000)
	var id uint32
	step := func() {
		to, ok := Route(m, "to")
		if !ok {
			t.Fatal("no route")
		}
		var wb [8]*conn
		b.mu.Lock()
		dst := b.nodeLocked(to, false)
		wake := b.enqueueLocked(dst, m, wb[:0])
		_ = wake
		_ = b.creditLocked(dst)
		k := b.takeLocked(c, c.batch[:1])
		if k != 1 {
			t.Fatal("nothing taken")
		}
		c.unacked[id] = c.batch[0]
		b.mu.Unlock()
		b.mu.Lock()
		got := c.unacked[id]
		delete(c.unacked, id)
		b.doneLocked(c, got)
		b.mu.Unlock()
		id++
	}
	for range 100 {
		step()
	}
	require.Zero(t, testing.AllocsPerRun(1000, step))
	require.Equal(t, 0, n.q.len())
	require.Equal(t, int64(0), n.q.bytes)
}

func TestClassOf(t *testing.T) {
	prev := 0
	for n := 0; n <= maxPooled; n++ {
		c, size := classOf(n)
		require.GreaterOrEqual(t, size, n)
		require.Less(t, c, numClasses)
		require.GreaterOrEqual(t, c, 0)
		if n > 64 {
			require.LessOrEqual(t, size, n+n/4+1, "n %d", n)
		}
		require.GreaterOrEqual(t, c, prev)
		prev = c
		if n > 4096 {
			n += rand.IntN(64)
		}
	}
	c, _ := classOf(maxPooled + 1)
	require.Equal(t, -1, c)
}

func TestRing(t *testing.T) {
	var r ring
	var model []uint64
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		switch op := rng.IntN(10); {
		case op < 5:
			r.pushBack(msg{seq: uint64(i)})
			model = append(model, uint64(i))
		case op < 6:
			r.pushFront(msg{seq: uint64(i)})
			model = append([]uint64{uint64(i)}, model...)
		case len(model) > 0:
			j := 0
			if op == 9 {
				j = rng.IntN(len(model))
			}
			require.Equal(t, model[j], r.remove(j).seq)
			model = append(model[:j], model[j+1:]...)
		}
		require.Equal(t, len(model), r.n)
	}
	for i, s := range model {
		require.Equal(t, s, r.at(i).seq)
	}
}

// pipeConn is a net.Conn whose reads return the chunks of a stream.
type pipeConn struct {
	net.Conn
	chunks [][]byte
}

func (p *pipeConn) Read(b []byte) (int, error) {
	if len(p.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(b, p.chunks[0])
	p.chunks[0] = p.chunks[0][n:]
	if len(p.chunks[0]) == 0 {
		p.chunks = p.chunks[1:]
	}
	return n, nil
}

// readAll reads w to its end through buffers of size bufSize.
func readAll(t *testing.T, w *dynConn, bufSize int) []byte {
	var out []byte
	buf := make([]byte, bufSize)
	for range 1 << 20 {
		n, err := w.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
	}
	t.Fatal("no end")
	return nil
}

func attachFrame(a frame.Attach, ch uint16) []byte {
	b := frame.BeginFrame(nil, frame.TypeAMQP, ch)
	b = frame.AppendAttach(b, a)
	return frame.EndFrame(b, 0)
}

// stream is a client's stream: headers, a SASL frame, a begin, two
// attaches (one with a dynamic source), a transfer and a heartbeat.
func stream() (in []byte, dynAt, tail int) {
	in = frame.AppendProtocolHeader(nil, frame.HeaderSASL)
	start := len(in)
	in = frame.BeginFrame(in, frame.TypeSASL, 0)
	in = frame.AppendSASLInit(in, frame.SASLInit{Mechanism: []byte("ANONYMOUS")})
	in = frame.EndFrame(in, start)
	in = frame.AppendProtocolHeader(in, frame.HeaderAMQP)
	in = append(in, attachFrame(frame.Attach{Name: []byte("plain"), Role: frame.RoleReceiver,
		Source: frame.Some(frame.Source{Address: []byte("q")}), Target: frame.Some(frame.Target{})}, 0)...)
	dynAt = len(in)
	in = append(in, attachFrame(frame.Attach{Name: []byte("dyn"), Handle: 1, Role: frame.RoleReceiver,
		Source: frame.Some(frame.Source{Dynamic: true}), Target: frame.Some(frame.Target{})}, 3)...)
	start = len(in)
	tail = len(in)
	in = frame.BeginFrame(in, frame.TypeAMQP, 0)
	in = frame.AppendTransfer(in, frame.Transfer{Handle: 0, DeliveryID: frame.Some[uint32](0), DeliveryTag: []byte{1}})
	in = append(in, bytes.Repeat([]byte{'p'}, 3000)...)
	in = frame.EndFrame(in, start)
	in = append(in, 0, 0, 0, 8, 2, 0, 0, 0) // heartbeat
	return in, dynAt, len(in) - tail
}

// TestDynConn: the attach of a dynamic source gets an address, however
// the stream is cut into reads; every other byte passes as it is.
func TestDynConn(t *testing.T) {
	in, dynAt, tail := stream()
	var want []byte
	for cut := 0; cut <= len(in); cut += 1 + cut/50 {
		for _, bufSize := range []int{1, 7, 100, 65536} {
			b := New(Options{})
			chunks := [][]byte{append([]byte(nil), in[:cut]...), append([]byte(nil), in[cut:]...)}
			w := &dynConn{Conn: &pipeConn{chunks: chunks}, b: b, max: 65536}
			got := readAll(t, w, bufSize)
			require.Equal(t, string(in[:dynAt]), string(got[:dynAt]), "cut %d buf %d", cut, bufSize)
			if want == nil {
				want = got
				size := int(binary.BigEndian.Uint32(got[dynAt:]))
				require.Equal(t, uint16(3), binary.BigEndian.Uint16(got[dynAt+6:]), "channel kept")
				a, err := frame.ParseAttach(got[dynAt+8 : dynAt+size])
				require.NoError(t, err)
				src, _ := a.Source.Get()
				require.True(t, src.Dynamic)
				require.Equal(t, "amqpsax.dynamic.1", string(src.Address))
				require.Equal(t, "dyn", string(a.Name))
				require.Equal(t, string(in[len(in)-tail:]), string(got[len(got)-tail:]))
				require.Equal(t, len(got)-tail, dynAt+size, "nothing between the attach and the transfer")
			}
			require.Equal(t, string(want), string(got), "cut %d buf %d", cut, bufSize)
			require.True(t, b.dynamic["amqpsax.dynamic.1"])
		}
	}
}

// FuzzDynConn: whatever the bytes and however they are cut, the wrapper
// does not panic, and a stream with no attach passes unchanged.
func FuzzDynConn(f *testing.F) {
	in, _, _ := stream()
	f.Add(in, uint16(5), uint16(3))
	f.Add([]byte("AMQP\x00\x01\x00\x00\x00\x00\x00\x10\x02\x00\x00\x00\x00\x53\x12\x45"), uint16(1), uint16(2))
	f.Fuzz(func(t *testing.T, in []byte, cut, bufSize uint16) {
		c := int(cut) % (len(in) + 1)
		w := &dynConn{Conn: &pipeConn{chunks: [][]byte{in[:c:c], in[c:]}}, b: New(Options{}), max: 4096}
		got := readAll(t, w, int(bufSize%300)+1)
		if !bytes.Contains(in, []byte{0x53, 0x12}) && !bytes.Contains(in, []byte("attach")) && !bytes.Contains(in, []byte{0x80}) {
			require.Equal(t, string(in), string(got))
		}
	})
}

var _ = time.Second
