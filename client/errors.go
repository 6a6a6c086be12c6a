package client

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// Scope says what an Error ended: a link, a session or the connection.
type Scope uint8

// The scopes of an Error.
const (
	ScopeLink Scope = iota + 1
	ScopeSession
	ScopeConn
	// ScopeTransaction: the coordinator refused a declare or a
	// discharge (txn.go); the transaction is over, no link ended.
	ScopeTransaction
)

func (s Scope) String() string {
	switch s {
	case ScopeLink:
		return "link"
	case ScopeSession:
		return "session"
	case ScopeConn:
		return "connection"
	case ScopeTransaction:
		return "transaction"
	}
	return "?"
}

// Error is an AMQP error condition (part 2 §2.8.14) that ended a link, a
// session or the connection: the peer's (Remote), carried by its detach,
// end or close, or this end's (a protocol violation of the peer, the idle
// time-out, a lost connection). Every call blocked on what ended returns
// it; errors.As finds it in the errors of this package.
type Error struct {
	// Condition is the condition's symbol, such as "amqp:not-found".
	Condition string
	// Description is free text for a person.
	Description string
	// Remote reports an error the peer sent.
	Remote bool
	// Scope is what ended: for a link that ended with its session or
	// connection, the session's or connection's scope.
	Scope Scope
	// Info is the error's info map (part 2 §2.8.14), keys as symbols:
	// what Delivery.Reject sends with it. An error the peer sent
	// carries none here.
	Info map[string]any
}

// Error formats the error as "client: scope ended: condition: description",
// with "(remote)" after the condition for an error the peer sent.
func (e *Error) Error() string {
	s := "client: " + e.Scope.String() + " ended: " + e.Condition
	if e.Remote {
		s += " (remote)"
	}
	if e.Description != "" {
		s += ": " + e.Description
	}
	return s
}

// fromEngine is the one place an engine error becomes a client one.
func fromEngine(e *engine.Error, scope Scope) *Error {
	if e == nil {
		return nil
	}
	return &Error{Condition: e.Name(), Description: e.Description, Remote: e.Remote, Scope: scope}
}

// Errors of this package, for errors.Is.
var (
	// ErrClosed: a call on a connection, session or link that this end
	// closed (or closed under it), or whose peer ended it cleanly, with
	// no error condition.
	ErrClosed = errors.New("client: closed")
	// ErrOutcomeUnknown: Send's ctx ended after the message was handed
	// to the connection and before its outcome arrived. The peer may
	// have it; the outcome is dropped when it comes. The error wraps the
	// ctx's error too.
	ErrOutcomeUnknown = errors.New("client: context ended after the transfer: outcome unknown")
	// ErrRejected, ErrReleased and ErrModified match an *OutcomeError
	// of that outcome.
	ErrRejected = errors.New("client: message rejected")
	ErrReleased = errors.New("client: message released")
	ErrModified = errors.New("client: message modified")
	// ErrInsecurePlain: SASL PLAIN (or XOAUTH2) would send its secret over a
	// connection without TLS (see ConnOptions.AllowInsecurePlain).
	ErrInsecurePlain = errors.New("client: SASL PLAIN or XOAUTH2 without TLS refused: its secret would go in the clear (ConnOptions.AllowInsecurePlain allows it)")
	// ErrMessageSize: a message above the peer's max-message-size.
	ErrMessageSize = errors.New("client: message above the link's max-message-size")
)

// OutcomeError is Send's error for a message the peer did not accept
// (part 3 §3.4): rejected (with the peer's error, if it gave one),
// released, or modified. errors.Is matches ErrRejected, ErrReleased or
// ErrModified.
type OutcomeError struct {
	// Outcome is frame.StateRejected, StateReleased or StateModified.
	Outcome frame.StateType
	// Err is the rejected outcome's error, or nil.
	Err *Error
	// DeliveryFailed and UndeliverableHere are the modified outcome's
	// fields.
	DeliveryFailed, UndeliverableHere bool
}

func (e *OutcomeError) Error() string {
	switch e.Outcome {
	case frame.StateRejected:
		if e.Err != nil {
			s := "client: message rejected: " + e.Err.Condition
			if e.Err.Description != "" {
				s += ": " + e.Err.Description
			}
			return s
		}
		return ErrRejected.Error()
	case frame.StateReleased:
		return ErrReleased.Error()
	}
	s := ErrModified.Error()
	if e.DeliveryFailed {
		s += " (delivery failed)"
	}
	if e.UndeliverableHere {
		s += " (undeliverable here)"
	}
	return s
}

// Is matches the sentinel of the outcome.
func (e *OutcomeError) Is(target error) bool {
	switch target {
	case ErrRejected:
		return e.Outcome == frame.StateRejected
	case ErrReleased:
		return e.Outcome == frame.StateReleased
	case ErrModified:
		return e.Outcome == frame.StateModified
	}
	return false
}

// outcome turns the peer's terminal outcome into Send's error. The error
// values of released and of modified without flags are shared: they carry
// nothing of the delivery, and allocate nothing.
func outcome(st *frame.DeliveryState) error {
	switch st.Type {
	case frame.StateAccepted:
		return nil
	case frame.StateReleased:
		return errReleased
	case frame.StateModified:
		if !st.DeliveryFailed && !st.UndeliverableHere {
			return errModified
		}
		return &OutcomeError{Outcome: frame.StateModified, DeliveryFailed: st.DeliveryFailed, UndeliverableHere: st.UndeliverableHere}
	case frame.StateRejected:
		oe := &OutcomeError{Outcome: frame.StateRejected}
		if st.Error.Condition != nil {
			oe.Err = &Error{Condition: string(st.Error.Condition), Description: string(st.Error.Description), Remote: true, Scope: ScopeLink}
		}
		return oe
	}
	return nil
}

var (
	errReleased = &OutcomeError{Outcome: frame.StateReleased}
	errModified = &OutcomeError{Outcome: frame.StateModified}
)

// PeerSettledError is the error of Accept, Reject, Release and Modify
// of a delivery the sender settled on its own after sending it, before
// this end gave an outcome (RabbitMQ 4's consumer time-out gives up a
// message held too long): the outcome given is not applied, nothing is
// sent. State is the sender's state for it (frame.StateReleased,
// StateModified, …; StateNone when it gave none).
type PeerSettledError struct {
	State frame.StateType
}

func (e *PeerSettledError) Error() string {
	return "client: the sender settled the delivery on its own (" + e.State.String() + "): the outcome is not applied"
}

// unknownOutcome is Send's error when ctx ended after the transfer.
type unknownOutcome struct{ ctx error }

func (e unknownOutcome) Error() string   { return ErrOutcomeUnknown.Error() + ": " + e.ctx.Error() }
func (e unknownOutcome) Unwrap() []error { return []error{ErrOutcomeUnknown, e.ctx} }

// ctxErr is the error of an ended ctx: its cause when it has one.
func ctxErr(ctx context.Context) error {
	if c := context.Cause(ctx); c != nil {
		return c
	}
	return ctx.Err()
}

// DialError is the error of Dial and NewConn: the stage of the open
// exchange that failed ("tcp", "tls", "dial" for ConnOptions.Dialer,
// "header", "sasl" or "open") and why
// (a network error, the ctx's error, or an *Error the peer or the engine
// gave).
type DialError struct {
	Addr  string // the address dialled, or the net.Conn's remote address
	Stage string
	Err   error
}

func (e *DialError) Error() string {
	return "client: dial " + e.Addr + ": " + e.Stage + ": " + e.Err.Error()
}

func (e *DialError) Unwrap() error { return e.Err }

// redactAddr returns addr with the password of its URL's user
// information replaced by "xxxxx", as net/url's URL.Redacted does, and
// the password as written and as decoded (nil for none). It works on a
// URL that does not parse too, whose error text would repeat it.
func redactAddr(addr string) (string, []string) {
	// The authority of "scheme://user:pass@host…" by hand: up to the
	// first '/', '?' or '#' after the scheme, the user information up to
	// its last '@'.
	i := strings.Index(addr, "://")
	if i < 0 {
		return addr, nil
	}
	auth := addr[i+3:]
	if k := strings.IndexAny(auth, "/?#"); k >= 0 {
		auth = auth[:k]
	}
	at := strings.LastIndexByte(auth, '@')
	if at < 0 {
		return addr, nil
	}
	colon := strings.IndexByte(auth[:at], ':')
	if colon < 0 || colon+1 == at {
		return addr, nil
	}
	raw := auth[colon+1 : at]
	secret := []string{raw}
	if p, err := url.PathUnescape(raw); err == nil && p != raw {
		secret = append(secret, p)
	}
	start := i + 3 + colon + 1
	return addr[:start] + "xxxxx" + addr[start+len(raw):], secret
}

// redactedErr is an error whose text repeats a password: Error gives it
// with the password replaced by "xxxxx", and so does every error
// Unwrap leads to; errors.Is and errors.As see the error itself.
type redactedErr struct {
	err    error
	secret []string
}

func (e redactedErr) Is(target error) bool { return errors.Is(e.err, target) }
func (e redactedErr) As(target any) bool   { return errors.As(e.err, target) }

func (e redactedErr) Error() string {
	s := e.err.Error()
	for _, p := range e.secret {
		if p != "" {
			s = strings.ReplaceAll(s, p, "xxxxx")
		}
	}
	return s
}

func (e redactedErr) Unwrap() error {
	if u := errors.Unwrap(e.err); u != nil {
		return redactedErr{err: u, secret: e.secret}
	}
	return nil
}
