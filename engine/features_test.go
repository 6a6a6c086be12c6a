package engine

import (
	"bytes"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/frame"
)

func has(log []string, s string) bool {
	for _, l := range log {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// openPair returns a pipe whose client has begun a session and attached
// a sender with opts; the server's handler is srv.
func openPair(t *testing.T, ccfg, scfg Config, opts LinkOptions, srv *recorder) (*pipe, *recorder, *Link) {
	cli := &recorder{}
	var l *Link
	cli.onOpen = func(c *Conn) {
		s, err := c.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if l, err = s.AttachSender(opts); err != nil {
			t.Fatal(err)
		}
	}
	p := newPipe(t, ccfg, scfg, cli, srv)
	p.run()
	if l == nil || !l.attached() {
		t.Fatalf("not attached: %v / %v", cli.log, srv.log)
	}
	return p, cli, l
}

func TestOpenNegotiation(t *testing.T) {
	srv := &recorder{}
	p, _, _ := openPair(t, Config{MaxFrameSize: 1024, ChannelMax: 7, IdleTimeout: 10 * time.Second, ContainerID: "cli", Hostname: "h"},
		Config{ContainerID: "srv"}, LinkOptions{}, srv)
	if p.s.RemoteMaxFrameSize() != 1024 || p.s.RemoteIdleTimeout() != 10*time.Second || p.s.remoteChannelMax != 7 {
		t.Fatal(p.s.RemoteMaxFrameSize(), p.s.RemoteIdleTimeout(), p.s.remoteChannelMax)
	}
	if p.s.RemoteContainerID() != "cli" || p.s.RemoteHostname() != "h" || p.c.RemoteContainerID() != "srv" {
		t.Fatal(p.s.RemoteContainerID(), p.c.RemoteContainerID())
	}
	if p.c.RemoteMaxFrameSize() != DefaultMaxFrameSize || p.c.RemoteIdleTimeout() != 0 || p.c.remoteChannelMax != DefaultChannelMax {
		t.Fatal(p.c.RemoteMaxFrameSize(), p.c.remoteChannelMax)
	}
	if p.s.Identity() != "anonymous" {
		t.Fatal(p.s.Identity())
	}
}

func TestHeartbeatsAndIdleTimeout(t *testing.T) {
	srv := &recorder{}
	p, cli, _ := openPair(t, Config{IdleTimeout: 10 * time.Second}, Config{}, LinkOptions{}, srv)
	// The server owes a heartbeat every 5 s of silence.
	if next := p.s.Tick(p.now); !next.Equal(p.now.Add(5 * time.Second)) {
		t.Fatalf("server next tick %v, want +5s", next.Sub(p.now))
	}
	for range 30 { // a minute, in 2 s steps: heartbeats keep the client's time-out at bay
		p.advance(2 * time.Second)
		p.run()
	}
	if p.c.Closed() || p.s.Closed() {
		t.Fatalf("closed: %v %v", cli.log, srv.log)
	}
	for range 5 {
		if len(p.s.Output()) > 0 {
			break
		}
		p.advance(time.Second)
	}
	if out := p.s.Output(); !bytes.Equal(out, []byte{0, 0, 0, 8, 2, 0, 0, 0}) {
		t.Fatalf("heartbeat % x", out)
	}
	// Now the server goes silent: the client closes after 10 s.
	p.s.Written(len(p.s.Output()))
	p.now = p.now.Add(11 * time.Second)
	p.c.Tick(p.now)
	p.run()
	if e := p.c.Err(); e == nil || e.Condition != frame.CondResourceLimitExceeded {
		t.Fatalf("client err %v", e)
	}
	if e := p.s.Err(); e == nil || !e.Remote || e.Condition != frame.CondResourceLimitExceeded {
		t.Fatalf("server err %v", e)
	}
	if !p.c.Done() || !p.s.Done() {
		t.Fatal("not done")
	}
}

func TestCloseWithError(t *testing.T) {
	for _, fromClient := range []bool{true, false} {
		srv := &recorder{}
		p, cli, _ := openPair(t, Config{}, Config{}, LinkOptions{}, srv)
		a, b := p.c, p.s
		bl := srv
		if !fromClient {
			a, b, bl = p.s, p.c, cli
		}
		if err := a.Close(NewError(frame.CondConnectionForced, "bye")); err != nil {
			t.Fatal(err)
		}
		p.run()
		if e := b.Err(); e == nil || !e.Remote || e.Name() != "amqp:connection:forced" || e.Description != "bye" {
			t.Fatalf("peer saw %v", e)
		}
		if e := a.Err(); e == nil || e.Remote {
			t.Fatalf("closer has %v", e)
		}
		// the links and the session end before the connection
		n := len(bl.log)
		if !strings.HasPrefix(bl.log[n-3], "detach") || !strings.HasPrefix(bl.log[n-2], "end") || !strings.HasPrefix(bl.log[n-1], "close") {
			t.Fatal(bl.log)
		}
		if !p.c.Done() || !p.s.Done() {
			t.Fatal("not done")
		}
	}
}

// The server begins a session and attaches a sender to the client: both
// roles from both sides.
func TestServerInitiated(t *testing.T) {
	srv := &recorder{}
	cli := &recorder{}
	var sl *Link
	srv.onOpen = func(c *Conn) {
		s, _ := c.Begin()
		sl, _ = s.AttachSender(LinkOptions{Name: "push", Address: "client-q"})
	}
	cli.onAtt = func(l *Link) {
		if l.IsSender() || string(l.Address()) != "client-q" {
			t.Errorf("client link sender=%v address %q", l.IsSender(), l.Address())
		}
		l.Flow(2)
	}
	srv.onFlow = func(l *Link) {
		for l.Credit() > 0 {
			l.Send([]byte("tag"), []byte("hello"), false)
		}
	}
	cli.onDel = func(l *Link, d Delivery) {
		if string(d.DeliveryTag) != "tag" {
			t.Errorf("tag %q", d.DeliveryTag)
		}
		d.Accept()
	}
	p := newPipe(t, Config{}, Config{}, cli, srv)
	p.run()
	if len(cli.got) != 2 || !has(srv.log, "disposition 1 accepted settled=true") {
		t.Fatal(cli.log, srv.log)
	}
	// End the session with an error from the client.
	p.c.byLocal[0].End(NewError(frame.CondInternalError, "oops"))
	p.run()
	if !has(srv.log, "end 0 engine: amqp:internal-error (remote): oops") || !has(srv.log, "detach push") || sl.attached() {
		t.Fatal(srv.log)
	}
	if !has(cli.log, "end 0 engine: amqp:internal-error: oops") {
		t.Fatal(cli.log)
	}
}

func TestDetachClosedOrNot(t *testing.T) {
	srv := &recorder{}
	var remote *Link
	srv.onAtt = func(l *Link) { remote = l }
	p, cli, l := openPair(t, Config{}, Config{}, LinkOptions{Name: "d"}, srv)
	l.DetachOnly(NewError(frame.CondDetachForced, "later"))
	p.run()
	if remote.RemoteClosed() || !has(srv.log, "detach d engine: amqp:link:detach-forced (remote): later") || !has(cli.log, "detach d") {
		t.Fatal(srv.log, cli.log)
	}
	// attach again on the same session, closed this time
	s := l.Session()
	l2, err := s.AttachSender(LinkOptions{Name: "d"})
	if err != nil {
		t.Fatal(err)
	}
	p.run()
	if l2.Handle() != 0 {
		t.Fatalf("handle %d not reused", l2.Handle())
	}
	l2.Detach(nil)
	p.run()
	if !remote.RemoteClosed() {
		t.Fatal("not closed")
	}
}

// The server refuses a link in OnLinkAttach.
func TestRefuseLink(t *testing.T) {
	srv := &recorder{}
	srv.onAtt = func(l *Link) { l.Detach(NewError(frame.CondNotFound, "no such node")) }
	cli := &recorder{}
	cli.onOpen = func(c *Conn) {
		s, _ := c.Begin()
		s.AttachReceiver(LinkOptions{Name: "r", Address: "nowhere"})
	}
	p := newPipe(t, Config{}, Config{}, cli, srv)
	p.run()
	if !has(cli.log, "detach r engine: amqp:not-found (remote): no such node") {
		t.Fatal(cli.log)
	}
}

func TestSourceTargetAndModes(t *testing.T) {
	srv := &recorder{}
	var remote *Link
	srv.onAtt = func(l *Link) { remote = l }
	src := frame.Source{Address: []byte("from"), Durable: frame.DurabilityConfiguration, DistributionMode: []byte("copy")}
	_, _, l := openPair(t, Config{}, Config{}, LinkOptions{Name: "m", Source: &src, Address: "to", Presettled: true, RcvSecond: true}, srv)
	if string(remote.RemoteSource().Address) != "from" || string(remote.RemoteSource().DistributionMode) != "copy" ||
		remote.RemoteSource().Durable != frame.DurabilityConfiguration || string(remote.RemoteTarget().Address) != "to" {
		t.Fatalf("%+v %+v", remote.RemoteSource(), remote.RemoteTarget())
	}
	if remote.SndSettleMode() != frame.SndSettled || remote.RcvSettleMode() != frame.RcvSecond || l.SndSettleMode() != frame.SndSettled {
		t.Fatal(remote.SndSettleMode(), remote.RcvSettleMode())
	}
	if string(l.RemoteTarget().Address) != "to" { // the server's answer mirrors the terminus
		t.Fatalf("%q", l.RemoteTarget().Address)
	}
}

func TestSettleModeChecked(t *testing.T) {
	for _, presettled := range []bool{true, false} {
		srv := &recorder{}
		_, _, l := openPair(t, Config{}, Config{Credit: 10}, LinkOptions{Presettled: presettled, Unsettled: !presettled}, srv)
		if _, err := l.Send(nil, []byte("x"), !presettled); err != ErrSettleMode {
			t.Fatalf("presettled=%v: %v", presettled, err)
		}
		if _, err := l.Send(nil, []byte("x"), presettled); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCreditDrainEchoAvailable(t *testing.T) {
	srv := &recorder{}
	var rl *Link
	srv.onAtt = func(l *Link) { rl = l }
	p, cli, sl := openPair(t, Config{}, Config{}, LinkOptions{Name: "c"}, srv)
	rl.Flow(5)
	p.run()
	if sl.Credit() != 5 || !has(cli.log, "flow c credit=5") {
		t.Fatal(sl.Credit(), cli.log)
	}
	sl.Send(nil, []byte("1"), true)
	sl.Send(nil, []byte("2"), true)
	sl.SetAvailable(7, true)
	p.run()
	if rl.Credit() != 3 || rl.DeliveryCount() != 2 || rl.Available() != 7 {
		t.Fatal(rl.Credit(), rl.DeliveryCount(), rl.Available())
	}
	// Drain: the sender has nothing more; the engine gives the credit back.
	rl.DrainCredit()
	p.run()
	if sl.Credit() != 0 || sl.DeliveryCount() != 5 || rl.Credit() != 0 || rl.DeliveryCount() != 5 {
		t.Fatal(sl.Credit(), sl.DeliveryCount(), rl.Credit(), rl.DeliveryCount())
	}
	// Credit can be granted again after a drain.
	rl.Flow(1)
	p.run()
	if sl.Credit() != 1 || sl.Drain() {
		t.Fatal(sl.Credit(), sl.Drain())
	}
	// Echo: a flow with echo set is answered with the link's state.
	before := p.bytesC
	start := len(p.s.out)
	p.s.out = frame.BeginFrame(p.s.out, frame.TypeAMQP, 0)
	p.s.out = frame.AppendFlow(p.s.out, frame.Flow{NextIncomingID: frame.Some(rl.s.nextIncomingID), IncomingWindow: 10,
		NextOutgoingID: rl.s.nextOutgoingID, OutgoingWindow: 10, Handle: frame.Some(rl.local), DeliveryCount: frame.Some(rl.deliveryCount),
		LinkCredit: frame.Some(rl.credit), Echo: true})
	p.s.out = frame.EndFrame(p.s.out, start)
	p.run()
	if p.bytesC == before {
		t.Fatal("no answer to echo")
	}
}

func TestLargeMessagesAndWindow(t *testing.T) {
	srv := &recorder{}
	var frames []int
	srv.onDel = func(l *Link, d Delivery) { frames = append(frames, d.Frames) }
	p, _, l := openPair(t, Config{}, Config{MaxFrameSize: 512, Window: 4, Credit: 10}, LinkOptions{}, srv)
	msg := make([]byte, 100_000)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	if _, err := l.Send([]byte("big"), msg, true); err != nil {
		t.Fatal(err)
	}
	if !l.pend.on {
		t.Fatal("window did not hold the message back")
	}
	if _, err := l.Send(nil, []byte("x"), true); err != ErrBusy {
		t.Fatal(err)
	}
	p.run()
	if l.pend.on || len(srv.got) != 1 || !bytes.Equal(srv.got[0], msg) || frames[0] < 200 {
		t.Fatalf("pending %v, got %d, frames %v", l.pend.on, len(srv.got), frames)
	}
	// every frame the client wrote fits 512 bytes
	if inc, rem := l.Session().Window(); rem == 0 || inc == 0 {
		t.Fatal(inc, rem)
	}
}

func TestAbort(t *testing.T) {
	srv := &recorder{}
	var aborted []bool
	srv.onDel = func(l *Link, d Delivery) { aborted = append(aborted, d.Aborted) }
	p, _, l := openPair(t, Config{}, Config{MaxFrameSize: 512, Window: 4, Credit: 10}, LinkOptions{}, srv)
	if _, err := l.Send(nil, make([]byte, 10_000), true); err != nil {
		t.Fatal(err)
	}
	if err := l.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Send(nil, []byte("after"), true); err != ErrBusy {
		t.Fatal(err)
	}
	p.run()
	if _, err := l.Send(nil, []byte("after"), true); err != nil {
		t.Fatal(err)
	}
	p.run()
	if len(aborted) != 2 || !aborted[0] || aborted[1] || string(srv.got[1]) != "after" {
		t.Fatal(aborted, srv.log)
	}
}

// TestAbortUnsettled: an aborted delivery sent unsettled is settled by
// the abort (part 2 §2.7.5: "an aborted message is implicitly settled"),
// so it leaves the sender's unsettled deliveries; and its aborted
// transfer has more false ("a sender SHOULD NOT set the more flag to true
// if it also sets the aborted flag to true"), which rhea, for one, reads
// as "more of the same delivery to come".
func TestAbortUnsettled(t *testing.T) {
	srv := &recorder{}
	p, _, l := openPair(t, Config{}, Config{MaxFrameSize: 512, Window: 4, Credit: 10}, LinkOptions{}, srv)
	if _, err := l.Send(nil, make([]byte, 10_000), false); err != nil {
		t.Fatal(err)
	}
	if err := l.Abort(); err != nil {
		t.Fatal(err)
	}
	if n := l.Session().Unsettled(); n != 1 {
		t.Fatalf("%d unsettled before the abort went out", n)
	}
	// Let the server's flow through, then read the abort the client writes.
	var abort *frame.Transfer
	for range 100 {
		out := append([]byte(nil), p.c.Output()...)
		p.c.Written(len(out))
		for rest := out; len(rest) > 0; {
			fr, n, err := frame.Split(rest, 0)
			if err != nil || n == 0 {
				break
			}
			rest = rest[n:]
			if tr, _, err := frame.ParseTransfer(fr.Body); err == nil && tr.Aborted {
				abort = &tr
			}
		}
		if err := p.s.Feed(out, p.now); err != nil {
			t.Fatal(err)
		}
		so := append([]byte(nil), p.s.Output()...)
		p.s.Written(len(so))
		if len(so) == 0 && len(out) == 0 {
			break
		}
		if err := p.c.Feed(so, p.now); err != nil {
			t.Fatal(err)
		}
	}
	if abort == nil {
		t.Fatal("no aborted transfer written")
	}
	if abort.More {
		t.Error("the aborted transfer has more set")
	}
	if n := l.Session().Unsettled(); n != 0 {
		t.Errorf("%d unsettled after the abort: the aborted delivery was not settled", n)
	}
	if _, err := l.Send(nil, []byte("after"), false); err != nil {
		t.Fatal(err)
	}
	p.run()
	if len(srv.got) != 2 || string(srv.got[1]) != "after" {
		t.Fatal(srv.log)
	}
}

func TestOutcomes(t *testing.T) {
	srv := &recorder{}
	i := 0
	srv.onDel = func(l *Link, d Delivery) {
		switch i {
		case 0:
			d.Reject(NewError(frame.CondDecodeError, "bad body"))
		case 1:
			d.Release()
		case 2:
			d.Modify(true, true)
		case 3:
			d.Accept()
		}
		i++
	}
	var states []frame.DeliveryState
	p, cli, l := openPair(t, Config{}, Config{Credit: 10}, LinkOptions{Unsettled: true}, srv)
	cli.onDisp = func(l *Link, d DeliveryUpdate) {
		st := d.State
		st.Error.Condition = append([]byte(nil), st.Error.Condition...)
		st.Error.Description = append([]byte(nil), st.Error.Description...)
		states = append(states, st)
	}
	for range 4 {
		l.Send(nil, []byte("m"), false)
	}
	p.run()
	if len(states) != 4 || states[0].Type != frame.StateRejected || string(states[0].Error.Condition) != "amqp:decode-error" ||
		string(states[0].Error.Description) != "bad body" || states[1].Type != frame.StateReleased ||
		states[2].Type != frame.StateModified || !states[2].DeliveryFailed || !states[2].UndeliverableHere ||
		states[3].Type != frame.StateAccepted {
		t.Fatalf("%+v", states)
	}
	if l.Session().Unsettled() != 0 {
		t.Fatal("unsettled left")
	}
}

// Dispositions of consecutive deliveries go out as one range.
func TestDispositionRanges(t *testing.T) {
	srv := &recorder{}
	p, cli, l := openPair(t, Config{}, Config{Credit: 100, AutoAccept: true}, LinkOptions{Unsettled: true}, srv)
	for range 50 {
		l.Send(nil, []byte("m"), false)
	}
	co := append([]byte(nil), p.c.Output()...)
	p.c.Written(len(co))
	p.s.Feed(co, p.now)
	r := newRaw(t, p.s)
	r.in = append(r.in, p.s.Output()...)
	n := 0
	for _, s := range r.performatives() {
		if s.desc == 0x15 {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d dispositions for 50 accepted deliveries", n)
	}
	p.c.Feed(p.s.Output(), p.now)
	p.s.Written(len(p.s.Output()))
	if l.Session().Unsettled() != 0 || len(cli.log) < 50 {
		t.Fatal(l.Session().Unsettled())
	}
}

// Receiver settle mode second: the receiver's outcome goes unsettled, the
// sender settles, then the receiver learns it.
func TestRcvSecond(t *testing.T) {
	srv := &recorder{}
	srv.onDel = func(l *Link, d Delivery) { d.Accept() }
	p, cli, l := openPair(t, Config{}, Config{Credit: 10}, LinkOptions{Unsettled: true, RcvSecond: true}, srv)
	l.Send(nil, []byte("m"), false)
	p.run()
	if !has(cli.log, "disposition 0 accepted settled=false") || !has(srv.log, "disposition 0 none settled=true") {
		t.Fatal(cli.log, srv.log)
	}
	if l.Session().Unsettled() != 0 || p.s.byLocal[0].incoming.n != 0 {
		t.Fatal("left unsettled")
	}
}

// The sender settles first (before any outcome): the receiver is told.
func TestSenderSettlesFirst(t *testing.T) {
	srv := &recorder{}
	p, _, l := openPair(t, Config{}, Config{Credit: 10}, LinkOptions{Unsettled: true}, srv)
	id, _ := l.Send(nil, []byte("m"), false)
	p.run()
	l.Settle(id)
	p.run()
	if !has(srv.log, "disposition 0 none settled=true") || p.s.byLocal[0].incoming.n != 0 || l.Session().Unsettled() != 0 {
		t.Fatal(srv.log)
	}
}

func TestManualSettle(t *testing.T) {
	srv := &recorder{}
	srv.onDel = func(l *Link, d Delivery) { d.Link.Dispose(d.DeliveryID, Accepted, false) }
	p, _, l := openPair(t, Config{ManualSettle: true}, Config{Credit: 10}, LinkOptions{Unsettled: true}, srv)
	id, _ := l.Send(nil, []byte("m"), false)
	p.run()
	if l.Session().Unsettled() != 1 {
		t.Fatal("settled without the application")
	}
	l.Settle(id)
	p.run()
	if l.Session().Unsettled() != 0 || !has(srv.log, "disposition 0 none settled=true") {
		t.Fatal(srv.log)
	}
}

func TestBackPressure(t *testing.T) {
	srv := &recorder{}
	writable := 0
	p, cli, l := openPair(t, Config{MaxOutput: 4096}, Config{Credit: 1000, Window: 5000}, LinkOptions{}, srv)
	p.c.h = writableH{recorder: cli, n: &writable}
	sent := 0
	var err error
	for ; sent < 1000; sent++ {
		if _, err = l.Send(nil, make([]byte, 100), true); err != nil {
			break
		}
	}
	if err != ErrOutputFull || p.c.WantRead() || len(p.c.Output()) > 4096+200 {
		t.Fatalf("after %d sends: %v, want-read %v, %d buffered", sent, err, p.c.WantRead(), len(p.c.Output()))
	}
	p.run()
	if writable != 1 || !p.c.WantRead() {
		t.Fatal(writable)
	}
}

type writableH struct {
	*recorder
	n *int
}

func (w writableH) OnWritable(*Conn) { *w.n++ }

func TestSASL(t *testing.T) {
	check := func(u, p string) bool { return u == "user" && p == "secret" }
	cases := []struct {
		name string
		ccfg Config
		scfg Config
		ok   bool
		id   string
	}{
		{"anonymous", Config{}, Config{}, true, "anonymous"},
		{"no sasl", Config{NoSASL: true}, Config{}, true, ""},
		{"no sasl refused", Config{NoSASL: true}, Config{Auth: Plain(check, true)}, false, ""},
		{"plain", Config{Username: "user", Password: "secret"}, Config{Auth: Plain(check, false)}, true, "user"},
		{"plain wrong password", Config{Username: "user", Password: "nope"}, Config{Auth: Plain(check, false)}, false, ""},
		{"anonymous refused", Config{}, Config{Auth: Plain(check, false)}, false, ""},
		{"external", Config{Mechanism: "EXTERNAL"}, Config{PeerCertificates: []*x509.Certificate{{Subject: pkix.Name{CommonName: "cn"}}}}, true, "cn"},
		{"external without cert", Config{Mechanism: "EXTERNAL"}, Config{}, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cli, srv := &recorder{}, &recorder{}
			p := newPipe(t, tc.ccfg, tc.scfg, cli, srv)
			p.run()
			if p.c.Done() && !p.s.Done() {
				p.s.CloseRead() // the driver closes the socket
			}
			opened := has(cli.log, "open") && has(srv.log, "open")
			if opened != tc.ok || p.s.Identity() != tc.id {
				t.Fatalf("opened %v identity %q: %v %v", opened, p.s.Identity(), cli.log, srv.log)
			}
			if !tc.ok && (!p.c.Done() || !p.s.Done() || p.c.Err() == nil) {
				t.Fatalf("refusal: done %v %v err %v", p.c.Done(), p.s.Done(), p.c.Err())
			}
		})
	}
}

func TestLimits(t *testing.T) {
	// handle-max of the peer bounds this end's attaches
	srv := &recorder{}
	p, _, l := openPair(t, Config{}, Config{HandleMax: 1}, LinkOptions{}, srv)
	s := l.Session()
	if _, err := s.AttachSender(LinkOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AttachSender(LinkOptions{}); !errors.Is(err, ErrLimit) {
		t.Fatal(err)
	}
	p.run()
	// channel-max of the peer bounds Begin
	p2, _, _ := openPair(t, Config{}, Config{ChannelMax: 1}, LinkOptions{}, &recorder{})
	if _, err := p2.c.Begin(); err != nil {
		t.Fatal(err)
	}
	if _, err := p2.c.Begin(); !errors.Is(err, ErrLimit) {
		t.Fatal(err)
	}
}

// A close the peer never answers ends after CloseWait.
func TestCloseWait(t *testing.T) {
	srv := &recorder{}
	p, cli, _ := openPair(t, Config{}, Config{}, LinkOptions{}, srv)
	p.c.Close(nil)
	p.c.Written(len(p.c.Output())) // lost: the server never sees it
	if next := p.c.Tick(p.now); !next.Equal(p.now.Add(CloseWait)) {
		t.Fatal(next.Sub(p.now))
	}
	p.c.Tick(p.now.Add(CloseWait))
	if !p.c.Done() || !has(cli.log, "close") {
		t.Fatal(cli.log)
	}
}

// A peer that connects and says nothing is cut off by the handshake
// time-out; one that sends its header and no open gets a close.
func TestHandshakeTimeout(t *testing.T) {
	c := NewServer(Config{HandshakeTimeout: time.Second}, nil)
	r := newRaw(t, c)
	if next := c.Tick(r.now); !next.Equal(r.now.Add(time.Second)) {
		t.Fatal(next.Sub(r.now))
	}
	c.Tick(r.now.Add(time.Second))
	if !c.Done() || c.Err().Condition != frame.CondResourceLimitExceeded {
		t.Fatal(c.Err())
	}
	c = NewServer(Config{HandshakeTimeout: time.Second}, nil)
	r = newRaw(t, c)
	r.feed(frame.AppendProtocolHeader(nil, frame.HeaderAMQP))
	r.now = r.now.Add(2 * time.Second)
	c.Tick(r.now)
	r.in = append(r.in, c.Output()...)
	ps := r.performatives()
	if len(ps) != 2 || ps[1].cond != "amqp:resource-limit-exceeded" || !c.Closed() {
		t.Fatalf("%+v", ps)
	}
}

// TestAttachBeforeBeginAnswer: links attached in the same turn as the
// session's begin, before the peer's answer, each get a handle (the
// peer's handle-max is the spec's default until its begin says
// otherwise) and all attach; the second used to fail with ErrLimit.
func TestAttachBeforeBeginAnswer(t *testing.T) {
	cli := &recorder{}
	var links []*Link
	cli.onOpen = func(c *Conn) {
		s, err := c.Begin()
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			l, err := s.AttachSender(LinkOptions{Name: "early-" + string(rune('a'+i)), Address: "q"})
			if err != nil {
				t.Fatalf("attach %d before the begin's answer: %v", i, err)
			}
			links = append(links, l)
		}
	}
	p := newPipe(t, Config{}, Config{Credit: 10}, cli, &recorder{})
	p.run()
	if len(links) != 3 {
		t.Fatalf("%d links", len(links))
	}
	for i, l := range links {
		if !l.attached() || l.Handle() != uint32(i) {
			t.Errorf("link %d: attached %v, handle %d", i, l.attached(), l.Handle())
		}
	}
}
