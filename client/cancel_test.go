package client_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/client"
	"github.com/stretchr/testify/require"
)

func short(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(testCtx(t), 100*time.Millisecond)
	t.Cleanup(cancel)
	return ctx
}

// Every call that waits ends with its ctx, leaving a state it documents.
func TestCancel(t *testing.T) {
	ctx := testCtx(t)

	t.Run("NewSession", func(t *testing.T) {
		b := startBroker(t)
		b.blockBegin.Store(true)
		c, err := client.Dial(ctx, b.url(), nil)
		require.NoError(t, err)
		_, err = c.NewSession(short(t), nil)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		// The broker's goroutine is stuck: Close ends with its ctx, and
		// the network connection is closed.
		require.ErrorIs(t, c.CloseContext(short(t)), context.DeadlineExceeded)
		<-c.Done()
	})

	t.Run("NewSender/NewReceiver", func(t *testing.T) {
		b := startBroker(t)
		for _, sender := range []bool{true, false} {
			c, err := client.Dial(ctx, b.url(), nil)
			require.NoError(t, err)
			s, err := c.NewSession(ctx, nil)
			require.NoError(t, err)
			if sender {
				_, err = s.NewSender(short(t), "block/x", nil)
			} else {
				_, err = s.NewReceiver(short(t), "block/x", nil)
			}
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.ErrorIs(t, s.Close(short(t)), context.DeadlineExceeded)
			require.ErrorIs(t, c.CloseContext(short(t)), context.DeadlineExceeded)
		}
	})

	b := startBroker(t)
	c := dial(t, b)
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)

	t.Run("Send before the transfer", func(t *testing.T) {
		snd, err := s.NewSender(ctx, "late/x", nil)
		require.NoError(t, err)
		err = snd.Send(short(t), dataMsg("never"), nil)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.NotErrorIs(t, err, client.ErrOutcomeUnknown)
		// Credit comes later: the abandoned message is not sent, the
		// next one is.
		b.grant()
		require.NoError(t, snd.Send(ctx, dataMsg("after"), nil))
		rcv, err := s.NewReceiver(ctx, "late/x", &client.ReceiverOptions{Credit: 10})
		require.NoError(t, err)
		d, err := rcv.Receive(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, "after", string(d.Message.Body.Data[0]))
		require.Equal(t, 0, b.queued("late/x"))
		// An ended ctx sends nothing.
		ended, cancel := context.WithCancel(ctx)
		cancel()
		require.ErrorIs(t, snd.Send(ended, dataMsg("no"), nil), context.Canceled)
		_, err = snd.SendAsync(ended, dataMsg("no"), nil)
		require.ErrorIs(t, err, context.Canceled)
	})

	t.Run("Send during the transfer", func(t *testing.T) {
		snd, err := s.NewSender(ctx, "hold/x", nil)
		require.NoError(t, err)
		before := b.held.Load()
		// ctx ends once the peer has the message (whatever the load,
		// not at a time).
		sent, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			for b.held.Load() == before && sent.Err() == nil {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		err = snd.Send(sent, dataMsg("held"), nil)
		require.ErrorIs(t, err, client.ErrOutcomeUnknown)
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, before+1, b.held.Load(), "the peer has it")
		err = snd.Send(short(t), dataMsg("held"), nil)
		require.Error(t, err, "a second, with a deadline: outcome unknown, or not sent if the deadline came first")
		// The link goes on.
		p, err := snd.SendAsync(ctx, dataMsg("held 2"), nil)
		require.NoError(t, err)
		require.ErrorIs(t, p.Wait(short(t)), context.DeadlineExceeded)
		require.ErrorIs(t, p.Wait(short(t)), context.DeadlineExceeded, "Wait again: still on its way")
	})

	t.Run("Send after the outcome", func(t *testing.T) {
		snd, err := s.NewSender(ctx, "q/after", nil)
		require.NoError(t, err)
		p, err := snd.SendAsync(ctx, dataMsg("1"), nil)
		require.NoError(t, err)
		// Outcomes come in order on a link: once the second's is here,
		// so is the first's.
		require.NoError(t, snd.Send(ctx, dataMsg("2"), nil))
		ended, cancel := context.WithCancel(ctx)
		cancel()
		require.NoError(t, p.Wait(ended), "the outcome, though ctx has ended")
	})

	t.Run("Receive", func(t *testing.T) {
		rcv, err := s.NewReceiver(ctx, "q/recv", &client.ReceiverOptions{Credit: 5})
		require.NoError(t, err)
		_, err = rcv.Receive(short(t), nil)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		var d client.Delivery
		require.ErrorIs(t, rcv.ReceiveInto(short(t), &d, nil), context.DeadlineExceeded)
		snd, err := s.NewSender(ctx, "q/recv", nil)
		require.NoError(t, err)
		require.NoError(t, snd.Send(ctx, dataMsg("late"), nil))
		require.NoError(t, rcv.ReceiveInto(ctx, &d, nil), "nothing lost to the ended Receives")
		require.Equal(t, "late", string(d.Message.Body.Data[0]))
		// An ended ctx disposes of nothing; the delivery can still be
		// accepted.
		ended, cancel := context.WithCancel(ctx)
		cancel()
		require.ErrorIs(t, d.Accept(ended), context.Canceled)
		require.NoError(t, d.Accept(ctx))
	})

	t.Run("DrainCredit", func(t *testing.T) {
		rcv, err := s.NewReceiver(ctx, "q/drain", &client.ReceiverOptions{Credit: -1})
		require.NoError(t, err)
		require.NoError(t, rcv.IssueCredit(5))
		require.NoError(t, rcv.DrainCredit(ctx), "the sender gives the credit back")
		ended, cancel := context.WithCancel(ctx)
		cancel()
		require.NoError(t, rcv.IssueCredit(5))
		require.ErrorIs(t, rcv.DrainCredit(ended), context.Canceled)
		require.NoError(t, rcv.DrainCredit(ctx))
		_, err = rcv.Receive(short(t), nil)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

// After Close, the client's goroutines (and the broker's for the
// connection) are gone.
func TestGoroutinesAfterClose(t *testing.T) {
	b := startBroker(t)
	ctx := testCtx(t)
	base := runtime.NumGoroutine()
	for range 3 {
		c, err := client.Dial(ctx, b.url(), nil)
		require.NoError(t, err)
		s, err := c.NewSession(ctx, nil)
		require.NoError(t, err)
		snd, err := s.NewSender(ctx, "q/g", nil)
		require.NoError(t, err)
		rcv, err := s.NewReceiver(ctx, "q/g", &client.ReceiverOptions{Credit: 10})
		require.NoError(t, err)
		for range 100 {
			require.NoError(t, snd.Send(ctx, dataMsg("x"), nil))
			d, err := rcv.Receive(ctx, nil)
			require.NoError(t, err)
			require.NoError(t, d.Accept(ctx))
		}
		t.Logf("goroutines with one connection up: %d (before: %d)", runtime.NumGoroutine(), base)
		require.NoError(t, c.Close())
	}
	// The last goroutines are on their way out (a reader returning from
	// its failed Read): wait for them, not for a time.
	n := runtime.NumGoroutine()
	for i := 0; i < 500 && n > base; i++ {
		time.Sleep(10 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	require.LessOrEqual(t, n, base, "goroutines left after Close")
}

// SendAsync holds at most 1,024 messages unsent: past that it waits
// within its ctx (backpressure), wakes when credit takes some, and wakes
// with the link's error when the link ends.
func TestSendAsyncBackpressure(t *testing.T) {
	b := startBroker(t)
	ctx := testCtx(t)
	s, err := dial(t, b).NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, "late/bp", nil)
	require.NoError(t, err)
	const bound = 1024
	ps := make([]client.Pending, 0, bound+1)
	for range bound {
		p, err := snd.SendAsync(ctx, dataMsg("m"), nil)
		require.NoError(t, err)
		ps = append(ps, p)
	}
	_, err = snd.SendAsync(short(t), dataMsg("over"), nil)
	require.ErrorIs(t, err, context.DeadlineExceeded, "no room: it waits for ctx")
	// Credit for 10 makes room for 10.
	blocked := make(chan error, 1)
	go func() {
		p, err := snd.SendAsync(ctx, dataMsg("m"), nil)
		if err == nil {
			ps = append(ps, p)
		}
		blocked <- err
	}()
	b.grant()
	require.NoError(t, <-blocked)
	for _, p := range ps[:10] {
		require.NoError(t, p.Wait(ctx))
	}
	// The link ending wakes a waiting SendAsync with its error.
	for i := 0; ; i++ {
		if _, err := snd.SendAsync(short(t), dataMsg("fill"), nil); err != nil {
			require.ErrorIs(t, err, context.DeadlineExceeded)
			break
		}
		require.Less(t, i, bound)
	}
	go func() {
		_, err := snd.SendAsync(ctx, dataMsg("m"), nil)
		blocked <- err
	}()
	require.NoError(t, snd.Close(ctx))
	require.ErrorIs(t, <-blocked, client.ErrClosed)
	for _, p := range ps[10:] {
		require.ErrorIs(t, p.Wait(ctx), client.ErrClosed)
	}
}

// TestNewSessionCancelledLeaksNothing: NewSession with a ctx that has
// ended, or ends while its begin is queued, leaves no session behind: the
// connection's channels are not used up (a leak took one per call, and
// after channel-max of them every NewSession failed).
func TestNewSessionCancelledLeaksNothing(t *testing.T) {
	b := startBroker(t)
	c, err := client.Dial(testCtx(t), b.url(), nil)
	require.NoError(t, err)
	defer c.Close()
	done, cancel := context.WithCancel(testCtx(t))
	cancel()
	for range 600 { // above the 255 channels a connection has by default
		_, err := c.NewSession(done, nil)
		require.ErrorIs(t, err, context.Canceled)
	}
	// A ctx ending while the begin is queued: three rounds of 100, above
	// the 255 channels together. A session abandoned keeps its channel
	// until the peer answers its end; a session begun and closed after
	// each round waits for its own end's answer, which the peer sends
	// after those of every end before it, so a round's channels are free
	// again unless they leaked.
	for range 3 {
		for range 100 {
			ctx, cancel := context.WithCancel(testCtx(t))
			go cancel()
			if s, err := c.NewSession(ctx, nil); err == nil {
				require.NoError(t, s.Close(testCtx(t)))
			}
		}
		s, err := c.NewSession(testCtx(t), nil)
		require.NoError(t, err, "a session after the cancelled ones")
		require.NoError(t, s.Close(testCtx(t)))
	}
}
