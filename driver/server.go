package driver

import (
	"context"
	"crypto/tls"
	"errors"
	"log"
	"net"
	"sync"
	"time"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/internal/accept"
)

// This file is the Server: the accept loop over a net.Listener, a
// Driver per connection, and the shutdown of them all.

// Server serves AMQP connections from a listener, each on its own
// goroutine, as the server end.
type Server struct {
	// Config is each connection's configuration.
	Config engine.Config
	// Handler receives every connection's events, one at a time per
	// connection (on whichever of its Driver's goroutines holds it):
	// concurrently for different connections.
	Handler engine.Handler
	// TLSConfig, when set, makes every connection TLS (amqps): the
	// handshake comes first, and a client certificate it verifies
	// (ClientAuth tls.VerifyClientCertIfGiven or
	// tls.RequireAndVerifyClientCert) makes the engine offer SASL
	// EXTERNAL; one it merely takes (tls.RequestClientCert,
	// tls.RequireAnyClientCert) does not (VerifiedPeer). With
	// Config.TLSHeader a connection starts in the clear instead, and
	// TLSConfig serves the TLS header's upgrade and a client that starts
	// with TLS (detected by its first byte).
	TLSConfig *tls.Config
	// ErrorLog logs what the server gets past on its own: accept errors
	// it retries (too many open files) and failed TLS handshakes. When
	// nil, the log package's standard logger does, as for http.Server.
	ErrorLog *log.Logger

	mu      sync.Mutex
	ln      []net.Listener
	drivers map[*Driver]struct{}
	closed  bool
	wg      sync.WaitGroup
}

func (srv *Server) logf(format string, args ...any) {
	if srv.ErrorLog != nil {
		srv.ErrorLog.Printf(format, args...)
	} else {
		log.Printf(format, args...)
	}
}

// ErrServerClosed is what Serve returns after Shutdown or Close.
var ErrServerClosed = errors.New("driver: server closed")

// Serve serves connections from ln until ln fails or the server is shut
// down, with cfg and h, as Server.Serve does.
func Serve(ln net.Listener, cfg engine.Config, h engine.Handler) error {
	return (&Server{Config: cfg, Handler: h}).Serve(ln)
}

// Serve accepts connections from ln and runs each on a new goroutine. It
// returns ErrServerClosed after Shutdown or Close, else the error of
// Accept that ends the listener. An accept error that passes (one whose
// Temporary method reports true, such as too many open files, or a
// time-out) ends nothing: Serve logs it (ErrorLog) and accepts again
// after a pause, 5 ms doubling to at most 1 s while the errors go on, as
// net/http's Server does.
func (srv *Server) Serve(ln net.Listener) error {
	srv.mu.Lock()
	if srv.closed {
		srv.mu.Unlock()
		return ErrServerClosed
	}
	srv.ln = append(srv.ln, ln)
	if srv.drivers == nil {
		srv.drivers = make(map[*Driver]struct{})
	}
	srv.mu.Unlock()
	var pause time.Duration // after an error that passes
	for {
		nc, err := ln.Accept()
		if err != nil {
			srv.mu.Lock()
			closed := srv.closed
			srv.mu.Unlock()
			if closed {
				return ErrServerClosed
			}
			if !accept.Passing(err) {
				return err
			}
			pause = accept.Pause(pause)
			srv.logf("driver: accept: %v; retrying in %v", err, pause)
			time.Sleep(pause)
			continue
		}
		pause = 0
		srv.wg.Add(1)
		go srv.serveConn(nc)
	}
}

func (srv *Server) serveConn(nc net.Conn) {
	defer srv.wg.Done()
	cfg := srv.Config
	if srv.TLSConfig != nil && !cfg.TLSHeader {
		tc := tls.Server(nc, srv.TLSConfig)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			srv.logf("driver: TLS handshake from %v: %v", nc.RemoteAddr(), err)
			nc.Close()
			return
		}
		cfg.PeerCertificates = VerifiedPeer(tc.ConnectionState())
		nc = tc
	}
	d := NewDriver(nc, engine.NewServer(cfg, srv.Handler))
	d.TLSConfig = srv.TLSConfig
	srv.mu.Lock()
	if srv.closed {
		srv.mu.Unlock()
		nc.Close()
		return
	}
	srv.drivers[d] = struct{}{}
	srv.mu.Unlock()
	d.Run(context.Background())
	srv.mu.Lock()
	delete(srv.drivers, d)
	srv.mu.Unlock()
}

// Shutdown stops accepting, closes every connection (close with
// amqp:connection:forced) and waits for them to end, or for ctx; then it
// closes what is left.
func (srv *Server) Shutdown(ctx context.Context) error {
	srv.mu.Lock()
	srv.closed = true
	for _, ln := range srv.ln {
		ln.Close()
	}
	for d := range srv.drivers {
		d.Close()
	}
	srv.mu.Unlock()
	ended := make(chan struct{})
	go func() { srv.wg.Wait(); close(ended) }()
	select {
	case <-ended:
		return nil
	case <-ctx.Done():
		srv.mu.Lock()
		for d := range srv.drivers {
			d.nc.Close()
		}
		srv.mu.Unlock()
		<-ended
		return ctx.Err()
	}
}

// Close closes the listeners and every network connection at once.
func (srv *Server) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	srv.Shutdown(ctx)
	return nil
}
