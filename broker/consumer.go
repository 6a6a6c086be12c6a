package broker

import (
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
)

// This file is the consumer: the state of a link the broker sends on,
// and what it does under the broker's lock — waiting for messages on
// its queue's ready ring, taking and sending them (dispatch), browsing a
// queue, and the outcomes the peer gives them (settled, put back,
// modified, dead-lettered).

// consumer is a link the broker sends on: the peer receives from a node.
type consumer struct {
	link    *engine.Link
	conn    *conn
	n       *node
	q       *queue // &n.q, or own
	own     *queue // its subscription to a fan-out node
	settled bool   // snd-settle-mode settled: at most once
	maxSize uint64 // the peer's max-message-size, 0 for none
	gone    bool   // detached (the connection's goroutine)
	// filt is its source's filters (filter.go), nil for none; browse:
	// its source's distribution-mode is copy on a queue node, whose
	// messages it is sent and never takes.
	filt   *sourceFilter
	browse bool
	// Under the broker's lock, for a selective consumer or a browser of
	// a queue node: every message of the queue whose seq is at most
	// seen has been looked at (and left, or sent to a browser), as of
	// the queue's epoch (takeLocked, browseLocked).
	seen, epoch uint64

	// Under the broker's lock:
	hungry   bool                // credit left and nothing to send: wake it for a new message
	inReady  bool                // in its node's ready ring (hungryLocked)
	kill     bool                // its node was removed: detach it
	excluded map[uint64]struct{} // messages it called undeliverable-here

	// The connection's goroutine's:
	unacked sent // sent unsettled, by delivery-id

	// A durable subscription's (durable_sub.go): its state, what it had
	// acquired when it detached (under the broker's lock while it is
	// detached), what its re-attach is to resume, and the tag being
	// sent.
	dur      *durable
	acquired []msg
	resume   []msg
	tag      [8]byte
	// The copies made for it while detached (in own), counted in the
	// broker's bound of them all (under the broker's lock).
	keptN     int
	keptBytes int64
}

// mayTake reports that c may be sent m: not above its max-message-size,
// not called undeliverable-here by it, not left by its filters. Under
// the broker's lock.
func (c *consumer) mayTake(m *msg) bool {
	return c.fits(m) && (c.own != nil || c.passes(m))
}

// fits reports that m is not above c's max-message-size and not called
// undeliverable-here by c.
func (c *consumer) fits(m *msg) bool {
	if c.maxSize > 0 && uint64(m.size()) > c.maxSize {
		return false
	}
	if len(c.excluded) > 0 {
		if _, ex := c.excluded[m.seq]; ex {
			return false
		}
	}
	return true
}

// passes reports that c's filters take m (a message that does not scan
// passes none).
func (c *consumer) passes(m *msg) bool {
	if c.filt == nil {
		return true
	}
	secs, err := message.Scan(m.buf.b)
	return err == nil && c.filt.match(&secs, m.buf.from, c.conn.id)
}

// hungryLocked marks c as waiting for messages (or not): a consumer of
// a queue node goes to the back of its ready ring.
func (b *Broker) hungryLocked(c *consumer, hungry bool) {
	c.hungry = hungry
	if hungry && !c.inReady && c.own == nil {
		c.inReady = true
		c.n.q.ready.push(c)
	}
}

// unreadyLocked is a consumer's leaving of its node: its entry in the
// ready ring is stale, and the ring is compacted when half of it is.
func (b *Broker) unreadyLocked(c *consumer) {
	c.hungry = false
	n := c.n
	if !c.inReady {
		return
	}
	n.q.stale++
	if n.q.stale*2 <= n.q.ready.n {
		return
	}
	for range n.q.ready.n {
		x := n.q.ready.pop()
		if x.gone || x == c || x.n != n {
			x.inReady = false
			continue
		}
		n.q.ready.push(x)
	}
	n.q.stale = 0
}

// dispatch sends c the messages its credit allows, a batch at a time. It
// runs on c's connection's goroutine.
func (b *Broker) dispatch(c *consumer) {
	l := c.link
	batch, ids := &c.conn.batch, &c.conn.ids
	if c.browse {
		b.browse(c)
		return
	}
	if len(c.resume) > 0 && !b.resumeSome(c) { // durable_sub.go: its re-attach's first
		return
	}
	for !c.gone {
		credit := l.Credit()
		want := min(int(credit), len(batch))
		var wb [8]*conn
		wake := wb[:0]
		b.mu.Lock()
		if c.kill {
			c.gone = true
			b.mu.Unlock()
			l.Detach(engine.NewError(frame.CondResourceDeleted, "node "+c.n.name+" was removed"))
			return
		}
		if want == 0 {
			// No credit (or none left after a drain): a wake meant for
			// it goes to another consumer that waits.
			c.hungry = false
			if c.own == nil && c.q.len() > 0 {
				wake = b.wakeOneLocked(c.n, c.q.r.front(), wake)
			}
			b.mu.Unlock()
			b.wake(c.conn, wake)
			return
		}
		wake = b.dueNowLocked(wake)
		k, wake := b.takeLocked(c, batch[:want], wake)
		b.hungryLocked(c, k < want)
		if k > 0 || len(wake) > 0 {
			wake = b.unblockLocked(c.n, wake)
		}
		b.mu.Unlock()
		sent := 0
		for sent < k {
			var tag []byte
			if c.dur != nil {
				tag = c.tagOf(batch[sent]) // durable_sub.go
			}
			id, err := l.Send(tag, batch[sent].buf.b, c.settled)
			if err != nil {
				break // ErrOutputFull: OnWritable; ErrNoWindow, ErrBusy: OnFlow
			}
			ids[sent] = id
			sent++
			if b.sent != nil {
				b.sent(c)
			}
		}
		b.mu.Lock()
		n := c.n
		for i := range sent {
			m := batch[i]
			n.c.delivered++
			if m.redelivered {
				n.c.redelivered++
			}
			if c.settled {
				b.doneLocked(c, m)
			} else {
				c.unacked.put(ids[i], m)
			}
		}
		for i := k - 1; i >= sent; i-- {
			c.q.putBack(batch[i])
			c.q.unsettled--
		}
		if sent < k {
			c.hungry = false
		}
		clear(batch[:k])
		b.mu.Unlock()
		b.wake(c.conn, wake)
		if sent < k || k < want {
			return
		}
	}
}

// takeLocked moves up to len(out) messages c may take from its queue to
// out: the highest priority first, the oldest first within one,
// skipping those above its max-message-size, those it called
// undeliverable-here, and those its filters leave for other consumers
// (counted as filtered). Those it finds expired are taken out of the
// queue and expired (lifetime.go): each message is looked at for expiry
// once it is at the front, never by a scan of the queue; the broker's
// clock is read once, and only for a message that has an expiry.
//
// A selective consumer of a queue node does not look at a message
// twice while the queue keeps its order (one priority, nothing put
// back before an older message): it resumes after the last one it
// looked at (seen, found by a binary search), so a queue deep in
// messages it does not take costs it O(log n) a dispatch, plus the new
// messages. A message put back at the queue's front (released,
// modified, left by a consumer that went, or not sent for a full
// output) makes each selective consumer look at the queue from its
// front once more, at its next dispatch; a queue of several priorities
// is looked at from its front at each.
func (b *Broker) takeLocked(c *consumer, out []msg, wake []*conn) (int, []*conn) {
	q := c.q
	k := 0
	now := int64(-1)
	selective := c.filt != nil && c.own == nil
	if !selective {
		// The front, while c may take it: a consumer with no filters of
		// its own looks further only past a message it may not take.
		for k < len(out) && q.len() > 0 {
			f := q.r.front()
			if f.expiry != 0 {
				if now < 0 {
					now = b.nowMS()
				}
				if f.expired(now) {
					wake = b.expireMsgLocked(c.n, q, q.r.popFront(), wake)
					continue
				}
			}
			if !c.fits(f) {
				break
			}
			out[k] = q.r.popFront()
			k++
		}
		if k == len(out) || q.len() == 0 {
			q.unsettled += k
			return k, wake
		}
	}
	ordered := q.ordered()
	i := 0
	if selective && c.epoch == q.r.epoch && ordered {
		i = q.after(c.seen)
	} else if selective {
		c.seen = 0
	}
	for k < len(out) && i < q.len() {
		mp := q.r.at(i)
		if mp.expiry != 0 {
			if now < 0 {
				now = b.nowMS()
			}
			if mp.expired(now) {
				wake = b.expireMsgLocked(c.n, q, q.r.remove(i), wake)
				continue
			}
		}
		if selective && ordered {
			c.seen = mp.seq
		}
		if !c.fits(mp) {
			i++
			continue
		}
		if selective && !c.passes(mp) {
			c.n.c.filtered++
			i++
			continue
		}
		out[k] = q.r.remove(i)
		k++
	}
	c.epoch = q.r.epoch
	q.unsettled += k
	return k, wake
}

// browse sends browser c the messages of its queue node it has not been
// sent, oldest first, while it has credit, taking none (part 3 §3.5.3,
// distribution-mode copy): each is sent from the queue's own buffer,
// which its delivery holds a reference to until the browser settles it
// or goes; its outcome changes nothing, and its header (delivery-count)
// is as it is. It runs on c's connection's goroutine.
func (b *Broker) browse(c *consumer) {
	l := c.link
	batch, ids := &c.conn.batch, &c.conn.ids
	for !c.gone {
		want := min(int(l.Credit()), len(batch))
		b.mu.Lock()
		if c.kill {
			b.mu.Unlock()
			c.gone = true
			l.Detach(engine.NewError(frame.CondResourceDeleted, "node "+c.n.name+" was removed"))
			return
		}
		if want == 0 {
			c.hungry = false
			b.mu.Unlock()
			return
		}
		k := b.browseLocked(c, batch[:want])
		c.hungry = k < want
		b.mu.Unlock()
		sent := 0
		for sent < k {
			id, err := l.Send(nil, batch[sent].buf.b, c.settled)
			if err != nil {
				break
			}
			ids[sent] = id
			sent++
			if b.sent != nil {
				b.sent(c)
			}
		}
		b.mu.Lock()
		for i := range sent {
			if c.settled {
				b.pool.put(batch[i].buf)
			} else {
				c.unacked.put(ids[i], batch[i])
			}
		}
		if sent < k {
			c.hungry = false
			c.seen = batch[sent].seq - 1 // sent again at its next dispatch
			for i := sent; i < k; i++ {
				b.pool.put(batch[i].buf)
			}
		}
		clear(batch[:k])
		b.mu.Unlock()
		if sent < k || k < want {
			return
		}
	}
}

// browseLocked copies to out up to len(out) messages of browser c's
// queue it has not been sent (seq above seen), in the order of seq,
// each with one more reference to its buffer. While the queue is
// ordered that is a binary search and the messages after; else (several
// priorities, a message put back before an older one) a scan of the
// queue for each.
func (b *Broker) browseLocked(c *consumer, out []msg) int {
	q := c.q
	k := 0
	take := func(m msg) {
		c.seen = m.seq
		if c.mayTake(&m) {
			m.buf.refs++
			out[k] = m
			k++
		}
	}
	if q.ordered() {
		for i := q.after(c.seen); k < len(out) && i < q.len(); i++ {
			take(*q.r.at(i))
		}
		return k
	}
	for k < len(out) {
		best := -1
		for i := range q.len() {
			if s := q.r.at(i).seq; s > c.seen && (best < 0 || s < q.r.at(best).seq) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		take(*q.r.at(best))
	}
	return k
}

// doneLocked forgets a message sent to c: settled, accepted or rejected.
func (b *Broker) doneLocked(c *consumer, m msg) {
	c.q.unsettled--
	c.q.bytes -= int64(m.size())
	b.pool.put(m.buf)
}

// settleLocked applies the outcome st a consumer gave m (part 3 §3.4):
// accepted and rejected settle it; released puts it back as it was;
// modified puts it back with delivery-failed counted in its header and,
// when undeliverable-here, for other consumers only; none (settled with
// no outcome) is the source's default outcome, which the broker takes
// as accepted.
func (b *Broker) settleLocked(c *consumer, m msg, st *frame.DeliveryState, wake []*conn) []*conn {
	switch st.Type {
	case frame.StateRejected:
		c.n.c.rejected++
		if c.n.deadLetter != nil {
			reason := st.Error.Condition
			if len(reason) == 0 {
				reason = reasonRejected
			}
			wake = b.deadLetterLocked(c.n, m, c.n.deadLetter, reason, st.Error.Description, wake)
		}
	case frame.StateReleased:
		c.n.c.released++
		wake = b.requeueLocked(c, m, false, false, wake)
		return append(wake, c.conn) // it may take another message
	case frame.StateModified:
		c.n.c.modified++
		wake = b.modifyLocked(c, m, st.DeliveryFailed, st.UndeliverableHere, st.MessageAnnotations, wake)
		return append(wake, c.conn)
	default:
		c.n.c.acked++
	}
	b.doneLocked(c, m)
	return b.unblockLocked(c.n, wake)
}

// requeueLocked puts m back at the front of c's queue, to be sent again:
// with its header's delivery-count one up when failed, never to c again
// when undeliverable.
func (b *Broker) requeueLocked(c *consumer, m msg, failed, undeliverable bool, wake []*conn) []*conn {
	return b.modifyLocked(c, m, failed, undeliverable, nil, wake)
}

// modifyLocked is requeueLocked with the message annotations ann (a
// modified outcome's, part 3 §3.4.5) merged into m's: its entries
// replace those of the same key, or are added. A failed delivery that
// takes its delivery-count to Options.MaxDeliveryCount dead-letters it
// instead (lifetime.go).
func (b *Broker) modifyLocked(c *consumer, m msg, failed, undeliverable bool, ann frame.Map, wake []*conn) []*conn {
	q := c.q
	q.unsettled--
	if c.n.deleted || (undeliverable && c.own != nil) {
		q.bytes -= int64(m.size())
		b.pool.put(m.buf)
		c.n.c.dropped++
		return wake
	}
	if failed || len(ann) > 0 {
		before := m.size()
		b.rewriteLocked(&m, failed, ann)
		q.bytes += int64(m.size() - before)
	}
	if failed && b.opts.MaxDeliveryCount > 0 && int64(m.count) >= int64(b.opts.MaxDeliveryCount) {
		q.bytes -= int64(m.size())
		if c.n.deadLetter != nil {
			wake = b.deadLetterLocked(c.n, m, c.n.deadLetter, reasonMaxDeliveryCount, nil, wake)
		} else {
			c.n.c.dropped++
		}
		b.pool.put(m.buf)
		return b.unblockLocked(c.n, wake)
	}
	if undeliverable {
		if c.excluded == nil {
			c.excluded = make(map[uint64]struct{})
		}
		c.excluded[m.seq] = struct{}{}
	}
	m.redelivered = true
	q.putBack(m)
	if c.own != nil {
		return wake
	}
	return b.wakeOneLocked(c.n, &m, wake)
}
