package amqp

import (
	"context"
	"errors"

	"github.com/amqpsax/amqpsax/client"
)

// Error Conditions
const (
	// AMQP Errors
	ErrCondDecodeError           ErrCond = "amqp:decode-error"
	ErrCondFrameSizeTooSmall     ErrCond = "amqp:frame-size-too-small"
	ErrCondIllegalState          ErrCond = "amqp:illegal-state"
	ErrCondInternalError         ErrCond = "amqp:internal-error"
	ErrCondInvalidField          ErrCond = "amqp:invalid-field"
	ErrCondNotAllowed            ErrCond = "amqp:not-allowed"
	ErrCondNotFound              ErrCond = "amqp:not-found"
	ErrCondNotImplemented        ErrCond = "amqp:not-implemented"
	ErrCondPreconditionFailed    ErrCond = "amqp:precondition-failed"
	ErrCondResourceDeleted       ErrCond = "amqp:resource-deleted"
	ErrCondResourceLimitExceeded ErrCond = "amqp:resource-limit-exceeded"
	ErrCondResourceLocked        ErrCond = "amqp:resource-locked"
	ErrCondUnauthorizedAccess    ErrCond = "amqp:unauthorized-access"

	// Connection Errors
	ErrCondConnectionForced   ErrCond = "amqp:connection:forced"
	ErrCondConnectionRedirect ErrCond = "amqp:connection:redirect"
	ErrCondFramingError       ErrCond = "amqp:connection:framing-error"

	// Session Errors
	ErrCondErrantLink       ErrCond = "amqp:session:errant-link"
	ErrCondHandleInUse      ErrCond = "amqp:session:handle-in-use"
	ErrCondUnattachedHandle ErrCond = "amqp:session:unattached-handle"
	ErrCondWindowViolation  ErrCond = "amqp:session:window-violation"

	// Link Errors
	ErrCondDetachForced          ErrCond = "amqp:link:detach-forced"
	ErrCondLinkRedirect          ErrCond = "amqp:link:redirect"
	ErrCondMessageSizeExceeded   ErrCond = "amqp:link:message-size-exceeded"
	ErrCondStolen                ErrCond = "amqp:link:stolen"
	ErrCondTransferLimitExceeded ErrCond = "amqp:link:transfer-limit-exceeded"
)

// LinkError is returned by methods on Sender/Receiver when the link has closed.
type LinkError struct {
	// RemoteErr contains any error information provided by the peer if the peer detached the link.
	RemoteErr *Error

	inner error
}

// Error implements the error interface for LinkError.
func (e *LinkError) Error() string { return scopedText(e.RemoteErr, e.inner, "amqp: link closed") }

// Unwrap returns the RemoteErr, if any.
func (e *LinkError) Unwrap() error { return unwrapRemote(e.RemoteErr) }

// ConnError is returned by methods on Conn and propagated to Session and Senders/Receivers
// when the connection has been closed.
type ConnError struct {
	// RemoteErr contains any error information provided by the peer if the peer closed the AMQP connection.
	RemoteErr *Error

	inner error
}

// Error implements the error interface for ConnError.
func (e *ConnError) Error() string {
	return scopedText(e.RemoteErr, e.inner, "amqp: connection closed")
}

// Unwrap returns the RemoteErr, if any.
func (e *ConnError) Unwrap() error { return unwrapRemote(e.RemoteErr) }

// SessionError is returned by methods on Session and propagated to Senders/Receivers
// when the session has been closed.
type SessionError struct {
	// RemoteErr contains any error information provided by the peer if the peer closed the session.
	RemoteErr *Error

	inner error
}

// Error implements the error interface for SessionError.
func (e *SessionError) Error() string {
	return scopedText(e.RemoteErr, e.inner, "amqp: session closed")
}

// Unwrap returns the RemoteErr, if any.
func (e *SessionError) Unwrap() error { return unwrapRemote(e.RemoteErr) }

func scopedText(remote *Error, inner error, closed string) string {
	switch {
	case remote != nil:
		return remote.Error()
	case inner != nil:
		return inner.Error()
	}
	return closed
}

// unwrapRemote returns remote as an error, nil (not a typed nil) when
// there is none.
func unwrapRemote(remote *Error) error {
	if remote == nil {
		return nil
	}
	return remote
}

// scope is what a call works on, for the error of a closed one: a link,
// a session or the connection.
type scope uint8

const (
	onLink scope = iota
	onSession
	onConn
)

// mapErr turns an error of package client into go-amqp's: an AMQP
// error that ended a link, session or connection into *LinkError,
// *SessionError or *ConnError by its scope, with RemoteErr set when the
// peer sent it (so that errors.As finds both the scoped error and the
// *Error, as azservicebus's recovery looks for them); a call on what this
// end closed into the scoped error of what the call was on (conn says
// whether the connection is gone, which then counts); the rejected
// outcome into the *Error the peer gave. Context errors, and errors of
// no AMQP scope, are returned as they are.
func mapErr(err error, on scope, conn *client.Conn) error {
	if err == nil {
		return nil
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		var remote *Error
		if ce.Remote {
			remote = &Error{Condition: ErrCond(ce.Condition), Description: ce.Description}
		}
		switch ce.Scope {
		case client.ScopeLink:
			return &LinkError{RemoteErr: remote, inner: err}
		case client.ScopeSession:
			return &SessionError{RemoteErr: remote, inner: err}
		case client.ScopeConn:
			return &ConnError{RemoteErr: remote, inner: err}
		}
		if remote != nil {
			return remote
		}
		return err
	}
	if errors.Is(err, client.ErrClosed) {
		if conn != nil {
			select {
			case <-conn.Done():
				on = onConn
			default:
			}
		}
		switch on {
		case onLink:
			return &LinkError{}
		case onSession:
			return &SessionError{}
		}
		return &ConnError{}
	}
	var de *client.DialError
	if errors.As(err, &de) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return de.Err
		}
		if de.Stage == "tcp" || de.Stage == "dial" || de.Stage == "tls" {
			return de.Err // the dialler's error, as go-amqp returns it
		}
		return &ConnError{inner: err}
	}
	return err
}

// errRejectedBare is Send's error for a rejected outcome without an
// error, in go-amqp's words.
var errRejectedBare = errors.New("the peer rejected the message without specifying an error")

// sendErr is Send's error: go-amqp returns nil for the released and
// modified outcomes, and the peer's *Error for rejected.
func sendErr(err error, s *Session) error {
	if err == nil {
		return nil // before oe, which escapes: no allocation for an accepted message
	}
	var oe *client.OutcomeError
	if errors.As(err, &oe) {
		switch {
		case !errors.Is(oe, client.ErrRejected):
			return nil
		case oe.Err != nil:
			return &Error{Condition: ErrCond(oe.Err.Condition), Description: oe.Err.Description}
		}
		return errRejectedBare
	}
	return s.linkErr(err)
}
