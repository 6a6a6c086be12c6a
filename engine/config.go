package engine

import (
	"crypto/x509"
	"time"

	"github.com/amqpsax/amqpsax/frame"
)

// Defaults of the zero Config.
const (
	DefaultMaxFrameSize = 65536   // the max-frame-size this end announces
	DefaultChannelMax   = 255     // the channel-max this end announces
	DefaultHandleMax    = 255     // the handle-max of each session
	DefaultWindow       = 2048    // a session's incoming window, in transfer frames
	DefaultMaxOutput    = 4 << 20 // output buffered before Send reports ErrOutputFull

	DefaultHandshakeTimeout = 30 * time.Second
)

// Config sets up a connection. The zero value works: it announces the
// defaults above, accepts SASL ANONYMOUS and plain AMQP as a server, uses
// SASL ANONYMOUS as a client, grants no credit by itself and settles
// nothing by itself.
type Config struct {
	// ContainerID is this end's container-id; "amqpsax" when empty.
	ContainerID string
	// Hostname is the hostname a client sends in its open and sasl-init.
	Hostname string
	// MaxFrameSize is the largest frame this end accepts, announced in
	// its open (at least 512); 0 means DefaultMaxFrameSize. A larger frame
	// closes the connection with amqp:connection:framing-error.
	MaxFrameSize uint32
	// ChannelMax is the highest channel this end accepts, announced in its
	// open; 0 means DefaultChannelMax. It bounds the sessions a peer can
	// begin.
	ChannelMax uint16
	// HandleMax is the highest link handle each session accepts,
	// announced in its begin; 0 means DefaultHandleMax. It bounds the
	// links a peer can attach to a session.
	HandleMax uint32
	// Window is each session's incoming window in transfer frames,
	// topped up when half is used; 0 means DefaultWindow.
	Window uint32
	// IdleTimeout is this end's idle time-out, announced in its open: a
	// peer silent for longer is closed with
	// amqp:resource-limit-exceeded. 0 means none.
	IdleTimeout time.Duration
	// Credit is the link credit the engine keeps granted on every
	// receiving link by itself (topped up when half is used); 0 leaves
	// credit to the application (Link.Flow). LinkOptions.Credit sets it
	// per link.
	Credit uint32
	// HandshakeTimeout bounds the time from the first Feed or Tick to
	// the peer's open (headers, SASL, open); 0 means
	// DefaultHandshakeTimeout. A peer too slow is cut off (Tick).
	HandshakeTimeout time.Duration
	// AutoAccept accepts and settles every unsettled incoming delivery
	// that the handler did not dispose of during OnDelivery.
	AutoAccept bool
	// ManualSettle stops the engine settling an outgoing delivery by
	// itself when the peer gives it a terminal outcome: the application
	// calls Link.Settle.
	ManualSettle bool
	// MaxOutput is the number of buffered output bytes above which Send
	// reports ErrOutputFull and WantRead false; 0 means DefaultMaxOutput.
	MaxOutput int
	// MaxMessageSize bounds an incoming message, announced as each
	// receiving link's max-message-size; 0 means
	// frame.DefaultMaxMessageSize (64 MiB). A larger one detaches the
	// link with amqp:link:message-size-exceeded.
	MaxMessageSize uint64
	// MaxMemory is the connection's memory budget in bytes: what the
	// engine holds for the peer's open, sessions, links and their attach
	// frames, unsettled incoming deliveries and deliveries being joined
	// (see Conn.Held). 0 means DefaultMaxMemory. Past it the connection is
	// closed with amqp:resource-limit-exceeded. A connection's memory is
	// then at most MaxMemory, plus the frame being read (MaxFrameSize),
	// plus the output not yet written (MaxOutput and the last write).
	MaxMemory int
	// LinkStealing lets a peer's attach take a link name already
	// attached in the same direction: the old link is detached with
	// amqp:link:stolen (as RabbitMQ and ActiveMQ Artemis do). Without
	// it such an attach is refused (part 2 §2.6.1: a name is unique per
	// direction between two containers): answered without a terminus
	// and detached with amqp:not-allowed.
	LinkStealing bool
	// Properties are the properties of this end's open (part 2 §2.7.1: a
	// map of symbol keys, fields §2.8.13), sent by a client and a server
	// alike: the product and version a service logs, a vendor's settings
	// (Azure's "com.microsoft:…", RabbitMQ's "product"). It is the
	// map's encoding, written exactly as given (a symbol stays a
	// symbol); frame.SymbolMap builds one. nil sends none. The peer's
	// are in RemoteOpen().Properties.
	Properties frame.Map
	// OfferedCapabilities and DesiredCapabilities are the capabilities
	// of this end's open (part 2 §2.7.1): what this end supports for
	// the peer's use, and what it wants of the peer (such as
	// "ANONYMOUS-RELAY", "DELAYED_DELIVERY", "com.microsoft:…"). Each is
	// the encoding of a symbol or an array of symbols, written exactly;
	// frame.AppendSymbols builds one. nil sends none.
	OfferedCapabilities, DesiredCapabilities frame.Symbols
	// Coordinator, on a server, is the transaction coordinator (part 4):
	// a peer's link to a coordinator is run by the engine with it (see
	// Coordinator). Nil refuses such links with amqp:not-implemented.
	Coordinator Coordinator

	// Auth, for a server, decides SASL: the mechanisms offered and the
	// exchange of each (see Mechanisms). Nil accepts ANONYMOUS, and
	// clients that skip SASL; with an Authenticator, a client must
	// authenticate.
	Auth Authenticator
	// SASL lists a client's mechanisms in its order of preference: it
	// uses the first that the server offers (and fails when the server
	// offers none of them). Empty means the one of Mechanism, Username
	// and Password.
	SASL []ClientMechanism
	// Username and Password make a client authenticate with SASL PLAIN
	// when SASL is empty.
	Username, Password string
	// Mechanism is the SASL mechanism a client uses when SASL is empty:
	// "ANONYMOUS", "PLAIN" or "EXTERNAL"; empty means PLAIN when
	// Username is set, else ANONYMOUS. NoSASL skips SASL (the AMQP
	// header is sent at once).
	Mechanism string
	NoSASL    bool
	// TLSHeader asks for TLS by protocol header (part 5 §5.2): a client
	// sends the TLS header first, a server accepts it (and, under package
	// driver's Driver and Server, direct TLS too: a first byte that
	// starts a TLS record, Conn.DirectTLS), and once the headers are
	// exchanged the driver upgrades the transport (Conn.UpgradeTLS;
	// driver.Driver with its TLSConfig).
	// Then SASL or AMQP follows over TLS. A server with TLSHeader still
	// takes clients that send the SASL or AMQP header in the clear,
	// unless RequireTLS is set.
	TLSHeader bool
	// RequireTLS, on a server with TLSHeader, refuses a client that does
	// not use TLS: a SASL or AMQP header before the TLS header is
	// answered with the TLS header and the connection ends
	// (amqp:not-allowed), so that no credentials or messages cross in the
	// clear. Direct TLS (Conn.DirectTLS) and TLS by header are taken.
	// Without TLSHeader it does nothing: a server whose listener is TLS
	// already requires it.
	RequireTLS bool
	// PeerCertificates are the TLS peer's verified certificates, set by
	// a driver that terminates TLS: a server then offers EXTERNAL. Only a
	// chain crypto/tls verified belongs here (ConnectionState's
	// VerifiedChains, as driver.VerifiedPeer gives), never the
	// certificates a peer merely presented.
	PeerCertificates []*x509.Certificate
}

func (c *Config) defaults() {
	if c.ContainerID == "" {
		c.ContainerID = "amqpsax"
	}
	if c.MaxFrameSize == 0 {
		c.MaxFrameSize = DefaultMaxFrameSize
	}
	c.MaxFrameSize = max(c.MaxFrameSize, 512)
	if c.ChannelMax == 0 {
		c.ChannelMax = DefaultChannelMax
	}
	if c.HandleMax == 0 {
		c.HandleMax = DefaultHandleMax
	}
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.MaxOutput <= 0 {
		c.MaxOutput = DefaultMaxOutput
	}
	if c.MaxMessageSize == 0 {
		c.MaxMessageSize = frame.DefaultMaxMessageSize
	}
	if c.MaxMemory <= 0 {
		c.MaxMemory = DefaultMaxMemory
	}
}
