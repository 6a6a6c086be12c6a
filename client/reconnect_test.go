package client_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/client"
	"github.com/stretchr/testify/require"
)

// With Reconnect, a lost connection is dialled again and its links
// attached again: what was in flight is an error, what comes after works.
func TestReconnect(t *testing.T) {
	b := startBroker(t)
	ctx := testCtx(t)
	base := runtime.NumGoroutine()
	c, err := client.Dial(ctx, b.url(), &client.ConnOptions{Reconnect: &client.ReconnectOptions{Backoff: 10 * time.Millisecond}})
	require.NoError(t, err)
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, "q/r", nil)
	require.NoError(t, err)
	held, err := s.NewSender(ctx, "hold/r", nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "q/r", &client.ReceiverOptions{Credit: 10})
	require.NoError(t, err)

	require.NoError(t, snd.Send(ctx, dataMsg("before"), nil))
	before, err := rcv.Receive(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, "before", string(before.Message.Body.Data[0]))

	// A session the peer ended is not begun again.
	s3, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	_, err = s3.NewSender(ctx, "end/x", nil)
	require.Error(t, err)
	<-s3Done(s3)

	for round := range 3 {
		// In flight when the connection goes: the peer holds it.
		p, err := held.SendAsync(ctx, dataMsg("held"), nil)
		require.NoError(t, err)
		for b.held.Load() < int64(round+1) {
			time.Sleep(time.Millisecond)
		}
		b.vanish()
		var e *client.Error
		require.ErrorAs(t, p.Wait(ctx), &e, "an unsettled message in flight at the loss is an error, never dropped")
		require.Equal(t, client.ScopeConn, e.Scope)
		// After: the same sender and receiver, on the new connection.
		require.NoError(t, snd.Send(ctx, dataMsg("after"), nil), "round %d", round)
		d, err := rcv.Receive(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, "after", string(d.Message.Body.Data[0]))
		if round == 0 {
			// Asked once the receiver is on the new connection: until
			// its loss has reached it, an Accept is queued like any (and
			// dropped with the connection, as one written just before the
			// loss would be).
			require.Error(t, before.Accept(ctx), "a delivery of the lost link cannot be settled")
		}
		require.NoError(t, d.Accept(ctx))
		// New sessions and links too.
		s2, err := c.NewSession(ctx, nil)
		require.NoError(t, err)
		require.NoError(t, s2.Close(ctx))
	}
	require.NoError(t, c.Close())
	// No goroutine is left of the three connections and their dials.
	n := runtime.NumGoroutine()
	for i := 0; i < 500 && n > base; i++ {
		time.Sleep(10 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	require.LessOrEqual(t, n, base, "goroutines left after Close")
}

// When the dials run out, the connection ends with the loss's error and
// every call waiting for it returns.
func TestReconnectGivesUp(t *testing.T) {
	b := startBroker(t)
	ctx := testCtx(t)
	c, err := client.Dial(ctx, b.url(), &client.ConnOptions{Reconnect: &client.ReconnectOptions{MaxAttempts: 2, Backoff: 10 * time.Millisecond}})
	require.NoError(t, err)
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, "q/g", nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "q/g", nil)
	require.NoError(t, err)
	b.srv.Close() // no more listening: every dial again fails
	errs := make(chan error, 2)
	go func() { errs <- snd.Send(ctx, dataMsg("x"), nil) }()
	go func() { _, err := rcv.Receive(ctx, nil); errs <- err }()
	<-c.Done()
	require.Error(t, c.Err())
	require.NotErrorIs(t, c.Err(), client.ErrClosed)
	for range 2 {
		require.Error(t, <-errs)
	}
	require.Error(t, c.Close())
}

// s3Done waits for a session to have ended.
func s3Done(s *client.Session) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		for s.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		close(ch)
	}()
	return ch
}
