package broker

import (
	"time"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/internal/wire"
	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/stream"
)

// This file is a message's lifetime: what the broker reads of it when it
// stores it (priority, time-to-live, scheduled delivery), its expiry,
// its dead-lettering, the scheduled messages held until their time, and
// the rewrite of a message given back with a modified outcome.

// The message annotations the broker reads (scheduled delivery) and
// writes (dead-lettering).
const (
	// AnnotationDeliveryTime is an absolute time (a timestamp, or ms
	// since the epoch as an integer) before which a message is not
	// delivered, as ActiveMQ Artemis reads it.
	AnnotationDeliveryTime = "x-opt-delivery-time"
	// AnnotationDeliveryDelay is a delay in ms from when the broker
	// received a message before which it is not delivered (Artemis).
	AnnotationDeliveryDelay = "x-opt-delivery-delay"
	// AnnotationScheduledEnqueueTime is Azure Service Bus's
	// AnnotationDeliveryTime: a timestamp.
	AnnotationScheduledEnqueueTime = "x-opt-scheduled-enqueue-time"
	// AnnotationDeadLetterReason is why a dead-lettered message was
	// moved (a string): the rejected outcome's error condition,
	// ReasonMaxDeliveryCount or ReasonExpired.
	AnnotationDeadLetterReason = "x-opt-deadletter-reason"
	// AnnotationDeadLetterDescription is the rejected outcome's error
	// description, when it had one (a string).
	AnnotationDeadLetterDescription = "x-opt-deadletter-description"
	// AnnotationOriginalAddress is the address of the node a
	// dead-lettered message was moved from (a string).
	AnnotationOriginalAddress = "x-opt-original-address"
)

// The reasons a message is dead-lettered for other than a rejected
// outcome (which gives its error condition, or "rejected" without one),
// as Azure Service Bus names them.
const (
	ReasonMaxDeliveryCount = "MaxDeliveryCountExceeded"
	ReasonExpired          = "TTLExpiredException"
	ReasonRejected         = "rejected"
)

var (
	reasonExpired          = []byte(ReasonExpired)
	reasonMaxDeliveryCount = []byte(ReasonMaxDeliveryCount)
	reasonRejected         = []byte(ReasonRejected)
	keyReason              = message.SymbolKey(AnnotationDeadLetterReason)
	keyDescription         = message.SymbolKey(AnnotationDeadLetterDescription)
	keyOrigin              = message.SymbolKey(AnnotationOriginalAddress)
)

// nowMS returns the broker's time in ms since the epoch: Options.Now's,
// or the system's.
func (b *Broker) nowMS() int64 { return b.now().UnixMilli() }

func (b *Broker) now() time.Time {
	if b.opts.Now != nil {
		return b.opts.Now()
	}
	return time.Now()
}

// lifeOf returns a msg with what the broker keeps of payload's lifetime:
// its priority (part 3 §3.2.1, 4 by default, above 9 taken as 9),
// delivery-count and expiry (the properties' absolute-expiry-time; a
// time of 0 is none, as ActiveMQ Artemis reads it); the time it is
// scheduled for (at: its message annotations' absolute times, 0 for
// none); and the durations from its receipt that complete them
// (finish): its header's ttl (0: none) and its delivery delay. It reads
// the sections before the body, as in's scan found them, and allocates
// nothing; a message that does not scan has the defaults.
func lifeOf(in *incoming) (m msg, at, ttl, delay int64) {
	m.prio = defaultPriority
	if in.err != nil {
		return m, 0, 0, 0
	}
	s := &in.secs
	if s.Header != nil {
		if h, err := message.ParseHeader(s.Header); err == nil {
			m.prio, m.count = min(h.Priority, levels-1), h.DeliveryCount
			if h.HasTTL {
				ttl = int64(h.TTL)
			}
		}
	}
	if s.Properties != nil {
		if t, ok := absoluteExpiry(s.Properties); ok && t > 0 {
			m.expiry = t
		}
	}
	if s.MessageAnnotations != nil {
		if v, err := message.Lookup(s.MessageAnnotations, AnnotationDeliveryTime); err == nil {
			at, _ = msOf(v)
		}
		if v, err := message.Lookup(s.MessageAnnotations, AnnotationScheduledEnqueueTime); err == nil {
			if t, ok := msOf(v); ok {
				at = max(at, t)
			}
		}
		if v, err := message.Lookup(s.MessageAnnotations, AnnotationDeliveryDelay); err == nil {
			delay, _ = msOf(v)
		}
	}
	return m, at, ttl, delay
}

// defaultPriority is a message's priority when its header gives none,
// or it has no header (part 3 §3.2.1).
const defaultPriority = 4

// absoluteExpiry reads the absolute-expiry-time of a properties section
// (its ninth field, part 3 §3.2.4) alone, from the bytes: a list of
// fewer than nine fields has none, which is most messages' (read in
// constant time); else the eight fields before it are skipped by their
// sizes. On every message stored, a whole ParseProperties, then a
// cursor's walk to the field, was most of the cost of reading its
// lifetime. Any fault, or a field of another type, is no expiry.
func absoluteExpiry(sec []byte) (int64, bool) {
	if len(sec) < 2 || sec[0] != byte(amqpsax.CodeDescribed) {
		return 0, false
	}
	_, _, n, _ := wire.Descriptor(sec[1:])
	if n < 0 {
		return 0, false
	}
	i := 1 + n
	if i >= len(sec) || wire.Table[sec[i]].Kind() != amqpsax.KindList {
		return 0, false
	}
	hdr, size, count := wire.Body(amqpsax.Code(sec[i]), sec[i+1:])
	if hdr < 0 || count < 9 {
		return 0, false
	}
	p := i + 1 + hdr
	list := sec[:p+size]
	for range 8 {
		n, _ := wire.Skip(list[p:])
		if n < 0 {
			return 0, false
		}
		p += n
	}
	if p+9 > len(list) || list[p] != byte(amqpsax.CodeTimestamp) {
		return 0, false
	}
	return wire.Timestamp(list[p+1:]), true
}

// finish completes m's lifetime (lifeOf) at now, when it was received:
// its expiry is its ttl from now, or its absolute-expiry-time, the
// earlier. It returns the time m is scheduled for: the latest of its
// delivery time (at) and its delay from now, when that is after now;
// else 0.
func (m *msg) finish(at, ttl, delay, now int64) int64 {
	if ttl > 0 && (m.expiry == 0 || now+ttl < m.expiry) {
		m.expiry = now + ttl
	}
	if delay > 0 {
		at = max(at, now+delay)
	}
	if at <= now {
		return 0
	}
	return at
}

// msOf returns a time or duration in ms: a timestamp, or an integer.
func msOf(v stream.Value) (int64, bool) {
	switch k := v.Kind(); {
	case k == amqpsax.KindTimestamp:
		return v.Timestamp(), true
	case k >= amqpsax.KindByte && k <= amqpsax.KindLong:
		return v.Int(), true
	case k >= amqpsax.KindUbyte && k <= amqpsax.KindUlong:
		return int64(min(v.Uint(), 1<<62)), true
	}
	return 0, false
}

// expired reports that m has expired at now.
func (m *msg) expired(now int64) bool { return m.expiry != 0 && m.expiry <= now }

// expireMsgLocked forgets m, taken out of q (whose bytes counted it) on
// node n because it expired: moved to Options.ExpiryAddress when set,
// else dropped.
func (b *Broker) expireMsgLocked(n *node, q *queue, m msg, wake []*conn) []*conn {
	q.bytes -= int64(m.size())
	n.c.expired++
	if b.expiryAddr != nil {
		wake = b.deadLetterLocked(n, m, b.expiryAddr, reasonExpired, nil, wake)
	}
	b.pool.put(m.buf)
	return wake
}

// sweepLocked expires the messages at the front of q (of node n) that
// have expired by the broker's clock, at most limit of them (no bound
// when negative). The clock is read only when the first has an expiry.
// A queue none of whose messages has an expiry (q.r.timed) costs a
// test.
func (b *Broker) sweepLocked(n *node, q *queue, limit int, wake []*conn) []*conn {
	if !q.r.timed || q.len() == 0 || q.r.front().expiry == 0 {
		return wake
	}
	return b.sweepFrontLocked(n, q, limit, wake)
}

// sweepFrontLocked is sweepLocked's work: q's first message has an
// expiry.
func (b *Broker) sweepFrontLocked(n *node, q *queue, limit int, wake []*conn) []*conn {
	now := b.nowMS()
	for ; limit != 0 && q.len() > 0 && q.r.front().expired(now); limit-- {
		wake = b.expireMsgLocked(n, q, q.r.popFront(), wake)
	}
	return wake
}

// dueNowLocked is dueLocked at the broker's time, read only when a
// message is scheduled.
func (b *Broker) dueNowLocked(wake []*conn) []*conn {
	if len(b.sched) == 0 { // inlined: most brokers schedule nothing
		return wake
	}
	return b.dueClockLocked(wake)
}

// dueClockLocked is dueLocked at the broker's time.
func (b *Broker) dueClockLocked(wake []*conn) []*conn { return b.dueLocked(b.nowMS(), wake) }

// deadLetterLocked stores a copy of m, which left node from, on the node
// at addr, with message annotations saying why (reason, description)
// and where it was (AnnotationOriginalAddress); its delivery-count and
// priority stay, it does not expire. The caller still owns m. A message
// already on that node, a node the broker cannot make (MaxQueues), a
// full one or a broker at MaxMemory drops it instead (counted in
// from's Dropped); otherwise it is counted in from's DeadLettered.
func (b *Broker) deadLetterLocked(from *node, m msg, addr []byte, reason, description []byte, wake []*conn) []*conn {
	if from.name == string(addr) {
		from.c.dropped++
		return wake
	}
	n := b.nodeLocked(addr, false)
	if n == nil || n.deleted || (!n.fanout && b.fullLocked(&n.q)) || b.memFullLocked(m.size()) {
		from.c.dropped++
		return wake
	}
	payload := m.buf.b
	if s, err := message.Scan(payload); err == nil {
		v := encode.AppendStringBytes(b.dlVals[:0], reason)
		r := len(v)
		if description != nil {
			v = encode.AppendStringBytes(v, description)
		}
		d := len(v)
		v = encode.AppendString(v, from.name)
		b.dlVals = v
		set := append(b.dlSet[:0], message.Entry{Key: keyReason, Value: v[:r]})
		if description != nil {
			set = append(set, message.Entry{Key: keyDescription, Value: v[r:d]})
		}
		set = append(set, message.Entry{Key: keyOrigin, Value: v[d:]})
		b.dlSet = set
		if out, err := message.Append(b.scratch[:0], s, &message.Changes{MessageAnnotations: message.Edit{Set: set}}); err == nil {
			b.scratch = out
			payload = out
		}
	}
	b.seq++
	nm := msg{buf: b.pool.get(payload), seq: b.seq, count: m.count, prio: m.prio}
	from.c.deadLettered++
	n.c.enqueued++
	n.lastSize = len(payload)
	return b.placeLocked(n, nm, nil, wake)
}

// sched is a scheduled message, the time it becomes visible at (ms
// since the epoch) and its node, in the broker's heap of them (earliest
// first, then in the order they came).
type sched struct {
	m  msg
	at int64
	n  *node
}

func schedLess(a, b *sched) bool { return a.at < b.at || (a.at == b.at && a.m.seq < b.m.seq) }

// scheduleLocked holds m (stored for n) until at, in the future: counted
// in n's bounds (queue.sched), not delivered.
func (b *Broker) scheduleLocked(n *node, m msg, at int64) {
	n.q.sched++
	n.q.schedBytes += int64(m.size())
	h := append(b.sched, sched{m: m, at: at, n: n})
	for i := len(h) - 1; i > 0; { // sift up
		p := (i - 1) / 2
		if !schedLess(&h[i], &h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	b.sched = h
	b.armLocked()
}

// popSchedLocked takes the earliest scheduled message out of the heap.
func (b *Broker) popSchedLocked() sched {
	h := b.sched
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = sched{}
	h = h[:last]
	for i := 0; ; { // sift down
		l, s := 2*i+1, i
		if l < len(h) && schedLess(&h[l], &h[s]) {
			s = l
		}
		if r := l + 1; r < len(h) && schedLess(&h[r], &h[s]) {
			s = r
		}
		if s == i {
			break
		}
		h[i], h[s] = h[s], h[i]
		i = s
	}
	b.sched = h
	return top
}

// dueLocked makes visible the scheduled messages whose time has come at
// now: each goes to its node's queue (or subscriptions) as if it had
// just been sent, unless its node was removed since (dropped) or it
// expired meanwhile. It costs O(1) when none is due.
func (b *Broker) dueLocked(now int64, wake []*conn) []*conn {
	if len(b.sched) == 0 || b.sched[0].at > now {
		return wake
	}
	for len(b.sched) > 0 && b.sched[0].at <= now {
		e := b.popSchedLocked()
		n, m := e.n, e.m
		n.q.sched--
		n.q.schedBytes -= int64(m.size())
		switch {
		case n.deleted:
			b.pool.put(m.buf)
			n.c.dropped++
		case m.expired(now):
			n.q.bytes += int64(m.size()) // expireMsgLocked takes it off
			wake = b.expireMsgLocked(n, &n.q, m, wake)
		default:
			wake = b.placeLocked(n, m, nil, wake)
		}
		wake = b.unblockLocked(n, wake)
	}
	// The timer is still set for a time at or before the earliest left,
	// or has run (onTimer sets it again): dueLocked need not, and must
	// not (it would make the wake slices of its callers escape).
	return wake
}

// armLocked sets the broker's timer for its earliest scheduled message:
// the timer's run makes it visible (dueLocked) and wakes its consumers'
// connections. Without the timer, any message stored, any consumer's
// send and any read of the statistics do it too.
func (b *Broker) armLocked() {
	if len(b.sched) == 0 || b.closed {
		return
	}
	at := b.sched[0].at
	if b.timerAt != 0 && b.timerAt <= at {
		return
	}
	b.timerAt = at
	d := time.Duration(at-b.nowMS()) * time.Millisecond
	if b.timer == nil {
		b.timer = time.AfterFunc(d, b.onTimer)
	} else {
		b.timer.Reset(d)
	}
}

func (b *Broker) onTimer() {
	b.mu.Lock()
	b.timerAt = 0
	wake := b.dueLocked(b.nowMS(), nil)
	b.armLocked()
	b.mu.Unlock()
	b.wake(nil, wake)
}

// rewriteLocked gives m a new header and message annotations (part 3
// §3.4.5, modified): its delivery-count one up when failed, the entries
// of ann (a map) set in its message annotations. The bare message and
// footer are copied as they are. A message that does not scan, or
// annotations that are not a map of symbol or ulong keys, leave it as
// it is but for the count.
func (b *Broker) rewriteLocked(m *msg, failed bool, ann frame.Map) {
	if failed {
		m.count++
	}
	s, err := message.Scan(m.buf.b)
	if err != nil {
		return
	}
	var ch message.Changes
	var h message.Header
	if failed {
		h = message.DefaultHeader
		if s.Header != nil {
			if h, err = message.ParseHeader(s.Header); err != nil {
				return
			}
		}
		h.DeliveryCount = m.count
		ch.Header = &h
	}
	if len(ann) > 0 {
		set := b.dlSet[:0]
		for k, v := range ann.All() {
			var c stream.Cursor
			c.Reset(k)
			if !c.Next() {
				break
			}
			switch c.Kind() {
			case amqpsax.KindSymbol, amqpsax.KindString:
				set = append(set, message.Entry{Key: message.SymbolKey(string(c.Bytes())), Value: v})
			case amqpsax.KindUlong:
				set = append(set, message.Entry{Key: message.UlongKey(c.Uint()), Value: v})
			}
		}
		b.dlSet = set
		ch.MessageAnnotations.Set = set
	}
	if ch.Header == nil && len(ch.MessageAnnotations.Set) == 0 {
		return
	}
	out, err := message.Append(b.scratch[:0], s, &ch)
	if err != nil {
		return
	}
	b.scratch = out
	nb := b.pool.get(out)
	b.pool.put(m.buf)
	m.buf = nb
}
