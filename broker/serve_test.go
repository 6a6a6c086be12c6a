package broker_test

import (
	"bytes"
	"context"
	"log"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/stretchr/testify/require"
)

// emfileListener's Accept fails with too many open files (EMFILE, as
// net's listener reports it) fails times, then accepts.
type emfileListener struct {
	net.Listener
	mu    sync.Mutex
	fails int
}

func (l *emfileListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	fail := l.fails > 0
	if fail {
		l.fails--
	}
	l.mu.Unlock()
	if fail {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.Addr(), Err: os.NewSyscallError("accept", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// lockedBuffer is a bytes.Buffer for a logger on another goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *lockedBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *lockedBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Serve does not end for accept errors that pass (a process out of file
// descriptors, as amqpbroker under load): it logs each, pauses, accepts
// again and serves the connection that comes next. Before, Serve
// returned the first, and amqpbroker exited.
func TestServeAcceptErrorPasses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	const fails = 3
	var logged lockedBuffer
	b := broker.New(broker.Options{Log: log.New(&logged, "", 0)})
	served := make(chan error, 1)
	go func() { served <- b.Serve(&emfileListener{Listener: ln, fails: fails}) }()
	c := dial(t, ln.Addr().String(), engine.Config{}, nil) // fails the test unless the connection opens
	snd := c.sender("q")
	snd.send(data("after EMFILE"))
	select {
	case err := <-served:
		t.Fatalf("Serve returned %v", err)
	default:
	}
	var retries int
	for _, line := range strings.Split(logged.String(), "\n") {
		if strings.Contains(line, "too many open files") && strings.Contains(line, "retrying in") {
			retries++
		}
	}
	require.Equal(t, fails, retries, logged.String())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, b.Shutdown(ctx))
	require.ErrorIs(t, <-served, broker.ErrClosed)
}
