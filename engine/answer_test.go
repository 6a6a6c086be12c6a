package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/amqpsax/amqpsax/frame"
)

// answering is a server Handler with a say in its answers: it gives a
// dynamic source an address, answers a durable source with its own
// expiry policy, and refuses the address "nope".
type answering struct {
	recorder
	calls int
}

func (h *answering) AnswerAttach(l *Link, src *frame.Source, tgt *frame.Target) *Error {
	h.calls++
	switch {
	case src != nil && src.Dynamic:
		src.Address = []byte("tmp-" + string(l.Name()))
	case src != nil && src.Durable != frame.DurabilityNone:
		src.ExpiryPolicy, src.Timeout = frame.ExpiryNever, 0
	case tgt != nil && string(tgt.Address) == "nope":
		return NewError(frame.CondNotFound, "no node nope")
	}
	return nil
}

// TestAnswerer: a Handler that implements Answerer decides the terminus
// of its answer: the client sees the dynamic address the server gave, the
// expiry policy it chose, and a refusal (an answer without a target, then
// a detach with the error) the server's handler never hears of again.
func TestAnswerer(t *testing.T) {
	srv := &answering{}
	cli := &recorder{}
	var dyn, durable, refused *Link
	cli.onOpen = func(c *Conn) {
		s, err := c.Begin()
		require.NoError(t, err)
		dyn, err = s.AttachReceiver(LinkOptions{Name: "d", Source: &frame.Source{Dynamic: true}})
		require.NoError(t, err)
		durable, err = s.AttachReceiver(LinkOptions{Name: "sub", Source: &frame.Source{Address: []byte("topic"),
			Durable: frame.DurabilityUnsettledState, ExpiryPolicy: frame.ExpiryLinkDetach, Timeout: 60}})
		require.NoError(t, err)
		refused, err = s.AttachSender(LinkOptions{Name: "r", Address: "nope"})
		require.NoError(t, err)
	}
	p := newPipe(t, Config{}, Config{}, cli, srv)
	p.run()
	require.Equal(t, 3, srv.calls)

	assert.Equal(t, "tmp-d", string(dyn.RemoteSource().Address))
	assert.True(t, dyn.RemoteSource().Dynamic)
	assert.Equal(t, frame.ExpiryNever, durable.RemoteSource().ExpiryPolicy)
	assert.Equal(t, "topic", string(durable.RemoteSource().Address))
	assert.False(t, refused.RemoteAttach().Target.Present(), "the refusal's answer has a target")
	require.NotNil(t, refused.Err())
	assert.Equal(t, frame.CondNotFound, refused.Err().Condition)

	// The server's handler heard of the two links it answered, not of the
	// one it refused.
	attaches := 0
	for _, e := range srv.log {
		if len(e) > 6 && e[:6] == "attach" {
			attaches++
		}
		assert.NotContains(t, e, "detach", "the refused link was reported")
	}
	assert.Equal(t, 2, attaches, srv.log)
}

// later is a server Handler that holds its answer to every attach whose
// link name starts with "later" (AnswerLater), keeping the links.
type later struct {
	recorder
	held map[string]*Link
}

func (h *later) AnswerAttach(l *Link, src *frame.Source, tgt *frame.Target) *Error {
	if len(l.Name()) >= 5 && string(l.Name()[:5]) == "later" {
		if err := l.AnswerLater(); err != nil {
			return NewError(frame.CondInternalError, err.Error())
		}
		h.held[string(l.Name())] = l
	}
	return nil
}

// TestAnswerLater: an answer the Answerer holds (AnswerLater) is written
// when it calls Answer, not before: the client's links wait, the server's
// handler hears nothing of them; then the attach and OnLinkAttach, with
// the credit the client granted meanwhile reported by an OnFlow; a
// refusal through Answer is never reported; a link the client detaches
// first is answered at once as refused, and Answer on it is ErrState.
func TestAnswerLater(t *testing.T) {
	srv := &later{held: map[string]*Link{}}
	cli := &recorder{}
	var recv, snd, gone *Link
	cli.onOpen = func(c *Conn) {
		s, err := c.Begin()
		require.NoError(t, err)
		recv, err = s.AttachReceiver(LinkOptions{Name: "later-r", Address: "q"})
		require.NoError(t, err)
		require.NoError(t, recv.Flow(5)) // before the answer
		snd, err = s.AttachSender(LinkOptions{Name: "later-s", Address: "q"})
		require.NoError(t, err)
		gone, err = s.AttachSender(LinkOptions{Name: "later-gone", Address: "q"})
		require.NoError(t, err)
	}
	p := newPipe(t, Config{}, Config{}, cli, srv)
	p.run()
	require.Len(t, srv.held, 3)
	for _, e := range append(srv.log, cli.log...) {
		assert.NotContains(t, e, "attach", "an attach reported before the answer")
	}
	assert.Equal(t, ErrState, srv.held["later-r"].Detach(nil), "a held link is not the handler's to act on yet")

	require.NoError(t, gone.Detach(nil))
	p.run()
	assert.Contains(t, cli.log, "detach later-gone <nil>")
	assert.Equal(t, ErrState, srv.held["later-gone"].Answer(nil))

	require.NoError(t, srv.held["later-r"].Answer(nil))
	require.NoError(t, srv.held["later-s"].Answer(NewError(frame.CondNotFound, "no node q")))
	p.run()
	assert.Equal(t, ErrState, srv.held["later-r"].Answer(nil), "answered once")
	assert.Equal(t, []string{"attach later-r sender=true", "flow later-r credit=5"}, srv.log[len(srv.log)-2:])
	for _, e := range srv.log {
		assert.NotContains(t, e, "later-s", "the refused link was reported")
		assert.NotContains(t, e, "later-gone", "the link the peer detached first was reported")
	}
	assert.Contains(t, cli.log, "attach later-r sender=false")
	require.NotNil(t, snd.Err())
	assert.Equal(t, frame.CondNotFound, snd.Err().Condition)
	assert.False(t, snd.RemoteAttach().Target.Present(), "the refusal's answer has a target")

	var l *Link
	for _, x := range srv.held {
		l = x
	}
	assert.Equal(t, ErrState, l.AnswerLater(), "outside AnswerAttach")
}
