package driver

import (
	"bytes"
	"context"
	"errors"
	"log"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/engine"
)

// failingListener's Accept fails with too many open files (EMFILE, as
// net's listener reports it) fails times, then accepts.
type failingListener struct {
	net.Listener
	mu    sync.Mutex
	fails int
}

func (l *failingListener) Accept() (net.Conn, error) {
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

// syncBuffer is a bytes.Buffer for a logger on another goroutine.
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

// Serve does not end for accept errors that pass (a process out of file
// descriptors): it logs each, pauses and accepts again, and the
// connection that comes next is served. Before, Serve returned the
// first, and a program that ran it ended.
func TestServeAcceptErrorPasses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const fails = 4
	fl := &failingListener{Listener: ln, fails: fails}
	var logged syncBuffer
	opened := &idHandler{ids: make(chan string, 1)}
	srv := &Server{Handler: opened, ErrorLog: log.New(&logged, "", 0)}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(fl) }()
	d, err := Dial(context.Background(), "tcp", ln.Addr().String(), engine.Config{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { d.Close(); d.Wait() }()
	select {
	case <-opened.ids:
	case err := <-served:
		t.Fatalf("Serve returned %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the connection after the accept errors was not served")
	}
	lines := strings.Split(strings.TrimSpace(logged.String()), "\n")
	if len(lines) != fails {
		t.Fatalf("%d lines logged, want %d:\n%s", len(lines), fails, logged.String())
	}
	for i, pause := range []string{"5ms", "10ms", "20ms", "40ms"} {
		if !strings.Contains(lines[i], "too many open files") || !strings.HasSuffix(lines[i], "retrying in "+pause) {
			t.Fatalf("line %d: %q", i, lines[i])
		}
	}
	srv.Close()
	if err := <-served; !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Serve after Close: %v", err)
	}
}

// ConnStart may refuse a connection (closed at once, no AMQP on it);
// ConnEnd is told of the end of each one it took. ServeConn serves one
// connection on the caller's goroutine, through the same hooks.
func TestServerConnHooks(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opened := &idHandler{ids: make(chan string, 2)}
	var mu sync.Mutex
	started, ended := 0, 0
	srv := &Server{Handler: opened}
	srv.ConnStart = func(net.Conn) bool {
		mu.Lock()
		defer mu.Unlock()
		started++
		return started != 1 // the first is refused
	}
	endedc := make(chan struct{}, 2)
	srv.ConnEnd = func(net.Conn, error) {
		mu.Lock()
		ended++
		mu.Unlock()
		endedc <- struct{}{}
	}
	go srv.Serve(ln)
	defer srv.Close()
	if d, err := Dial(context.Background(), "tcp", ln.Addr().String(), engine.Config{}, nil, nil); err == nil {
		if err := d.Wait(); err == nil {
			t.Fatal("a refused connection ended cleanly")
		}
	}
	d, err := Dial(context.Background(), "tcp", ln.Addr().String(), engine.Config{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-opened.ids
	d.Close()
	d.Wait()
	<-endedc

	cli, nc := net.Pipe()
	served := make(chan error, 1)
	go func() { served <- srv.ServeConn(nc) }()
	d = NewDriver(cli, engine.NewClient(engine.Config{}, engine.NopHandler{}))
	go d.Run(context.Background())
	<-opened.ids
	d.Close()
	d.Wait()
	if err := <-served; err == nil || !strings.Contains(err.Error(), "amqp:connection:forced") {
		t.Fatalf("ServeConn: %v, want the peer's close", err)
	}
	<-endedc
	mu.Lock()
	defer mu.Unlock()
	if started != 3 || ended != 2 {
		t.Fatalf("%d started, %d ended; want 3, 2", started, ended)
	}
}
