package client

import (
	"context"
	"time"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// This file is the resumable receiver (ReceiverOptions.Durable): the
// receiving half of link recovery (part 2 §2.6.13) under Reconnect. Its
// source is durable (unsettled-state), so a sender that keeps the link's
// state across connections (a broker's durable subscription) resumes
// what it had delivered and not seen settled.
//
// The receiver follows, by delivery-id, the unsettled deliveries it has
// handed out on the link now attached (handed). At a loss those, with
// any disposition queued for them and not yet sent, are kept by tag
// (kept), as are the tags of the deliveries queued and not yet received,
// which are dropped (dropped); the next attach carries all of them as
// its unsettled map. At the peer's answer the tags its map does not hold
// are forgotten: the sender has settled them its own way. Then:
//
//   - a resumed transfer of a delivery handed out before binds its tag to
//     the new delivery-id: the old Delivery's Accept (or Reject, …)
//     settles it there, and one given during the outage is sent at once;
//     it is not handed out again;
//   - a resumed transfer of a delivery dropped unreceived is queued as
//     any delivery, with Delivery.Resumed set;
//   - a Delivery whose tag was forgotten cannot be settled: the loss's
//     error, as without Durable.

// keptTag is an unsettled delivery handed out: its tag, and, kept at a
// loss, the delivery-id the sender resumed it under (bound) and the
// disposition given meanwhile (has).
type keptTag struct {
	tag   [32]byte
	n     uint8
	id    uint32
	bound bool
	has   bool
	disp  dispReq
}

func (k *keptTag) key() []byte { return k.tag[:k.n] }

// durableSource is the source of a resumable receiver's link.
func durableSource(s *frame.Source, address string, expiry time.Duration) *frame.Source {
	if s == nil {
		s = &frame.Source{Address: []byte(address)}
	}
	s.Durable, s.ExpiryPolicy = frame.DurabilityUnsettledState, frame.ExpiryNever
	if expiry > 0 {
		s.ExpiryPolicy = frame.ExpiryLinkDetach
		s.Timeout = uint32(min((expiry+time.Second-1)/time.Second, 1<<32-1))
	}
	return s
}

// setDurable makes r resumable: NewReceiver's hook.
func (r *Receiver) setDurable(o *ReceiverOptions) {
	r.durable = true
	r.lo.Source = durableSource(r.lo.Source, r.lo.Address, o.ExpiryTimeout)
	r.handed = make(map[uint32]keptTag)
	r.kept = make(map[string]keptTag)
	r.dropped = make(map[string]struct{})
}

// hand is next's hook: a delivery handed out unsettled is followed by
// its delivery-id. Under r.mu.
func (r *Receiver) hand(in *inDelivery) {
	if !in.settled {
		r.handed[in.id] = keptTag{tag: in.tag, n: in.tagLen}
	}
}

// disposedID is run's hook: a disposition sent settles its delivery.
func (r *Receiver) disposedID(id uint32) {
	r.mu.Lock()
	delete(r.handed, id)
	r.mu.Unlock()
}

// keepHanded is lost's hook, under r.mu before the epoch changes: what
// was handed out unsettled, with the dispositions queued for it, is kept
// by tag.
func (r *Receiver) keepHanded() {
	for _, dr := range r.disp {
		if k, ok := r.handed[dr.id]; ok && dr.epoch == r.epoch {
			k.disp, k.has = dr, true
			r.handed[dr.id] = k
		}
	}
	for tag, k := range r.kept {
		k.bound = false // its delivery-id was the lost link's
		r.kept[tag] = k
	}
	for _, k := range r.handed {
		k.id, k.bound = 0, false
		r.kept[string(k.key())] = k
	}
	clear(r.handed)
}

// keepDropped is lost's hook for a delivery queued and dropped unreceived:
// the sender may resume it.
func (r *Receiver) keepDropped(in *inDelivery) {
	r.dropped[string(in.tag[:in.tagLen])] = struct{}{}
}

// resumeOptions is the link's options for its next attach: the tags kept
// and dropped as its unsettled map.
func (r *Receiver) resumeOptions() engine.LinkOptions {
	lo := r.lo
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.kept) + len(r.dropped); n > 0 {
		lo.Resume = make([]engine.Unsettled, 0, n)
		for tag := range r.kept {
			lo.Resume = append(lo.Resume, engine.Unsettled{Tag: []byte(tag)})
		}
		for tag := range r.dropped {
			lo.Resume = append(lo.Resume, engine.Unsettled{Tag: []byte(tag)})
		}
	}
	return lo
}

// forgetUnknown is attached's hook: the tags the sender's unsettled map
// does not hold (unless it is incomplete) are forgotten.
func (r *Receiver) forgetUnknown(l *engine.Link) {
	a := l.RemoteAttach()
	r.mu.Lock()
	defer r.mu.Unlock()
	if a.IncompleteUnsettled || len(r.kept)+len(r.dropped) == 0 {
		return
	}
	for tag := range r.kept {
		if _, ok := l.RemoteUnsettled([]byte(tag)); !ok {
			delete(r.kept, tag)
		}
	}
	for tag := range r.dropped {
		if _, ok := l.RemoteUnsettled([]byte(tag)); !ok {
			delete(r.dropped, tag)
		}
	}
}

// resumedIn is delivered's hook for a resumed delivery: one handed out
// before is bound to its new delivery-id (and settled at once when a
// disposition waits for it), and true is returned: it is not queued
// again. It runs on the connection's goroutine.
func (r *Receiver) resumedIn(d *engine.Delivery) bool {
	r.mu.Lock()
	k, ok := r.kept[string(d.DeliveryTag)]
	if !ok {
		delete(r.dropped, string(d.DeliveryTag))
		r.mu.Unlock()
		return false
	}
	kick := false
	switch {
	case d.Settled: // the sender settled it: nothing left to give
		delete(r.kept, string(d.DeliveryTag))
	case k.has:
		k.disp.id, k.disp.epoch = d.DeliveryID, r.epoch
		r.disp = append(r.disp, k.disp)
		r.handed[d.DeliveryID] = k
		delete(r.kept, string(d.DeliveryTag))
		kick = true
	default:
		k.id, k.bound = d.DeliveryID, true
		r.kept[string(d.DeliveryTag)] = k
		r.handed[d.DeliveryID] = k
	}
	r.mu.Unlock()
	if kick {
		r.kick()
	}
	return true
}

// disposeKept is settle's hook for a resumable receiver: a Delivery of
// a link since lost is settled by its tag — on the delivery-id the sender
// resumed it under, or when it does. handled is false for a Delivery of
// the link attached now.
func (r *Receiver) disposeKept(ctx context.Context, dr dispReq, tag []byte) (handled bool, err error) {
	if err := ctx.Err(); err != nil {
		return true, ctxErr(ctx)
	}
	r.mu.Lock()
	if dr.epoch == r.epoch || r.err != nil {
		r.mu.Unlock()
		return false, nil
	}
	k, ok := r.kept[string(tag)]
	switch {
	case !ok:
		err = r.lostErr // forgotten by the sender, or settled already
	case k.bound:
		dr.id, dr.epoch = k.id, r.epoch
		r.disp = append(r.disp, dr)
		delete(r.kept, string(tag))
	default:
		k.disp, k.has = dr, true
		r.kept[string(tag)] = k
	}
	r.mu.Unlock()
	if ok && k.bound {
		r.kick()
	}
	return true, err
}
