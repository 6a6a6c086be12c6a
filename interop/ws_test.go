package interop

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/ws"
	"github.com/stretchr/testify/require"
)

// needRheaWS makes sure rhea and node's ws package are installed in
// interop/rhea (npm ci from its package-lock.json).
func needRheaWS(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		skip(t, "node is not installed")
	}
	needNodeModule(t, "ws")
}

// wsEcho is the engine's server of the WebSocket test: every message
// received goes back on the connection's sending link.
type wsEcho struct{ engine.NopHandler }

type wsEchoConn struct {
	out     *engine.Link
	pending [][]byte
	n       int
}

func (wsEcho) OnConnectionOpen(c *engine.Conn) { c.Context = &wsEchoConn{} }
func (wsEcho) OnLinkAttach(l *engine.Link) {
	if l.IsSender() {
		l.Conn().Context.(*wsEchoConn).out = l
	}
}
func (wsEcho) OnDelivery(l *engine.Link, d engine.Delivery) {
	ec := l.Conn().Context.(*wsEchoConn)
	ec.pending = append(ec.pending, append([]byte(nil), d.Payload...))
	ec.pump()
}
func (wsEcho) OnFlow(l *engine.Link)     { l.Conn().Context.(*wsEchoConn).pump() }
func (wsEcho) OnWritable(c *engine.Conn) { c.Context.(*wsEchoConn).pump() }

func (ec *wsEchoConn) pump() {
	for ec.out != nil && len(ec.pending) > 0 {
		if _, err := ec.out.Send(nil, ec.pending[0], true); err != nil {
			return
		}
		ec.pending, ec.n = ec.pending[1:], ec.n+1
	}
}

// TestRheaWebSocket: rhea over WebSockets (node's ws package) sends and
// receives 1,000 messages through the engine's server on ws.Listen; the
// engine's client on ws.Dial does the same through rhea's WebSocket
// server.
func TestRheaWebSocket(t *testing.T) {
	needRheaWS(t)
	t.Run("rhea client, engine server", func(t *testing.T) {
		ln, err := ws.Listen("127.0.0.1:0", nil)
		require.NoError(t, err)
		srv := &driver.Server{Handler: wsEcho{}, Config: engine.Config{Credit: 100, AutoAccept: true}}
		go srv.Serve(ln)
		defer srv.Close()
		cmd := exec.Command("node", "rhea/ws_client.js")
		cmd.Env = append(os.Environ(), "AMQP_WS_URL=ws://"+ln.Addr().String()+"/", "COUNT=1000")
		out, err := cmd.CombinedOutput()
		t.Log(strings.TrimSpace(string(out)))
		require.NoError(t, err)
		require.Contains(t, string(out), "sent 1000 received 1000")
	})
	t.Run("client package, rhea server", func(t *testing.T) {
		port := startRheaWS(t)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		c, err := client.Dial(ctx, "ws://127.0.0.1:"+port+"/", &client.ConnOptions{Dialer: ws.Dialer(nil)})
		require.NoError(t, err)
		defer c.Close()
		s, err := c.NewSession(ctx, nil)
		require.NoError(t, err)
		snd, err := s.NewSender(ctx, "ws-echo", nil)
		require.NoError(t, err)
		rcv, err := s.NewReceiver(ctx, "ws-echo", &client.ReceiverOptions{Credit: 100})
		require.NoError(t, err)
		const n = 1000
		sent := make(chan error, 1)
		go func() {
			for i := range n {
				m := &message.Message{Body: message.Body{Kind: message.BodyData, Data: [][]byte{fmt.Appendf(nil, "client over a WebSocket %d", i)}}}
				if err := snd.Send(ctx, m, nil); err != nil {
					sent <- fmt.Errorf("send %d: %w", i, err)
					return
				}
			}
			sent <- nil
		}()
		for i := range n {
			d, err := rcv.Receive(ctx, nil)
			if err != nil {
				select {
				case e := <-sent:
					t.Fatalf("receive %d: %v; sender: %v", i, err, e)
				default:
					t.Fatalf("receive %d: %v; sender still sending", i, err)
				}
			}
			require.True(t, bytes.Contains(d.Payload(), fmt.Appendf(nil, "client over a WebSocket %d", i)), "message %d: %q", i, d.Payload())
			require.NoError(t, d.Accept(ctx))
		}
		require.NoError(t, <-sent)
		t.Logf("client package: %d messages sent (each accepted) and %d received through rhea's WebSocket server", n, n)
	})
	t.Run("engine client, rhea server", func(t *testing.T) {
		cmd := exec.Command("node", "rhea/ws_server.js")
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		lines := make(chan string, 16)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		var port string
		select {
		case l := <-lines:
			_, err := fmt.Sscanf(l, "listening on %s", &port)
			require.NoError(t, err, l)
		case <-time.After(15 * time.Second):
			t.Fatal("rhea's WebSocket server did not start")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		nc, err := ws.Dial(ctx, "ws://127.0.0.1:"+port+"/", nil)
		require.NoError(t, err)
		rt := newRoundTrip("ws-echo", 1000)
		rt.loose = true // rhea re-encodes what it echoes
		d := driver.NewDriver(nc, engine.NewClient(engine.Config{}, rt))
		go d.Run(ctx)
		select {
		case err := <-rt.done:
			require.NoError(t, err)
		case <-ctx.Done():
			t.Fatal("time-out")
		}
		require.NoError(t, d.Wait())
		select {
		case l := <-lines:
			t.Logf("engine client: %d messages sent and %d received through rhea's WebSocket server (rhea: %s)", rt.sent, rt.got, l)
		case <-time.After(5 * time.Second):
			t.Logf("engine client: %d messages sent and %d received through rhea's WebSocket server", rt.sent, rt.got)
		}
	})
}

// startRheaWS starts rhea/ws_server.js for the test and returns its port.
func startRheaWS(t *testing.T) string {
	cmd := exec.Command("node", "rhea/ws_server.js")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case first <- sc.Text():
			default:
			}
		}
	}()
	var port string
	select {
	case l := <-first:
		_, err := fmt.Sscanf(l, "listening on %s", &port)
		require.NoError(t, err, l)
	case <-time.After(15 * time.Second):
		t.Fatal("rhea's WebSocket server did not start")
	}
	return port
}
