// Package interop drives real AMQP 1.0 clients (Azure/go-amqp, rhea,
// uAMQP-C, Qpid Proton) against a real broker (RabbitMQ with its AMQP 1.0
// plugin) through a recording proxy, and checks the recorded traffic with
// amqpsax's public packages. It is its own module so that the clients it
// drives never enter the main module's go.mod.
//
// The recorded streams become the corpus of testdata/peers (interop/record.sh
// writes it); TestBroker, run only when AMQPSAX_BROKER names a broker, checks
// every frame and every message of a live run. See interop/README.md.
package interop

import "crypto/tls"

// A Tap sits between clients and the broker: clients connect to Addr, the
// tap forwards every byte unchanged to the broker and keeps both
// directions of every connection. The recording proxy of this package is
// one (Recorder); a protocol-aware spy can be another, as long as it
// hands back the bytes exactly as they went over the wire.
type Tap interface {
	// Addr is the host:port clients connect to.
	Addr() string
	// Close stops accepting, waits (a bounded time) for the connections
	// in flight to end, and closes those that do not.
	Close() error
	// Conns returns the connections accepted so far, in accept order.
	// The byte slices of a connection still open may still grow: call it
	// after Close for the complete streams.
	Conns() []Conn
}

// Conn is one recorded connection: the two byte streams, each exactly as
// it went over the wire, protocol headers included.
type Conn struct {
	Client []byte // client → broker
	Server []byte // broker → client
}

// NewTap starts a Tap in front of the broker at upstream (host:port).
// Clients connect with TLS when cfg is not nil (the tap terminates it and
// keeps the plaintext); the broker is always reached over plain TCP.
// Swap it to record through another tap.
var NewTap = func(upstream string, cfg *tls.Config) (Tap, error) { return NewTLSRecorder(upstream, cfg) }
