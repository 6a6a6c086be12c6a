package client

import (
	"context"
	"errors"
	"sync"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// This file is transactions (AMQP 1.0 part 4) for the controller: a
// Transaction declared on a Session (Session.NewTransaction), sends in it
// (SendOptions.Transaction), outcomes in it (Transaction.Accept, Reject,
// Release, Modify), and its discharge (Commit, Rollback).
//
// A session's coordinator link (txnCtl) is attached at its first
// NewTransaction and kept; it carries the declares and discharges of
// every transaction of the session. A transaction counts the work
// admitted in it and not yet written (pending): Commit's discharge is
// written once that is zero, after the work, so that the coordinator
// sees all of it; Rollback withdraws the sends still waiting and
// discharges at once. Work on a transaction no longer open is refused
// where it is admitted (the caller's goroutine) and again where it is
// written (the connection's), so that nothing is written under a
// txn-id that has been discharged.

// ErrTransactionDone is the error of work in a transaction, and of Commit
// or Rollback, after the transaction was committed or rolled back (or
// its discharge refused): nothing was written.
var ErrTransactionDone = errors.New("client: transaction committed or rolled back already")

// Transaction is a transaction (part 4 §4.3) declared by
// Session.NewTransaction: sends (SendOptions.Transaction) and outcomes
// (Accept, Reject, Release, Modify) given in it take effect when Commit
// succeeds and are undone by Rollback. A transaction is its
// connection's: senders and receivers of any session of the connection
// may work in it. Every method is safe to call from any goroutine.
//
// A transaction ends with Commit or Rollback, with a discharge the
// coordinator refuses (both return its *Error, of ScopeTransaction: the
// work is rolled back), or with its coordinator link or the connection
// (their *Error: the coordinator rolls the work back). Once it has ended,
// work in it and a second Commit or Rollback return ErrTransactionDone
// (or the error that ended it) and write nothing. It does not survive a
// reconnect (ConnOptions.Reconnect): a transaction open when the
// connection is lost ends with the loss's error; declare a new one.
type Transaction struct {
	ctl *txnCtl
	g   *gen
	id  []byte // the txn-id, set by the declared answer, read only after it

	declared    chan struct{} // closed at the declare's answer or the end
	done        chan struct{} // closed at the end: result and endErr set
	dischargeFn func(*engine.Conn)

	mu        sync.Mutex
	state     txnState
	fail      bool  // the discharge asked for is a rollback
	pending   int   // work admitted in it and not yet written
	abandoned bool  // NewTransaction gave up before the declared answer
	result    error // the discharge's answer (nil: done as asked), or the end's error
	endErr    error // what work returns once it has ended
}

type txnState uint8

const (
	txnDeclaring  txnState = iota // the declare sent, not answered
	txnOpen                       // work is admitted
	txnEnding                     // Commit or Rollback asked, the discharge not written
	txnDischarged                 // the discharge written, not answered
	txnOver                       // ended: result set
)

// txnCtl is a session's coordinator link (part 4 §4.1), attached at the
// first NewTransaction and kept until it ends.
type txnCtl struct {
	linkCore                // its mu guards txns
	ready     chan struct{} // closed once the attach has its answer: attachErr set
	attachErr error

	txns map[*Transaction]struct{} // not yet ended

	// the connection's goroutine only
	ops      []txnOp // declares and discharges waiting for credit
	inflight map[uint32]txnOp
}

// txnOp is a declare or a discharge on the coordinator link.
type txnOp struct {
	t         *Transaction
	discharge bool
}

// NewTransaction declares a transaction with the peer's coordinator and
// returns it once the coordinator has answered with its txn-id; ctx
// bounds the wait. The session's coordinator link is attached at its
// first NewTransaction and kept for the next ones.
//
// A peer without transactions refuses the coordinator link:
// NewTransaction returns the peer's *Error at once (the engine without a
// Coordinator answers with no target and detaches with
// amqp:not-implemented, ScopeLink; RabbitMQ 3 ends the session with
// amqp:not-implemented, ScopeSession: begin another). A coordinator
// that refuses the declare returns its *Error, of ScopeTransaction. When ctx ends before the answer, ctx's
// error is returned and a transaction declared after all is rolled
// back.
func (s *Session) NewTransaction(ctx context.Context) (*Transaction, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxErr(ctx)
	}
	for {
		ctl, err := s.txnController(ctx)
		if err != nil {
			return nil, err
		}
		t := &Transaction{ctl: ctl, g: ctl.g, declared: make(chan struct{}), done: make(chan struct{})}
		t.dischargeFn = func(*engine.Conn) { ctl.discharge(t) }
		_, err = s.c.call(ctx, ctl.g, func(*engine.Conn) error { return ctl.declare(t) })
		if err != nil && ctx.Err() != nil {
			// call stops waiting when ctx ends, whether or not the
			// declare has gone out (or still goes, queued): one
			// declared after all is rolled back, as below.
			t.abandon()
			return nil, ctxErr(ctx)
		}
		if err == nil {
			select {
			case <-t.declared:
			case <-ctx.Done():
				t.abandon()
				return nil, ctxErr(ctx)
			}
			t.mu.Lock()
			err = t.result
			over := t.state == txnOver
			t.mu.Unlock()
			if !over {
				return t, nil
			}
		}
		if s.redeclare(ctl) {
			continue // its connection was lost and is dialled again
		}
		return nil, err
	}
}

// redeclare reports that a declare on ctl failed because ctl's
// connection was lost while the Conn dials again (ReconnectOptions): the
// session then forgets ctl, and a declare on the next connection may
// succeed. (A transaction of the lost connection, declared or not, is
// rolled back by its coordinator: part 4 §4.3.)
func (s *Session) redeclare(ctl *txnCtl) bool {
	if !ctl.g.lost() || s.c.rc == nil || s.c.Err() != nil {
		return false
	}
	s.mu.Lock()
	if s.txc == ctl {
		s.txc = nil
	}
	s.mu.Unlock()
	return true
}

// txnController returns the session's coordinator link, attaching one
// when it has none (or the last one ended).
func (s *Session) txnController(ctx context.Context) (*txnCtl, error) {
	s.mu.Lock()
	ctl := s.txc
	start := ctl == nil || ctl.Err() != nil
	if start {
		ctl = &txnCtl{ready: make(chan struct{}), txns: map[*Transaction]struct{}{}, inflight: map[uint32]txnOp{}}
		ctl.init(s, ctl, (*engine.Session).AttachCoordinator, engine.LinkOptions{}, "txn")
		ctl.again = false // a transaction does not survive a reconnect
		s.txc = ctl
	}
	s.mu.Unlock()
	if start {
		ctl.start(ctx)
	}
	select {
	case <-ctl.ready:
	case <-ctx.Done():
		return nil, ctxErr(ctx)
	}
	if ctl.attachErr != nil {
		return nil, ctl.attachErr
	}
	return ctl, nil
}

// start attaches the coordinator link and waits for the answer (a
// refusal is the peer's detach).
func (ctl *txnCtl) start(ctx context.Context) {
	defer close(ctl.ready)
	if err := ctl.open(ctx); err != nil {
		ctl.attachErr = err
		ctl.mu.Lock()
		ctl.setErrLocked(err) // the next NewTransaction attaches another
		ctl.mu.Unlock()
	}
}

// flowed: OnFlow or OnWritable.
func (ctl *txnCtl) flowed() { ctl.pump() }

// ended runs when the coordinator link has ended (on the connection's
// goroutine, or with no connection up): its transactions end with err.
func (ctl *txnCtl) ended(err error) {
	ctl.mu.Lock()
	err = ctl.setErrLocked(err)
	ts := make([]*Transaction, 0, len(ctl.txns))
	for t := range ctl.txns {
		ts = append(ts, t)
	}
	clear(ctl.txns)
	ctl.mu.Unlock()
	for _, t := range ts {
		t.end(err, err)
	}
	ctl.endLink(err)
}

// declare sends t's declare, on the connection's goroutine.
func (ctl *txnCtl) declare(t *Transaction) error {
	ctl.mu.Lock()
	if ctl.err != nil {
		err := ctl.err
		ctl.mu.Unlock()
		return err
	}
	ctl.txns[t] = struct{}{}
	ctl.mu.Unlock()
	ctl.ops = append(ctl.ops, txnOp{t: t})
	ctl.pump()
	return nil
}

// discharge writes t's discharge, on the connection's goroutine, once
// Commit or Rollback asked for it and, for a commit, the work admitted
// has been written. A rollback withdraws the sends still waiting.
func (ctl *txnCtl) discharge(t *Transaction) {
	t.mu.Lock()
	st, fail := t.state, t.fail
	t.mu.Unlock()
	if st != txnEnding {
		return // over already, or written already
	}
	// A rollback withdraws the sends waiting; a commit drops those whose
	// Send gave up (never to be sent) and waits for the others.
	ctl.s.c.withdrawTxn(t, !fail)
	t.mu.Lock()
	if t.state != txnEnding || (t.pending > 0 && !t.fail) {
		t.mu.Unlock()
		return // work still to write: the last write calls again
	}
	t.state = txnDischarged
	t.mu.Unlock()
	ctl.ops = append(ctl.ops, txnOp{t: t, discharge: true})
	ctl.pump()
}

// pump writes the declares and discharges waiting, as the coordinator
// link's credit allows; it runs on the connection's goroutine (OnFlow,
// OnWritable, and when one is queued).
func (ctl *txnCtl) pump() {
	l := ctl.l
	if l == nil {
		return
	}
	i := 0
	for ; i < len(ctl.ops); i++ {
		op := ctl.ops[i]
		var id uint32
		var err error
		if op.discharge {
			id, err = l.Discharge(op.t.id, op.t.fail)
		} else {
			id, err = l.Declare()
		}
		switch {
		case err == nil:
			ctl.inflight[id] = op
			continue
		case errors.Is(err, engine.ErrTryLater):
			goto out // OnFlow or OnWritable resumes
		}
		ctl.forget(op.t)
		e := sendErr(l, err)
		op.t.end(e, e)
	}
out:
	n := copy(ctl.ops, ctl.ops[i:])
	clear(ctl.ops[n:])
	ctl.ops = ctl.ops[:n]
}

func (ctl *txnCtl) forget(t *Transaction) {
	ctl.mu.Lock()
	delete(ctl.txns, t)
	ctl.mu.Unlock()
}

// disposed takes the coordinator's answer to a declare or a discharge,
// on the connection's goroutine.
func (ctl *txnCtl) disposed(d engine.DeliveryUpdate) {
	op, ok := ctl.inflight[d.ID]
	if !ok {
		return
	}
	declared := d.State.Descriptor == amqpsax.DescriptorDeclared
	if !declared && d.State.Type != frame.StateAccepted && d.State.Type != frame.StateRejected && !d.Settled {
		return // no outcome yet
	}
	delete(ctl.inflight, d.ID)
	t := op.t
	switch {
	case d.State.Type == frame.StateRejected:
		e := &Error{Condition: string(d.State.Error.Condition), Description: string(d.State.Error.Description),
			Remote: true, Scope: ScopeTransaction}
		if e.Condition == "" {
			e.Condition = "amqp:transaction:rollback"
		}
		ctl.forget(t)
		t.end(e, ErrTransactionDone)
	case !op.discharge && declared && len(d.TxnID) > 0:
		t.id = append([]byte(nil), d.TxnID...)
		t.mu.Lock()
		t.state = txnOpen
		abandoned := t.abandoned
		if abandoned {
			t.state, t.fail = txnEnding, true
		}
		t.mu.Unlock()
		close(t.declared)
		if abandoned {
			ctl.discharge(t) // nobody has it: roll it back
		}
	case op.discharge && d.State.Type == frame.StateAccepted:
		ctl.forget(t)
		t.end(nil, ErrTransactionDone)
	default:
		e := &Error{Condition: "amqp:internal-error", Description: "the coordinator answered a " + opName(op) +
			" with " + d.State.Type.String(), Remote: true, Scope: ScopeTransaction}
		ctl.forget(t)
		t.end(e, ErrTransactionDone)
	}
}

func opName(op txnOp) string {
	if op.discharge {
		return "discharge"
	}
	return "declare"
}

// end ends t: result is what Commit, Rollback or NewTransaction return,
// endErr what work in it returns from now on.
func (t *Transaction) end(result, endErr error) {
	t.mu.Lock()
	if t.state == txnOver {
		t.mu.Unlock()
		return
	}
	declaring := t.state == txnDeclaring
	t.state, t.result, t.endErr = txnOver, result, endErr
	t.mu.Unlock()
	if declaring {
		close(t.declared)
	}
	close(t.done)
}

// abandon is NewTransaction giving up before the answer: a transaction
// declared after all is rolled back.
func (t *Transaction) abandon() {
	t.mu.Lock()
	switch t.state {
	case txnDeclaring:
		t.abandoned = true
	case txnOpen:
		t.state, t.fail = txnEnding, true
		t.mu.Unlock()
		t.g.d.Do(t.dischargeFn)
		return
	}
	t.mu.Unlock()
}

// ID returns the transaction's txn-id, given by the coordinator. It must
// not be modified.
func (t *Transaction) ID() []byte { return t.id }

// Done is closed when the transaction has ended (Err tells how).
func (t *Transaction) Done() <-chan struct{} { return t.done }

// Err returns nil while the transaction is open or being discharged;
// once it has ended, nil after the discharge Commit or Rollback asked
// for was accepted, else the error that ended it (the coordinator's
// *Error of ScopeTransaction, or that of its link or the connection).
func (t *Transaction) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.result
}

// Commit discharges the transaction with its work kept (part 4 §4.3)
// and waits for the coordinator's answer within ctx. Work admitted
// before Commit (a Send or SendAsync in it that returned no error, an
// outcome given in it) is written first, then the discharge: a send
// still waiting for credit delays the discharge until it has gone. It
// returns nil once the coordinator has committed; the coordinator's
// *Error (ScopeTransaction, such as amqp:transaction:rollback: the work
// was rolled back) when it refused; the error of the coordinator link
// or the connection when they ended first (the coordinator rolls the
// work back). The transaction is over in every case.
//
// When ctx ends before the discharge is written, the transaction is
// rolled back instead and ctx's error returned; after it was written,
// the error matches ErrOutcomeUnknown and ctx's error, and Err tells
// the answer once Done is closed.
func (t *Transaction) Commit(ctx context.Context) error { return t.discharge(ctx, false) }

// Rollback discharges the transaction with its work undone (part 4
// §4.3) and waits for the coordinator's answer within ctx: sends of the
// transaction still waiting for credit are withdrawn (they return
// ErrTransactionDone, never written), messages acquired and given an
// outcome in it go back to their queues. It returns as Commit does;
// when ctx ends first, the rollback still goes out.
func (t *Transaction) Rollback(ctx context.Context) error { return t.discharge(ctx, true) }

func (t *Transaction) discharge(ctx context.Context, fail bool) error {
	if err := ctx.Err(); err != nil {
		return ctxErr(ctx)
	}
	t.mu.Lock()
	if t.state != txnOpen {
		err := t.workErrLocked()
		t.mu.Unlock()
		return err
	}
	t.state, t.fail = txnEnding, fail
	t.mu.Unlock()
	t.g.d.Do(t.dischargeFn) // when the connection has ended, so has the link: t with it
	select {
	case <-t.done:
		return t.Err()
	case <-ctx.Done():
	}
	t.mu.Lock()
	st := t.state
	if st == txnEnding {
		t.fail = true // not written: roll back
	}
	t.mu.Unlock()
	switch st {
	case txnOver:
		return t.Err()
	case txnEnding:
		t.g.d.Do(t.dischargeFn)
		return ctxErr(ctx)
	}
	return unknownOutcome{ctxErr(ctx)}
}

// workErrLocked is the error of work in t when it is not open.
func (t *Transaction) workErrLocked() error {
	if t.state == txnOver && t.endErr != nil {
		return t.endErr
	}
	return ErrTransactionDone
}

// admit counts one piece of work in t for a link of connection c: nil
// while t is open, else the error to return (nothing is written).
func (t *Transaction) admit(c *Conn) error {
	if t.ctl.s.c != c {
		return errors.New("client: a transaction of another connection")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.state != txnOpen {
		return t.workErrLocked()
	}
	t.pending++
	return nil
}

// writable reports, on the connection's goroutine, that work admitted
// in t may still be written: its discharge has not been.
func (t *Transaction) writable() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state == txnOpen || t.state == txnEnding
}

// settled uncounts one piece of work admitted in t: written, failed or
// withdrawn. The last of a Commit's lets its discharge go.
func (t *Transaction) settled() {
	t.mu.Lock()
	t.pending--
	last := t.pending == 0 && t.state == txnEnding
	t.mu.Unlock()
	if last {
		t.g.d.Do(t.dischargeFn)
	}
}

// Accept accepts and settles the delivery in the transaction (part 4
// §4.4.2): the message is consumed when the transaction commits, and
// goes back to its queue when it rolls back. Like Delivery.Accept it
// queues the disposition and returns; it returns ErrTransactionDone
// (nothing written) once the transaction has ended. A delivery the
// sender settled has no outcome to give: it does nothing.
func (t *Transaction) Accept(ctx context.Context, d *Delivery) error {
	return t.dispose(ctx, d, dispReq{state: frame.StateAccepted})
}

// Reject rejects and settles the delivery in the transaction, with e
// (which may be nil), as Accept does.
func (t *Transaction) Reject(ctx context.Context, d *Delivery, e *Error) error {
	dr, err := rejectReq(e)
	if err != nil {
		return err
	}
	return t.dispose(ctx, d, dr)
}

// Release releases and settles the delivery in the transaction, as
// Accept does.
func (t *Transaction) Release(ctx context.Context, d *Delivery) error {
	return t.dispose(ctx, d, dispReq{state: frame.StateReleased})
}

// Modify gives the delivery the modified outcome in the transaction and
// settles it, as Accept does.
func (t *Transaction) Modify(ctx context.Context, d *Delivery, o ModifyOptions) error {
	dr, err := modifyReq(o)
	if err != nil {
		return err
	}
	return t.dispose(ctx, d, dr)
}

func (t *Transaction) dispose(ctx context.Context, d *Delivery, dr dispReq) error {
	if d.r == nil {
		return errors.New("client: not a received delivery")
	}
	if d.Settled {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return ctxErr(ctx)
	}
	if err := t.admit(d.r.s.c); err != nil {
		return err
	}
	dr.id, dr.epoch, dr.txn = d.DeliveryID, d.epoch, t
	if err := d.r.dispose(ctx, dr); err != nil {
		t.settled()
		return err
	}
	return nil
}

// disposeOne writes a receiver's disposition, on the connection's
// goroutine: in its transaction when it has one (dropped, with the
// delivery left unsettled, when the transaction's discharge was written
// meanwhile: a Rollback racing the Accept).
func disposeOne(l *engine.Link, dr *dispReq, st frame.DeliveryState) {
	t := dr.txn
	if t == nil {
		l.Dispose(dr.id, st, true)
		return
	}
	if t.writable() {
		l.DisposeTxn(dr.id, t.id, st, true)
	}
	t.settled()
}

// admitTxn gives r the transaction of opts, counting it there; it runs
// in SendAsync with snd.mu held.
func (snd *Sender) admitTxn(r *sendReq, opts *SendOptions) error {
	r.txn, r.counted = nil, false
	if opts == nil || opts.Transaction == nil {
		return nil
	}
	if err := opts.Transaction.admit(snd.s.c); err != nil {
		return err
	}
	r.txn, r.counted = opts.Transaction, true
	return nil
}

// sendOne writes r on l (tagged with tag, a resumable sender's, unless
// nil), in its transaction when it has one, on the
// connection's goroutine. withdrawn reports r refused: its transaction
// was discharged since it was admitted (r is to be completed with err).
func sendOne(l *engine.Link, r *sendReq, tag []byte) (id uint32, withdrawn bool, err error) {
	if l.MessageFormat() != r.format {
		l.SetMessageFormat(r.format)
	}
	t := r.txn
	if t == nil {
		id, err = l.Send(tag, r.buf, r.settled) // tag: a resumable sender's (resume.go), else nil
		return id, false, err
	}
	if !t.writable() {
		t.mu.Lock()
		err = t.workErrLocked()
		t.mu.Unlock()
		return 0, true, err
	}
	id, err = l.SendTxn(t.id, nil, r.buf, r.settled)
	if errors.Is(err, engine.ErrTryLater) {
		return id, false, err // still to write
	}
	r.untxn()
	return id, false, err
}

// untxn uncounts r in its transaction, once.
func (r *sendReq) untxn() {
	if r.counted {
		r.counted = false
		r.txn.settled()
	}
}

// withdrawTxn completes with ErrTransactionDone every send of t not yet
// written, on the connection's goroutine (a Rollback: they are never
// written); with abandonedOnly, it recycles only those whose Send gave
// up.
func (c *Conn) withdrawTxn(t *Transaction, abandonedOnly bool) {
	c.mu.Lock()
	ss := append([]*Session(nil), c.sessions...)
	c.mu.Unlock()
	for _, s := range ss {
		for _, x := range s.linksNow() {
			if snd, ok := x.(*Sender); ok {
				snd.withdrawTxn(t, abandonedOnly)
			}
		}
	}
}

func (snd *Sender) withdrawTxn(t *Transaction, abandonedOnly bool) {
	var out []*sendReq
	keep := func(q []*sendReq) []*sendReq {
		k := q[:0]
		for _, r := range q {
			if r.txn == t && (!abandonedOnly || r.state.Load() == reqAbandoned) {
				out = append(out, r)
			} else {
				k = append(k, r)
			}
		}
		clear(q[len(k):])
		return k
	}
	snd.mu.Lock()
	snd.queue = keep(snd.queue)
	snd.mu.Unlock()
	snd.backlog = keep(snd.backlog)
	snd.mu.Lock()
	snd.held = len(snd.backlog)
	snd.stalled = snd.stalled && snd.held > 0
	snd.roomLocked()
	snd.mu.Unlock()
	for _, r := range out {
		if r.state.CompareAndSwap(reqQueued, reqSending) {
			snd.complete(r, ErrTransactionDone)
		} else {
			snd.recycle(r) // abandoned
		}
	}
}
