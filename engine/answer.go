package engine

import "github.com/amqpsax/amqpsax/frame"

// Answerer is implemented by a Handler that has a say in how a peer's
// attach is answered (part 2 §2.6.3), before the engine answers it: it
// fills in the address of a dynamic node it creates (part 3 §3.5.3), a
// durable subscription's expiry policy, the outcomes a source supports,
// or refuses the link. The engine otherwise answers with the peer's own
// source and target (mirrored), as without an Answerer.
//
// AnswerAttach runs on the new link (Name, IsSender, RemoteAttach,
// RemoteSource and RemoteTarget are set) before any other event of it,
// with the source and target the answer will carry: copies of the
// peer's, nil when its attach had none (the answer then has none
// either). It may change them in place; byte slices it sets are copied
// into the answer as soon as it returns, and need stay valid only until
// then. A
// non-nil *Error refuses the link: the answer has no terminus at this
// end and the detach that follows carries the error; the link is never
// reported (no OnLinkAttach, no OnLinkDetach). The answer's properties
// and capabilities are the Answerer's to set too, with
// Link.SetAnswerFields (none otherwise: the peer's are not echoed). It
// is not called for a
// link the engine refuses itself (a name in use, a coordinator without
// Config.Coordinator) or runs itself (a transaction coordinator).
type Answerer interface {
	AnswerAttach(l *Link, src *frame.Source, tgt *frame.Target) *Error
}

// answerHook is onAttach's hook before it answers a peer's attach: an
// Answerer's changes go into a, and its refusal is returned.
func (l *Link) answerHook(a *frame.Attach) *Error {
	an, ok := l.s.c.h.(Answerer)
	if !ok {
		return nil
	}
	var src *frame.Source
	var tgt *frame.Target
	if v, ok := a.Source.Get(); ok {
		src = &v
	}
	if v, ok := a.Target.Get(); ok {
		tgt = &v
	}
	l.answering = true
	e := an.AnswerAttach(l, src, tgt)
	l.answering = false
	if e != nil {
		l.deferred = false
		return e
	}
	if src != nil {
		a.Source = frame.Some(*src)
	}
	if tgt != nil {
		a.Target = frame.Some(*tgt)
	}
	return nil
}

// AnswerLater holds the engine's answer to the peer's attach: called
// from Answerer.AnswerAttach (ErrState at any other time), it makes the
// engine write nothing for the link and report nothing of it (no
// OnLinkAttach, no OnFlow) until the handler calls Answer, on the
// connection's goroutine (in another event, or a driver.Waker's run) —
// so that an answer that waits on something outside the connection,
// such as a broker's durable link still held by another connection,
// does not hold up the connection's other work. The answer carries the
// source and target AnswerAttach left: byte slices it set in them must
// stay valid until Answer. Meanwhile the peer's flow is taken (its
// credit is the link's when it is reported, with an OnFlow after
// OnLinkAttach), and the peer's detach, or a fault of the peer on the
// link, answers it at once as refused (the link is never reported, and
// Answer returns ErrState); so does the end of its session.
func (l *Link) AnswerLater() error {
	if !l.answering {
		return ErrState
	}
	l.deferred = true
	return nil
}

// Answer writes the answer AnswerLater held: with refuse nil the attach
// (Recoverer.Recover is asked for its unsettled map now), then
// OnLinkAttach, and OnFlow when the peer granted credit meanwhile; else
// a refusal (an attach with no terminus at this end, then the detach
// with refuse), the link never reported. It returns ErrState for a link
// whose answer is not held, or that went meanwhile.
func (l *Link) Answer(refuse *Error) error {
	if !l.deferred || l.st.local != unset || l.st.remote != active || !l.s.usable() {
		return ErrState
	}
	l.deferred = false
	a := l.pending
	l.pending = nil
	if refuse != nil {
		l.refuse(a, refuse)
		return nil
	}
	l.hidden = false
	l.recoverAnswer(a) // recover.go: the unsettled map of the answer
	l.writeAttach(a.Source, a.Target)
	l.attachDone()
	if l.sender && l.attached() && (l.credit > 0 || l.drain) {
		l.s.h().OnFlow(l) // the credit the peer granted before the answer
		l.drained(false)
	}
	return nil
}

// SetAnswerFields sets the properties, offered and desired capabilities
// (part 2 §2.7.3) of the attach with which this end answers the peer's:
// it is for Answerer.AnswerAttach (and Recoverer.Recover), before the
// answer is written, and returns ErrState at any other time (a link this
// end attaches takes them from LinkOptions). As in LinkOptions,
// properties is the encoding of a map of symbol keys (frame.SymbolMap)
// and each capabilities field that of a symbol or an array of them
// (frame.AppendSymbols), written exactly as given; nil sends none. The
// bytes are copied into the answer as soon as AnswerAttach returns, and
// need stay valid only until then. A refusal's answer carries none of
// them.
func (l *Link) SetAnswerFields(properties frame.Map, offered, desired frame.Symbols) error {
	if l.st.local != unset || l.st.remote != active {
		return ErrState
	}
	l.mine = attachFields{properties, offered, desired}
	return nil
}
