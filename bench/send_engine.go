package bench

import (
	"fmt"
	"time"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// amqpsax's engine as the sending client of a recorded server stream (see
// send.go), set up as send_proton.go sets up Proton-C: a client Conn
// (SASL ANONYMOUS, the zero Config's) whose handler begins a session and
// attaches a sending link when the connection opens. The application
// sends SendBatch messages at a time (Link.Send, the delivery-id's 4
// bytes as the tag), then the output is taken and dropped (Output,
// Written) and, for unsettled sends, the server's disposition of that
// batch is fed; the engine settles each delivery on its accepted outcome
// (Config.ManualSettle unset) and reports it (OnDisposition). The engine
// answers the server's detach, end and close by itself.

func init() {
	Senders = append(Senders, Sender{Name: "engine", New: newEngineSender})
}

// engineSend is the sending application.
type engineSend struct {
	engine.NopHandler
	settled bool
	link    *engine.Link
	res     SenderResult
	err     error
}

func (h *engineSend) OnConnectionOpen(c *engine.Conn) {
	s, err := c.Begin()
	if err == nil {
		h.link, err = s.AttachSender(engine.LinkOptions{Name: DriverSenderLink, Address: DriverSenderAddress,
			Presettled: h.settled, Unsettled: !h.settled})
	}
	if err != nil && h.err == nil {
		h.err = err
	}
}

func (h *engineSend) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	if d.State.Type == frame.StateAccepted {
		h.res.Accepted++
	}
}

func (h *engineSend) OnConnectionClose(c *engine.Conn, e *engine.Error) {
	if e != nil && h.err == nil {
		h.err = e
	}
}

// engineSender runs connections of one stream.
type engineSender struct {
	s       *SenderStream
	h       *engineSend
	capture bool
	c       *engine.Conn
	now     time.Time
	disp    []byte // the disposition of a short last batch
}

func newEngineSender(s *SenderStream, capture bool) (SenderRun, error) {
	e := &engineSender{s: s, h: &engineSend{settled: s.Settled}, capture: capture, now: time.Unix(1700000000, 0)}
	return SenderRun{Run: e.run, Close: func() {}}, nil
}

func (e *engineSender) run(n int) (SenderResult, error) {
	h := e.h
	h.res, h.err = SenderResult{}, nil
	for n > 0 && h.err == nil {
		k := min(n, e.s.Msgs)
		e.conn(k)
		n -= k
	}
	if h.err != nil {
		return h.res, fmt.Errorf("engine: %w", h.err)
	}
	return h.res, nil
}

// write takes the output and drops it (or keeps it, with capture).
func (e *engineSender) write() {
	out := e.c.Output()
	e.h.res.Out += int64(len(out))
	if e.capture {
		e.h.res.Written = append(e.h.res.Written, out...)
	}
	e.c.Written(len(out))
}

func (e *engineSender) feed(p []byte) bool {
	if err := e.c.Feed(p, e.now); err != nil {
		if e.h.err == nil {
			e.h.err = err
		}
		return false
	}
	e.write()
	return e.h.err == nil
}

// open starts a connection and feeds it the stream up to the flow that
// grants the credit; it reports whether the link has credit for n.
func (e *engineSender) open(n int) bool {
	h, s := e.h, e.s
	h.link = nil
	e.c = engine.NewClient(engine.Config{ContainerID: "bench-sender"}, h)
	h.res.Conns++
	e.write()
	if !e.feed(s.Data[:s.Open]) || !e.feed(s.Data[s.Open:s.Attach]) {
		return false
	}
	if h.link == nil || h.link.Credit() < uint32(n) {
		h.err = fmt.Errorf("%s: the link has no credit for %d messages after the setup", s.Name, n)
		return false
	}
	return true
}

// batch sends messages first to last-1 of a connection, writes them and,
// when they go unsettled, feeds the server's disposition of them.
func (e *engineSender) batch(first, last int) bool {
	h, s := e.h, e.s
	msg := s.Workload.AMQP
	for range last - first {
		if _, err := h.link.Send(nil, msg, s.Settled); err != nil {
			h.err = err
			return false
		}
		h.res.Sent++
	}
	e.write()
	if s.Settled {
		return true
	}
	if i := first / SendBatch; last == min(first+SendBatch, s.Msgs) {
		return e.feed(s.Data[s.Disps[i]:s.Disps[i+1]])
	}
	e.disp = AppendAcceptFrame(e.disp[:0], uint32(first), uint32(last-1))
	return e.feed(e.disp)
}

// conn runs one connection that sends n messages, n <= s.Msgs.
func (e *engineSender) conn(n int) {
	if !e.open(n) {
		return
	}
	for first := 0; first < n; first += SendBatch {
		if !e.batch(first, min(first+SendBatch, n)) {
			return
		}
	}
	e.feed(e.s.Data[e.s.Tail:])
}

// EngineSenderAllocs runs a client engine through s's setup and warm
// batches, then returns the allocations per batch of SendBatch messages
// (sent, written and, unsettled, answered) over the next runs batches
// (testing.AllocsPerRun, which runs one more first).
func EngineSenderAllocs(s *SenderStream, warm, runs int, allocsPerRun func(int, func()) float64) (float64, error) {
	if (warm+runs+1)*SendBatch > s.Msgs {
		return 0, fmt.Errorf("%s has %d messages, not %d batches of %d", s.Name, s.Msgs, warm+runs+1, SendBatch)
	}
	e := &engineSender{s: s, h: &engineSend{settled: s.Settled}, now: time.Unix(1700000000, 0)}
	if !e.open(s.Msgs) {
		return 0, e.h.err
	}
	first := 0
	next := func() {
		if e.h.err == nil && e.batch(first, first+SendBatch) {
			first += SendBatch
		}
	}
	for range warm {
		next()
	}
	allocs := allocsPerRun(runs, next)
	if e.h.err != nil {
		return allocs, e.h.err
	}
	want := (warm + runs + 1) * SendBatch
	if e.h.res.Sent != want || (!s.Settled && e.h.res.Accepted != want) {
		return allocs, fmt.Errorf("%d messages sent, %d accepted; want %d", e.h.res.Sent, e.h.res.Accepted, want)
	}
	return allocs, nil
}
