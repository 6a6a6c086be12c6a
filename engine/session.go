package engine

import (
	"math"
	"slices"
	"strconv"

	"github.com/amqpsax/amqpsax/frame"
)

// This file is the session (part 2 §2.5): Session and its accessors,
// begin and end, and the performatives Conn.route brings to a session,
// one onX each (onTransfer with the windows of §2.5.6 and a delivery's
// fast path, onFlow, onDisposition over a range, onAttach, onDetach,
// onEnd; frames are ignored while this end ends the session, transfers
// still counted),
// the ring of unsettled outgoing deliveries, and the dispositions this
// end sends, merged into ranges before they are written.

// Session is a session of a connection (part 2 §2.5): a pair of channels
// and the transfer windows of §2.5.6, which the engine keeps.
type Session struct {
	// Context is the application's, for its own state.
	Context any

	c      *Conn
	local  uint16 // this end's channel
	remote uint16 // the peer's channel, once its begin arrived

	st       endpoint // begin and end, sent and received; over once unmapped
	err      *Error
	reported bool // OnSessionEnd has run: over for the application

	// §2.5.6, counted in transfer frames; ids are RFC 1982 serial numbers.
	nextIncomingID       uint32 // expected transfer-id of the next incoming transfer
	incomingWindow       uint32 // transfers this end still accepts
	nextOutgoingID       uint32 // transfer-id of the next outgoing transfer
	outgoingWindow       uint32 // transfers this end may send before it announces more (it always can)
	remoteIncomingWindow uint32 // transfers the peer still accepts
	remoteOutgoingWindow uint32
	window               uint32 // the incoming window announced, topped up when half used
	flowDue              bool   // in Conn.due: the window is to be topped up

	handleMax       uint32 // this end's
	remoteHandleMax uint32

	byRemote []*Link // by the peer's handle
	// detached has bit h set while the peer's handle h is detached and
	// not attached again: frames for it are ignored (link).
	detached []uint64
	byLocal  []*Link // by this end's handle
	nLocal   int     // links in byLocal
	waiting  []*Link // attached here, answer awaited

	ringHeld       int    // bytes of the budget the incoming ring (and its tags) and byRemote hold
	nextDeliveryID uint32 // of the next outgoing delivery
	outgoing       ring   // outgoing deliveries, from the oldest unsettled on
	incoming       ring   // incoming deliveries not settled by both ends
}

func (c *Conn) newSession(ch uint16) *Session {
	// Until the peer's begin says otherwise, its handle-max is the spec's
	// default (part 2 §2.7.2), so that links attached before the answer
	// (pipelined, as Proton does) get handles of their own.
	s := &Session{c: c, local: ch, window: c.cfg.Window, incomingWindow: c.cfg.Window,
		outgoingWindow: math.MaxInt32, handleMax: c.cfg.HandleMax, remoteHandleMax: math.MaxUint32}
	c.byLocal[ch] = s
	c.nLocal++
	return s
}

// Conn returns the session's connection.
func (s *Session) Conn() *Conn { return s.c }

// Channel returns this end's channel number.
func (s *Session) Channel() uint16 { return s.local }

// RemoteChannel returns the peer's channel number.
func (s *Session) RemoteChannel() uint16 { return s.remote }

// Window returns the session's window state (part 2 §2.5.6): the
// transfers this end still accepts, and those the peer still accepts.
func (s *Session) Window() (incoming, remoteIncoming uint32) {
	return s.incomingWindow, s.remoteIncomingWindow
}

// Unsettled returns the number of outgoing deliveries kept for their
// settlement (from the oldest unsettled one on).
func (s *Session) Unsettled() int { return s.outgoing.n }

// Err returns the error the session ended with, or nil.
func (s *Session) Err() *Error { return s.err }

func (s *Session) writeBegin() {
	b := frame.Begin{NextOutgoingID: s.nextOutgoingID, IncomingWindow: s.incomingWindow,
		OutgoingWindow: s.outgoingWindow, HandleMax: frame.Some(s.handleMax)}
	if s.st.remote != unset {
		b.RemoteChannel = frame.Some(s.remote)
	}
	start := s.c.startFrame(s.local)
	s.c.out = frame.AppendBegin(s.c.out, b)
	s.c.endFrame(start)
	s.st.local = active
}

// End ends the session with the error e (nil for none): it sends end;
// OnSessionEnd follows the peer's.
func (s *Session) End(e *Error) error {
	if !s.usable() {
		return ErrState
	}
	s.err = e
	s.writeEnd(e)
	return nil
}

func (s *Session) writeEnd(e *Error) {
	start := s.c.startFrame(s.local)
	s.c.out = frame.AppendEnd(s.c.out, frame.End{Error: e.amqp()})
	s.c.endFrame(start)
	s.st.local = closed
}

// fail ends the session for a fault of the peer (part 2 §2.5.5, §2.7.8): end
// carries cond; frames on it are ignored until the peer's end. It is
// reported at once, as Link.fail is: its links detach, then
// OnSessionEnd, when the end is written; the channel stays mapped until
// the peer's end.
func (s *Session) fail(cond frame.Condition, desc string) {
	if s.st.local != active {
		return
	}
	s.err = NewError(cond, desc)
	s.writeEnd(s.err)
	s.report()
}

// onEnd handles the peer's end (part 2 §2.7.8, §2.5.5).
func (s *Session) onEnd(body []byte) error {
	e, err := frame.ParseEnd(body)
	if err != nil {
		return decodeError(err)
	}
	rerr := remoteError(e.Has(frame.EndError), e.Error)
	if s.st.local == active {
		s.writeEnd(nil)
	}
	if s.err == nil {
		s.err = rerr
	}
	s.gone(s.err)
	return nil
}

// gone unmaps an ended session (both halves closed from here on) and
// reports it, unless fail reported it already.
func (s *Session) gone(e *Error) {
	if s.st.over() {
		return
	}
	remote := s.st.remote != unset
	s.st = endpoint{closed, closed}
	if s.err == nil {
		s.err = e
	}
	c := s.c
	if remote && int(s.remote) < len(c.byRemote) && c.byRemote[s.remote] == s {
		c.byRemote[s.remote] = nil
	}
	if int(s.local) < len(c.byLocal) && c.byLocal[s.local] == s {
		c.byLocal[s.local] = nil
		c.nLocal--
	}
	c.release(sessionCost + s.ringHeld) // counted until the session is unmapped
	s.ringHeld = 0
	s.report()
}

// report is the end of a session for the application, once: its links
// detach (events, each with the session's error when it has none of its
// own), then OnSessionEnd. gone runs it at the end exchange; fail, as
// soon as this end's end for a fault of the peer is written (the links
// are unmapped then: no frame of the session reaches them any more; the
// channel stays mapped, and the session counted by the budget, until the
// peer's end).
func (s *Session) report() {
	if s.reported {
		return
	}
	s.reported = true
	for _, l := range s.byLocal {
		if l != nil {
			l.gone(s.err)
		}
	}
	c := s.c
	if c.disp.on && c.disp.ch == s.local {
		c.disp.on = false
	}
	s.h().OnSessionEnd(s, s.err)
}

func (s *Session) h() Handler { return s.c.h }

// onFlow handles a flow (part 2 §2.7.4): the session's windows (§2.5.6)
// and, with a handle, the link's credit (§2.6.7).
func (s *Session) onFlow(body []byte) error {
	if s.st.local != active {
		return nil // ending: only the peer's end counts (and transfers, against the window)
	}
	f, err := frame.ParseFlow(body)
	if err != nil {
		return decodeError(err)
	}
	// remote-incoming-window = next-incoming-id(flow) + incoming-window(flow) - next-outgoing-id(here);
	// a flow without next-incoming-id counts from this end's initial
	// next-outgoing-id, 0.
	wasShut := s.remoteIncomingWindow == 0
	s.remoteIncomingWindow = f.NextIncomingID.Or(0) + f.IncomingWindow - s.nextOutgoingID
	if int32(s.remoteIncomingWindow) < 0 {
		s.remoteIncomingWindow = 0
	}
	s.remoteOutgoingWindow = f.OutgoingWindow
	if h, ok := f.Handle.Get(); ok {
		l, err := s.link(h)
		if err != nil {
			return err
		}
		if l != nil {
			l.onFlow(&f)
		}
	} else if f.Echo {
		s.writeFlow(nil, false)
	}
	if wasShut && s.remoteIncomingWindow > 0 && s.usable() {
		s.reopened()
	}
	return nil
}

// reopened resumes the senders the peer's session window had stopped.
func (s *Session) reopened() {
	for _, l := range s.byLocal {
		if l != nil && l.pend.on && s.remoteIncomingWindow > 0 {
			l.sendPending()
		}
	}
	for _, l := range s.byLocal {
		if l != nil && l.sender && l.attached() && l.credit > 0 && !l.pend.on && s.remoteIncomingWindow > 0 {
			s.h().OnFlow(l)
		}
	}
}

// link returns the link the peer's handle names, or the session error
// amqp:session:unattached-handle (part 2 §2.8.15). A link this end is
// detaching is returned too: its frames are ignored there. For a handle
// whose detach exchange is over it returns nil and no error: the frames
// a peer sent for it before it read the answer (a flow that crossed
// the detach, as Azure/go-amqp sends when a receiver closes) are ignored,
// as Qpid Proton and RabbitMQ ignore them, instead of ending the session
// under the peer's other links. Transfers for it still count against
// the session window.
func (s *Session) link(handle uint32) (*Link, error) {
	if uint64(handle) < uint64(len(s.byRemote)) {
		if l := s.byRemote[handle]; l != nil {
			return l, nil
		}
	}
	return nil, s.noLink(handle)
}

// noLink is link's answer for a handle with no link: nil for one whose
// detach exchange is over, else amqp:session:unattached-handle.
func (s *Session) noLink(handle uint32) error {
	if s.wasDetached(handle) {
		return nil
	}
	return &sessionError{s, frame.CondUnattachedHandle, "handle " + strconv.FormatUint(uint64(handle), 10) + " is not attached"}
}

// wasDetached reports that the peer's handle h was detached and not
// attached since.
func (s *Session) wasDetached(h uint32) bool {
	return uint64(h/64) < uint64(len(s.detached)) && s.detached[h/64]&(1<<(h%64)) != 0
}

// setDetached marks the peer's handle h detached (on) or attached again.
func (s *Session) setDetached(h uint32, on bool) {
	for uint64(h/64) >= uint64(len(s.detached)) {
		if !on {
			return
		}
		s.detached = append(s.detached, 0)
	}
	if on {
		s.detached[h/64] |= 1 << (h % 64)
	} else {
		s.detached[h/64] &^= 1 << (h % 64)
	}
}

// writeFlow writes a flow with the session's state and, for l, the
// link's (part 2 §2.7.4). It resets the incoming window to the one
// announced.
func (s *Session) writeFlow(l *Link, echo bool) {
	s.incomingWindow = s.window
	s.outgoingWindow = math.MaxInt32 // this end never holds transfers back: re-announce it whole
	f := frame.Flow{NextIncomingID: frame.Some(s.nextIncomingID), IncomingWindow: s.incomingWindow,
		NextOutgoingID: s.nextOutgoingID, OutgoingWindow: s.outgoingWindow, Echo: echo}
	if l != nil {
		f.Handle, f.DeliveryCount, f.LinkCredit, f.Drain = frame.Some(l.local), frame.Some(l.deliveryCount), frame.Some(l.credit), l.drain
		if l.sender {
			f.Available = frame.Some(l.available)
		}
		if l.flowOut.on {
			f.Properties = l.flowOut.props
		}
	}
	start := s.c.startFrame(s.local)
	s.c.out = frame.AppendFlow(s.c.out, f)
	s.c.endFrame(start)
	if l != nil {
		l.flowOut.on = false
	}
}

// onTransfer handles a transfer (part 2 §2.7.5): the session's window
// (§2.5.6), then the link's credit and the delivery (§2.6.12).
//
// The transfer's head is read once (frame.TransferHead). A delivery in
// one transfer on a receiving link this end has not detached takes the
// fast path, here: credit, then the delivery (Link.delivered), with no
// Transfer built and no join. Any other transfer the head reads (a
// delivery in several, a coordinator's) goes to the link's join
// (Link.onTransfer); one it does not read (a state, resume or abort,
// another encoding, a fault) is parsed whole, once (onTransferWhole).
func (s *Session) onTransfer(body []byte) error {
	h := &s.c.th
	payload, ok := h.Parse(body)
	if !ok {
		return s.onTransferWhole(body)
	}
	if err := s.took(); err != nil || s.st.local != active {
		return err
	}
	var l *Link // s.link(h.Handle), its common case in line
	if uint64(h.Handle) < uint64(len(s.byRemote)) {
		l = s.byRemote[h.Handle]
	}
	if l == nil {
		return s.noLink(h.Handle) // nil: a handle whose detach is over, its frames ignored
	}
	var err error
	switch {
	case h.More || !h.HasDeliveryID || l.recv.join.InProgress() || l.notFast || l.st.local != active || len(payload) > s.c.maxMessage:
		t := h.Transfer()
		err = l.onTransfer(&t, payload)
	case l.credit == 0:
		return &linkError{l, frame.CondTransferLimitExceeded, "transfer without link credit"}
	default:
		l.credit--
		l.deliveryCount++
		d := Delivery{Link: l, Delivery: frame.Delivery{Channel: s.remote, Handle: h.Handle, DeliveryID: h.DeliveryID,
			DeliveryTag: h.DeliveryTag, MessageFormat: h.MessageFormat, Settled: h.Settled, Frames: 1, Payload: payload}}
		err = l.delivered(&d)
	}
	if err != nil {
		return err
	}
	s.topUp()
	return nil
}

// onTransferWhole is onTransfer for a transfer the head does not read:
// parsed whole (frame.ParseTransferWhole, the head not read again), to
// the link's join.
func (s *Session) onTransferWhole(body []byte) error {
	t, payload, err := frame.ParseTransferWhole(body)
	if err != nil {
		return decodeError(err)
	}
	if err := s.took(); err != nil || s.st.local != active {
		return err
	}
	l, err := s.link(t.Handle)
	if err != nil || l == nil {
		return err
	}
	if err := l.onTransfer(&t, payload); err != nil {
		return err
	}
	s.topUp()
	return nil
}

// took counts a transfer against the session's incoming window (§2.5.6),
// or returns amqp:session:window-violation when it is closed. A session
// this end is ending counts its transfers too.
func (s *Session) took() error {
	if s.incomingWindow == 0 {
		return &sessionError{s, frame.CondWindowViolation, "transfer beyond the session's incoming window"}
	}
	s.nextIncomingID++
	s.incomingWindow--
	s.remoteOutgoingWindow--
	return nil
}

// topUp schedules the incoming window's top-up when half is used: once
// the bytes fed are processed, so one flow per Feed at most, however many
// transfers it held.
func (s *Session) topUp() {
	if s.incomingWindow <= s.window/2 && !s.flowDue {
		s.flowDue = true
		s.c.due = append(s.c.due, s)
	}
}

// onDisposition handles a disposition (part 2 §2.7.6): the peer's
// outcome or settlement of the deliveries first to last. The transition
// comes first, whole: each delivery of the range that the ring holds
// takes the peer's word, is dropped when settled, and is settled by this
// end when the peer gave a sender's delivery a terminal outcome without
// settling it (unless Config.ManualSettle). Then OnDisposition reports
// each, from a list of its own, so what a handler does (Send, Dispose)
// meets a ring that no loop is walking.
func (s *Session) onDisposition(body []byte) error {
	if s.st.local != active {
		return nil // ending: only the peer's end counts (and transfers, against the window)
	}
	d, err := frame.ParseDisposition(body)
	if err != nil {
		return decodeError(err)
	}
	first, last := d.Range()
	if int32(last-first) < 0 {
		return &connError{frame.CondInvalidField, "disposition range last before first"}
	}
	r := &s.outgoing // the peer is the receiver: this end's deliveries
	if d.Role == frame.RoleSender {
		r = &s.incoming
	}
	if r.n == 0 {
		return nil
	}
	c := s.c
	// A transactional-state gives its outcome and txn-id (txn.go).
	var txnID []byte
	if d.State.Type == frame.StateOther {
		// part 4's: the outcome in its place, the txn-id beside (txn.go)
		if d.State, txnID, err = txnDisposition(d.State); err != nil {
			return err
		}
	}
	autoSettle := r == &s.outgoing && !d.Settled && !c.cfg.ManualSettle && d.State.Type.Terminal()
	told := c.told[:0]
	tags := c.toldTags[:0]
	// What the range and the ring have in common: from the first delivery
	// at or after first, while in the range, so at most min(range, ring)
	// steps.
	start := 0 // the range begins at or before the oldest delivery
	if !inRange(r.at(0).id, first, last) {
		start = r.from(first)
	}
	for i := start; i < r.n; i++ {
		e := r.at(i)
		if !inRange(e.id, first, last) {
			break
		}
		if e.free || e.link == nil {
			continue
		}
		// told grows by one, its fields written in place (no struct built
		// on the stack and copied in).
		if len(told) == cap(told) {
			told = slices.Grow(told, 1)
		}
		told = told[:len(told)+1]
		t := &told[len(told)-1]
		t.link, t.ctx, t.id, t.tag, t.n = e.link, e.ctx, e.id, uint32(len(tags)), uint32(len(e.tag))
		tags = append(tags, e.tag...)
		if d.Settled || autoSettle {
			e.settle()
		}
		if autoSettle {
			c.addSimpleDisp(s.local, frame.RoleSender, e.id, true, frame.StateNone)
		}
	}
	r.trim()
	c.told, c.toldTags = told, tags
	// One DeliveryUpdate, its state copied once, its delivery's fields set
	// for each.
	h := s.h()
	disp := DeliveryUpdate{State: d.State, TxnID: txnID, Settled: d.Settled}
	for i := range told {
		t := &told[i]
		if t.link.reported || t.link.hidden {
			if t.ctx != nil {
				t.ctx = nil
			}
			continue
		}
		disp.ID, disp.Tag, disp.Context = t.id, tags[t.tag:t.tag+t.n:t.tag+t.n], t.ctx
		if t.ctx != nil {
			t.ctx = nil // the list is reused: it keeps no context alive
		}
		h.OnDisposition(t.link, disp)
	}
	return nil
}

// toldDisp is a delivery a disposition named, to be reported: its tag is
// tags[tag:tag+n] of the connection's toldTags.
type toldDisp struct {
	link   *Link
	ctx    any
	id     uint32
	tag, n uint32
}

func inRange(id, first, last uint32) bool { return id-first <= last-first }

// onAttach handles an attach (part 2 §2.7.3, §2.6.3): an answer to this
// end's, or a link the peer attaches, which the engine answers. A new
// link whose name is in use in the same direction (§2.6.1: unique per
// direction between two containers) is refused: answered and detached
// with amqp:not-allowed, or, with Config.LinkStealing, it takes the name
// and the old link is detached with amqp:link:stolen.
//
// The link keeps one copy of the attach, which the budget counts with
// the link: its name (and the connection's key for it), Source, Target,
// properties and capabilities are views of it; so are the keys of the
// index of its unsettled map (RemoteUnsettled), whose entries the budget
// counts here too.
func (s *Session) onAttach(body []byte) error {
	if s.st.local != active {
		return nil // ending: only the peer's end counts (and transfers, against the window)
	}
	c := s.c
	buf := append([]byte(nil), body...) // the link keeps its attach (RemoteAttach)
	a, err := frame.ParseAttach(buf)
	if err != nil {
		return decodeError(err)
	}
	if a.Handle > s.handleMax {
		return &connError{frame.CondFramingError, "attach with handle " + strconv.FormatUint(uint64(a.Handle), 10) +
			" above handle-max " + strconv.FormatUint(uint64(s.handleMax), 10)}
	}
	if uint64(a.Handle) < uint64(len(s.byRemote)) && s.byRemote[a.Handle] != nil {
		return &sessionError{s, frame.CondHandleInUse, "attach with handle " + strconv.FormatUint(uint64(a.Handle), 10) + ", which is in use"}
	}
	// the attach, the connection's key for its name (a copy), and the
	// index RemoteUnsettled may build (its keys copies, at most the map's
	// bytes)
	held := linkCost + cap(buf) + len(a.Name) + a.Unsettled.Len()*unsettledEntryCost + len(a.Unsettled)
	if err := c.charge(held); err != nil {
		return err
	}
	sender := a.Role == frame.RoleReceiver // this end's role
	var l *Link
	for i, w := range s.waiting {
		if w.sender == sender && string(w.name) == string(a.Name) {
			l = w
			s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
			break
		}
	}
	answer := l == nil
	var refuse *Error
	if answer {
		h, ok := s.freeHandle()
		if !ok {
			c.release(held)
			return &sessionError{s, frame.CondResourceLimitExceeded, "no handle left to answer an attach"}
		}
		if old := c.names[linkName{string(a.Name), sender}]; old != nil {
			if c.cfg.LinkStealing {
				old.Detach(NewError(frame.CondStolen, "link "+string(a.Name)+" attached again"))
				delete(c.names, linkName{string(a.Name), sender})
			} else {
				refuse = NewError(frame.CondNotAllowed, "a link named "+strconv.Quote(string(a.Name))+" is already attached in this direction")
			}
		}
		l = s.newLink(h, sender, a.Name, refuse == nil)
		l.hidden = refuse != nil
		l.sndMode, l.rcvMode = a.SndSettleMode.Or(frame.SndMixed), a.RcvSettleMode
		l.autoCredit = c.cfg.Credit
		l.autoAccept = c.cfg.AutoAccept
		if refuse == nil && isCoordinatorTarget(&a) {
			refuse = l.coordinatorAttach() // txn.go: the engine runs it, or refuses it
			l.hidden = true
		}
	}
	l.held = held
	if uint64(a.Handle) >= uint64(len(s.byRemote)) {
		// The peer picks its handles (up to handle-max): the table of
		// them grows to the highest, and the budget counts it.
		was := cap(s.byRemote)
		for uint64(a.Handle) >= uint64(len(s.byRemote)) {
			s.byRemote = append(s.byRemote, nil)
		}
		grew := (cap(s.byRemote) - was) * ptrSize
		if err := c.charge(grew); err != nil {
			return err
		}
		s.ringHeld += grew
	}
	s.byRemote[a.Handle] = l
	s.setDetached(a.Handle, false)
	l.remote = a.Handle
	l.st.remote = active
	l.attach, l.attachBuf = a, buf
	l.src, l.tgt = a.Source.Or(frame.Source{}), a.Target.Or(frame.Target{})
	l.keepTags = l.src.Durable == frame.DurabilityUnsettledState || l.tgt.Durable == frame.DurabilityUnsettledState
	l.remoteMaxMessage = a.MaxMessageSize.Or(0)
	if !l.sender {
		l.deliveryCount = a.InitialDeliveryCount.Or(0)
	} else if !answer {
		l.sndMode = a.SndSettleMode.Or(frame.SndMixed) // the sender's mode is the one in force
	}
	if answer && refuse == nil && !l.hidden {
		refuse = l.answerHook(&a) // answer.go: the handler's say in the answer
		l.hidden = refuse != nil
		if refuse == nil && l.deferred {
			// answer.go: the handler answers later (Link.Answer); the
			// application hears nothing of the link until then.
			held := a // a copy: only a deferred answer's escapes
			l.hidden, l.pending = true, &held
			return nil
		}
	}
	if refuse != nil {
		l.refuse(&a, refuse)
		return nil
	}
	if answer {
		l.recoverAnswer(&a) // recover.go: the unsettled map of the answer
		l.writeAttach(a.Source, a.Target)
	}
	l.attachDone()
	return nil
}

// refuse answers the peer's attach a with a refusal: an attach with no
// terminus at this end, then the detach with e (part 2 §2.6.3). The
// link is never reported.
func (l *Link) refuse(a *frame.Attach, e *Error) {
	l.mine = attachFields{}
	if l.sender {
		l.writeAttach(frame.Opt[frame.Source]{}, a.Target)
	} else {
		l.writeAttach(a.Source, frame.Opt[frame.Target]{})
	}
	l.err = e
	l.writeDetach(true, e)
}

// attachDone reports a link attached at both ends (OnLinkAttach) and
// grants a receiver its automatic credit.
func (l *Link) attachDone() {
	if l.st.local != active {
		return // detached before the answer came: only the detach exchange is left
	}
	if !l.hidden {
		l.s.h().OnLinkAttach(l)
	}
	if !l.sender && l.attached() && l.autoCredit > 0 && l.credit == 0 {
		l.Flow(l.autoCredit)
	}
}

// linkName keys a connection's links by name and this end's role
// (part 2 §2.6.1).
type linkName struct {
	name   string
	sender bool
}

// freeHandle returns the lowest handle this end does not use, within
// both ends' handle-max.
func (s *Session) freeHandle() (uint32, bool) {
	limit := uint64(min(s.remoteHandleMax, s.handleMax))
	for i, l := range s.byLocal {
		if s.nLocal == len(s.byLocal) || uint64(i) > limit {
			break // no hole: append
		}
		if l == nil {
			return uint32(i), true
		}
	}
	if uint64(len(s.byLocal)) <= limit {
		s.byLocal = append(s.byLocal, nil)
		return uint32(len(s.byLocal) - 1), true
	}
	return 0, false
}

// onDetach handles a detach (part 2 §2.7.7, §2.6.5).
func (s *Session) onDetach(body []byte) error {
	if s.st.local != active {
		return nil // ending: only the peer's end counts (and transfers, against the window)
	}
	d, err := frame.ParseDetach(body)
	if err != nil {
		return decodeError(err)
	}
	l, err := s.link(d.Handle)
	if err != nil || l == nil {
		return err
	}
	l.remoteClosed = d.Closed
	rerr := remoteError(d.Has(frame.DetachError), d.Error)
	if l.deferred {
		// Detached before the handler answered (answer.go): the answer
		// is written now, a refusal's attach, to answer the detach.
		l.deferred = false
		l.mine = attachFields{}
		if l.sender {
			l.writeAttach(frame.Opt[frame.Source]{}, l.pending.Target)
		} else {
			l.writeAttach(l.pending.Source, frame.Opt[frame.Target]{})
		}
		l.pending = nil
	}
	if l.st.local == active {
		l.writeDetach(d.Closed, nil)
	}
	if l.err == nil {
		l.err = rerr
	}
	l.gone(l.err)
	return nil
}

// ring holds deliveries by delivery-id, oldest first, in a buffer of a
// power-of-two size that only grows: no allocation once warm. Outgoing
// ids are consecutive, so find is one subtraction; incoming ones are
// found the same way when the peer numbers them consecutively, else by a
// scan.
type ring struct {
	e       []rentry
	head, n int
}

type rentry struct {
	id   uint32
	link *Link
	tag  []byte
	ctx  any  // the application's (Link.SendWith, SetDeliveryContext): dropped when settled
	free bool // settled: dropped when it reaches the head
}

// settle marks the entry settled and drops its context. An entry not in
// use never holds a context (push relies on it), and a store of an
// interface into the heap costs a write-barrier check: it is stored
// only when there is one to drop.
func (e *rentry) settle() {
	e.free = true
	if e.ctx != nil {
		e.ctx = nil
	}
}

func (r *ring) at(i int) *rentry { return &r.e[(r.head+i)&(len(r.e)-1)] }

func (r *ring) push(id uint32, l *Link) *rentry {
	if r.n == len(r.e) {
		ne := make([]rentry, max(16, 2*len(r.e)))
		for i := 0; i < r.n; i++ {
			ne[i] = *r.at(i)
		}
		// keep the tag buffers of the free slots too
		for i := r.n; i < len(r.e); i++ {
			ne[i].tag = r.at(i).tag
		}
		r.e, r.head = ne, 0
	}
	e := r.at(r.n)
	r.n++
	e.id, e.link, e.free, e.tag = id, l, false, e.tag[:0]
	return e
}

// find returns the position of delivery id, or -1. Ids grow along the
// ring (as serial numbers, from the oldest's): at the position their
// difference gives when they are consecutive, else by a binary search.
func (r *ring) find(id uint32) int {
	if i := r.from(id); i < r.n {
		if e := r.at(i); e.id == id && !e.free {
			return i
		}
	}
	return -1
}

// from returns the first position whose id is id or after it (as serial
// numbers counted from the oldest's), r.n when there is none.
func (r *ring) from(id uint32) int {
	if r.n == 0 {
		return 0
	}
	base := r.at(0).id
	d := id - base
	if uint64(d) < uint64(r.n) && r.at(int(d)).id == id {
		return int(d)
	}
	lo, hi := 0, r.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if r.at(m).id-base < d {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// trim drops the settled deliveries at the head.
func (r *ring) trim() {
	for r.n > 0 && r.at(0).free {
		r.at(0).link = nil
		r.head = (r.head + 1) & (len(r.e) - 1)
		r.n--
	}
}

// forget marks every delivery of l settled (the link is gone).
func (r *ring) forget(l *Link) {
	for i := 0; i < r.n; i++ {
		if e := r.at(i); e.link == l {
			e.settle()
		}
	}
	r.trim()
}

// pendingDisp is a disposition waiting to be written, which later ones of
// the next delivery-ids with the same state extend into a range (as
// Proton does), so that a receiver accepting every message in order sends
// one disposition per batch, not per message.
type pendingDisp struct {
	on          bool
	ch          uint16
	role        frame.Role
	first, last uint32
	settled     bool
	st          frame.StateType
}

// addDisp writes, or merges into the pending one, a disposition of
// delivery id.
func (c *Conn) addDisp(ch uint16, role frame.Role, id uint32, settled bool, st frame.DeliveryState) {
	if simple(st.Type) {
		c.addSimpleDisp(ch, role, id, settled, st.Type)
		return
	}
	c.flushDisp()
	c.writeDisp(ch, frame.Disposition{Role: role, First: id, Settled: settled, State: st})
}

// simple reports a state that a range of dispositions can carry: none,
// accepted, released (no fields of their own).
func simple(t frame.StateType) bool {
	return t == frame.StateNone || t == frame.StateAccepted || t == frame.StateReleased
}

// addSimpleDisp is addDisp of a simple state: the next id of the pending
// range extends it (inlined: a receiver accepting in order pays a few
// compares per message), anything else starts a new one.
func (c *Conn) addSimpleDisp(ch uint16, role frame.Role, id uint32, settled bool, st frame.StateType) {
	if p := &c.disp; p.on && id == p.last+1 && p.ch == ch && p.role == role && p.settled == settled && p.st == st {
		p.last = id
		return
	}
	c.newDisp(ch, role, id, settled, st)
}

func (c *Conn) newDisp(ch uint16, role frame.Role, id uint32, settled bool, st frame.StateType) {
	c.flushDisp()
	c.disp = pendingDisp{on: true, ch: ch, role: role, first: id, last: id, settled: settled, st: st}
}

func (c *Conn) flushDisp() {
	p := &c.disp
	if !p.on {
		return
	}
	p.on = false
	c.writeDisp(p.ch, frame.Disposition{Role: p.role, First: p.first, Last: lastOpt(p.first, p.last), Settled: p.settled,
		State: frame.DeliveryState{Type: p.st}})
}

func (c *Conn) writeDisp(ch uint16, d frame.Disposition) {
	start := len(c.out)
	c.out = frame.BeginFrame(c.out, frame.TypeAMQP, ch)
	c.out = frame.AppendDisposition(c.out, d)
	c.endFrame(start)
}

// lastOpt is a disposition's last: absent when it is first.
func lastOpt(first, last uint32) frame.Opt[uint32] {
	if first == last {
		return frame.Opt[uint32]{}
	}
	return frame.Some(last)
}
