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
	if fail {
		for _, a := range t.acks {
			h.OnDisposition(a.c.link, engine.Disposition{ID: a.id, State: engine.Released, Settled: true})
		}
		return nil
	}
	for _, s := range t.sends {
		co.b.store(s)
	}
	for _, a := range t.acks {
		st := frame.DeliveryState{Type: a.state, DeliveryFailed: a.failed, UndeliverableHere: a.undeliverable}
		h.OnDisposition(a.c.link, engine.Disposition{ID: a.id, State: st, Settled: true})
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
	b.mu.Lock()
	var n *node
	e := errDeleted(p.n)
	if e == nil {
		n, e = b.admitLocked(p, d.Payload)
	}
	b.mu.Unlock()
	if e != nil {
		p.reject(d, e)
		b.topUp(p, l)
		return
	}
	t.sends = append(t.sends, txnSend{p: p, n: n, payload: append([]byte(nil), d.Payload...)})
	if !d.Settled {
		d.Accept()
	}
	b.topUp(p, l)
}

// txnDisposition holds an outcome given in transaction id
// (OnDisposition's hook); it reports whether it did.
func (b *Broker) txnDisposition(c *consumer, d *engine.Disposition) bool {
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
		wake = b.enqueueLocked(n, s.payload, wake)
		if n != s.p.n {
			wake = b.autoDeleteLocked(n, wake)
		}
	}
	b.mu.Unlock()
	b.wake(s.p.conn, wake)
}

// errDeleted returns the error for a message to n when n was removed.
func errDeleted(n *node) *engine.Error {
	if !n.deleted {
		return nil
	}
	return engine.NewError(frame.CondResourceDeleted, "node "+n.name+" was removed")
}
