package engine

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/amqpsax/amqpsax/frame"
)

// This file is the link (part 2 §2.6): LinkOptions and Link with its
// accessors, attach and detach, the flow of credit (onFlow, Flow,
// KeepCredit, DrainCredit, SetAvailable; §2.6.7), the incoming
// delivery in progress (recvDelivery) and the transfers the session's
// onTransfer hands on (onTransfer: a delivery in several transfers
// joined by frame.Join, a transactional or resumed one; delivered, for
// every delivery), settlement (Dispose, Settle), and outgoing transfers
// (Send split at the peer's max-frame-size, writeTransfer, sendPending
// when the window frees up, Abort).

// ErrMessageSize: Send of a message above the receiver's
// max-message-size.
var ErrMessageSize = errors.New("engine: message above the link's max-message-size")

// ErrFrameSize: an attach larger than the peer's max-frame-size (a
// source or target too big for it): nothing is written.
var ErrFrameSize = errors.New("engine: frame above the peer's max-frame-size")

// ErrTag: Send with a delivery-tag longer than the 32 bytes the spec
// allows (part 2 §2.8.7).
var ErrTag = errors.New("engine: delivery-tag longer than 32 bytes")

// LinkOptions sets up a link this end attaches.
type LinkOptions struct {
	// Name is the link's name; "" gives a name made of the container-id,
	// channel and handle.
	Name string
	// Address is the node's address: the target's for a sender, the
	// source's for a receiver. Source and Target, when set, are sent as
	// they are instead (part 3 §3.5.3, §3.5.4), with every field they
	// carry: a receiver's source with its filter-set (a selector:
	// frame.SymbolMap.Selector) and its target with the address
	// replies come to (the reply link of request/response, as $cbs and
	// $management want), a sender's source with its address, a dynamic
	// node (Dynamic with DynamicNodeProperties, part 3 §3.5.9) whose
	// address the peer's answer gives (RemoteSource, RemoteTarget).
	Address string
	Source  *frame.Source
	Target  *frame.Target
	// Properties are the properties of this end's attach (part 2
	// §2.7.3: a map of symbol keys, fields §2.8.13), for a sender and a
	// receiver alike, such as the "com.microsoft:…" entries Azure's
	// services read (an entity type, a consumer's epoch). It is the
	// map's encoding, written exactly as given (a symbol stays a
	// symbol); frame.SymbolMap builds one. The peer's are in
	// RemoteAttach().Properties.
	Properties frame.Map
	// OfferedCapabilities and DesiredCapabilities are the capabilities
	// of this end's attach (part 2 §2.7.3): the extensions this end
	// supports on the link, and those it wants the peer to (such as
	// "com.microsoft:session-filter", RabbitMQ's "rabbitmq:stream-…").
	// Each is the encoding of a symbol or an array of symbols, written
	// exactly; frame.AppendSymbols builds one. The peer's answer tells
	// which it supports in its own.
	OfferedCapabilities, DesiredCapabilities frame.Symbols
	// Presettled makes a sender send every delivery settled (snd-settle-
	// mode settled); Unsettled, every delivery unsettled; neither, mixed.
	Presettled, Unsettled bool
	// RcvSecond asks for receiver settle mode second.
	RcvSecond bool
	// Credit, on a receiver, is the credit the engine keeps granted
	// (topped up when half used); 0 means Config.Credit.
	Credit uint32
	// AutoAccept, on a receiver, accepts each delivery the handler did not
	// dispose of (as Config.AutoAccept does for every link).
	AutoAccept bool
	// Resume is what an earlier link of this name left unsettled
	// (Link.Unsettled, kept by the application): the attach carries it as
	// its unsettled map, and the link may resume those deliveries (part 2
	// §2.6.13; see Link.SendResume).
	Resume []Unsettled
}

// Link is one end of a link (part 2 §2.6): a sender or a receiver, with
// its credit (§2.6.7) and deliveries.
type Link struct {
	// Context is the application's, for its own state.
	Context any

	s      *Session
	local  uint32 // this end's handle
	remote uint32 // the peer's, once its attach arrived
	name   []byte
	sender bool

	st           endpoint // attach and detach, sent and received; over once unmapped
	remoteClosed bool     // the peer's detach had closed set
	hidden       bool     // refused by the engine: the application never sees it (or not yet: deferred)
	reported     bool     // OnLinkDetach has run (or would have, for a hidden link): over for the application
	held         int      // bytes the connection's budget counts for it
	err          *Error

	attach    frame.Attach // the peer's, parsed from attachBuf
	attachBuf []byte
	// The answer to the peer's attach, held (answer.go): answering while
	// the Answerer runs, deferred once it has called AnswerLater, pending
	// the answer's attach until Answer (a pointer: rare, and a Link's
	// size is every link's).
	answering, deferred bool
	pending             *frame.Attach
	src                 frame.Source // the peer's attach's, or zero
	tgt                 frame.Target

	sndMode frame.SenderSettleMode
	rcvMode frame.ReceiverSettleMode

	// §2.6.7
	deliveryCount uint32
	credit        uint32
	available     uint32
	drain         bool

	autoCredit uint32 // Creditor.Credit
	autoAccept bool
	recv       recvDelivery // a receiver's incoming delivery in progress

	remoteMaxMessage uint64
	format           uint32 // the message-format of outgoing deliveries (SetMessageFormat)
	creditDrained    bool   // Creditor.WhenDrained (credit.go)

	// Transactions (txn.go): a coordinator link (the controller's, or one
	// the engine runs).
	coord   bool
	notFast bool // sender or coord: no delivery takes the fast path (Session.onTransfer)

	// Recovery (recover.go): whether this end's detach closed the link,
	// whether a receiver keeps its unsettled tags (a terminus durable
	// with unsettled-state), what it kept at its detach, the unsettled
	// map of this end's attach and the tags it may resume, and what
	// SendTxn or SendResume asks of the delivery being sent.
	closing, keepTags bool
	kept              []Unsettled
	resumeMap         []byte
	resumeInc         bool
	resumeTags        map[string]struct{}
	remoteIndex       map[string][]byte // the peer's unsettled map by tag, once RemoteUnsettled is asked
	special           *sendSpecial      // set by SendTxn and SendResume around their Send

	pend pendingSend // an outgoing delivery's frames waiting for the session window

	mine attachFields // of this end's attach, until it is written

	flowProps frame.Map // the properties of the flow OnFlow reports, during it
	flowOut   struct {  // properties for this end's next flow (SetFlowProperties)
		on    bool
		props frame.Map
	}
}

// recvDelivery is a receiver's incoming delivery in progress (part 2
// §2.6.12): its transfers joined so far, what its first transfer said
// of it (a transaction, a resume), and, while OnDelivery runs, its
// delivery-id, its context and what the handler did with it. reset
// starts a delivery and ends one; drop ends the link's.
type recvDelivery struct {
	join     frame.Join // a delivery in several transfers, joined
	joinHeld int        // join's buffer's bytes, as the budget counts them
	id       uint32     // the delivery-id of the current OnDelivery
	done     uint8      // what became of it (curOver: no OnDelivery is running)
	ctx      any        // its context (SetDeliveryContext), kept with it after OnDelivery

	transactional bool   // its transfers carry a transactional-state (txn.go): Delivery.TxnID
	txnID         []byte // that state's txn-id (a buffer reused, counted in Link.held)
	resumed       bool   // resumed by the sender, its tag in this end's attach: Delivery.Resumed (recover.go)
	dropResumed   bool   // resumed, its tag not in this end's attach: dropped (part 2 §2.6.13)
}

// reset forgets what the transfers of the last delivery said of it: at
// the first transfer of a delivery, and once it is delivered or dropped.
func (r *recvDelivery) reset() { r.transactional, r.resumed, r.dropResumed = false, false, false }

// drop ends the delivery in progress of a link that is over: its buffer
// is released from c's budget and let go.
func (r *recvDelivery) drop(c *Conn) {
	c.release(r.joinHeld)
	r.joinHeld = 0
	r.join = frame.Join{}
	r.reset()
}

// attachFields are the fields of this end's attach beside its terminus
// (LinkOptions, or Link.SetAnswerFields in an answer): views of the
// caller's bytes, held by the link only until its attach is written.
type attachFields struct {
	properties       frame.Map
	offered, desired frame.Symbols
}

// pendingSend is the rest of an outgoing delivery the peer's session window
// could not take yet, copied out of the caller's payload.
type pendingSend struct {
	on    bool
	abort bool // Abort was called: an aborted transfer ends it
	id    uint32
	buf   []byte
	off   int
}

// newLink makes the link of handle h; named, it takes its name in the
// connection (part 2 §2.6.1). The link keeps name as it is, and the
// connection's map of names is keyed by a view of it: name must be bytes
// never written again (a copy the engine made: the peer's attach as the
// link keeps it, or attachLink's).
func (s *Session) newLink(h uint32, sender bool, name []byte, named bool) *Link {
	l := &Link{s: s, local: h, sender: sender, notFast: sender, name: name, sndMode: frame.SndMixed}
	s.byLocal[h] = l
	s.nLocal++
	if named {
		c := s.c
		if c.names == nil {
			c.names = make(map[linkName]*Link)
		}
		c.names[linkName{string(name), sender}] = l
	}
	return l
}

// Session returns the link's session.
func (l *Link) Session() *Session { return l.s }

// Conn returns the link's connection.
func (l *Link) Conn() *Conn { return l.s.c }

// Name returns the link's name (a view: copy it to keep it).
func (l *Link) Name() []byte { return l.name }

// IsSender reports a sending link end (role sender).
func (l *Link) IsSender() bool { return l.sender }

// Handle returns this end's handle.
func (l *Link) Handle() uint32 { return l.local }

// RemoteAttach returns the peer's attach as parsed (its Source, Target,
// properties and capabilities are views the link keeps); zero until it
// has arrived.
func (l *Link) RemoteAttach() *frame.Attach { return &l.attach }

// RemoteSource returns the source of the peer's attach.
func (l *Link) RemoteSource() *frame.Source { return &l.src }

// RemoteTarget returns the target of the peer's attach.
func (l *Link) RemoteTarget() *frame.Target { return &l.tgt }

// SetFlowProperties sets the properties of this end's next flow on the
// link (part 2 §2.7.4: link-state properties, as RabbitMQ 4.3 tells a
// single-active consumer whether it is active): the encoding of a map of
// symbol keys (frame.SymbolMap), copied, sent once with the next flow
// (Flow, SetAvailable with send, a credit top-up, an echo). The peer
// reads them with FlowProperties during its OnFlow.
func (l *Link) SetFlowProperties(props frame.Map) error {
	if !l.usable() {
		return ErrState
	}
	l.flowOut.props = append(l.flowOut.props[:0], props...)
	l.flowOut.on = true
	return nil
}

// FlowProperties returns, during OnFlow, the properties of the peer's
// flow being reported (part 2 §2.7.4: link-state properties, such as
// RabbitMQ 4.3's rabbitmq:active for a single active consumer), nil
// when it carried none. It is a view into the frame: valid only during
// the event, copy what must be kept.
func (l *Link) FlowProperties() frame.Map { return l.flowProps }

// RemoteMaxMessageSize returns the max-message-size of the peer's attach
// (part 2 §2.7.3): the largest message it accepts; 0 means no limit (or
// its attach has not arrived). Send refuses a larger one with
// ErrMessageSize.
func (l *Link) RemoteMaxMessageSize() uint64 { return l.remoteMaxMessage }

// Address returns the address of the node the peer names: the source's
// address for a link this end sends on (the peer consumes from it), the
// target's for one it receives on (the peer sends to it).
func (l *Link) Address() []byte {
	if l.sender {
		return l.src.Address
	}
	return l.tgt.Address
}

// SndSettleMode and RcvSettleMode return the link's settle modes.
func (l *Link) SndSettleMode() frame.SenderSettleMode { return l.sndMode }

// RcvSettleMode returns the link's receiver settle mode.
func (l *Link) RcvSettleMode() frame.ReceiverSettleMode { return l.rcvMode }

// Credit returns the link-credit: on a sender, the deliveries it may send;
// on a receiver, those it has granted and not yet received.
func (l *Link) Credit() uint32 { return l.credit }

// DeliveryCount returns the link's delivery-count (part 2 §2.6.7).
func (l *Link) DeliveryCount() uint32 { return l.deliveryCount }

// Available returns, on a receiver, the deliveries the sender says it has.
func (l *Link) Available() uint32 { return l.available }

// Drain reports, on a sender, that the receiver asked it to use up its
// credit or give it back (part 2 §2.6.7).
func (l *Link) Drain() bool { return l.drain }

// Err returns the error the link detached with, or nil.
func (l *Link) Err() *Error { return l.err }

// RemoteClosed reports that the peer's detach closed the link (rather
// than only detaching it, part 2 §2.6.6).
func (l *Link) RemoteClosed() bool { return l.remoteClosed }

// AttachSender attaches a sending link (part 2 §2.7.3); OnLinkAttach
// follows the peer's answer, OnFlow its credit.
func (s *Session) AttachSender(o LinkOptions) (*Link, error) { return s.attachLink(true, o) }

// AttachReceiver attaches a receiving link; OnLinkAttach follows the
// peer's answer. Grant credit with Flow (or LinkOptions.Credit).
func (s *Session) AttachReceiver(o LinkOptions) (*Link, error) { return s.attachLink(false, o) }

func (s *Session) attachLink(sender bool, o LinkOptions) (*Link, error) {
	if !s.usable() {
		return nil, ErrState
	}
	h, ok := s.freeHandle()
	if !ok {
		return nil, ErrLimit
	}
	name := o.Name
	if name == "" {
		name = s.c.cfg.ContainerID + "-" + strconv.Itoa(int(s.local)) + "-" + strconv.FormatUint(uint64(h), 10)
	}
	if s.c.names[linkName{name, sender}] != nil {
		return nil, ErrLinkName
	}
	l := s.newLink(h, sender, []byte(name), true)
	switch {
	case o.Presettled:
		l.sndMode = frame.SndSettled
	case o.Unsettled:
		l.sndMode = frame.SndUnsettled
	}
	if o.RcvSecond {
		l.rcvMode = frame.RcvSecond
	}
	l.autoCredit, l.autoAccept = o.Credit, o.AutoAccept || s.c.cfg.AutoAccept
	if l.autoCredit == 0 {
		l.autoCredit = s.c.cfg.Credit
	}
	var src frame.Source
	var tgt frame.Target
	if o.Source != nil {
		src = *o.Source
	} else if !sender && o.Address != "" {
		src.Address = []byte(o.Address)
	}
	if o.Target != nil {
		tgt = *o.Target
	} else if sender && o.Address != "" {
		tgt.Address = []byte(o.Address)
	}
	l.mine = attachFields{o.Properties, o.OfferedCapabilities, o.DesiredCapabilities}
	l.setResume(o.Resume, frame.Some(src), frame.Some(tgt)) // recover.go
	if !l.attachFits(frame.Some(src), frame.Some(tgt)) {
		// Undo newLink: nothing was written.
		s.byLocal[h] = nil
		s.nLocal--
		delete(s.c.names, linkName{name, sender})
		return nil, ErrFrameSize
	}
	l.writeAttach(frame.Some(src), frame.Some(tgt))
	s.waiting = append(s.waiting, l)
	return l, nil
}

// attachFits reports that the link's attach fits the peer's
// max-frame-size (every frame is checked as it is written: Conn.endFrame).
func (l *Link) attachFits(src frame.Opt[frame.Source], tgt frame.Opt[frame.Target]) bool {
	c := l.s.c
	c.txn.scratch = frame.AppendAttach(c.txn.scratch[:0], l.attachPerf(src, tgt))
	return 8+len(c.txn.scratch) <= int(c.remoteMaxFrame)
}

func (l *Link) writeAttach(src frame.Opt[frame.Source], tgt frame.Opt[frame.Target]) {
	c := l.s.c
	start := c.startFrame(l.s.local)
	c.out = frame.AppendAttach(c.out, l.attachPerf(src, tgt))
	c.endFrame(start)
	l.st.local = active
	l.mine = attachFields{} // written: the caller's bytes are not held
}

// attachPerf is the link's attach, with the terminus given and the
// fields of l.mine.
func (l *Link) attachPerf(src frame.Opt[frame.Source], tgt frame.Opt[frame.Target]) frame.Attach {
	c := l.s.c
	role := frame.RoleSender
	if !l.sender {
		role = frame.RoleReceiver
	}
	a := frame.Attach{Name: l.name, Handle: l.local, Role: role, SndSettleMode: frame.Some(l.sndMode),
		RcvSettleMode: l.rcvMode, Source: src, Target: tgt,
		Properties: l.mine.properties, OfferedCapabilities: l.mine.offered, DesiredCapabilities: l.mine.desired}
	if l.sender {
		a.InitialDeliveryCount = frame.Some(l.deliveryCount)
	} else {
		a.MaxMessageSize = frame.Some(c.cfg.MaxMessageSize)
	}
	if l.resumeMap != nil { // recover.go
		a.Unsettled, a.IncompleteUnsettled = frame.Map(l.resumeMap), l.resumeInc
	}
	return a
}

// Detach detaches the link with the error e (nil for none), closing it
// (detach with closed set, part 2 §2.6.6); OnLinkDetach follows the
// peer's answer.
func (l *Link) Detach(e *Error) error { return l.detach(true, e) }

// DetachOnly detaches the link without closing it (the terminus lives on
// for a later attach, part 2 §2.6.5).
func (l *Link) DetachOnly(e *Error) error { return l.detach(false, e) }

func (l *Link) detach(close bool, e *Error) error {
	if !l.usable() {
		return ErrState
	}
	l.err = e
	l.writeDetach(close, e)
	return nil
}

func (l *Link) writeDetach(close bool, e *Error) {
	c := l.s.c
	start := c.startFrame(l.s.local)
	c.out = frame.AppendDetach(c.out, frame.Detach{Handle: l.local, Closed: close, Error: e.amqp()})
	c.endFrame(start)
	l.st.local = closed
	l.closing = close
	l.pend.on = false
}

// fail detaches the link for a fault of the peer, and reports it at
// once: OnLinkDetach runs when the detach is written, not when the peer
// answers (a peer that broke the protocol may never answer). The handle
// stays mapped until the answer, so that the link's frames meanwhile are
// ignored, but the application has heard.
func (l *Link) fail(cond frame.Condition, desc string) {
	if l.deferred { // a fault of the peer before the handler answered: refused now
		l.Answer(NewError(cond, desc))
		return
	}
	if l.st.local != active {
		return
	}
	l.err = NewError(cond, desc)
	l.writeDetach(true, l.err)
	l.report()
}

// gone unmaps a detached link and reports OnLinkDetach, unless fail
// reported it already.
//
// The link is over from here on: both halves closed.
func (l *Link) gone(e *Error) {
	if l.st.over() {
		return
	}
	remote := l.st.remote != unset
	l.st = endpoint{closed, closed}
	if l.err == nil {
		l.err = e
	}
	s := l.s
	c := s.c
	c.release(l.held) // counted until the link is unmapped, as the budget asks
	l.held = 0
	if remote && uint64(l.remote) < uint64(len(s.byRemote)) && s.byRemote[l.remote] == l {
		s.byRemote[l.remote] = nil
		s.setDetached(l.remote, true)
	}
	if uint64(l.local) < uint64(len(s.byLocal)) && s.byLocal[l.local] == l {
		s.byLocal[l.local] = nil
		s.nLocal--
	}
	for i, w := range s.waiting {
		if w == l {
			s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
			break
		}
	}
	l.report()
}

// report is the end of a link for the application, once: its name is
// free, the delivery it was joining dropped and its deliveries forgotten
// (their contexts dropped), then OnLinkDetach. gone runs it at the
// detach exchange; fail, as soon as this end's detach for a fault of the
// peer is written (the handle stays mapped, and the link counted by the
// budget, until the peer answers).
func (l *Link) report() {
	if l.reported {
		return
	}
	l.reported = true
	s := l.s
	c := s.c
	if k := (linkName{string(l.name), l.sender}); c.names[k] == l {
		delete(c.names, k)
	}
	l.recv.drop(c) // its buffer goes with the delivery in progress
	l.keep()       // recover.go: what a detach without closing leaves unsettled
	s.outgoing.forget(l)
	s.incoming.forget(l)
	l.pend.on = false
	if l.coord && !l.sender {
		l.coordinatorGone() // its open transactions roll back
	}
	if !l.hidden {
		s.h().OnLinkDetach(l, l.err)
	}
}

// onFlow handles the link part of a flow (part 2 §2.6.7).
func (l *Link) onFlow(f *frame.Flow) {
	if l.st.local != active && !l.deferred {
		return
	}
	c := l.s.c
	if l.sender {
		// link-credit(snd) = delivery-count(rcv) + link-credit(rcv) - delivery-count(snd);
		// a receiver that has not seen the attach yet counts from the
		// initial delivery-count, which is this end's.
		dc := f.DeliveryCount.Or(l.deliveryCount)
		l.credit = dc + f.LinkCredit.Or(0) - l.deliveryCount
		if int32(l.credit) < 0 {
			l.credit = 0
		}
		l.drain = f.Drain
		if !l.hidden {
			l.flowProps = f.Properties // for FlowProperties, during OnFlow
			c.h.OnFlow(l)
			l.flowProps = nil
		}
		l.drained(f.Echo)
		return
	}
	l.available = f.Available.Or(0)
	if dc, ok := f.DeliveryCount.Get(); ok {
		// The sender's delivery-count is the truth: credit is what is
		// left of delivery-count + link-credit granted.
		limit := l.deliveryCount + l.credit
		l.deliveryCount = dc
		l.credit = limit - l.deliveryCount
		if int32(l.credit) < 0 {
			l.credit = 0
		}
	}
	if !l.hidden { // a coordinator link the engine runs
		l.flowProps = f.Properties // for FlowProperties, during OnFlow
		c.h.OnFlow(l)
		l.flowProps = nil
	}
	if f.Echo && l.usable() {
		l.s.writeFlow(l, false)
	}
}

// drained is the step after a sender's OnFlow: a drain asked for is
// completed, using up the credit the handler did not use, by advancing
// delivery-count and answering with the flow state even when no credit
// was left (§2.6.7: the receiver waits for it; go-amqp's DrainCredit
// sends link-credit 0 with drain set). A flow with echo is answered.
// Like any action it needs a usable link.
func (l *Link) drained(echo bool) {
	if !l.usable() {
		return
	}
	if l.drain && !l.pend.on {
		l.deliveryCount += l.credit
		l.credit = 0
		l.s.writeFlow(l, false)
	} else if echo {
		l.s.writeFlow(l, false)
	}
}

// Flow grants the peer credit for credit deliveries on a receiver (sets
// link-credit, part 2 §2.6.7) and sends it.
func (l *Link) Flow(credit uint32) error {
	if l.sender || !l.usable() {
		return ErrState
	}
	l.credit = credit
	l.drain = false
	l.s.writeFlow(l, false)
	return nil
}

// KeepCredit grants credit for n deliveries on a receiver and keeps it
// granted: the engine tops it up to n whenever half is used (what
// Config.Credit and LinkOptions.Credit do from the attach on). 0 stops
// the top-ups, leaving the credit granted. It is
// SetCreditor(Creditor{Credit: n}).
func (l *Link) KeepCredit(n uint32) error { return l.SetCreditor(Creditor{Credit: n}) }

// DrainCredit asks the sender to use up the credit granted or give it
// back (flow with drain set); OnFlow reports the sender's answer, with
// Credit 0.
func (l *Link) DrainCredit() error {
	if l.sender || !l.usable() {
		return ErrState
	}
	l.drain = true
	l.s.writeFlow(l, false)
	return nil
}

// SetAvailable tells the receiver, on a sender, how many deliveries are
// waiting (flow's available); it is sent with the next flow, or now when
// send is set.
func (l *Link) SetAvailable(n uint32, send bool) error {
	if !l.sender || !l.usable() {
		return ErrState
	}
	l.available = n
	if send {
		l.s.writeFlow(l, false)
	}
	return nil
}

// onTransfer handles a transfer on a receiving link: credit (part 2
// §2.6.7), reassembly (§2.6.12), then OnDelivery.
func (l *Link) onTransfer(t *frame.Transfer, payload []byte) error {
	if l.st.local != active {
		return nil
	}
	s := l.s
	c := s.c
	if l.sender {
		return &linkError{l, frame.CondNotAllowed, "transfer on a link where the peer is the receiver"}
	}
	if !l.recv.join.InProgress() {
		if l.credit == 0 {
			return &linkError{l, frame.CondTransferLimitExceeded, "transfer without link credit"}
		}
		l.credit--
		l.deliveryCount++
		l.recv.reset()
		if t.Resume {
			l.resumedTransfer(t) // recover.go
		}
	}
	if t.State.Type == frame.StateOther { // part 4's transactional-state (txn.go)
		if err := l.txnTransfer(&t.State); err != nil {
			return err
		}
	}
	// The delivery in progress is joined on the link; the budget counts
	// what its buffer holds (checked before a transfer is copied in, and
	// again at the buffer's size after).
	if err := c.charge(len(payload) + len(t.DeliveryTag)); err != nil {
		return err
	}
	c.release(len(payload) + len(t.DeliveryTag))
	d, done, err := l.recv.join.Add(t, payload, c.maxMessage)
	if held := l.recv.join.Held(); held != l.recv.joinHeld {
		c.held += held - l.recv.joinHeld
		l.recv.joinHeld = held
		if err := c.charge(0); err != nil {
			return err
		}
	}
	if err != nil {
		return l.assemblyFault(err)
	}
	if !done && !d.Aborted {
		return nil
	}
	d.Channel = s.remote
	if l.recv.dropResumed {
		l.recv.reset()
		return nil // a resumed delivery this end does not know (part 2 §2.6.13)
	}
	dd := Delivery{Link: l, Delivery: d}
	if l.coord {
		// A coordinator link the engine runs (txn.go); its deliveries
		// never take the fast path (Session.onTransfer).
		if err := l.coordinate(&dd); err != nil {
			return err
		}
		return l.creditTopUp()
	}
	err = l.delivered(&dd)
	l.recv.reset() // Delivery.TxnID and Resumed are over
	return err
}

// delivered reports a whole delivery: it is kept for its settlement when
// it needs one, OnDelivery runs, then the engine's own actions, each
// guarded as any action is: the automatic accept, then the credit
// top-up.
//
// A delivery that needs settling is kept in the session's ring of
// incoming deliveries unless it was settled here during OnDelivery (or
// by the automatic accept): a receiver that settles as it goes never
// touches the ring.
func (l *Link) delivered(d *Delivery) error {
	s := l.s
	c := s.c
	l.recv.id, l.recv.done = d.DeliveryID, curNone
	c.h.OnDelivery(l, *d)
	keep := !d.Aborted && !d.Settled
	if keep && l.recv.done == curNone && l.autoAccept {
		l.accept(d.DeliveryID)
	}
	done := l.recv.done
	l.recv.done = curOver
	if keep && done != curSettled && l.usable() {
		r := &s.incoming
		if r.n == len(r.e) {
			// The ring grows: the budget counts it.
			if err := c.charge(max(16, r.n) * deliveryCost); err != nil {
				l.recv.ctx = nil
				return err
			}
			s.ringHeld += max(16, r.n) * deliveryCost
		}
		e := r.push(d.DeliveryID, l)
		if l.recv.ctx != nil {
			e.ctx = l.recv.ctx // a slot not in use holds none (rentry.settle)
		}
		if l.keepTags { // recover.go: a durable receiver keeps its unsettled tags
			was := cap(e.tag)
			e.tag = append(e.tag, d.DeliveryTag...)
			if grew := cap(e.tag) - was; grew > 0 { // the peer's tag: the budget counts the buffer kept
				if err := c.charge(grew); err != nil {
					return err
				}
				s.ringHeld += grew
			}
		}
	}
	if l.recv.ctx != nil {
		l.recv.ctx = nil
	}
	return l.creditTopUp()
}

// What became of the delivery of the current OnDelivery (receiving.done).
const (
	curOver     uint8 = iota // no OnDelivery is running
	curNone                  // not disposed of yet
	curDisposed              // given a state, not settled
	curSettled               // settled here
)

// creditTopUp grants the link's automatic credit again as its Creditor
// says, after a delivery (an action like any, guarded by Flow). Both
// policies grant only at half used or below: that test first, so the
// common delivery pays one compare.
func (l *Link) creditTopUp() error {
	if l.autoCredit > 0 && l.credit <= l.autoCredit/2 {
		l.grant() // out of line: creditTopUp inlines into delivered
	}
	return nil
}

// grant grants the credit the link's Creditor asks for now.
func (l *Link) grant() {
	if n := (Creditor{l.autoCredit, l.creditDrained}).Grant(l.credit, 0); n > 0 {
		l.Flow(n)
	}
}

// accept is the automatic accept of delivery id.
func (l *Link) accept(id uint32) { l.disposeSimple(id, frame.StateAccepted, true) }

// assemblyFault is the error of a transfer the assembler refused.
func (l *Link) assemblyFault(err error) error {
	switch {
	case errors.Is(err, frame.ErrMessageTooLarge):
		return &linkError{l, frame.CondMessageSizeExceeded, err.Error()}
	}
	return &linkError{l, frame.CondInvalidField, err.Error()}
}

// Dispose sends the disposition of delivery id (part 2 §2.7.6): its
// state (an outcome such as Accepted, or none) and, when settle is set,
// its settlement. On a receiver in settle mode second, settlement waits
// for the sender's: the state goes out unsettled, and OnDisposition
// reports the sender settling. Dispositions of consecutive deliveries
// with the same simple state go out as one range.
func (l *Link) Dispose(id uint32, state frame.DeliveryState, settle bool) error {
	if simple(state.Type) {
		return l.disposeSimple(id, state.Type, settle)
	}
	if !l.usable() {
		return ErrState
	}
	role, settle := l.disposing(id, settle)
	l.s.c.addDisp(l.s.local, role, id, settle, state)
	return nil
}

// disposeSimple is Dispose of a state with no fields (none, accepted,
// released), passed as its type alone: what Delivery.Accept and Release
// call.
func (l *Link) disposeSimple(id uint32, st frame.StateType, settle bool) error {
	if !l.usable() {
		return ErrState
	}
	role, settle := l.disposing(id, settle)
	l.s.c.addSimpleDisp(l.s.local, role, id, settle, st)
	return nil
}

// disposing is Dispose's bookkeeping: the delivery of the current
// OnDelivery is marked disposed of, and one settled here is forgotten,
// except by a receiver in settle mode second, whose settlement waits for
// the sender's (it returns settle false then). It returns this end's
// role.
func (l *Link) disposing(id uint32, settle bool) (frame.Role, bool) {
	s := l.s
	role := frame.RoleReceiver
	r := &s.incoming
	if l.sender {
		role, r = frame.RoleSender, &s.outgoing
	}
	if settle && l.rcvMode == frame.RcvSecond && !l.sender {
		settle = false
	}
	if id == l.recv.id && l.recv.done != curOver && !l.sender {
		// The delivery of the OnDelivery running: not in the ring yet.
		if settle {
			l.recv.done = curSettled
		} else if l.recv.done == curNone {
			l.recv.done = curDisposed
		}
		return role, settle
	}
	if settle && r.n > 0 {
		if i := r.find(id); i >= 0 && r.at(i).link == l {
			r.at(i).settle()
			r.trim()
		}
	}
	return role, settle
}

// SetDeliveryContext sets the application's value for delivery id of
// the link, sent or received (after Proton's pn_delivery_set_context):
// it comes back as DeliveryUpdate.Context in the delivery's OnDisposition
// (on a receiver: the sender settling, in receiver settle mode second,
// or changing its state) and as Unsettled.Context. During OnDelivery it
// applies to that delivery, which keeps it when it is kept for its
// settlement (not settled by the sender, nor here during OnDelivery).
// It fails with ErrState when the link does not hold the delivery
// unsettled (settled and forgotten, or never its). The value is dropped
// when the delivery is settled and forgotten. SendWith sets it as it
// sends; this sets it on any other delivery (SendTxn, SendResume,
// Declare, Discharge, an incoming one).
//
// A pointer costs no allocation; an integer or other non-pointer value
// does (Go boxes it in the interface).
func (l *Link) SetDeliveryContext(id uint32, v any) error {
	if l.reported {
		return ErrState
	}
	if !l.sender && id == l.recv.id && l.recv.done != curOver {
		l.recv.ctx = v // the delivery of the OnDelivery running: not in the ring yet
		return nil
	}
	r := &l.s.incoming
	if l.sender {
		r = &l.s.outgoing
	}
	if i := r.find(id); i >= 0 && r.at(i).link == l {
		r.at(i).ctx = v
		return nil
	}
	return ErrState
}

// Settle settles delivery id with no new state.
func (l *Link) Settle(id uint32) error { return l.Dispose(id, frame.DeliveryState{}, true) }

// SetMessageFormat sets the message-format (part 2 §2.7.5) of the
// deliveries the link sends from now on: 0, the default, is the
// standard AMQP message; others are a vendor's (the top three bytes its
// IANA enterprise number, the last the format's version).
func (l *Link) SetMessageFormat(format uint32) { l.format = format }

// MessageFormat returns what SetMessageFormat set.
func (l *Link) MessageFormat() uint32 { return l.format }

// Send sends a message on a sending link (part 2 §2.6.12): payload is its
// encoded sections, tag the delivery-tag (nil: the delivery-id's 4
// bytes), settled whether it goes presettled. It returns the
// delivery-id. The payload is copied once, into the output, split into
// transfers that fit the peer's max-frame-size; frames beyond the peer's
// session window wait in the link (a second copy of those bytes) and go
// out when it reopens, and until then Send reports ErrBusy.
//
// Send fails, changing nothing, with ErrNoCredit, ErrNoWindow,
// ErrOutputFull (back-pressure: wait for OnWritable), ErrBusy (the four
// match ErrTryLater), ErrSettleMode, ErrMessageSize, ErrTag or ErrState.
func (l *Link) Send(tag, payload []byte, settled bool) (uint32, error) {
	return l.SendWith(tag, payload, settled, nil)
}

// SendWith is Send with the application's value for the delivery (after
// Proton's pn_delivery_set_context): ctx comes back as
// DeliveryUpdate.Context in each OnDisposition of the delivery and as
// Unsettled.Context, so the application finds its own record of the
// delivery without a map by delivery-id. The engine keeps ctx while it
// keeps the delivery, and drops it when the delivery is settled and
// forgotten (the peer settled it, this end settled it, the link went);
// a delivery sent settled keeps nothing, so ctx is dropped at once.
//
// A pointer (or a map, chan or func) in an interface costs no
// allocation; any other value does (an integer, a struct, a string: Go
// boxes it on the heap), so pass a pointer to keep a send free of
// allocations.
func (l *Link) SendWith(tag, payload []byte, settled bool, ctx any) (uint32, error) {
	s := l.s
	c := s.c
	switch {
	case !l.sender || !l.attached():
		return 0, ErrState
	case l.pend.on:
		return 0, ErrBusy
	case l.credit == 0:
		return 0, ErrNoCredit
	case s.remoteIncomingWindow == 0:
		return 0, ErrNoWindow
	case c.unwritten() > c.cfg.MaxOutput:
		c.full = true
		return 0, ErrOutputFull
	case settled && l.sndMode == frame.SndUnsettled, !settled && l.sndMode == frame.SndSettled:
		return 0, ErrSettleMode
	case l.remoteMaxMessage > 0 && uint64(len(payload)) > l.remoteMaxMessage:
		return 0, ErrMessageSize
	case len(tag) > 32:
		return 0, ErrTag
	}
	id := s.nextDeliveryID
	s.nextDeliveryID++
	l.deliveryCount++
	l.credit--
	var idTag [4]byte
	if tag == nil {
		binary.BigEndian.PutUint32(idTag[:], id)
		tag = idTag[:]
	}
	if !settled {
		e := s.outgoing.push(id, l)
		e.tag = append(e.tag, tag...)
		if ctx != nil {
			e.ctx = ctx // a slot not in use holds none (rentry.settle)
		}
	} else if s.outgoing.n > 0 {
		s.outgoing.push(id, l).free = true // keep ids consecutive in the ring
	}
	t := frame.TransferHead{Handle: l.local, DeliveryID: id, HasDeliveryID: true, DeliveryTag: tag,
		MessageFormat: l.format, HasMessageFormat: true, Settled: settled}
	var n int
	if l.special != nil {
		n = l.writeSpecial(&t, payload) // SendTxn, SendResume
	} else {
		n = l.writeTransfer(&t, payload)
	}
	if n < len(payload) {
		l.pend = pendingSend{on: true, id: id, buf: append(l.pend.buf[:0], payload[n:]...)}
	}
	return id, nil
}

// writeTransfer writes transfers of t carrying payload, each within the
// peer's max-frame-size, while the peer's session window lasts; it
// returns how much of payload went out.
func (l *Link) writeTransfer(t *frame.TransferHead, payload []byte) int {
	s := l.s
	c := s.c
	maxFrame := int(c.remoteMaxFrame)
	sent := 0
	if s.outgoingWindow < 1<<30 {
		s.writeFlow(nil, false) // announce the outgoing window whole again, once per 2^30 transfers
	}
	// startFrame and endFrameFit, by hand: the frames go to out, stored
	// back once, and nothing in the loop writes a disposition.
	if c.disp.on {
		c.flushDisp()
	}
	out := c.out
	for {
		start := len(out)
		out = frame.BeginFrame(out, frame.TypeAMQP, s.local)
		t.More = false
		out = frame.AppendTransferHead(out, t)
		room := maxFrame - (len(out) - start)
		if len(payload)-sent > room {
			out = out[:start+8]
			t.More = true
			out = frame.AppendTransferHead(out, t)
			room = maxFrame - (len(out) - start)
		}
		k := min(room, len(payload)-sent)
		out = append(out, payload[sent:sent+k]...)
		out = frame.EndFrame(out, start) // each transfer is cut to fit
		sent += k
		s.nextOutgoingID++
		s.outgoingWindow--
		s.remoteIncomingWindow--
		if !t.More || s.remoteIncomingWindow == 0 {
			break
		}
		// continuation frames carry the handle and more only
		*t = frame.TransferHead{Handle: t.Handle}
	}
	c.out = out
	c.lastSent = c.now
	return sent
}

// writeSpecial is Send's writeTransfer for a transactional or resumed
// delivery (SendTxn, SendResume: l.special): its first transfer carries
// the state or resume, which a TransferHead does not.
func (l *Link) writeSpecial(h *frame.TransferHead, payload []byte) int {
	t := h.Transfer()
	t.Resume, t.State = l.special.resume, l.special.state
	return l.writeFirstTransfer(&t, payload)
}

// writeFirstTransfer is writeTransfer for a delivery whose first
// transfer says more than a TransferHead holds (a state, resume): that
// one is written from t, the rest as writeTransfer writes them.
func (l *Link) writeFirstTransfer(t *frame.Transfer, payload []byte) int {
	s := l.s
	c := s.c
	if s.outgoingWindow < 1<<30 {
		s.writeFlow(nil, false)
	}
	start := c.startFrame(s.local)
	t.More = false
	c.out = frame.AppendTransfer(c.out, *t)
	room := int(c.remoteMaxFrame) - (len(c.out) - start)
	if len(payload) > room {
		c.out = c.out[:start+8]
		t.More = true
		c.out = frame.AppendTransfer(c.out, *t)
		room = int(c.remoteMaxFrame) - (len(c.out) - start)
	}
	k := min(room, len(payload))
	c.out = append(c.out, payload[:k]...)
	c.endFrameFit(start)
	s.nextOutgoingID++
	s.outgoingWindow--
	s.remoteIncomingWindow--
	if !t.More || s.remoteIncomingWindow == 0 {
		return k
	}
	h := frame.TransferHead{Handle: t.Handle}
	return k + l.writeTransfer(&h, payload[k:])
}

// sendPending sends what the session window held back of the link's delivery.
func (l *Link) sendPending() {
	p := &l.pend
	if p.abort {
		// The aborted transfer, like any, takes a place in the window.
		// Its more flag is false: part 2 §2.7.5, "a sender SHOULD NOT
		// set the more flag to true if it also sets the aborted flag".
		c := l.s.c
		start := c.startFrame(l.s.local)
		c.out = frame.AppendTransfer(c.out, frame.Transfer{Handle: l.local, Aborted: true})
		c.endFrameFit(start) // each transfer is cut to fit
		l.s.nextOutgoingID++
		l.s.outgoingWindow--
		l.s.remoteIncomingWindow--
		// "An aborted message is implicitly settled": no outcome will come.
		if r := &l.s.outgoing; r.n > 0 {
			if i := r.find(p.id); i >= 0 && r.at(i).link == l {
				r.at(i).settle()
				r.trim()
			}
		}
		p.on, p.abort, p.off, p.buf = false, false, 0, p.buf[:0]
		return
	}
	t := frame.TransferHead{Handle: l.local}
	n := l.writeTransfer(&t, p.buf[p.off:])
	p.off += n
	if p.off == len(p.buf) {
		p.on, p.off, p.buf = false, 0, p.buf[:0]
	}
}

// Abort aborts the link's delivery still waiting for the session window
// (part 2 §2.6.12): a transfer with aborted set ends it, at once or when
// the window reopens (Send reports ErrBusy until then).
func (l *Link) Abort() error {
	if !l.pend.on || !l.usable() {
		return ErrState
	}
	l.pend.abort = true
	if l.s.remoteIncomingWindow > 0 {
		l.sendPending()
	}
	return nil
}
