package interop

import (
	"bytes"
	"context"
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
)

// syncBuffer is a bytes.Buffer a child process writes while the test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestEngineSink: the smallest server a
// go-amqp v1.7.0 sender can deliver to, examples/sink (under 40 lines on
// package engine: credit, accept, settle, and detach, end and close
// answered by the engine). go-amqp sends 1,000 messages, each Send
// waiting for its settlement, then detaches, ends and closes, each
// answered; the sink counts 1,000. Through amqpspy, which must see no
// fault.
func TestEngineSink(t *testing.T) {
	src := filepath.Join("..", "examples", "sink", "main.go")
	b, err := os.ReadFile(src)
	if err != nil {
		skip(t, "there is no examples/sink in this tree: %v", err)
	}
	lines := 0
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "//") {
			lines++
		}
	}
	assert.LessOrEqual(t, lines, 40, "examples/sink: lines of code (not comments or blank)")

	dir := t.TempDir()
	bin := filepath.Join(dir, "sink")
	build := exec.Command("go", "build", "-o", bin, "./examples/sink")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building examples/sink: %v\n%s", err, out)
	}
	addr := freeAddr(t)
	var out syncBuffer
	cmd := exec.Command(bin, "-listen", addr)
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("examples/sink said:\n%s", out.String())
		}
	})
	for deadline := time.Now().Add(20 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		require.True(t, time.Now().Before(deadline), "examples/sink does not listen on %s", addr)
		time.Sleep(50 * time.Millisecond)
	}

	spy := spyOn(t, addr)
	const n = 1000
	err = withTimeout(time.Minute, func(ctx context.Context) error {
		conn, err := amqp.Dial(ctx, "amqp://"+spy.Addr, &amqp.ConnOptions{ContainerID: "sink-sender", SASLType: amqp.SASLTypeAnonymous()})
		if err != nil {
			return err
		}
		s, err := conn.NewSession(ctx, nil)
		if err != nil {
			return err
		}
		snd, err := s.NewSender(ctx, "sink", &amqp.SenderOptions{SettlementMode: amqp.SenderSettleModeUnsettled.Ptr()})
		if err != nil {
			return err
		}
		for i := range n {
			// Send waits for the sink's disposition (unsettled mode).
			if err := snd.Send(ctx, amqp.NewMessage([]byte(fmt.Sprintf("message %d", i))), nil); err != nil {
				return fmt.Errorf("message %d: %w", i, err)
			}
		}
		if err := snd.Close(ctx); err != nil { // detach, answered
			return fmt.Errorf("detach: %w", err)
		}
		if err := s.Close(ctx); err != nil { // end, answered
			return fmt.Errorf("end: %w", err)
		}
		return conn.Close() // close, answered
	})
	require.NoError(t, err)
	want := fmt.Sprintf("sink-sender: %d messages so far", n)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), want); {
		require.True(t, time.Now().Before(deadline), "examples/sink did not log %q", want)
		time.Sleep(20 * time.Millisecond)
	}
	spy.finish(engineCheck{})
}
