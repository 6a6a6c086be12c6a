package client

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// ConnOptions sets up a connection; nil or the zero value works (SASL
// ANONYMOUS unless the URL carries a user, the engine's defaults).
type ConnOptions struct {
	// ContainerID is this end's container-id; empty gives a random one.
	ContainerID string
	// HostName is the hostname sent in the open and sasl-init (virtual
	// hosts, Service Bus); empty gives the URL's host.
	HostName string
	// IdleTimeout is this end's idle time-out: a peer silent for longer
	// is closed. 0 means none. Heartbeats the peer asks for are sent by
	// themselves.
	IdleTimeout time.Duration
	// MaxFrameSize is the largest frame this end accepts (0: 65536).
	MaxFrameSize uint32
	// MaxMessageSize bounds an incoming message (0: 64 MiB).
	MaxMessageSize uint64
	// SASLType chooses the SASL mechanism: SASLTypeAnonymous,
	// SASLTypePlain or SASLTypeExternal. The zero SASLType uses PLAIN
	// with the URL's user and password when it has them, else ANONYMOUS.
	SASLType SASLType
	// TLSConfig is used for amqps:// URLs (nil: the default, with the
	// URL's host as ServerName).
	TLSConfig *tls.Config
}

// SASLType is a SASL mechanism and its credentials (part 5 §5.3).
type SASLType struct {
	mech, user, pass string
	none             bool
}

// SASLTypeAnonymous is SASL ANONYMOUS.
func SASLTypeAnonymous() SASLType { return SASLType{mech: "ANONYMOUS"} }

// SASLTypePlain is SASL PLAIN (RFC 4616) with a user and password.
func SASLTypePlain(user, password string) SASLType {
	return SASLType{mech: "PLAIN", user: user, pass: password}
}

// SASLTypeExternal is SASL EXTERNAL: the identity is the TLS client
// certificate's.
func SASLTypeExternal() SASLType { return SASLType{mech: "EXTERNAL"} }

// SASLTypeNone skips SASL: the AMQP protocol header is sent at once, for
// servers that take plain AMQP.
func SASLTypeNone() SASLType { return SASLType{none: true} }

// Conn is a client connection: one goroutine runs it (the engine's
// Driver), which every call of Conn, Session, Sender and Receiver hands
// its work to and waits on with its ctx. Every method is safe to call
// from any goroutine.
type Conn struct {
	d    *engine.Driver
	tap  *tapConn
	addr string
	h    *handler

	opened chan struct{} // closed by OnConnectionOpen
	done   chan struct{} // closed by OnConnectionClose: err is set

	mu       sync.Mutex
	err      error // why the connection ended (nil: still up)
	closing  bool  // Close was called
	sessions []*Session
}

// Dial connects to addr and returns once the open exchange (TCP, TLS for
// amqps, the protocol header, SASL, open) is complete; ctx bounds all of
// it. addr is an amqp:// or amqps:// URL, with user:password for SASL
// PLAIN and an optional port (5672, 5671), or a bare host:port.
//
// An error is a *DialError naming the stage that failed.
func Dial(ctx context.Context, addr string, opts *ConnOptions) (*Conn, error) {
	var o ConnOptions
	if opts != nil {
		o = *opts
	}
	t, err := parseAddr(addr, &o)
	if err != nil {
		return nil, &DialError{Addr: addr, Stage: "tcp", Err: err}
	}
	return dialOnce(ctx, t, &o)
}

// target is a parsed address.
type target struct {
	addr     string // as given
	hostport string
	host     string
	tls      bool
}

func parseAddr(addr string, o *ConnOptions) (target, error) {
	t := target{addr: addr}
	if u, err := url.Parse(addr); err == nil && (u.Scheme == "amqp" || u.Scheme == "amqps") {
		t.tls = u.Scheme == "amqps"
		t.host = u.Hostname()
		port := u.Port()
		if port == "" {
			port = "5672"
			if t.tls {
				port = "5671"
			}
		}
		t.hostport = net.JoinHostPort(t.host, port)
		if u.User != nil && o.SASLType == (SASLType{}) {
			p, _ := u.User.Password()
			o.SASLType = SASLTypePlain(u.User.Username(), p)
		}
		return t, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return t, errors.New("address is neither an amqp:// or amqps:// URL nor host:port: " + addr)
	}
	t.host, t.hostport = host, addr
	return t, nil
}

func dialOnce(ctx context.Context, t target, o *ConnOptions) (*Conn, error) {
	var dl net.Dialer
	nc, err := dl.DialContext(ctx, "tcp", t.hostport)
	if err != nil {
		return nil, &DialError{Addr: t.addr, Stage: "tcp", Err: err}
	}
	if t.tls {
		cfg := o.TLSConfig
		if cfg == nil {
			cfg = &tls.Config{}
		} else {
			cfg = cfg.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName = t.host
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, &DialError{Addr: t.addr, Stage: "tls", Err: err}
		}
		nc = tc
	}
	if o.HostName == "" {
		o.HostName = t.host
	}
	return open(ctx, nc, t.addr, o)
}

// NewConn runs a client connection over nc (already connected, TLS
// already done if wanted) and returns once the open exchange is complete;
// ctx bounds it. On an error nc is closed. An error is a *DialError.
func NewConn(ctx context.Context, nc net.Conn, opts *ConnOptions) (*Conn, error) {
	var o ConnOptions
	if opts != nil {
		o = *opts
	}
	return open(ctx, nc, nc.RemoteAddr().String(), &o)
}

var containerSeq atomic.Uint64

func open(ctx context.Context, nc net.Conn, addr string, o *ConnOptions) (*Conn, error) {
	cfg := engine.Config{ContainerID: o.ContainerID, Hostname: o.HostName, IdleTimeout: o.IdleTimeout,
		MaxFrameSize: o.MaxFrameSize, MaxMessageSize: o.MaxMessageSize,
		// The client tops up credit itself (as the application takes
		// deliveries) and settles on outcomes as the engine does.
		HandshakeTimeout: 24 * time.Hour}
	if cfg.ContainerID == "" {
		cfg.ContainerID = "amqpsax-client-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.FormatUint(containerSeq.Add(1), 10)
	}
	switch st := o.SASLType; {
	case st.none:
		cfg.NoSASL = true
	case st.mech != "":
		cfg.Mechanism, cfg.Username, cfg.Password = st.mech, st.user, st.pass
	}
	tap := &tapConn{Conn: nc}
	tap.tracking.Store(true)
	c := &Conn{tap: tap, addr: addr, opened: make(chan struct{}), done: make(chan struct{})}
	c.h = &handler{c: c}
	c.d = engine.NewDriver(tap, engine.NewClient(cfg, c.h))
	go c.d.Run(context.Background())
	select {
	case <-c.opened:
		return c, nil
	case <-c.done:
	case <-ctx.Done():
		nc.Close() // the driver sees the stream end at once
		<-c.d.Done()
		return nil, &DialError{Addr: addr, Stage: tap.stage(), Err: ctxErr(ctx)}
	}
	<-c.d.Done()
	err := c.Err()
	var ce *Error
	if errors.As(err, &ce) && ce.Condition == "amqp:unauthorized-access" {
		return nil, &DialError{Addr: addr, Stage: "sasl", Err: err}
	}
	return nil, &DialError{Addr: addr, Stage: tap.stage(), Err: err}
}

// Err returns why the connection ended, or nil while it is up.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Done is closed when the connection has ended (Err tells why).
func (c *Conn) Done() <-chan struct{} { return c.done }

// do runs f on the connection's goroutine; false if the connection has
// ended.
func (c *Conn) do(f func(*engine.Conn)) bool { return c.d.Do(f) }

// call runs f on the connection's goroutine and waits for it (or ctx, or
// the end of the connection).
func (c *Conn) call(ctx context.Context, f func(*engine.Conn) error) error {
	res := make(chan error, 1)
	if !c.do(func(ec *engine.Conn) { res <- f(ec) }) {
		return c.endErr()
	}
	select {
	case err := <-res:
		return err
	case <-ctx.Done():
		return ctxErr(ctx)
	case <-c.done:
		select {
		case err := <-res:
			return err
		default:
			return c.endErr()
		}
	}
}

// endErr is the error of calls on an ended connection.
func (c *Conn) endErr() error {
	if err := c.Err(); err != nil {
		return err
	}
	return ErrClosed
}

// Close closes the connection and waits for the peer's close, at most
// engine.CloseWait; then the network connection is closed and the
// connection's goroutines have ended. Every call still blocked returns
// ErrClosed. It returns nil after a clean close, else the connection's
// error (a second Close returns the first's).
func (c *Conn) Close() error { return c.CloseContext(context.Background()) }

// CloseContext is Close with ctx bounding the wait for the peer's close:
// when ctx ends first, the network connection is closed at once and ctx's
// error returned.
func (c *Conn) CloseContext(ctx context.Context) error {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	c.do(func(ec *engine.Conn) {
		if ec.Close(nil) != nil {
			ec.CloseRead()
		}
	})
	var err error
	select {
	case <-c.d.Done():
	case <-ctx.Done():
		c.tap.Conn.Close()
		<-c.d.Done()
		err = ctxErr(ctx)
	}
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == ErrClosed {
		return nil
	}
	return c.err
}

// NewSession begins a session and returns once the peer has answered;
// ctx bounds the wait. A session the peer refuses (an end after its
// begin, or the connection closed under it) returns an *Error with the
// peer's condition. opts may be nil.
func (c *Conn) NewSession(ctx context.Context, opts *SessionOptions) (*Session, error) {
	s := &Session{c: c, begun: make(chan struct{}), done: make(chan struct{})}
	if opts != nil {
		s.opts = *opts
	}
	if err := c.call(ctx, s.begin); err != nil {
		return nil, err
	}
	if err := s.waitBegun(ctx); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.sessions = append(c.sessions, s)
	c.mu.Unlock()
	return s, nil
}

// sync waits until the connection's goroutine has handled everything
// read so far: an event of the same read (a detach right after an
// attach's answer, an end after a begin's) has run when it returns.
func (c *Conn) sync(ctx context.Context) error {
	return c.call(ctx, func(*engine.Conn) error { return nil })
}

// handler receives the engine's events on the connection's goroutine.
type handler struct {
	engine.NopHandler
	c *Conn
}

func (h *handler) OnConnectionOpen(ec *engine.Conn) {
	h.c.tap.tracking.Store(false)
	close(h.c.opened)
}

func (h *handler) OnConnectionClose(ec *engine.Conn, e *engine.Error) {
	c := h.c
	c.mu.Lock()
	switch {
	case e != nil && !(c.closing && !e.Remote && e.Condition == "amqp:connection:framing-error" && e.Description == "connection lost"):
		c.err = fromEngine(e, ScopeConn)
	default:
		c.err = ErrClosed
	}
	c.mu.Unlock()
	close(c.done)
}

func (h *handler) OnSessionBegin(es *engine.Session) {
	s, ok := es.Context.(*Session)
	if !ok {
		es.End(engine.NewError(frame.CondNotAllowed, "a client takes no sessions it did not begin"))
		return
	}
	close(s.begun)
}

func (h *handler) OnSessionEnd(es *engine.Session, e *engine.Error) {
	if s, ok := es.Context.(*Session); ok {
		s.ended(linkEndErr(nil, es, ScopeSession))
	}
}

func (h *handler) OnLinkAttach(l *engine.Link) {
	switch x := l.Context.(type) {
	case *Sender:
		x.attached(l)
	case *Receiver:
		x.attached(l)
	default:
		l.Detach(engine.NewError(frame.CondNotAllowed, "a client takes no links it did not attach"))
	}
}

func (h *handler) OnLinkDetach(l *engine.Link, e *engine.Error) {
	err := linkEndErr(e, l.Session(), ScopeLink)
	switch x := l.Context.(type) {
	case *Sender:
		x.ended(err)
	case *Receiver:
		x.ended(err)
	}
}

func (h *handler) OnFlow(l *engine.Link) {
	switch x := l.Context.(type) {
	case *Sender:
		x.pump()
	case *Receiver:
		x.flowed()
	}
}

func (h *handler) OnDelivery(l *engine.Link, d engine.Delivery) {
	if r, ok := l.Context.(*Receiver); ok {
		r.delivered(&d)
	}
}

func (h *handler) OnDisposition(l *engine.Link, d engine.Disposition) {
	if s, ok := l.Context.(*Sender); ok {
		s.disposed(&d)
	}
}

func (h *handler) OnWritable(ec *engine.Conn) {
	c := h.c
	c.mu.Lock()
	ss := c.sessions
	c.mu.Unlock()
	for _, s := range ss {
		s.mu.Lock()
		snd := s.senders
		s.mu.Unlock()
		for _, x := range snd {
			x.pump()
		}
	}
}

// linkEndErr is the error a link or session ended with: its own, else
// that of what ended under it (the session's, then the connection's:
// engine.OnLinkDetach reports nil then), else ErrClosed.
func linkEndErr(e *engine.Error, es *engine.Session, scope Scope) error {
	if e != nil {
		return fromEngine(e, scope)
	}
	if scope == ScopeLink {
		if se := es.Err(); se != nil {
			return fromEngine(se, ScopeSession)
		}
	}
	if ec := es.Conn(); ec.Closed() {
		if ce := ec.Err(); ce != nil && !(ce.Description == "connection lost" && !ce.Remote && closingConn(es)) {
			return fromEngine(ce, ScopeConn)
		}
	}
	return ErrClosed
}

// closingConn reports a connection this end is closing (its loss is then
// no error).
func closingConn(es *engine.Session) bool {
	if s, ok := es.Context.(*Session); ok {
		s.c.mu.Lock()
		defer s.c.mu.Unlock()
		return s.c.closing
	}
	return false
}

// tapConn is the network connection the engine reads; until the open, it
// follows the peer's bytes to tell which stage of the exchange a failure
// came in: the protocol header, SASL, or the open.
type tapConn struct {
	net.Conn
	tracking atomic.Bool
	st       atomic.Int32 // stage*
	// followed on the reader's goroutine only
	hdr  int // bytes of a protocol header seen
	fh   [11]byte
	fn   int    // bytes of the frame header (and descriptor) seen
	skip uint32 // bytes of the current frame left to skip
}

const (
	stageHeader int32 = iota
	stageSASL
	stageOpen
)

func (t *tapConn) stage() string {
	switch t.st.Load() {
	case stageSASL:
		return "sasl"
	case stageOpen:
		return "open"
	}
	return "header"
}

func (t *tapConn) Read(b []byte) (int, error) {
	n, err := t.Conn.Read(b)
	if n > 0 && t.tracking.Load() {
		t.follow(b[:n])
	}
	return n, err
}

// follow walks the peer's bytes: a protocol header ("AMQP" id 1.0.0),
// then, after the SASL one, SASL frames until the outcome (descriptor
// 0x44), then the AMQP header.
func (t *tapConn) follow(p []byte) {
	for len(p) > 0 {
		switch st := t.st.Load(); {
		case st == stageOpen:
			return
		case t.hdr < 8:
			k := min(8-t.hdr, len(p))
			copy(t.fh[t.hdr:], p[:k])
			t.hdr += k
			p = p[k:]
			if t.hdr < 8 {
				return
			}
			// "AMQP", then the protocol id: 3 SASL, 0 AMQP
			switch {
			case string(t.fh[:4]) != "AMQP":
				t.tracking.Store(false) // not AMQP: the header stage failed
				return
			case t.fh[4] == 3:
				t.st.Store(stageSASL)
			default:
				t.st.Store(stageOpen)
			}
		case t.skip > 0:
			k := uint32(min(uint64(t.skip), uint64(len(p))))
			t.skip -= k
			p = p[k:]
		default:
			k := min(len(t.fh)-t.fn, len(p))
			copy(t.fh[t.fn:], p[:k])
			t.fn += k
			p = p[k:]
			if t.fn < len(t.fh) {
				return
			}
			size := uint32(t.fh[0])<<24 | uint32(t.fh[1])<<16 | uint32(t.fh[2])<<8 | uint32(t.fh[3])
			t.fn = 0
			if size > uint32(len(t.fh)) {
				t.skip = size - uint32(len(t.fh))
			}
			if t.fh[8] == 0x00 && t.fh[9] == 0x53 && t.fh[10] == 0x44 { // sasl-outcome
				t.hdr = 0 // the AMQP header follows
				t.st.Store(stageOpen)
				return
			}
		}
	}
}
