package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/require"
)

// A connection fault (a frame of a type AMQP does not have, part 2
// §2.3.1): the engine closes the connection with
// amqp:connection:framing-error and the peer never answers its close.
// Every blocked call on every link of every session wakes with that
// error at once: a Receive, the outcome a Send waits for, on two
// sessions; Conn.Err and Done say the same, and later calls fail with
// it too.
func TestConnFaultEndsEveryLink(t *testing.T) {
	addr, fire, stop := faultyServer(t, 3, func(l *engine.Link) []byte {
		b := frame.BeginFrame(nil, 5, 0) // frame type 5: neither AMQP (0) nor SASL (1)
		b = append(b, 0x00, 0x53, 0x77, 0x40)
		return frame.EndFrame(b, 0)
	})
	c, err := client.Dial(testCtx(t), addr, nil)
	require.NoError(t, err)
	defer c.Close()
	defer stop()
	s1, err := c.NewSession(testCtx(t), nil)
	require.NoError(t, err)
	s2, err := c.NewSession(testCtx(t), nil)
	require.NoError(t, err)
	snd, err := s1.NewSender(testCtx(t), "q", nil)
	require.NoError(t, err)
	rcv1, err := s1.NewReceiver(testCtx(t), "q", &client.ReceiverOptions{Credit: -1})
	require.NoError(t, err)
	rcv2, err := s2.NewReceiver(testCtx(t), "q", nil) // the third attach: the fault follows it
	require.NoError(t, err)

	// The server's engine takes the transfer and never settles it: the
	// Pending's Wait blocks until the connection ends.
	p, err := snd.SendAsync(testCtx(t), dataMsg("m"), nil)
	require.NoError(t, err)
	errs := make(chan error, 3)
	go func() { errs <- p.Wait(context.Background()) }()
	for _, r := range []*client.Receiver{rcv1, rcv2} {
		go func() {
			_, err := r.Receive(context.Background(), nil)
			errs <- err
		}()
	}
	fire()
	for range 3 {
		select {
		case err := <-errs:
			var e *client.Error
			require.ErrorAs(t, err, &e, "%v", err)
			require.Equal(t, "amqp:connection:framing-error", e.Condition, "%v", err)
			require.Equal(t, client.ScopeConn, e.Scope, "%v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("a call still blocked: the engine's close was never reported")
		}
	}
	select {
	case <-c.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("Done not closed after the engine closed the connection")
	}
	var e *client.Error
	require.ErrorAs(t, c.Err(), &e)
	require.Equal(t, "amqp:connection:framing-error", e.Condition)
	for _, r := range []*client.Receiver{rcv1, rcv2} {
		require.ErrorAs(t, r.Err(), &e)
		require.Equal(t, "amqp:connection:framing-error", e.Condition)
	}
	err = snd.Send(testCtx(t), dataMsg("n"), nil) // the deadline only guards against a hang
	require.ErrorAs(t, err, &e, "%v", err)
	require.Equal(t, "amqp:connection:framing-error", e.Condition)
	_, err = c.NewSession(testCtx(t), nil)
	require.ErrorAs(t, err, &e, "%v", err)
	require.Equal(t, "amqp:connection:framing-error", e.Condition)
}
