package client

import (
	"encoding/binary"
	"errors"
	"slices"
	"time"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// This file is the resumable sender (SenderOptions.Durable): link
// recovery (part 2 §2.6.13, engine/recover.go) under the connection's
// Reconnect. The sender's link has a durable target (unsettled-state,
// expiry-policy never or link-detach with a timeout) and asks for
// receiver settle mode second, so that the receiver keeps each delivery
// it took, with its outcome, until this end settles it. Each unsettled
// delivery carries a tag of the sender's own (tagLen bytes: the sender's
// instance, then its sequence number), never the delivery-id, which
// starts again with each session.
//
// When the connection is lost, the deliveries sent and not settled are
// kept (lost → keepResume): their requests hold the tag and the encoded
// message already. The next attach carries their tags
// (LinkOptions.Resume); at the peer's answer (attached → resolve) each is
// resolved by the receiver's unsettled map, and goes to the front of the
// backlog, where pump sends it (sendResumed) as credit allows:
//
//   - known, terminal: a resumed settled transfer without payload
//     settles it, and its Pending completes with that outcome;
//   - known, not terminal: the message again, resume set; its outcome
//     comes as any other's;
//   - unknown: the message as a new delivery, with the same tag;
//   - unknown while the receiver's map was incomplete, or known but not
//     carried by this end's attach (a map cut at the peer's
//     max-frame-size): its fate cannot be told, and its Pending
//     completes with the loss's error, as without Durable.
//
// Each request completes once, whatever happens: with its outcome, or
// with the link's error when it ends.

// tagLen is the length of a resumable sender's delivery-tags.
const tagLen = 16

// resumeEntry bounds the bytes one delivery takes in the attach's
// unsettled map: its tag as a binary (2+tagLen) and no state (null).
const resumeEntry = 2 + tagLen + 1

// The resolutions of a kept request (sendReq.res).
const (
	resNone   uint8 = iota // a request sent for the first time
	resSettle              // settle it resumed; r.err is its outcome
	resAgain               // send it again, resume set
	resNew                 // send it as a new delivery, with its tag
)

// durableTarget is the target of a resumable sender's link.
func durableTarget(t *frame.Target, address string, expiry time.Duration) *frame.Target {
	if t == nil {
		t = &frame.Target{Address: []byte(address)}
	}
	t.Durable, t.ExpiryPolicy = frame.DurabilityUnsettledState, frame.ExpiryNever
	if expiry > 0 {
		t.ExpiryPolicy = frame.ExpiryLinkDetach
		t.Timeout = uint32(min((expiry+time.Second-1)/time.Second, 1<<32-1))
	}
	return t
}

var errDurableSettled = errors.New("client: SenderOptions.Durable needs unsettled deliveries: settle mode unsettled or mixed")

// setDurable makes snd resumable: NewSender's hook.
func (snd *Sender) setDurable(o *SenderOptions) error {
	if o.SettlementMode == SenderSettleModeSettled {
		return errDurableSettled
	}
	snd.durable = true
	snd.lo.Target = durableTarget(snd.lo.Target, snd.lo.Address, o.ExpiryTimeout)
	snd.lo.RcvSecond = true
	binary.BigEndian.PutUint64(snd.instance[:], uint64(time.Now().UnixNano())^linkSeq.Add(1)<<48)
	return nil
}

// tagOf gives r its delivery-tag, once: the sender's instance, then the
// next sequence number. It runs on the connection's goroutine.
func (snd *Sender) tagOf(r *sendReq) []byte {
	if !r.tagged {
		snd.seq++
		copy(r.tag[:8], snd.instance[:])
		binary.BigEndian.PutUint64(r.tag[8:], snd.seq)
		r.seq, r.tagged = snd.seq, true
	}
	return r.tag[:]
}

// resumeOptions is the link's options for its next attach: the tags of
// the deliveries kept at the loss.
func (snd *Sender) resumeOptions() engine.LinkOptions {
	lo := snd.lo
	if len(snd.resume) > 0 {
		lo.Resume = make([]engine.Unsettled, len(snd.resume))
		for i, r := range snd.resume {
			lo.Resume[i].Tag = r.tag[:]
		}
	}
	return lo
}

// keepResume is lost's hook for a resumable sender: the deliveries sent
// and not settled, and those kept at an earlier loss and not yet
// resolved, are kept, oldest first, for the next attach. It runs on the
// connection's goroutine.
func (snd *Sender) keepResume(err error) {
	snd.lostErr = err
	kept := snd.resume
	n := 0
	for _, r := range snd.backlog {
		if r.res != resNone {
			kept = append(kept, r) // resolved, not yet sent: resolved again
		} else {
			snd.backlog[n] = r
			n++
		}
	}
	clear(snd.backlog[n:])
	snd.backlog = snd.backlog[:n]
	for id, r := range snd.inflight {
		delete(snd.inflight, id)
		if r.txn != nil {
			snd.complete(r, err) // a transaction does not survive the loss
			continue
		}
		kept = append(kept, r)
	}
	slices.SortFunc(kept, func(a, b *sendReq) int {
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
	for _, r := range kept {
		r.res = resNone
	}
	snd.resume = kept
}

// resolve is attached's hook for a resumable sender: each delivery kept
// is resolved by the receiver's unsettled map and put before what is
// waiting to be sent. It also sets how many deliveries may be unsettled
// at once: as many as an attach's unsettled map holds within the peer's
// max-frame-size. It runs on the connection's goroutine.
func (snd *Sender) resolve(l *engine.Link) {
	snd.maxUnsettled = int(min(max(int64(l.Conn().RemoteMaxFrameSize())-1024, 0)/resumeEntry, 1<<16))
	snd.maxUnsettled = max(snd.maxUnsettled, 1)
	if len(snd.resume) == 0 {
		return
	}
	out := snd.resume[:0]
	for _, r := range snd.resume {
		switch l.ResumeAction(r.tag[:]) { // the peer's map indexed at the first call
		case engine.ResumeSettle:
			st, _ := l.RemoteUnsettled(r.tag[:])
			r.res, r.err = resSettle, outcome(&st)
		case engine.ResumeResend:
			r.res = resAgain
		case engine.ResumeUnknown:
			snd.complete(r, snd.lostErr) // the receiver may have it: unknown
			continue
		default:
			r.res = resNew
		}
		out = append(out, r)
	}
	snd.backlog = append(out, snd.backlog...)
	snd.resume = nil
}

// sendResumed sends a kept request as resolve resolved it; false when
// the link cannot take it now (credit, window, output room). It runs on
// the connection's goroutine, from pump.
func (snd *Sender) sendResumed(l *engine.Link, r *sendReq) bool {
	var id uint32
	var err error
	if l.MessageFormat() != r.format {
		l.SetMessageFormat(r.format)
	}
	switch r.res {
	case resSettle:
		_, err = l.SendResume(r.tag[:], nil, true)
	case resAgain:
		id, err = l.SendResume(r.tag[:], r.buf, false)
	default:
		id, err = l.Send(r.tag[:], r.buf, false)
	}
	switch {
	case err == nil:
	case errors.Is(err, engine.ErrTryLater):
		return false
	case err == engine.ErrState:
		if l.Err() == nil && !l.Conn().Closed() {
			// not carried by this end's attach (its unsettled map was
			// cut at the peer's max-frame-size): its fate is unknown
			snd.complete(r, snd.lostErr)
			return true
		}
		fallthrough
	default:
		snd.complete(r, sendErr(l, err))
		return true
	}
	if r.res == resSettle {
		snd.complete(r, r.err)
		return true
	}
	r.res = resNone
	snd.inflight[id] = r
	return true
}
