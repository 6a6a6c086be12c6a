package ws

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

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
	// BasicAuth sends the URL's user and password as HTTP Basic
	// authentication on the upgrade request — in the clear over ws://.
	// Without it the URL's user information is not sent at all (the
	// client package reads it for SASL, which the AMQP connection
	// carries).
	BasicAuth bool
}

// Dial opens a WebSocket to rawURL (ws:// or wss://) with the subprotocol
// "amqp" and returns it as a net.Conn carrying binary messages. ctx
// bounds the dial and the upgrade, not the connection. The URL's user
// information is left out of the upgrade request unless
// DialOptions.BasicAuth, and its password out of every error.
func Dial(ctx context.Context, rawURL string, o *DialOptions) (net.Conn, error) {
	if o == nil {
		o = &DialOptions{}
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Parse's error holds the URL whole, password and all.
		return nil, errors.New("ws: malformed URL " + redactRaw(rawURL))
	}
	header := o.Header
	if u.User != nil {
		if o.BasicAuth {
			req := http.Request{Header: http.Header{}}
			pw, _ := u.User.Password()
			req.SetBasicAuth(u.User.Username(), pw)
			header = header.Clone()
			if header == nil {
				header = http.Header{}
			}
			header.Set("Authorization", req.Header.Get("Authorization"))
		}
		u.User = nil // else net/http sends it as Basic authentication
	}
	opts := &websocket.DialOptions{Subprotocols: []string{Subprotocol}, HTTPHeader: header,
		HTTPClient: o.HTTPClient, CompressionMode: websocket.CompressionDisabled}
	if opts.HTTPClient == nil && o.TLSConfig != nil {
		opts.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: o.TLSConfig}}
	}
	c, _, err := websocket.Dial(ctx, u.String(), opts)
	if err != nil {
		return nil, err
	}
	if c.Subprotocol() != Subprotocol {
		c.Close(websocket.StatusProtocolError, "subprotocol amqp expected")
		return nil, ErrSubprotocol
	}
	return netConn(c), nil
}

// redactRaw returns rawURL, which url.Parse refused, with whatever lies
// between its scheme's "//" and the last '@' of its authority after the
// first ':' (a password, in a URL of the usual form) replaced by "xxxxx",
// as url.URL.Redacted does for one that parses.
func redactRaw(rawURL string) string {
	i := strings.Index(rawURL, "//")
	if i < 0 {
		return rawURL
	}
	auth := rawURL[i+2:]
	if j := strings.IndexAny(auth, "/?#"); j >= 0 {
		auth = auth[:j]
	}
	at := strings.LastIndexByte(auth, '@')
	if at < 0 {
		return rawURL
	}
	user := auth[:at]
	if c := strings.IndexByte(user, ':'); c >= 0 {
		user = user[:c+1] + "xxxxx"
	}
	return rawURL[:i+2] + user + rawURL[i+2+at:]
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

// The time-outs of Listen's HTTP server, as engine.DefaultHandshakeTimeout
// bounds a client's handshake on the AMQP port.
const (
	// DefaultHeaderTimeout bounds the TLS handshake, and then the
	// upgrade request's header: a client that has not finished either
	// by then is cut off.
	DefaultHeaderTimeout = 30 * time.Second
	// DefaultIdleTimeout bounds the wait for a request after another
	// on a connection that was not upgraded.
	DefaultIdleTimeout = 30 * time.Second
)

// ListenOptions sets up ListenWith. The zero value (or nil) serves ws://
// with the default time-outs.
type ListenOptions struct {
	// TLSConfig serves wss:// (TLS) when set.
	TLSConfig *tls.Config
	// HeaderTimeout bounds a connection's TLS handshake, and then the
	// reading of each request's header, the upgrade's included
	// (http.Server's ReadHeaderTimeout, which net/http applies to the
	// TLS handshake too); 0 means DefaultHeaderTimeout, a negative
	// value no bound. Once upgraded, the connection is the engine's,
	// whose Config.HandshakeTimeout bounds the AMQP handshake.
	HeaderTimeout time.Duration
	// IdleTimeout bounds the wait for the next request on a connection
	// that was not upgraded (http.Server's IdleTimeout); 0 means
	// DefaultIdleTimeout, a negative value no bound.
	IdleTimeout time.Duration
}

// Listen listens on the TCP address addr and serves WebSocket upgrades
// on every path (TLS, wss://, when tlsConfig is set), for Accept, with
// the default time-outs (ListenOptions).
func Listen(addr string, tlsConfig *tls.Config) (*Listener, error) {
	return ListenWith(addr, &ListenOptions{TLSConfig: tlsConfig})
}

// ListenWith is Listen with options: TLS and the HTTP server's
// time-outs.
func ListenWith(addr string, o *ListenOptions) (*Listener, error) {
	if o == nil {
		o = &ListenOptions{}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if o.TLSConfig != nil {
		ln = tls.NewListener(ln, o.TLSConfig)
	}
	l := NewListener(ln.Addr())
	l.ln = ln
	l.server = &http.Server{Handler: l,
		ReadHeaderTimeout: timeout(o.HeaderTimeout, DefaultHeaderTimeout),
		IdleTimeout:       timeout(o.IdleTimeout, DefaultIdleTimeout)}
	go l.server.Serve(ln)
	return l, nil
}

// timeout returns d, or def for 0; a negative d is no time-out (0 to
// net/http).
func timeout(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
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
