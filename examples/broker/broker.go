package main

import (
	"log"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
)

// Broker is an in-memory broker: queues named by the target address
// producers send to, consumed from by the source address of consumers.
// Each queue hands its messages to its consumers in turn, as their credit
// allows; a message released, modified or left unsettled by a consumer
// that goes away is delivered again. A message whose
// application-properties hold a string under RouteKey goes to the queue
// that string names instead (read with message.Lookup, the body is never
// decoded).
//
// One Broker serves every connection (engine.Server's Handler): events
// of different connections run concurrently, so the queues are under a
// mutex, and a message for a consumer on another connection is sent on
// that connection's goroutine (engine.Driver.Do).
type Broker struct {
	engine.NopHandler
	// RouteKey is the application property that routes a message; ""
	// turns routing off.
	RouteKey string
	// MaxQueue bounds each queue; a message beyond it is rejected with
	// amqp:resource-limit-exceeded.
	MaxQueue int
	// Log logs connections and faults when set.
	Log *log.Logger

	mu     sync.Mutex
	queues map[string]*queue
}

type queue struct {
	name      string
	msgs      []msg // waiting, oldest first
	consumers []*consumer
}

type msg struct {
	payload []byte
	format  uint32
}

// consumer is a link the broker sends on (the peer's receiver).
type consumer struct {
	link   *engine.Link
	q      *queue
	driver *engine.Driver
	kicked atomic.Bool    // a dispatch is queued on its connection
	unack  map[uint32]msg // sent, not settled: delivered again if released or lost
	settle bool           // the link sends settled
}

// producer is a link the broker receives on (the peer's sender).
type producer struct {
	q string // the target address
}

func (b *Broker) queue(name string) *queue {
	if b.queues == nil {
		b.queues = make(map[string]*queue)
	}
	q := b.queues[name]
	if q == nil {
		q = &queue{name: name}
		b.queues[name] = q
	}
	return q
}

func (b *Broker) logf(f string, a ...any) {
	if b.Log != nil {
		b.Log.Printf(f, a...)
	}
}

// OnLinkAttach registers a producer (the peer sends: target address) or
// a consumer (the peer receives: source address).
func (b *Broker) OnLinkAttach(l *engine.Link) {
	addr := string(l.Address())
	if addr == "" {
		l.Detach(engine.NewError(frame.CondInvalidField, "no address: the broker has no dynamic nodes"))
		return
	}
	if !l.IsSender() {
		l.Context = &producer{q: addr}
		l.KeepCredit(100)
		return
	}
	b.mu.Lock()
	q := b.queue(addr)
	c := &consumer{link: l, q: q, driver: l.Conn().Driver(), unack: make(map[uint32]msg),
		settle: l.SndSettleMode() == frame.SndSettled}
	q.consumers = append(q.consumers, c)
	b.mu.Unlock()
	l.Context = c
}

// OnDelivery enqueues a message and accepts it; a full queue rejects it.
func (b *Broker) OnDelivery(l *engine.Link, d engine.Delivery) {
	p, ok := l.Context.(*producer)
	if !ok || d.Aborted {
		return
	}
	name := p.q
	if b.RouteKey != "" {
		if s, err := message.Scan(d.Payload); err == nil && s.ApplicationProperties != nil {
			if v, err := message.Lookup(s.ApplicationProperties, b.RouteKey); err == nil && v.Kind() == amqpsax.KindString {
				name = string(v.Bytes())
			}
		}
	}
	b.mu.Lock()
	q := b.queue(name)
	if b.MaxQueue > 0 && len(q.msgs) >= b.MaxQueue {
		b.mu.Unlock()
		if !d.Settled {
			d.Reject(engine.NewError(frame.CondResourceLimitExceeded, "queue "+name+" is full"))
		}
		return
	}
	q.msgs = append(q.msgs, msg{payload: append([]byte(nil), d.Payload...), format: d.MessageFormat})
	kick := b.kickLocked(q)
	b.mu.Unlock()
	if !d.Settled {
		d.Accept()
	}
	b.runKicks(l.Conn(), kick)
}

// kickLocked returns the consumers of q to dispatch to, each once.
func (b *Broker) kickLocked(q *queue) []*consumer {
	var k []*consumer
	for _, c := range q.consumers {
		if c.kicked.CompareAndSwap(false, true) {
			k = append(k, c)
		}
	}
	return k
}

// runKicks dispatches to each consumer on its connection's goroutine:
// at once for those of cur, the connection whose goroutine this is.
func (b *Broker) runKicks(cur *engine.Conn, k []*consumer) {
	for _, c := range k {
		c := c
		switch {
		case c.link.Conn() == cur:
			c.kicked.Store(false)
			b.dispatch(c)
		case c.driver == nil || !c.driver.Do(func(*engine.Conn) { c.kicked.Store(false); b.dispatch(c) }):
			c.kicked.Store(false)
		}
	}
}

// OnFlow sends what the consumer's new credit allows.
func (b *Broker) OnFlow(l *engine.Link) {
	if c, ok := l.Context.(*consumer); ok {
		b.dispatch(c)
	}
}

// OnWritable resumes every consumer of the connection.
func (b *Broker) OnWritable(conn *engine.Conn) {
	b.mu.Lock()
	var cs []*consumer
	for _, q := range b.queues {
		for _, c := range q.consumers {
			if c.link.Conn() == conn {
				cs = append(cs, c)
			}
		}
	}
	b.mu.Unlock()
	for _, c := range cs {
		b.dispatch(c)
	}
}

// dispatch sends queued messages to c while it has credit. It runs on
// c's connection goroutine.
func (b *Broker) dispatch(c *consumer) {
	for c.link.Credit() > 0 {
		b.mu.Lock()
		if c.q == nil || len(c.q.msgs) == 0 {
			b.mu.Unlock()
			return
		}
		// The first message this consumer can take: one above its
		// max-message-size stays queued for the others.
		i := 0
		if max, ok := c.link.RemoteAttach().MaxMessageSize.Get(); ok && max > 0 {
			for i < len(c.q.msgs) && uint64(len(c.q.msgs[i].payload)) > max {
				i++
			}
			if i == len(c.q.msgs) {
				b.mu.Unlock()
				return
			}
		}
		m := c.q.msgs[i]
		if i == 0 {
			c.q.msgs = c.q.msgs[1:]
		} else {
			c.q.msgs = append(c.q.msgs[:i:i], c.q.msgs[i+1:]...)
		}
		b.mu.Unlock()
		id, err := c.link.Send(nil, m.payload, c.settle)
		if err != nil {
			b.mu.Lock()
			c.q.msgs = append(c.q.msgs[:i:i], append([]msg{m}, c.q.msgs[i:]...)...) // back where it was
			b.mu.Unlock()
			return
		}
		if !c.settle {
			c.unack[id] = m
		}
	}
}

// OnDisposition forgets an accepted or rejected message and queues a
// released or modified one again.
func (b *Broker) OnDisposition(l *engine.Link, d engine.Disposition) {
	c, ok := l.Context.(*consumer)
	if !ok {
		return
	}
	m, ok := c.unack[d.ID]
	if !ok {
		return
	}
	switch d.State.Type {
	case frame.StateReleased, frame.StateModified:
		delete(c.unack, d.ID)
		b.requeue(l.Conn(), c.q, m)
	case frame.StateAccepted, frame.StateRejected:
		delete(c.unack, d.ID)
	default:
		if d.Settled {
			delete(c.unack, d.ID)
		}
	}
}

func (b *Broker) requeue(cur *engine.Conn, q *queue, ms ...msg) {
	if len(ms) == 0 {
		return
	}
	b.mu.Lock()
	q.msgs = append(append([]msg(nil), ms...), q.msgs...)
	kick := b.kickLocked(q)
	b.mu.Unlock()
	b.runKicks(cur, kick)
}

// OnLinkDetach removes a consumer and queues its unsettled messages
// again.
func (b *Broker) OnLinkDetach(l *engine.Link, err *engine.Error) {
	c, ok := l.Context.(*consumer)
	if !ok {
		return
	}
	b.mu.Lock()
	q := c.q
	for i, x := range q.consumers {
		if x == c {
			q.consumers = append(q.consumers[:i], q.consumers[i+1:]...)
			break
		}
	}
	b.mu.Unlock()
	ids := make([]uint32, 0, len(c.unack))
	for id := range c.unack {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b uint32) int { return int(int32(a - b)) }) // in delivery order (RFC 1982)
	ms := make([]msg, len(ids))
	for i, id := range ids {
		ms[i] = c.unack[id]
	}
	c.unack = nil
	b.requeue(l.Conn(), q, ms...)
}

func (b *Broker) OnConnectionOpen(c *engine.Conn) {
	b.logf("open %s", c.RemoteContainerID())
}

func (b *Broker) OnConnectionClose(c *engine.Conn, err *engine.Error) {
	b.logf("close %s: %v", c.RemoteContainerID(), err)
}
