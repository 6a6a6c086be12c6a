package engine

import "github.com/amqpsax/amqpsax/frame"

// Handler receives a connection's events, each after the transition it
// reports has completed, with the object to act on. The order is in the
// package documentation. Embed NopHandler to implement only some.
//
// Methods run on the goroutine that called Feed, Tick, Written or
// CloseRead (or an action that completed a transition, such as Send); they
// may call any method of the connection, its sessions and its links.
type Handler interface {
	// OnConnectionOpen: both opens have been exchanged; sessions may
	// begin.
	OnConnectionOpen(c *Conn)
	// OnConnectionClose: the connection is closed: the closes have been
	// exchanged, or it failed (err is the engine's, Remote false) or was
	// lost. err is the peer's error, or the engine's, or nil. It is the
	// last event.
	OnConnectionClose(c *Conn, err *Error)
	// OnSessionBegin: a session has begun: the peer answered this end's
	// begin, or began one, which the engine has answered (End in here
	// refuses it: the end follows the answer, as the spec allows).
	OnSessionBegin(s *Session)
	// OnSessionEnd: a session has ended (both ends, or the connection
	// closed under it, or the engine ended it for a fault of the peer:
	// then when its end is written, not at the peer's answer); err is
	// the peer's or the engine's error, or nil. Its links were detached
	// first.
	OnSessionEnd(s *Session, err *Error)
	// OnLinkAttach: a link is attached: the peer answered this end's
	// attach, or attached one, which the engine has answered, mirroring
	// its source, target and settle modes. Set up the link here (Flow or
	// KeepCredit for a receiver); Detach with an error refuses it (the
	// detach follows the answer, as RabbitMQ and Artemis do).
	OnLinkAttach(l *Link)
	// OnLinkDetach: a link is detached (both ends, or its session ended
	// under it, or the engine detached it for a fault of the peer: then
	// when its detach is written, not at the peer's answer); err is the
	// peer's or the engine's error, or nil. The link's deliveries are
	// forgotten, their contexts dropped.
	OnLinkDetach(l *Link, err *Error)
	// OnFlow: the peer's flow changed a link's state: a sender may have
	// credit (Link.Credit) or be asked to drain (Link.Drain), a receiver
	// learns the peer's delivery-count and available. Also after the
	// peer's session window reopens, for the senders with credit. A
	// sender's drain is completed after this returns, using up the
	// credit it did not use.
	OnFlow(l *Link)
	// OnDelivery: a delivery has arrived whole on a receiving link (or
	// was aborted: d.Aborted). d and its bytes are valid only during the
	// call. Dispose of it here or later (d.Accept …, by ID); with
	// AutoAccept, an unsettled delivery not disposed of here is accepted.
	OnDelivery(l *Link, d Delivery)
	// OnDisposition: the peer changed the state of a delivery of the
	// link or settled it: on a sender, the receiver's outcome; on a
	// receiver, the sender settling. d is valid only during the call.
	// When the peer has not settled a delivery it gave a terminal
	// outcome, the engine has settled it before this runs (unless
	// Config.ManualSettle): the whole disposition is applied first, then
	// reported delivery by delivery.
	OnDisposition(l *Link, d DeliveryUpdate)
	// OnWritable: the output that made Send report ErrOutputFull has
	// been written out; Send again.
	OnWritable(c *Conn)
}

// NopHandler implements every Handler method by doing nothing. Embed it
// to implement only the events you need.
type NopHandler struct{}

func (NopHandler) OnConnectionOpen(*Conn)              {}
func (NopHandler) OnConnectionClose(*Conn, *Error)     {}
func (NopHandler) OnSessionBegin(*Session)             {}
func (NopHandler) OnSessionEnd(*Session, *Error)       {}
func (NopHandler) OnLinkAttach(*Link)                  {}
func (NopHandler) OnLinkDetach(*Link, *Error)          {}
func (NopHandler) OnFlow(*Link)                        {}
func (NopHandler) OnDelivery(*Link, Delivery)          {}
func (NopHandler) OnDisposition(*Link, DeliveryUpdate) {}
func (NopHandler) OnWritable(*Conn)                    {}

var _ Handler = NopHandler{}

// Delivery is an incoming delivery (part 2 §2.6.12), whole: all its
// transfers have arrived. It is the frame package's Delivery (delivery-id,
// tag, message-format, settled, aborted, frames, payload: one shape in
// both packages) with the link it came on. Its byte slices are views,
// valid only during OnDelivery: into the frame when the delivery took one
// transfer, else into the link's reassembly buffer. Its methods act on it
// by DeliveryID and may be called after OnDelivery returns, as long as
// the link is attached. Settled reports that the sender settled it (no
// disposition is needed, or possible); Aborted, a delivery the sender
// aborted (no payload, nothing to dispose of; it used one credit).
type Delivery struct {
	Link *Link
	frame.Delivery
}

// TxnID returns the transaction the delivery is part of (its transfers'
// transactional-state, part 4 §4.4.1), nil when none: a view, valid
// only during OnDelivery (after it, nil). See Coordinator. (A method,
// not a field, so that the Delivery of the hot path stays its size.)
func (d *Delivery) TxnID() []byte {
	if l := d.Link; l != nil && l.recv.transactional && l.recv.done != curOver && l.recv.id == d.DeliveryID {
		return l.recv.txnID
	}
	return nil
}

// Resumed reports, during OnDelivery, a delivery the sender resumed
// after a detach (part 2 §2.6.13): one this end's attach listed
// unsettled. Settled with no payload, the sender settles it with the
// state this end had given it; otherwise it is the whole message again.
// See Link.SendResume.
func (d *Delivery) Resumed() bool {
	l := d.Link
	return l != nil && l.recv.resumed && l.recv.done != curOver && l.recv.id == d.DeliveryID
}

// SetContext sets the application's value for the delivery:
// Link.SetDeliveryContext(d.DeliveryID, v).
func (d *Delivery) SetContext(v any) error { return d.Link.SetDeliveryContext(d.DeliveryID, v) }

// Accept accepts the delivery and settles it (in receiver settle mode
// second, settlement waits for the sender's).
func (d *Delivery) Accept() error {
	return d.Link.disposeSimple(d.DeliveryID, frame.StateAccepted, true)
}

// Reject rejects the delivery with the error e (may be nil) and settles it.
func (d *Delivery) Reject(e *Error) error {
	st := frame.DeliveryState{Type: frame.StateRejected}
	if e != nil {
		st.Error = e.amqp()
	}
	return d.Link.Dispose(d.DeliveryID, st, true)
}

// Release releases the delivery (the sender may deliver it again
// elsewhere) and settles it.
func (d *Delivery) Release() error {
	return d.Link.disposeSimple(d.DeliveryID, frame.StateReleased, true)
}

// Modify gives the delivery the modified outcome and settles it:
// failed counts a failed delivery attempt, undeliverable asks that it
// not be delivered here again.
func (d *Delivery) Modify(failed, undeliverable bool) error {
	st := frame.DeliveryState{Type: frame.StateModified, DeliveryFailed: failed, UndeliverableHere: undeliverable}
	return d.Link.Dispose(d.DeliveryID, st, true)
}

// Settle settles the delivery with no outcome.
func (d *Delivery) Settle() error { return d.Link.disposeSimple(d.DeliveryID, frame.StateNone, true) }

// Outcomes to pass to Link.Dispose.
var (
	Accepted = frame.DeliveryState{Type: frame.StateAccepted}
	Released = frame.DeliveryState{Type: frame.StateReleased}
)

// DeliveryUpdate is the peer's word on one delivery (part 2 §2.7.6), split
// out of a disposition's range. State's bytes and Tag are valid only
// during OnDisposition.
type DeliveryUpdate struct {
	ID uint32
	// Settled reports that the peer settled it: the engine has forgotten
	// it (and its Context).
	Settled bool
	Tag     []byte // the delivery-tag it was sent with (a sender's own deliveries)
	State   frame.DeliveryState
	// TxnID is the transaction of the state (part 4 §4.4.2), nil when
	// none. For a transactional-state, State is its outcome (StateNone
	// when it had none), which applies when the transaction commits; for
	// the declared answer to Link.Declare, State is the declared itself
	// (Descriptor DescriptorDeclared) and TxnID the new transaction's.
	// Valid only during OnDisposition.
	TxnID []byte
	// Context is the application's value for the delivery: what
	// Link.SendWith or Link.SetDeliveryContext gave it (nil when
	// neither did). It is how an application finds its own record of a
	// delivery without a map by delivery-id.
	Context any
}
