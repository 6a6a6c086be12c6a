package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// txnClient is a controller scripted in events: it declares a
// transaction, then sends n messages to "q" in it (send), or receives n
// from "q" and accepts them in it (receive); then it discharges (commit
// or rollback) and closes.
type txnClient struct {
	engine.NopHandler
	n         int
	send      bool
	fail      bool
	ctrl, l   *engine.Link
	txn       []byte
	done      int
	discharge chan string
	// payload is what it sends (nil: data("m")); outcomes counts the
	// outcomes of its sends by type.
	payload  []byte
	outcomes map[string]int
}

func (h *txnClient) OnConnectionOpen(c *engine.Conn) { c.Begin() }

func (h *txnClient) OnSessionBegin(s *engine.Session) {
	h.ctrl, _ = s.AttachCoordinator(engine.LinkOptions{})
	if h.send {
		h.l, _ = s.AttachSender(engine.LinkOptions{Address: "q"})
	}
}

func (h *txnClient) OnFlow(l *engine.Link) {
	if l == h.ctrl && h.txn == nil && l.Credit() > 0 {
		h.txn = []byte{} // asked
		l.Declare()
	}
	h.sendSome()
}

// OnWritable resumes sending once the output drained.
func (h *txnClient) OnWritable(*engine.Conn) { h.sendSome() }

func (h *txnClient) sendSome() {
	for h.send && len(h.txn) > 0 && h.done < h.n && h.l.Credit() > 0 {
		m := h.payload
		if m == nil {
			m = data("m")
		}
		if _, err := h.l.SendTxn(h.txn, nil, m, false); err != nil {
			return
		}
		h.done++
	}
}

func (h *txnClient) OnDelivery(l *engine.Link, d engine.Delivery) {
	if h.done >= h.n {
		return // redelivered after the rollback: left unsettled, back to the queue when the link goes
	}
	d.AcceptTxn(h.txn)
	if h.done++; h.done == h.n {
		h.ctrl.Discharge(h.txn, h.fail)
	}
}

func (h *txnClient) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	switch {
	case l == h.ctrl && d.State.Descriptor == amqpsax.DescriptorDeclared:
		h.txn = append([]byte(nil), d.TxnID...)
		if !h.send { // the receiver attaches once the transaction is there
			h.l, _ = l.Session().AttachReceiver(engine.LinkOptions{Address: "q", Credit: uint32(h.n)})
		}
		h.sendSome()
	case l == h.ctrl:
		h.discharge <- d.State.Type.String()
	case l == h.l && h.send:
		if h.outcomes == nil {
			h.outcomes = map[string]int{}
		}
		h.outcomes[d.State.Type.String()]++
		if d.ID == uint32(h.n) { // the last (ids from 1: the declare took 0)
			h.ctrl.Discharge(h.txn, h.fail)
		}
	}
}

func runTxn(t *testing.T, addr string, h *txnClient) string {
	h.discharge = make(chan string, 1)
	d, err := driver.Dial(context.Background(), "tcp", addr, engine.Config{}, nil, h)
	require.NoError(t, err)
	defer func() { d.Close(); d.Wait() }()
	select {
	case s := <-h.discharge:
		return s
	case <-time.After(wait):
		t.Fatal("no discharge")
	}
	return ""
}

func depth(t *testing.T, b *broker.Broker) int {
	t.Helper()
	q, ok := b.Queue("q")
	require.True(t, ok)
	return q.Depth + q.Unsettled
}

// TestTxnSends: 10 messages sent in a transaction are in the queue once
// it commits, and none when it rolls back.
func TestTxnSends(t *testing.T) {
	addr, b := start(t, broker.Options{})
	assert.Equal(t, "accepted", runTxn(t, addr, &txnClient{n: 10, send: true, fail: true}))
	q, _ := b.Queue("q")
	assert.Zero(t, q.Depth, "rolled back: none")
	assert.Equal(t, "accepted", runTxn(t, addr, &txnClient{n: 10, send: true}))
	q, _ = b.Queue("q")
	assert.Equal(t, 10, q.Depth, "committed: 10")
}

// TestTxnReceives: 10 messages received and accepted in a transaction
// that rolls back are all back in the queue (and delivered again to the
// next receiver); committed, they are gone.
func TestTxnReceives(t *testing.T) {
	addr, b := start(t, broker.Options{})
	require.Equal(t, "accepted", runTxn(t, addr, &txnClient{n: 10, send: true}))
	require.Equal(t, 10, depth(t, b))
	assert.Equal(t, "accepted", runTxn(t, addr, &txnClient{n: 10, fail: true}))
	require.Eventually(t, func() bool { q, _ := b.Queue("q"); return q.Depth == 10 }, wait, time.Millisecond,
		"rolled back: all 10 back")
	assert.Equal(t, "accepted", runTxn(t, addr, &txnClient{n: 10}))
	require.Eventually(t, func() bool { return depth(t, b) == 0 }, wait, time.Millisecond, "committed: gone")
}
