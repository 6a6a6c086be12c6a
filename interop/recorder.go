package interop

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Recorder is a loopback TCP proxy that forwards bytes unchanged and
// records both directions of every connection. It understands nothing of
// AMQP: what it records is what the peers wrote.
//
// A Recorder made by NewTLSRecorder accepts TLS (amqps) from the client
// and forwards the plaintext to the broker: it records the AMQP bytes
// inside the TLS session, as the client wrote them. (uAMQP-C's Python
// binding has no plain-TCP transport.)
type Recorder struct {
	upstream string
	ln       net.Listener

	mu    sync.Mutex
	conns []*recConn
	wg    sync.WaitGroup
	// Linger bounds how long Close waits for open connections to end on
	// their own (default 10 s).
	Linger time.Duration
}

type recConn struct {
	mu             sync.Mutex
	client, server []byte
	sockets        [2]net.Conn
}

// NewRecorder listens on a free loopback port and forwards every
// connection to upstream.
func NewRecorder(upstream string) (*Recorder, error) {
	return NewTLSRecorder(upstream, nil)
}

// NewTLSRecorder is NewRecorder with clients connecting over TLS with
// cfg (nil: plain TCP). See SelfSigned for a cfg that loopback clients
// can verify.
func NewTLSRecorder(upstream string, cfg *tls.Config) (*Recorder, error) {
	var ln net.Listener
	var err error
	if cfg != nil {
		ln, err = tls.Listen("tcp", "127.0.0.1:0", cfg)
	} else {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		return nil, err
	}
	r := &Recorder{upstream: upstream, ln: ln, Linger: 10 * time.Second}
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

// Addr is the loopback host:port the clients connect to.
func (r *Recorder) Addr() string { return r.ln.Addr().String() }

func (r *Recorder) accept() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return // closed
		}
		up, err := net.DialTimeout("tcp", r.upstream, 10*time.Second)
		if err != nil {
			fmt.Fprintf(os.Stderr, "recorder: dial %s: %v\n", r.upstream, err)
			c.Close()
			continue
		}
		rc := &recConn{sockets: [2]net.Conn{c, up}}
		r.mu.Lock()
		r.conns = append(r.conns, rc)
		r.mu.Unlock()
		r.wg.Add(2)
		go r.pipe(rc, c, up, &rc.client)
		go r.pipe(rc, up, c, &rc.server)
	}
}

// pipe copies src to dst, appending every chunk to *rec before writing
// it on, and half-closes dst when src ends.
func (r *Recorder) pipe(rc *recConn, src, dst net.Conn, rec *[]byte) {
	defer r.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			rc.mu.Lock()
			*rec = append(*rec, buf[:n]...)
			rc.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	} else {
		dst.Close()
	}
	if tc, ok := src.(*net.TCPConn); ok {
		tc.CloseRead()
	}
}

// Close stops listening and waits up to Linger for every connection to
// end; connections still open then are closed.
func (r *Recorder) Close() error {
	err := r.ln.Close()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(r.Linger):
		r.mu.Lock()
		for _, c := range r.conns {
			c.sockets[0].Close()
			c.sockets[1].Close()
		}
		r.mu.Unlock()
		<-done
	}
	r.mu.Lock()
	for _, c := range r.conns {
		c.sockets[0].Close()
		c.sockets[1].Close()
	}
	r.mu.Unlock()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// Conns returns copies of the streams recorded so far, in accept order.
func (r *Recorder) Conns() []Conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Conn, len(r.conns))
	for i, c := range r.conns {
		c.mu.Lock()
		out[i] = Conn{Client: append([]byte(nil), c.client...), Server: append([]byte(nil), c.server...)}
		c.mu.Unlock()
	}
	return out
}

// WriteConns writes each connection's streams to dir as
// NAME-N-client.bin and NAME-N-server.bin (N from 1, in accept order) and
// returns the paths written. Connections that carried nothing are left
// out.
func WriteConns(dir, name string, conns []Conn) ([]string, error) {
	var paths []string
	n := 0
	for _, c := range conns {
		if len(c.Client) == 0 && len(c.Server) == 0 {
			continue
		}
		n++
		for _, s := range []struct {
			dir  string
			data []byte
		}{{"client", c.Client}, {"server", c.Server}} {
			p := filepath.Join(dir, fmt.Sprintf("%s-%d-%s.bin", name, n, s.dir))
			if err := os.WriteFile(p, s.data, 0o644); err != nil {
				return paths, err
			}
			paths = append(paths, p)
		}
	}
	return paths, nil
}

var _ Tap = (*Recorder)(nil)
