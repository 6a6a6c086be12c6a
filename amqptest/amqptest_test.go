package amqptest_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/amqptest"
	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
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

func (s *sender) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
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

func body(s string) *message.Message {
	return &message.Message{Body: message.Body{Kind: message.BodyData, Data: [][]byte{[]byte(s)}}}
}

func dial(t *testing.T, srv *amqptest.Server) (*client.Conn, *client.Session) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), amqptest.Timeout)
	defer cancel()
	c, err := client.Dial(ctx, srv.URL, &client.ConnOptions{TLSConfig: srv.ClientTLS()})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	return c, s
}

// TestSeedPeekWait: Publish seeds a queue, Peek reads it without taking,
// WaitDepth and WaitMessage wait for what a client sends.
func TestSeedPeekWait(t *testing.T) {
	srv := amqptest.NewServer(t, nil)
	srv.Publish("orders", body("one"), body("two"))
	require.Equal(t, 2, srv.WaitDepth("orders", 2).Depth)
	ms := srv.Peek("orders", -1)
	require.Len(t, ms, 2)
	require.Equal(t, "two", string(ms[1].Body.Data[0]))
	require.Len(t, srv.Peek("orders", 1), 1)

	_, s := dial(t, srv)
	ctx := context.Background()
	go func() {
		snd, err := s.NewSender(ctx, "later", nil)
		if err == nil {
			snd.Send(ctx, body("three"), nil)
		}
	}()
	require.Equal(t, "three", string(srv.WaitMessage("later").Body.Data[0]))

	rcv, err := s.NewReceiver(ctx, "orders", nil)
	require.NoError(t, err)
	d, err := rcv.Receive(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, "one", string(d.Message.Body.Data[0]))
	require.NoError(t, d.Accept(ctx))
	srv.Wait("orders", func(q broker.QueueStats) bool { return q.Accepted == 1 && q.Unsettled == 1 })
}

// TestDrop: Drop cuts one connection, DropAll every one; the clients see
// their connections lost.
func TestDrop(t *testing.T) {
	srv := amqptest.NewServer(t, nil)
	ctx := context.Background()
	var rcvs []*client.Receiver
	for range 3 {
		_, s := dial(t, srv)
		r, err := s.NewReceiver(ctx, "q", nil)
		require.NoError(t, err)
		rcvs = append(rcvs, r)
	}
	peers := srv.Peers()
	require.Len(t, peers, 3)
	require.NotEmpty(t, peers[0].ContainerID)
	require.True(t, srv.Drop(peers[0].ID))
	_, err := rcvs[0].Receive(ctx, nil)
	require.Error(t, err)
	srv.Wait("q", func(q broker.QueueStats) bool { return q.Consumers == 2 })
	require.True(t, srv.DropAll())
	for _, r := range rcvs[1:] {
		_, err := r.Receive(ctx, nil)
		require.Error(t, err)
	}
	srv.Wait("q", func(q broker.QueueStats) bool { return q.Consumers == 0 })
	require.False(t, srv.Drop(peers[2].ID+100), "no such peer")
}

// TestRefuseNextAttach: the next attach is refused with the error given,
// the one after it served.
func TestRefuseNextAttach(t *testing.T) {
	srv := amqptest.NewServer(t, nil)
	_, s := dial(t, srv)
	ctx := context.Background()
	srv.RefuseNextAttach(engine.NewError(frame.CondUnauthorizedAccess, "no"))
	_, err := s.NewSender(ctx, "q", nil)
	var ce *client.Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "amqp:unauthorized-access", ce.Condition)
	_, err = s.NewSender(ctx, "q", nil)
	require.NoError(t, err)
}

// TestHoldNextAttach: the answer to the next attach waits for release.
func TestHoldNextAttach(t *testing.T) {
	srv := amqptest.NewServer(t, nil)
	_, s := dial(t, srv)
	ctx := context.Background()
	attached, release := srv.HoldNextAttach()
	done := make(chan error, 1)
	go func() {
		_, err := s.NewSender(ctx, "q", nil)
		done <- err
	}()
	<-attached
	select {
	case err := <-done:
		t.Fatalf("attach answered while held: %v", err)
	default:
	}
	release()
	require.NoError(t, <-done)
}

// TestTLSServer: a client that trusts ClientTLS's pool talks amqps to
// NewTLSServer.
func TestTLSServer(t *testing.T) {
	srv := amqptest.NewTLSServer(t, nil)
	require.True(t, strings.HasPrefix(srv.URL, "amqps://127.0.0.1:"), srv.URL)
	require.NotNil(t, srv.Certificate)
	_, s := dial(t, srv)
	ctx := context.Background()
	snd, err := s.NewSender(ctx, "q", nil)
	require.NoError(t, err)
	require.NoError(t, snd.Send(ctx, body("over tls"), nil))
	require.Equal(t, "over tls", string(srv.WaitMessage("q").Body.Data[0]))

	// A client that does not trust it is refused.
	_, err = client.Dial(ctx, srv.URL, nil)
	require.Error(t, err)
}

// logT records what is logged to it.
type logT struct {
	testing.TB
	mu    sync.Mutex
	lines []string
}

func (l *logT) Log(a ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprint(a...))
	l.mu.Unlock()
	l.TB.Log(a...)
}

// TestLog: the broker's log goes to t.Log.
func TestLog(t *testing.T) {
	lt := &logT{TB: t}
	srv := amqptest.NewServer(lt, nil)
	c, _ := dial(t, srv)
	c.Close()
	srv.Close()
	lt.mu.Lock()
	defer lt.mu.Unlock()
	require.NotEmpty(t, lt.lines)
	require.True(t, strings.HasPrefix(lt.lines[0], "amqptest: open "), lt.lines[0])
}

// TestWaitConsumers: Wait wakes for a link attached, with no message
// sent.
func TestWaitConsumers(t *testing.T) {
	srv := amqptest.NewServer(t, nil)
	_, s := dial(t, srv)
	go s.NewReceiver(context.Background(), "q", nil)
	require.Equal(t, 1, srv.Wait("q", func(q broker.QueueStats) bool { return q.Consumers == 1 }).Consumers)
}
