package amqptest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/amqptest"
	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/stretchr/testify/require"
)

// sender sends one message to an address and reports its outcome.
type sender struct {
	engine.NopHandler
	addr    string
	payload []byte
	outcome chan string
}

func (s *sender) OnConnectionOpen(c *engine.Conn) {
	sess, _ := c.Begin()
	sess.AttachSender(engine.LinkOptions{Address: s.addr, Unsettled: true})
}

func (s *sender) OnFlow(l *engine.Link) {
	if s.payload != nil {
		l.Send(nil, s.payload, false)
		s.payload = nil
	}
}

func (s *sender) OnDisposition(l *engine.Link, d engine.Disposition) {
	s.outcome <- d.State.Type.String()
}

func TestNewServer(t *testing.T) {
	srv := amqptest.NewServer(t, &broker.Options{MaxMessages: 10})
	require.True(t, strings.HasPrefix(srv.URL, "amqp://127.0.0.1:"), srv.URL)
	h := &sender{addr: "orders", payload: encode.AppendBinary([]byte{0, 0x53, 0x75}, []byte("order 1")),
		outcome: make(chan string, 1)}
	d, err := driver.Dial(context.Background(), "tcp", srv.Addr, engine.Config{}, nil, h)
	require.NoError(t, err)
	defer d.Close()
	select {
	case o := <-h.outcome:
		require.Equal(t, "accepted", o)
	case <-time.After(20 * time.Second):
		t.Fatal("no outcome")
	}
	q, ok := srv.Queue("orders")
	require.True(t, ok)
	require.Equal(t, 1, q.Depth)
	require.Len(t, srv.Queues(), 1)
}

// TestClosedAtCleanup: the server is gone once its test has ended.
func TestClosedAtCleanup(t *testing.T) {
	var addr string
	t.Run("inner", func(t *testing.T) {
		addr = amqptest.NewServer(t, nil).Addr
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h := &sender{outcome: make(chan string, 1)}
	d, err := driver.Dial(ctx, "tcp", addr, engine.Config{}, nil, h)
	if err == nil {
		// a port reused at once by another listener is possible, not a broker of ours
		d.Close()
		require.Error(t, d.Wait())
	}
}
