package broker

import (
	"strconv"
	"sync/atomic"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// This file is the broker's transaction coordinator (AMQP 1.0 part 4),
// the engine's Coordinator: a transaction is its connection's. A message
// sent in a transaction is accepted and held in it, not stored; an
// outcome given in a transaction (a consumer accepting, rejecting,
// releasing or modifying a message it received) is held too, the
// message staying acquired by that consumer. Commit stores the held
// messages on their nodes, in the order they came, and applies the held
// outcomes; rollback drops the messages and puts the acquired ones back
// on their queues, to be delivered again. A transaction left open when
// its controller's link or connection goes is rolled back (the engine
// discharges it).
//
// The messages a transaction holds count in the bounds of the node each
// goes to (with what the node holds, and what other transactions hold
// for it) and in their connection's memory budget (engine.Conn.Charge),
// of which they may take half: one past either is rejected with
// amqp:resource-limit-exceeded.

// txn is the work of one transaction.
type txn struct {
	sends []txnSend
	acks  []txnAck
}

// txnSend is a message sent in a transaction, copied, and the node it
// goes to (admitted when it came, as outside a transaction).
type txnSend struct {
	p       *producer
	n       *node
	payload []byte
}

// txnAck is an outcome given in a transaction to a message sent to a
// consumer (by its delivery-id).
type txnAck struct {
	c                     *consumer
	id                    uint32
	state                 frame.StateType
	failed, undeliverable bool
}

// coordinator is the broker's engine.Coordinator.
type coordinator struct {
	b    *Broker
	next atomic.Uint64
}

func (co *coordinator) Declare(l *engine.Link) ([]byte, *engine.Error) {
	cn := connOf(l.Conn())
	if cn == nil {
		return nil, engine.NewError(frame.CondInternalError, "no connection")
	}
	id := strconv.AppendUint([]byte("txn-"), co.next.Add(1), 10)
	if cn.txns == nil {
		cn.txns = make(map[string]*txn)
	}
	cn.txns[string(id)] = &txn{}
	return id, nil
}

func (co *coordinator) Discharge(l *engine.Link, id []byte, fail bool) *engine.Error {
	cn := connOf(l.Conn())
	if cn == nil {
		return nil
	}
	t := cn.txns[string(id)]
	delete(cn.txns, string(id))
	if t == nil {
		return nil
	}
	h := handler{co.b}
	co.b.unholdTxn(l.Conn(), t)
	if fail {
		for _, a := range t.acks {
			h.OnDisposition(a.c.link, engine.DeliveryUpdate{ID: a.id, State: engine.Released, Settled: true})
		}
		return nil
	}
	for _, s := range t.sends {
		co.b.store(s)
	}
	for _, a := range t.acks {
		st := frame.DeliveryState{Type: a.state, DeliveryFailed: a.failed, UndeliverableHere: a.undeliverable}
		h.OnDisposition(a.c.link, engine.DeliveryUpdate{ID: a.id, State: st, Settled: true})
	}
	return nil
}

// txnOf returns the open transaction id of cn, or nil.
func (cn *conn) txnOf(id []byte) *txn {
	if cn == nil {
		return nil
	}
	return cn.txns[string(id)]
}

// txnDelivery holds a message sent in transaction id (OnDelivery's
// hook) and accepts it.
func (b *Broker) txnDelivery(p *producer, l *engine.Link, d *engine.Delivery, id []byte) {
	t := p.conn.txnOf(id)
	if t == nil {
		if !d.Settled {
			d.Reject(engine.NewError(frame.CondUnknownID, "no transaction "+string(id)))
		}
		return
	}
	size := len(d.Payload)
	b.mu.Lock()
	var n *node
	e := errDeleted(p.n)
	if e == nil {
		var in incoming
		in.scan(d.Payload)
		n, e = b.admitLocked(p, &in)
	}
	if e == nil {
		if e = b.txnRoomLocked(n, size); e == nil {
			n.txnBytes += int64(size)
			n.txnN++
		}
	}
	b.mu.Unlock()
	if e == nil && (p.conn.txnHeld+size+txnSendCost > b.txnBudget() || !l.Conn().Charge(size+txnSendCost)) {
		b.mu.Lock()
		n.txnBytes -= int64(size)
		n.txnN--
		b.mu.Unlock()
		e = errTxnBudget
	}
	if e != nil {
		p.reject(d, e)
		b.topUp(p, l)
		return
	}
	p.conn.txnHeld += size + txnSendCost
	t.sends = append(t.sends, txnSend{p: p, n: n, payload: append([]byte(nil), d.Payload...)})
	if !d.Settled {
		d.Accept()
	}
	b.topUp(p, l)
}

// txnSendCost is what a held message costs beside its bytes: its
// txnSend and slice header, rounded up.
const txnSendCost = 64

var errTxnBudget = engine.NewError(frame.CondResourceLimitExceeded,
	"the transaction's messages would pass the connection's memory budget")

// txnRoomLocked returns the error for a message of size bytes that a
// transaction would hold for n past n's bounds: counting what n's
// fullest queue holds and what open transactions hold for it.
func (b *Broker) txnRoomLocked(n *node, size int) *engine.Error {
	q := b.fullestLocked(n)
	if (b.opts.MaxMessages > 0 && q.len()+q.unsettled+n.txnN >= b.opts.MaxMessages) ||
		(b.opts.MaxBytes > 0 && q.bytes+n.txnBytes+int64(size) > b.opts.MaxBytes) {
		n.c.refused++
		return engine.NewError(frame.CondResourceLimitExceeded, "queue "+n.name+" is full, with what transactions hold for it")
	}
	return nil
}

// unholdTxn gives back what t's messages held of their nodes' bounds
// and of the connection c's budget, at its discharge.
func (b *Broker) unholdTxn(c *engine.Conn, t *txn) {
	if len(t.sends) == 0 {
		return
	}
	held := 0
	b.mu.Lock()
	for _, s := range t.sends {
		s.n.txnBytes -= int64(len(s.payload))
		s.n.txnN--
		held += len(s.payload) + txnSendCost
	}
	b.mu.Unlock()
	c.Refund(held)
	if cn := connOf(c); cn != nil {
		cn.txnHeld -= held
	}
}

// txnBudget is what the open transactions of one connection may hold:
// half its memory budget (engine.Config.MaxMemory), the other half left
// for the engine's own (a delivery being joined past the budget closes
// the connection).
func (b *Broker) txnBudget() int {
	if b.cfg.MaxMemory > 0 {
		return b.cfg.MaxMemory / 2
	}
	return engine.DefaultMaxMemory / 2
}

// txnDisposition holds an outcome given in transaction id
// (OnDisposition's hook); it reports whether it did.
func (b *Broker) txnDisposition(c *consumer, d *engine.DeliveryUpdate) bool {
	t := c.conn.txnOf(d.TxnID)
	if t == nil {
		return false
	}
	t.acks = append(t.acks, txnAck{c: c, id: d.ID, state: d.State.Type,
		failed: d.State.DeliveryFailed, undeliverable: d.State.UndeliverableHere})
	return true
}

// store puts a message a transaction committed on the node admitted for
// it when it came (admitLocked), unless that node was removed since.
func (b *Broker) store(s txnSend) {
	var wake []*conn
	b.mu.Lock()
	if n := s.n; !n.deleted {
		var in incoming // scanned again: the transaction held a copy
		in.scan(s.payload)
		wake = b.enqueueLocked(n, &in, s.p.conn.id, wake)
		if n != s.p.n {
			wake = b.autoDeleteLocked(n, wake)
		}
	}
	b.mu.Unlock()
	b.wake(s.p.conn, wake)
}

// errDeleted returns the error for a message to n when n was removed.
func errDeleted(n *node) *engine.Error {
	if n == nil || !n.deleted { // nil: an anonymous relay's
		return nil
	}
	return engine.NewError(frame.CondResourceDeleted, "node "+n.name+" was removed")
}
