package frame

import (
	"errors"
	"strconv"
)

// DefaultMaxMessageSize is the largest message a Join given a maxSize of
// 0, or an Assembler whose MaxMessageSize is 0, joins: 64 MiB.
const DefaultMaxMessageSize = 64 << 20

// DefaultMaxPending is how many deliveries an Assembler whose MaxPending
// is 0 joins at once.
const DefaultMaxPending = 1024

// maxFree is how many Joins of finished deliveries an Assembler keeps,
// with their buffers, for the next ones.
const maxFree = 8

// Causes of a *DeliveryError, for errors.Is.
var (
	// ErrMessageTooLarge: a delivery's payloads add up to more than the
	// maximum message size (Join.Add's maxSize, the Assembler's
	// MaxMessageSize). It is found before the frame that passes the limit
	// is copied; the rest of the delivery is dropped.
	ErrMessageTooLarge = errors.New("message larger than the maximum message size")
	// ErrTooManyPending: a delivery starts while an Assembler's
	// MaxPending deliveries are being joined; it is not joined. A peer keeps at most one
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
// (channel and handle) and delivery, and the cause. A [Join] knows no
// channel: its errors have Channel 0, an [Assembler]'s the transfer's.
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
	// Channel is the transfers' channel, when an Assembler joined them
	// (a Join knows no channel: 0).
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
	// of one transfer, else into the Join's buffer. See Join.Add for how
	// long it is valid.
	Payload []byte
}

// Join joins the transfers of one delivery (part 2 §2.6.12): a transfer
// with more set is followed by others of the same delivery, the last with
// more false. It holds the delivery in progress on one link, so a
// receiver keeps one beside each link it reads; [Assembler] is a map of
// them for a program that reads frames without keeping its links. The
// zero Join is ready to use, and is not safe for use by several
// goroutines at once.
//
// A delivery in one transfer is handed back with no copy: its Payload is
// the transfer's payload. The payloads of a delivery in several
// transfers are copied into a buffer that the Join reuses for the next,
// so a warm Join joins without allocating.
type Join struct {
	id       uint32
	format   uint32
	handle   uint32
	tag      []byte
	buf      []byte
	settled  bool
	frames   int
	active   bool // a delivery is in progress
	skipping bool // it was dropped after a fault: the rest of its transfers are ignored
}

// Add takes the next transfer of the link, as ParseTransfer returned it
// with its payload. When the transfer completes a delivery, Add returns
// it with done true. A transfer with more set starts or continues a
// delivery: Add copies its payload and returns done false. An aborted
// delivery is dropped: Add returns it with Aborted set and done false.
// maxSize bounds the joined payload (0 means DefaultMaxMessageSize).
//
// A Delivery's Payload is valid as long as the transfer's payload is when
// it took one transfer, and until the next call of Add or Reset when it
// took several; its DeliveryTag likewise. Its Channel is 0: the Join
// knows no channel.
//
// Errors are *DeliveryError: a delivery that grows past maxSize (checked
// before copying), a continuation with another delivery-id, or a first
// transfer without one. The delivery at fault is dropped and the rest of
// its transfers are ignored.
func (j *Join) Add(t *Transfer, payload []byte, maxSize int) (d Delivery, done bool, err error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxMessageSize
	}
	d = Delivery{Handle: t.Handle, DeliveryID: t.DeliveryID.v, DeliveryTag: t.DeliveryTag,
		MessageFormat: t.MessageFormat.v, Settled: t.Settled, Frames: 1}
	if !j.active {
		// The first transfer of a delivery.
		switch {
		case !t.DeliveryID.ok:
			return Delivery{}, false, j.fault(t, ErrNoDeliveryID)
		case t.Aborted:
			d.Aborted = true
			return d, false, nil
		case len(payload) > maxSize:
			return Delivery{}, false, j.fault(t, ErrMessageTooLarge)
		case !t.More:
			d.Payload = payload
			return d, true, nil
		}
		j.active, j.skipping = true, false
		j.id, j.format, j.handle, j.settled, j.frames = t.DeliveryID.v, t.MessageFormat.v, t.Handle, t.Settled, 1
		j.tag = append(j.tag[:0], t.DeliveryTag...)
		j.buf = grow(j.buf[:0], len(payload), maxSize)
		j.buf = append(j.buf, payload...)
		return Delivery{}, false, nil
	}
	if j.skipping {
		if !t.More {
			j.active, j.skipping = false, false
		}
		return Delivery{}, false, nil
	}
	d.DeliveryID, d.DeliveryTag, d.MessageFormat = j.id, j.tag, j.format
	d.Settled = j.settled || t.Settled
	d.Frames = j.frames + 1
	switch {
	case t.DeliveryID.ok && t.DeliveryID.v != j.id:
		return Delivery{}, false, j.fault(t, ErrDeliveryID)
	case t.Aborted:
		j.active = false
		d.Aborted, d.DeliveryTag = true, nil
		return d, false, nil
	case len(payload) > maxSize-len(j.buf):
		return Delivery{}, false, j.fault(t, ErrMessageTooLarge)
	}
	j.buf = grow(j.buf, len(payload), maxSize)
	j.buf = append(j.buf, payload...)
	j.settled, j.frames = d.Settled, d.Frames
	if t.More {
		return Delivery{}, false, nil
	}
	j.active = false
	d.Payload = j.buf
	return d, true, nil
}

// fault drops the delivery of transfer t and returns the error. When
// more transfers of it are to come, the Join ignores them.
func (j *Join) fault(t *Transfer, cause error) error {
	e := &DeliveryError{Handle: t.Handle, DeliveryID: t.DeliveryID.v, Err: cause}
	if j.active {
		e.DeliveryID = j.id
	}
	j.active, j.skipping = t.More, t.More
	j.buf, j.tag = j.buf[:0], j.tag[:0]
	return e
}

// Reset drops the delivery in progress, if any (when the link detaches),
// keeping the buffer for the next.
func (j *Join) Reset() {
	j.active, j.skipping = false, false
	j.buf, j.tag = j.buf[:0], j.tag[:0]
}

// InProgress reports a delivery begun and not yet complete, aborted or
// dropped: its later transfers are to come (a dropped one's are ignored,
// and count as in progress until its last).
func (j *Join) InProgress() bool { return j.active }

// Held returns the bytes of buffer the Join holds (its capacity, kept
// for the next delivery when none is in progress), for a memory budget.
func (j *Join) Held() int { return cap(j.buf) + cap(j.tag) }

// grow makes room for n more bytes in b, at most doubling it and never
// past limit (which the caller has checked).
func grow(b []byte, n, limit int) []byte {
	need := len(b) + n
	if need <= cap(b) {
		return b
	}
	nb := make([]byte, len(b), min(max(2*cap(b), need, 4096), max(limit, need)))
	copy(nb, b)
	return nb
}

// Assembler joins the transfers of every delivery of a connection, keyed
// by channel and link handle, with one [Join] per link that has a
// delivery in progress: for a program that reads frames without keeping
// its links (cmd/amqpdump does). The zero Assembler is ready to use; set
// the options first. It must see a link's transfers from the first of a
// delivery on (a continuation with more false met first looks like a
// whole delivery), and is not safe for use by several goroutines at once.
type Assembler struct {
	// MaxMessageSize bounds a delivery's joined payload; 0 means
	// DefaultMaxMessageSize. Set it to the max-message-size of the link
	// (or the largest of the links).
	MaxMessageSize int
	// MaxPending bounds the deliveries joined at once (so the memory an
	// Assembler holds is at most MaxPending × MaxMessageSize); 0 means
	// DefaultMaxPending.
	MaxPending int

	links   map[uint64]*Join
	free    []*Join // Joins of finished deliveries, their buffers kept
	done    *Join   // the Join whose buffer the last Delivery points into
	scratch Join    // for a transfer that starts no delivery kept in links
}

func linkKey(channel uint16, handle uint32) uint64 { return uint64(channel)<<32 | uint64(handle) }

func (a *Assembler) maxPending() int {
	if a.MaxPending > 0 {
		return a.MaxPending
	}
	return DefaultMaxPending
}

// Add takes one transfer received on channel, as ParseTransfer returned
// it with its payload, and joins it as [Join.Add] does, into the Join of
// its channel and handle. When the transfer completes a delivery, Add
// returns it with done true; Channel is set.
//
// A Delivery's Payload is valid until the frame it came from is (the
// Reader's next Next) when it took one transfer, and until the next call
// of Add, Forget or Reset when it took several; its DeliveryTag likewise.
//
// Errors are *DeliveryError, Join's and one more: a delivery started
// while MaxPending are in progress is ErrTooManyPending, and is not
// joined. The delivery at fault is dropped and the rest of its transfers
// are ignored (but for one refused as too many, which no Join holds).
func (a *Assembler) Add(channel uint16, t Transfer, payload []byte) (d Delivery, done bool, err error) {
	if a.done != nil {
		a.release(a.done)
		a.done = nil
	}
	key := linkKey(channel, t.Handle)
	var j *Join
	if len(a.links) > 0 {
		j = a.links[key]
	}
	switch {
	case j != nil:
		d, done, err = j.Add(&t, payload, a.MaxMessageSize)
		if !j.InProgress() {
			delete(a.links, key)
			if done && d.Frames > 1 {
				a.done = j // d.Payload is its buffer
			} else {
				a.release(j)
			}
		}
	case !t.More || len(a.links) >= a.maxPending():
		// No Join is kept for it: a delivery in one transfer, or one that
		// no more may join.
		a.scratch.Reset()
		d, done, err = a.scratch.Add(&t, payload, a.MaxMessageSize)
		if a.scratch.InProgress() {
			a.scratch.Reset()
			if err == nil {
				err = &DeliveryError{Handle: t.Handle, DeliveryID: t.DeliveryID.v, Err: ErrTooManyPending}
			}
		}
	default:
		j = a.get()
		d, done, err = j.Add(&t, payload, a.MaxMessageSize)
		if j.InProgress() {
			if a.links == nil {
				a.links = make(map[uint64]*Join)
			}
			a.links[key] = j
		} else {
			a.release(j)
		}
	}
	if e, ok := err.(*DeliveryError); ok {
		e.Channel = channel
	}
	d.Channel = channel
	if err != nil || (!done && !d.Aborted) {
		d = Delivery{}
	}
	return d, done, err
}

func (a *Assembler) get() *Join {
	if n := len(a.free); n > 0 {
		j := a.free[n-1]
		a.free = a.free[:n-1]
		return j
	}
	return new(Join)
}

func (a *Assembler) release(j *Join) {
	j.Reset()
	if len(a.free) < maxFree {
		a.free = append(a.free, j)
	}
}

// Forget drops the delivery in progress on channel and handle, if any:
// call it when the link detaches.
func (a *Assembler) Forget(channel uint16, handle uint32) {
	key := linkKey(channel, handle)
	if j := a.links[key]; j != nil {
		delete(a.links, key)
		a.release(j)
	}
}

// ForgetChannel drops the deliveries in progress on channel: call it when
// its session ends.
func (a *Assembler) ForgetChannel(channel uint16) {
	for key, j := range a.links {
		if uint16(key>>32) == channel {
			delete(a.links, key)
			a.release(j)
		}
	}
}

// Reset drops every delivery in progress (when the connection closes),
// keeping buffers for reuse.
func (a *Assembler) Reset() {
	for key, j := range a.links {
		delete(a.links, key)
		a.release(j)
	}
	if a.done != nil {
		a.release(a.done)
		a.done = nil
	}
}
