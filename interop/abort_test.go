package interop

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
)

// abortSize is the delivery abortServer aborts for each peer: more
// transfers of about 512 bytes than the peer's session window lets
// through before it reopens (go-amqp's is 5,000 frames, rhea's 2,048;
// Proton's and uAMQP-C's are set to 16, and uAMQP-C refuses messages
// over 1 MiB by default), so that it is still being sent when the server
// aborts it.
var abortSize = map[string]int{"go-amqp": 3 << 20, "rhea": 3 << 20, "proton": 64 << 10, "uamqp": 64 << 10}

// abortServer is an engine server that, on each link a peer's receiver
// attaches, sends one delivery (big), unsettled, and aborts
// it (Link.Abort) while the peer's session window holds the rest back:
// the peer has its first transfers and then one with aborted set (part 2
// §2.6.12). Then it sends one whole message, "after-abort", which the
// peer must accept. What each link saw is kept for the test.
type abortServer struct {
	engine.NopHandler
	big   []byte        // the message to abort
	done  chan struct{} // closed when a peer accepts after-abort
	mu    sync.Mutex
	links map[*engine.Link]*abortLink
}

type abortLink struct {
	stage     int    // 0: nothing sent; 1: aborted; 2: after-abort sent
	pended    bool   // the big delivery did not go out whole
	after     uint32 // after-abort's delivery-id
	accepted  bool   // the peer accepted after-abort
	unsettled int    // the session's unsettled deliveries once after-abort is accepted
	err       error
}

func msgBytes(body []byte) []byte {
	m := message.Message{Body: message.Body{Kind: message.BodyData, Data: [][]byte{body}}}
	b, err := m.Append(nil)
	if err != nil {
		panic(err)
	}
	return b
}

var abortAfter = msgBytes([]byte("after-abort"))

func (s *abortServer) link(l *engine.Link) *abortLink {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.links == nil {
		s.links = make(map[*engine.Link]*abortLink)
	}
	a := s.links[l]
	if a == nil {
		a = &abortLink{}
		s.links[l] = a
	}
	return a
}

func (s *abortServer) OnFlow(l *engine.Link) {
	if !l.IsSender() || l.Credit() == 0 {
		return
	}
	a := s.link(l)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch a.stage {
	case 0:
		if _, err := l.Send([]byte("big"), s.big, false); err != nil {
			a.err = fmt.Errorf("send the big delivery: %w", err)
			return
		}
		// Abort fails with ErrState when the delivery went out whole.
		a.pended = l.Abort() == nil
		a.stage = 1
		fallthrough
	case 1:
		id, err := l.Send([]byte("after"), abortAfter, false)
		if errors.Is(err, engine.ErrBusy) {
			return // the abort waits for the window; OnFlow comes again
		}
		if err != nil {
			a.err = fmt.Errorf("send after-abort: %w", err)
			return
		}
		a.after, a.stage = id, 2
	}
}

func (s *abortServer) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	a := s.link(l)
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.stage == 2 && d.ID == a.after && d.State.Type == frame.StateAccepted {
		a.accepted = true
		a.unsettled = l.Session().Unsettled()
		close(s.done)
	}
}

// TestAbortPeers: the engine's outgoing aborted multi-frame delivery
// (Link.Abort) against every peer's receiver here: Azure/go-amqp v1.7.0,
// Qpid Proton's python binding, rhea and uAMQP-C. Each is sent a delivery
// in transfers of about 512 bytes that the server aborts part way, then
// the message "after-abort". A peer that honours the abort gives its
// application only "after-abort" and accepts it, and the aborted
// delivery, implicitly settled, is not left unsettled at the server:
// go-amqp and Proton do. rhea and uAMQP-C do not (see doc/peers.md); the
// test holds what they do, so that a change in them is seen.
func TestAbortPeers(t *testing.T) {
	for _, peer := range []string{"go-amqp", "proton", "rhea", "uamqp"} {
		t.Run(peer, func(t *testing.T) {
			srv := &abortServer{big: msgBytes(make([]byte, abortSize[peer])), done: make(chan struct{})}
			es := &driver.Server{Config: engine.Config{}, Handler: srv}
			var caFile string
			if peer == "uamqp" {
				cfg, pem, err := SelfSigned()
				require.NoError(t, err)
				es.TLSConfig = cfg
				caFile = filepath.Join(t.TempDir(), "ca.pem")
				require.NoError(t, os.WriteFile(caFile, pem, 0o600))
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			go es.Serve(ln)
			t.Cleanup(func() { es.Close() })
			addr := ln.Addr().String()

			var lines []string
			switch peer {
			case "go-amqp":
				lines = abortGoAMQP(t, addr)
			default:
				lines = abortRun(t, peer, addr, caFile)
			}
			t.Logf("%s: %q", peer, lines)
			if peer != "rhea" {
				// The peer's accept may still be on its way when it ends.
				select {
				case <-srv.done:
				case <-time.After(10 * time.Second):
				}
			}

			srv.mu.Lock()
			defer srv.mu.Unlock()
			require.Len(t, srv.links, 1, "links attached")
			for _, a := range srv.links {
				require.NoError(t, a.err)
				require.True(t, a.pended, "the big delivery went out whole: the peer's window let it through, so nothing was aborted")
				switch peer {
				case "rhea":
					// rhea 3.0.5 never reopens its session window while a
					// delivery is incomplete (lib/session.js's
					// Incoming.process writes a flow only when something
					// else happens on the connection), so the abort, which
					// needs a place in the window like any transfer, never
					// reaches it; nor does rhea read the aborted field.
					assert.Empty(t, lines, "rhea now gets past a delivery longer than its window: update doc/peers.md and this test")
					return
				case "uamqp":
					// uAMQP-C ignores the aborted field: it gives its
					// application the aborted delivery as a message with
					// no body, settled, before after-abort.
					assert.Equal(t, []string{"message 1 0 ", "message 2 11 after-abort"}, lines, "uAMQP-C changed how it takes an aborted delivery: update doc/peers.md and this test")
					assert.True(t, a.accepted, "the peer accepted after-abort")
					assert.Zero(t, a.unsettled, "deliveries left unsettled at the server")
					return
				}
				assert.Equal(t, []string{"message 1 11 after-abort"}, lines, "what the peer's application was given")
				assert.True(t, a.accepted, "the peer accepted after-abort")
				assert.Zero(t, a.unsettled, "deliveries left unsettled at the server: the aborted one must be settled by its abort")
			}
		})
	}
}

// abortRun runs a peer's abort receiver script and returns its message
// lines, normalized to "message N BYTES BODY".
func abortRun(t *testing.T, peer, addr, caFile string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var cmd *exec.Cmd
	switch peer {
	case "proton", "uamqp":
		pkg := map[string]string{"proton": "python3-qpid-proton", "uamqp": "python3-uamqp"}[peer]
		if err := exec.Command(python, "-c", "import "+peer).Run(); err != nil {
			skip(t, "Debian's %s is not installed for %s", pkg, python)
		}
		cmd = exec.CommandContext(ctx, python, filepath.Join(peer, "abort_receiver.py"))
	case "rhea":
		needNodeModule(t, "rhea")
		cmd = exec.CommandContext(ctx, "node", filepath.Join("rhea", "abort_receiver.js"))
	}
	// rhea is known to stall (see TestAbortPeers): 5 s show it.
	cmd.Env = append(os.Environ(), "AMQP_ADDR="+addr, "AMQP_CA="+caFile, "ABORT_WAIT=5")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s: %s", peer, out)
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "message ") {
			lines = append(lines, normalizeMessageLine(l))
		} else if l = strings.TrimSpace(l); l != "" {
			t.Logf("%s: %s", peer, l)
			if peer == "rhea" && (strings.HasPrefix(l, "exception") || strings.HasPrefix(l, "error")) {
				lines = append(lines, l)
			}
		}
	}
	return lines
}

// normalizeMessageLine turns "message 1 11 b'after-abort'" (python) or
// `message 1 11 "after-abort"` (node) into "message 1 11 after-abort".
func normalizeMessageLine(l string) string {
	f := strings.SplitN(l, " ", 4)
	if len(f) < 4 {
		return l
	}
	body := strings.TrimPrefix(f[3], "b")
	body = strings.Trim(body, `'"`)
	return strings.Join([]string{f[0], f[1], f[2], body}, " ")
}

// abortGoAMQP receives with go-amqp: frames of 513 bytes (v1.7.0 ignores a MaxFrameSize of exactly 512: it keeps its default unless the value is above 512; its window is
// 5,000 frames, not settable), until after-abort or 20 s.
func abortGoAMQP(t *testing.T, addr string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := amqp.Dial(ctx, "amqp://"+addr, &amqp.ConnOptions{MaxFrameSize: 513, SASLType: amqp.SASLTypeAnonymous()})
	require.NoError(t, err)
	defer conn.Close()
	s, err := conn.NewSession(ctx, nil)
	require.NoError(t, err)
	r, err := s.NewReceiver(ctx, "abort-q", &amqp.ReceiverOptions{Credit: 10})
	require.NoError(t, err)
	var lines []string
	for i := 1; ; i++ {
		m, err := r.Receive(ctx, nil)
		if err != nil {
			lines = append(lines, "error "+err.Error())
			return lines
		}
		body := m.GetData()
		lines = append(lines, fmt.Sprintf("message %d %d %s", i, len(body), body[:min(16, len(body))]))
		require.NoError(t, r.AcceptMessage(ctx, m))
		if string(body) == "after-abort" {
			return lines
		}
	}
}
