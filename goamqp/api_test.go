package amqp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/amqptest"
	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/frame"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// pair dials srv and opens a sender and a receiver on queue q.
func pair(t *testing.T, url, q string, ro *ReceiverOptions) (*Conn, *Sender, *Receiver) {
	t.Helper()
	ctx := testCtx(t)
	c, err := Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	snd, err := s.NewSender(ctx, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	rcv, err := s.NewReceiver(ctx, q, ro)
	if err != nil {
		t.Fatal(err)
	}
	return c, snd, rcv
}

func TestSendReceive(t *testing.T) {
	srv := amqptest.NewServer(t, nil)
	ctx := testCtx(t)
	_, snd, rcv := pair(t, srv.URL, "q", nil)
	if snd.LinkName() == "" || rcv.LinkName() == "" || snd.LinkName() == rcv.LinkName() {
		t.Errorf("link names %q, %q", snd.LinkName(), rcv.LinkName())
	}
	if snd.Address() != "q" || rcv.Address() != "q" {
		t.Errorf("addresses %q, %q", snd.Address(), rcv.Address())
	}
	want := sample()
	if err := snd.Send(ctx, want, nil); err != nil {
		t.Fatal(err)
	}
	got, err := rcv.Receive(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	wb, _ := want.MarshalBinary()
	got.DeliveryTag, got.Format = nil, 0
	gb, err := got.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// The broker may add to the header (delivery-count) but not to the bare message.
	if !strings.Contains(string(gb), string(wb[len(wb)-60:])) {
		t.Errorf("received\n %x\nsent\n %x", gb, wb)
	}
	if string(got.Data[0]) != "one" || *got.Properties.To != "q" {
		t.Errorf("received %+v", got)
	}
	if err := rcv.AcceptMessage(ctx, got); err != nil {
		t.Fatal(err)
	}
	if err := rcv.AcceptMessage(ctx, got); err != nil {
		t.Errorf("accepting twice: %v", err)
	}
}

func TestReleaseRedelivers(t *testing.T) {
	srv := amqptest.NewServer(t, nil)
	ctx := testCtx(t)
	_, snd, rcv := pair(t, srv.URL, "q", &ReceiverOptions{Credit: 10})
	if err := snd.Send(ctx, NewMessage([]byte("again")), nil); err != nil {
		t.Fatal(err)
	}
	m, err := rcv.Receive(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rcv.ReleaseMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	m2, err := rcv.Receive(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(m2.GetData()) != "again" {
		t.Errorf("redelivered %q", m2.GetData())
	}
	if err := rcv.ModifyMessage(ctx, m2, &ModifyMessageOptions{DeliveryFailed: true}); err != nil {
		t.Fatal(err)
	}
	m3, err := rcv.Receive(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m3.Header == nil || m3.Header.DeliveryCount != 1 {
		t.Errorf("after a failed delivery the header is %+v", m3.Header)
	}
	if err := rcv.RejectMessage(ctx, m3, &Error{Condition: ErrCondDecodeError}); err != nil {
		t.Fatal(err)
	}
	if m := rcv.Prefetched(); m != nil {
		t.Errorf("Prefetched after reject: %+v", m)
	}
}

func TestPrefetched(t *testing.T) {
	srv := amqptest.NewServer(t, nil)
	ctx := testCtx(t)
	_, snd, rcv := pair(t, srv.URL, "q", &ReceiverOptions{Credit: 10})
	if m := rcv.Prefetched(); m != nil {
		t.Fatalf("Prefetched on an empty link: %+v", m)
	}
	for _, s := range []string{"a", "b"} {
		if err := snd.Send(ctx, NewMessage([]byte(s)), nil); err != nil {
			t.Fatal(err)
		}
	}
	m, err := rcv.Receive(ctx, nil) // the first, and with it the second is on its way
	if err != nil {
		t.Fatal(err)
	}
	if string(m.GetData()) != "a" {
		t.Fatalf("first %q", m.GetData())
	}
	// Receive the second through Prefetched once it has come: Receive
	// with a ctx that waits for it, then nothing is left.
	m, err = rcv.Receive(ctx, nil)
	if err != nil || string(m.GetData()) != "b" {
		t.Fatalf("second %v, %v", m, err)
	}
	if m := rcv.Prefetched(); m != nil {
		t.Errorf("Prefetched after both: %+v", m)
	}
}

func TestSendWithReceipt(t *testing.T) {
	srv := amqptest.NewServer(t, &broker.Options{MaxMessages: 1, RejectWhenFull: true})
	ctx := testCtx(t)
	_, snd, _ := pair(t, srv.URL, "full", &ReceiverOptions{Credit: -1})
	r1, err := snd.SendWithReceipt(ctx, NewMessage([]byte("1")), nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := r1.Wait(ctx)
	if _, ok := st.(*StateAccepted); !ok || err != nil {
		t.Fatalf("first: %v, %v", st, err)
	}
	if again, _ := r1.Wait(ctx); again != st {
		t.Errorf("a second Wait gave %v", again)
	}
	r2, err := snd.SendWithReceipt(ctx, NewMessage([]byte("2")), nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err = r2.Wait(ctx)
	rej, ok := st.(*StateRejected)
	if !ok || err != nil || rej.Error == nil || rej.Error.Condition != ErrCondResourceLimitExceeded {
		t.Fatalf("second: %v, %v", st, err)
	}
	// Send returns the rejection as the peer's *Error.
	err = snd.Send(ctx, NewMessage([]byte("3")), nil)
	var ae *Error
	if !errors.As(err, &ae) || ae.Condition != ErrCondResourceLimitExceeded {
		t.Errorf("Send to a full queue: %v", err)
	}
}

// TestErrorScopes: what ended a call is found with errors.As, as
// azservicebus and azeventhubs sort errors into link, connection and
// fatal recovery.
func TestErrorScopes(t *testing.T) {
	srv := amqptest.NewServer(t, nil)
	ctx := testCtx(t)
	c, snd, rcv := pair(t, srv.URL, "q", nil)
	if err := snd.Close(ctx); err != nil {
		t.Fatal(err)
	}
	err := snd.Send(ctx, NewMessage(nil), nil)
	var le *LinkError
	if !errors.As(err, &le) || le.RemoteErr != nil || le.Error() != "amqp: link closed" {
		t.Errorf("Send on a closed sender: %T %v", err, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Err(); err != nil {
		t.Errorf("Err after a clean Close: %v", err)
	}
	_, err = rcv.Receive(ctx, nil)
	var ce *ConnError
	if !errors.As(err, &ce) {
		t.Errorf("Receive on a closed connection: %T %v", err, err)
	}
	if _, err := c.NewSession(ctx, nil); !errors.As(err, &ce) {
		t.Errorf("NewSession on a closed connection: %T %v", err, err)
	}
}

func TestMapErr(t *testing.T) {
	remote := &client.Error{Condition: "amqp:link:detach-forced", Description: "d", Remote: true, Scope: client.ScopeLink}
	err := mapErr(remote, onLink, nil)
	var le *LinkError
	var ae *Error
	if !errors.As(err, &le) || !errors.As(err, &ae) || ae.Condition != ErrCondDetachForced || ae.Description != "d" {
		t.Errorf("remote link error: %#v", err)
	}
	local := &client.Error{Condition: "amqp:resource-limit-exceeded", Scope: client.ScopeConn}
	err = mapErr(local, onLink, nil)
	var ce *ConnError
	if !errors.As(err, &ce) || ce.RemoteErr != nil || errors.As(err, &ae) || !strings.Contains(err.Error(), "resource-limit") {
		t.Errorf("local connection error: %#v", err)
	}
	var se *SessionError
	if err := mapErr(&client.Error{Condition: "x", Remote: true, Scope: client.ScopeSession}, onLink, nil); !errors.As(err, &se) {
		t.Errorf("session error: %#v", err)
	}
	if err := mapErr(client.ErrClosed, onSession, nil); !errors.As(err, &se) {
		t.Errorf("closed session: %#v", err)
	}
	if mapErr(context.Canceled, onLink, nil) != context.Canceled {
		t.Error("context error changed")
	}
	for _, o := range []*client.OutcomeError{{Outcome: frame.StateReleased}, {Outcome: frame.StateModified, DeliveryFailed: true}} {
		if err := sendErr(o, &Session{conn: &Conn{}}); err != nil {
			t.Errorf("Send's error for %v: %v, want nil as go-amqp", o, err)
		}
	}
	if err := sendErr(&client.OutcomeError{Outcome: frame.StateRejected}, &Session{conn: &Conn{}}); err != errRejectedBare {
		t.Errorf("bare rejection: %v", err)
	}
}

func TestDialOptions(t *testing.T) {
	srv := amqptest.NewServer(t, &broker.Options{Users: map[string]string{"u": "p"}})
	ctx := testCtx(t)
	if _, err := Dial(ctx, srv.URL, &ConnOptions{MaxFrameSize: 100}); err == nil {
		t.Error("MaxFrameSize 100 accepted")
	}
	if _, err := Dial(ctx, "amqp://u:s3cret@host:port:x", nil); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a bad URL: %v", err)
	}
	if _, err := Dial(ctx, "ftp://x", nil); err == nil {
		t.Error("scheme ftp accepted")
	}
	if _, err := Dial(ctx, srv.URL, &ConnOptions{SASLType: SASLTypeXOAUTH2("u", "t", 0)}); err == nil {
		t.Error("XOAUTH2 accepted by a broker that offers PLAIN only")
	}
	c, err := Dial(ctx, srv.URL, &ConnOptions{SASLType: SASLTypePlain("u", "p"), ContainerID: "me", IdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	_, err = Dial(ctx, srv.URL, &ConnOptions{SASLType: SASLTypePlain("u", "wrong")})
	var ce *ConnError
	if !errors.As(err, &ce) || strings.Contains(err.Error(), "wrong") {
		t.Errorf("a refused login: %T %v", err, err)
	}
	_, err = Dial(ctx, strings.Replace(srv.URL, "amqp://", "amqp://u:s3cret@", 1), nil)
	if !errors.As(err, &ce) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a refused login from the URL: %T %v", err, err)
	}
	u := strings.Replace(srv.URL, "amqp://", "amqp://u:p@", 1)
	c, err = Dial(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// TestSessionRules: what go-amqp's session checks before an attach, and
// the scope of a link's error once its session is closed.
func TestSessionRules(t *testing.T) {
	srv := amqptest.NewServer(t, nil)
	ctx := testCtx(t)
	c, err := Dial(ctx, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.NewSession(ended, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("NewSession with an ended ctx: %v", err)
	}
	s, err := c.NewSession(ctx, &SessionOptions{MaxLinks: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.NewSender(ended, "q", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("NewSender with an ended ctx: %v", err)
	}
	snd, err := s.NewSender(ctx, "q", &SenderOptions{Name: "n"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.NewSender(ctx, "q", &SenderOptions{Name: "n"}); err == nil || !strings.Contains(err.Error(), "link with name 'n' already exists") {
		t.Errorf("a second sender named n: %v", err)
	}
	rcv, err := s.NewReceiver(ctx, "q", &ReceiverOptions{Name: "n"}) // the other direction: allowed
	if err != nil {
		t.Fatal(err)
	}
	if err := snd.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.NewSender(ctx, "q", &SenderOptions{Name: "n"}); err != nil {
		t.Errorf("the name again after Close: %v", err)
	}
	_, err = s.NewSender(ctx, "q", nil) // a third link past MaxLinks 2
	var se *SessionError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "handle max (2)") {
		t.Errorf("past MaxLinks: %v", err)
	}
	_, err = rcv.Receive(ctx, nil)
	if !errors.As(err, &se) {
		t.Errorf("Receive on a link of a closed session: %T %v", err, err)
	}
}

// TestLinkOptions: options client carries reach the peer: a selector
// filter the broker applies (and names in its answer), receiver settle
// mode second, link properties, a dynamic node.
func TestLinkOptions(t *testing.T) {
	srv := amqptest.NewServer(t, nil)
	ctx := testCtx(t)
	c, err := Dial(ctx, srv.URL, &ConnOptions{Properties: map[string]any{"product": "goamqp-test"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	snd, err := s.NewSender(ctx, "sel", &SenderOptions{Properties: map[string]any{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	rcv, err := s.NewReceiver(ctx, "sel", &ReceiverOptions{
		Credit:         10,
		Filters:        []LinkFilter{NewSelectorFilter("color = 'red'")},
		SettlementMode: ReceiverSettleModeSecond.Ptr(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if v := rcv.LinkSourceFilterValue("apache.org:selector-filter:string"); v != "color = 'red'" {
		t.Errorf("the broker's answer names the selector as %v", v)
	}
	for _, color := range []string{"blue", "red"} {
		if err := snd.Send(ctx, &Message{ApplicationProperties: map[string]any{"color": color}, Value: color}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// (Whether the broker applies the selector is the broker's
	// business: here, that settle mode second settles.)
	for range 2 {
		m, err := rcv.Receive(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := rcv.AcceptMessage(ctx, m); err != nil { // mode second: returns once the broker has settled
			t.Fatal(err)
		}
		if m.Value == "red" {
			break
		}
	}
	dyn, err := s.NewReceiver(ctx, "", &ReceiverOptions{DynamicAddress: true})
	if err != nil {
		t.Fatal(err)
	}
	if dyn.Address() == "" {
		t.Error("a dynamic receiver without an address")
	}
}
