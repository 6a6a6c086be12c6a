package engine

import (
	"strconv"
	"sync/atomic"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/stream"
)

// This file is link recovery (part 2 §2.6.13): a link detached without
// closing (DetachOnly, the peer's detach with closed false, or the
// connection lost) keeps the deliveries it had not settled (Unsettled);
// the application keeps them as long as it wants — for the connection,
// or across connections, as a broker keeps a durable subscription — and
// hands them to a later attach of the same name: LinkOptions.Resume for
// an attach this end makes, Recoverer for one it answers. Each attach
// then carries its unsettled map (incomplete-unsettled when it does not
// fit the peer's max-frame-size), and each end reads the other's
// (RemoteUnsettled). A sender resolves each delivery it kept:
//
//   - the receiver's state is terminal: SendResume(tag, nil, true)
//     settles it (a resumed transfer, settled, without payload);
//   - the receiver knows it otherwise: SendResume(tag, payload, false)
//     sends it again, resume set (the receiver may drop what it had);
//   - the receiver does not know it: Send it as a new delivery, or drop
//     it if it was sent settled.
//
// The receiver sees resumed deliveries with Delivery.Resumed; one whose
// tag its attach did not carry is dropped (the spec's rule), so each
// delivery unsettled at the break is settled once. The endpoint state
// needs nothing more: the detach is a detach, the attach an attach.

// Unsettled is a delivery a link end had not settled when it detached
// (part 2 §2.6.13): its delivery-tag and this end's state of it, both
// copies the application may keep.
type Unsettled struct {
	Tag   []byte
	State frame.DeliveryState // StateNone: none; Raw, when set, a copy
	// Context is the delivery's application value (Link.SendWith,
	// SetDeliveryContext) when Link.Unsettled returned it; the engine
	// does not send it. Given back in LinkOptions.Resume or by a
	// Recoverer it is not used: set it on the resumed delivery with
	// SetDeliveryContext.
	Context any
}

// Recoverer is implemented by a Handler that keeps links' unsettled
// deliveries across attaches (part 2 §2.6.13), such as a broker's
// durable subscriptions. Before the engine answers a peer's attach it
// calls Recover with the new link (Name, IsSender, RemoteAttach and
// RemoteUnsettled are set): the deliveries returned are sent as the
// answer's unsettled map, and are those the link may resume
// (SendResume) or accept resumed.
type Recoverer interface {
	Recover(l *Link) []Unsettled
}

// Unsettled returns the deliveries of the link this end has not settled,
// oldest first, as copies: while the link is attached, those it holds;
// from its OnLinkDetach on, those it held when it detached without being
// closed (none when either end closed it). A sender holds every
// unsettled delivery it sent; a receiver holds the tags of its
// unsettled deliveries when a terminus of the link is durable with
// unsettled-state (part 3 §3.5.5), as the spec asks, and none otherwise
// (so that the hot path of a plain receiver copies no tag).
func (l *Link) Unsettled() []Unsettled {
	if l.reported {
		return l.kept
	}
	return l.unsettledNow()
}

func (l *Link) unsettledNow() []Unsettled {
	r := &l.s.incoming
	if l.sender {
		r = &l.s.outgoing
	} else if !l.keepTags {
		return nil
	}
	var out []Unsettled
	for i := 0; i < r.n; i++ {
		if e := r.at(i); e.link == l && !e.free {
			out = append(out, Unsettled{Tag: append([]byte(nil), e.tag...), Context: e.ctx})
		}
	}
	return out
}

// keep is gone's hook: a link detached without closing keeps its
// unsettled deliveries for Unsettled.
func (l *Link) keep() {
	if !l.closing && !l.remoteClosed {
		l.kept = l.unsettledNow()
	}
}

// setResume makes u the deliveries the link's attach carries and may
// resume: the unsettled map is encoded once, with as many of them as fit
// the peer's max-frame-size (incomplete-unsettled set when some do not).
func (l *Link) setResume(u []Unsettled, src frame.Opt[frame.Source], tgt frame.Opt[frame.Target]) {
	if len(u) == 0 {
		return
	}
	l.resumeTags = make(map[string]struct{}, len(u))
	n := len(u)
	for {
		m := encode.BeginMap(nil)
		for _, d := range u[:n] {
			m = encode.AppendBinary(m, d.Tag)
			m = frame.AppendDeliveryState(m, d.State)
		}
		l.resumeMap = encode.EndMap(m, 0, n)
		l.resumeInc = n < len(u)
		if n == 0 || l.attachFits(src, tgt) {
			break
		}
		n -= max(1, n/8)
	}
	if n == 0 {
		l.resumeMap = nil
	}
	for _, d := range u[:n] {
		l.resumeTags[string(d.Tag)] = struct{}{}
	}
}

// recoverAnswer is onAttach's hook before it answers a peer's attach:
// a Recoverer gives the link's unsettled deliveries.
func (l *Link) recoverAnswer(a *frame.Attach) {
	if r, ok := l.s.c.h.(Recoverer); ok {
		l.setResume(r.Recover(l), a.Source, a.Target)
	}
}

// RemoteUnsettled returns the peer's state of the delivery with
// delivery-tag tag as its attach's unsettled map gave it (part 2
// §2.6.13), and whether the map holds it. A map that is not one of
// binary tags and states holds nothing; of a tag listed twice, the first
// counts. RemoteAttach().IncompleteUnsettled tells a map the peer cut
// short. The first call indexes the map, so resolving every delivery of
// a resume costs the map's length once, not once per delivery.
func (l *Link) RemoteUnsettled(tag []byte) (frame.DeliveryState, bool) {
	if l.remoteIndex == nil {
		l.indexRemoteUnsettled()
	}
	v, ok := l.remoteIndex[string(tag)]
	if !ok {
		return frame.DeliveryState{}, false
	}
	st, err := frame.ParseDeliveryState(v)
	return st, err == nil
}

// ResumeAction is what a sender does with a delivery it kept unsettled
// through a detach, once the receiver's attach has given its unsettled
// map (part 2 §2.6.13): Link.ResumeAction decides it, so that every
// layer resumes by one rule.
type ResumeAction uint8

const (
	// ResumeUnknown: the delivery's fate cannot be told, or not acted
	// on. The receiver's map does not list it but was cut short
	// (incomplete-unsettled), so the receiver may hold it; or the
	// receiver holds it but this end's attach did not carry the tag (its
	// own map was cut to fit, or the tag was resumed already), so
	// SendResume would refuse it; or the peer's attach has not arrived.
	// Sending it anew risks a duplicate; an application reports it lost
	// (at-most-once) or sends it anew (at-least-once).
	ResumeUnknown ResumeAction = iota
	// ResumeNew: the receiver does not have it and its map is complete:
	// Send it as a new delivery (or drop it, had it been sent settled).
	ResumeNew
	// ResumeResend: the receiver has it in a state that is not terminal
	// (none, received): SendResume(tag, payload, false) sends it again,
	// resumed.
	ResumeResend
	// ResumeSettle: the receiver has it in a terminal state (Terminal;
	// RemoteUnsettled gives the outcome): SendResume(tag, nil, true)
	// settles it, with no payload.
	ResumeSettle
)

var resumeActionNames = [...]string{"unknown", "new", "resend", "settle"}

// String returns the action's name: unknown, new, resend or settle.
func (a ResumeAction) String() string {
	if int(a) < len(resumeActionNames) {
		return resumeActionNames[a]
	}
	return "ResumeAction(" + strconv.Itoa(int(a)) + ")"
}

// ResumeAction decides, on a sender whose attach carried tag in its
// unsettled map (LinkOptions.Resume, Recoverer), what to do with that
// delivery against the receiver's unsettled map (RemoteUnsettled and
// RemoteAttach().IncompleteUnsettled), after part 2 §2.6.13 and its
// table of resumes: the receiver's state terminal, ResumeSettle; in the
// map otherwise, ResumeResend; not in a complete map, ResumeNew; not in
// a map cut short, ResumeUnknown. A tag the receiver holds that this
// end's attach did not carry (or that SendResume has already resumed) is
// ResumeUnknown, as SendResume would refuse it; so is any tag before the
// peer's attach has arrived, and any on a receiver. Ask before
// SendResume. The first call indexes the peer's map, as RemoteUnsettled
// does.
func (l *Link) ResumeAction(tag []byte) ResumeAction {
	if !l.sender || l.st.remote == unset {
		return ResumeUnknown
	}
	st, known := l.RemoteUnsettled(tag)
	_, carried := l.resumeTags[string(tag)]
	switch {
	case known && !carried:
		return ResumeUnknown // SendResume cannot resume it
	case known && st.Type.Terminal():
		return ResumeSettle
	case known:
		return ResumeResend
	case l.attach.IncompleteUnsettled:
		return ResumeUnknown
	}
	return ResumeNew
}

// unsettledScans counts the walks of attaches' unsettled maps (tests).
var unsettledScans atomic.Int64

// indexRemoteUnsettled maps the tags of the peer's unsettled map to
// their states' bytes: keys and values are views of the link's copy of
// the attach, and the budget counted the entries with it (onAttach).
func (l *Link) indexRemoteUnsettled() {
	unsettledScans.Add(1)
	l.remoteIndex = make(map[string][]byte) // non-nil: built
	for k, v := range l.attach.Unsettled.All() {
		var c stream.Cursor
		c.Reset(k)
		if !c.Next() || c.Kind() != amqpsax.KindBinary {
			continue
		}
		if _, dup := l.remoteIndex[string(c.Bytes())]; !dup {
			l.remoteIndex[string(c.Bytes())] = v
		}
	}
}

// SendResume sends again, on a sender, a delivery it kept unsettled
// through a detach (part 2 §2.6.13): a transfer with resume set and the
// delivery-tag, under a new delivery-id. With settled and no payload it
// settles a delivery the receiver gave a terminal outcome; otherwise it
// carries the whole message again. tag must be one the link's attach
// carried (LinkOptions.Resume, Recoverer), each resumed once; else
// ErrState. A settling resume is allowed on a link in snd-settle-mode
// unsettled too: it settles a delivery sent unsettled before, as the
// mode asks, and is no new one. It fails as Send does otherwise.
func (l *Link) SendResume(tag, payload []byte, settled bool) (uint32, error) {
	if _, ok := l.resumeTags[string(tag)]; !ok || !l.sender {
		return 0, ErrState
	}
	c := l.s.c
	c.txn.special = sendSpecial{resume: true}
	l.special = &c.txn.special
	mode := l.sndMode
	if settled && mode == frame.SndUnsettled {
		l.sndMode = frame.SndMixed // for Send's check alone
	}
	id, err := l.Send(tag, payload, settled)
	l.sndMode = mode
	l.special = nil
	if err == nil {
		delete(l.resumeTags, string(tag))
	}
	return id, err
}

// resumedTransfer is onTransfer's hook for the first transfer of a
// resumed delivery on a receiver: it is delivered (Delivery.Resumed)
// when the link's attach carried its tag, once; otherwise dropped, as
// the spec asks.
func (l *Link) resumedTransfer(t *frame.Transfer) {
	_, known := l.resumeTags[string(t.DeliveryTag)]
	l.recv.resumed = known
	l.recv.dropResumed = !known
	if known {
		delete(l.resumeTags, string(t.DeliveryTag))
	}
}
