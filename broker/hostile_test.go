package broker_test

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/require"
)

// Clients that are not all trusted: each test is a hostile program's
// attack, and what the broker does about it.

// refused waits for l to be detached and returns the condition.
func refused(t *testing.T, l *tlink) frame.Condition {
	t.Helper()
	select {
	case err := <-l.detached:
		require.NotNil(t, err, "detached without an error")
		return err.Condition
	case <-timeAfter():
		t.Fatal("not refused")
	}
	return 0
}

// TestAddressNotUTF8: an address is an AMQP string, UTF-8; one that is
// not (a link's, or a message's route) is refused with
// amqp:invalid-field, and the broker makes no node of it.
func TestAddressNotUTF8(t *testing.T) {
	addr, b := start(t, broker.Options{RouteKey: "to"})
	c := dial(t, addr, engine.Config{}, nil)
	for _, sender := range []bool{false, true} {
		l := c.attach(sender, engine.LinkOptions{Address: "q\xff"})
		require.Equal(t, frame.CondInvalidField, refused(t, l), "sender %v", sender)
	}
	snd := c.sender("ok")
	snd.send(routedMessage("r\xfe", "x"))
	o := snd.outcome()
	require.Equal(t, frame.StateRejected, o.Type)
	require.Equal(t, frame.CondInvalidField.Symbol(), string(o.Error.Condition))
	for _, q := range b.Queues() {
		require.Equal(t, "ok", q.Name)
	}
}

// TestTxnRoutedPastMaxQueues: a message sent in a transaction and
// routed to a new address while the broker holds MaxQueues is rejected,
// as outside a transaction (it crashed the broker at the commit).
func TestTxnRoutedPastMaxQueues(t *testing.T) {
	addr, b := start(t, broker.Options{MaxQueues: 1, RouteKey: "to"})
	h := &txnClient{n: 1, send: true, payload: routedMessage("new", "x")}
	require.Equal(t, "accepted", runTxn(t, addr, h))
	require.Equal(t, 1, h.outcomes["rejected"], "outcomes %v", h.outcomes)
	_, ok := b.Queue("new")
	require.False(t, ok)
	q, _ := b.Queue("q")
	require.Zero(t, q.Depth)
	// the broker is still there
	snd := dial(t, addr, engine.Config{}, nil).sender("q")
	snd.send(data("after"))
	require.Equal(t, frame.StateAccepted, snd.outcome().Type)
}

// TestDynamicExclusive: a dynamic node's address cannot be guessed from
// another's, and only the connection that made it may consume from it
// (others may send to it: replies); another connection's consumer is
// refused with amqp:unauthorized-access.
func TestDynamicExclusive(t *testing.T) {
	addr, _ := start(t, broker.Options{})
	alice := dial(t, addr, engine.Config{}, nil)
	var names []string
	var reply *tlink
	for range 2 {
		reply = alice.attach(false, engine.LinkOptions{Source: &frame.Source{Dynamic: true}})
		var a string
		alice.do(func() { a = string(reply.l.RemoteSource().Address) })
		names = append(names, a)
	}
	for _, a := range names {
		require.Regexp(t, regexp.MustCompile(`^amqpsax\.dynamic\.[A-Za-z0-9_-]{22,}$`), a)
	}
	require.NotEqual(t, names[0], names[1])

	mallory := dial(t, addr, engine.Config{}, nil)
	for _, guess := range []string{names[1], "amqpsax.dynamic.1", "amqpsax.dynamic.2"} {
		l := mallory.receiver(guess)
		if guess == names[1] {
			require.Equal(t, frame.CondUnauthorizedAccess, refused(t, l))
		} else {
			l.detach() // an ordinary address now: a queue of its own
		}
	}
	server := mallory.sender(names[1])
	server.send(data("reply"))
	require.Equal(t, frame.StateAccepted, server.outcome().Type)
	reply.flow(1)
	require.True(t, bytes.Equal(data("reply"), reply.next().payload))
}
