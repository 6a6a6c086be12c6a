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
	if e := an.AnswerAttach(l, src, tgt); e != nil {
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
