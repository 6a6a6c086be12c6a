package engine

import (
	"errors"

	"github.com/amqpsax/amqpsax/frame"
)

// Error is an AMQP error condition (part 2 §2.8.14): what a close, end or
// detach carries, in either direction. Events report the peer's errors
// with Remote set, and the engine's own (a protocol violation by the peer,
// an idle time-out, a lost connection) with Remote false.
type Error struct {
	// Condition is the condition: one of the spec's, or frame.CondOther
	// for another symbol (a vendor's, such as "com.microsoft:timeout"),
	// which Symbol then holds.
	Condition frame.Condition
	// Symbol is the condition's symbol when Condition is frame.CondOther;
	// empty otherwise (Condition.Symbol() names it).
	Symbol string
	// Description is free text for a person.
	Description string
	// Remote reports an error the peer sent.
	Remote bool
}

// NewError returns an Error with the condition cond (one of the spec's)
// and the description desc.
func NewError(cond frame.Condition, desc string) *Error {
	return &Error{Condition: cond, Description: desc}
}

// Name returns the condition's symbol, such as "amqp:not-found".
func (e *Error) Name() string {
	if e.Condition == frame.CondOther {
		return e.Symbol
	}
	return e.Condition.Symbol()
}

// Error formats the error as "engine: condition: description", with
// "(remote)" after the condition for an error the peer sent.
func (e *Error) Error() string {
	s := "engine: " + e.Name()
	if e.Remote {
		s += " (remote)"
	}
	if e.Description != "" {
		s += ": " + e.Description
	}
	return s
}

// Is reports that target is an *Error with the same condition (and
// symbol, for CondOther): errors.Is(err, engine.NewError(frame.CondNotFound, ""))
// matches any not-found, whatever its description or direction.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Condition == e.Condition && (e.Condition != frame.CondOther || t.Symbol == e.Symbol)
}

// remoteError copies an error the peer sent; nil when it sent none.
func remoteError(has bool, e frame.AMQPError) *Error {
	if !has && e.Condition == nil {
		return nil
	}
	r := &Error{Condition: frame.LookupCondition(e.Condition), Description: string(e.Description), Remote: true}
	if r.Condition == frame.CondOther {
		r.Symbol = string(e.Condition)
	}
	return r
}

// amqp turns e into the frame's error composite (nil: none).
func (e *Error) amqp() frame.AMQPError {
	if e == nil {
		return frame.AMQPError{}
	}
	c := e.Name()
	if c == "" {
		c = frame.CondInternalError.Symbol()
	}
	var d []byte
	if e.Description != "" {
		d = []byte(e.Description)
	}
	return frame.AMQPError{Condition: []byte(c), Description: d}
}

// Errors returned by the methods that act on a connection, session or
// link. None of them changes the engine's state. Four say "try later",
// each with the event that says when: ErrNoCredit and ErrNoWindow,
// OnFlow; ErrBusy, OnFlow once the held-back frames are out; ErrOutputFull,
// OnWritable. They stay distinct values, and each matches ErrTryLater:
// errors.Is(err, ErrTryLater) is the one test a caller needs to keep a
// send for the next OnFlow or OnWritable.
var (
	// ErrTryLater is matched by errors.Is for every error that says "not
	// now, try again at the event that says when": ErrNoCredit,
	// ErrNoWindow, ErrBusy (OnFlow) and ErrOutputFull (OnWritable).
	// Nothing was sent or changed.
	ErrTryLater = errors.New("engine: try later")
	// ErrNoCredit: Send on a link whose peer has granted no credit.
	// OnFlow reports the peer's next grant.
	ErrNoCredit = error(&tryLater{"engine: no link credit"})
	// ErrNoWindow: Send while the peer's session incoming window is 0.
	// OnFlow follows, for each sender with credit, when it reopens.
	ErrNoWindow = error(&tryLater{"engine: session window closed"})
	// ErrOutputFull: Send while the output buffer holds more than
	// Config.MaxOutput bytes (the peer, or the driver, is not reading).
	// OnWritable follows when it has been written out.
	ErrOutputFull = error(&tryLater{"engine: output buffer full"})
	// ErrBusy: Send while the link's previous delivery is still waiting
	// for the peer's session window to take its last frames. OnFlow
	// follows once they are out and the link has credit.
	ErrBusy = error(&tryLater{"engine: previous delivery not sent yet"})
	// ErrState: the object is not in a state that allows the call (a
	// link not attached or detached, a session ended, a connection not
	// open or closed, a receiver asked to send).
	ErrState = errors.New("engine: not allowed in this state")
	// ErrSettleMode: settled contradicts the link's sender settle mode.
	ErrSettleMode = errors.New("engine: settlement contradicts the link's settle mode")
	// ErrLimit: no free channel (channel-max) or handle (handle-max), or
	// the connection's memory budget (Config.MaxMemory) is used up.
	ErrLimit = errors.New("engine: channel, handle or memory limit reached")
	// ErrLinkName: AttachSender or AttachReceiver with a name that a link
	// of the same direction on the connection has (part 2 §2.6.1).
	ErrLinkName = errors.New("engine: link name in use in this direction")
)

// tryLater is the type of the "try later" errors: each its own value,
// each matching ErrTryLater.
type tryLater struct{ s string }

func (e *tryLater) Error() string { return e.s }

// Is makes errors.Is(err, ErrTryLater) true.
func (e *tryLater) Is(target error) bool { return target == ErrTryLater }
