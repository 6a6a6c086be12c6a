package driver

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/engine"
)

// lateConn is the server's end of a pipe that, once armed, fails every
// write and holds every read until a write has failed: the order in
// which a peer's last bytes (its close) and its shut socket reach a
// Driver that had something to write.
type lateConn struct {
	net.Conn
	mu     sync.Mutex
	armed  bool
	failed chan struct{}
	once   sync.Once
}

func (c *lateConn) arm() { c.mu.Lock(); c.armed = true; c.mu.Unlock() }

func (c *lateConn) isArmed() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.armed }

func (c *lateConn) Write(p []byte) (int, error) {
	if c.isArmed() {
		c.once.Do(func() { close(c.failed) })
		return 0, errors.New("broken pipe")
	}
	return c.Conn.Write(p)
}

func (c *lateConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.isArmed() {
		<-c.failed
	}
	return n, err
}

type peerClose struct {
	engine.NopHandler
	closed chan *engine.Error
}

func (h *peerClose) OnConnectionClose(_ *engine.Conn, e *engine.Error) { h.closed <- e }

type opened struct {
	engine.NopHandler
	open bool
}

func (h *opened) OnConnectionOpen(*engine.Conn) { h.open = true }

// TestDriverFeedsBeforeFailedWrite: the peer's close, read before a write
// of the Driver failed (the peer shut its socket) but handed over after,
// still reaches the engine: the connection ends as the peer closed it,
// not as lost.
func TestDriverFeedsBeforeFailedWrite(t *testing.T) {
	srvEnd, cliEnd := net.Pipe()
	lc := &lateConn{Conn: srvEnd, failed: make(chan struct{})}
	h := &peerClose{closed: make(chan *engine.Error, 1)}
	d := NewDriver(lc, engine.NewServer(engine.Config{NoSASL: true}, h))
	go d.Run(context.Background())
	defer d.Close()

	ch := &opened{}
	c := engine.NewClient(engine.Config{NoSASL: true}, ch)
	buf := make([]byte, 4096)
	cliEnd.SetDeadline(time.Now().Add(30 * time.Second))
	for !ch.open {
		if out := c.Output(); len(out) > 0 {
			n, err := cliEnd.Write(out)
			if err != nil {
				t.Fatal(err)
			}
			c.Written(n)
		}
		n, err := cliEnd.Read(buf)
		if err != nil {
			t.Fatal("before the open:", err)
		}
		c.Feed(buf[:n], time.Now())
	}
	lc.arm()
	c.Close(nil)
	out := c.Output()
	go cliEnd.Write(out) // read by the server's reader, held until its write fails
	// The server writes (a session's begin) and the write fails.
	d.Do(func(c *engine.Conn) { c.Begin() })
	select {
	case e := <-h.closed:
		if e != nil {
			t.Fatalf("the connection ended as lost (%v): the peer's close was not fed", e)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the connection did not end")
	}
}
