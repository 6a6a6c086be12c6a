package interop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/amqpsax/amqpsax/amqptest"
	"github.com/amqpsax/amqpsax/broker"
	"github.com/stretchr/testify/require"
)

// TestPackageBrokerGoAMQPSelector: go-amqp's NewSelectorFilter receives
// exactly the messages of a mixed stream its selector takes; a selector
// with a syntax error is refused with amqp:invalid-field and a
// description naming where.
func TestPackageBrokerGoAMQPSelector(t *testing.T) {
	srv := amqptest.NewServer(t, &broker.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := amqp.Dial(ctx, srv.URL, nil)
	require.NoError(t, err)
	defer conn.Close()
	s, err := conn.NewSession(ctx, nil)
	require.NoError(t, err)
	r, err := s.NewReceiver(ctx, "sel", &amqp.ReceiverOptions{Credit: 100,
		Filters: []amqp.LinkFilter{amqp.NewSelectorFilter("color = 'red' AND weight > 2")}})
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, "sel", nil)
	require.NoError(t, err)
	var want []string
	for i, c := range []string{"red", "blue", "red", "green", "red", "red"} {
		m := amqp.NewMessage([]byte(fmt.Sprint(i)))
		m.ApplicationProperties = map[string]any{"color": c, "weight": int64(i)}
		require.NoError(t, snd.Send(ctx, m, nil))
		if c == "red" && i > 2 {
			want = append(want, fmt.Sprint(i))
		}
	}
	for _, w := range want {
		m, err := r.Receive(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, w, string(m.GetData()))
		require.NoError(t, r.AcceptMessage(ctx, m))
	}
	q, _ := srv.Queue("sel")
	require.Equal(t, 4, q.Depth, "the others stay for other consumers")
	require.Nil(t, r.Prefetched())

	_, err = s.NewReceiver(ctx, "sel", &amqp.ReceiverOptions{Filters: []amqp.LinkFilter{amqp.NewSelectorFilter("color = 'red' AND")}})
	var ae *amqp.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, amqp.ErrCondInvalidField, ae.Condition)
	require.Contains(t, ae.Description, "column 18")
}

// TestPackageBrokerGoAMQPRefusedAttaches: 200 senders the broker refuses,
// one after another on one session, each fail alone: the session goes
// on (no amqp:session:handle-in-use) and sends. Refused in the attach's
// answer (Permissions: no terminus) and after it (MaxQueues: the node
// cannot be made, the link detached once attached).
func TestPackageBrokerGoAMQPRefusedAttaches(t *testing.T) {
	for _, c := range []struct {
		name string
		opts broker.Options
		cond amqp.ErrCond
	}{
		{"in the answer", broker.Options{Permissions: func(_, address string, _ broker.Op) bool { return address != "secret" }},
			amqp.ErrCondUnauthorizedAccess},
		{"after the answer", broker.Options{MaxQueues: 1}, amqp.ErrCondResourceLimitExceeded},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := amqptest.NewServer(t, &c.opts)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			conn, err := amqp.Dial(ctx, srv.URL, nil)
			require.NoError(t, err)
			defer conn.Close()
			s, err := conn.NewSession(ctx, nil)
			require.NoError(t, err)
			snd, err := s.NewSender(ctx, "open", nil)
			require.NoError(t, err)
			for i := range 200 {
				x, err := s.NewSender(ctx, "secret", nil)
				if err == nil { // refused after the answer: its send fails
					err = x.Send(ctx, amqp.NewMessage([]byte("no")), nil)
				}
				var ae *amqp.Error
				var le *amqp.LinkError
				if errors.As(err, &le) && le.RemoteErr != nil {
					ae = le.RemoteErr
				}
				require.True(t, ae != nil || errors.As(err, &ae), "attach %d: %v", i, err)
				require.Equal(t, c.cond, ae.Condition, "attach %d: %v", i, err)
			}
			require.NoError(t, snd.Send(ctx, amqp.NewMessage([]byte("x")), nil))
			r, err := s.NewReceiver(ctx, "open", nil)
			require.NoError(t, err)
			m, err := r.Receive(ctx, nil)
			require.NoError(t, err)
			require.Equal(t, "x", string(m.GetData()))
		})
	}
}

// TestPackageBrokerGoAMQPReceiversClosed: 1,000 receivers attached and
// closed on one session leave it working.
func TestPackageBrokerGoAMQPReceiversClosed(t *testing.T) {
	srv := amqptest.NewServer(t, &broker.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := amqp.Dial(ctx, srv.URL, nil)
	require.NoError(t, err)
	defer conn.Close()
	s, err := conn.NewSession(ctx, nil)
	require.NoError(t, err)
	for i := range 1000 {
		r, err := s.NewReceiver(ctx, "many", &amqp.ReceiverOptions{Credit: 5})
		require.NoError(t, err, "receiver %d", i)
		require.NoError(t, r.Close(ctx), "receiver %d", i)
	}
	snd, err := s.NewSender(ctx, "many", nil)
	require.NoError(t, err)
	require.NoError(t, snd.Send(ctx, amqp.NewMessage([]byte("x")), nil))
	r, err := s.NewReceiver(ctx, "many", nil)
	require.NoError(t, err)
	m, err := r.Receive(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, "x", string(m.GetData()))
}

// TestPackageBrokerGoAMQPAcceptThenClose: 3,000 connections each take a
// message, accept it and close at once (go-amqp writes the accept and
// the close and shuts its socket): no accepted message is delivered
// again.
func TestPackageBrokerGoAMQPAcceptThenClose(t *testing.T) {
	const n = 3000
	srv := amqptest.NewServer(t, &broker.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn, err := amqp.Dial(ctx, srv.URL, nil)
	require.NoError(t, err)
	defer conn.Close()
	s, err := conn.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, "once", nil)
	require.NoError(t, err)
	for i := range n {
		require.NoError(t, snd.Send(ctx, amqp.NewMessage([]byte(fmt.Sprint(i))), nil))
	}
	seen := make(map[string]bool, n)
	for i := range n {
		c, err := amqp.Dial(ctx, srv.URL, nil)
		require.NoError(t, err)
		s, err := c.NewSession(ctx, nil)
		require.NoError(t, err)
		r, err := s.NewReceiver(ctx, "once", &amqp.ReceiverOptions{Credit: 1})
		require.NoError(t, err)
		m, err := r.Receive(ctx, nil)
		require.NoError(t, err, "connection %d", i)
		body := string(m.GetData())
		require.False(t, seen[body], "message %s delivered again after its accept (connection %d)", body, i)
		seen[body] = true
		require.NoError(t, r.AcceptMessage(ctx, m))
		if err := c.Close(); err != nil {
			var ce *amqp.ConnError
			require.True(t, errors.As(err, &ce), "close: %v", err)
		}
	}
	// The last connections' ends may still be with the broker: wait
	// for them (a bound on a hang, not a timing).
	var q broker.QueueStats
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		q, _ = srv.Queue("once")
		if q.Unsettled == 0 || time.Now().After(deadline) {
			break
		}
	}
	require.Zero(t, q.Depth)
	// Redelivered may count a message go-amqp was sent and never handed
	// out (its credit) before its close; an accept lost would be one
	// delivered again, or one short here.
	require.EqualValues(t, n, q.Accepted, "every accept heard")
}

// TestPackageBrokerProtonConsumers runs proton/broker_filters.py against
// package broker: Qpid Proton's Selector (and one that does not parse),
// a sender with no target and each message's address set (the
// anonymous relay), and shared and global subscriptions splitting a
// topic's stream.
func TestPackageBrokerProtonConsumers(t *testing.T) {
	if err := exec.Command(python, "-c", "import proton").Run(); err != nil {
		skip(t, "Debian's python3-qpid-proton is not installed for %s", python)
	}
	srv := amqptest.NewServer(t, &broker.Options{FanoutPrefixes: []string{"topic/"}})
	cmd := exec.Command(python, "proton/broker_filters.py")
	cmd.Env = append(os.Environ(), "AMQP_ADDR="+srv.Addr)
	out, err := cmd.CombinedOutput()
	t.Log(string(out))
	require.NoError(t, err, "the proton client failed")
	q, _ := srv.Queue("proton-sel")
	require.Equal(t, 5, q.Depth, "the messages the selector left stay (7 sent, 2 taken)")
	require.NotZero(t, q.Filtered)
	for _, name := range []string{"relay-a", "relay-b"} {
		q, _ := srv.Queue(name)
		require.EqualValues(t, 3, q.Accepted, name)
	}
}
