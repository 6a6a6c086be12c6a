package amqp

import (
	"errors"

	"github.com/amqpsax/amqpsax/client"
)

// SASLType represents a SASL configuration to use during authentication.
type SASLType func(c *Conn) error

func chooseSASL(s client.SASLType) SASLType {
	return func(c *Conn) error {
		c.sasl = &s
		return nil
	}
}

// SASLTypePlain enables SASL PLAIN authentication for the connection.
//
// SASL PLAIN transmits credentials in plain text and should only be used
// on TLS/SSL enabled connection.
func SASLTypePlain(username, password string) SASLType {
	return chooseSASL(client.SASLTypePlain(username, password))
}

// SASLTypeAnonymous enables SASL ANONYMOUS authentication for the connection.
func SASLTypeAnonymous() SASLType { return chooseSASL(client.SASLTypeAnonymous()) }

// SASLTypeExternal enables SASL EXTERNAL authentication for the connection.
// The value for resp is dependent on the type of authentication (empty string is common for TLS).
// See https://datatracker.ietf.org/doc/html/rfc4422#appendix-A for additional info.
//
// Not yet with a non-empty resp: Dial then returns an error (see the
// package documentation).
func SASLTypeExternal(resp string) SASLType {
	if resp != "" {
		return func(*Conn) error {
			return errors.New("amqp: SASL EXTERNAL with a response is not supported yet")
		}
	}
	return chooseSASL(client.SASLTypeExternal())
}

// SASLTypeXOAUTH2 enables SASL XOAUTH2 authentication for the connection.
//
// The saslMaxFrameSizeOverride parameter allows the limit that governs the maximum frame size this client will allow
// itself to generate to be raised for the sasl-init frame only.  Set this when the size of the size of the SASL XOAUTH2
// initial client response (which contains the username and bearer token) would otherwise breach the 512 byte min-max-frame-size
// (http://docs.oasis-open.org/amqp/core/v1.0/os/amqp-core-transport-v1.0-os.html#definition-MIN-MAX-FRAME-SIZE). Pass -1
// to keep the default.
//
// SASL XOAUTH2 transmits the bearer in plain text and should only be used
// on TLS/SSL enabled connection.
//
// saslMaxFrameSizeOverride is not needed here: the sasl-init frame is
// written whatever its size.
func SASLTypeXOAUTH2(username, bearer string, saslMaxFrameSizeOverride uint32) SASLType {
	return chooseSASL(client.SASLTypeXOAUTH2(username, bearer))
}
