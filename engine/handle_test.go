package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
)

// The rules the layers above share, decided once here: a delivery's
// context (SendWith, SetDeliveryContext), terminal outcomes, "try
// later", the resume action, the credit policy; and an endpoint this end
// ends for a fault of the peer, reported when its detach, end or close
// is written.

// rec is an application's record of a delivery, as a pointer: storing it
// in an interface allocates nothing.
type rec struct{ n int }

// A sender's context comes back with each disposition of its delivery
// and in Unsettled, and is dropped when the delivery is settled.
func TestSendWithContext(t *testing.T) {
	cli := &recorder{}
	srv := &recorder{}
	var got []*rec
	cli.onDisp = func(l *Link, d DeliveryUpdate) {
		r, _ := d.Context.(*rec)
		got = append(got, r)
	}
	var held []Delivery
	srv.onDel = func(l *Link, d Delivery) { held = append(held, d) }
	ch := &attachOnOpen{opts: LinkOptions{Name: "ctx", Address: "q"}}
	both := &tee{recorder: cli, att: ch}
	p := newPipe(t, Config{NoSASL: true}, Config{NoSASL: true, Credit: 10}, both, srv)
	p.run()
	l := ch.link
	recs := []*rec{{1}, {2}, {3}}
	for _, r := range recs {
		if _, err := l.SendWith(nil, []byte{0x00, 0x53, 0x77, 0x40}, false, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.SendWith(nil, []byte{0x00, 0x53, 0x77, 0x40}, true, &rec{9}); err != nil {
		t.Fatal(err) // settled: nothing kept
	}
	p.run()
	if len(held) != 4 {
		t.Fatalf("%d deliveries", len(held))
	}
	u := l.Unsettled()
	if len(u) != 3 || u[0].Context != recs[0] || u[2].Context != recs[2] {
		t.Fatalf("Unsettled %+v", u)
	}
	// Delivery 1 given a state that is not terminal, then 0 and 1 accepted.
	if err := held[1].Link.Dispose(held[1].DeliveryID, frame.DeliveryState{Type: frame.StateReceived}, false); err != nil {
		t.Fatal(err)
	}
	p.run()
	held[0].Accept()
	held[1].Accept()
	p.run()
	if len(got) != 3 || got[0] != recs[1] || got[1] != recs[0] || got[2] != recs[1] {
		t.Fatalf("contexts %v", got)
	}
	// Settled: forgotten, context and all.
	if err := l.SetDeliveryContext(held[0].DeliveryID, &rec{}); !errors.Is(err, ErrState) {
		t.Fatalf("SetDeliveryContext of a settled delivery: %v", err)
	}
	// SetDeliveryContext replaces the context of one still held.
	r4 := &rec{4}
	if err := l.SetDeliveryContext(held[2].DeliveryID, r4); err != nil {
		t.Fatal(err)
	}
	held[2].Reject(nil)
	p.run()
	if got[len(got)-1] != r4 {
		t.Fatalf("context %v, want the one set", got[len(got)-1])
	}
	if u := l.Unsettled(); len(u) != 0 {
		t.Fatalf("Unsettled %+v", u)
	}
}

// tee is a recorder that also attaches a link at the open.
type tee struct {
	*recorder
	att *attachOnOpen
}

func (h *tee) OnConnectionOpen(c *Conn) { h.recorder.OnConnectionOpen(c); h.att.OnConnectionOpen(c) }

// A receiver's context, set during OnDelivery or after it by id, comes
// back when the sender settles (receiver settle mode second), and a
// durable receiver's Unsettled carries it.
func TestReceiverContext(t *testing.T) {
	srv := &recorder{}
	cli := &recorder{}
	var rcv *Link
	cli.onOpen = func(c *Conn) {
		s, _ := c.Begin()
		rcv, _ = s.AttachReceiver(LinkOptions{Name: "r", Address: "q", Credit: 10, RcvSecond: true,
			Source: &frame.Source{Address: []byte("q"), Durable: frame.DurabilityUnsettledState}})
	}
	first := &rec{1}
	second := &rec{2}
	var ids []uint32
	cli.onDel = func(l *Link, d Delivery) {
		ids = append(ids, d.DeliveryID)
		if len(ids) == 1 {
			if err := d.SetContext(first); err != nil {
				t.Fatal(err)
			}
			d.Accept() // settle waits for the sender's
		}
	}
	var got []any
	cli.onDisp = func(l *Link, d DeliveryUpdate) { got = append(got, d.Context) }
	var snd *Link
	srv.onAtt = func(l *Link) { snd = l }
	p := newPipe(t, Config{NoSASL: true}, Config{NoSASL: true, ManualSettle: true}, cli, srv)
	p.run()
	var sent []uint32
	srv.onDisp = func(l *Link, d DeliveryUpdate) { sent = append(sent, d.ID) }
	for range 2 {
		if _, err := snd.Send(nil, []byte{0x00, 0x53, 0x77, 0x40}, false); err != nil {
			t.Fatal(err)
		}
	}
	p.run()
	if len(ids) != 2 {
		t.Fatalf("%d deliveries", len(ids))
	}
	if err := rcv.SetDeliveryContext(ids[1], second); err != nil {
		t.Fatal(err)
	}
	u := rcv.Unsettled()
	if len(u) != 2 || u[0].Context != first || u[1].Context != second {
		t.Fatalf("Unsettled %+v", u)
	}
	// The sender settles the first: the receiver hears it with its context.
	if len(sent) != 1 {
		t.Fatalf("sender saw %v", sent)
	}
	snd.Settle(sent[0])
	p.run()
	if len(got) != 1 || got[0] != first {
		t.Fatalf("contexts %v", got)
	}
	if err := rcv.SetDeliveryContext(ids[0], first); !errors.Is(err, ErrState) {
		t.Fatalf("SetDeliveryContext of a settled delivery: %v", err)
	}
}

// Contexts cost no allocation: a pointer in an interface is stored as
// it is.
func TestContextAllocs(t *testing.T) {
	p, l := senderPair(t, false)
	r := &rec{}
	sh := &contextReceiver{r: r}
	p.s.h = sh
	p.c.h = sh
	payload := make([]byte, 100)
	var cbuf, sbuf []byte
	allocs := testing.AllocsPerRun(200, func() {
		for range 100 {
			if _, err := l.SendWith(nil, payload, false, r); err != nil {
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
		t.Errorf("%v allocs per 100 unsettled messages with contexts", allocs)
	}
	if sh.set != 201*100 || sh.back != 201*100 {
		t.Errorf("contexts set %d, back %d", sh.set, sh.back)
	}
}

// contextReceiver sets a context on each delivery (the receiver's end)
// and counts the contexts that come back (the sender's).
type contextReceiver struct {
	NopHandler
	r         *rec
	set, back int
}

func (h *contextReceiver) OnDelivery(l *Link, d Delivery) {
	if d.SetContext(h.r) == nil {
		h.set++
	}
}

func (h *contextReceiver) OnDisposition(l *Link, d DeliveryUpdate) {
	if d.Context == h.r {
		h.back++
	}
}

func TestTerminal(t *testing.T) {
	for st := frame.StateNone; st <= frame.StateOther+1; st++ {
		want := st == frame.StateAccepted || st == frame.StateRejected || st == frame.StateReleased || st == frame.StateModified
		if st.Terminal() != want {
			t.Errorf("%v.Terminal() = %v", st, st.Terminal())
		}
	}
}

func TestTryLater(t *testing.T) {
	for _, err := range []error{ErrNoCredit, ErrNoWindow, ErrBusy, ErrOutputFull} {
		if !errors.Is(err, ErrTryLater) {
			t.Errorf("%v does not match ErrTryLater", err)
		}
	}
	for _, err := range []error{ErrState, ErrSettleMode, ErrMessageSize, ErrTag, ErrLimit, ErrLinkName, ErrFrameSize} {
		if errors.Is(err, ErrTryLater) {
			t.Errorf("%v matches ErrTryLater", err)
		}
	}
	if errors.Is(ErrNoCredit, ErrNoWindow) || ErrBusy == ErrOutputFull {
		t.Error("the try-later errors are not distinct")
	}
	// What Send returns matches too.
	p, l := senderPair(t, true)
	p.s.Close(nil) // no matter: the credit is used up first
	l.credit = 0
	if _, err := l.Send(nil, []byte{0}, true); !errors.Is(err, ErrTryLater) || err != ErrNoCredit {
		t.Fatalf("Send without credit: %v", err)
	}
}

// resumePeer is a client sender that resumes the tags a, b, c (and not
// d, left out of its attach) against a receiver's answer written by
// hand: its unsettled map, and whether it was cut short.
func resumePeer(t *testing.T, peerMap map[string]frame.DeliveryState, incomplete bool) *Link {
	t.Helper()
	c := NewClient(Config{NoSASL: true}, nil)
	r := newRaw(t, c)
	b := frame.AppendProtocolHeader(nil, frame.HeaderAMQP)
	r.feed(perf(b, 0, openBody))
	s, err := c.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var resume []Unsettled
	for _, tag := range []string{"a", "b", "c"} {
		resume = append(resume, Unsettled{Tag: []byte(tag)})
	}
	l, err := s.AttachSender(LinkOptions{Name: "res", Address: "q", Resume: resume})
	if err != nil {
		t.Fatal(err)
	}
	if a := l.ResumeAction([]byte("a")); a != ResumeUnknown {
		t.Fatalf("before the peer's attach: %v", a)
	}
	r.feed(perf(nil, 0, func(b []byte) []byte {
		return frame.AppendBegin(b, frame.Begin{RemoteChannel: frame.Some[uint16](0), IncomingWindow: 100, OutgoingWindow: 100})
	}))
	m := encode.BeginMap(nil)
	n := 0
	for _, tag := range []string{"a", "b", "c", "d", "x"} {
		if st, ok := peerMap[tag]; ok {
			m = encode.AppendBinary(m, []byte(tag))
			m = frame.AppendDeliveryState(m, st)
			n++
		}
	}
	m = encode.EndMap(m, 0, n)
	r.feed(perf(nil, 0, func(b []byte) []byte {
		return frame.AppendAttach(b, frame.Attach{Name: []byte("res"), Handle: 0, Role: frame.RoleReceiver,
			Source: frame.Some(frame.Source{}), Target: frame.Some(frame.Target{Address: []byte("q")}),
			Unsettled: frame.Map(m), IncompleteUnsettled: incomplete})
	}))
	r.feed(perf(nil, 0, func(b []byte) []byte {
		return frame.AppendFlow(b, frame.Flow{NextIncomingID: frame.Some[uint32](0), IncomingWindow: 100, OutgoingWindow: 100,
			Handle: frame.Some[uint32](0), DeliveryCount: frame.Some[uint32](0), LinkCredit: frame.Some[uint32](10)})
	}))
	if r.err != nil || !l.attached() || l.Credit() != 10 {
		t.Fatalf("attach: %v", r.err)
	}
	return l
}

// Link.ResumeAction follows part 2 §2.6.13: terminal at the receiver,
// settle; held otherwise, resend; not held, new, unless the receiver's
// map was cut short (unknown); a tag this end's attach did not carry is
// unknown.
func TestResumeAction(t *testing.T) {
	peer := map[string]frame.DeliveryState{
		"a": {Type: frame.StateAccepted},
		"b": {Type: frame.StateReceived, SectionNumber: 1},
		"d": {Type: frame.StateModified},
	}
	for _, incomplete := range []bool{false, true} {
		l := resumePeer(t, peer, incomplete)
		want := map[string]ResumeAction{
			"a": ResumeSettle,  // receiver terminal (case C, F, I of the table)
			"b": ResumeResend,  // receiver non-terminal
			"c": ResumeNew,     // receiver does not have it
			"d": ResumeUnknown, // the receiver has it, this end's attach did not carry it
			"e": ResumeNew,     // neither end
		}
		if incomplete {
			want["c"], want["e"] = ResumeUnknown, ResumeUnknown
		}
		for tag, w := range want {
			if got := l.ResumeAction([]byte(tag)); got != w {
				t.Errorf("incomplete=%v, %s: %v, want %v", incomplete, tag, got, w)
			}
		}
		// Each action is one SendResume or Send can carry out.
		if _, err := l.SendResume([]byte("a"), nil, true); err != nil {
			t.Fatal(err)
		}
		if a := l.ResumeAction([]byte("a")); a != ResumeUnknown {
			t.Errorf("after SendResume: %v", a)
		}
		if _, err := l.SendResume([]byte("b"), []byte{0x00, 0x53, 0x77, 0x40}, false); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Send([]byte("c"), []byte{0x00, 0x53, 0x77, 0x40}, false); err != nil {
			t.Fatal(err)
		}
	}
	// A receiver has no resume action.
	if got := (&Link{}).ResumeAction([]byte("a")); got != ResumeUnknown {
		t.Errorf("receiver: %v", got)
	}
	if ResumeSettle.String() != "settle" || ResumeAction(9).String() != "ResumeAction(9)" {
		t.Error(ResumeSettle.String(), ResumeAction(9).String())
	}
}

func TestCreditorGrant(t *testing.T) {
	cases := []struct {
		k            Creditor
		credit, held uint32
		want         uint32
	}{
		{Creditor{Credit: 10}, 10, 0, 0},
		{Creditor{Credit: 10}, 6, 0, 0},
		{Creditor{Credit: 10}, 5, 0, 10}, // half used: top up
		{Creditor{Credit: 10}, 0, 0, 10},
		{Creditor{Credit: 10}, 2, 4, 6}, // what the application holds counts
		{Creditor{Credit: 10}, 5, 6, 0}, // less wanted than outstanding
		{Creditor{Credit: 10}, 4, 5, 0}, // a grant of less than a quarter more: wait
		{Creditor{Credit: 10}, 4, 3, 7}, // a quarter more
		{Creditor{Credit: 256}, 127, 128, 0},
		{Creditor{Credit: 256}, 100, 92, 164},
		{Creditor{Credit: 10}, 0, 10, 0}, // all held
		{Creditor{Credit: 1}, 0, 0, 1},
		{Creditor{}, 0, 0, 0},
		{Creditor{Credit: 10, WhenDrained: true}, 1, 0, 0}, // not drained
		{Creditor{Credit: 10, WhenDrained: true}, 0, 0, 10},
		{Creditor{Credit: 10, WhenDrained: true}, 0, 5, 5}, // half wanted
		{Creditor{Credit: 10, WhenDrained: true}, 0, 6, 0}, // less than half: wait
		{Creditor{Credit: 5, WhenDrained: true}, 0, 2, 3},
		{Creditor{Credit: 1, WhenDrained: true}, 0, 0, 1},
	}
	for _, tc := range cases {
		if got := tc.k.Grant(tc.credit, tc.held); got != tc.want {
			t.Errorf("%+v.Grant(%d, %d) = %d, want %d", tc.k, tc.credit, tc.held, got, tc.want)
		}
	}
}

// A receiver granting only when drained sends no flow while credit is
// outstanding, and the engine keeps that policy after each delivery.
func TestCreditorWhenDrained(t *testing.T) {
	srv := &recorder{}
	var snd *Link
	srv.onAtt = func(l *Link) { snd = l }
	cli := &recorder{}
	var rcv *Link
	cli.onOpen = func(c *Conn) {
		s, _ := c.Begin()
		rcv, _ = s.AttachReceiver(LinkOptions{Name: "r", Address: "q"})
	}
	p := newPipe(t, Config{NoSASL: true}, Config{NoSASL: true}, cli, srv)
	p.run()
	if err := rcv.SetCreditor(Creditor{Credit: 4, WhenDrained: true}); err != nil {
		t.Fatal(err)
	}
	p.run()
	if snd.Credit() != 4 || rcv.Creditor() != (Creditor{Credit: 4, WhenDrained: true}) {
		t.Fatalf("credit %d, %+v", snd.Credit(), rcv.Creditor())
	}
	flows := 0
	cli.onFlow = func(*Link) {}
	srv.onFlow = func(*Link) { flows++ }
	for i := range 3 {
		snd.Send(nil, []byte{0x00, 0x53, 0x77, 0x40}, true)
		p.run()
		if flows != 0 || snd.Credit() != uint32(3-i) {
			t.Fatalf("after %d: %d flows, credit %d", i+1, flows, snd.Credit())
		}
	}
	snd.Send(nil, []byte{0x00, 0x53, 0x77, 0x40}, true)
	p.run()
	if flows != 1 || snd.Credit() != 4 {
		t.Fatalf("drained: %d flows, credit %d", flows, snd.Credit())
	}
	// KeepCredit is the half policy.
	rcv.KeepCredit(4)
	if rcv.Creditor() != (Creditor{Credit: 4}) {
		t.Fatalf("%+v", rcv.Creditor())
	}
	for range 2 {
		snd.Send(nil, []byte{0x00, 0x53, 0x77, 0x40}, true)
	}
	p.run()
	if flows != 2 || snd.Credit() != 4 {
		t.Fatalf("half: %d flows, credit %d", flows, snd.Credit())
	}
}

// The events of a handshake that attaches l0, as TestViolations makes it.
func faultServer(t *testing.T) (*raw, *recorder, *Conn) {
	t.Helper()
	h := &recorder{}
	c := NewServer(Config{}, h)
	r := newRaw(t, c)
	r.feed(handshake())
	if r.err != nil {
		t.Fatal(r.err)
	}
	r.frames()
	h.log = nil
	return r, h, c
}

// A link this end detaches for a fault of the peer is reported in the
// Feed that found the fault, with its error: a peer that never answers
// leaves nothing waiting. Its handle stays mapped until the answer, its
// frames ignored, and the answer reports nothing more.
func TestLinkFaultReportedAtOnce(t *testing.T) {
	r, h, c := faultServer(t)
	var l *Link
	h.onAtt = nil
	r.feed(perf(nil, 0, transferBody(0, 0, []byte("x")))) // no credit
	want := []string{"detach l0 engine: amqp:link:transfer-limit-exceeded: transfer without link credit"}
	if strings.Join(h.log, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events %q", h.log)
	}
	s := c.byLocal[0]
	l = s.byRemote[0]
	if l == nil || l.Err() == nil || l.Err().Condition != frame.CondTransferLimitExceeded || l.Err().Remote {
		t.Fatalf("link %v", l)
	}
	if err := l.Flow(1); !errors.Is(err, ErrState) {
		t.Fatalf("Flow after the fault: %v", err)
	}
	// Its frames are ignored; the peer's detach ends the exchange quietly.
	r.feed(perf(nil, 0, transferBody(0, 1, []byte("y"))))
	r.feed(perf(nil, 0, func(b []byte) []byte { return frame.AppendDetach(b, frame.Detach{Handle: 0, Closed: true}) }))
	if len(h.log) != 1 || r.err != nil || c.Err() != nil {
		t.Fatalf("events %q, %v", h.log, r.err)
	}
	if s.byRemote[0] != nil {
		t.Fatal("handle still mapped after the answer")
	}
}

// A session this end ends for a fault of the peer is reported at once:
// its links' OnLinkDetach with the session's error, then OnSessionEnd.
func TestSessionFaultReportedAtOnce(t *testing.T) {
	r, h, c := faultServer(t)
	r.feed(perf(nil, 0, func(b []byte) []byte {
		return frame.AppendFlow(b, frame.Flow{NextIncomingID: frame.Some[uint32](0), IncomingWindow: 1, OutgoingWindow: 1,
			Handle: frame.Some[uint32](7), DeliveryCount: frame.Some[uint32](0), LinkCredit: frame.Some[uint32](1)})
	}))
	e := "engine: amqp:session:unattached-handle: handle 7 is not attached"
	want := []string{"detach l0 " + e, "end 0 " + e}
	if strings.Join(h.log, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events %q", h.log)
	}
	if ps := r.performatives(); len(ps) != 1 || ps[0].desc != amqpsax.DescriptorEnd {
		t.Fatalf("wrote %+v", ps) // the end alone: the link went with it
	}
	s := c.byLocal[0]
	if s == nil || c.byRemote[0] != s {
		t.Fatal("channel unmapped before the answer")
	}
	if _, err := s.AttachSender(LinkOptions{}); !errors.Is(err, ErrState) {
		t.Fatalf("attach on the failed session: %v", err)
	}
	// Frames of the session are ignored until the peer's end; then the
	// channel is free again, and nothing more is reported.
	r.feed(perf(nil, 0, attachSender(1, "late")))
	r.feed(perf(nil, 0, func(b []byte) []byte { return frame.AppendEnd(b, frame.End{}) }))
	if len(h.log) != 2 || r.err != nil || c.Err() != nil || c.byRemote[0] != nil {
		t.Fatalf("events %q, %v, %v", h.log, r.err, c.Err())
	}
	r.feed(perf(nil, 0, beginBody))
	if h.log[len(h.log)-1] != "begin 0" {
		t.Fatalf("events %q", h.log)
	}
}

// A connection this end closes for a fault of the peer is over in the
// same Feed: every event, with the error, and Done once the close is
// written; the peer's answer is not awaited.
func TestConnFaultReportedAtOnce(t *testing.T) {
	r, h, c := faultServer(t)
	r.feed(perf(nil, 0, openBody)) // a second open
	e := "engine: amqp:illegal-state: second open"
	want := []string{"detach l0 " + e, "end 0 " + e, "close " + e}
	if strings.Join(h.log, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events %q", h.log)
	}
	if !c.Done() || !c.Closed() {
		t.Fatal("not done")
	}
}

// This end's own detach, end and close are reported at the peer's
// answer, as before: the application asked, and hears the peer's word.
func TestOwnEndReportedAtAnswer(t *testing.T) {
	cli := &recorder{}
	ch := &attachOnOpen{opts: LinkOptions{Name: "own", Address: "q"}}
	p := newPipe(t, Config{NoSASL: true}, Config{NoSASL: true}, &tee{recorder: cli, att: ch}, &recorder{})
	p.run()
	l := ch.link
	cli.log = nil
	l.Detach(nil)
	l.Session().End(nil)
	if len(cli.log) != 0 {
		t.Fatalf("reported before the answer: %q", cli.log)
	}
	p.run()
	if strings.Join(cli.log, "\n") != "detach own <nil>\nend 0 <nil>" {
		t.Fatalf("events %q", cli.log)
	}
}
