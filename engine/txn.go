package engine

import (
	"errors"
	"strconv"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/stream"
)

// This file is transactions (part 4): the coordinator a server
// application implements (Coordinator, Config.Coordinator), the link
// whose target is a coordinator, which the engine runs itself (declare
// answered with declared, discharge with accepted or rejected), the
// controller's end (AttachCoordinator, Declare, Discharge), and the
// transactional-state of transfers and dispositions both ways (SendTxn,
// DisposeTxn; Delivery.TxnID, DeliveryUpdate.TxnID). It needs no state of
// its own beside the endpoints': a coordinator link is a link, attached
// and detached as any; what it adds is which transactions it declared.

// Coordinator is the transaction coordinator of a server (part 4 §4.2),
// set in Config.Coordinator. The engine runs the coordinator link (a
// link whose target is a coordinator): it grants it credit, reads the
// controller's declare and discharge messages, calls these methods, and
// answers each (declared; accepted; rejected with the error). The link
// is the engine's: the Handler sees no event of it. The work of a
// transaction reaches the Handler as usual, marked with its txn-id:
// Delivery.TxnID for a transactional transfer, DeliveryUpdate.TxnID for a
// transactional disposition (whose State is the outcome that applies at
// commit). The application holds that work back until Discharge says
// commit, or undoes it at rollback.
//
// Both methods run on the goroutine of the event that carried the
// message, as Handler methods do.
type Coordinator interface {
	// Declare starts a transaction for the controller on link l and
	// returns its txn-id (at most 32 bytes, unique on the connection
	// while the transaction lasts; the engine copies it). An error
	// refuses it: the declare is rejected with it.
	Declare(l *Link) (txnID []byte, err *Error)
	// Discharge ends transaction txnID, one Declare returned on this
	// connection: commit when fail is false, roll back when it is set.
	// An error, such as amqp:transaction:rollback for a commit that
	// could not be done (the transaction is rolled back then), is sent
	// as the discharge's rejected outcome; nil accepts it. The engine
	// also calls Discharge with fail set for each transaction still open
	// when its coordinator link detaches or the connection ends (txnID
	// is then valid only during the call).
	Discharge(l *Link, txnID []byte, fail bool) *Error
}

// connTxn is a connection's share of transactions: the transactions a
// coordinator of this connection declared, by txn-id, with the link
// that declared them, and a buffer for the transactional-states this end
// writes.
type connTxn struct {
	open    map[string]*Link
	scratch []byte
	special sendSpecial // of the SendTxn or SendResume running
}

// txnCredit is the credit the engine keeps granted on a coordinator
// link it runs.
const txnCredit = 64

// txnCost is what the connection's budget counts for an open
// transaction, beside its txn-id: its place in the map.
const txnCost = 96

// maxTxnID is the longest txn-id a Coordinator may return (the
// delivery-tag's bound: the spec leaves it open, peers use 4 to 16
// bytes).
const maxTxnID = 32

// isCoordinatorTarget reports an attach whose target is a coordinator.
func isCoordinatorTarget(a *frame.Attach) bool {
	t, ok := a.Target.Get()
	return ok && t.Coordinator
}

// coordinatorAttach decides a peer's attach of a coordinator link
// (onAttach's hook): with a Config.Coordinator the link is the
// engine's, hidden from the Handler; without one it is refused with
// amqp:not-implemented.
func (l *Link) coordinatorAttach() *Error {
	if l.sender {
		return NewError(frame.CondNotAllowed, "a coordinator link's controller is the sender")
	}
	if l.s.c.cfg.Coordinator == nil {
		return NewError(frame.CondNotImplemented, "no transaction coordinator here")
	}
	l.coord, l.notFast = true, true
	l.hidden = true
	l.autoCredit = txnCredit
	return nil
}

// coordinate takes a delivery on a coordinator link the engine runs: a
// declare or a discharge, answered with its outcome (settled, unless the
// controller sent it settled: then it is carried out and not answered).
func (l *Link) coordinate(d *Delivery) error {
	if d.Aborted {
		return nil
	}
	c := l.s.c
	co := c.cfg.Coordinator
	kind, value, err := controlBody(d.Payload)
	if err != nil {
		return l.txnAnswer(d, frame.DeliveryState{}, NewError(frame.CondDecodeError, err.Error()))
	}
	if kind == amqpsax.DescriptorDeclare {
		if _, err := frame.ParseDeclare(value); err != nil {
			return l.txnAnswer(d, frame.DeliveryState{}, NewError(frame.CondNotImplemented,
				"declare: only local transactions: "+err.Error()))
		}
		id, e := co.Declare(l)
		switch {
		case e != nil:
			return l.txnAnswer(d, frame.DeliveryState{}, e)
		case len(id) > maxTxnID:
			co.Discharge(l, id, true)
			return l.txnAnswer(d, frame.DeliveryState{}, NewError(frame.CondInternalError, "txn-id longer than 32 bytes"))
		case c.txn.open[string(id)] != nil:
			return l.txnAnswer(d, frame.DeliveryState{}, NewError(frame.CondInternalError, "txn-id already in use"))
		}
		if err := c.charge(txnCost + len(id)); err != nil {
			co.Discharge(l, id, true)
			return err
		}
		if c.txn.open == nil {
			c.txn.open = make(map[string]*Link)
		}
		c.txn.open[string(id)] = l
		c.txn.scratch = frame.AppendDeclared(c.txn.scratch[:0], frame.Declared{TxnID: id})
		return l.txnAnswer(d, frame.DeliveryState{Type: frame.StateOther, Descriptor: amqpsax.DescriptorDeclared,
			Raw: c.txn.scratch}, nil)
	}
	dis, err := frame.ParseDischarge(value)
	if err != nil {
		return l.txnAnswer(d, frame.DeliveryState{}, NewError(frame.CondDecodeError, err.Error()))
	}
	if c.txn.open[string(dis.TxnID)] != l {
		return l.txnAnswer(d, frame.DeliveryState{}, NewError(frame.CondUnknownID,
			"no transaction "+quoteID(dis.TxnID)+" declared on this link"))
	}
	delete(c.txn.open, string(dis.TxnID))
	c.release(txnCost + len(dis.TxnID))
	if e := co.Discharge(l, dis.TxnID, dis.Fail); e != nil {
		return l.txnAnswer(d, frame.DeliveryState{}, e)
	}
	return l.txnAnswer(d, Accepted, nil)
}

// txnAnswer settles a controller's delivery with st, or rejected with e.
func (l *Link) txnAnswer(d *Delivery, st frame.DeliveryState, e *Error) error {
	if e != nil {
		st = frame.DeliveryState{Type: frame.StateRejected, Error: e.amqp()}
	}
	if d.Settled || !l.usable() {
		return nil
	}
	return l.Dispose(d.DeliveryID, st, true)
}

// coordinatorGone rolls back the transactions a coordinator link
// declared that were still open when it went (part 4 §4.3: a
// transaction ends with its controller).
func (l *Link) coordinatorGone() {
	c := l.s.c
	for id, owner := range c.txn.open {
		if owner == l {
			delete(c.txn.open, id)
			c.release(txnCost + len(id))
			c.cfg.Coordinator.Discharge(l, []byte(id), true)
		}
	}
}

func quoteID(id []byte) string {
	const hex = "0123456789abcdef"
	b := make([]byte, 0, 2+2*len(id))
	b = append(b, "0x"...)
	for _, x := range id {
		b = append(b, hex[x>>4], hex[x&15])
	}
	return string(b)
}

// txnTransfer reads the transactional-state of an incoming transfer
// (onTransfer's hook: the state is not one of part 3's) and keeps its
// txn-id for the delivery, in a buffer of the link (reused: no
// allocation once warm). On a server with a Coordinator, a txn-id it
// has not declared detaches the link with amqp:transaction:unknown-id.
// Any other state is left alone.
func (l *Link) txnTransfer(st *frame.DeliveryState) error {
	if st.Descriptor != amqpsax.DescriptorTransactionalState {
		return nil
	}
	ts, err := frame.ParseTransactionalState(st.Raw)
	if err != nil {
		return decodeError(err)
	}
	c := l.s.c
	if c.cfg.Coordinator != nil && c.txn.open[string(ts.TxnID)] == nil {
		return &linkError{l, frame.CondUnknownID, "transfer in transaction " + quoteID(ts.TxnID) + ", which is not open"}
	}
	was := cap(l.recv.txnID)
	l.recv.txnID = append(l.recv.txnID[:0], ts.TxnID...)
	if grew := cap(l.recv.txnID) - was; grew > 0 { // the peer's txn-id: the budget counts the buffer kept
		if err := c.charge(grew); err != nil {
			return err
		}
		l.held += grew
	}
	l.recv.transactional = true
	return nil
}

// txnDisposition unwraps the state of a peer's disposition for
// OnDisposition: a transactional-state gives its outcome and its
// txn-id, a declared its txn-id (the state stays the declared). Other
// states are returned as they are.
func txnDisposition(st frame.DeliveryState) (frame.DeliveryState, []byte, error) {
	switch st.Descriptor {
	case amqpsax.DescriptorTransactionalState:
		ts, err := frame.ParseTransactionalState(st.Raw)
		if err != nil {
			return st, nil, decodeError(err)
		}
		return ts.Outcome, ts.TxnID, nil
	case amqpsax.DescriptorDeclared:
		d, err := frame.ParseDeclared(st.Raw)
		if err != nil {
			return st, nil, decodeError(err)
		}
		return st, d.TxnID, nil
	}
	return st, nil, nil
}

// AttachCoordinator attaches a controller's link to the peer's
// transaction coordinator (part 4 §4.1): a sending link whose target is
// a coordinator offering local transactions (o.Target, when set, is sent
// instead: set its Coordinator). OnLinkAttach follows the peer's answer,
// OnFlow its credit; then Declare and Discharge. o.Address is unused.
func (s *Session) AttachCoordinator(o LinkOptions) (*Link, error) {
	if o.Target == nil {
		o.Target = &frame.Target{Coordinator: true, Capabilities: frame.Symbols(frame.AppendSymbols(nil, frame.TxnCapLocal))}
	}
	o.Source = nil
	if o.Name == "" {
		o.Name = s.c.cfg.ContainerID + "-txn-" + strconv.Itoa(int(s.local))
	}
	l, err := s.attachLink(true, o)
	if err == nil {
		l.coord = true
	}
	return l, err
}

// Declare asks the coordinator, on a link from AttachCoordinator, for a
// new transaction (part 4 §4.3): it sends a declare and returns its
// delivery-id. OnDisposition reports the answer: State of descriptor
// DescriptorDeclared and the transaction's TxnID, or rejected with the
// coordinator's error. It fails as Send does, and with ErrState on a
// link that is not a coordinator link.
func (l *Link) Declare() (uint32, error) {
	if !l.coord || !l.sender {
		return 0, ErrState
	}
	c := l.s.c
	c.txn.scratch = frame.AppendDeclare(frame.AppendControl(c.txn.scratch[:0], nil), frame.Declare{})
	return l.Send(nil, c.txn.scratch, false)
}

// Discharge ends transaction txnID through the coordinator (part 4
// §4.3): commit, or roll back when fail is set. It returns the
// discharge's delivery-id; OnDisposition reports the outcome: accepted,
// or rejected with the coordinator's error (amqp:transaction:unknown-id,
// amqp:transaction:rollback: the work was rolled back). It fails as
// Declare does.
func (l *Link) Discharge(txnID []byte, fail bool) (uint32, error) {
	if !l.coord || !l.sender {
		return 0, ErrState
	}
	c := l.s.c
	c.txn.scratch = frame.AppendDischarge(frame.AppendControl(c.txn.scratch[:0], nil), frame.Discharge{TxnID: txnID, Fail: fail})
	return l.Send(nil, c.txn.scratch, false)
}

// SendTxn is Send of a delivery that is part of transaction txnID (part
// 4 §4.4.1): its first transfer carries transactional-state with the
// txn-id, and the coordinator makes it visible at commit. The receiver's
// outcome comes in OnDisposition with the same TxnID. Nothing is
// allocated once warm, as for Send.
func (l *Link) SendTxn(txnID, tag, payload []byte, settled bool) (uint32, error) {
	c := l.s.c
	c.txn.scratch = frame.AppendTransactionalState(c.txn.scratch[:0], frame.TransactionalState{TxnID: txnID})
	c.txn.special = sendSpecial{state: frame.DeliveryState{Type: frame.StateOther,
		Descriptor: amqpsax.DescriptorTransactionalState, Raw: c.txn.scratch}}
	l.special = &c.txn.special
	id, err := l.Send(tag, payload, settled)
	l.special = nil
	return id, err
}

// sendSpecial is what the first transfer of a delivery carries beyond a
// TransferHead: a state (SendTxn), resume (SendResume).
type sendSpecial struct {
	state  frame.DeliveryState
	resume bool
}

// DisposeTxn is Dispose of an outcome that is part of transaction txnID
// (part 4 §4.4.2): the disposition's state is transactional-state with
// the txn-id and the outcome (accepted, rejected, released, modified),
// which takes effect when the transaction commits. Nothing is allocated
// once warm.
func (l *Link) DisposeTxn(id uint32, txnID []byte, outcome frame.DeliveryState, settle bool) error {
	c := l.s.c
	c.txn.scratch = frame.AppendTransactionalState(c.txn.scratch[:0], frame.TransactionalState{TxnID: txnID, Outcome: outcome})
	return l.Dispose(id, frame.DeliveryState{Type: frame.StateOther, Descriptor: amqpsax.DescriptorTransactionalState,
		Raw: c.txn.scratch}, settle)
}

// AcceptTxn accepts the delivery as part of transaction txnID and
// settles it: DisposeTxn with the accepted outcome.
func (d *Delivery) AcceptTxn(txnID []byte) error {
	return d.Link.DisposeTxn(d.DeliveryID, txnID, Accepted, true)
}

// IsCoordinator reports a coordinator link: a controller's from
// AttachCoordinator, or one the engine runs for Config.Coordinator.
func (l *Link) IsCoordinator() bool { return l.coord }

// oversize withdraws a frame this end wrote (from start in the output)
// that is larger than the peer's max-frame-size, and closes the
// connection with amqp:frame-size-too-small (part 2 §2.8.15: this end
// cannot send a performative within the agreed size). Transfers are
// split to fit and the application's attaches are checked before they
// are written (ErrFrameSize); what is left is a flow, disposition,
// detach, end or close carrying more than the peer takes (properties,
// an error's description). A close that does not fit is written again
// without its error; an open is let through (it holds this end's own
// configuration only, and there is nothing to fall back on).
func (c *Conn) oversize(start int) {
	size := len(c.out) - start
	d, _ := frame.Performative(c.out[start+8:])
	if d == amqpsax.DescriptorOpen {
		return // sent before the peer's limit is known, and all of it is this end's configuration
	}
	c.out = c.out[:start]
	if d == amqpsax.DescriptorClose {
		start = c.startFrame(0)
		c.out = frame.AppendClose(c.out, frame.Close{Error: frame.AMQPError{Condition: []byte(frame.CondFrameSizeTooSmall.Symbol())}})
		c.out = frame.EndFrame(c.out, start)
		return
	}
	c.fail(frame.CondFrameSizeTooSmall, "a "+d.TypeName()+" of "+strconv.Itoa(size)+" bytes is above the peer's max-frame-size "+
		strconv.FormatUint(uint64(c.remoteMaxFrame), 10))
}

// errNotControl: a message sent to a coordinator whose body is not one
// amqp-value holding a declare or a discharge.
var errNotControl = errors.New("engine: not a declare or discharge message")

// controlBody returns what a message sent to a coordinator asks (part 4
// §4.3, §4.4): payload is the message as a delivery carries it, whose
// body must be one amqp-value holding a described value; d is its
// descriptor (DescriptorDeclare or DescriptorDischarge, numeric or
// symbolic on the wire, as Qpid Proton writes it) and value its encoding,
// for frame.ParseDeclare or frame.ParseDischarge. Any other message is
// errNotControl, a message that does not scan is the scan's error. It
// does not allocate; value is a view into payload.
func controlBody(payload []byte) (d amqpsax.Descriptor, value []byte, err error) {
	secs, err := message.Scan(payload)
	if err != nil {
		return 0, nil, err
	}
	if secs.BodyKind != message.BodyValue {
		return 0, nil, errNotControl
	}
	var c stream.Cursor
	c.Reset(secs.Body)
	// amqp-value: described(0x77, value)
	if !c.Next() || !c.Enter() || !c.Next() || !c.Next() || c.Kind() != amqpsax.KindDescribed {
		return 0, nil, errNotControl
	}
	value = c.Raw()
	d, _, ok := c.Descriptor()
	if !ok || value == nil || d != amqpsax.DescriptorDeclare && d != amqpsax.DescriptorDischarge {
		return 0, nil, errNotControl
	}
	return d, value, nil
}
