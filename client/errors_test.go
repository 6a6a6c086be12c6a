package client_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/require"
)

// Rejected, released and modified are errors, never nil.
func TestOutcomes(t *testing.T) {
	b := startBroker(t)
	ctx := testCtx(t)
	s, err := dial(t, b).NewSession(ctx, nil)
	require.NoError(t, err)
	for _, tc := range []struct {
		addr     string
		sentinel error
		check    func(*client.OutcomeError)
	}{
		{"reject/x", client.ErrRejected, func(oe *client.OutcomeError) {
			require.NotNil(t, oe.Err)
			require.Equal(t, "amqp:precondition-failed", oe.Err.Condition)
			require.Equal(t, "no thanks", oe.Err.Description)
		}},
		{"release/x", client.ErrReleased, func(*client.OutcomeError) {}},
		{"modify/x", client.ErrModified, func(oe *client.OutcomeError) {
			require.True(t, oe.DeliveryFailed)
			require.True(t, oe.UndeliverableHere)
		}},
	} {
		snd, err := s.NewSender(ctx, tc.addr, nil)
		require.NoError(t, err)
		err = snd.Send(ctx, dataMsg("x"), nil)
		require.ErrorIs(t, err, tc.sentinel, tc.addr)
		var oe *client.OutcomeError
		require.ErrorAs(t, err, &oe)
		tc.check(oe)
		// the same from a Pending
		p, err := snd.SendAsync(ctx, dataMsg("y"), nil)
		require.NoError(t, err)
		require.ErrorIs(t, p.Wait(ctx), tc.sentinel)
		require.ErrorIs(t, p.Wait(ctx), client.ErrWaited)
	}
}

// A refused link returns the peer's condition, whether the refusal came
// as a detach, as its session's end, or as the connection's close.
func TestRefusedLink(t *testing.T) {
	b := startBroker(t)
	ctx := testCtx(t)
	for _, tc := range []struct {
		addr, cond string
		scope      client.Scope
	}{
		{"refuse/x", "amqp:not-found", client.ScopeLink},
		{"detach/x", "amqp:unauthorized-access", client.ScopeLink},
		{"end/x", "amqp:resource-limit-exceeded", client.ScopeSession},
		{"close/x", "amqp:connection:forced", client.ScopeConn},
	} {
		for _, sender := range []bool{true, false} {
			c := dial(t, b)
			s, err := c.NewSession(ctx, nil)
			require.NoError(t, err)
			if sender {
				_, err = s.NewSender(ctx, tc.addr, nil)
			} else {
				_, err = s.NewReceiver(ctx, tc.addr, nil)
			}
			var e *client.Error
			require.ErrorAs(t, err, &e, tc.addr)
			require.Equal(t, tc.cond, e.Condition, tc.addr)
			require.True(t, e.Remote)
			require.Equal(t, tc.scope, e.Scope, tc.addr)
			require.Contains(t, err.Error(), tc.cond)
		}
	}
	// The empty address examples/broker refuses: the same path.
}

// Dial's errors name the stage, and ctx bounds the whole exchange.
func TestDialStages(t *testing.T) {
	ctx := testCtx(t)
	serve := func(t *testing.T, f func(net.Conn)) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				nc, err := ln.Accept()
				if err != nil {
					return
				}
				go func() { f(nc); nc.Close() }()
			}
		}()
		return ln.Addr().String()
	}
	stage := func(t *testing.T, err error, want string) *client.DialError {
		var de *client.DialError
		require.ErrorAs(t, err, &de)
		require.Equal(t, want, de.Stage, err.Error())
		return de
	}

	t.Run("tcp", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		ln.Close()
		_, err = client.Dial(ctx, addr, nil)
		stage(t, err, "tcp")
		_, err = client.Dial(ctx, "not an address", nil)
		stage(t, err, "tcp")
	})
	t.Run("silent", func(t *testing.T) {
		unblock := make(chan struct{})
		defer close(unblock)
		addr := serve(t, func(net.Conn) { <-unblock })
		ctx1, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		start := time.Now()
		_, err := client.Dial(ctx1, addr, nil)
		t.Logf("silent server, 1 s deadline: Dial returned after %v: %v", time.Since(start).Round(time.Millisecond), err)
		stage(t, err, "header")
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
	t.Run("garbage", func(t *testing.T) {
		addr := serve(t, func(nc net.Conn) { nc.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n")) })
		_, err := client.Dial(ctx, addr, nil)
		stage(t, err, "header")
	})
	t.Run("closes", func(t *testing.T) {
		addr := serve(t, func(net.Conn) {})
		_, err := client.Dial(ctx, addr, nil)
		stage(t, err, "header")
	})
	t.Run("sasl", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		srv := &driver.Server{Config: engine.Config{Auth: engine.Plain(func(u, p string) bool { return u == "u" && p == "p" }, false)}}
		go srv.Serve(ln)
		defer srv.Close()
		insecure := &client.ConnOptions{AllowInsecurePlain: true}
		_, err = client.Dial(ctx, "amqp://u:wrong@"+ln.Addr().String(), insecure)
		stage(t, err, "sasl")
		var e *client.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, "amqp:unauthorized-access", e.Condition)
		c, err := client.Dial(ctx, "amqp://u:p@"+ln.Addr().String(), insecure)
		require.NoError(t, err)
		require.NoError(t, c.Close())
		// SASL mechanisms then silence: the stage is SASL.
		addr := serve(t, func(nc net.Conn) {
			nc.Write(frame.AppendProtocolHeader(nil, frame.HeaderSASL))
			<-ctx.Done()
		})
		ctx1, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err = client.Dial(ctx1, addr, nil)
		stage(t, err, "sasl")
	})
	t.Run("open", func(t *testing.T) {
		// The AMQP header, then no open.
		addr := serve(t, func(nc net.Conn) {
			nc.Write(frame.AppendProtocolHeader(nil, frame.HeaderAMQP))
			<-ctx.Done()
		})
		ctx1, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err := client.Dial(ctx1, addr, &client.ConnOptions{SASLType: client.SASLTypeNone()})
		stage(t, err, "open")
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

// The peer vanishing mid-send wakes every blocked call with the
// connection's error.
func TestPeerVanishes(t *testing.T) {
	b := startBroker(t)
	ctx := testCtx(t)
	c := dial(t, b)
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	held, err := s.NewSender(ctx, "hold/x", nil)
	require.NoError(t, err)
	stuck, err := s.NewSender(ctx, "nocredit/x", nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "q/empty", nil)
	require.NoError(t, err)
	const n = 32
	errs := make(chan error, 3*n+1)
	for range n {
		go func() { errs <- held.Send(ctx, dataMsg("a"), nil) }()
		go func() { errs <- stuck.Send(ctx, dataMsg("b"), nil) }()
	}
	pend := make([]client.Pending, n)
	for i := range pend {
		pend[i], err = held.SendAsync(ctx, dataMsg("c"), nil)
		require.NoError(t, err)
	}
	go func() { _, err := rcv.Receive(ctx, nil); errs <- err }()
	for b.held.Load() < 2*n {
		time.Sleep(time.Millisecond)
	}
	// The broker goes: every connection cut.
	b.vanish()
	for range 2*n + 1 {
		err := <-errs
		var e *client.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, client.ScopeConn, e.Scope)
		require.Equal(t, "amqp:connection:framing-error", e.Condition, err.Error())
	}
	for _, p := range pend {
		var e *client.Error
		require.ErrorAs(t, p.Wait(ctx), &e)
	}
	<-c.Done()
	var e *client.Error
	require.ErrorAs(t, c.Err(), &e)
	// Calls after the end return at once with the same error.
	require.ErrorAs(t, held.Send(ctx, dataMsg("d"), nil), &e)
	_, err = s.NewSender(ctx, "q/x", nil)
	require.ErrorAs(t, err, &e)
	_, err = c.NewSession(ctx, nil)
	require.ErrorAs(t, err, &e)
	require.Error(t, c.Close())
}

// A clean close by this end makes the calls still blocked return
// ErrClosed.
func TestCloseWakes(t *testing.T) {
	b := startBroker(t)
	ctx := testCtx(t)
	c, err := client.Dial(ctx, b.url(), nil)
	require.NoError(t, err)
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	stuck, err := s.NewSender(ctx, "nocredit/x", nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "q/empty", nil)
	require.NoError(t, err)
	errs := make(chan error, 2)
	go func() { errs <- stuck.Send(ctx, dataMsg("b"), nil) }()
	go func() { _, err := rcv.Receive(ctx, nil); errs <- err }()
	time.Sleep(10 * time.Millisecond) // let them block (either way they must end)
	require.NoError(t, c.Close())
	require.ErrorIs(t, <-errs, client.ErrClosed)
	require.ErrorIs(t, <-errs, client.ErrClosed)
	require.ErrorIs(t, c.Err(), client.ErrClosed)
	require.NoError(t, c.Close(), "a second Close")
	_ = errors.Is
}

// A delivery whose message does not decode comes with the error and its
// bytes, and can be rejected; the link goes on.
func TestBadMessage(t *testing.T) {
	ctx := testCtx(t)
	bad := []byte{0x00, 0x53, 0x75, 0xa0, 0xff, 'x'} // a data section claiming 255 bytes
	url := serveEngine(t, engine.Config{}, &source{payload: bad})
	c, err := client.Dial(ctx, url, nil)
	require.NoError(t, err)
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "bad", &client.ReceiverOptions{Credit: 5})
	require.NoError(t, err)
	for range 10 {
		d, err := rcv.Receive(ctx, nil)
		require.Error(t, err)
		require.NotNil(t, d)
		require.Equal(t, bad, d.Payload())
		require.NoError(t, d.Reject(ctx, &client.Error{Condition: "amqp:decode-error", Description: err.Error()}))
		var into client.Delivery
		require.Error(t, rcv.ReceiveInto(ctx, &into, nil))
		require.Equal(t, bad, into.Payload())
		require.NoError(t, into.Reject(ctx, nil))
	}
}

// A session the peer ends with an error (RabbitMQ ends it with
// amqp:not-found for a link to a queue that does not exist) gives that
// error to the session's Err and to its links' Err and blocked calls,
// never ErrClosed, which is a clean end's.
func TestSessionEndedByPeer(t *testing.T) {
	b := startBroker(t)
	ctx := testCtx(t)
	c := dial(t, b)
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "q/end", nil)
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, "q/end2", nil)
	require.NoError(t, err)
	woke := make(chan error, 1)
	go func() {
		_, err := rcv.Receive(ctx, nil)
		woke <- err
	}()
	_, err = s.NewSender(ctx, "end/x", nil)
	check := func(err error) {
		t.Helper()
		require.NotErrorIs(t, err, client.ErrClosed)
		var e *client.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, "amqp:resource-limit-exceeded", e.Condition)
		require.True(t, e.Remote)
		require.Equal(t, client.ScopeSession, e.Scope)
	}
	check(err)
	check(s.Close(ctx)) // waits for the end
	check(s.Err())
	check(<-woke)
	check(rcv.Err())
	check(snd.Err())
	check(snd.Send(ctx, dataMsg("x"), nil))
}
