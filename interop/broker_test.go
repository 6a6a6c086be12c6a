package interop

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/interop/goamqp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// python is Debian's python: python3-qpid-proton and python3-uamqp are
// installed for it, not for whatever python3 comes first on PATH.
const python = "/usr/bin/python3"

// TestBroker runs every client of interop/ against the broker named by
// AMQPSAX_BROKER (host:port, e.g. 127.0.0.1:5672 from `.ci/broker start`)
// through a Tap, then checks what the tap recorded: every frame of both
// directions decodes with amqpsax's public packages (dispatch and a full
// stream.Cursor walk), and every delivered message is a sent one, its bare
// message byte-identical (message.Scan on both sides) or changed only by
// one of RabbitMQ 3.10's documented rewrites (doc/peers.md). uAMQP-C cannot
// exchange messages with RabbitMQ 3.10: its messages go through the Proton
// engine broker of interop/proton/broker.py, which the test starts.
//
//	AMQPSAX_BROKER=127.0.0.1:5672 go test -v -run TestBroker ./...   (in interop/)
func TestBroker(t *testing.T) {
	broker := os.Getenv("AMQPSAX_BROKER")
	if broker == "" {
		t.Skip("AMQPSAX_BROKER is not set: no broker to run the clients against (start one with `.ci/broker start`, then AMQPSAX_BROKER=127.0.0.1:5672)")
	}
	t.Setenv("AMQPSAX_RUN", fmt.Sprintf("t%d", time.Now().UnixNano()))
	// Through cmd/amqpspy, unless AMQPSAX_TAP=recorder asks for the plain
	// recording proxy.
	if os.Getenv("AMQPSAX_TAP") != "recorder" {
		defer func(old func(string, *tls.Config) (Tap, error)) { NewTap = old }(NewTap)
		NewTap = NewSpyTap
	}
	for _, c := range []struct {
		name     string
		tls      bool
		upstream func(t *testing.T) string
		run      func(t *testing.T, addr, ca string) error
	}{
		{"go-amqp", false, nil, func(t *testing.T, addr, _ string) error {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var log strings.Builder
			err := goamqp.Run(ctx, addr, &log)
			t.Log(strings.TrimSpace(log.String()))
			return err
		}},
		{"rhea", false, nil, func(t *testing.T, addr, _ string) error {
			needNodeModule(t, "rhea")
			return runClient(t, addr, "", "node", "rhea/client.js")
		}},
		{"proton", false, nil, func(t *testing.T, addr, _ string) error {
			return runClient(t, addr, "", python, "proton/client.py")
		}},
		{"uamqp", true, startProtonBroker, func(t *testing.T, addr, ca string) error {
			return runClient(t, addr, ca, python, "uamqp/client.py", "proton")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			upstream := broker
			if c.upstream != nil {
				upstream = c.upstream(t)
			}
			rabbit := c.upstream == nil
			tap, ca := newTap(t, upstream, c.tls)
			runErr := c.run(t, tap.Addr(), ca)
			require.NoError(t, tap.Close())
			require.NoError(t, runErr, "the %s client failed", c.name)
			checkConns(t, c.name, tap.Conns(), rabbit)
			if spy, ok := tap.(*SpyTap); ok {
				// amqpspy decoded every frame of both directions, and
				// kept up.
				faults, frames, err := spy.Faults()
				require.NoError(t, err)
				assert.Empty(t, faults, "%s: amqpspy reported faults", c.name)
				assert.Positive(t, frames)
				t.Logf("%s: amqpspy printed %d frames, no faults", c.name, frames)
			}
		})
	}
}

func newTap(t *testing.T, upstream string, useTLS bool) (Tap, string) {
	if !useTLS {
		tap, err := NewTap(upstream, nil)
		require.NoError(t, err)
		return tap, ""
	}
	cfg, pem, err := SelfSigned()
	require.NoError(t, err)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(ca, pem, 0o644))
	tap, err := NewTap(upstream, cfg)
	require.NoError(t, err)
	return tap, ca
}

func runClient(t *testing.T, addr, ca string, prog string, args ...string) error {
	if _, err := exec.LookPath(prog); err != nil {
		skip(t, "%s is not installed", prog)
	}
	cmd := exec.Command(prog, args...)
	cmd.Env = append(os.Environ(), "AMQP_ADDR="+addr, "AMQP_CA="+ca)
	out, err := cmd.CombinedOutput()
	t.Log(strings.TrimSpace(string(out)))
	return err
}

// startProtonBroker starts interop/proton/broker.py on a free loopback
// port for the test's lifetime.
func startProtonBroker(t *testing.T) string {
	if err := exec.Command(python, "-c", "import proton, uamqp").Run(); err != nil {
		skip(t, "Debian's python3-qpid-proton and python3-uamqp are needed for the uAMQP client")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(python, "proton/broker.py", fmt.Sprint(port))
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr
		}
		require.True(t, time.Now().Before(deadline), "the Proton broker did not listen on %s", addr)
		time.Sleep(50 * time.Millisecond)
	}
}

// checkConns decodes every frame of every recorded stream and compares
// the messages sent with those delivered.
func checkConns(t *testing.T, name string, conns []Conn, rabbit bool) {
	var clients, servers []*Stream
	frames, msgs := 0, 0
	for i, c := range conns {
		cs, err := Split(c.Client)
		require.NoError(t, err, "connection %d, client to broker", i+1)
		ss, err := Split(c.Server)
		require.NoError(t, err, "connection %d, broker to client", i+1)
		clients, servers = append(clients, cs), append(servers, ss)
		frames += len(cs.Frames) + len(ss.Frames)
		msgs += len(cs.Deliveries) + len(ss.Deliveries)
	}
	cmp := Compare(clients, servers, rabbit)
	t.Logf("%s: %d connections, %d frames, %d messages (%d sent, %d delivered): bare identical %d, identical as whole payloads where message.Scan refused them %d, RabbitMQ rewrites: properties added %d, body sections reversed %d, empty data added %d; message.Scan refusals %d; sent and not delivered %d (rejected or refused by the broker: up to %d)",
		name, len(conns), frames, msgs, cmp.Sent, cmp.Received, cmp.Identical, cmp.WholeIdentical,
		cmp.PropertiesAdded, cmp.BodyReversed, cmp.EmptyDataAdded, cmp.ScanRefused, cmp.NotDelivered, cmp.MayBeNotReceived)
	assert.Empty(t, cmp.Unmatched, "%s: delivered messages that match no sent message", name)
	assert.Positive(t, cmp.Received)
	assert.LessOrEqual(t, cmp.NotDelivered, cmp.MayBeNotReceived, "%s: sent messages that never arrived", name)
	if !rabbit {
		assert.Zero(t, cmp.PropertiesAdded+cmp.BodyReversed+cmp.EmptyDataAdded, "%s: only RabbitMQ rewrites", name)
	}
}

// skip skips the client whose toolchain is missing — or, in CI
// (AMQPSAX_INTEROP_STRICT set, as .ci/run sets it), fails: there every
// client must run.
// needNodeModule installs interop/rhea's npm packages (npm ci) unless
// module is there already, and skips the test when that fails.
func needNodeModule(t *testing.T, module string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join("rhea", "node_modules", module)); err == nil {
		return
	}
	npm := exec.Command("npm", "ci", "--no-audit", "--no-fund")
	npm.Dir = "rhea"
	if out, err := npm.CombinedOutput(); err != nil {
		skip(t, "npm ci in interop/rhea failed (%v): %s", err, out)
	}
}

func skip(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("AMQPSAX_INTEROP_STRICT") != "" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}
