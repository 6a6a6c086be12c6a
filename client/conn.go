package client

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/amqpsax/amqpsax/driver"
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
	// SASLTypePlain, SASLTypeSCRAMSHA256, SASLTypeXOAUTH2 or
	// SASLTypeExternal. The zero SASLType uses PLAIN with the URL's user
	// and password when it has them, else ANONYMOUS. PLAIN and XOAUTH2
	// need TLS or AllowInsecurePlain.
	SASLType SASLType
	// AllowInsecurePlain lets SASL PLAIN (or XOAUTH2) send its password
	// (or token) over a connection without TLS (amqp://, ws://, or a net.Conn that is not
	// a *tls.Conn). Without it Dial and NewConn refuse to: they return
	// a *DialError of stage "sasl" matching ErrInsecurePlain, having
	// sent nothing. amqps://, wss:// and TLS connections need nothing.
	AllowInsecurePlain bool
	// TLSConfig is used for amqps:// URLs (nil: the default, with the
	// URL's host as ServerName).
	TLSConfig *tls.Config
	// Dialer, when set, makes Dial's network connection (and each
	// reconnection's) instead of TCP and TLS: it gets the address as
	// given to Dial. With it Dial takes ws:// and wss:// URLs as well,
	// for AMQP over WebSockets: ws.Dialer of the module
	// github.com/amqpsax/amqpsax/ws is one.
	Dialer func(ctx context.Context, addr string) (net.Conn, error)
	// Properties are the properties of this end's open (part 2 §2.7.1):
	// keys are written as symbols, values take the Go types a message's
	// application properties take (Azure reads "user-agent",
	// "product", "version"; RabbitMQ "connection_name").
	Properties map[string]any
	// MaxSessions bounds the sessions the peer may begin on the
	// connection (channel-max, part 2 §2.7.1, is MaxSessions-1, at
	// least 1); 0 means the engine's default (256).
	MaxSessions uint16
	// OfferedCapabilities and DesiredCapabilities are the capabilities
	// of this end's open: what it supports for the peer's use, and
	// what it wants of the peer (such as "ANONYMOUS-RELAY").
	OfferedCapabilities, DesiredCapabilities []string
	// Reconnect, for Dial, makes a lost connection (cut, failed, or
	// closed by the peer) be dialled again with back-off, its sessions
	// begun and its links attached again; nil: a lost connection ends
	// it. See ReconnectOptions.
	Reconnect *ReconnectOptions
}

// ReconnectOptions sets up reconnection (ConnOptions.Reconnect). While a
// connection is being dialled again, calls wait for it within their ctx.
// What was in flight when it was lost is returned as errors, never
// dropped silently: a message sent unsettled whose outcome had not
// arrived completes with the loss's *Error (its fate is unknown: send it
// again if it must arrive), unless its sender is resumable
// (SenderOptions.Durable: it is resumed, and completes with its real
// outcome); messages not yet sent are sent on the new link. Deliveries
// received and not yet settled are dropped (the broker delivers them
// again) and settling one of the old link returns the loss's error,
// unless the receiver is resumable (ReceiverOptions.Durable). A
// Transaction open at the loss ends with the loss's error (the
// coordinator rolls it back): work in it returns that error. Sessions
// and links keep their names, the connection its container-id. See
// "Reconnect" and "Resuming" in the package doc.
type ReconnectOptions struct {
	// MaxAttempts bounds the dials after each loss; 0 means no bound.
	// When they run out, the connection ends with the loss's error.
	MaxAttempts int
	// Backoff is the wait before the first dial (0: 100 ms), doubled
	// after each failed one up to MaxBackoff (0: 10 s).
	Backoff, MaxBackoff time.Duration
	// DialTimeout bounds each dial (0: 30 s).
	DialTimeout time.Duration
}

// SASLType is a SASL mechanism and its credentials (part 5 §5.3).
type SASLType struct {
	mech, user, pass string
	none             bool
	client           engine.ClientMechanism // when set: the engine's mechanism
	clear            bool                   // it sends a secret in the clear (PLAIN, XOAUTH2)
}

// SASLTypeAnonymous is SASL ANONYMOUS.
func SASLTypeAnonymous() SASLType { return SASLType{mech: "ANONYMOUS"} }

// SASLTypePlain is SASL PLAIN (RFC 4616) with a user and password.
func SASLTypePlain(user, password string) SASLType {
	return SASLType{mech: "PLAIN", user: user, pass: password, clear: true}
}

// SASLTypeSCRAMSHA256 is SASL SCRAM-SHA-256 (RFC 7677) with a user and
// password: the password never goes to the server, and the server
// proves it knows the credentials (RabbitMQ 4.1 and later, Qpid).
func SASLTypeSCRAMSHA256(user, password string) SASLType {
	return SASLType{mech: "SCRAM-SHA-256", user: user, client: engine.SCRAMSHA256Client(user, password)}
}

// SASLTypeXOAUTH2 is SASL XOAUTH2 with a user and an OAuth 2 bearer
// token. The token goes as it is, as PLAIN's password does: over a
// connection without TLS, Dial refuses it unless
// ConnOptions.AllowInsecurePlain is set.
func SASLTypeXOAUTH2(user, token string) SASLType {
	return SASLType{mech: "XOAUTH2", user: user, client: engine.XOAUTH2Client(user, token), clear: true}
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
	addr   string      // for errors: its password redacted
	secret []string    // the address's password, as written and decoded: never in an error
	t      target      // for a dial again
	opts   ConnOptions // likewise
	rc     *ReconnectOptions

	done chan struct{} // closed at the end, with err set

	mu          sync.Mutex
	pending     *gen          // dialled again, its sessions and links not yet up again
	wantPending bool          // the next one opened is pending
	g           *gen          // the connection up; nil while dialling again, or after the end
	up          chan struct{} // closed when a new one is up (while dialling again)
	stop        chan struct{} // closed by Close: no more dialling again
	lostErr     error         // why the last one was lost
	gens        int           // connections made
	err         error         // why it ended (nil: not yet)
	closing     bool          // Close was called
	sessions    []*Session
	redial      sync.WaitGroup
	last        peerFields // what the peer of the last connection up said in its open
}

// gen is one network connection of a Conn: more than one with Reconnect.
type gen struct {
	c      *Conn
	n      int // 1 for the first
	d      *driver.Driver
	nc     net.Conn      // the network connection d runs
	opened chan struct{} // closed by OnConnectionOpen
	ended  chan struct{} // closed by OnConnectionClose
	endErr error         // set before ended is closed
	peer   peerFields    // the peer's open, set before opened is closed
}

// Dial connects to addr and returns once the open exchange (TCP, TLS for
// amqps, the protocol header, SASL, open) is complete; ctx bounds all of
// it. addr is an amqp:// or amqps:// URL, with user:password for SASL
// PLAIN and an optional port (5672, 5671), or a bare host:port; with
// ConnOptions.Dialer, also a ws:// or wss:// URL (AMQP over WebSockets).
//
// An error is a *DialError naming the stage that failed.
func Dial(ctx context.Context, addr string, opts *ConnOptions) (*Conn, error) {
	var o ConnOptions
	if opts != nil {
		o = *opts
	}
	c := newConn(addr, &o)
	t, err := parseAddr(addr, &o)
	if err != nil {
		return nil, c.dialErr("tcp", err)
	}
	c.opts = o
	c.t, c.rc = t, o.Reconnect
	if err := c.dial(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// target is a parsed address.
type target struct {
	addr     string // as given: it may hold a password, never put in an error
	hostport string
	host     string
	tls      bool
}

func parseAddr(addr string, o *ConnOptions) (target, error) {
	t := target{addr: addr}
	if u, err := url.Parse(addr); err == nil && (u.Scheme == "ws" || u.Scheme == "wss") {
		if o.Dialer == nil {
			return t, errors.New("a " + u.Scheme + ":// URL needs ConnOptions.Dialer (ws.Dialer): " + addr)
		}
		t.host, t.hostport = u.Hostname(), u.Host
		if u.User != nil && o.SASLType.mech == "" && !o.SASLType.none {
			p, _ := u.User.Password()
			o.SASLType = SASLTypePlain(u.User.Username(), p)
		}
		return t, nil
	}
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
		if u.User != nil && o.SASLType.mech == "" && !o.SASLType.none {
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

func newConn(addr string, o *ConnOptions) *Conn {
	addr, secret := redactAddr(addr)
	return &Conn{addr: addr, secret: secret, opts: *o, done: make(chan struct{}), stop: make(chan struct{})}
}

// dialErr is a failure of Dial's stage: the one place a *DialError is
// made, with the address's password (and any error text that repeats
// it, such as net/url's) redacted.
func (c *Conn) dialErr(stage string, err error) *DialError {
	for _, p := range c.secret {
		if p != "" && strings.Contains(err.Error(), p) {
			err = redactedErr{err: err, secret: c.secret}
			break
		}
	}
	return &DialError{Addr: c.addr, Stage: stage, Err: err}
}

// dial makes the connection's next network connection.
func (c *Conn) dial(ctx context.Context) error {
	t, o := c.t, &c.opts
	if o.Dialer != nil {
		nc, err := o.Dialer(ctx, t.addr)
		if err != nil {
			return c.dialErr("dial", err)
		}
		if o.HostName == "" {
			o.HostName = t.host
		}
		return c.open(ctx, nc)
	}
	var dl net.Dialer
	nc, err := dl.DialContext(ctx, "tcp", t.hostport)
	if err != nil {
		return c.dialErr("tcp", err)
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
			return c.dialErr("tls", err)
		}
		nc = tc
	}
	if o.HostName == "" {
		o.HostName = t.host
	}
	return c.open(ctx, nc)
}

// NewConn runs a client connection over nc (already connected, TLS
// already done if wanted) and returns once the open exchange is complete;
// ctx bounds it. On an error nc is closed. An error is a *DialError.
func NewConn(ctx context.Context, nc net.Conn, opts *ConnOptions) (*Conn, error) {
	var o ConnOptions
	if opts != nil {
		o = *opts
	}
	o.Reconnect = nil // there is no address to dial again
	c := newConn(nc.RemoteAddr().String(), &o)
	if err := c.open(ctx, nc); err != nil {
		return nil, err
	}
	return c, nil
}

var containerSeq atomic.Uint64

// open runs the engine over nc and waits for the open exchange.
func (c *Conn) open(ctx context.Context, nc net.Conn) error {
	o := &c.opts
	cfg := engine.Config{ContainerID: o.ContainerID, Hostname: o.HostName, IdleTimeout: o.IdleTimeout,
		MaxFrameSize: o.MaxFrameSize, MaxMessageSize: o.MaxMessageSize,
		// ctx bounds the open exchange, not the engine's own time-out.
		HandshakeTimeout: 24 * time.Hour}
	props, err := symbolMap(o.Properties)
	if err != nil {
		nc.Close()
		return c.dialErr("open", err)
	}
	cfg.Properties = props
	cfg.OfferedCapabilities, cfg.DesiredCapabilities = symbols(o.OfferedCapabilities), symbols(o.DesiredCapabilities)
	if o.MaxSessions > 0 {
		cfg.ChannelMax = max(o.MaxSessions-1, 1)
	}
	if cfg.ContainerID == "" {
		o.ContainerID = "amqpsax-client-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.FormatUint(containerSeq.Add(1), 10)
		cfg.ContainerID = o.ContainerID
	}
	switch st := o.SASLType; {
	case st.none:
		cfg.NoSASL = true
	case st.client != nil:
		cfg.SASL = []engine.ClientMechanism{st.client}
	case st.mech != "":
		cfg.Mechanism, cfg.Username, cfg.Password = st.mech, st.user, st.pass
	}
	if o.SASLType.clear && !o.AllowInsecurePlain && !isTLS(nc) {
		nc.Close()
		return c.dialErr("sasl", ErrInsecurePlain)
	}
	c.mu.Lock()
	c.gens++
	g := &gen{c: c, n: c.gens, nc: nc, opened: make(chan struct{}), ended: make(chan struct{})}
	c.mu.Unlock()
	g.d = driver.NewDriver(nc, engine.NewClient(cfg, &handler{g: g}))
	go g.d.Run(context.Background())
	select {
	case <-g.opened:
		c.mu.Lock()
		defer c.mu.Unlock()
		switch {
		case c.closing:
			nc.Close()
			return ErrClosed
		case g.endErr != nil:
			return c.dialErr("open", g.endErr)
		case c.wantPending:
			c.pending = g
		default:
			c.g, c.last = g, g.peer
		}
		return nil
	case <-g.ended:
		<-g.d.Done()
		err = g.endErr
	case <-ctx.Done():
		nc.Close() // the driver sees the stream end at once
		<-g.d.Done()
		return c.dialErr(stageOf(g.d.Conn()), ctxErr(ctx))
	}
	var ce *Error
	if errors.As(err, &ce) && ce.Condition == "amqp:unauthorized-access" {
		return c.dialErr("sasl", err)
	}
	return c.dialErr(stageOf(g.d.Conn()), err)
}

// isTLS reports a connection that is TLS: a *tls.Conn, or one that
// tells its TLS state as it does (ws's over wss://).
func isTLS(nc net.Conn) bool {
	_, ok := nc.(interface{ ConnectionState() tls.ConnectionState })
	return ok
}

// Properties returns the properties of the peer's open (part 2 §2.7.1),
// keys as strings and values as stream.Cursor.Any gives them; nil when
// it sent none. With Reconnect, those of the connection up (or the last
// one).
func (c *Conn) Properties() map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last.props
}

// OfferedCapabilities returns the capabilities the peer offered in its
// open (part 2 §2.7.1), such as ANONYMOUS-RELAY; nil when it offered
// none. With Reconnect, those of the connection up (or the last one).
// The slice is shared: do not change it.
func (c *Conn) OfferedCapabilities() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last.offered
}

// DesiredCapabilities returns the capabilities the peer desired in its
// open; nil when it named none. With Reconnect, those of the connection
// up (or the last one). The slice is shared: do not change it.
func (c *Conn) DesiredCapabilities() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last.desired
}

// Err returns why the connection ended, or nil while it is up.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Done is closed when the connection has ended (Err tells why).
func (c *Conn) Done() <-chan struct{} { return c.done }

// current returns the connection up, waiting within ctx while it is
// being dialled again.
func (c *Conn) current(ctx context.Context) (*gen, error) {
	for {
		c.mu.Lock()
		g, up := c.g, c.up
		c.mu.Unlock()
		if g != nil {
			return g, nil
		}
		if up == nil {
			return nil, c.endErr()
		}
		select {
		case <-up:
		case <-c.done:
			return nil, c.endErr()
		case <-ctx.Done():
			return nil, ctxErr(ctx)
		}
	}
}

// do runs f on the goroutine of the connection up; false if there is
// none (ended, or being dialled again).
func (c *Conn) do(f func(*engine.Conn)) bool {
	c.mu.Lock()
	g := c.g
	c.mu.Unlock()
	return g != nil && g.d.Do(f)
}

// call runs f on a connection's goroutine and waits for it, ctx, or
// that connection's end, and returns the connection f ran on. With on
// set, f runs on that connection alone (one dialled again, its sessions
// and links not yet up again). Else it runs on the connection up,
// waiting within ctx, with Reconnect, for one to be dialled again; and
// when f failed because its connection was lost, or was ending
// (errEnding: f found it closed), it runs again on the next one.
func (c *Conn) call(ctx context.Context, on *gen, f func(*engine.Conn) error) (*gen, error) {
	for {
		g := on
		if g == nil {
			var err error
			if g, err = c.current(ctx); err != nil {
				return nil, err
			}
		}
		res := make(chan error, 1)
		// The caller holds none of the client's locks: f runs here
		// when the connection is free.
		if !g.d.DoNow(func(ec *engine.Conn) { res <- f(ec) }) {
			if on != nil {
				return g, c.lostOr(g)
			}
			<-g.ended
			continue // lost meanwhile: the next one
		}
		var err error
		select {
		case err = <-res:
		case <-ctx.Done():
			return g, ctxErr(ctx)
		case <-g.ended:
			select {
			case err = <-res:
			default:
				err = c.lostOr(g)
			}
		}
		if err == errEnding {
			// The connection is ending (its links' events come before
			// its own): the next one, or its end's error.
			select {
			case <-g.ended:
			case <-ctx.Done():
				return g, ctxErr(ctx)
			}
			if on != nil || !c.reconnecting() {
				return g, c.lostOr(g)
			}
			continue
		}
		if err != nil && on == nil && g.lost() && c.reconnecting() {
			// f failed because g was lost (it ran on g ending, or not
			// at all): with Reconnect, on the next connection.
			continue
		}
		return g, err
	}
}

// errEnding is an attach on a connection that is ending: call tries the
// next.
var errEnding = errors.New("client: connection ending")

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
	if !c.closing {
		c.closing = true
		close(c.stop)
	}
	g := c.g
	c.mu.Unlock()
	var err error
	if g != nil {
		g.d.Do(func(ec *engine.Conn) {
			if ec.Close(nil) != nil {
				ec.CloseRead()
			}
		})
		select {
		case <-g.d.Done():
		case <-ctx.Done():
			g.nc.Close()
			<-g.d.Done()
			err = ctxErr(ctx)
		}
	}
	c.redial.Wait() // a dial again under way gives up
	c.finish(ErrClosed)
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

// finish ends the connection for good with err (unless it has ended):
// what waited for a connection to be dialled again ends with it.
func (c *Conn) finish(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	c.g = nil
	up := c.up
	c.up = nil
	ss := c.sessions
	c.sessions = nil
	c.mu.Unlock()
	// Sessions and links waiting for a new connection end here; no
	// connection goroutine runs now.
	for _, s := range ss {
		s.endAll(err)
	}
	close(c.done)
	if up != nil {
		close(up)
	}
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
	if ctx.Err() != nil {
		return nil, ctxErr(ctx) // nothing begun for a call that cannot wait
	}
	g, err := c.call(ctx, nil, s.begin)
	if err != nil {
		// ctx may have ended with s.begin queued: it still runs, and
		// abandon, queued after it, ends what it began.
		s.abandon()
		return nil, err
	}
	if err := s.waitBegun(ctx, g); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.g != g {
		return nil, c.lostOr(g)
	}
	c.sessions = append(c.sessions, s)
	return s, nil
}

// lostOr is the error of a call whose connection g was lost: g's error.
func (c *Conn) lostOr(g *gen) error {
	if g.endErr != nil {
		return g.endErr
	}
	return ErrClosed
}

func (h *handler) OnConnectionOpen(ec *engine.Conn) {
	o := ec.RemoteOpen()
	h.g.peer = peerOf(o.Properties, o.OfferedCapabilities, o.DesiredCapabilities)
	close(h.g.opened)
}

func (h *handler) OnConnectionClose(ec *engine.Conn, e *engine.Error) {
	g := h.g
	c := g.c
	c.mu.Lock()
	var err error
	switch {
	case e != nil && !(c.closing && !e.Remote):
		// (the engine's own error while this end closes, such as the
		// stream ending before the peer's close: the close is clean)
		err = fromEngine(e, ScopeConn)
	default:
		err = ErrClosed
	}
	g.endErr = err
	current := c.g == g
	if current {
		c.g = nil
	}
	if c.pending == g {
		c.pending = nil // the dial again in progress tries once more
	}
	again := current && c.rc != nil && !c.closing && c.err == nil
	if again {
		c.lostErr = err
		c.up = make(chan struct{})
		c.redial.Add(1)
	}
	c.mu.Unlock()
	close(g.ended)
	switch {
	case again:
		go c.dialAgain()
	case current:
		c.finish(err)
	}
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
		if es.Conn().Closed() && h.g.c.reconnecting() {
			s.es = nil // begun again on the next connection
			return
		}
		s.ended(linkEndErr(e, es, ScopeSession))
	}
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

// reconnecting reports a connection that dials again when it is lost
// (and is not being closed).
func (c *Conn) reconnecting() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rc != nil && !c.closing && c.err == nil
}

// stageOf names the stage of the open exchange that a connection ended
// in, for a DialError: "header" until the peer's protocol header, "sasl"
// until its SASL outcome, then "open".
func stageOf(c *engine.Conn) string {
	switch c.Phase() {
	case engine.PhaseSASL:
		return "sasl"
	case engine.PhaseHeaderAMQP, engine.PhaseOpen, engine.PhaseOpened:
		return "open"
	}
	return "header"
}
