package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/amqptest"
	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/require"
)

// txnSession dials srv and begins a session.
func txnSession(t *testing.T, url string, o *client.ConnOptions) (*client.Conn, *client.Session) {
	t.Helper()
	ctx := testCtx(t)
	c, err := client.Dial(ctx, url, o)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	return c, s
}

// senderIn attaches a sender to address on s and declares a transaction.
func senderIn(t *testing.T, s *client.Session, address string) (*client.Sender, *client.Transaction) {
	t.Helper()
	ctx := testCtx(t)
	snd, err := s.NewSender(ctx, address, nil)
	require.NoError(t, err)
	tx, err := s.NewTransaction(ctx)
	require.NoError(t, err)
	return snd, tx
}

// sendAsyncIn queues n messages in tx with SendAsync.
func sendAsyncIn(t *testing.T, snd *client.Sender, tx *client.Transaction, n int) []client.Pending {
	t.Helper()
	ps := make([]client.Pending, n)
	for i := range ps {
		var err error
		ps[i], err = snd.SendAsync(testCtx(t), dataMsg(fmt.Sprint("m", i)), &client.SendOptions{Transaction: tx})
		require.NoError(t, err)
	}
	return ps
}

func queueStats(t *testing.T, srv *amqptest.Server, name string) broker.QueueStats {
	t.Helper()
	q, ok := srv.Queue(name)
	require.True(t, ok, "queue %s", name)
	return q
}

// A transaction of 10 sends: none is in the queue before the commit, 10
// after; rolled back, none.
func TestTxnSends(t *testing.T) {
	srv := amqptest.NewServer(t, nil)
	ctx := testCtx(t)
	_, s := txnSession(t, srv.URL, nil)
	snd, err := s.NewSender(ctx, "q", nil)
	require.NoError(t, err)

	for _, commit := range []bool{false, true} {
		tx, err := s.NewTransaction(ctx)
		require.NoError(t, err)
		require.NotEmpty(t, tx.ID())
		for i := range 10 {
			require.NoError(t, snd.Send(ctx, dataMsg(fmt.Sprint("m", i)), &client.SendOptions{Transaction: tx}))
		}
		require.Zero(t, queueStats(t, srv, "q").Depth, "held until the discharge")
		if commit {
			require.NoError(t, tx.Commit(ctx))
			require.Equal(t, 10, queueStats(t, srv, "q").Depth, "committed: 10")
		} else {
			require.NoError(t, tx.Rollback(ctx))
			require.Zero(t, queueStats(t, srv, "q").Depth, "rolled back: none")
		}
		<-tx.Done()
		require.NoError(t, tx.Err())
	}
}

// SendAsync in a transaction, then Commit at once: the discharge goes
// after every send, even those that waited for credit.
func TestTxnSendAsyncCommit(t *testing.T) {
	srv := amqptest.NewServer(t, &broker.Options{Engine: engine.Config{Credit: 3}})
	ctx := testCtx(t)
	_, s := txnSession(t, srv.URL, nil)
	snd, tx := senderIn(t, s, "q")
	ps := sendAsyncIn(t, snd, tx, 50)
	require.NoError(t, tx.Commit(ctx))
	for _, p := range ps {
		require.NoError(t, p.Wait(ctx))
	}
	require.Equal(t, 50, queueStats(t, srv, "q").Depth, "every send of the transaction committed")
}

// 10 messages received and accepted in a transaction: rolled back, all
// 10 are back in the queue and delivered again; committed, gone.
func TestTxnReceives(t *testing.T) {
	srv := amqptest.NewServer(t, nil)
	ctx := testCtx(t)
	_, s := txnSession(t, srv.URL, nil)
	snd, err := s.NewSender(ctx, "q", nil)
	require.NoError(t, err)
	for i := range 10 {
		require.NoError(t, snd.Send(ctx, dataMsg(fmt.Sprint("m", i)), nil))
	}
	rcv, err := s.NewReceiver(ctx, "q", &client.ReceiverOptions{Credit: 10})
	require.NoError(t, err)

	receive := func(tx *client.Transaction) map[string]bool {
		got := map[string]bool{}
		for range 10 {
			d, err := rcv.Receive(ctx, nil)
			require.NoError(t, err)
			got[string(d.Message.Body.Data[0])] = true
			require.NoError(t, tx.Accept(ctx, d))
		}
		return got
	}
	tx, err := s.NewTransaction(ctx)
	require.NoError(t, err)
	first := receive(tx)
	require.Len(t, first, 10)
	require.NoError(t, tx.Rollback(ctx))
	require.Eventually(t, func() bool {
		q := queueStats(t, srv, "q")
		return q.Depth+q.Unsettled == 10 && q.Released == 10 && q.Accepted == 0
	}, 10*time.Second, time.Millisecond, "rolled back: all 10 back (in the queue, or delivered again as credit allows)")

	tx, err = s.NewTransaction(ctx)
	require.NoError(t, err)
	require.Equal(t, first, receive(tx), "the same 10, delivered again")
	require.NoError(t, tx.Commit(ctx))
	require.Eventually(t, func() bool {
		q := queueStats(t, srv, "q")
		return q.Depth+q.Unsettled == 0 && q.Accepted == 10
	}, 10*time.Second, time.Millisecond, "committed: gone")
	require.Error(t, tx.Accept(ctx, &client.Delivery{}), "not a received delivery")
}

// Reject, Release and Modify in a transaction apply at the commit; a
// transaction is its connection's: a link of another session works in
// it.
func TestTxnOutcomes(t *testing.T) {
	srv := amqptest.NewServer(t, nil)
	ctx := testCtx(t)
	c, s := txnSession(t, srv.URL, nil)
	s2, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s2.NewSender(ctx, "q", nil)
	require.NoError(t, err)
	tx, err := s.NewTransaction(ctx)
	require.NoError(t, err)
	for i := range 3 {
		require.NoError(t, snd.Send(ctx, dataMsg(fmt.Sprint("m", i)), &client.SendOptions{Transaction: tx}))
	}
	require.NoError(t, tx.Commit(ctx))
	require.Equal(t, 3, queueStats(t, srv, "q").Depth)

	rcv, err := s2.NewReceiver(ctx, "q", &client.ReceiverOptions{Credit: 3})
	require.NoError(t, err)
	var ds []*client.Delivery
	for range 3 {
		d, err := rcv.Receive(ctx, nil)
		require.NoError(t, err)
		ds = append(ds, d)
	}
	tx, err = s.NewTransaction(ctx)
	require.NoError(t, err)
	require.NoError(t, tx.Reject(ctx, ds[0], &client.Error{Condition: "amqp:precondition-failed"}))
	require.NoError(t, tx.Release(ctx, ds[1]))
	require.NoError(t, tx.Modify(ctx, ds[2], client.ModifyOptions{DeliveryFailed: true}))
	require.Zero(t, queueStats(t, srv, "q").Rejected, "held until the commit")
	require.NoError(t, tx.Commit(ctx))
	require.Eventually(t, func() bool {
		q := queueStats(t, srv, "q")
		return q.Rejected == 1 && q.Released == 1 && q.Modified == 1
	}, 10*time.Second, time.Millisecond, "the outcomes applied at the commit")
}

// Work in a transaction that has ended returns ErrTransactionDone and
// writes nothing; so does a second discharge.
func TestTxnUseAfterDischarge(t *testing.T) {
	srv := amqptest.NewServer(t, nil)
	ctx := testCtx(t)
	_, s := txnSession(t, srv.URL, nil)
	snd, err := s.NewSender(ctx, "q", nil)
	require.NoError(t, err)
	require.NoError(t, snd.Send(ctx, dataMsg("plain"), nil))
	rcv, err := s.NewReceiver(ctx, "q", nil)
	require.NoError(t, err)
	d, err := rcv.Receive(ctx, nil)
	require.NoError(t, err)

	tx, err := s.NewTransaction(ctx)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	in := &client.SendOptions{Transaction: tx}
	require.ErrorIs(t, snd.Send(ctx, dataMsg("late"), in), client.ErrTransactionDone)
	_, err = snd.SendAsync(ctx, dataMsg("late"), in)
	require.ErrorIs(t, err, client.ErrTransactionDone)
	require.ErrorIs(t, tx.Accept(ctx, d), client.ErrTransactionDone)
	require.ErrorIs(t, tx.Release(ctx, d), client.ErrTransactionDone)
	require.ErrorIs(t, tx.Commit(ctx), client.ErrTransactionDone)
	require.ErrorIs(t, tx.Rollback(ctx), client.ErrTransactionDone)
	q := queueStats(t, srv, "q")
	require.Equal(t, 0, q.Depth, "nothing was sent")
	require.Equal(t, 1, q.Unsettled, "nothing was settled")
	require.Equal(t, uint64(1), q.Enqueued)

	// The links and the session's coordinator link still work.
	require.NoError(t, d.Accept(ctx))
	tx2, err := s.NewTransaction(ctx)
	require.NoError(t, err)
	require.NotEqual(t, tx.ID(), tx2.ID())
	require.NoError(t, snd.Send(ctx, dataMsg("in"), &client.SendOptions{Transaction: tx2}))
	require.NoError(t, tx2.Commit(ctx))
	require.Eventually(t, func() bool { return queueStats(t, srv, "q").Enqueued == 2 }, 10*time.Second, time.Millisecond)
}

// A peer without transactions refuses the coordinator link:
// NewTransaction returns its error, every time, and the session goes on.
func TestTxnCoordinatorRefused(t *testing.T) {
	b := startBroker(t) // an engine server without a Coordinator
	ctx := testCtx(t)
	_, s := txnSession(t, b.url(), nil)
	for range 2 {
		tx, err := s.NewTransaction(ctx)
		require.Nil(t, tx)
		var e *client.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, "amqp:not-implemented", e.Condition)
		require.True(t, e.Remote)
		require.Equal(t, client.ScopeLink, e.Scope)
	}
	snd, err := s.NewSender(ctx, "q/after", nil)
	require.NoError(t, err)
	require.NoError(t, snd.Send(ctx, dataMsg("x"), nil))
}

// testCoordinator declares transactions and accepts their discharges;
// with refuse set it refuses every discharge, with declareErr every
// declare.
type testCoordinator struct {
	refuse, declareErr bool
	seen               *atomic.Int64 // when set, read at each discharge into seenAt
	// when set, Declare (Discharge, with gateDischarge) sends on
	// entered, then waits for gate to close
	entered, gate chan struct{}
	gateDischarge bool

	mu         sync.Mutex
	n          int
	discharged []bool  // the fail flag of each discharge
	seenAt     []int64 // *seen at each discharge
}

func (c *testCoordinator) Declare(*engine.Link) ([]byte, *engine.Error) {
	if c.gate != nil && !c.gateDischarge {
		c.entered <- struct{}{}
		<-c.gate
	}
	if c.declareErr {
		return nil, engine.NewError(frame.CondResourceLimitExceeded, "no more transactions")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return []byte{byte(c.n)}, nil
}

func (c *testCoordinator) Discharge(_ *engine.Link, _ []byte, fail bool) *engine.Error {
	if c.gate != nil && c.gateDischarge {
		c.entered <- struct{}{}
		<-c.gate
	}
	c.mu.Lock()
	c.discharged = append(c.discharged, fail)
	if c.seen != nil {
		c.seenAt = append(c.seenAt, c.seen.Load())
	}
	c.mu.Unlock()
	if c.refuse {
		return engine.NewError(frame.CondTransactionRollback, "could not commit")
	}
	return nil
}

func (c *testCoordinator) fails() []bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]bool(nil), c.discharged...)
}

// A discharge the coordinator refuses returns its *Error, of
// ScopeTransaction, and the transaction is over; a declare refused
// returns its error.
func TestTxnDischargeRefused(t *testing.T) {
	co := &testCoordinator{refuse: true}
	url := serveEngine(t, engine.Config{Coordinator: co, Credit: 100, AutoAccept: true}, sink{})
	ctx := testCtx(t)
	_, s := txnSession(t, url, nil)
	snd, tx := senderIn(t, s, "sink")
	require.NoError(t, snd.Send(ctx, dataMsg("x"), &client.SendOptions{Transaction: tx}))
	err := tx.Commit(ctx)
	var e *client.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, "amqp:transaction:rollback", e.Condition)
	require.Equal(t, "could not commit", e.Description)
	require.Equal(t, client.ScopeTransaction, e.Scope)
	require.True(t, e.Remote)
	require.Contains(t, err.Error(), "transaction ended")
	<-tx.Done()
	require.Equal(t, err, tx.Err())
	require.ErrorIs(t, snd.Send(ctx, dataMsg("y"), &client.SendOptions{Transaction: tx}), client.ErrTransactionDone)
	require.ErrorIs(t, tx.Rollback(ctx), client.ErrTransactionDone)
	require.NoError(t, snd.Send(ctx, dataMsg("z"), nil), "the link goes on")
	require.Equal(t, []bool{false}, co.fails())

	url = serveEngine(t, engine.Config{Coordinator: &testCoordinator{declareErr: true}}, sink{})
	_, s = txnSession(t, url, nil)
	_, err = s.NewTransaction(ctx)
	require.ErrorAs(t, err, &e)
	require.Equal(t, "amqp:resource-limit-exceeded", e.Condition)
	require.Equal(t, client.ScopeTransaction, e.Scope)
}

// A NewTransaction whose ctx ends before the declare's answer returns
// ctx's error, and the transaction declared after all is rolled back.
func TestTxnDeclareAbandoned(t *testing.T) {
	co := &testCoordinator{entered: make(chan struct{}), gate: make(chan struct{})}
	url := serveEngine(t, engine.Config{Coordinator: co}, sink{})
	ctx := testCtx(t)
	_, s := txnSession(t, url, nil)
	short, cancel := context.WithCancel(ctx)
	go func() {
		<-co.entered // the coordinator has the declare
		cancel()
	}()
	tx, err := s.NewTransaction(short)
	require.Nil(t, tx)
	require.ErrorIs(t, err, context.Canceled)
	close(co.gate) // the declare is answered now
	require.Eventually(t, func() bool { return len(co.fails()) == 1 }, 10*time.Second, time.Millisecond)
	require.Equal(t, []bool{true}, co.fails(), "rolled back")
	go func() { <-co.entered }()
	tx, err = s.NewTransaction(ctx)
	require.NoError(t, err, "the coordinator link goes on")
	require.NoError(t, tx.Commit(ctx))
	require.Equal(t, []bool{true, false}, co.fails())
}

// A Commit whose ctx ends after the discharge was written returns an
// error matching ErrOutcomeUnknown and ctx's; Done and Err give the
// answer when it comes.
func TestTxnCommitOutcomeUnknown(t *testing.T) {
	co := &testCoordinator{entered: make(chan struct{}), gate: make(chan struct{}), gateDischarge: true}
	url := serveEngine(t, engine.Config{Coordinator: co}, sink{})
	ctx := testCtx(t)
	_, s := txnSession(t, url, nil)
	tx, err := s.NewTransaction(ctx)
	require.NoError(t, err)
	short, cancel := context.WithCancel(ctx)
	go func() {
		<-co.entered // the coordinator has the discharge
		cancel()
	}()
	err = tx.Commit(short)
	require.ErrorIs(t, err, client.ErrOutcomeUnknown)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, tx.Err(), "no answer yet")
	close(co.gate)
	<-tx.Done()
	require.NoError(t, tx.Err(), "committed")
	require.Equal(t, []bool{false}, co.fails())
	require.ErrorIs(t, tx.Commit(ctx), client.ErrTransactionDone)
}

// Sends waiting for credit: Rollback withdraws them (ErrTransactionDone,
// never sent); a Commit waits for them, and when its ctx ends first the
// transaction is rolled back instead.
func TestTxnWaitingSends(t *testing.T) {
	co := &testCoordinator{}
	url := serveEngine(t, engine.Config{Coordinator: co}, sink{}) // no credit for producers
	ctx := testCtx(t)
	_, s := txnSession(t, url, nil)
	snd, tx := senderIn(t, s, "sink")
	ps := sendAsyncIn(t, snd, tx, 3)
	require.NoError(t, tx.Rollback(ctx))
	for _, p := range ps {
		require.ErrorIs(t, p.Wait(ctx), client.ErrTransactionDone)
	}

	tx, err := s.NewTransaction(ctx)
	require.NoError(t, err)
	p, err := snd.SendAsync(ctx, dataMsg("x"), &client.SendOptions{Transaction: tx})
	require.NoError(t, err)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	err = tx.Commit(short)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotErrorIs(t, err, client.ErrOutcomeUnknown, "the discharge was not written")
	<-tx.Done()
	require.NoError(t, tx.Err())
	require.ErrorIs(t, p.Wait(ctx), client.ErrTransactionDone)
	require.Equal(t, []bool{true, true}, co.fails(), "both rolled back")

	// A Send that gave up waiting is no work of the transaction: the
	// Commit does not wait for it.
	tx, err = s.NewTransaction(ctx)
	require.NoError(t, err)
	short, cancel2 := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel2()
	require.ErrorIs(t, snd.Send(short, dataMsg("x"), &client.SendOptions{Transaction: tx}), context.DeadlineExceeded)
	require.NoError(t, tx.Commit(ctx))
	require.Equal(t, []bool{true, true, false}, co.fails(), "committed")

	// A transaction of another connection is refused.
	_, s2 := txnSession(t, url, nil)
	snd2, err := s2.NewSender(ctx, "sink", nil)
	require.NoError(t, err)
	tx, err = s.NewTransaction(ctx)
	require.NoError(t, err)
	_, err = snd2.SendAsync(ctx, dataMsg("x"), &client.SendOptions{Transaction: tx})
	require.ErrorContains(t, err, "another connection")
}

// lateSink takes messages, gives producers credit only when the test
// calls grant, and counts the messages that came in a transaction.
type lateSink struct {
	engine.NopHandler
	txnMsgs atomic.Int64
	mu      sync.Mutex
	links   []*engine.Link
}

func (h *lateSink) OnLinkAttach(l *engine.Link) {
	h.mu.Lock()
	h.links = append(h.links, l)
	h.mu.Unlock()
}

func (h *lateSink) OnDelivery(l *engine.Link, d engine.Delivery) {
	if d.TxnID() != nil {
		h.txnMsgs.Add(1)
	}
}

func (h *lateSink) grant(n uint32) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range h.links {
		driver.Of(l.Conn()).Do(func(*engine.Conn) { l.Flow(n) })
	}
}

// A Commit after sends still waiting for credit writes its discharge
// after them: the coordinator sees every one before the discharge.
func TestTxnCommitWaitsForSends(t *testing.T) {
	h := &lateSink{}
	co := &testCoordinator{seen: &h.txnMsgs}
	url := serveEngine(t, engine.Config{Coordinator: co, AutoAccept: true}, h)
	ctx := testCtx(t)
	_, s := txnSession(t, url, nil)
	snd, tx := senderIn(t, s, "late")
	ps := sendAsyncIn(t, snd, tx, 5)
	committed := make(chan error, 1)
	go func() { committed <- tx.Commit(ctx) }()
	// Credit for 2 at a time, a millisecond apart, until the commit is
	// answered: the sends go in turns, the discharge after the last.
	for done := false; !done; {
		select {
		case err := <-committed:
			require.NoError(t, err)
			done = true
		case <-time.After(time.Millisecond):
			h.grant(2)
		}
	}
	for _, p := range ps {
		require.NoError(t, p.Wait(ctx))
	}
	require.Equal(t, []bool{false}, co.fails())
	co.mu.Lock()
	defer co.mu.Unlock()
	require.Equal(t, []int64{5}, co.seenAt, "the discharge after the 5 sends")
}

// A transaction ends with the connection: Commit returns the loss's
// error. With Reconnect too: the transaction does not survive it, and a
// new one works on the new connection.
func TestTxnConnectionLost(t *testing.T) {
	b := broker.New(broker.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cl := &cutListener{Listener: ln}
	go b.Serve(cl)
	t.Cleanup(func() { b.Close() })
	ctx := testCtx(t)
	c, s := txnSession(t, "amqp://"+ln.Addr().String(),
		&client.ConnOptions{Reconnect: &client.ReconnectOptions{Backoff: 10 * time.Millisecond}})
	snd, tx := senderIn(t, s, "q")
	require.NoError(t, snd.Send(ctx, dataMsg("lost"), &client.SendOptions{Transaction: tx}))
	cl.cut()
	<-tx.Done()
	var e *client.Error
	require.ErrorAs(t, tx.Err(), &e)
	require.Equal(t, client.ScopeConn, e.Scope)
	require.ErrorAs(t, tx.Commit(ctx), &e, "the loss's error")
	require.ErrorAs(t, snd.Send(ctx, dataMsg("late"), &client.SendOptions{Transaction: tx}), &e)

	tx2, err := s.NewTransaction(ctx)
	require.NoError(t, err, "a new transaction on the connection dialled again")
	require.NoError(t, snd.Send(ctx, dataMsg("again"), &client.SendOptions{Transaction: tx2}))
	require.NoError(t, tx2.Commit(ctx))
	q, _ := b.Queue("q")
	require.Equal(t, 1, q.Depth, "only the committed transaction's message")
	require.NoError(t, c.Close())
	require.ErrorIs(t, tx2.Commit(ctx), client.ErrTransactionDone)
	_, err = s.NewTransaction(ctx)
	require.Error(t, err, "a closed connection")
}

// cutListener records the connections it accepts, to cut them.
type cutListener struct {
	net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func (l *cutListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
	}
	return c, err
}

func (l *cutListener) cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		c.Close()
	}
	l.conns = nil
}

// Concurrent transactions on one session, from many goroutines, each
// with its sends: each commits or rolls back on its own.
func TestTxnConcurrent(t *testing.T) {
	srv := amqptest.NewServer(t, nil)
	ctx := testCtx(t)
	_, s := txnSession(t, srv.URL, nil)
	snd, err := s.NewSender(ctx, "q", nil)
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			tx, err := s.NewTransaction(ctx)
			if err != nil {
				errs <- err
				return
			}
			for range 5 {
				if err := snd.Send(ctx, dataMsg("c"), &client.SendOptions{Transaction: tx}); err != nil {
					errs <- err
					return
				}
			}
			if g%2 == 0 {
				err = tx.Commit(ctx)
			} else {
				err = tx.Rollback(ctx)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, 20, queueStats(t, srv, "q").Depth, "4 committed transactions of 5")
}

// Sends and outcomes in a transaction take effect at Commit; Rollback
// undoes them. The broker here is package broker, which has a
// transaction coordinator (RabbitMQ has none: NewTransaction returns
// its refusal).
func ExampleSession_NewTransaction() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	b := broker.New(broker.Options{})
	go b.Serve(ln)
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	c, err := client.Dial(ctx, "amqp://"+ln.Addr().String(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	snd, err := s.NewSender(ctx, "orders", nil)
	if err != nil {
		log.Fatal(err)
	}
	send := func(tx *client.Transaction, body string) {
		msg := message.Message{Body: message.Body{Kind: message.BodyData, Data: [][]byte{[]byte(body)}}}
		if err := snd.Send(ctx, &msg, &client.SendOptions{Transaction: tx}); err != nil {
			log.Fatal(err)
		}
	}

	tx, err := s.NewTransaction(ctx)
	if err != nil {
		log.Fatal(err)
	}
	send(tx, "order 1")
	send(tx, "order 2")
	if err := tx.Commit(ctx); err != nil { // both are in the queue now
		log.Fatal(err)
	}
	tx, err = s.NewTransaction(ctx)
	if err != nil {
		log.Fatal(err)
	}
	send(tx, "order 3")
	if err := tx.Rollback(ctx); err != nil { // order 3 is gone
		log.Fatal(err)
	}
	// The transaction is over: nothing more is sent in it.
	err = snd.Send(ctx, &message.Message{}, &client.SendOptions{Transaction: tx})
	fmt.Println(errors.Is(err, client.ErrTransactionDone))

	// Receive in a transaction: accepted and committed, the messages
	// are consumed.
	rcv, err := s.NewReceiver(ctx, "orders", &client.ReceiverOptions{Credit: 10})
	if err != nil {
		log.Fatal(err)
	}
	tx, err = s.NewTransaction(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for range 2 {
		d, err := rcv.Receive(ctx, nil)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s\n", d.Message.Body.Data[0])
		if err := tx.Accept(ctx, d); err != nil {
			log.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// true
	// order 1
	// order 2
}
