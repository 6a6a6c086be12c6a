package broker

import (
	"encoding/binary"
	"slices"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// This file is durable subscriptions: a consumer whose source is durable
// (part 3 §3.5.5) keeps its subscription through a detach without
// closing or a lost connection, until its expiry policy ends it
// (durable.go keeps and expires the state).
//
// While it is detached, a fan-out node keeps copying messages to its
// subscription (bounded as any: a copy past MaxMessages or MaxBytes is
// dropped for it, and counted, rather than holding the producers back
// for a consumer that may never come back). With unsettled-state, the
// messages it had been sent and had not settled stay acquired by it,
// not released to others; with configuration alone they go back to the
// front of its queue. At the expiry its acquired messages go back to
// their queue, as those of any consumer that goes, and its subscription
// is dropped.
//
// A durable consumer's delivery-tags are the broker's numbers of its
// messages (8 bytes, big-endian), so that they name the same message
// across its attaches. On a re-attach of the name the broker's answer
// lists what it had acquired; each one the consumer's attach lists with
// an outcome is settled by a resumed transfer and the outcome applied,
// each it lists without one is sent again resumed, and each it does not
// list goes back to the front of the queue, to be sent as a new
// delivery (engine/recover.go).

// tagOf returns the delivery-tag of m for a durable consumer, in c.tag.
func (c *consumer) tagOf(m msg) []byte {
	binary.BigEndian.PutUint64(c.tag[:], m.seq)
	return c.tag[:]
}

// recoverConsumer returns the tags of what a durable consumer acquired
// before it detached: the unsettled map of the answer to its re-attach.
func (d *durable) recoverConsumer() []engine.Unsettled {
	c := d.c
	if c == nil || !c.gone {
		return nil
	}
	out := make([]engine.Unsettled, len(c.acquired))
	for i, m := range c.acquired {
		out[i].Tag = binary.BigEndian.AppendUint64(nil, m.seq)
	}
	return out
}

// reattachConsumer is OnLinkAttach's hook for a consumer's link with a
// durable source: the subscription the broker kept for its name,
// attached again to l, or nil (none kept, or one of another address,
// which ends).
func (b *Broker) reattachConsumer(l *engine.Link, cn *conn, key durKey, addr []byte) *consumer {
	var wb [8]*conn
	wake := wb[:0]
	b.mu.Lock()
	d := b.durables[key]
	if d == nil || d.c == nil || !d.c.gone {
		b.mu.Unlock()
		return nil
	}
	c := d.c
	if c.n.deleted || c.n.name != string(addr) {
		wake = b.endSubLocked(d, wake)
		d.c = nil
		b.mu.Unlock()
		b.wake(nil, wake)
		return nil
	}
	n := c.n
	if i := slices.Index(n.detached, c); i >= 0 {
		n.detached = slices.Delete(n.detached, i, i+1)
	}
	b.unkeepLocked(c)
	c.link, c.conn, c.gone, c.hungry = l, cn, false, false
	c.settled = l.SndSettleMode() == frame.SndSettled
	c.maxSize = l.RemoteAttach().MaxMessageSize.Or(0)
	c.unacked = sent{}
	c.resume = c.resume[:0]
	for i := len(c.acquired) - 1; i >= 0; i-- {
		m := c.acquired[i]
		if a := l.ResumeAction(c.tagOf(m)); a == engine.ResumeSettle || a == engine.ResumeResend {
			c.resume = append(c.resume, m)
			continue
		}
		wake = b.requeueLocked(c, m, false, false, wake) // the consumer never had it: a new delivery
	}
	slices.Reverse(c.resume)
	clear(c.acquired)
	c.acquired = c.acquired[:0]
	n.consumers = append(n.consumers, c)
	b.mu.Unlock()
	b.wake(nil, wake)
	return c
}

// resumeSome sends, as credit allows, what a re-attached durable
// consumer's attach listed: those with an outcome are settled by a
// resumed transfer and the outcome applied; the others are sent again,
// resumed. It reports whether none is left.
func (b *Broker) resumeSome(c *consumer) bool {
	l := c.link
	for len(c.resume) > 0 && l.Credit() > 0 {
		m := c.resume[0]
		tag := c.tagOf(m)
		settle := l.ResumeAction(tag) == engine.ResumeSettle
		st, _ := l.RemoteUnsettled(tag)
		var wb [8]*conn
		wake := wb[:0]
		if settle {
			if _, err := l.SendResume(tag, nil, true); err != nil {
				return false
			}
			b.mu.Lock()
			wake = b.settleLocked(c, m, &st, wake)
			b.mu.Unlock()
		} else {
			id, err := l.SendResume(tag, m.buf.b, c.settled)
			if err != nil {
				return false
			}
			b.mu.Lock()
			c.n.c.delivered++
			c.n.c.redelivered++
			if c.settled {
				b.doneLocked(c, m)
			} else {
				c.unacked.put(id, m)
			}
			b.mu.Unlock()
		}
		c.resume[0] = msg{}
		c.resume = c.resume[1:]
		b.wake(c.conn, wake)
	}
	return len(c.resume) == 0
}

// detachSubLocked keeps the subscription of durable consumer c that
// detached without closing, with what it acquired (oldest first): kept
// acquired with unsettled-state, back at the front of its queue
// otherwise.
func (b *Broker) detachSubLocked(c *consumer, acquired []msg, wake []*conn) []*conn {
	d := c.dur
	if d.unsettled {
		c.acquired = append(c.acquired[:0], acquired...)
	} else {
		for i := len(acquired) - 1; i >= 0; i-- {
			wake = b.requeueLocked(c, acquired[i], true, false, wake)
		}
	}
	for i := len(c.resume) - 1; i >= 0; i-- { // listed at its last attach and not resolved yet
		c.acquired = slices.Insert(c.acquired, 0, c.resume[i])
	}
	clear(c.resume)
	c.resume = c.resume[:0]
	c.unacked = sent{}
	n := c.n
	n.detached = append(n.detached, c)
	wake = b.wakeAllLocked(n, wake) // what it left is for the others
	return b.detachedLocked(d, wake)
}

// endSubLocked ends the subscription of the durable consumer of d, when
// it is detached: its acquired messages go back to their queue (with
// delivery-count one up), its own queue of a fan-out node is dropped.
func (b *Broker) endSubLocked(d *durable, wake []*conn) []*conn {
	c := d.c
	if c == nil {
		return wake
	}
	c.dur = nil
	if !c.gone {
		return wake // attached: it goes on, not durable any more
	}
	n := c.n
	if i := slices.Index(n.detached, c); i >= 0 {
		n.detached = slices.Delete(n.detached, i, i+1)
	}
	return b.releaseLocked(c, c.acquired, wake)
}

// releaseLocked is what becomes of a consumer that went: the messages
// it had acquired (oldest first) go back to the front of its queue with
// delivery-count one up (they may have been seen), its subscription to
// a fan-out node is dropped, a dynamic node it made is removed.
func (b *Broker) releaseLocked(c *consumer, acquired []msg, wake []*conn) []*conn {
	n := c.n
	b.unkeepLocked(c)
	for i := len(acquired) - 1; i >= 0; i-- {
		wake = b.requeueLocked(c, acquired[i], true, false, wake)
	}
	clear(acquired)
	c.acquired, c.unacked = nil, sent{}
	if c.own != nil {
		b.dropLocked(n, c.own)
		wake = b.unblockLocked(n, wake) // it may have been the fullest
	}
	if n.owner == c {
		return b.removeLocked(n, wake)
	}
	wake = b.wakeAllLocked(n, wake)
	return b.autoDeleteLocked(n, wake)
}

// copyDetachedLocked gives each detached durable subscription of
// fan-out node n a copy of m, within its bounds and within those of the
// copies kept for every detached subscription together (a copy past
// them is dropped for it); it returns how many took one.
func (b *Broker) copyDetachedLocked(n *node, m msg) int32 {
	var k int32
	for _, c := range n.detached {
		if c.filt != nil && !c.passes(&m) {
			n.c.filtered++
			continue
		}
		if b.fullLocked(c.q) || b.keptFullLocked() {
			n.c.dropped++
			continue
		}
		c.q.r.pushBack(m)
		c.q.bytes += int64(m.size())
		c.keptN++
		c.keptBytes += int64(m.size())
		b.keptCopies++
		b.keptBytes += int64(m.size())
		k++
	}
	return k
}

// keptFullLocked reports that the copies kept for detached durable
// subscriptions, all together, are at the bounds of one queue
// (MaxMessages, MaxBytes): however many subscriptions a peer leaves
// detached, what they keep is bounded, not their number times it.
func (b *Broker) keptFullLocked() bool {
	return (b.opts.MaxMessages > 0 && b.keptCopies >= b.opts.MaxMessages) ||
		(b.opts.MaxBytes > 0 && b.keptBytes >= b.opts.MaxBytes)
}

// unkeepLocked stops counting the copies made for c while it was
// detached: it is attached again, or its subscription ends.
func (b *Broker) unkeepLocked(c *consumer) {
	b.keptCopies -= c.keptN
	b.keptBytes -= c.keptBytes
	c.keptN, c.keptBytes = 0, 0
}
