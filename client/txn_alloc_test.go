package client_test

import (
	"sync/atomic"
	"testing"

	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/require"
)

// Transactional sends and receives allocate nothing per message once
// warm, as the plain ones (alloc_test.go), against the same peers with a
// coordinator that allocates nothing per message either.

// txnSink is sink counting the deliveries that came in a transaction.
type txnSink struct {
	sink
	n atomic.Int64
}

func (s *txnSink) OnDelivery(l *engine.Link, d engine.Delivery) {
	if d.TxnID() != nil {
		s.n.Add(1)
	}
}

// txnSource is source counting the dispositions given in a transaction.
type txnSource struct {
	source
	n atomic.Int64
}

func (s *txnSource) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	if d.TxnID != nil && d.State.Type == frame.StateAccepted {
		s.n.Add(1)
	}
}

func TestTxnSendAllocs(t *testing.T) {
	skipRace(t)
	ctx := testCtx(t)
	peer := &txnSink{}
	url := serveEngine(t, engine.Config{Credit: 1000, AutoAccept: true, Coordinator: &testCoordinator{}}, peer)
	_, s := txnSession(t, url, nil)
	snd, err := s.NewSender(ctx, "sink", nil)
	require.NoError(t, err)
	tx, err := s.NewTransaction(ctx)
	require.NoError(t, err)
	in := &client.SendOptions{Transaction: tx}
	msg := benchMsg()
	for range 1000 { // warm
		require.NoError(t, snd.Send(ctx, msg, in))
	}
	n := testing.AllocsPerRun(2000, func() {
		if err := snd.Send(ctx, msg, in); err != nil {
			panic(err)
		}
	})
	require.Zero(t, n, "allocations per transactional Send")
	settled := &client.SendOptions{Transaction: tx, Settled: true}
	n = testing.AllocsPerRun(2000, func() {
		if err := snd.Send(ctx, msg, settled); err != nil {
			panic(err)
		}
	})
	require.Zero(t, n, "allocations per settled transactional Send")
	require.NoError(t, tx.Commit(ctx))
	require.GreaterOrEqual(t, peer.n.Load(), int64(5000), "every send was in the transaction")
}

func TestTxnReceiveAllocs(t *testing.T) {
	skipRace(t)
	ctx := testCtx(t)
	msg := benchMsg()
	payload, err := msg.Append(nil)
	require.NoError(t, err)
	peer := &txnSource{source: source{payload: payload}}
	url := serveEngine(t, engine.Config{Coordinator: &testCoordinator{}}, peer)
	_, s := txnSession(t, url, nil)
	tx, err := s.NewTransaction(ctx)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "source", &client.ReceiverOptions{Credit: 200})
	require.NoError(t, err)
	var d client.Delivery
	for range 1000 { // warm
		require.NoError(t, rcv.ReceiveInto(ctx, &d, nil))
		require.NoError(t, tx.Accept(ctx, &d))
	}
	n := testing.AllocsPerRun(5000, func() {
		if err := rcv.ReceiveInto(ctx, &d, nil); err != nil {
			panic(err)
		}
		if err := tx.Accept(ctx, &d); err != nil {
			panic(err)
		}
	})
	require.Zero(t, n, "allocations per ReceiveInto and transactional Accept")
	require.Equal(t, msg.Body.Data[0], d.Message.Body.Data[0])
	require.NoError(t, tx.Commit(ctx))
	require.GreaterOrEqual(t, peer.n.Load(), int64(6000), "every accept was in the transaction")
}
