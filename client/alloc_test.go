package client_test

import (
	"context"
	"net"
	"runtime"
	"testing"

	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/require"
)

// The allocation tests run against peers that allocate nothing per
// message themselves (testing.AllocsPerRun counts every goroutine's):
// a sink that accepts everything, and a source that sends one message
// over and over while it has credit.

type sink struct{ engine.NopHandler }

type source struct {
	engine.NopHandler
	payload []byte
}

func (s *source) OnFlow(l *engine.Link) {
	for l.IsSender() && l.Credit() > 0 {
		if _, err := l.Send(nil, s.payload, false); err != nil {
			return
		}
	}
}

func (s *source) OnWritable(c *engine.Conn) {}

func serveEngine(t testing.TB, cfg engine.Config, h engine.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &driver.Server{Config: cfg, Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "amqp://" + ln.Addr().String()
}

// benchMsg is the message of the allocation tests and benchmarks:
// properties and a 100-byte body.
func benchMsg() *message.Message {
	body := make([]byte, 100)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	return &message.Message{
		Properties: &message.Properties{MessageID: message.UlongID(1), To: []byte("orders"), ContentType: []byte("text/plain")},
		Body:       message.Body{Kind: message.BodyData, Data: [][]byte{body}},
	}
}

func skipRace(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
}

func TestSendAllocs(t *testing.T) {
	skipRace(t)
	ctx := testCtx(t)
	url := serveEngine(t, engine.Config{Credit: 1000, AutoAccept: true}, sink{})
	c, err := client.Dial(ctx, url, nil)
	require.NoError(t, err)
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, "sink", nil)
	require.NoError(t, err)
	msg := benchMsg()
	for range 1000 { // warm
		require.NoError(t, snd.Send(ctx, msg, nil))
	}
	n := testing.AllocsPerRun(2000, func() {
		if err := snd.Send(ctx, msg, nil); err != nil {
			panic(err)
		}
	})
	require.Zero(t, n, "allocations per Send")
	n = testing.AllocsPerRun(2000, func() {
		if err := snd.Send(ctx, msg, &client.SendOptions{Settled: true}); err != nil {
			panic(err)
		}
	})
	require.Zero(t, n, "allocations per settled Send")
	const batch = 100
	var ps [batch]client.Pending
	n = testing.AllocsPerRun(50, func() {
		for i := range ps {
			p, err := snd.SendAsync(ctx, msg, nil)
			if err != nil {
				panic(err)
			}
			ps[i] = p
		}
		for _, p := range ps {
			if err := p.Wait(ctx); err != nil {
				panic(err)
			}
		}
	})
	require.Zero(t, n/batch, "allocations per SendAsync and Wait")
	t.Logf("SendAsync+Wait: %.2f allocations per %d messages", n, batch)
}

func TestReceiveAllocs(t *testing.T) {
	skipRace(t)
	ctx := testCtx(t)
	msg := benchMsg()
	rcv := receiveIntoAllocs(t, ctx, msg, nil, &client.ReceiverOptions{Credit: 200})

	// Receive: under one per message: Delivery and bytes are carved
	// from chunks, and a Message keeps one data section's slice inline.
	const runs = 5000
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for range runs {
		d, err := rcv.Receive(ctx, nil)
		if err != nil {
			panic(err)
		}
		if err := d.Accept(ctx); err != nil {
			panic(err)
		}
	}
	runtime.ReadMemStats(&ms1)
	per := float64(ms1.Mallocs-ms0.Mallocs) / runs
	t.Logf("Receive+Accept: %.3f allocations per message", per)
	require.LessOrEqual(t, per, 1.0, "allocations per Receive and Accept")
}

// receiveIntoAllocs dials a source that sends msg over and over,
// attaches a receiver with ro, and requires ReceiveInto and Accept to
// allocate nothing once warm; the receiver stays attached for more.
func receiveIntoAllocs(t *testing.T, ctx context.Context, msg *message.Message, co *client.ConnOptions, ro *client.ReceiverOptions) *client.Receiver {
	payload, err := msg.Append(nil)
	require.NoError(t, err)
	url := serveEngine(t, engine.Config{}, &source{payload: payload})
	c, err := client.Dial(ctx, url, co)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "source", ro)
	require.NoError(t, err)
	var d client.Delivery
	for range 5000 { // warm
		require.NoError(t, rcv.ReceiveInto(ctx, &d, nil))
		require.NoError(t, d.Accept(ctx))
	}
	n := testing.AllocsPerRun(5000, func() {
		if err := rcv.ReceiveInto(ctx, &d, nil); err != nil {
			panic(err)
		}
		if err := d.Accept(ctx); err != nil {
			panic(err)
		}
	})
	require.Zero(t, n, "allocations per ReceiveInto and Accept")
	require.Equal(t, msg.Body.Data[0], d.Message.Body.Data[0])
	return rcv
}

// 100,000 messages queued at once with SendAsync cost no allocation
// once warm: SendAsync waits for room past its bound of messages unsent
// instead of growing the sender's queues, and the requests and Pendings
// of the burst are reused.
func TestSendAsyncBurstAllocs(t *testing.T) {
	skipRace(t)
	ctx, snd := sendAsyncSender(t)
	const burst = 100_000
	ps := make([]client.Pending, burst)
	require.NoError(t, sendWindow(ctx, snd, burst, ps)) // warm
	n := testing.AllocsPerRun(3, func() {
		if err := sendWindow(ctx, snd, burst, ps); err != nil {
			panic(err)
		}
	})
	t.Logf("%.0f allocations per burst of %d", n, burst)
	require.Less(t, n/burst, 0.01, "allocations per message")
}

// receiverFrom dials a server whose handler is h and returns a receiver
// from its "source" with the credit given, closed at the test's end.
func receiverFrom(t *testing.T, ctx context.Context, h engine.Handler, credit int32) *client.Receiver {
	t.Helper()
	c, err := client.Dial(ctx, serveEngine(t, engine.Config{}, h), nil)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "source", &client.ReceiverOptions{Credit: credit})
	require.NoError(t, err)
	return rcv
}

// TestReceiveUndecoded: with ReceiveOptions.Undecoded, Receive and
// ReceiveInto hand over the bytes as sent, neither decoded nor checked
// (these are a string, not a message: decoding refuses them), the
// Message empty; and ReceiveInto, so, allocates nothing.
func TestReceiveUndecoded(t *testing.T) {
	ctx := testCtx(t)
	payload := []byte{0xa1, 0x03, 'o', 'n', 'e'}
	rcv := receiverFrom(t, ctx, &source{payload: payload}, 100)

	d, err := rcv.Receive(ctx, nil)
	require.Error(t, err, "decoded: not a message")
	require.NoError(t, d.Accept(ctx))

	raw := &client.ReceiveOptions{Undecoded: true}
	d, err = rcv.Receive(ctx, raw)
	require.NoError(t, err)
	require.Equal(t, payload, d.Payload())
	require.Nil(t, d.Message.Header)
	require.Equal(t, message.BodyNone, d.Message.Body.Kind)
	require.NoError(t, d.Accept(ctx))

	var into client.Delivery
	require.Error(t, rcv.ReceiveInto(ctx, &into, nil), "decoded: not a message")
	require.NoError(t, into.Accept(ctx))
	for range 100 { // warm
		require.NoError(t, rcv.ReceiveInto(ctx, &into, raw))
		require.Equal(t, payload, into.Payload())
		require.Equal(t, message.BodyNone, into.Message.Body.Kind)
		require.NoError(t, into.Accept(ctx))
	}
	if raceEnabled {
		return // the race detector allocates
	}
	n := testing.AllocsPerRun(1000, func() {
		if err := rcv.ReceiveInto(ctx, &into, raw); err != nil {
			panic(err)
		}
		if err := into.Accept(ctx); err != nil {
			panic(err)
		}
	})
	require.Zero(t, n, "allocations per undecoded ReceiveInto and Accept")
}

// TestTakePayload: the bytes TakePayload hands over are the caller's:
// ReceiveInto's next deliveries into the same Delivery, with the
// receiver's buffers going round, never write them (each delivery's
// bytes differ, so a buffer reused would show); Undecoded ones are the
// queued buffer itself, gone from the Delivery; decoded ones likewise or
// a copy; and a Delivery that gave its bytes away receives again.
func TestTakePayload(t *testing.T) {
	ctx := testCtx(t)
	rcv := receiverFrom(t, ctx, &numbered{}, 10)

	raw := &client.ReceiveOptions{Undecoded: true}
	var into client.Delivery
	var taken, want [][]byte
	for i := range 60 {
		var p []byte
		switch i % 3 {
		case 0: // handed over
			require.NoError(t, rcv.ReceiveInto(ctx, &into, raw))
			p = into.TakePayload()
			require.Empty(t, into.Payload(), "handed over as they are: gone from the Delivery")
			require.Empty(t, into.TakePayload(), "handed over once")
		case 1: // the Delivery's bytes left with it, to be reused
			require.NoError(t, rcv.ReceiveInto(ctx, &into, raw))
			require.Equal(t, numberedPayload(i), into.Payload())
			require.NoError(t, into.Accept(ctx))
			continue
		case 2: // decoded (and refused: a string is not a message)
			require.Error(t, rcv.ReceiveInto(ctx, &into, nil))
			p = into.TakePayload()
		}
		require.Equal(t, numberedPayload(i), p)
		taken, want = append(taken, p), append(want, numberedPayload(i))
		require.NoError(t, into.Accept(ctx))
		require.Equal(t, want, taken, "taken bytes, at delivery %d", i)
	}
	require.Len(t, taken, 40)
}

// numbered sends its i-th message (from 0) as numberedPayload(i).
type numbered struct {
	engine.NopHandler
	n int
}

func (s *numbered) OnFlow(l *engine.Link) {
	for l.IsSender() && l.Credit() > 0 {
		if _, err := l.Send(nil, numberedPayload(s.n), false); err != nil {
			return
		}
		s.n++
	}
}

// numberedPayload is a str8 "msg-NN" (not a message: decoding refuses
// it), NN being i's last two digits.
func numberedPayload(i int) []byte {
	return []byte{0xa1, 0x06, 'm', 's', 'g', '-', byte('0' + i/10%10), byte('0' + i%10)}
}
