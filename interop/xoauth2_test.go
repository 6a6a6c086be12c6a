package interop

import (
	"context"
	"net"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/stretchr/testify/require"
)

type identities struct {
	engine.NopHandler
	ids chan string
}

func (h identities) OnConnectionOpen(c *engine.Conn) { h.ids <- c.Identity() }

// TestGoAMQPXOAUTH2: go-amqp v1.7.0's XOAUTH2 client against the engine's
// XOAUTH2 server and the application's token checker: the good token
// opens (and a session begins), a bad one is refused (after the error
// challenge go-amqp answers with an empty response).
func TestGoAMQPXOAUTH2(t *testing.T) {
	checked := make(chan string, 4)
	check := func(user, token string) (string, error) {
		checked <- user + " " + token
		if token == "good-token" {
			return "", nil
		}
		return "", engine.ErrAuth
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	h := identities{ids: make(chan string, 4)}
	srv := &driver.Server{Handler: h, Config: engine.Config{Auth: engine.Mechanisms(
		engine.PlainServer(nil), engine.XOAUTH2Server(check))}}
	go srv.Serve(ln)
	defer srv.Close()
	url := "amqp://" + ln.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	conn, err := amqp.Dial(ctx, url, &amqp.ConnOptions{SASLType: amqp.SASLTypeXOAUTH2("alice", "good-token", 512)})
	require.NoError(t, err)
	s, err := conn.NewSession(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, s.Close(ctx))
	require.NoError(t, conn.Close())
	require.Equal(t, "alice good-token", <-checked)
	require.Equal(t, "alice", <-h.ids)

	_, err = amqp.Dial(ctx, url, &amqp.ConnOptions{SASLType: amqp.SASLTypeXOAUTH2("alice", "bad-token", 512)})
	require.Error(t, err)
	require.Equal(t, "alice bad-token", <-checked)
	require.Empty(t, h.ids, "a connection opened with the bad token")
	t.Logf("good token: opened as alice; bad token refused: %v", err)
}
