package engine

import (
	"bytes"
	"crypto/x509"
	"errors"
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
	// engine holds for sessions, links and their attach frames,
	// unsettled incoming deliveries and deliveries being joined (see
	// Conn.Held). 0 means DefaultMaxMemory. Past it the connection is
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
	// Coordinator, on a server, is the transaction coordinator (part 4):
	// a peer's link to a coordinator is run by the engine with it (see
	// Coordinator). Nil refuses such links with amqp:not-implemented.
	Coordinator Coordinator

	// Auth, for a server, decides SASL: the mechanisms offered and the
	// credentials accepted. Nil accepts ANONYMOUS, and clients that skip
	// SASL; with an Authenticator, a client must authenticate.
	Auth Authenticator
	// Username and Password make a client authenticate with SASL PLAIN.
	Username, Password string
	// Mechanism is the SASL mechanism a client uses: "ANONYMOUS",
	// "PLAIN" or "EXTERNAL"; empty means PLAIN when Username is set, else
	// ANONYMOUS. NoSASL skips SASL (the AMQP header is sent at once).
	Mechanism string
	NoSASL    bool
	// PeerCertificates are the TLS peer's verified certificates, set by
	// a driver that terminates TLS: a server then offers EXTERNAL.
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

// Authenticator decides the SASL exchange of a server (part 5 §5.3). The
// mechanisms ANONYMOUS, PLAIN and EXTERNAL take one step: the client's
// sasl-init carries everything.
type Authenticator interface {
	// Mechanisms lists the mechanisms offered, in order of preference.
	// EXTERNAL is offered as well when the connection has peer
	// certificates.
	Mechanisms() []string
	// Authenticate decides a client's sasl-init: the mechanism it chose
	// (one of those offered), its initial response and, for EXTERNAL,
	// the TLS peer's certificates. It returns the identity
	// authenticated, or an error to refuse (outcome auth).
	Authenticate(mechanism string, response []byte, peer []*x509.Certificate) (identity string, err error)
}

// ErrAuth is what the built-in authenticators return for credentials they
// refuse.
var ErrAuth = errors.New("engine: authentication failed")

// Plain returns an Authenticator that offers PLAIN (RFC 4616), checked by
// check, and also ANONYMOUS when anonymous is set. EXTERNAL, offered with
// peer certificates, accepts any verified certificate, naming the
// identity after its subject's common name.
func Plain(check func(user, password string) bool, anonymous bool) Authenticator {
	return plainAuth{check: check, anonymous: anonymous}
}

type plainAuth struct {
	check     func(user, password string) bool
	anonymous bool
}

func (a plainAuth) Mechanisms() []string {
	if a.anonymous {
		return []string{"PLAIN", "ANONYMOUS"}
	}
	return []string{"PLAIN"}
}

func (a plainAuth) Authenticate(mech string, resp []byte, peer []*x509.Certificate) (string, error) {
	switch mech {
	case "ANONYMOUS":
		if a.anonymous {
			return "anonymous", nil
		}
	case "PLAIN":
		// authzid NUL authcid NUL passwd
		parts := bytes.SplitN(resp, []byte{0}, 3)
		if len(parts) == 3 && a.check != nil && a.check(string(parts[1]), string(parts[2])) {
			return string(parts[1]), nil
		}
	case "EXTERNAL":
		if len(peer) > 0 {
			return peer[0].Subject.CommonName, nil
		}
	}
	return "", ErrAuth
}

// anonymousAuth is the Authenticator of a server with none configured.
type anonymousAuth struct{}

func (anonymousAuth) Mechanisms() []string { return []string{"ANONYMOUS"} }

func (anonymousAuth) Authenticate(mech string, _ []byte, peer []*x509.Certificate) (string, error) {
	switch {
	case mech == "ANONYMOUS":
		return "anonymous", nil
	case mech == "EXTERNAL" && len(peer) > 0:
		return peer[0].Subject.CommonName, nil
	}
	return "", ErrAuth
}
