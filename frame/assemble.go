package frame

import (
	"errors"
	"strconv"

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
}

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
// progress on channel and handle that have fully arrived, found by
// message.Scan on Pending: a router can route on the properties or
// application-properties of a large message while its body is still on
// the way. When the part joined so far ends inside a section, the error
// wraps io.ErrUnexpectedEOF (the rest will come); any other error is a
// malformed message. With no delivery in progress it returns no sections
// and no error. It allocates nothing: the error for a part that ends
// inside a section is held by the Assembler (a message.Scanner) and valid
// until the next call of Sections.
func (a *Assembler) Sections(channel uint16, handle uint32) (message.Sections, error) {
	return a.sc.Scan(a.Pending(channel, handle))
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
