package interop

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/client"
	"github.com/stretchr/testify/require"
)

// TestClientTxnRefused: RabbitMQ has no transaction coordinator. It
// refuses package client's coordinator link, and Session.NewTransaction
// returns that refusal as an *Error, at once (no hang), with the
// connection and its other links going on.
//
//	AMQPSAX_BROKER=127.0.0.1:5672 go test -v -run TestClientTxnRefused .
func TestClientTxnRefused(t *testing.T) {
	addr := os.Getenv("AMQPSAX_BROKER")
	if addr == "" {
		skip(t, "AMQPSAX_BROKER is not set (start RabbitMQ with `bash .ci/broker start`)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, "amqp://guest:guest@"+addr, &client.ConnOptions{AllowInsecurePlain: true}) // a local broker
	require.NoError(t, err)
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	tx, err := s.NewTransaction(ctx)
	require.Nil(t, tx)
	require.NotErrorIs(t, err, context.DeadlineExceeded, "refused, not left waiting")
	var e *client.Error
	require.ErrorAs(t, err, &e, "RabbitMQ refuses the coordinator link")
	require.True(t, e.Remote)
	require.NotEmpty(t, e.Condition)
	t.Logf("RabbitMQ: %v", err) // 3.x ends the session: amqp:not-implemented
	if e.Scope != client.ScopeLink {
		// The session was ended with it: a new one.
		s, err = c.NewSession(ctx, nil)
		require.NoError(t, err)
	}
	snd, err := s.NewSender(ctx, "/queue/amqpsax-client-txn-"+runID, nil)
	require.NoError(t, err, "the connection goes on")
	require.NoError(t, snd.Close(ctx))
}
