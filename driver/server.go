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
	// with TLS (detected by its first byte). A connection that is TLS
	// already (one with a ConnectionState method: a *tls.Conn of a
	// tls.Listener, whose handshake is run first, or a wss:// WebSocket
	// of the ws module) is taken as it is, its verified client
	// certificate too.
	TLSConfig *tls.Config
	// ConnStart, when set, is called with each connection accepted (or
	// given to ServeConn), on the goroutine that serves it, before
	// anything is read from it or written: false refuses it, and it is
	// closed at once. ConnEnd, when set, is called when a connection
	// ConnStart took ends: with the error of its TLS handshake, or the
	// one its Driver's Run returned (nil for a close both ends agreed
	// on). They let a program bound, count or log the connections.
	ConnStart func(nc net.Conn) bool
	ConnEnd   func(nc net.Conn, err error)
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

// ServeConn serves the one connection nc, as Serve serves each it
// accepts, on the caller's goroutine: it returns when the connection
// has ended, with the error its Driver's Run returned (or its TLS
// handshake's, or ErrServerClosed after Shutdown or Close, nc closed).
// Shutdown and Close end it too.
func (srv *Server) ServeConn(nc net.Conn) error {
	srv.mu.Lock()
	if srv.closed {
		srv.mu.Unlock()
		nc.Close()
		return ErrServerClosed
	}
	srv.wg.Add(1)
	srv.mu.Unlock()
	return srv.serveConn(nc)
}

// handshakeTimeout bounds a TLS handshake before the AMQP one.
const handshakeTimeout = 10 * time.Second

func (srv *Server) serveConn(nc net.Conn) (err error) {
	defer srv.wg.Done()
	if srv.ConnStart != nil {
		if !srv.ConnStart(nc) {
			nc.Close()
			return nil
		}
		if srv.ConnEnd != nil {
			defer func() { srv.ConnEnd(nc, err) }()
		}
	}
	cfg := srv.Config
	if srv.TLSConfig != nil {
		tlsConn, already := nc.(interface{ ConnectionState() tls.ConnectionState })
		var handshake func(context.Context) error
		switch {
		case already:
			if h, ok := nc.(interface{ HandshakeContext(context.Context) error }); ok {
				handshake = h.HandshakeContext
			}
		case !cfg.TLSHeader:
			tc := tls.Server(nc, srv.TLSConfig)
			tlsConn, handshake, nc = tc, tc.HandshakeContext, tc
		}
		if handshake != nil {
			ctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
			err = handshake(ctx)
			cancel()
			if err != nil {
				srv.logf("driver: TLS handshake from %v: %q", nc.RemoteAddr(), err) // %q: the text may be the peer's
				nc.Close()
				return err
			}
		}
		if tlsConn != nil {
			cfg.PeerCertificates = VerifiedPeer(tlsConn.ConnectionState())
		}
	}
	d := NewDriver(nc, engine.NewServer(cfg, srv.Handler))
	d.TLSConfig = srv.TLSConfig
	srv.mu.Lock()
	if srv.closed {
		srv.mu.Unlock()
		nc.Close()
		return ErrServerClosed
	}
	if srv.drivers == nil {
		srv.drivers = make(map[*Driver]struct{})
	}
	srv.drivers[d] = struct{}{}
	srv.mu.Unlock()
	err = d.Run(context.Background())
	srv.mu.Lock()
	delete(srv.drivers, d)
	srv.mu.Unlock()
	return err
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
