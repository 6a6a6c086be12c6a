package engine

import (
	"crypto/x509"
	"errors"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/frame"
)

// This file is the connection (part 2 §2.4): the Conn and its
// constructors, Feed and the frame loop, route (one switch on the
// descriptor of each AMQP frame to its performative's onX: the
// channel's session's, or the connection's onBegin and onClose;
// routeHandshake for protocol headers, SASL and the open), open and
// close, the output buffer (Output, Written, WantRead; startFrame and
// endFrame around each frame written), Tick (heartbeats, idle and
// handshake time-outs), and begin, where the session's own file takes
// over (session.go). SASL is in sasl.go, links in link.go.

// Phase is the stage a connection has reached in its exchange with the
// peer: what it reads next (part 2 §2.2 headers, part 5 §5.2 TLS, §5.3
// SASL, part 2 §2.4.1 open). Conn.Phase reports it.
type Phase uint8

const (
	PhaseHeader     Phase = iota // the peer's protocol header: the first, or the first over TLS after the upgrade
	PhaseTLS                     // the TLS header exchanged: the TLS handshake is due (Conn.UpgradeTLS)
	PhaseSASL                    // SASL frames, after the SASL header
	PhaseHeaderAMQP              // the AMQP header, after a SASL outcome
	PhaseOpen                    // the peer's open, after the AMQP header
	PhaseOpened                  // the open exchanged: sessions, links, transfers
)

// String returns the phase's name: "header", "tls", "sasl",
// "amqp-header", "open", "opened".
func (p Phase) String() string {
	switch p {
	case PhaseHeader:
		return "header"
	case PhaseTLS:
		return "tls"
	case PhaseSASL:
		return "sasl"
	case PhaseHeaderAMQP:
		return "amqp-header"
	case PhaseOpen:
		return "open"
	case PhaseOpened:
		return "opened"
	}
	return "Phase(" + strconv.Itoa(int(p)) + ")"
}

// phase is Phase with the short names the engine's code uses, and phDone,
// which Conn.Phase never reports.
type phase = Phase

const (
	phHeader     = PhaseHeader
	phTLS        = PhaseTLS
	phSASL       = PhaseSASL
	phHeaderAMQP = PhaseHeaderAMQP
	phOpen       = PhaseOpen
	phOpened     = PhaseOpened
	phDone       = PhaseOpened + 1 // nothing more is read: closed or failed
)

// Conn is one end of an AMQP connection (part 2 §2.4), server or client,
// with no I/O of its own: Feed it the bytes read from the peer, write out
// what Output returns and report it with Written, call Tick by the
// deadline it returns, and CloseRead when the peer's stream ends. Events
// reach the Handler given to NewServer or NewClient.
//
// A Conn, its sessions and links are not safe for use by several
// goroutines at once: call their methods on the goroutine that feeds it
// (package driver's Driver.Do runs a function there).
type Conn struct {
	// Context is the application's, for its own state.
	Context any

	cfg    Config
	h      Handler
	client bool

	part    []byte // a frame begun in one Feed and not complete yet: its bytes so far
	partOff int64  // where it starts in the stream
	off     int64  // bytes fed before the current Feed, for error offsets
	now     time.Time

	lastRecv, lastSent time.Time
	started            time.Time // the first time given
	clock              bool      // now has been set

	st      endpoint // open and close, sent and received
	in      phase    // what the connection reads next; phDone once it is over
	endedIn phase    // what it read next when it ended (finish)
	out     []byte
	outHead int
	full    bool // Send reported ErrOutputFull: OnWritable is due

	// SASL
	tlsAsked bool   // a client's TLS header sent, the upgrade not yet done
	tlsUp    bool   // upgraded to TLS by the TLS header
	early    []byte // bytes fed after the TLS header: the peer's first TLS records
	sasl     bool   // SASL in use
	identity string
	saslMech string         // the mechanism chosen
	saslEx   SASLExchange   // a server's exchange under way
	saslCli  ClientExchange // a client's exchange under way

	closeAt time.Time // when this end's close was written
	err     *Error    // why the connection failed or closed

	open             frame.Open // the peer's, parsed from openBuf: views valid for the Conn's life
	openBuf          []byte
	remoteMaxFrame   uint32
	remoteChannelMax uint16
	remoteIdle       time.Duration

	byRemote []*Session // by the peer's channel
	byLocal  []*Session // by this end's channel
	nLocal   int        // sessions in byLocal

	maxMessage int                // MaxMessageSize, as an int
	names      map[linkName]*Link // the links by name and direction (part 2 §2.6.1)
	held       int                // bytes of the memory budget in use (budget.go)
	peak       int

	th frame.TransferHead // the transfer being read

	told     []toldDisp // the deliveries a disposition named, to report
	toldTags []byte

	txn connTxn // transactions declared here (txn.go)

	due  []*Session // sessions whose incoming window is to be topped up
	drv  any        // whoever runs the connection (SetDriver)
	disp pendingDisp
}

// NewServer returns the server end of a connection: it waits for the
// client's protocol header.
func NewServer(cfg Config, h Handler) *Conn { return newConn(cfg, h, false) }

// NewClient returns the client end of a connection. Its protocol header
// (SASL's, unless Config.NoSASL, else AMQP's followed by its open) is in
// Output at once.
func NewClient(cfg Config, h Handler) *Conn {
	c := newConn(cfg, h, true)
	if cfg.TLSHeader {
		c.tlsAsked = true
		c.out = frame.AppendProtocolHeader(c.out, frame.HeaderTLS)
		return c
	}
	c.clientHeader()
	return c
}

// clientHeader writes a client's first header after TLS, if any: SASL's,
// unless Config.NoSASL, else AMQP's followed by its open.
func (c *Conn) clientHeader() {
	if c.cfg.NoSASL {
		c.out = frame.AppendProtocolHeader(c.out, frame.HeaderAMQP)
		c.writeOpen()
	} else {
		c.sasl = true
		c.out = frame.AppendProtocolHeader(c.out, frame.HeaderSASL)
	}
}

func newConn(cfg Config, h Handler, client bool) *Conn {
	cfg.defaults()
	if h == nil {
		h = NopHandler{}
	}
	c := &Conn{cfg: cfg, h: h, client: client, remoteMaxFrame: 512, remoteChannelMax: frame.SpecChannelMax}
	c.maxMessage = int(min(cfg.MaxMessageSize, math.MaxInt32))
	return c
}

// Config returns the connection's configuration, defaults filled in.
func (c *Conn) Config() Config { return c.cfg }

// IsClient reports the client end.
func (c *Conn) IsClient() bool { return c.client }

// RemoteContainerID returns the container-id of the peer's open.
func (c *Conn) RemoteContainerID() string { return string(c.open.ContainerID) }

// RemoteHostname returns the hostname of the peer's open.
func (c *Conn) RemoteHostname() string { return string(c.open.Hostname) }

// RemoteOpen returns the peer's open as parsed (part 2 §2.7.1): its
// Properties, OfferedCapabilities, DesiredCapabilities, locales and the
// rest, views into the copy of the open the connection keeps, valid for
// the connection's life; zero until it has arrived (OnConnectionOpen).
// That copy counts in the memory budget (Config.MaxMemory).
func (c *Conn) RemoteOpen() *frame.Open { return &c.open }

// Identity returns the identity SASL authenticated (a server's view), or
// "".
func (c *Conn) Identity() string { return c.identity }

// RemoteMaxFrameSize returns the peer's max-frame-size: outgoing
// transfers are split to fit it.
func (c *Conn) RemoteMaxFrameSize() uint32 { return c.remoteMaxFrame }

// RemoteIdleTimeout returns the peer's idle time-out; the engine sends a
// heartbeat when it has written nothing for half of it.
func (c *Conn) RemoteIdleTimeout() time.Duration { return c.remoteIdle }

// Err returns why the connection failed or closed (the peer's error,
// Remote set, or the engine's), or nil.
func (c *Conn) Err() *Error { return c.err }

func (c *Conn) setNow(now time.Time) {
	c.now = now
	if !c.clock {
		c.clock = true
		c.lastRecv, c.lastSent, c.started = now, now, now
	}
}

// Feed hands the engine bytes read from the peer, with the time they were
// read. It processes every complete frame among them (and one left
// incomplete by the last call), raising events, and keeps an incomplete
// frame's bytes for the next call. Whole frames are parsed where they lie
// in p (frame.Split); only the bytes of a frame that p does not complete
// are copied. The bytes of p are not kept: p may be reused once Feed
// returns. It returns the connection's error once it has failed or
// closed with one (a fault of the peer: the close carrying it is in
// Output), else nil.
func (c *Conn) Feed(p []byte, now time.Time) error {
	c.setNow(now)
	c.lastRecv = now
	if c.in == phDone {
		return c.fedErr()
	}
	if c.in == phTLS {
		c.early = append(c.early, p...)
		return nil
	}
	fed := len(p)
	if len(c.part) > 0 {
		p = c.fill(p)
	}
	for c.in != phDone && c.in != phTLS && len(p) > 0 {
		f, n, err := frame.Split(p, c.cfg.MaxFrameSize)
		if err != nil {
			c.apply(c.readFault(err, c.off+int64(fed-len(p))))
			break
		}
		if n == 0 {
			c.part = append(c.part[:0], p...)
			c.partOff = c.off + int64(fed-len(p))
			break
		}
		p = p[n:]
		if err := c.route(&f); err != nil {
			c.apply(err)
		}
	}
	if c.in == phTLS && len(p) > 0 {
		c.early = append(c.early, p...) // the peer's TLS records, for the handshake
	}
	c.off += int64(fed)
	for i, s := range c.due {
		s.flowDue = false
		if s.usable() && s.incomingWindow <= s.window/2 {
			s.writeFlow(nil, false)
		}
		c.due[i] = nil
	}
	c.due = c.due[:0]
	return c.fedErr()
}

// fill completes the partial frame kept from the last Feed with the
// first bytes of p, processes it when whole, and returns what is left of
// p.
func (c *Conn) fill(p []byte) []byte {
	for {
		need := frame.Need(c.part, c.cfg.MaxFrameSize)
		if need == 0 { // a header that can never be right: Split says why
			break
		}
		if len(c.part) >= need {
			break
		}
		k := min(need-len(c.part), len(p))
		if k == 0 {
			return p
		}
		c.part = append(c.part, p[:k]...)
		p = p[k:]
	}
	f, n, err := frame.Split(c.part, c.cfg.MaxFrameSize)
	switch {
	case err != nil:
		c.apply(c.readFault(err, c.partOff))
	case n > 0:
		c.apply(c.route(&f))
	}
	c.part = c.part[:0]
	return p
}

func (c *Conn) fedErr() error {
	if c.err != nil && !c.err.Remote {
		return c.err
	}
	return nil
}

// readFault is the fault of a stream that frame.Split cannot split, at
// offset off of the stream, for apply.
func (c *Conn) readFault(err error, off int64) error {
	var re *frame.ReadError
	if errors.As(err, &re) {
		re.Offset = off
	}
	if c.in == phHeader || c.in == phHeaderAMQP {
		return &headerError{frame.CondFramingError, "protocol header expected"}
	}
	desc := err.Error()
	if errors.As(err, &re) && errors.Is(err, frame.ErrFrameTooLarge) {
		desc = "frame of " + strconv.FormatUint(uint64(re.Size), 10) + " bytes above max-frame-size " +
			strconv.FormatUint(uint64(c.cfg.MaxFrameSize), 10) + " at offset " + strconv.FormatInt(off, 10)
	}
	if c.in == phSASL {
		return &saslError{frame.SASLSysPerm, frame.CondFramingError, desc}
	}
	return &connError{frame.CondFramingError, desc}
}

// route takes a frame to the function of its performative, each in one
// step: an AMQP frame on an open connection by one switch on its
// descriptor, with its channel's session looked up once, to the
// session's onTransfer, onFlow, onDisposition, onAttach, onDetach or
// onEnd, or the connection's onBegin or onClose; everything before the
// open is exchanged (protocol headers, SASL, the open) and heartbeats
// go through routeHandshake. It returns the fault of the peer it found,
// for apply.
func (c *Conn) route(f *frame.Frame) error {
	b := f.Body
	if len(b) == 0 || c.in != phOpened || f.Type != frame.TypeAMQP || f.IsHeader {
		return c.routeHandshake(f)
	}
	var d amqpsax.Descriptor
	if len(b) >= 3 && b[0] == 0 && b[1] == byte(amqpsax.CodeSmallUlong) { // every peer writes smallulong (descriptor)
		d = amqpsax.Descriptor(b[2])
	} else {
		var err error
		if d, err = frame.Performative(b); err != nil {
			return decodeError(err)
		}
	}
	var s *Session
	if int(f.Channel) < len(c.byRemote) {
		s = c.byRemote[f.Channel]
	}
	// The peer's close ends the connection at once (onClose: finish), so
	// nothing is routed after it. The switch's common case first: a
	// transfer on a begun session.
	if d == amqpsax.DescriptorTransfer && s != nil {
		return s.onTransfer(b)
	}
	switch d {
	case amqpsax.DescriptorTransfer:
	case amqpsax.DescriptorFlow:
		if s != nil {
			return s.onFlow(b)
		}
	case amqpsax.DescriptorDisposition:
		if s != nil {
			return s.onDisposition(b)
		}
	case amqpsax.DescriptorAttach:
		if s != nil {
			return s.onAttach(b)
		}
	case amqpsax.DescriptorDetach:
		if s != nil {
			return s.onDetach(b)
		}
	case amqpsax.DescriptorEnd:
		if s != nil {
			return s.onEnd(b)
		}
	case amqpsax.DescriptorBegin:
		return c.onBegin(f.Channel, b)
	case amqpsax.DescriptorClose:
		return c.onClose(b)
	case amqpsax.DescriptorOpen:
		return &connError{frame.CondIllegalState, "second open"}
	default:
		return notPerformative(d)
	}
	return noSession(f.Channel)
}

// noSession is the fault of a frame on channel ch, where no session has
// begun.
func noSession(ch uint16) error {
	return &connError{frame.CondNotAllowed, "frame on channel " + strconv.Itoa(int(ch)) + ", where no session has begun"}
}

// notPerformative is the fault of a frame whose descriptor d is no
// performative's.
func notPerformative(d amqpsax.Descriptor) error {
	return &connError{frame.CondDecodeError, "frame body is no performative (descriptor " + strconv.FormatUint(uint64(d), 16) + ")"}
}

// routeHandshake is route for what comes before the open is exchanged
// (protocol headers, SASL frames, the open), a heartbeat, and what is
// out of place (a header mid-stream, a frame of the wrong type).
func (c *Conn) routeHandshake(f *frame.Frame) error {
	if f.IsHeader {
		return c.header(f.Header)
	}
	switch c.in {
	case phHeader, phHeaderAMQP:
		return &headerError{frame.CondFramingError, "protocol header expected"}
	case phSASL:
		if f.Type != frame.TypeSASL {
			return &saslError{frame.SASLSysPerm, frame.CondFramingError, "AMQP frame during SASL"}
		}
		return c.saslFrame(f.Body)
	}
	if f.Type != frame.TypeAMQP {
		return &connError{frame.CondFramingError, "frame of type " + strconv.Itoa(int(f.Type)) + " on an AMQP connection"}
	}
	if len(f.Body) == 0 {
		return nil // heartbeat (§2.4.5): lastRecv is set by Feed
	}
	// the open (phOpen): route takes every other AMQP frame
	if d, err := descriptor(f.Body); err != nil {
		return decodeError(err)
	} else if d != amqpsax.DescriptorOpen {
		return &connError{frame.CondIllegalState, "first frame is not open"}
	}
	return c.onOpen(f.Body)
}

// header handles a protocol header (part 2 §2.2, part 5 §5.1-5.3); it
// returns the fault it found, for apply.
func (c *Conn) header(h frame.ProtocolHeader) error {
	switch {
	case c.in != phHeader && c.in != phHeaderAMQP:
		return &connError{frame.CondFramingError, "protocol header in the middle of the stream"}
	case c.client && c.tlsAsked:
		if h != frame.HeaderTLS {
			return &headerError{frame.CondNotAllowed, "server answered " + h.String() + " to " + frame.HeaderTLS.String()}
		}
		c.in = phTLS
	case h.ID == frame.ProtocolTLS && c.in == phHeader && !c.client && c.cfg.TLSHeader && !c.tlsUp:
		c.out = frame.AppendProtocolHeader(c.out, frame.HeaderTLS)
		c.in = phTLS
	case h.ID == frame.ProtocolTLS:
		return &headerError{frame.CondNotAllowed, "TLS by protocol header is not accepted here (Config.TLSHeader)"}
	case h.Major != 1 || h.Minor != 0 || h.Revision != 0:
		return &headerError{frame.CondFramingError, "unsupported protocol version " + h.String()}
	case c.tlsRequired():
		return &headerError{frame.CondNotAllowed, h.String() + " in the clear: this server requires TLS (Config.RequireTLS)"}
	case c.client:
		want := frame.HeaderAMQP
		if c.in == phHeader && c.sasl {
			want = frame.HeaderSASL
		}
		if h != want {
			return &headerError{frame.CondNotAllowed, "server answered " + h.String() + " to " + want.String()}
		}
		if h.ID == frame.ProtocolSASL {
			c.in = phSASL
		} else {
			c.in = phOpen
		}
	case c.in == phHeaderAMQP:
		if h.ID != frame.ProtocolAMQP {
			return &headerError{frame.CondFramingError, "AMQP header expected after SASL, got " + h.String()}
		}
		c.out = frame.AppendProtocolHeader(c.out, frame.HeaderAMQP)
		c.in = phOpen
	case h.ID == frame.ProtocolSASL:
		c.sasl = true
		c.out = frame.AppendProtocolHeader(c.out, frame.HeaderSASL)
		c.saslMechanisms()
		c.in = phSASL
	case h.ID == frame.ProtocolAMQP && c.cfg.Auth != nil:
		return &headerError{frame.CondNotAllowed, "SASL required"}
	case h.ID == frame.ProtocolAMQP:
		c.out = frame.AppendProtocolHeader(c.out, frame.HeaderAMQP)
		c.in = phOpen
	default:
		return &headerError{frame.CondFramingError, "unsupported protocol " + h.String()}
	}
	return nil
}

// spokenHeader is the protocol header a server speaks at this point,
// with which it answers a header it refuses (part 2 §2.2).
func (c *Conn) spokenHeader() frame.ProtocolHeader {
	if c.tlsRequired() {
		return frame.HeaderTLS
	}
	if c.cfg.Auth != nil && c.in == phHeader {
		return frame.HeaderSASL
	}
	return frame.HeaderAMQP
}

// UpgradeTLS reports that the TLS protocol header has been exchanged
// (part 5 §5.2: Config.TLSHeader, as a client or a server) and the TLS
// handshake is due. The engine is sans-IO, so its driver does the
// handshake: it writes out Output (a server's answering TLS header),
// runs crypto/tls over the transport, whose first bytes are early (what
// Feed was given past the TLS header, the start of the peer's
// handshake; usually none), and then calls TLSEstablished, or
// ReadFailed with the handshake's error. Until then Feed keeps what it
// is given in early and processes nothing. The handshake time-out
// (Config.HandshakeTimeout) runs through it. Package driver's Driver
// does all of this by itself (Driver.TLSConfig).
func (c *Conn) UpgradeTLS() (due bool, early []byte) {
	return c.in == phTLS, c.early
}

// TLSEstablished tells the engine that the TLS handshake that
// UpgradeTLS asked for is done, with the peer's verified certificates
// (nil for none): a server then offers SASL EXTERNAL for them, as for
// direct TLS (Config.PeerCertificates). The protocol starts again over
// TLS: a client sends its SASL or AMQP header, a server waits for it.
// The bytes early held are the driver's now. Called at any other time it
// does nothing.
func (c *Conn) TLSEstablished(peer []*x509.Certificate) {
	if c.in != phTLS {
		return
	}
	c.in, c.early, c.tlsAsked, c.tlsUp = phHeader, nil, false, true
	c.cfg.PeerCertificates = peer
	if c.client {
		c.clientHeader()
	}
}

// DirectTLS tells a server made with Config.TLSHeader that its transport
// turned out to be TLS from the first byte (the client began with a TLS
// handshake: amqps) and that the driver has done that handshake, with the
// peer's verified certificates (nil for none; Config.PeerCertificates).
// The connection then goes on as one without Config.TLSHeader: a TLS
// header inside the TLS is refused, and TLS reports false. Call it
// before anything is fed; at any other time, or on a client, it does
// nothing.
func (c *Conn) DirectTLS(peer []*x509.Certificate) {
	if c.client || c.in != phHeader || c.off != 0 || len(c.part) > 0 || !c.cfg.TLSHeader || c.tlsUp {
		return
	}
	c.cfg.TLSHeader = false
	c.cfg.PeerCertificates = peer
}

// tlsRequired reports a server that requires TLS (Config.RequireTLS)
// still before it: a header now must be the TLS header.
func (c *Conn) tlsRequired() bool {
	return !c.client && c.in == phHeader && c.cfg.TLSHeader && c.cfg.RequireTLS && !c.tlsUp
}

// TLS reports whether the connection was upgraded to TLS by the TLS
// protocol header (TLSEstablished).
func (c *Conn) TLS() bool { return c.tlsUp }

// descriptor returns the performative descriptor of a non-empty body:
// 0x00 0x53 code is the fast path (every peer writes smallulong).
func descriptor(body []byte) (amqpsax.Descriptor, error) {
	if len(body) >= 3 && body[0] == 0x00 && body[1] == 0x53 {
		return amqpsax.Descriptor(body[2]), nil
	}
	return frame.Performative(body)
}

// onOpen handles the peer's open (part 2 §2.7.1, §2.4.1): max-frame-size,
// channel-max and idle-time-out negotiated.
//
// The connection keeps a copy of the open (RemoteOpen), which the
// budget counts; the container-id and hostname are views of it.
func (c *Conn) onOpen(body []byte) error {
	buf := append([]byte(nil), body...)
	if err := c.charge(cap(buf)); err != nil {
		return err
	}
	o, err := frame.ParseOpen(buf)
	if err != nil {
		return decodeError(err)
	}
	c.open, c.openBuf = o, buf
	maxFrame := o.MaxFrameSize.Or(math.MaxUint32)
	if maxFrame < 512 {
		return &connError{frame.CondInvalidField, "max-frame-size below 512"}
	}
	c.remoteMaxFrame = min(maxFrame, math.MaxInt32)
	c.remoteChannelMax = o.ChannelMax.Or(frame.SpecChannelMax)
	c.remoteIdle = time.Duration(o.IdleTimeOut.Or(0)) * time.Millisecond
	c.st.remote = active
	if c.st.local == unset {
		c.writeOpen()
	}
	c.in = phOpened
	if c.st.local == active {
		c.h.OnConnectionOpen(c)
	}
	return nil
}

func (c *Conn) writeOpen() {
	o := frame.Open{ContainerID: []byte(c.cfg.ContainerID), MaxFrameSize: frame.Some(c.cfg.MaxFrameSize),
		ChannelMax: frame.Some(c.cfg.ChannelMax)}
	if c.cfg.IdleTimeout > 0 {
		o.IdleTimeOut = frame.Some(uint32(c.cfg.IdleTimeout / time.Millisecond))
	}
	if c.client && c.cfg.Hostname != "" {
		o.Hostname = []byte(c.cfg.Hostname)
	}
	o.Properties, o.OfferedCapabilities, o.DesiredCapabilities = c.cfg.Properties, c.cfg.OfferedCapabilities, c.cfg.DesiredCapabilities
	start := c.startFrame(0)
	c.out = frame.AppendOpen(c.out, o)
	c.endFrame(start)
	c.st.local = active
}

// onClose handles the peer's close (part 2 §2.7.9, §2.4.3).
func (c *Conn) onClose(body []byte) error {
	cl, err := frame.ParseClose(body)
	if err != nil {
		return decodeError(err)
	}
	c.st.remote = closed
	rerr := remoteError(cl.Has(frame.CloseError), cl.Error)
	if c.st.local == active {
		c.writeClose(nil)
	}
	if c.err == nil {
		c.err = rerr
	}
	c.finish(c.err)
	return nil
}

// Close closes the connection with the error e (nil for none): it sends
// close; OnConnectionClose follows the peer's.
//
// Before the AMQP layer is reached (protocol headers, SASL) there is no
// close to send: the connection ends at once. Once this end's close is
// written, or the connection is over, Close returns ErrState.
func (c *Conn) Close(e *Error) error {
	if c.st.local == closed || c.in == phDone {
		return ErrState
	}
	if c.st.local == unset && c.in != phOpened && c.in != phOpen {
		c.finish(e)
		return nil
	}
	if c.err == nil {
		c.err = e
	}
	if c.st.local == unset {
		c.writeOpen()
	}
	c.writeClose(e)
	return nil
}

func (c *Conn) writeClose(e *Error) {
	cl := frame.Close{Error: e.amqp()}
	start := c.startFrame(0)
	c.out = frame.AppendClose(c.out, cl)
	c.endFrame(start)
	c.st.local = closed
	c.closeAt = c.now
}

// fail closes the connection for a fault of the peer (or an idle
// time-out) with the condition cond: close carries it, and the connection
// is done once that is written; the peer's answer is not awaited.
func (c *Conn) fail(cond frame.Condition, desc string) {
	if c.in == phDone {
		return
	}
	e := NewError(cond, desc)
	if c.st.local != closed {
		if c.st.local == unset {
			c.writeOpen() // a close must follow an open (§2.4.5)
		}
		c.writeClose(e)
	}
	c.err = e
	c.finish(e)
}

// finish ends the connection: every session and link still up ends with
// it (their events first), then OnConnectionClose.
//
// The connection's error is handed down: a session or link that ends
// with it, and had no error of its own, reports the connection's.
func (c *Conn) finish(e *Error) {
	if c.in == phDone {
		return
	}
	if c.err == nil {
		c.err = e
	}
	c.endedIn, c.in = c.in, phDone
	c.st = endpoint{closed, closed}
	c.flushDisp()
	for _, s := range c.byLocal {
		if s != nil {
			s.gone(c.err)
		}
	}
	c.release(cap(c.openBuf)) // the peer's open, kept for RemoteOpen
	c.h.OnConnectionClose(c, c.err)
}

// CloseRead tells the engine that the peer's stream has ended (EOF). It
// is ReadFailed(io.EOF).
func (c *Conn) CloseRead() { c.ReadFailed(io.EOF) }

// ReadFailed tells the engine that the peer's stream has ended: err is
// io.EOF for an orderly end, else the read's error (a reset, a time-out).
// A connection not closed by then is lost: OnConnectionClose reports
// amqp:connection:framing-error with a description that names the stage
// (protocol header, SASL, open, after the open) and what ended it
// ("peer sent EOF", or the error), such as "connection lost during SASL:
// peer sent EOF". After this end's close was written, the close's error
// (or none) stands: the peer did not answer, and nothing else was lost.
func (c *Conn) ReadFailed(err error) {
	if c.in == phDone {
		return
	}
	e := c.err
	if c.st.local != closed {
		why := "peer sent EOF"
		if err != nil && err != io.EOF {
			why = err.Error()
		}
		e = NewError(frame.CondFramingError, "connection lost "+c.stage()+": "+why)
		c.err = e
	}
	c.finish(e)
}

// stage names where the connection is, for failure texts.
func (c *Conn) stage() string {
	switch {
	case c.in == phHeader, c.in == phHeaderAMQP:
		return "before the protocol header"
	case c.in == phTLS:
		return "during the TLS handshake"
	case c.in == phSASL:
		return "during SASL"
	case c.in == phOpen:
		return "before the open"
	}
	return "after the open"
}

// Done reports that the connection is over and its output written out:
// the driver closes the transport.
func (c *Conn) Done() bool { return c.in == phDone && c.outHead == len(c.out) && !c.disp.on }

// Closed reports that the connection is over (OnConnectionClose has
// fired), output perhaps still to be written.
func (c *Conn) Closed() bool { return c.in == phDone }

// Closing reports that this end has closed the connection (Close, or a
// fault of the peer): its close is in the output, and what is left to
// come is the peer's close. A driver reads on for it.
func (c *Conn) Closing() bool { return c.st.local == closed }

// Phase returns the stage the connection has reached: what it reads next
// from the peer. Once the connection is over (Closed), it returns the
// stage the connection was in when it ended, so that a failure can be
// placed in the exchange (the client's dial errors name it).
func (c *Conn) Phase() Phase {
	if c.in == phDone {
		return c.endedIn
	}
	return c.in
}

// SetDriver records d as what runs the connection: the Driver of package
// github.com/amqpsax/amqpsax/driver records itself here, for its Of. The
// engine does nothing with it. Call it before the connection runs, or
// on the goroutine that runs it.
func (c *Conn) SetDriver(d any) { c.drv = d }

// Driver returns what SetDriver recorded, or nil.
func (c *Conn) Driver() any { return c.drv }

// Output returns the bytes to write to the peer, in order: a view into the
// engine's buffer. Report what was written with Written. Only Written
// changes or moves the bytes of the buffer: every other method (Feed,
// Tick, the actions, Output itself) only adds to its end. So the view
// stays valid, its bytes as they were, until the next Written, and a
// driver may write it out on another goroutine while it goes on feeding,
// ticking and acting on the Conn (one goroutine at a time, as always),
// then report what was written. A later Output returns the same bytes
// first, with what was added since after them.
func (c *Conn) Output() []byte {
	c.flushDisp()
	return c.out[c.outHead:]
}

// Written reports that the first n bytes of Output have been written.
// When the output drains after Send reported ErrOutputFull, OnWritable
// follows.
func (c *Conn) Written(n int) {
	c.outHead += max(0, min(n, len(c.out)-c.outHead))
	if c.outHead == len(c.out) {
		c.out, c.outHead = c.out[:0], 0
	} else if c.outHead > len(c.out)/2 && c.outHead > 4096 {
		c.out = c.out[:copy(c.out, c.out[c.outHead:])]
		c.outHead = 0
	}
	if c.full && c.unwritten() <= c.cfg.MaxOutput/2 {
		c.full = false
		if c.in != phDone {
			c.h.OnWritable(c)
		}
	}
}

// unwritten returns the output bytes not yet written.
func (c *Conn) unwritten() int { return len(c.out) - c.outHead }

// WantRead reports whether the driver should read more from the peer: not
// while the output is over Config.MaxOutput (a peer that does not read
// cannot make the engine buffer without bound), nor once the connection
// is done.
func (c *Conn) WantRead() bool { return c.in != phDone && c.unwritten() <= c.cfg.MaxOutput }

// CloseWait is how long a connection waits for the peer's close after
// sending its own; then it is over (Done) without it.
const CloseWait = 10 * time.Second

// Tick runs the timers at time now: a heartbeat when the peer's idle
// time-out is half over with nothing written (part 2 §2.4.5), the close
// (amqp:resource-limit-exceeded) of a peer silent past this end's idle
// time-out, and the end of a close the peer does not answer (CloseWait).
// It returns when to call it next (zero: no timer).
func (c *Conn) Tick(now time.Time) time.Time {
	c.setNow(now)
	if c.in == phDone {
		return time.Time{}
	}
	if c.in < phOpened {
		if now.Sub(c.started) >= c.cfg.HandshakeTimeout {
			c.handshakeTimeout()
			return time.Time{}
		}
		if c.in < phOpen {
			return c.started.Add(c.cfg.HandshakeTimeout)
		}
	}
	if c.st.local == closed {
		// The peer has CloseWait to answer this end's close.
		if now.Sub(c.closeAt) >= CloseWait {
			c.finish(c.err)
			return time.Time{}
		}
		return c.closeAt.Add(CloseWait)
	}
	if c.cfg.IdleTimeout > 0 && c.in == phOpened && now.Sub(c.lastRecv) >= c.cfg.IdleTimeout {
		c.fail(frame.CondResourceLimitExceeded, "idle time-out expired: nothing received for "+c.cfg.IdleTimeout.String())
		return time.Time{}
	}
	if c.remoteIdle > 0 && c.st.local == active && now.Sub(c.lastSent) >= c.remoteIdle/2 {
		start := c.startFrame(0)
		c.endFrame(start)
	}
	var next time.Time
	if c.in < phOpened {
		next = c.started.Add(c.cfg.HandshakeTimeout)
	}
	if c.remoteIdle > 0 && c.st.local == active {
		if t := c.lastSent.Add(c.remoteIdle / 2); next.IsZero() || t.Before(next) {
			next = t
		}
	}
	if c.cfg.IdleTimeout > 0 && c.in == phOpened {
		if t := c.lastRecv.Add(c.cfg.IdleTimeout); next.IsZero() || t.Before(next) {
			next = t
		}
	}
	return next
}

// handshakeTimeout ends a connection whose peer has not opened in time:
// with a close when the AMQP layer is reached, else by ending the stream.
func (c *Conn) handshakeTimeout() {
	desc := "no open within " + c.cfg.HandshakeTimeout.String()
	if c.in == phOpen {
		c.fail(frame.CondResourceLimitExceeded, desc)
		return
	}
	c.finish(NewError(frame.CondResourceLimitExceeded, desc))
}

// startFrame starts an AMQP frame on channel ch in the output (after the
// disposition waiting to be merged, if any) and returns where it starts.
func (c *Conn) startFrame(ch uint16) int {
	if c.disp.on {
		c.flushDisp()
	}
	start := len(c.out)
	c.out = frame.BeginFrame(c.out, frame.TypeAMQP, ch)
	return start
}

// endFrame ends the frame startFrame started (its size patched in)
// and checks it against the peer's max-frame-size.
func (c *Conn) endFrame(start int) {
	c.endFrameFit(start)
	if len(c.out)-start > int(c.remoteMaxFrame) {
		c.oversize(start) // every frame is checked against the peer's max-frame-size (txn.go)
	}
}

// endFrameFit is endFrame for a frame made to fit the peer's max-frame-size (a
// transfer, split by writeTransfer): inlined on the hot path.
func (c *Conn) endFrameFit(start int) {
	c.out = frame.EndFrame(c.out, start)
	c.lastSent = c.now
}

// Begin begins a session (part 2 §2.7.2); OnSessionBegin follows the
// peer's answer. The connection must be open (OnConnectionOpen).
func (c *Conn) Begin() (*Session, error) {
	if !c.usable() || c.in != phOpened {
		return nil, ErrState
	}
	ch, ok := c.freeChannel()
	if !ok || c.charge(sessionCost) != nil {
		return nil, ErrLimit
	}
	s := c.newSession(ch)
	s.writeBegin()
	return s, nil
}

// freeChannel returns the lowest channel this end does not use, within
// both ends' channel-max.
func (c *Conn) freeChannel() (uint16, bool) {
	limit := int(min(c.remoteChannelMax, c.cfg.ChannelMax))
	for i, s := range c.byLocal {
		if c.nLocal == len(c.byLocal) || i > limit {
			break // no hole: append
		}
		if s == nil {
			return uint16(i), true
		}
	}
	if len(c.byLocal) <= limit {
		c.byLocal = append(c.byLocal, nil)
		return uint16(len(c.byLocal) - 1), true
	}
	return 0, false
}

// onBegin handles a begin (part 2 §2.7.2, §2.5.1): an answer to this
// end's, or a session the peer starts, which the engine answers.
func (c *Conn) onBegin(ch uint16, body []byte) error {
	b, err := frame.ParseBegin(body)
	if err != nil {
		return decodeError(err)
	}
	if ch > c.cfg.ChannelMax {
		return &connError{frame.CondFramingError, "begin on channel " + strconv.Itoa(int(ch)) + " above channel-max " + strconv.Itoa(int(c.cfg.ChannelMax))}
	}
	if int(ch) < len(c.byRemote) && c.byRemote[ch] != nil {
		return &connError{frame.CondNotAllowed, "begin on channel " + strconv.Itoa(int(ch)) + ", where a session is already begun"}
	}
	var s *Session
	if rc16, ok := b.RemoteChannel.Get(); ok {
		rc := int(rc16)
		if rc < len(c.byLocal) {
			s = c.byLocal[rc]
		}
		if s == nil || s.st.remote != unset {
			return &connError{frame.CondNotAllowed, "begin answers channel " + strconv.Itoa(rc) + ", where no begin waits for an answer"}
		}
	} else {
		if c.st.local != active {
			return nil // closing: a new session is not answered
		}
		lc, ok := c.freeChannel()
		if !ok {
			return &connError{frame.CondResourceLimitExceeded, "no channel left to answer a begin"}
		}
		if err := c.charge(sessionCost); err != nil {
			return err
		}
		s = c.newSession(lc)
	}
	for int(ch) >= len(c.byRemote) {
		c.byRemote = append(c.byRemote, nil)
	}
	c.byRemote[ch] = s
	s.remote = ch
	s.st.remote = active
	s.nextIncomingID = b.NextOutgoingID
	s.remoteIncomingWindow = b.IncomingWindow
	s.remoteOutgoingWindow = b.OutgoingWindow
	s.remoteHandleMax = b.HandleMax.Or(math.MaxUint32)
	if s.st.local == unset {
		s.writeBegin()
	}
	if s.st.local == active {
		c.h.OnSessionBegin(s)
	}
	return nil
}
