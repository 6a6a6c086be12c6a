package broker

import (
	"math/bits"
	"time"
)

// This file is the storage: message buffers from a pool of size classes,
// the ring of messages a queue holds, and the counters of a node.

// buffer holds one message's bytes, shared by the copies a fan-out node
// makes (refs counts them). Buffers are recycled by size class, so a
// broker in a steady state allocates nothing per message.
type buffer struct {
	b     []byte
	refs  int32
	class int8 // -1: not pooled
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
	// redelivered: it was sent before (released, modified or left
	// unsettled by a consumer that went away).
	redelivered bool
}

func (m msg) size() int { return len(m.buf.b) }

// ring is a queue's messages, oldest first, in a power-of-two ring that
// grows as needed and shrinks when mostly empty.
type ring struct {
	e    []msg
	head int
	n    int
}

func (r *ring) at(i int) *msg { return &r.e[(r.head+i)&(len(r.e)-1)] }

func (r *ring) grow() {
	size := max(16, 2*len(r.e))
	e := make([]msg, size)
	for i := range r.n {
		e[i] = *r.at(i)
	}
	r.e, r.head = e, 0
}

func (r *ring) pushBack(m msg) {
	if r.n == len(r.e) {
		r.grow()
	}
	*r.at(r.n) = m
	r.n++
}

func (r *ring) pushFront(m msg) {
	if r.n == len(r.e) {
		r.grow()
	}
	r.head = (r.head - 1) & (len(r.e) - 1)
	r.e[r.head] = m
	r.n++
}

// remove takes out message i.
func (r *ring) remove(i int) msg {
	m := *r.at(i)
	if i == 0 {
		*r.at(0) = msg{}
		r.head = (r.head + 1) & (len(r.e) - 1)
	} else {
		for j := i; j < r.n-1; j++ {
			*r.at(j) = *r.at(j + 1)
		}
		*r.at(r.n - 1) = msg{}
	}
	r.n--
	if len(r.e) > 1024 && r.n < len(r.e)/8 {
		e := make([]msg, len(r.e)/4)
		for j := range r.n {
			e[j] = *r.at(j)
		}
		r.e, r.head = e, 0
	}
	return m
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

// queue is the messages waiting on a queue node, or on one consumer's
// subscription to a fan-out node.
type queue struct {
	r         ring
	unsettled int   // taken from r, sent or being sent, not settled
	bytes     int64 // of the messages in r and those unsettled
}

func (q *queue) len() int { return q.r.n }

// counters are a node's totals since it was made.
type counters struct {
	enqueued, delivered, acked, rejected, released, modified, redelivered, dropped, refused uint64
}

// sample is counters at a time, for rates.
type sample struct {
	at                  time.Time
	enqueued, delivered uint64
}
