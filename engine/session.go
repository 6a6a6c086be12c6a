package engine

import (
	"math"
	"strconv"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/frame"
)

// This file is the session (part 2 §2.5): Session and its accessors,
// begin and end, the frames of a session by performative (flow with the
// windows of §2.5.6, transfer, disposition over a range, attach, detach),
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

	beginSent, beginRecv, endSent, endRecv bool
	ended                                  bool // OnSessionEnd has fired (or is due)
	err                                    *Error

	// §2.5.6, counted in transfer frames; ids are RFC 1982 serial numbers.
	nextIncomingID       uint32 // expected transfer-id of the next incoming transfer
	incomingWindow       uint32 // transfers this end still accepts
	nextOutgoingID       uint32 // transfer-id of the next outgoing transfer
	outgoingWindow       uint32 // transfers this end may send before it announces more (it always can)
	remoteIncomingWindow uint32 // transfers the peer still accepts
	remoteOutgoingWindow uint32
	window               uint32 // the incoming window announced, topped up when half used
	flowDue              bool   // in Conn.due: the window is to be topped up

	handleMax     uint32 // this end's
	peerHandleMax uint32

	byRemote []*Link // by the peer's handle
	byLocal  []*Link // by this end's handle
	nLocal   int     // links in byLocal
	waiting  []*Link // attached here, answer awaited

	nextDeliveryID uint32 // of the next outgoing delivery
	outgoing       ring   // outgoing deliveries, from the oldest unsettled on
	incoming       ring   // incoming deliveries not settled by both ends
}

func (c *Conn) newSession(ch uint16) *Session {
	s := &Session{c: c, local: ch, window: c.cfg.Window, incomingWindow: c.cfg.Window,
		outgoingWindow: math.MaxInt32, handleMax: c.cfg.HandleMax}
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
	if s.beginRecv {
		b.RemoteChannel = frame.Some(s.remote)
	}
	start := s.c.begin(s.local)
	s.c.out = frame.AppendBegin(s.c.out, b)
	s.c.end(start)
	s.beginSent = true
}

// End ends the session with the error e (nil for none): it sends end;
// OnSessionEnd follows the peer's.
func (s *Session) End(e *Error) error {
	if s.endSent || s.ended || s.c.closeSent {
		return ErrState
	}
	s.err = e
	s.writeEnd(e)
	return nil
}

func (s *Session) writeEnd(e *Error) {
	start := s.c.begin(s.local)
	s.c.out = frame.AppendEnd(s.c.out, frame.End{Error: e.amqp()})
	s.c.end(start)
	s.endSent = true
}

// fail ends the session for a fault of the peer (part 2 §2.5.5, §2.7.8): end
// carries cond; frames on it are ignored until the peer's end.
func (s *Session) fail(cond frame.Condition, desc string) {
	if s.endSent {
		return
	}
	s.err = NewError(cond, desc)
	s.writeEnd(s.err)
}

// frame handles a performative on the session's channel.
func (s *Session) frame(d amqpsax.Descriptor, body []byte) {
	if d == amqpsax.DescriptorEnd {
		s.onEnd(body)
		return
	}
	if s.endSent && d != amqpsax.DescriptorTransfer {
		return // ending: only the peer's end counts
	}
	switch d {
	case amqpsax.DescriptorTransfer:
		s.onTransfer(body)
	case amqpsax.DescriptorFlow:
		s.onFlow(body)
	case amqpsax.DescriptorDisposition:
		s.onDisposition(body)
	case amqpsax.DescriptorAttach:
		s.onAttach(body)
	case amqpsax.DescriptorDetach:
		s.onDetach(body)
	}
}

// onEnd handles the peer's end (part 2 §2.7.8, §2.5.5).
func (s *Session) onEnd(body []byte) {
	e, err := frame.ParseEnd(body)
	if err != nil {
		s.c.fail(frame.CondDecodeError, err.Error())
		return
	}
	s.endRecv = true
	rerr := remoteError(e.Has(frame.EndError), e.Error)
	if !s.endSent {
		s.writeEnd(nil)
	}
	if s.err == nil {
		s.err = rerr
	}
	s.gone(s.err)
}

// gone unmaps an ended session: its links detach (events), then
// OnSessionEnd.
func (s *Session) gone(e *Error) {
	if s.ended {
		return
	}
	s.ended = true
	if s.err == nil {
		s.err = e
	}
	for _, l := range s.byLocal {
		if l != nil {
			l.gone(nil)
		}
	}
	c := s.c
	if s.beginRecv && int(s.remote) < len(c.byRemote) && c.byRemote[s.remote] == s {
		c.byRemote[s.remote] = nil
	}
	if int(s.local) < len(c.byLocal) && c.byLocal[s.local] == s {
		c.byLocal[s.local] = nil
		c.nLocal--
	}
	if s.beginRecv {
		c.asm.ForgetChannel(s.remote)
	}
	if c.disp.on && c.disp.ch == s.local {
		c.disp.on = false
	}
	s.h().OnSessionEnd(s, s.err)
}

func (s *Session) h() Handler { return s.c.h }

// onFlow handles a flow (part 2 §2.7.4): the session's windows (§2.5.6)
// and, with a handle, the link's credit (§2.6.7).
func (s *Session) onFlow(body []byte) {
	f, err := frame.ParseFlow(body)
	if err != nil {
		s.c.fail(frame.CondDecodeError, err.Error())
		return
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
		l := s.link(h)
		if l == nil {
			return
		}
		l.onFlow(&f)
	} else if f.Echo {
		s.writeFlow(nil, false)
	}
	if wasShut && s.remoteIncomingWindow > 0 {
		s.reopened()
	}
}

// reopened resumes the senders the peer's session window had stopped.
func (s *Session) reopened() {
	for _, l := range s.byLocal {
		if l != nil && l.pend.on && s.remoteIncomingWindow > 0 {
			l.resume()
		}
	}
	for _, l := range s.byLocal {
		if l != nil && l.sender && l.attached() && l.credit > 0 && !l.pend.on && s.remoteIncomingWindow > 0 {
			s.h().OnFlow(l)
		}
	}
}

// link returns the link the peer's handle names, or ends the session with
// amqp:session:unattached-handle (part 2 §2.8.15) and returns nil. A link
// this end is detaching is returned too: its frames are ignored there.
func (s *Session) link(handle uint32) *Link {
	if uint64(handle) < uint64(len(s.byRemote)) {
		if l := s.byRemote[handle]; l != nil {
			return l
		}
	}
	s.fail(frame.CondUnattachedHandle, "handle "+strconv.FormatUint(uint64(handle), 10)+" is not attached")
	return nil
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
	}
	start := s.c.begin(s.local)
	s.c.out = frame.AppendFlow(s.c.out, f)
	s.c.end(start)
}

// onTransfer handles a transfer (part 2 §2.7.5): the session's window
// (§2.5.6), then the link's credit and the delivery (§2.6.12).
func (s *Session) onTransfer(body []byte) {
	t, payload, err := frame.ParseTransfer(body)
	if err != nil {
		s.c.fail(frame.CondDecodeError, err.Error())
		return
	}
	if s.incomingWindow == 0 {
		s.fail(frame.CondWindowViolation, "transfer beyond the session's incoming window")
		return
	}
	s.nextIncomingID++
	s.incomingWindow--
	s.remoteOutgoingWindow--
	if s.endSent {
		return
	}
	if l := s.link(t.Handle); l != nil {
		l.onTransfer(&t, payload)
	}
	if s.incomingWindow <= s.window/2 && !s.flowDue {
		// Topped up once the bytes fed are processed: one flow per Feed
		// at most, however many transfers it held.
		s.flowDue = true
		s.c.due = append(s.c.due, s)
	}
}

// onDisposition handles a disposition (part 2 §2.7.6): the peer's
// outcome or settlement of the deliveries first to last.
func (s *Session) onDisposition(body []byte) {
	d, err := frame.ParseDisposition(body)
	if err != nil {
		s.c.fail(frame.CondDecodeError, err.Error())
		return
	}
	first, last := d.Range()
	if int32(last-first) < 0 {
		s.c.fail(frame.CondInvalidField, "disposition range last before first")
		return
	}
	r := &s.outgoing // the peer is the receiver: this end's deliveries
	if d.Role == frame.RoleSender {
		r = &s.incoming
	}
	if r.n == 0 {
		return
	}
	// Visit what the range and the ring have in common, in at most
	// min(range, ring) steps. Events may settle (Dispose) or send (a
	// push, perhaps growing the ring): the ring is not trimmed until the
	// end, so positions stay put, and deliveries pushed meanwhile are not
	// visited.
	r.hold = true
	n := r.n
	if uint64(last-first) < uint64(n) {
		for id := first; ; id++ {
			if i := r.find(id); i >= 0 && i < n {
				s.disposed(r, i, &d)
			}
			if id == last {
				break
			}
		}
	} else {
		for i := 0; i < n; i++ {
			if e := r.at(i); !e.free && inRange(e.id, first, last) {
				s.disposed(r, i, &d)
			}
		}
	}
	r.hold = false
	r.trim()
}

func inRange(id, first, last uint32) bool { return id-first <= last-first }

// disposed reports the peer's disposition of the delivery at i of r.
func (s *Session) disposed(r *ring, i int, d *frame.Disposition) {
	e := r.at(i)
	l, id := e.link, e.id
	if e.free || l == nil {
		return
	}
	if d.Settled || l.ended {
		e.free = true
	}
	if l.ended {
		return
	}
	s.h().OnDisposition(l, Disposition{ID: id, Tag: e.tag, State: d.State, Settled: d.Settled})
	e = r.at(i) // the ring may have grown
	if e.free || r != &s.outgoing || s.c.cfg.ManualSettle || s.endSent || s.c.closeSent {
		return
	}
	switch d.State.Type {
	case frame.StateAccepted, frame.StateRejected, frame.StateReleased, frame.StateModified:
		e.free = true
		s.c.addDisp(s.local, frame.RoleSender, id, true, frame.DeliveryState{})
	}
}

// onAttach handles an attach (part 2 §2.7.3, §2.6.3): an answer to this
// end's, or a link the peer attaches, which the engine answers.
func (s *Session) onAttach(body []byte) {
	buf := append([]byte(nil), body...) // the link keeps its attach: Source, Target
	a, err := frame.ParseAttach(buf)
	if err != nil {
		s.c.fail(frame.CondDecodeError, err.Error())
		return
	}
	if a.Handle > s.handleMax {
		s.c.fail(frame.CondFramingError, "attach with handle "+strconv.FormatUint(uint64(a.Handle), 10)+
			" above handle-max "+strconv.FormatUint(uint64(s.handleMax), 10))
		return
	}
	if uint64(a.Handle) < uint64(len(s.byRemote)) && s.byRemote[a.Handle] != nil {
		s.fail(frame.CondHandleInUse, "attach with handle "+strconv.FormatUint(uint64(a.Handle), 10)+", which is in use")
		return
	}
	var l *Link
	for i, w := range s.waiting {
		if w.sender == (a.Role == frame.RoleReceiver) && string(w.name) == string(a.Name) {
			l = w
			s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
			break
		}
	}
	answer := l == nil
	if answer {
		h, ok := s.freeHandle()
		if !ok {
			s.fail(frame.CondResourceLimitExceeded, "no handle left to answer an attach")
			return
		}
		l = s.newLink(h, a.Role == frame.RoleReceiver, a.Name)
		l.sndMode, l.rcvMode = a.SndSettleMode.Or(frame.SndMixed), a.RcvSettleMode
		l.autoCredit = s.c.cfg.Credit
		l.autoAccept = s.c.cfg.AutoAccept
	}
	for uint64(a.Handle) >= uint64(len(s.byRemote)) {
		s.byRemote = append(s.byRemote, nil)
	}
	s.byRemote[a.Handle] = l
	l.remote = a.Handle
	l.attachRecv = true
	l.attach, l.attachBuf = a, buf
	l.src, l.tgt = a.Source.Or(frame.Source{}), a.Target.Or(frame.Target{})
	l.peerMaxMessage = a.MaxMessageSize.Or(0)
	if !l.sender {
		l.deliveryCount = a.InitialDeliveryCount.Or(0)
	} else if !answer {
		l.sndMode = a.SndSettleMode.Or(frame.SndMixed) // the sender's mode is the one in force
	}
	if answer {
		l.writeAttach(a.Source, a.Target)
	}
	s.h().OnLinkAttach(l)
	if !l.sender && l.attached() && l.autoCredit > 0 && l.credit == 0 && !s.endSent {
		l.Flow(l.autoCredit)
	}
}

// freeHandle returns the lowest handle this end does not use, within
// both ends' handle-max.
func (s *Session) freeHandle() (uint32, bool) {
	limit := uint64(min(s.peerHandleMax, s.handleMax))
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
func (s *Session) onDetach(body []byte) {
	d, err := frame.ParseDetach(body)
	if err != nil {
		s.c.fail(frame.CondDecodeError, err.Error())
		return
	}
	l := s.link(d.Handle)
	if l == nil {
		return
	}
	l.detachRecv = true
	l.closed = d.Closed
	rerr := remoteError(d.Has(frame.DetachError), d.Error)
	if !l.detachSent {
		l.writeDetach(d.Closed, nil)
	}
	if l.err == nil {
		l.err = rerr
	}
	l.gone(l.err)
}

// ring holds deliveries by delivery-id, oldest first, in a buffer of a
// power-of-two size that only grows: no allocation once warm. Outgoing
// ids are consecutive, so find is one subtraction; incoming ones are
// found the same way when the peer numbers them consecutively, else by a
// scan.
type ring struct {
	e       []rentry
	head, n int
	hold    bool // trim waits: positions must not move
}

type rentry struct {
	id   uint32
	link *Link
	tag  []byte
	free bool // settled: dropped when it reaches the head
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

func (r *ring) find(id uint32) int {
	if r.n == 0 {
		return -1
	}
	if i := int64(id - r.at(0).id); i >= 0 && i < int64(r.n) {
		if e := r.at(int(i)); e.id == id && !e.free {
			return int(i)
		}
	}
	for i := 0; i < r.n; i++ {
		if e := r.at(i); e.id == id && !e.free {
			return i
		}
	}
	return -1
}

// trim drops the settled deliveries at the head.
func (r *ring) trim() {
	for !r.hold && r.n > 0 && r.at(0).free {
		r.at(0).link = nil
		r.head = (r.head + 1) & (len(r.e) - 1)
		r.n--
	}
}

// forget marks every delivery of l settled (the link is gone).
func (r *ring) forget(l *Link) {
	for i := 0; i < r.n; i++ {
		if e := r.at(i); e.link == l {
			e.free = true
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
	simple := st.Type == frame.StateNone || st.Type == frame.StateAccepted || st.Type == frame.StateReleased
	p := &c.disp
	if simple && p.on && p.ch == ch && p.role == role && p.settled == settled && p.st == st.Type && id == p.last+1 {
		p.last = id
		return
	}
	c.flushDisp()
	if simple {
		*p = pendingDisp{on: true, ch: ch, role: role, first: id, last: id, settled: settled, st: st.Type}
		return
	}
	c.writeDisp(ch, frame.Disposition{Role: role, First: id, Settled: settled, State: st})
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
	c.end(start)
}

// lastOpt is a disposition's last: absent when it is first.
func lastOpt(first, last uint32) frame.Opt[uint32] {
	if first == last {
		return frame.Opt[uint32]{}
	}
	return frame.Some(last)
}
