package engine

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
)

// SASL (part 5 §5.3): one step for ANONYMOUS, PLAIN and EXTERNAL. The
// server offers its mechanisms, the client answers with sasl-init, the
// server ends with sasl-outcome; then both send the AMQP header.

func (c *Conn) auth() Authenticator {
	if c.cfg.Auth != nil {
		return c.cfg.Auth
	}
	return anonymousAuth{}
}

// offered returns the mechanisms the server offers.
func (c *Conn) offered() []string {
	m := c.auth().Mechanisms()
	if len(c.cfg.PeerCertificates) > 0 {
		m = append([]string{"EXTERNAL"}, m...)
	}
	return m
}

func (c *Conn) saslMechanisms() {
	var syms []byte
	m := c.offered()
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

// saslFail ends the SASL layer for a fault: a server sends the outcome
// sys-perm; there is no close at this layer.
func (c *Conn) saslFail(e *Error) {
	if !c.client {
		c.writeSASL(func(b []byte) []byte {
			return frame.AppendSASLOutcome(b, frame.SASLOutcome{Code: frame.SASLSysPerm})
		})
	}
	c.finish(e)
}

func (c *Conn) saslFrame(body []byte) {
	d, err := descriptor(body)
	if err != nil {
		c.saslFail(NewError(frame.CondDecodeError, err.Error()))
		return
	}
	if c.client {
		c.saslClient(d, body)
	} else {
		c.saslServer(d, body)
	}
}

// saslServer handles the client's sasl-init (part 5 §5.3.3.2).
func (c *Conn) saslServer(d amqpsax.Descriptor, body []byte) {
	if d != amqpsax.DescriptorSASLInit {
		c.saslFail(NewError(frame.CondNotAllowed, "sasl-init expected, got descriptor "+descName(d)))
		return
	}
	in, err := frame.ParseSASLInit(body)
	if err != nil {
		c.saslFail(NewError(frame.CondDecodeError, err.Error()))
		return
	}
	mech := string(in.Mechanism)
	ok := false
	for _, m := range c.offered() {
		ok = ok || m == mech
	}
	code := frame.SASLAuth
	if ok {
		id, err := c.auth().Authenticate(mech, in.InitialResponse, c.cfg.PeerCertificates)
		if err == nil {
			code, c.identity = frame.SASLOk, id
		}
	}
	c.writeSASL(func(b []byte) []byte { return frame.AppendSASLOutcome(b, frame.SASLOutcome{Code: code}) })
	if code != frame.SASLOk {
		c.finish(NewError(frame.CondUnauthorizedAccess, "SASL "+mech+" authentication failed"))
		return
	}
	c.in = phHeaderAMQP
}

// saslClient handles sasl-mechanisms and sasl-outcome (part 5 §5.3.3.1,
// §5.3.3.5).
func (c *Conn) saslClient(d amqpsax.Descriptor, body []byte) {
	switch d {
	case amqpsax.DescriptorSASLMechanisms:
		m, err := frame.ParseSASLMechanisms(body)
		if err != nil {
			c.finish(NewError(frame.CondDecodeError, err.Error()))
			return
		}
		mech := c.cfg.Mechanism
		if mech == "" {
			mech = "ANONYMOUS"
			if c.cfg.Username != "" {
				mech = "PLAIN"
			}
		}
		if !m.Mechanisms.Contains(mech) {
			c.finish(NewError(frame.CondNotImplemented, "server does not offer SASL "+mech))
			return
		}
		var resp []byte
		switch mech {
		case "PLAIN":
			resp = append(append(append([]byte{0}, c.cfg.Username...), 0), c.cfg.Password...)
		case "ANONYMOUS":
			resp = []byte("anonymous")
		}
		init := frame.SASLInit{Mechanism: []byte(mech), InitialResponse: resp}
		if c.cfg.Hostname != "" {
			init.Hostname = []byte(c.cfg.Hostname)
		}
		c.writeSASL(func(b []byte) []byte { return frame.AppendSASLInit(b, init) })
	case amqpsax.DescriptorSASLOutcome:
		o, err := frame.ParseSASLOutcome(body)
		if err != nil {
			c.finish(NewError(frame.CondDecodeError, err.Error()))
			return
		}
		if o.Code != frame.SASLOk {
			c.finish(NewError(frame.CondUnauthorizedAccess, "SASL outcome "+o.Code.String()))
			return
		}
		c.out = frame.AppendProtocolHeader(c.out, frame.HeaderAMQP)
		c.writeOpen() // pipelined after the header (part 2 §2.4.1)
		c.in = phHeaderAMQP
	default:
		c.finish(NewError(frame.CondNotImplemented, "unexpected SASL frame (descriptor "+descName(d)+"): only one-step mechanisms are supported"))
	}
}

func descName(d amqpsax.Descriptor) string {
	const hex = "0123456789abcdef"
	if d < 256 {
		return "0x" + string([]byte{hex[d>>4], hex[d&15]})
	}
	return "0x.."
}
