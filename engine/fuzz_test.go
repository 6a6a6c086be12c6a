package engine

import (
	"io"
	"testing"

	"github.com/amqpsax/amqpsax/frame"
)

// busy is a handler that acts on everything, to reach more of the engine
// from the bytes a fuzzer makes up.
type busy struct{ NopHandler }

func (busy) OnLinkAttach(l *Link) {
	if !l.IsSender() {
		l.Flow(3)
	}
}

func (busy) OnFlow(l *Link) {
	for i := 0; l.IsSender() && l.Credit() > 0 && i < 3; i++ {
		if _, err := l.Send(nil, make([]byte, 700), i%2 == 0 && l.SndSettleMode() != frame.SndUnsettled); err != nil {
			break
		}
	}
}

func (busy) OnDelivery(l *Link, d Delivery) {
	switch d.DeliveryID % 4 {
	case 0:
		d.Accept()
	case 1:
		d.Release()
	case 2:
		d.Reject(NewError(frame.CondDecodeError, "x"))
	}
}

func (busy) OnDisposition(l *Link, d DeliveryUpdate) {
	if d.ID%3 == 0 {
		l.Settle(d.ID)
	}
}

// laterBusy is busy, and an Answerer that holds its answer to the
// attach of each link whose name ends in an odd byte (AnswerLater),
// keeping it for answer: so that what a peer sends meanwhile (flow,
// transfers, a detach, a fault) meets a held answer.
type laterBusy struct {
	busy
	t     testing.TB
	held  []*Link // since the last answer
	ready []*Link // held before the last answer: answered at the next
	gave  int
}

func (h *laterBusy) AnswerAttach(l *Link, src *frame.Source, tgt *frame.Target) *Error {
	if n := l.Name(); len(n) > 0 && n[len(n)-1]%2 == 1 {
		if err := l.AnswerLater(); err != nil {
			h.t.Fatalf("AnswerLater in AnswerAttach: %v", err)
		}
		h.held = append(h.held, l)
	}
	return nil
}

// answer answers the links held before its last call, so that each
// waits one read at least: every third refused. Answer is nil, or
// ErrState for a link the peer's detach, a fault or its session's end
// answered first.
func (h *laterBusy) answer() {
	for _, l := range h.ready {
		var refuse *Error
		if h.gave++; h.gave%3 == 0 {
			refuse = NewError(frame.CondNotFound, "held, then refused")
		}
		if err := l.Answer(refuse); err != nil && err != ErrState {
			h.t.Fatalf("Answer: %v", err)
		}
		if err := l.Answer(nil); err != ErrState {
			h.t.Fatalf("Answer again: %v, not ErrState", err)
		}
	}
	h.ready, h.held = append(h.ready[:0], h.held...), h.held[:0]
}

// recordedClient returns what an engine client sends through a whole
// conversation: SASL, open, begin, attach, transfers, dispositions,
// detach, end, close.
func recordedClient(t testing.TB) []byte {
	cli, _ := recorded(t)
	return cli
}

// recorded returns what each end of a whole conversation writes.
func recorded(t testing.TB) (cliOut, srvOut []byte) {
	srv := &recorder{}
	srv.onDel = func(l *Link, d Delivery) { d.Accept() }
	cli := &recorder{}
	var rec, srec []byte
	cli.onOpen = func(c *Conn) {
		s, _ := c.Begin()
		s.AttachSender(LinkOptions{Name: "s", Address: "q", Unsettled: true})
		s.AttachReceiver(LinkOptions{Name: "r", Address: "q", Credit: 5})
	}
	cli.onFlow = func(l *Link) {
		for l.IsSender() && l.Credit() > 0 && l.DeliveryCount() < 4 {
			l.Send(nil, make([]byte, 1500), false)
		}
	}
	p := newPipe(t, Config{MaxFrameSize: 1024}, Config{Credit: 10, MaxFrameSize: 1024}, cli, srv)
	for i := 0; i < 100; i++ {
		co := p.c.Output()
		so := p.s.Output()
		if len(co) == 0 && len(so) == 0 {
			break
		}
		rec = append(rec, co...)
		srec = append(srec, so...)
		b := append([]byte(nil), co...)
		p.c.Written(len(co))
		p.s.Feed(b, p.now)
		b = append([]byte(nil), so...)
		p.s.Written(len(so))
		p.c.Feed(b, p.now)
	}
	p.c.Close(nil)
	rec = append(rec, p.c.Output()...)
	p.run()
	return rec, append(srec, p.s.Output()...)
}

// FuzzServer feeds arbitrary bytes to a server engine, from the start
// and after a valid handshake, in reads of arbitrary sizes: nothing
// panics, output stays within a constant times the input, and nothing is
// written once the connection is done. Its handler holds some answers to
// the peer's attaches (laterBusy) and gives them after a later read;
// those still held once the connection is closed are ErrState, and
// nothing is written.
func FuzzServer(f *testing.F) {
	f.Add([]byte(nil), false, uint16(7))
	f.Add(recordedClient(f), false, uint16(100))
	f.Add(recordedClient(f), false, uint16(1))
	f.Add(handshake(), false, uint16(3))
	f.Add(perf(perf(nil, 0, transferBody(0, 0, []byte("x"))), 0, attachSender(1, "b")), true, uint16(9))
	f.Add(echoFlows(3), true, uint16(40))
	f.Add(heldAttaches(), true, uint16(30))
	f.Add(heldAttaches(), true, uint16(511))
	f.Add(noCredit(3), true, uint16(40))
	f.Add(append(frame.AppendProtocolHeader(nil, frame.HeaderSASL), saslFrame(nil, func(b []byte) []byte {
		return frame.AppendSASLInit(b, frame.SASLInit{Mechanism: []byte("PLAIN"), InitialResponse: []byte("\x00u\x00p")})
	})...), false, uint16(5))
	f.Fuzz(func(t *testing.T, data []byte, afterHandshake bool, read uint16) {
		h := &laterBusy{t: t}
		c := NewServer(Config{Credit: 5, AutoAccept: true, MaxFrameSize: 2048, ChannelMax: 3, HandleMax: 3, Window: 8,
			Auth: nil}, h)
		r := newRaw(t, c)
		in := 0
		if afterHandshake {
			hs := handshake()
			in += len(hs)
			r.feed(hs)
		}
		fuzzFeed(t, r, data, read, in, h.answer)
		c.CloseRead()
		if !c.Closed() {
			t.Fatal("not closed after CloseRead")
		}
		c.Written(len(c.Output())) // the close, when the peer's stream ended before one
		for _, l := range append(h.ready, h.held...) {
			if err := l.Answer(nil); err != ErrState {
				t.Fatalf("Answer once closed: %v, not ErrState", err)
			}
		}
		if out := c.Output(); len(out) > 0 {
			t.Fatalf("%d bytes written once closed", len(out))
		}
	})
}

// heldAttaches is what a peer sends after handshake for laterBusy to
// hold: three attaches it holds (names ending in an odd byte), a
// transfer on the first while held, the second's detach while held,
// then an attach it answers at once.
func heldAttaches() []byte {
	b := perf(nil, 0, attachSender(1, "a1"))
	b = perf(b, 0, attachSender(2, "a3"))
	b = perf(b, 0, attachSender(3, "a5"))
	b = perf(b, 0, transferBody(1, 0, []byte("early")))
	b = perf(b, 0, func(b []byte) []byte { return frame.AppendDetach(b, frame.Detach{Handle: 2, Closed: true}) })
	return perf(b, 0, attachSender(4, "a6"))
}

// clientBusy is busy with the attaches a client makes once open.
type clientBusy struct{ busy }

func (clientBusy) OnConnectionOpen(c *Conn) {
	s, err := c.Begin()
	if err != nil {
		return
	}
	s.AttachSender(LinkOptions{Name: "s", Address: "q", Unsettled: true})
	s.AttachReceiver(LinkOptions{Name: "r", Address: "q", Credit: 5})
	s.AttachSender(LinkOptions{Name: "p", Address: "q", Presettled: true})
}

// FuzzClient feeds arbitrary bytes, as a server's, to a client engine
// that begins a session and attaches senders and a receiver once open,
// in reads of arbitrary sizes: nothing panics, output stays within a
// constant times the input, and nothing is written once it is done.
func FuzzClient(f *testing.F) {
	_, srv := recorded(f)
	f.Add([]byte(nil), uint16(7), false)
	f.Add(srv, uint16(100), false)
	f.Add(srv, uint16(1), true)
	f.Add(srv[:len(srv)/2], uint16(13), false)
	f.Fuzz(func(t *testing.T, data []byte, read uint16, noSASL bool) {
		c := NewClient(Config{MaxFrameSize: 2048, ChannelMax: 3, HandleMax: 3, Window: 8, NoSASL: noSASL,
			Username: "u", Password: "p"}, clientBusy{})
		r := newRaw(t, c)
		r.feed(nil)
		fuzzFeed(t, r, data, read, 0, nil)
		c.ReadFailed(io.ErrUnexpectedEOF)
		if !c.Closed() {
			t.Fatal("not closed after ReadFailed")
		}
	})
}

// fuzzFeed feeds data to r's Conn in reads of 1 to 512 bytes (read says
// which), a second apart, after in bytes fed already, calling after (when
// not nil) after each, on the Conn's goroutine as a driver.Waker would:
// nothing is written once the Conn is done, and output stays within a
// constant times the input.
func fuzzFeed(t *testing.T, r *raw, data []byte, read uint16, in int, after func()) {
	c := r.c
	step := int(read%512) + 1
	for len(data) > 0 {
		n := min(step, len(data))
		wasDone := c.Done()
		before := len(r.in)
		r.feed(data[:n])
		in += n
		if after != nil {
			after()
			out := c.Output()
			r.in = append(r.in, out...)
			c.Written(len(out))
		}
		if wasDone && len(r.in) != before {
			t.Fatal("wrote after done")
		}
		data = data[n:]
		if len(r.in) > 16*in+64<<10 {
			t.Fatalf("%d bytes written for %d read", len(r.in), in)
		}
		r.now = r.now.Add(1e9)
		c.Tick(r.now)
	}
}
