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
