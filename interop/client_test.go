package interop

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/require"
)

// TestClient runs package client against real peers: examples/broker,
// RabbitMQ (AMQPSAX_BROKER, as .ci/run starts it), Qpid Proton's python
// as a server (proton/client_server.py, a proton.reactor Container listening)
// and rhea as a server (rhea/client_server.js). With each: n messages
// sent (pipelined with SendAsync, and some with Send), received back
// with Receive and checked byte for byte (body, message-id, application
// property, in order), accepted; and a link the peer refuses, whose error
// must name the peer's condition.
//
//	go test -v -run TestClient .                          (in interop/)
//	AMQPSAX_BROKER=127.0.0.1:5672 go test -v -run TestClient .
func TestClient(t *testing.T) {
	type peer struct {
		name  string
		start func(t *testing.T) (url, prefix string)
		n     int
		// refused is an address the peer refuses a receiver on, and
		// cond the condition it gives.
		refused, cond string
	}
	peers := []peer{
		{name: "examples-broker", n: 10000, refused: refusedBothWays, cond: "amqp:invalid-field",
			start: func(t *testing.T) (string, string) {
				return "amqp://" + brokerUser + ":" + brokerPass + "@" + startExampleBroker(t), ""
			}},
		{name: "rabbitmq", n: 10000, refused: "/exchange/amqpsax-no-such-exchange-" + runID, cond: "amqp:not-found",
			start: func(t *testing.T) (string, string) {
				addr := os.Getenv("AMQPSAX_BROKER")
				if addr == "" {
					skip(t, "AMQPSAX_BROKER is not set (start RabbitMQ with `bash .ci/broker start`)")
				}
				return "amqp://guest:guest@" + addr, "/queue/"
			}},
		{name: "proton-server", n: 1000, refused: "refuse/x", cond: "amqp:not-found", start: startProtonServer},
		{name: "rhea-server", n: 1000, refused: "refuse/x", cond: "amqp:not-found", start: startRheaServer},
	}
	for _, p := range peers {
		t.Run(p.name, func(t *testing.T) {
			url, prefix := p.start(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			start := time.Now()
			clientRound(ctx, t, url, prefix+"amqpsax-client-"+p.name+"-"+runID, p.n)
			t.Logf("%s: %d messages each way in %v", p.name, p.n, time.Since(start).Round(time.Millisecond))
			clientRefused(ctx, t, url, p.refused, p.cond)
		})
	}
}

func clientMsg(i int) *message.Message {
	var vs message.Values
	body := make([]byte, 100+i%200)
	for k := range body {
		body[k] = byte(i + k)
	}
	return &message.Message{
		Properties:            &message.Properties{MessageID: message.UlongID(uint64(i)), Subject: []byte("amqpsax-client")},
		ApplicationProperties: message.EntriesOf(message.Field{Key: vs.String("i"), Value: vs.Long(int64(i))}),
		Body:                  message.Body{Kind: message.BodyData, Data: [][]byte{body}},
	}
}

// clientRound sends n messages to queue and receives them back.
func clientRound(ctx context.Context, t *testing.T, url, queue string, n int) {
	c, err := client.Dial(ctx, url, &client.ConnOptions{AllowInsecurePlain: true}) // local peers
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, queue, nil)
	require.NoError(t, err)
	// The first ten one by one, the rest pipelined, 500 in flight.
	const window = 500
	var ring [window]client.Pending
	for i := range n {
		if i < 10 {
			require.NoError(t, snd.Send(ctx, clientMsg(i), nil), "message %d", i)
			continue
		}
		if i >= 10+window {
			require.NoError(t, ring[i%window].Wait(ctx), "message %d", i-window)
		}
		ring[i%window], err = snd.SendAsync(ctx, clientMsg(i), nil)
		require.NoError(t, err)
	}
	for i := max(10, n-window); i < n; i++ {
		require.NoError(t, ring[i%window].Wait(ctx), "message %d", i)
	}
	require.NoError(t, snd.Close(ctx))

	rcv, err := s.NewReceiver(ctx, queue, &client.ReceiverOptions{Credit: 200})
	require.NoError(t, err)
	for i := range n {
		d, err := rcv.Receive(ctx, nil)
		require.NoError(t, err, "receiving message %d", i)
		want := clientMsg(i)
		m := &d.Message
		require.NotNil(t, m.Properties, "message %d", i)
		require.Equal(t, uint64(i), m.Properties.MessageID.Any(), "message %d: in order", i)
		require.Equal(t, want.Body.Data, m.Body.Data, "message %d: body", i)
		// (rhea encodes it again as the smallest int that holds it)
		require.Equal(t, int64(i), anyInt(m.ApplicationProperties.Get("i").Any()), "message %d: application property", i)
		require.NoError(t, d.Accept(ctx))
	}
	// Nothing more: the queue is empty.
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err = rcv.Receive(short, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, rcv.Close(ctx))
	require.NoError(t, s.Close(ctx))
}

// clientRefused attaches to an address the peer refuses: the error must
// carry its condition.
func clientRefused(ctx context.Context, t *testing.T, url, addr, cond string) {
	c, err := client.Dial(ctx, url, &client.ConnOptions{AllowInsecurePlain: true}) // local peers
	require.NoError(t, err)
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	_, err = s.NewReceiver(ctx, addr, nil)
	var e *client.Error
	require.True(t, errors.As(err, &e), "refused receiver on %q: %v", addr, err)
	require.Equal(t, cond, e.Condition, err.Error())
	require.True(t, e.Remote)
	t.Logf("refused receiver on %q: %v", addr, err)
	// A sender too, on a session of its own (RabbitMQ ends the session).
	s, err = c.NewSession(ctx, nil)
	require.NoError(t, err)
	_, err = s.NewSender(ctx, addr, nil)
	require.True(t, errors.As(err, &e), "refused sender on %q: %v", addr, err)
	require.Equal(t, cond, e.Condition, err.Error())
	t.Logf("refused sender on %q: %v", addr, err)
}

// startPeerProcess runs a server that prints "listening on HOST:PORT"
// and returns that address; it is stopped when t ends.
func startPeerProcess(t *testing.T, prog string, args ...string) string {
	cmd := exec.Command(prog, args...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("%s said:\n%s", prog, stderr.String())
		}
	})
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l := <-lines:
			if addr, ok := strings.CutPrefix(l, "listening on "); ok {
				return addr
			}
		case <-exited:
			t.Fatalf("%s %v exited before listening: %s", prog, args, stderr.String())
		case <-timeout:
			t.Fatalf("%s %v does not listen", prog, args)
		}
	}
}

// startProtonServer runs proton/client_server.py, a store-and-forward server on
// Qpid Proton's python binding (a proton.reactor Container listening).
func startProtonServer(t *testing.T) (string, string) {
	if err := exec.Command(python, "-c", "import proton").Run(); err != nil {
		skip(t, "Debian's python3-qpid-proton is not installed for %s", python)
	}
	port := strings.TrimPrefix(freeAddr(t), "127.0.0.1:")
	return "amqp://" + startPeerProcess(t, python, filepath.Join("proton", "client_server.py"), port), ""
}

// startRheaServer runs rhea/client_server.js, a store-and-forward broker
// on rhea's container.listen.
func startRheaServer(t *testing.T) (string, string) {
	if _, err := exec.LookPath("node"); err != nil {
		skip(t, "node is not installed")
	}
	needNodeModule(t, "rhea")
	return "amqp://" + startPeerProcess(t, "node", filepath.Join("rhea", "client_server.js")), ""
}

// anyInt is an integer of any AMQP type as an int64 (-1 for anything
// else).
func anyInt(v any, err error) int64 {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		return int64(x)
	}
	return -1
}
