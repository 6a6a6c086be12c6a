package frame

import (
	"errors"
	"io"
	"strconv"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/message"
)

// DefaultMaxMessageSize is the largest message an Assembler whose
// MaxMessageSize is 0 joins: 64 MiB.
const DefaultMaxMessageSize = 64 << 20

// DefaultMaxPending is how many deliveries an Assembler whose MaxPending
// is 0 joins at once.
const DefaultMaxPending = 1024

// maxFree is how many buffers of finished deliveries an Assembler keeps
// for the next ones.
const maxFree = 8

// Causes of a *DeliveryError, for errors.Is.
var (
	// ErrMessageTooLarge: a delivery's payloads add up to more than the
	// Assembler's MaxMessageSize. It is found before the frame that
	// passes the limit is copied; the rest of the delivery is dropped.
	ErrMessageTooLarge = errors.New("message larger than the maximum message size")
	// ErrTooManyPending: a delivery starts while MaxPending deliveries
	// are being joined; it is not joined. A peer keeps at most one
	// delivery in progress per link, so this means more links than the
	// Assembler was sized for: the later transfers of that delivery can no
	// longer be told from new ones, and the connection should be closed
	// (amqp:resource-limit-exceeded).
	ErrTooManyPending = errors.New("too many deliveries in progress")
	// ErrDeliveryID: a transfer that continues a delivery carries another
	// delivery-id; the delivery is dropped.
	ErrDeliveryID = errors.New("delivery-id differs from the delivery's")
	// ErrNoDeliveryID: the first transfer of a delivery has no delivery-id.
	ErrNoDeliveryID = errors.New("first transfer of a delivery without delivery-id")
)

// DeliveryError is a fault in a delivery's transfers: which link
// (channel and handle) and delivery, and the cause.
type DeliveryError struct {
	Channel    uint16
	Handle     uint32
	DeliveryID uint32
	Err        error // one of the causes above
}

// Error formats the fault as "frame: cause (channel C, handle H, delivery D)".
func (e *DeliveryError) Error() string {
	return "frame: " + e.Err.Error() + " (channel " + strconv.Itoa(int(e.Channel)) + ", handle " +
		strconv.FormatUint(uint64(e.Handle), 10) + ", delivery " + strconv.FormatUint(uint64(e.DeliveryID), 10) + ")"
}

// Unwrap returns the cause.
func (e *DeliveryError) Unwrap() error { return e.Err }

// Delivery is a delivery whose transfers have all arrived (part 2
// §2.6.12): the message they carry and what its transfers said about it.
type Delivery struct {
	Channel       uint16
	Handle        uint32
	DeliveryID    uint32
	DeliveryTag   []byte
	MessageFormat uint32
	// Settled reports that any of the delivery's transfers had settled
	// set (the sender may settle on any of them).
	Settled bool
	// Aborted reports a delivery its sender aborted (part 2 §2.6.12): Add
	// returns it with done false and no payload, for the caller's
	// bookkeeping; its message is dropped.
	Aborted bool
	// Frames is the number of transfers the delivery took.
	Frames int
	// Payload is the message: a view into the frame body for a delivery
	// of one transfer, else into the Assembler's buffer. See Add for how
	// long it is valid.
	Payload []byte
}

// Assembler joins the payloads of the transfers of each delivery (part 2
// §2.6.12), keyed by channel and link handle: a transfer with more set is
// followed by others of the same delivery on the same link, the last with
// more false. The zero Assembler is ready to use; set the options first.
// It must see a link's transfers from the first of a delivery on (a
// continuation with more false met first looks like a whole delivery),
// and is not safe for use by several goroutines at once.
//
// A delivery in one transfer is handed back with no copy: its Payload is
// the transfer's payload. The payloads of a delivery in several transfers
// are copied into a buffer that the Assembler reuses once the delivery is
// done, so a warm Assembler joins without allocating.
type Assembler struct {
	// MaxMessageSize bounds a delivery's joined payload; 0 means
	// DefaultMaxMessageSize. Set it to the max-message-size of the link
	// (or the largest of the links).
	MaxMessageSize int
	// MaxPending bounds the deliveries joined at once (so the memory an
	// Assembler holds is at most MaxPending × MaxMessageSize); 0 means
	// DefaultMaxPending.
	MaxPending int

	links map[uint64]*partial
	free  []*partial // finished partials, their buffers kept
	done  *partial   // the partial whose buffer the last Delivery points into
	sc    message.Scanner
	cut   cutError // the error of Sections for a part that ends inside a section
}

// cutError is the error of Sections for a part that ends inside a
// section, and its cause, held by the Assembler so that it costs no
// allocation.
type cutError struct {
	amqpsax.Error
	message.SectionError
}

// partial is a delivery being joined.
type partial struct {
	id       uint32
	format   uint32
	tag      []byte
	buf      []byte
	settled  bool
	frames   int
	skipping bool // dropped after an error: the rest of its transfers are ignored
	scan     scanState
}

// scanState is where Sections stopped in a delivery's joined payload: the
// sections complete before done, so that the next call scans only what
// follows.
type scanState struct {
	started     bool
	done        int              // where the first section not yet complete starts
	secs        [nRanks]span     // the sections before done, by rank; off -1 when absent
	body        message.BodyKind // of the body sections before done
	outOfOrder  bool
	footerFirst bool
	err         error // a fault found: no later byte can mend it
}

// span is where a section (all body sections together, for the body)
// lies in a delivery's payload, as offsets: the buffer may move as it
// grows.
type span struct{ off, n int }

func linkKey(channel uint16, handle uint32) uint64 { return uint64(channel)<<32 | uint64(handle) }

func (a *Assembler) maxPending() int {
	if a.MaxPending > 0 {
		return a.MaxPending
	}
	return DefaultMaxPending
}

func (a *Assembler) maxSize() int {
	if a.MaxMessageSize > 0 {
		return a.MaxMessageSize
	}
	return DefaultMaxMessageSize
}

// Add takes one transfer received on channel, as ParseTransfer returned
// it with its payload. When the transfer completes a delivery, Add
// returns it with done true. A transfer with more set starts or
// continues a delivery: Add copies its payload and returns done false.
// An aborted delivery is dropped: Add returns it with Aborted set and done
// false.
//
// A Delivery's Payload is valid until the frame it came from is (the
// Reader's next Next) when it took one transfer, and until the next call
// of Add, Forget or Reset when it took several; its DeliveryTag likewise.
//
// Errors are *DeliveryError: a delivery that grows past MaxMessageSize
// (checked before copying), a delivery started while MaxPending are in
// progress, a continuation with another delivery-id, or a first transfer
// without one. The delivery at fault is dropped and the rest of its
// transfers are ignored.
func (a *Assembler) Add(channel uint16, t Transfer, payload []byte) (d Delivery, done bool, err error) {
	if a.done != nil {
		a.release(a.done)
		a.done = nil
	}
	key := linkKey(channel, t.Handle)
	var p *partial
	if len(a.links) > 0 {
		p = a.links[key]
	}
	d = Delivery{Channel: channel, Handle: t.Handle, DeliveryID: t.DeliveryID.v, DeliveryTag: t.DeliveryTag,
		MessageFormat: t.MessageFormat.v, Settled: t.Settled, Frames: 1}
	if p == nil {
		// The first transfer of a delivery.
		switch {
		case !t.DeliveryID.ok:
			return Delivery{}, false, a.fault(channel, t, ErrNoDeliveryID, nil)
		case t.Aborted:
			d.Aborted = true
			return d, false, nil
		case len(payload) > a.maxSize():
			return Delivery{}, false, a.fault(channel, t, ErrMessageTooLarge, nil)
		case !t.More:
			d.Payload = payload
			return d, true, nil
		}
		if len(a.links) >= a.maxPending() {
			return Delivery{}, false, &DeliveryError{Channel: channel, Handle: t.Handle, DeliveryID: t.DeliveryID.v, Err: ErrTooManyPending}
		}
		p = a.get()
		p.id, p.format, p.settled, p.frames = t.DeliveryID.v, t.MessageFormat.v, t.Settled, 1
		p.tag = append(p.tag[:0], t.DeliveryTag...)
		p.buf = a.grow(p.buf[:0], len(payload))
		p.buf = append(p.buf, payload...)
		if a.links == nil {
			a.links = make(map[uint64]*partial)
		}
		a.links[key] = p
		return Delivery{}, false, nil
	}
	if p.skipping {
		if !t.More {
			delete(a.links, key)
			a.release(p)
		}
		return Delivery{}, false, nil
	}
	d.DeliveryID, d.DeliveryTag, d.MessageFormat = p.id, p.tag, p.format
	d.Settled = p.settled || t.Settled
	d.Frames = p.frames + 1
	switch {
	case t.DeliveryID.ok && t.DeliveryID.v != p.id:
		return Delivery{}, false, a.fault(channel, t, ErrDeliveryID, p)
	case t.Aborted:
		delete(a.links, key)
		a.release(p)
		d.Aborted, d.DeliveryTag = true, nil
		return d, false, nil
	case len(payload) > a.maxSize()-len(p.buf):
		return Delivery{}, false, a.fault(channel, t, ErrMessageTooLarge, p)
	}
	p.buf = a.grow(p.buf, len(payload))
	p.buf = append(p.buf, payload...)
	p.settled, p.frames = d.Settled, d.Frames
	if t.More {
		return Delivery{}, false, nil
	}
	delete(a.links, key)
	a.done = p
	d.Payload = p.buf
	return d, true, nil
}

// fault drops the delivery of transfer t (p, when it is being joined) and
// returns the error. When more transfers of it are to come, they are
// ignored.
func (a *Assembler) fault(channel uint16, t Transfer, cause error, p *partial) error {
	e := &DeliveryError{Channel: channel, Handle: t.Handle, DeliveryID: t.DeliveryID.v, Err: cause}
	if p != nil {
		e.DeliveryID = p.id
	}
	key := linkKey(channel, t.Handle)
	switch {
	case t.More && p != nil:
		p.skipping, p.buf, p.tag = true, p.buf[:0], p.tag[:0]
	case t.More && len(a.links) < a.maxPending():
		if a.links == nil {
			a.links = make(map[uint64]*partial)
		}
		p = a.get()
		p.skipping = true
		a.links[key] = p
	case p != nil:
		delete(a.links, key)
		a.release(p)
	}
	return e
}

// grow makes room for n more bytes in b, at most doubling it and never
// past the maximum message size (which the caller has checked).
func (a *Assembler) grow(b []byte, n int) []byte {
	need := len(b) + n
	if need <= cap(b) {
		return b
	}
	nb := make([]byte, len(b), min(max(2*cap(b), need, 4096), max(a.maxSize(), need)))
	copy(nb, b)
	return nb
}

func (a *Assembler) get() *partial {
	if n := len(a.free); n > 0 {
		p := a.free[n-1]
		a.free = a.free[:n-1]
		return p
	}
	return new(partial)
}

func (a *Assembler) release(p *partial) {
	*p = partial{buf: p.buf[:0], tag: p.tag[:0]}
	if len(a.free) < maxFree {
		a.free = append(a.free, p)
	}
}

// Pending returns the payload joined so far of the delivery in progress
// on channel and handle: the first part of its message, before the rest
// arrives. It is nil when no delivery is in progress there, and valid
// until the next call of Add, Forget or Reset.
func (a *Assembler) Pending(channel uint16, handle uint32) []byte {
	p := a.links[linkKey(channel, handle)]
	if p == nil || p.skipping {
		return nil
	}
	return p.buf
}

// Sections returns the sections of the message of the delivery in
// progress on channel and handle that have fully arrived, as message.Scan
// finds them in Pending: a router can route on the properties or
// application-properties of a large message while its body is still on
// the way. When the part joined so far ends inside a section, the error
// wraps io.ErrUnexpectedEOF (the rest will come); any other error is a
// malformed message. With no delivery in progress it returns no sections
// and no error.
//
// Each call resumes where the last one stopped in that delivery (at the
// start of the section the part ended in) and scans only what follows, so
// that calling Sections after every Add costs, over a whole delivery, work
// in proportion to its bytes and sections, not to their square. A fault
// found is kept: no byte that follows can mend it. It allocates nothing:
// the error for a part that ends inside a section is held by the
// Assembler and valid until the next call of Sections.
func (a *Assembler) Sections(channel uint16, handle uint32) (message.Sections, error) {
	p := a.links[linkKey(channel, handle)]
	if p == nil || p.skipping {
		return a.sc.Scan(nil)
	}
	st := &p.scan
	if st.err != nil {
		return message.Sections{}, st.err
	}
	base := st.done
	s, err := a.sc.Scan(p.buf[base:])
	var cut *amqpsax.Error
	if err != nil {
		if cut = cutOf(err); cut == nil {
			return a.malformed(p)
		}
	}
	if !st.merge(&s, base) {
		return a.malformed(p)
	}
	if cut == nil {
		st.done = len(p.buf)
	} else {
		st.done = base + cut.Offset
		a.cut.SectionError = *cut.Err.(*message.SectionError)
		a.cut.Error = *cut
		a.cut.Error.Offset = st.done
		a.cut.Error.Err = &a.cut.SectionError
		err = &a.cut.Error
	}
	return st.view(p.buf), err
}

// malformed is Sections on a delivery whose message is malformed: a scan of
// the whole of it says where and why, once; the error is kept.
func (a *Assembler) malformed(p *partial) (message.Sections, error) {
	s, err := a.sc.Scan(p.buf)
	if err != nil && cutOf(err) == nil {
		p.scan.err = err
	}
	return s, err
}

// cutOf returns the error of a Scan that stopped at a cut (a part that
// ends inside a section), or nil for any other.
func cutOf(err error) *amqpsax.Error {
	if e, ok := err.(*amqpsax.Error); ok {
		if se, ok := e.Err.(*message.SectionError); ok && se.Err == io.ErrUnexpectedEOF {
			return e
		}
	}
	return nil
}

// Section ranks, in the order the spec gives them (part 3 §3.2).
const (
	rankHeader = iota
	rankDeliveryAnnotations
	rankMessageAnnotations
	rankProperties
	rankApplicationProperties
	rankBody
	rankFooter
	nRanks
)

// spans lists the sections of s by rank.
func spans(s *message.Sections) [nRanks]span {
	o := &s.Offsets
	return [nRanks]span{
		{o.Header, len(s.Header)}, {o.DeliveryAnnotations, len(s.DeliveryAnnotations)},
		{o.MessageAnnotations, len(s.MessageAnnotations)}, {o.Properties, len(s.Properties)},
		{o.ApplicationProperties, len(s.ApplicationProperties)}, {o.Body, len(s.Body)},
		{o.Footer, len(s.Footer)},
	}
}

// merge adds s, the sections message.Scan found in the payload from
// offset base on, to the sections before base, as one Scan of the whole
// would have found them. It reports false when the two together break a
// rule that neither breaks alone (a section twice, body sections of two
// kinds or apart), which a Scan of the whole then names.
func (st *scanState) merge(s *message.Sections, base int) bool {
	if !st.started {
		st.started = true
		st.secs = [nRanks]span{{-1, 0}, {-1, 0}, {-1, 0}, {-1, 0}, {-1, 0}, {-1, 0}, {-1, 0}}
	}
	top := -1
	for r, x := range st.secs {
		if x.off >= 0 {
			top = r
		}
	}
	after := spans(s)
	for r, x := range after { // check before changing anything
		if x.off < 0 || st.secs[r].off < 0 {
			continue
		}
		b := st.secs[r]
		if r != rankBody || s.BodyKind != st.body || st.body == message.BodyValue || b.off+b.n != base+x.off {
			return false
		}
	}
	for r, x := range after {
		switch {
		case x.off < 0:
			continue
		case r < top:
			st.outOfOrder = true
			st.footerFirst = st.footerFirst || r == rankBody
		}
		if st.secs[r].off >= 0 { // the body goes on
			st.secs[r].n += x.n
		} else {
			st.secs[r] = span{base + x.off, x.n}
		}
	}
	if st.body == message.BodyNone {
		st.body = s.BodyKind
	}
	st.outOfOrder = st.outOfOrder || s.OutOfOrder
	st.footerFirst = st.footerFirst || s.FooterFirst
	return true
}

// view is the sections found so far, as views into buf, the payload.
func (st *scanState) view(buf []byte) message.Sections {
	var s message.Sections
	at := func(x span) []byte {
		if x.off < 0 {
			return nil
		}
		return buf[x.off : x.off+x.n : x.off+x.n]
	}
	s.Header, s.DeliveryAnnotations = at(st.secs[rankHeader]), at(st.secs[rankDeliveryAnnotations])
	s.MessageAnnotations, s.Properties = at(st.secs[rankMessageAnnotations]), at(st.secs[rankProperties])
	s.ApplicationProperties, s.Body = at(st.secs[rankApplicationProperties]), at(st.secs[rankBody])
	s.Footer = at(st.secs[rankFooter])
	s.Offsets = message.Offsets{Header: st.secs[rankHeader].off, DeliveryAnnotations: st.secs[rankDeliveryAnnotations].off,
		MessageAnnotations: st.secs[rankMessageAnnotations].off, Properties: st.secs[rankProperties].off,
		ApplicationProperties: st.secs[rankApplicationProperties].off, Body: st.secs[rankBody].off,
		Footer: st.secs[rankFooter].off}
	s.BodyKind, s.OutOfOrder, s.FooterFirst = st.body, st.outOfOrder, st.footerFirst
	// The bare message (properties, application-properties, body) when
	// its sections lie together in that order, as Scan gives it.
	start, end := -1, -1
	for _, x := range st.secs[rankProperties : rankBody+1] {
		switch {
		case x.off < 0:
			continue
		case start < 0:
			start = x.off
		case x.off != end:
			return s
		}
		end = x.off + x.n
	}
	if start >= 0 {
		s.Bare = buf[start:end:end]
	}
	return s
}

// Forget drops the delivery in progress on channel and handle, if any:
// call it when the link detaches.
func (a *Assembler) Forget(channel uint16, handle uint32) {
	key := linkKey(channel, handle)
	if p := a.links[key]; p != nil {
		delete(a.links, key)
		a.release(p)
	}
}

// ForgetChannel drops the deliveries in progress on channel: call it when
// its session ends.
func (a *Assembler) ForgetChannel(channel uint16) {
	for key, p := range a.links {
		if uint16(key>>32) == channel {
			delete(a.links, key)
			a.release(p)
		}
	}
}

// Reset drops every delivery in progress (when the connection closes),
// keeping buffers for reuse.
func (a *Assembler) Reset() {
	for key, p := range a.links {
		delete(a.links, key)
		a.release(p)
	}
	if a.done != nil {
		a.release(a.done)
		a.done = nil
	}
}
