package engine

import (
	"crypto/x509"
	"slices"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
)

// SASL (part 5 §5.3), with mechanisms as plug-ins in both roles. The
// server offers its mechanisms (sasl-mechanisms); the client picks the
// first of its own, in its order of preference, that the server offers
// and sends sasl-init with its initial response; the server answers with
// sasl-challenge as often as the mechanism needs, each answered by a
// sasl-response, and ends with sasl-outcome (with additional data when
// the mechanism has some: SCRAM's server signature). Then both send the
// AMQP header. The whole exchange is bounded by Config.HandshakeTimeout.

// Authenticator decides the SASL exchange of a server (part 5 §5.3): the
// mechanisms it offers, and an exchange per connection for the one the
// client picks. [Mechanisms] makes one of [ServerMechanism]s; [Plain]
// is the short form for PLAIN (and ANONYMOUS).
type Authenticator interface {
	// Mechanisms lists the mechanisms offered, in the server's order of
	// preference. EXTERNAL is offered as well, first, when the
	// connection has peer certificates and the list lacks it.
	Mechanisms() []string
	// Start begins the exchange of the mechanism the client chose (one
	// of those offered), for the peer described. An error refuses the
	// client (outcome auth).
	Start(mechanism string, peer SASLPeer) (SASLExchange, error)
}

// SASLPeer is what a server knows of a client when its SASL exchange
// starts.
type SASLPeer struct {
	// Hostname is the hostname of the client's sasl-init.
	Hostname string
	// PeerCertificates are the TLS peer's verified certificates
	// (Config.PeerCertificates).
	PeerCertificates []*x509.Certificate
}

// SASLExchange is the server's side of one SASL exchange: each response
// of the client (its initial response first, nil when it sent none) goes
// to Step, which returns a challenge to send, or the outcome.
type SASLExchange interface {
	// Step takes the client's response. It returns the next challenge
	// (Done false), or Done with the identity authenticated and the
	// outcome's additional data; an error refuses the client (outcome
	// auth). The bytes of response are valid only during the call.
	Step(response []byte) (SASLStep, error)
}

// SASLStep is what a server's mechanism does after a response.
type SASLStep struct {
	// Challenge is sent in a sasl-challenge when Done is false.
	Challenge []byte
	// Done ends the exchange: the outcome is ok.
	Done bool
	// Identity is the identity authenticated (Conn.Identity), when Done.
	Identity string
	// Data is the outcome's additional-data, when Done (nil for none).
	Data []byte
}

// ServerMechanism is one SASL mechanism of a server: [Mechanisms] puts
// several together into an Authenticator.
type ServerMechanism interface {
	// Name is the mechanism's name, such as "PLAIN".
	Name() string
	// Start begins an exchange with a client that chose it.
	Start(peer SASLPeer) (SASLExchange, error)
}

// ClientMechanism is one SASL mechanism of a client: Config.SASL lists
// them in the client's order of preference.
type ClientMechanism interface {
	// Name is the mechanism's name, such as "SCRAM-SHA-256".
	Name() string
	// Start begins an exchange: it returns its state and the initial
	// response (nil for none).
	Start() (ClientExchange, []byte, error)
}

// ClientExchange is the client's side of one SASL exchange.
type ClientExchange interface {
	// Challenge answers a server's challenge with a response. An error
	// ends the connection.
	Challenge(challenge []byte) ([]byte, error)
	// Outcome checks the additional data of an ok outcome (SCRAM
	// verifies the server's signature there): an error ends the
	// connection, the server unproven.
	Outcome(data []byte) error
}

// Mechanisms returns an Authenticator that offers the mechanisms given,
// in that order.
func Mechanisms(m ...ServerMechanism) Authenticator {
	a := mechAuth{mechs: slices.Clone(m)}
	for _, x := range a.mechs {
		a.names = append(a.names, x.Name())
	}
	return a
}

type mechAuth struct {
	mechs []ServerMechanism
	names []string
}

func (a mechAuth) Mechanisms() []string { return a.names }

func (a mechAuth) Start(mech string, peer SASLPeer) (SASLExchange, error) {
	for _, m := range a.mechs {
		if m.Name() == mech {
			return m.Start(peer)
		}
	}
	return nil, ErrAuth
}

func (c *Conn) auth() Authenticator {
	if c.cfg.Auth != nil {
		return c.cfg.Auth
	}
	return defaultAuth
}

// defaultAuth is the Authenticator of a server with none configured.
var defaultAuth = Mechanisms(AnonymousServer())

// offered returns the mechanisms the server offers, and whether EXTERNAL
// is the engine's own (offered for peer certificates).
func (c *Conn) offered() ([]string, bool) {
	m := c.auth().Mechanisms()
	if len(c.cfg.PeerCertificates) > 0 && !slices.Contains(m, "EXTERNAL") {
		return append([]string{"EXTERNAL"}, m...), true
	}
	return m, false
}

func (c *Conn) saslMechanisms() {
	var syms []byte
	m, _ := c.offered()
	if len(m) == 1 {
		syms = encode.AppendSymbol(nil, m[0])
	} else {
		syms = frame.AppendSymbols(nil, m...)
	}
	c.writeSASL(func(b []byte) []byte {
		return frame.AppendSASLMechanisms(b, frame.SASLMechanisms{Mechanisms: syms})
	})
}

func (c *Conn) writeSASL(appendBody func([]byte) []byte) {
	start := len(c.out)
	c.out = frame.BeginFrame(c.out, frame.TypeSASL, 0)
	c.out = appendBody(c.out)
	c.out = frame.EndFrame(c.out, start)
}

func (c *Conn) saslFrame(body []byte) error {
	d, err := descriptor(body)
	if err != nil {
		return &saslError{frame.SASLSysPerm, frame.CondDecodeError, err.Error()}
	}
	if c.client {
		return c.saslClient(d, body)
	}
	return c.saslServer(d, body)
}

// saslServer handles the client's sasl-init (part 5 §5.3.3.2) and its
// sasl-responses (§5.3.3.4).
func (c *Conn) saslServer(d amqpsax.Descriptor, body []byte) error {
	switch {
	case d == amqpsax.DescriptorSASLInit && c.saslMech == "":
		in, err := frame.ParseSASLInit(body)
		if err != nil {
			return &saslError{frame.SASLSysPerm, frame.CondDecodeError, err.Error()}
		}
		c.saslMech = string(in.Mechanism)
		if c.saslMech == "" {
			c.saslMech = "(none)"
		}
		return c.saslStart(c.saslMech, string(in.Hostname), in.InitialResponse)
	case d == amqpsax.DescriptorSASLResponse && c.saslEx != nil:
		r, err := frame.ParseSASLResponse(body)
		if err != nil {
			return &saslError{frame.SASLSysPerm, frame.CondDecodeError, err.Error()}
		}
		return c.saslStep(c.saslEx.Step(r.Response))
	case c.saslEx != nil:
		return &saslError{frame.SASLSysPerm, frame.CondNotAllowed, "sasl-response expected, got descriptor " + d.String()}
	default:
		return &saslError{frame.SASLSysPerm, frame.CondNotAllowed, "sasl-init expected, got descriptor " + d.String()}
	}
}

// saslStart starts the server's exchange of mech, the client's choice,
// and takes its first step.
func (c *Conn) saslStart(mech, host string, resp []byte) error {
	offered, ownExternal := c.offered()
	if !slices.Contains(offered, mech) {
		return c.saslRefused()
	}
	peer := SASLPeer{Hostname: host, PeerCertificates: c.cfg.PeerCertificates}
	var ex SASLExchange
	var err error
	if mech == "EXTERNAL" && ownExternal {
		ex, err = ExternalServer(nil).Start(peer)
	} else {
		ex, err = c.auth().Start(mech, peer)
	}
	if err != nil || ex == nil {
		return c.saslRefused()
	}
	c.saslEx = ex
	return c.saslStep(ex.Step(resp))
}

// saslStep acts on a step of the server's exchange: a challenge, the
// outcome ok, or a refusal.
func (c *Conn) saslStep(st SASLStep, err error) error {
	if err != nil {
		return c.saslRefused()
	}
	if !st.Done {
		ch := frame.SASLChallenge{Challenge: st.Challenge}
		if ch.Challenge == nil {
			ch.Challenge = []byte{}
		}
		c.writeSASL(func(b []byte) []byte { return frame.AppendSASLChallenge(b, ch) })
		return nil
	}
	c.saslEx, c.identity = nil, st.Identity
	c.writeSASL(func(b []byte) []byte {
		return frame.AppendSASLOutcome(b, frame.SASLOutcome{Code: frame.SASLOk, AdditionalData: st.Data})
	})
	c.in = phHeaderAMQP
	return nil
}

// saslRefused is a server's refusal of the client's credentials: the
// outcome auth.
func (c *Conn) saslRefused() error {
	return &saslError{frame.SASLAuth, frame.CondUnauthorizedAccess, "SASL " + c.saslMech + " authentication failed"}
}

// clientMechanisms returns the client's mechanisms in its order of
// preference: Config.SASL, else the one Mechanism, Username and Password
// name.
func (c *Conn) clientMechanisms() []ClientMechanism {
	if len(c.cfg.SASL) > 0 {
		return c.cfg.SASL
	}
	switch mech := c.cfg.Mechanism; {
	case mech == "PLAIN", mech == "" && c.cfg.Username != "":
		return []ClientMechanism{PlainClient(c.cfg.Username, c.cfg.Password)}
	case mech == "EXTERNAL":
		return []ClientMechanism{ExternalClient("")}
	case mech == "ANONYMOUS", mech == "":
		return []ClientMechanism{AnonymousClient("")}
	default:
		return []ClientMechanism{unknownClient(mech)}
	}
}

// saslClient handles sasl-mechanisms, sasl-challenge and sasl-outcome
// (part 5 §5.3.3.1, §5.3.3.3, §5.3.3.5).
func (c *Conn) saslClient(d amqpsax.Descriptor, body []byte) error {
	switch {
	case d == amqpsax.DescriptorSASLMechanisms && c.saslMech == "":
		m, err := frame.ParseSASLMechanisms(body)
		if err != nil {
			return &saslError{frame.SASLSysPerm, frame.CondDecodeError, err.Error()}
		}
		var pick ClientMechanism
		var names []byte
		for _, cm := range c.clientMechanisms() {
			if m.Mechanisms.Contains(cm.Name()) {
				pick = cm
				break
			}
			names = append(append(names, ' '), cm.Name()...)
		}
		if pick == nil {
			return &saslError{frame.SASLSysPerm, frame.CondNotImplemented, "server offers none of SASL" + string(names)}
		}
		c.saslMech = pick.Name()
		ex, resp, err := pick.Start()
		if err != nil {
			return &saslError{frame.SASLSysPerm, frame.CondUnauthorizedAccess, "SASL " + c.saslMech + ": " + err.Error()}
		}
		c.saslCli = ex
		init := frame.SASLInit{Mechanism: []byte(c.saslMech), InitialResponse: resp}
		if c.cfg.Hostname != "" {
			init.Hostname = []byte(c.cfg.Hostname)
		}
		c.writeSASL(func(b []byte) []byte { return frame.AppendSASLInit(b, init) })
	case d == amqpsax.DescriptorSASLChallenge && c.saslCli != nil:
		ch, err := frame.ParseSASLChallenge(body)
		if err != nil {
			return &saslError{frame.SASLSysPerm, frame.CondDecodeError, err.Error()}
		}
		resp, err := c.saslCli.Challenge(ch.Challenge)
		if err != nil {
			return &saslError{frame.SASLSysPerm, frame.CondUnauthorizedAccess, "SASL " + c.saslMech + ": " + err.Error()}
		}
		if resp == nil {
			resp = []byte{}
		}
		c.writeSASL(func(b []byte) []byte { return frame.AppendSASLResponse(b, frame.SASLResponse{Response: resp}) })
	case d == amqpsax.DescriptorSASLOutcome && c.saslCli != nil:
		o, err := frame.ParseSASLOutcome(body)
		if err != nil {
			return &saslError{frame.SASLSysPerm, frame.CondDecodeError, err.Error()}
		}
		if o.Code != frame.SASLOk {
			return &saslError{frame.SASLSysPerm, frame.CondUnauthorizedAccess, "SASL outcome " + o.Code.String()}
		}
		if err := c.saslCli.Outcome(o.AdditionalData); err != nil {
			return &saslError{frame.SASLSysPerm, frame.CondUnauthorizedAccess, "SASL " + c.saslMech + ": " + err.Error()}
		}
		c.saslCli = nil
		c.out = frame.AppendProtocolHeader(c.out, frame.HeaderAMQP)
		c.writeOpen() // pipelined after the header (part 2 §2.4.1)
		c.in = phHeaderAMQP
	default:
		return &saslError{frame.SASLSysPerm, frame.CondNotAllowed, "unexpected SASL frame (descriptor " + d.String() + ")"}
	}
	return nil
}
