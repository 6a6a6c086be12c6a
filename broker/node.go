package broker

import (
	"time"

	"github.com/amqpsax/amqpsax/message"
)

// This file is the node: an address's queue, or a fan-out address
// whose subscriptions each have a queue, and its policy — the room its
// bounds leave and the credit its producers get from it, where a
// message stored for it goes (its queue, or each subscription whose
// filters take it), which consumer a message wakes, and its
// statistics. Its messages' lifetimes (expiry, dead-lettering,
// priority, scheduled delivery) are in lifetime.go, its shared
// subscriptions in shared.go; the broker registers and removes nodes
// (broker.go).

// node is a queue, or a fan-out address whose consumers each have a
// queue of their own (consumer.own). Under the broker's lock.
type node struct {
	name      string
	fanout    bool
	dynamic   bool
	owner     *consumer // the dynamic source's link, or nil
	ownerP    *producer // the dynamic target's link, or nil
	ownerC    *conn     // a dynamic node's connection: its only consumers'
	maker     *made     // the count of nodes of the connection that made it
	account   *account  // the account that made it, likewise
	deleted   bool
	q         queue
	consumers []*consumer
	detached  []*consumer // durable subscriptions kept while detached (durable_sub.go)
	browsing  int         // consumers that browse it (consumer.browse)
	// A fan-out node's shared subscriptions, and a shared
	// subscription's fan-out node, name, filters, and whether it stays
	// without receivers (shared.go).
	subs      []*node
	parent    *node
	subKey    subKey
	filt      *sourceFilter
	subConn   uint64 // the connection of the receiver that made it, for no-local
	keep      bool
	producers int
	blocked   []*producer // waiting for credit
	lastSize  int         // of the last message stored, to turn room in bytes into credit
	txnBytes  int64       // of the messages open transactions hold for it (txn.go)
	txnN      int
	// deadLetter is the address its dead-lettered messages go to, nil
	// for none (Options.DeadLetterAddress, DeadLetterAddresses).
	deadLetter []byte
	c          counters
	s0, s1     sample
}

// fullLocked reports that q is at a bound.
func (b *Broker) fullLocked(q *queue) bool {
	return (b.opts.MaxMessages > 0 && q.len()+q.unsettled+q.sched >= b.opts.MaxMessages) ||
		(b.opts.MaxBytes > 0 && q.bytes+q.schedBytes >= b.opts.MaxBytes)
}

// roomLocked returns the messages q has room for, by its bounds and the
// size of the last message stored, at most limit.
func (b *Broker) roomLocked(q *queue, size int, limit uint32) uint32 {
	room := int64(limit)
	if b.opts.MaxMessages > 0 {
		room = min(room, int64(b.opts.MaxMessages-q.len()-q.unsettled-q.sched))
	}
	if b.opts.MaxBytes > 0 {
		if size == 0 {
			size = 1024 // nothing stored yet: a guess
		}
		room = min(room, (b.opts.MaxBytes-q.bytes-q.schedBytes)/int64(max(size, 64)))
	}
	return uint32(max(room, 0))
}

// creditLocked returns the credit a producer to n is to have: what the
// fullest of its queues has room for, at most the broker's Credit; 0
// when one is full.
func (b *Broker) creditLocked(n *node) uint32 {
	if b.opts.RejectWhenFull {
		return b.credit
	}
	limit := b.memCreditLocked(n, b.credit)
	if limit == 0 {
		return 0
	}
	if !n.fanout {
		if b.fullLocked(&n.q) {
			return 0
		}
		return max(b.roomLocked(&n.q, n.lastSize, limit), 1)
	}
	credit := limit
	if n.q.sched > 0 { // scheduled for it, not yet copied to the subscriptions
		if b.fullLocked(&n.q) {
			return 0
		}
		credit = min(credit, max(b.roomLocked(&n.q, n.lastSize, limit), 1))
	}
	for _, c := range n.consumers {
		if b.fullLocked(c.q) {
			return 0
		}
		credit = min(credit, max(b.roomLocked(c.q, n.lastSize, limit), 1))
	}
	for _, s := range n.subs {
		if len(s.consumers) == 0 {
			continue // kept with no receiver: copies past its bound are dropped
		}
		if b.fullLocked(&s.q) {
			return 0
		}
		credit = min(credit, max(b.roomLocked(&s.q, n.lastSize, limit), 1))
	}
	return credit
}

// resumableLocked reports that n's producers may have credit again: its
// queues are below 7/8 of their bounds (so that a queue at its bound
// does not wake its producers for every message taken).
func (b *Broker) resumableLocked(n *node) bool {
	below := func(q *queue) bool {
		return (b.opts.MaxMessages <= 0 || q.len()+q.unsettled+q.sched <= b.opts.MaxMessages-max(b.opts.MaxMessages/8, 1)) &&
			(b.opts.MaxBytes <= 0 || q.bytes+q.schedBytes <= b.opts.MaxBytes-b.opts.MaxBytes/8)
	}
	if !n.fanout || !below(&n.q) {
		return below(&n.q)
	}
	for _, c := range n.consumers {
		if !below(c.q) {
			return false
		}
	}
	for _, s := range n.subs {
		if len(s.consumers) > 0 && !below(&s.q) {
			return false
		}
	}
	return true
}

// unblockLocked hands the producers waiting on n to wake when n has room
// again (or is gone), appending their connections to wake. With none
// waiting it is a test, inlined (it runs for every message settled).
func (b *Broker) unblockLocked(n *node, wake []*conn) []*conn {
	if len(n.blocked)+len(b.memWait) == 0 && n.parent == nil {
		return wake
	}
	return b.unblockSomeLocked(n, wake)
}

// unblockSomeLocked is unblockLocked when a producer may wait.
func (b *Broker) unblockSomeLocked(n *node, wake []*conn) []*conn {
	if n.parent != nil { // a shared subscription's room is its fan-out node's
		n = n.parent
	}
	if len(b.memWait) > 0 {
		wake = b.memWakeLocked(wake)
	}
	if len(n.blocked) == 0 || (!n.deleted && !b.resumableLocked(n)) {
		return wake
	}
	for _, p := range n.blocked {
		p.blocked = false
	}
	n.blocked, wake = resumeAll(n.blocked, wake)
	return wake
}

// fullestLocked returns the queue of n nearest its bound: n's own, or a
// subscription's.
func (b *Broker) fullestLocked(n *node) *queue {
	q := &n.q
	for _, c := range n.consumers {
		if c.own != nil && (c.own.bytes > q.bytes || c.own.len()+c.own.unsettled > q.len()+q.unsettled) {
			q = c.own
		}
	}
	for _, s := range n.subs {
		if s.q.bytes > q.bytes || s.q.len()+s.q.unsettled > q.len()+q.unsettled {
			q = &s.q
		}
	}
	return q
}

// enqueueLocked stores a copy of message in (scanned), sent on the
// connection whose id is from, on n: on its queue, or on each
// consumer's whose filters take it for a fan-out node; held until its
// time when it is scheduled, expired at once when it came expired
// (lifetime.go). It appends the connections of consumers to wake.
func (b *Broker) enqueueLocked(n *node, in *incoming, from uint64, wake []*conn) []*conn {
	payload := in.payload
	n.lastSize = len(payload)
	if n.fanout && len(n.consumers) == 0 && len(n.detached) == 0 && len(n.subs) == 0 {
		n.c.dropped++
		return wake
	}
	wake = b.dueNowLocked(wake)
	var m msg
	var at, ttl, delay int64
	if in.later { // the body first: nothing lifeOf reads
		m.prio = defaultPriority
	} else {
		m, at, ttl, delay = lifeOf(in)
	}
	b.seq++
	m.buf, m.seq = b.pool.get(payload), b.seq
	m.buf.from = from
	n.c.enqueued++
	if ttl > 0 || delay > 0 || m.expiry != 0 || at != 0 { // the clock is read for these only
		now := b.nowMS()
		at = m.finish(at, ttl, delay, now)
		switch {
		case m.expired(now):
			n.q.bytes += int64(m.size()) // expireMsgLocked takes it off
			return b.expireMsgLocked(n, &n.q, m, wake)
		case at != 0:
			b.scheduleLocked(n, m, at)
			return wake
		}
	}
	if !n.fanout && n.q.r.timed {
		// Messages that expired at the front go, two a message at most,
		// so that a queue nobody consumes does not keep them all.
		wake = b.sweepLocked(n, &n.q, 2, wake)
	}
	if !n.fanout { // queueLocked written out (too large to inline): a call less
		n.q.r.pushBack(m)
		n.q.bytes += int64(m.size())
		wake = b.wakeOneLocked(n, &m, wake)
		if n.browsing > 0 {
			wake = b.wakeBrowsersLocked(n, wake)
		}
		return wake
	}
	return b.placeLocked(n, m, in, wake)
}

// placeLocked puts m, stored for n, where consumers take it: on n's
// queue, or on each subscription's whose filters take it for a fan-out
// node, its shared subscriptions' included (one with none
// drops it: enqueueLocked counts that). in is the message as it came in
// (its sections, scanned already), or nil: m's buffer is scanned for
// the first filter.
func (b *Broker) placeLocked(n *node, m msg, in *incoming, wake []*conn) []*conn {
	bf := m.buf
	if !n.fanout {
		return b.queueLocked(n, &m, wake)
	}
	bf.refs = 1 // held while the copies are made
	if len(n.detached) > 0 {
		bf.refs += b.copyDetachedLocked(n, m) // durable_sub.go
	}
	var scanned message.Sections // for the first filter, when in is nil
	secs, scans := (*message.Sections)(nil), true
	pass := func(f *sourceFilter, own uint64) bool {
		if secs == nil { // the first filter: the sections, scanned once
			var err error
			if in != nil {
				secs, err = in.sections()
			} else {
				scanned, err = message.Scan(bf.b)
				secs = &scanned
			}
			scans = err == nil
		}
		if !scans || !f.match(secs, bf.from, own) {
			n.c.filtered++
			return false
		}
		return true
	}
	for _, c := range n.consumers {
		if c.filt != nil && !pass(c.filt, c.conn.id) {
			continue
		}
		bf.refs++
		c.q.r.pushBack(m)
		c.q.bytes += int64(m.size())
		if c.hungry {
			c.hungry = false
			wake = append(wake, c.conn)
		}
	}
	for _, s := range n.subs { // shared.go
		if s.filt != nil && !pass(s.filt, s.subConn) {
			continue
		}
		if len(s.consumers) == 0 && b.fullLocked(&s.q) {
			n.c.dropped++ // kept with no receiver: it holds no producer back
			continue
		}
		bf.refs++
		s.c.enqueued++
		s.q.r.pushBack(m)
		s.q.bytes += int64(m.size())
		wake = b.wakeOneLocked(s, &m, wake)
	}
	b.pool.put(bf) // the hold: recycled at once when no one took a copy
	return wake
}

// queueLocked puts m on queue node n and wakes a consumer that may
// take it (and its browsers that wait).
func (b *Broker) queueLocked(n *node, m *msg, wake []*conn) []*conn {
	n.q.r.pushBack(*m)
	n.q.bytes += int64(m.size())
	wake = b.wakeOneLocked(n, m, wake)
	if n.browsing > 0 {
		wake = b.wakeBrowsersLocked(n, wake)
	}
	return wake
}

// wakeBrowsersLocked wakes the browsers of queue node n that wait for
// messages.
func (b *Broker) wakeBrowsersLocked(n *node, wake []*conn) []*conn {
	for _, c := range n.consumers {
		if c.browse && c.hungry {
			c.hungry = false
			wake = append(wake, c.conn)
		}
	}
	return wake
}

// wakeOneLocked wakes the consumer of queue node n that has waited
// longest for messages and may take m (those that may not stay ready,
// behind it). Each consumer it looks at is either woken or taken off
// the ready ring, but for those m does not suit.
func (b *Broker) wakeOneLocked(n *node, m *msg, wake []*conn) []*conn {
	for tries := n.q.ready.n; tries > 0; tries-- {
		c := n.q.ready.pop()
		b.visited++
		c.inReady = false
		if !c.hungry || c.gone || c.n != n {
			if c.gone {
				n.q.stale--
			}
			continue
		}
		if !c.mayTake(m) {
			c.inReady = true
			n.q.ready.push(c)
			continue
		}
		c.hungry = false
		return append(wake, c.conn)
	}
	return wake
}

// wakeAllLocked wakes every consumer of n that waits for messages.
func (b *Broker) wakeAllLocked(n *node, wake []*conn) []*conn {
	for _, c := range n.consumers {
		if c.hungry {
			c.hungry = false
			wake = append(wake, c.conn)
		}
	}
	return wake
}

func (b *Broker) dropLocked(n *node, q *queue) {
	for q.len() > 0 {
		m := q.r.remove(0)
		q.bytes -= int64(m.size())
		b.pool.put(m.buf)
		n.c.dropped++
	}
}

// sweepAllLocked makes visible the scheduled messages whose time has
// come and expires the messages at the front of n's queues that have
// expired, before statistics are read; it wakes the consumers that may
// take what came.
func (b *Broker) sweepAllLocked(n *node, wake []*conn) []*conn {
	wake = b.dueNowLocked(wake)
	if n == nil {
		return wake
	}
	if !n.fanout {
		return b.sweepLocked(n, &n.q, -1, wake)
	}
	for _, c := range n.consumers {
		wake = b.sweepLocked(n, c.q, -1, wake)
	}
	return wake
}

func (b *Broker) statsLocked(n *node, now time.Time) QueueStats {
	s := QueueStats{Name: n.name, Fanout: n.fanout, Dynamic: n.dynamic, Producers: n.producers,
		Blocked: len(n.blocked), Consumers: len(n.consumers), Detached: len(n.detached), Refused: n.c.refused,
		Enqueued: n.c.enqueued, Delivered: n.c.delivered, Accepted: n.c.acked, Rejected: n.c.rejected,
		Released: n.c.released, Modified: n.c.modified, Redelivered: n.c.redelivered, Dropped: n.c.dropped,
		Expired: n.c.expired, DeadLettered: n.c.deadLettered, Scheduled: n.q.sched, Filtered: n.c.filtered}
	if n.fanout {
		for _, cs := range [2][]*consumer{n.consumers, n.detached} {
			for _, c := range cs {
				s.Depth += c.q.len()
				s.Bytes += c.q.bytes
				s.Unsettled += c.q.unsettled
			}
		}
		for _, sub := range n.subs {
			s.Depth += sub.q.len()
			s.Bytes += sub.q.bytes
			s.Unsettled += sub.q.unsettled
			s.Consumers += len(sub.consumers)
			s.Delivered += sub.c.delivered
			s.Accepted += sub.c.acked
			s.Rejected += sub.c.rejected
			s.Released += sub.c.released
			s.Modified += sub.c.modified
			s.Redelivered += sub.c.redelivered
			s.Filtered += sub.c.filtered
		}
	} else {
		s.Depth, s.Bytes, s.Unsettled = n.q.len(), n.q.bytes, n.q.unsettled
	}
	s.Bytes += n.q.schedBytes
	if now.Sub(n.s1.at) >= time.Second {
		n.s0, n.s1 = n.s1, sample{at: now, enqueued: n.c.enqueued, delivered: n.c.delivered}
	}
	if dt := now.Sub(n.s0.at).Seconds(); dt > 0 {
		s.EnqueueRate = float64(n.c.enqueued-n.s0.enqueued) / dt
		s.DeliverRate = float64(n.c.delivered-n.s0.delivered) / dt
	}
	return s
}
