package ws

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/coder/websocket"
)

// Subprotocol is the WebSocket subprotocol of AMQP (WSB §2.1).
const Subprotocol = "amqp"

// ErrSubprotocol is what Dial returns when the server did not choose the
// "amqp" subprotocol.
var ErrSubprotocol = errors.New("ws: the server did not choose the WebSocket subprotocol amqp")

// DialOptions sets up Dial. The zero value (or nil) dials with
// http.DefaultClient's transport.
type DialOptions struct {
	// TLSConfig is the TLS configuration of wss:// URLs (nil: the
	// defaults, the system's roots).
	TLSConfig *tls.Config
	// Header is sent with the upgrade request (authorization, for
	// instance).
	Header http.Header
	// HTTPClient, when set, makes the upgrade request (proxies, its own
	// transport); TLSConfig is then ignored.
	HTTPClient *http.Client
}

// Dial opens a WebSocket to url (ws:// or wss://) with the subprotocol
// "amqp" and returns it as a net.Conn carrying binary messages. ctx
// bounds the dial and the upgrade, not the connection.
func Dial(ctx context.Context, url string, o *DialOptions) (net.Conn, error) {
	if o == nil {
		o = &DialOptions{}
	}
	opts := &websocket.DialOptions{Subprotocols: []string{Subprotocol}, HTTPHeader: o.Header,
		HTTPClient: o.HTTPClient, CompressionMode: websocket.CompressionDisabled}
	if opts.HTTPClient == nil && o.TLSConfig != nil {
		opts.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: o.TLSConfig}}
	}
	c, _, err := websocket.Dial(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	if c.Subprotocol() != Subprotocol {
		c.Close(websocket.StatusProtocolError, "subprotocol amqp expected")
		return nil, ErrSubprotocol
	}
	return netConn(c), nil
}

// netConn returns c as a net.Conn of binary messages, with no limit on a
// message's size (the engine's frame size bounds what it reads).
func netConn(c *websocket.Conn) net.Conn {
	c.SetReadLimit(-1)
	return websocket.NetConn(context.Background(), c, websocket.MessageBinary)
}

// Listener is a net.Listener of AMQP WebSocket connections and the
// http.Handler that accepts them: each WebSocket upgrade it serves with
// the subprotocol "amqp" is handed to Accept. The zero value is not
// usable: make one with NewListener or Listen.
type Listener struct {
	// OriginPatterns are the host patterns (path.Match) of the Origin
	// headers accepted besides the request's own host, as for browsers
	// on other origins; see github.com/coder/websocket AcceptOptions.
	OriginPatterns []string

	addr   net.Addr
	conns  chan net.Conn
	done   chan struct{}
	once   sync.Once
	server *http.Server // Listen's, closed by Close
	ln     net.Listener
}

// ErrClosed is what Accept returns after Close.
var ErrClosed = errors.New("ws: listener closed")

// NewListener returns a Listener to mount as an http.Handler; Addr
// reports addr.
func NewListener(addr net.Addr) *Listener {
	return &Listener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

// Listen listens on the TCP address addr and serves WebSocket upgrades
// on every path (TLS, wss://, when tlsConfig is set), for Accept.
func Listen(addr string, tlsConfig *tls.Config) (*Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	l := NewListener(ln.Addr())
	l.ln = ln
	l.server = &http.Server{Handler: l}
	go l.server.Serve(ln)
	return l, nil
}

// ServeHTTP upgrades the request to a WebSocket with the subprotocol
// "amqp" and hands it to Accept; a request without the subprotocol is
// refused (400).
func (l *Listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	offered := false
	for _, p := range websocketProtocols(r) {
		offered = offered || p == Subprotocol
	}
	if !offered {
		http.Error(w, "ws: the WebSocket subprotocol amqp is required", http.StatusBadRequest)
		return
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol},
		OriginPatterns: l.OriginPatterns, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return // Accept has answered
	}
	nc := netConn(c)
	if r.TLS != nil {
		nc = secureConn{nc, *r.TLS}
	}
	select {
	case l.conns <- nc:
	case <-l.done:
		c.Close(websocket.StatusGoingAway, "shutting down")
	case <-r.Context().Done():
		c.CloseNow()
	}
}

// websocketProtocols returns the subprotocols a request offers.
func websocketProtocols(r *http.Request) []string {
	var out []string
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			out = append(out, strings.TrimSpace(p))
		}
	}
	return out
}

// Accept waits for the next AMQP WebSocket connection.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, ErrClosed
	}
}

// Close stops Accept, refuses upgrades from then on and, for Listen's
// Listener, closes its HTTP server and the connections it serves.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.done) })
	if l.server != nil {
		return l.server.Close()
	}
	return nil
}

// Addr returns the address listened on.
func (l *Listener) Addr() net.Addr { return l.addr }

// Dialer returns a function that dials as Dial does with o, for
// client.ConnOptions.Dialer: client.Dial then takes ws:// and wss:// URLs
// (and dials them again on reconnection).
func Dialer(o *DialOptions) func(ctx context.Context, url string) (net.Conn, error) {
	return func(ctx context.Context, url string) (net.Conn, error) { return Dial(ctx, url, o) }
}

// secureConn is a connection that came over wss://: ConnectionState
// reports its TLS, as *tls.Conn's does, so that a server does not wrap it
// in TLS again and finds the client's certificates (SASL EXTERNAL).
type secureConn struct {
	net.Conn
	state tls.ConnectionState
}

// ConnectionState returns the TLS state of the WebSocket's connection.
func (c secureConn) ConnectionState() tls.ConnectionState { return c.state }
