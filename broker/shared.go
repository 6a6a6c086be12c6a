package broker

import (
	"bytes"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// This file is shared subscriptions to a fan-out node, as Qpid JMS and
// ActiveMQ Artemis name them (JMS 2.0's shared consumers): a source
// with the capability "shared" on a fan-out node subscribes by its
// link's name, up to its first "|" ("sub", "sub|2", "sub|volatile1",
// "sub|global2" are receivers of subscription "sub"), every receiver of
// one subscription taking its turn at one queue. The subscription is
// its container's (the connection's container-id) unless the source
// has the capability "global" too: then any container's receivers of
// that name share it. A link name whose suffix is "volatile…" or
// "global-volatile…" names a volatile subscription, which is not the
// durable one of the same name (Qpid JMS's createSharedConsumer and
// createSharedDurableConsumer).
//
// The subscription is a queue node of its own (node.parent is the
// fan-out node), not in the broker's addresses: the fan-out node puts a
// copy of each message its filters take (those of the receiver that
// made it) on it, and its receivers are its competing consumers.
//
// A subscription has one set of filters, as a JMS shared subscription
// has one selector and noLocal (JMS 2.0 §8.3, Qpid JMS, ActiveMQ
// Artemis): every receiver of it must give the same (the same filter
// set, entries in the same order and encoded alike; none for none). A
// receiver that gives others while the subscription has receivers is
// refused with amqp:precondition-failed, and the subscription goes on
// as it was; one that gives others to a durable subscription kept with
// no receiver replaces it (its kept messages dropped), as JMS's
// createSharedDurableConsumer with another selector does. A
// volatile subscription goes with its last receiver; a durable one (a
// durable source) stays while its receivers are detached, and goes when
// the last of them closes its link (part 2 §2.6.6: a subscription
// ended). Kept with no receiver, it holds no producer back: a copy past
// its bounds is dropped for it (counted in Dropped), as for a detached
// durable subscription.

// subKey names a shared subscription.
type subKey struct {
	node      string
	container string // "" for a global one
	name      string
	volatile  bool
}

// sharedKey returns the subscription a link to fan-out node n with
// source src names.
func sharedKey(l *engine.Link, n *node, src *frame.Source) subKey {
	name := l.Name()
	k := subKey{node: n.name}
	if i := bytes.IndexByte(name, '|'); i >= 0 {
		suffix := name[i+1:]
		k.volatile = bytes.HasPrefix(suffix, []byte("volatile")) || bytes.HasPrefix(suffix, []byte("global-volatile"))
		name = name[:i]
	}
	k.name = string(name)
	if !src.Capabilities.Contains("global") {
		k.container = l.Conn().RemoteContainerID()
	}
	return k
}

// errSharedFilters refuses a receiver of a shared subscription whose
// filters are not the subscription's.
var errSharedFilters = engine.NewError(frame.CondPreconditionFailed,
	"the shared subscription has receivers with other filters: a receiver gives the subscription's, or none when it has none")

// joinSharedLocked makes c a receiver of the shared subscription to
// fan-out node n that its link names, made when there is none with
// c's filters (a new one counts in Options.MaxQueues, as a node). A
// subscription with other filters refuses c while it has receivers,
// and is replaced by a new one when it has none (appending to wake the
// connections its removal wakes).
func (b *Broker) joinSharedLocked(c *consumer, n *node, src *frame.Source, wake []*conn) ([]*conn, *engine.Error) {
	k := sharedKey(c.link, n, src)
	s := b.shared[k]
	if s != nil && !s.deleted && !sameFilters(s.filt, c.filt) {
		if len(s.consumers) > 0 {
			return wake, errSharedFilters
		}
		wake = b.removeLocked(s, wake)
	}
	if s == nil || s.deleted {
		if b.opts.MaxQueues > 0 && len(b.nodes)+len(b.shared) >= b.opts.MaxQueues {
			return wake, errTooManyQueues
		}
		s = &node{name: n.name, parent: n, subKey: k, filt: c.filt, subConn: c.conn.id,
			keep: src.Durable != frame.DurabilityNone && !k.volatile}
		s.s0, s.s1 = n.s0, n.s1
		if b.shared == nil {
			b.shared = make(map[subKey]*node)
		}
		b.shared[k] = s
		n.subs = append(n.subs, s)
	}
	c.filt = nil // the subscription's, applied as it is copied to
	c.n, c.q = s, &s.q
	s.consumers = append(s.consumers, c)
	return wake, nil
}

// leaveSharedLocked ends shared subscription s once its last receiver
// went: a volatile one, or a durable one whose receiver closed its link.
func (b *Broker) leaveSharedLocked(s *node, closed bool, wake []*conn) []*conn {
	if len(s.consumers) > 0 || (s.keep && !closed && !s.parent.deleted) {
		return wake
	}
	return b.removeLocked(s, wake)
}

// unlinkSharedLocked forgets removed subscription s, its totals added
// to its fan-out node's (its enqueued are the node's already).
func (b *Broker) unlinkSharedLocked(s *node) {
	if b.shared[s.subKey] == s {
		delete(b.shared, s.subKey)
	}
	p := s.parent
	sc := s.c
	sc.enqueued = 0
	p.c.add(&sc)
	for i, x := range p.subs {
		if x == s {
			p.subs = append(p.subs[:i], p.subs[i+1:]...)
			break
		}
	}
}
