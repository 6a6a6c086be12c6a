package broker

import (
	"fmt"
	"math/bits"
	"slices"
	"time"
)

// This file is the storage: message buffers from a pool of size classes,
// the ring of messages a queue holds (a fifo a priority), the ring of
// consumers waiting for them, and the counters of a node.

// buffer holds one message's bytes, shared by the copies a fan-out node
// makes (refs counts them). Buffers are recycled by size class, so a
// broker in a steady state allocates nothing per message.
type buffer struct {
	b     []byte
	refs  int32
	class int8 // -1: not pooled
	// from is the id of the connection it was sent on (conn.id), for a
	// consumer's no-local filter: a number, so that a queued message
	// does not keep its connection's state in memory.
	from uint64
}

// Size classes: 64 bytes, then four per power of two (80, 96, 112, 128,
// 160, …), so a buffer wastes at most a quarter of its size, up to
// maxPooled; larger messages get buffers of their own size.
const (
	maxPooled  = 1 << 20
	numClasses = 1 + 4*(20-6)
	// maxCached bounds the bytes the free lists keep.
	maxCached = 8 << 20
)

// classOf returns the size class for n bytes and its size; -1 above
// maxPooled.
func classOf(n int) (int, int) {
	if n <= 64 {
		return 0, 64
	}
	if n > maxPooled {
		return -1, n
	}
	e := bits.Len(uint(n-1)) - 1 // 2^e < n <= 2^(e+1)
	step := 1 << (e - 2)
	k := (n - 1 - 1<<e) / step // 0..3
	return 1 + (e-6)*4 + k, 1<<e + (k+1)*step
}

// pool is the free lists of buffers, under the broker's lock. live is
// the bytes of the buffers in use (a fan-out node's copies share one):
// what Options.MaxMemory bounds.
type pool struct {
	free   [numClasses][]*buffer
	cached int
	live   int64
}

// get returns a buffer holding a copy of p, with one reference.
func (pl *pool) get(p []byte) *buffer {
	c, size := classOf(len(p))
	var bf *buffer
	if c >= 0 {
		if f := pl.free[c]; len(f) > 0 {
			bf = f[len(f)-1]
			f[len(f)-1] = nil
			pl.free[c] = f[:len(f)-1]
			pl.cached -= cap(bf.b)
		}
	}
	if bf == nil {
		bf = &buffer{b: make([]byte, 0, size), class: int8(c)}
	}
	bf.b = append(bf.b[:0], p...)
	bf.refs = 1
	pl.live += int64(cap(bf.b))
	return bf
}

// put drops a reference to bf, keeping it for reuse when it was the last.
func (pl *pool) put(bf *buffer) {
	bf.refs--
	if bf.refs > 0 {
		return
	}
	pl.live -= int64(cap(bf.b))
	if bf.class < 0 || pl.cached+cap(bf.b) > maxCached {
		return
	}
	pl.cached += cap(bf.b)
	pl.free[bf.class] = append(pl.free[bf.class], bf)
}

// msg is a message in a queue or sent and not yet settled.
type msg struct {
	buf *buffer
	seq uint64 // the broker's number for it, for undeliverable-here
	// expiry is when it expires, in ms since the epoch (its ttl from
	// when the broker received it, or its absolute-expiry-time, the
	// earlier); 0: never. (A scheduled message's time is its sched's:
	// lifetime.go.)
	expiry int64
	// count is its header's delivery-count, as the broker last wrote it.
	count uint32
	prio  uint8 // its header's priority, 0-9 (higher clamped to 9)
	// redelivered: it was sent before (released, modified or left
	// unsettled by a consumer that went away).
	redelivered bool
}

func (m msg) size() int { return len(m.buf.b) }

// fifo is the messages of one priority, oldest first, in a power-of-two
// ring that grows as needed and shrinks once it has stayed mostly empty.
//
// A ring shrinks when it has been under an eighth full for as many
// removals as it has slots (low counts them; a ring a quarter full
// again starts over), so each shrink, and the growth that may follow
// it, is paid for by that many messages: a queue whose depth swings
// (a consumer that keeps up, in bursts of its credit) keeps its ring
// instead of copying it to a smaller one and back at every swing. A
// large ring (maxIdleRing slots and more) that empties shrinks at once,
// so a drained queue does not hold what its peak needed.
type fifo struct {
	e    []msg
	head int
	n    int
	low  int
}

// maxIdleRing is the slots past which an emptied fifo gives its ring
// back at once.
const maxIdleRing = 1 << 16

func (r *fifo) at(i int) *msg { return &r.e[(r.head+i)&(len(r.e)-1)] }

func (r *fifo) grow() {
	size := max(16, 2*len(r.e))
	e := make([]msg, size)
	for i := range r.n {
		e[i] = *r.at(i)
	}
	r.e, r.head, r.low = e, 0, 0
}

func (r *fifo) pushBack(m msg) {
	if r.n == len(r.e) {
		r.grow()
	}
	*r.at(r.n) = m
	r.n++
}

func (r *fifo) pushFront(m msg) {
	if r.n == len(r.e) {
		r.grow()
	}
	r.head = (r.head - 1) & (len(r.e) - 1)
	r.e[r.head] = m
	r.n++
}

// remove takes out message i.
func (r *fifo) remove(i int) msg {
	if i == 0 {
		return r.popFront()
	}
	m := *r.at(i)
	for j := i; j < r.n-1; j++ {
		*r.at(j) = *r.at(j + 1)
	}
	*r.at(r.n - 1) = msg{}
	r.n--
	r.idle()
	return m
}

// popFront takes out the first message; r must not be empty.
func (r *fifo) popFront() msg {
	e := &r.e[r.head]
	m := *e
	*e = msg{}
	r.head = (r.head + 1) & (len(r.e) - 1)
	r.n--
	if len(r.e) > 1024 {
		r.idle()
	}
	return m
}

// idle counts the removals r stays mostly empty for, and shrinks it
// past as many as it has slots (or at once, a ring of maxIdleRing slots
// or more that empties).
func (r *fifo) idle() {
	switch {
	case len(r.e) <= 1024:
	case r.n >= len(r.e)/4:
		r.low = 0
	case r.n < len(r.e)/8:
		r.low++
		if r.low >= len(r.e) || r.n == 0 && len(r.e) >= maxIdleRing {
			r.shrink()
		}
	}
}

// shrink moves the messages to a ring a quarter the size.
func (r *fifo) shrink() {
	e := make([]msg, len(r.e)/4)
	for j := range r.n {
		e[j] = *r.at(j)
	}
	r.e, r.head, r.low = e, 0, 0
}

// levels is the number of priorities a queue keeps apart: 0 to 9, as
// the spec's priority advice (part 3 §3.2.1) and RabbitMQ's and
// Artemis' priority queues.
const levels = 10

// ring is a queue's messages in the order they are delivered: highest
// priority first, oldest first within a priority. It is a fifo a
// priority, and a bit a priority that has messages, so that pushing is
// O(1), taking the first O(1) and finding message i O(levels); nothing
// is allocated once each priority's fifo has grown. A queue of one
// priority (most are: every message has the default, 4) finds message
// i in its one fifo at once.
type ring struct {
	lv   [levels]fifo
	n    int
	used uint16 // bit p: lv[p] is not empty
	// For a selective consumer's or a browser's place in it (after):
	// epoch counts the messages pushed at the front, which they may not
	// have looked at yet; last is the highest seq pushed at the back,
	// and disorder is set while the messages may not be in the order of
	// seq (one pushed at the back after a newer one, as a scheduled one
	// that comes due; one pushed at the front before an older one),
	// cleared when r empties.
	epoch    uint64
	last     uint64
	disorder bool
	// timed is set while a message pushed since r was last empty has
	// an expiry: without one, nothing in r expires and its front is not
	// looked at for expiry (sweepLocked).
	timed bool
}

// top returns the highest priority with messages; r must not be empty.
func (r *ring) top() int { return bits.Len16(r.used) - 1 }

// find returns the priority and the index in it of message i.
func (r *ring) find(i int) (int, int) {
	for p := r.top(); p >= 0; p-- {
		if i < r.lv[p].n {
			return p, i
		}
		i -= r.lv[p].n
	}
	panic("broker: ring index out of range")
}

// front returns the first message; r must not be empty.
func (r *ring) front() *msg {
	f := &r.lv[r.top()]
	return &f.e[f.head]
}

// at returns message i: in the highest priority's fifo at once when it
// is there (always, in a queue of one priority).
func (r *ring) at(i int) *msg {
	if f := &r.lv[r.top()]; i < f.n {
		return f.at(i)
	}
	p, j := r.find(i)
	return r.lv[p].at(j)
}

func (r *ring) pushBack(m msg) {
	switch {
	case r.n == 0:
		r.disorder, r.last, r.timed = false, m.seq, false
	case m.seq < r.last:
		r.disorder = true
	default:
		r.last = m.seq
	}
	if m.expiry != 0 {
		r.timed = true
	}
	f := &r.lv[m.prio]
	if f.n == len(f.e) {
		f.grow()
	}
	f.e[(f.head+f.n)&(len(f.e)-1)] = m
	f.n++
	r.used |= 1 << m.prio
	r.n++
}

func (r *ring) pushFront(m msg) {
	if r.n == 0 {
		r.disorder, r.last, r.timed = false, m.seq, false
	} else if m.seq > r.front().seq {
		r.disorder = true
	}
	if m.expiry != 0 {
		r.timed = true
	}
	r.epoch++
	r.lv[m.prio].pushFront(m)
	r.used |= 1 << m.prio
	r.n++
}

// popFront takes out the first message; r must not be empty. It is
// fifo's popFront written out, for a call less a message taken.
func (r *ring) popFront() msg {
	p := r.top()
	f := &r.lv[p]
	e := &f.e[f.head]
	m := *e
	*e = msg{}
	f.head = (f.head + 1) & (len(f.e) - 1)
	f.n--
	if f.n == 0 {
		r.used &^= 1 << p
	}
	if len(f.e) > 1024 {
		f.idle()
	}
	r.n--
	return m
}

// remove takes out message i.
func (r *ring) remove(i int) msg {
	if i == 0 {
		return r.popFront()
	}
	p, j := r.find(i)
	m := r.lv[p].remove(j)
	if r.lv[p].n == 0 {
		r.used &^= 1 << p
	}
	r.n--
	return m
}

// check reports an error when r's count or its bits of priorities with
// messages are not its fifos', or it holds a message with an expiry and
// is not timed (for the fuzz test's invariants).
func (r *ring) check() error {
	k := 0
	for p := range r.lv {
		if (r.lv[p].n > 0) != (r.used&(1<<p) != 0) {
			return fmt.Errorf("ring: priority %d holds %d, bit %v", p, r.lv[p].n, r.used&(1<<p) != 0)
		}
		for i := range r.lv[p].n {
			if r.lv[p].at(i).expiry != 0 && !r.timed {
				return fmt.Errorf("ring: a message with an expiry, not timed")
			}
		}
		k += r.lv[p].n
	}
	if k != r.n {
		return fmt.Errorf("ring: %d counted, %d held", r.n, k)
	}
	return nil
}

// slots returns the messages r has room for, in all its fifos.
func (r *ring) slots() int {
	k := 0
	for p := range r.lv {
		k += len(r.lv[p].e)
	}
	return k
}

// cring is a ring of consumers, oldest first, that grows by powers of
// two and allocates nothing once grown.
type cring struct {
	e    []*consumer
	head int
	n    int
}

func (r *cring) push(c *consumer) {
	if r.n == len(r.e) {
		e := make([]*consumer, max(8, 2*len(r.e)))
		for i := range r.n {
			e[i] = r.e[(r.head+i)&(len(r.e)-1)]
		}
		r.e, r.head = e, 0
	}
	r.e[(r.head+r.n)&(len(r.e)-1)] = c
	r.n++
}

// pop takes out the oldest; the ring must not be empty.
func (r *cring) pop() *consumer {
	c := r.e[r.head]
	r.e[r.head] = nil
	r.head = (r.head + 1) & (len(r.e) - 1)
	r.n--
	return c
}

// sent is the messages a consumer sent and the peer has not settled,
// by delivery-id (consumer.unacked), in the order they were sent: for
// one link the order of their ids, which its session gives its
// transfers in turn (part 2 §2.7.5), in a power-of-two ring. A peer
// settles them mostly in that order, so the one settled is at the front
// (one compare), else found by a binary search. One settled out of
// order leaves a hole, gone once the holes before it are; the ring is
// compacted when holes are more than half of it, so that it holds at
// most about twice the messages unsettled, and work stays O(1) a
// message amortized. An id that does not follow the last one put (no
// session numbers so) is kept in a map instead. The zero value is
// empty; once its ring has grown, nothing is allocated.
type sent struct {
	e     []sentMsg
	head  int
	n     int // entries from head, holes included
	holes int
	other map[uint32]msg
}

// sentMsg is an entry of sent: a message and its delivery-id, or a hole
// (!live).
type sentMsg struct {
	id   uint32
	live bool
	m    msg
}

// len returns the messages s holds.
func (s *sent) len() int { return s.n - s.holes + len(s.other) }

// put adds m, sent with delivery-id id.
func (s *sent) put(id uint32, m msg) {
	if s.n > 0 {
		// Ids ascend from the front's: their distance from it (mod
		// 2^32) orders them, for find's binary search.
		base := s.e[s.head].id
		if last := s.e[(s.head+s.n-1)&(len(s.e)-1)].id; id-base <= last-base {
			s.putOther(id, m)
			return
		}
	}
	if s.n == len(s.e) {
		s.resize(max(16, 2*len(s.e)))
	}
	s.e[(s.head+s.n)&(len(s.e)-1)] = sentMsg{id: id, live: true, m: m}
	s.n++
}

// putOther keeps m with an id that does not follow the last: in the
// ring still when it holds that id, in the map otherwise.
func (s *sent) putOther(id uint32, m msg) {
	if j := s.find(id); j >= 0 {
		s.e[j].m = m
		return
	}
	if s.other == nil {
		s.other = make(map[uint32]msg)
	}
	s.other[id] = m
}

// resize moves the messages to a ring of size slots, its holes left
// out.
func (s *sent) resize(size int) {
	e := make([]sentMsg, size)
	k := 0
	for i := range s.n {
		if x := s.e[(s.head+i)&(len(s.e)-1)]; x.live {
			e[k] = x
			k++
		}
	}
	s.e, s.head, s.n, s.holes = e, 0, k, 0
}

// find returns where in s.e the message of id is, or -1.
func (s *sent) find(id uint32) int {
	if s.n == 0 {
		return -1
	}
	mask := len(s.e) - 1
	if f := &s.e[s.head]; f.id == id { // settled in order
		if f.live {
			return s.head
		}
		return -1
	}
	base := s.e[s.head].id
	d := id - base
	lo, hi := 1, s.n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s.e[(s.head+mid)&mask].id-base < d {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < s.n {
		if j := (s.head + lo) & mask; s.e[j].id == id && s.e[j].live {
			return j
		}
	}
	return -1
}

// get returns the message of id.
func (s *sent) get(id uint32) (msg, bool) {
	if j := s.find(id); j >= 0 {
		return s.e[j].m, true
	}
	if len(s.other) > 0 {
		m, ok := s.other[id]
		return m, ok
	}
	return msg{}, false
}

// take removes the message of id and returns it, when s holds it.
func (s *sent) take(id uint32) (msg, bool) {
	j := s.find(id)
	if j < 0 {
		if len(s.other) == 0 {
			return msg{}, false
		}
		m, ok := s.other[id]
		delete(s.other, id)
		return m, ok
	}
	m := s.e[j].m
	s.e[j] = sentMsg{id: id} // a hole keeps its place in the order
	if j != s.head {
		s.holes++
		if s.holes > 16 && 2*s.holes > s.n {
			s.resize(len(s.e)) // compacted
		}
		return m, true
	}
	mask := len(s.e) - 1
	s.head = (s.head + 1) & mask
	s.n--
	for s.n > 0 && !s.e[s.head].live {
		s.head = (s.head + 1) & mask
		s.n--
		s.holes--
	}
	return m, true
}

// all returns s's messages in the order of their ids (RFC 1982).
func (s *sent) all() []msg {
	ms := make([]sentMsg, 0, s.len())
	for i := range s.n {
		if x := s.e[(s.head+i)&(len(s.e)-1)]; x.live {
			ms = append(ms, x)
		}
	}
	if len(s.other) > 0 {
		for id, m := range s.other {
			ms = append(ms, sentMsg{id: id, live: true, m: m})
		}
		slices.SortFunc(ms, func(a, b sentMsg) int { return int(int32(a.id - b.id)) })
	}
	out := make([]msg, len(ms))
	for i := range ms {
		out[i] = ms[i].m
	}
	return out
}

// queue is the messages waiting on a queue node, or on one consumer's
// subscription to a fan-out node, and a queue node's consumers waiting
// for them.
type queue struct {
	r         ring
	unsettled int   // taken from r, sent or being sent, not settled
	bytes     int64 // of the messages in r and those unsettled
	// ready is a queue node's consumers that wait for messages (hungry),
	// in the order they came to wait: a message wakes the first, so a
	// queue with many consumers that have no credit is not searched for
	// one that has. An entry may be stale (its consumer took a message
	// since, or went): stale counts those of consumers gone, and the
	// ring is compacted when they are half of it.
	ready cring
	stale int
	// The messages scheduled for it and not visible yet (lifetime.go),
	// and their bytes: counted in its bounds, not in r.
	sched      int
	schedBytes int64
}

func (q *queue) len() int { return q.r.n }

// putBack puts m back at the front of q (released, requeued, or taken
// and not sent).
func (q *queue) putBack(m msg) { q.r.pushFront(m) }

// ordered reports that q's messages are in the order of seq: of one
// priority, none put back before an older one (after may be used).
func (q *queue) ordered() bool { return !q.r.disorder && q.r.used&(q.r.used-1) == 0 }

// after returns the index of the first message whose seq is above seq;
// q must be ordered: a binary search.
func (q *queue) after(seq uint64) int {
	lo, hi := 0, q.r.n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if q.r.at(mid).seq <= seq {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// counters are a node's totals since it was made.
type counters struct {
	enqueued, delivered, acked, rejected, released, modified, redelivered, dropped, refused, filtered uint64
	expired, deadLettered                                                                             uint64
}

// add adds o's totals to c's.
func (c *counters) add(o *counters) {
	c.enqueued += o.enqueued
	c.delivered += o.delivered
	c.acked += o.acked
	c.rejected += o.rejected
	c.released += o.released
	c.modified += o.modified
	c.redelivered += o.redelivered
	c.dropped += o.dropped
	c.refused += o.refused
	c.filtered += o.filtered
	c.expired += o.expired
	c.deadLettered += o.deadLettered
}

// sample is counters at a time, for rates.
type sample struct {
	at                  time.Time
	enqueued, delivered uint64
}
