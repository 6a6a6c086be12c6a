package broker

import (
	"slices"
	"sync/atomic"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// This file is the producer: the state of a link the broker receives
// on, and its credit — what its node's room and the broker's memory
// (Options.MaxMemory) allow it, waiting when there is none, and woken
// when there is again.

// producer is a link the broker receives on: the peer sends to a node.
type producer struct {
	link    *engine.Link
	conn    *conn
	n       *node
	on      *node // the node it waits on for credit (blocked)
	blocked bool  // under the broker's lock
	resume  atomic.Bool
	gone    bool
	// Its target is durable (durable.go): the state the broker keeps,
	// and the tags of the messages it rejected and the producer has not
	// settled (receiver settle mode second), for that state.
	dur      *durable
	rejected map[string]struct{}
	// routeOK is the last address its messages were routed to that
	// Options.Permissions allowed (security.go); relayOK, an anonymous
	// relay's (n is nil: each message goes to its properties' to), the
	// addresses it allowed, at most maxRelayOK.
	routeOK []byte
	relayOK map[string]struct{}
	// memWaiting: it is in the broker's memWait (under its lock).
	memWaiting bool
}

// reject rejects d (unsettled) with e, remembering its tag for a
// durable link's state.
func (p *producer) reject(d *engine.Delivery, e *engine.Error) {
	if d.Settled {
		return
	}
	if p.dur != nil && d.Link.RcvSettleMode() == frame.RcvSecond {
		if p.rejected == nil {
			p.rejected = make(map[string]struct{})
		}
		p.rejected[string(d.DeliveryTag)] = struct{}{}
	}
	d.Reject(e)
}

// grant gives producer p the credit its node has room for, or makes it
// wait on the node when it has none.
func (b *Broker) grant(p *producer) {
	on := p.on
	if on == nil {
		on = p.n
	}
	b.mu.Lock()
	if on != nil && on.deleted && on != p.n {
		on = p.n
	}
	if on == nil { // an anonymous relay, not waiting on a node
		var none node
		credit := b.memCreditLocked(&none, b.credit)
		if credit == 0 {
			b.memWaitLocked(p)
		}
		b.mu.Unlock()
		if credit > p.link.Credit() {
			p.link.Flow(credit)
		}
		return
	}
	if p.n.deleted {
		b.mu.Unlock()
		p.link.Detach(engine.NewError(frame.CondResourceDeleted, "node "+p.n.name+" was removed"))
		return
	}
	credit := b.creditLocked(on)
	if credit == 0 {
		b.blockLocked(p, on)
		b.memWaitLocked(p)
	}
	b.mu.Unlock()
	if credit > p.link.Credit() {
		p.link.Flow(credit)
	}
}

// topUp keeps a producer that is refused, not held back, in credit.
func (b *Broker) topUp(p *producer, l *engine.Link) {
	if l.Credit() <= b.credit/2 {
		l.Flow(b.credit)
	}
}

func (b *Broker) blockLocked(p *producer, n *node) {
	if !p.blocked {
		p.blocked, p.on = true, n
		n.blocked = append(n.blocked, p)
	}
}

func (b *Broker) unblockOneLocked(p *producer) {
	if !p.blocked {
		return
	}
	p.blocked = false
	n := p.on
	if i := slices.Index(n.blocked, p); i >= 0 {
		n.blocked = slices.Delete(n.blocked, i, i+1)
	}
}

// memCreditLocked returns the credit a producer is to have by
// MaxMemory: its share of the room left (divided among the producers
// attached), in messages of the node's last size (1 KiB before it has
// one), at least 1 while there is room; 0 at the bound.
func (b *Broker) memCreditLocked(n *node, limit uint32) uint32 {
	if b.opts.MaxMemory <= 0 {
		return limit
	}
	free := b.opts.MaxMemory - b.pool.live
	if free <= 0 {
		return 0
	}
	size := int64(max(n.lastSize, 64))
	if n.lastSize == 0 {
		size = 1024 // nothing stored yet: a guess, as roomLocked's
	}
	share := free / size / int64(max(b.producers, 1))
	return uint32(max(min(share, int64(limit)), 1))
}

// memFullLocked reports that a message of size bytes would take the
// broker past MaxMemory by more than an eighth: it is rejected.
func (b *Broker) memFullLocked(size int) bool {
	return b.opts.MaxMemory > 0 && b.pool.live+int64(size) > b.opts.MaxMemory+b.opts.MaxMemory/8
}

// memWaitLocked makes p wait for MaxMemory's room when the broker is at
// it (it waits on its node too: blockLocked).
func (b *Broker) memWaitLocked(p *producer) {
	if !p.memWaiting && b.opts.MaxMemory > 0 && b.pool.live >= b.opts.MaxMemory {
		p.memWaiting = true
		b.memWait = append(b.memWait, p)
	}
}

// memWakeLocked hands the producers waiting for MaxMemory's room to
// wake once the broker is below 7/8 of it, appending their connections
// to wake.
func (b *Broker) memWakeLocked(wake []*conn) []*conn {
	if len(b.memWait) == 0 || b.pool.live > b.opts.MaxMemory-b.opts.MaxMemory/8 {
		return wake
	}
	for _, p := range b.memWait {
		p.memWaiting = false
	}
	b.memWait, wake = resumeAll(b.memWait, wake)
	return wake
}

// resumeAll has each of ps resume (its connection, appended to wake,
// grants its credit again) and returns ps emptied, its storage kept.
func resumeAll(ps []*producer, wake []*conn) ([]*producer, []*conn) {
	for i, p := range ps {
		p.resume.Store(true)
		wake = append(wake, p.conn)
		ps[i] = nil
	}
	return ps[:0], wake
}

var errMemory = engine.NewError(frame.CondResourceLimitExceeded, "the broker holds as many bytes of messages as it may")
