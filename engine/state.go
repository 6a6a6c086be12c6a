package engine

import (
	"github.com/amqpsax/amqpsax/frame"
)

// This file is the state of every endpoint, kept in one place (part 2
// §2.4.6 for connections, §2.5.5 for sessions, §2.6.3-§2.6.6 for links,
// after Qpid Proton's pn_endpoint_t): each Conn, Session and Link holds
// one endpoint, a local half (what this end has sent) and a remote half
// (what the peer has sent), and one guard per kind of object says which
// public actions are legal. It also holds the scoped errors the handlers
// of performatives return and the one function that applies them (after
// x/net/http2's ConnectionError and StreamError).

// half is one side of an endpoint's state.
type half uint8

const (
	// unset: this side has said nothing yet (no open, begin or attach).
	unset half = iota
	// active: the open, begin or attach has been sent (local) or
	// received (remote).
	active
	// closed: the close, end or detach has been sent (local) or received
	// (remote), or the connection under the endpoint ended: this side
	// says nothing more.
	closed
)

func (h half) String() string {
	switch h {
	case unset:
		return "unset"
	case active:
		return "active"
	}
	return "closed"
}

// endpoint is the state of a connection, session or link: what this end
// has sent (local) and what the peer has sent (remote). An endpoint is
// over, and unmapped, when both halves are closed.
type endpoint struct {
	local, remote half
}

// over reports both halves closed: nothing more happens on it.
func (e endpoint) over() bool { return e.local == closed && e.remote == closed }

func (e endpoint) String() string {
	return "local " + e.local.String() + ", remote " + e.remote.String()
}

// The guards: an action of this end is legal while its own half and
// every half above it is active. (A peer's frames are checked by the
// handlers of performatives.)

// usable reports that this end may act on the connection: it has sent
// its open and not its close, and the connection is not over.
func (c *Conn) usable() bool { return c.st.local == active && c.in != phDone }

// usable reports that this end may act on the session: it has sent its
// begin and not its end, on a usable connection.
func (s *Session) usable() bool { return s.st.local == active && s.c.usable() }

// usable reports that this end may act on the link: it has sent its
// attach and not its detach, on a usable session.
func (l *Link) usable() bool { return l.st.local == active && l.s.usable() }

// attached reports a link that is up at both ends and usable here.
func (l *Link) attached() bool { return l.st.remote == active && l.usable() }

// Scoped errors: a handler of a performative returns one of these for a
// fault of the peer, and apply turns it into the close, end or detach
// carrying the spec's condition. They are built only on a fault.

// connError ends the connection (close with the condition).
type connError struct {
	cond frame.Condition
	desc string
}

// sessionError ends the session (end with the condition).
type sessionError struct {
	s    *Session
	cond frame.Condition
	desc string
}

// linkError detaches the link (detach, closed, with the condition).
type linkError struct {
	l    *Link
	cond frame.Condition
	desc string
}

// headerError refuses a protocol header (part 2 §2.2), before there is a
// close to send: a server answers with the header it speaks, then the
// connection ends; a client's connection just ends.
type headerError struct {
	cond frame.Condition
	desc string
}

// saslError ends the SASL layer (part 5 §5.3), which has no close: a
// server sends the outcome code (sys-perm for a fault of the protocol,
// auth for credentials it refuses), then the connection ends; a
// client's connection just ends (it sends no outcome: code is unused).
type saslError struct {
	code frame.SASLCode
	cond frame.Condition
	desc string
}

func (e *connError) Error() string    { return "connection: " + e.cond.Symbol() + ": " + e.desc }
func (e *headerError) Error() string  { return "header: " + e.cond.Symbol() + ": " + e.desc }
func (e *saslError) Error() string    { return "sasl: " + e.cond.Symbol() + ": " + e.desc }
func (e *sessionError) Error() string { return "session: " + e.cond.Symbol() + ": " + e.desc }
func (e *linkError) Error() string    { return "link: " + e.cond.Symbol() + ": " + e.desc }

// decodeError is the connection error of a performative that does not
// parse (amqp:decode-error, part 2 §2.8.15).
func decodeError(err error) error { return &connError{frame.CondDecodeError, err.Error()} }

// apply carries out the error a handler returned: the one place where a
// fault becomes a close, end or detach.
func (c *Conn) apply(err error) {
	switch e := err.(type) {
	case nil:
	case *connError:
		c.fail(e.cond, e.desc)
	case *headerError:
		if !c.client {
			c.out = frame.AppendProtocolHeader(c.out, c.spokenHeader())
		}
		c.finish(NewError(e.cond, e.desc))
	case *saslError:
		if !c.client {
			c.saslEx = nil
			c.writeSASL(func(b []byte) []byte { return frame.AppendSASLOutcome(b, frame.SASLOutcome{Code: e.code}) })
		}
		c.finish(NewError(e.cond, e.desc))
	case *sessionError:
		e.s.fail(e.cond, e.desc)
	case *linkError:
		e.l.fail(e.cond, e.desc)
	default:
		c.fail(frame.CondInternalError, err.Error())
	}
}
