package client

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
)

// ReceiverOptions sets up a receiver; nil or the zero value works (credit
// 1, a link named by the client).
type ReceiverOptions struct {
	// Name is the link's name; empty gives a unique one.
	Name string
	// Credit is the prefetch: the credit granted to the sender, and
	// granted again once it is used up and Receive has taken half of
	// it, so that at most Credit deliveries wait in the receiver. 0
	// means 1; -1 means manual credit: the sender gets only what
	// IssueCredit grants.
	Credit int32
	// EagerCredit grants the prefetch's credit again once half of it is
	// used (and Receive has taken enough for a quarter of it more), with
	// deliveries still on their way, as go-amqp does, rather than once
	// the sender has used it all: the sender never waits a round trip
	// with nothing to send, so a stream of deliveries comes faster. Each
	// flow then crosses transfers in flight, which a sender that counts
	// credit by the flow's delivery-count (part 2 §2.6.7) takes right;
	// RabbitMQ 3.10 does not (it sends past the credit, and the link
	// detaches with amqp:link:transfer-limit-exceeded).
	EagerCredit bool
	// RequestedSenderSettleMode asks the sender for a settle mode:
	// SenderSettleModeSettled for deliveries sent settled (at most
	// once: nothing to accept).
	RequestedSenderSettleMode SenderSettleMode
	// Durable makes the receiver resumable (link recovery, part 2
	// §2.6.13): under ConnOptions.Reconnect, a delivery received and
	// not yet settled when the connection was lost can still be
	// settled after it, once the sender has resumed it (one settled
	// while the connection is down is sent then), and one dropped
	// unreceived at the loss comes again with Delivery.Resumed set.
	// The link's source is durable (unsettled-state, expiry-policy
	// never, or link-detach with ExpiryTimeout); its name and the
	// connection's container-id stay the same across reconnects. It
	// needs a sender that keeps the link's state across connections
	// (a broker's durable subscription); see "Resuming" in the
	// package doc.
	Durable bool
	// ExpiryTimeout, with Durable, bounds how long the sender keeps the
	// link's state after a loss (expiry-policy link-detach, rounded up
	// to seconds); 0 keeps it with no bound (expiry-policy never).
	ExpiryTimeout time.Duration

	// TargetAddress is the address of this end's target terminus: the
	// address replies come to, for a node that answers requests
	// ($cbs, $management) to the reply-to of each. Empty sends none.
	TargetAddress string
	// DynamicAddress asks the peer to make a node for the link (a
	// temporary queue; part 3 §3.5.3 dynamic): NewReceiver's source
	// address must be empty, and Address returns the one the peer
	// gave (a reply address).
	DynamicAddress bool
	// SourceCapabilities are the source terminus's capabilities
	// (symbols such as "queue", "topic", "temporary-queue").
	SourceCapabilities []string
	// SourceExpiryPolicy and SourceExpiryTimeout (seconds) are the
	// source's expiry-policy and timeout (part 3 §3.5.3): how long a
	// dynamic node outlives the link. The zero policy is session-end,
	// the spec's default. Durable sets its own.
	SourceExpiryPolicy  ExpiryPolicy
	SourceExpiryTimeout uint32
	// SettlementMode asks for a receiver settle mode (part 2 §2.8.3).
	// With ReceiverSettleModeSecond, Accept, Reject, Release and Modify
	// send the outcome unsettled and return once the sender has settled
	// the delivery (it has applied the outcome: exactly once, where the
	// peer keeps its promise). When the link or connection is lost
	// before the sender's settlement, they return its error: whether
	// the outcome was applied is unknown (a broker that did not apply
	// it delivers the message again). When their ctx ends first they
	// return ctx's error, with the outcome possibly on its way.
	SettlementMode ReceiverSettleMode
	// Properties are the properties of the link's attach (part 2
	// §2.7.3), keys as symbols (Event Hubs' "com.microsoft:epoch",
	// RabbitMQ's "paired" for a request/response pair).
	Properties map[string]any
	// DesiredCapabilities are capabilities wanted of the peer's link
	// end (such as Service Bus's "com.microsoft:session-filter").
	DesiredCapabilities []string
	// Filters are the source's filters (part 3 §3.5.8): NewSelectorFilter,
	// NewLinkFilter. A peer applies those it knows and names them in
	// its answer (LinkSourceFilterValue); it may ignore others.
	Filters []LinkFilter
}

// ExpiryPolicy is a terminus's expiry-policy (part 3 §3.5.6).
type ExpiryPolicy = frame.ExpiryPolicy

// The expiry policies.
const (
	ExpiryPolicySessionEnd      = frame.ExpirySessionEnd
	ExpiryPolicyLinkDetach      = frame.ExpiryLinkDetach
	ExpiryPolicyConnectionClose = frame.ExpiryConnectionClose
	ExpiryPolicyNever           = frame.ExpiryNever
)

// ReceiveOptions sets up one Receive; nil or the zero value works.
type ReceiveOptions struct {
	// Undecoded leaves the Delivery's Message empty: Payload returns the
	// message's bytes, neither checked nor decoded, for a caller that
	// decodes them its own way (a layer with message types of its own)
	// and would otherwise pay for a decoding it throws away.
	Undecoded bool
}

// Receiver is a receiving link (part 2 §2.6). Its methods are safe to call
// from any goroutine; concurrent Receives each get a different delivery.
type Receiver struct {
	linkCore                 // its mu guards what follows, up to the connection's goroutine's
	prefetch uint32          // the prefetch; 0: manual credit
	creditor engine.Creditor // its policy (ReceiverOptions.EagerCredit)
	notify   chan struct{}   // cap 1: a delivery has been queued

	epoch    uint32       // attaches since the first: a Delivery of another cannot be settled
	lostErr  error        // why the previous attach was lost
	q        []inDelivery // deliveries not yet received, from head on
	head     int
	bufs     [][]byte  // payload buffers to reuse
	starved  bool      // a top-up waits for Receive to take deliveries:
	starveAt uint32    // down to this many waiting
	disp     []dispReq // dispositions queued for the connection's goroutine
	// the storage of the dispositions run writes, when it is done:
	// dispositions queued meanwhile go to the other one
	dispSpare []dispReq
	issue     uint32 // IssueCredit's credit, not yet granted
	drainReq  bool
	drained   chan struct{} // closed when the sender has answered a drain
	draining  bool          // the connection's goroutine asked for a drain

	granted frame.Map // the filter-set of the peer's source (a copy)
	// the properties of the sender's latest flow that carried any
	flowProps map[string]any
	// deliveries the sender settled on its own, with its state, until
	// this end settles them (at most maxPeerSettled)
	peerSettled map[uint32]frame.StateType
	// receiver settle mode second: the outcomes sent, by delivery-id,
	// whose settlement by the sender is awaited (nil in mode first)
	settling map[uint32]chan error // cap 1

	// Receive's storage for deliveries it hands out: carved from
	// chunks, so that a kept delivery costs a fraction of a chunk.
	slab  []Delivery
	bytes []byte

	// Durable (resume_receiver.go), under mu: the unsettled deliveries
	// handed out on the link attached now, by delivery-id; those of
	// links since lost, by tag; the tags of deliveries dropped
	// unreceived at a loss.
	durable bool
	handed  map[uint32]keptTag
	kept    map[string]keptTag
	dropped map[string]struct{}
}

// inDelivery is a delivery the connection's goroutine has copied and
// queued for Receive.
type inDelivery struct {
	epoch   uint32
	id      uint32
	format  uint32
	settled bool
	resumed bool
	tagLen  uint8
	tag     [32]byte
	buf     []byte
}

type dispMaps struct{ info, annotations frame.Map }

type dispReq struct {
	epoch uint32
	id    uint32
	state frame.StateType
	err   *Error
	// modified
	failed, undeliverable bool
	// the rare fields: rejected's error info, modified's annotations (a
	// pointer, so that the request, kept in maps by value, stays small)
	maps *dispMaps
	txn  *Transaction // txn.go: given in it, when set
}

// NewReceiver attaches a receiving link to the node at source (the
// address of the source terminus) and returns once the peer has answered,
// with the prefetch credit granted; ctx bounds the wait. A link the peer
// refuses returns an *Error carrying the peer's condition, as NewSender
// does. opts may be nil.
func (s *Session) NewReceiver(ctx context.Context, source string, opts *ReceiverOptions) (*Receiver, error) {
	var o ReceiverOptions
	if opts != nil {
		o = *opts
	}
	r := &Receiver{notify: make(chan struct{}, 1)}
	if o.SettlementMode == ReceiverSettleModeSecond {
		r.settling = map[uint32]chan error{}
	}
	switch {
	case o.Credit == 0:
		r.prefetch = 1
	case o.Credit > 0:
		r.prefetch = uint32(o.Credit)
	}
	r.creditor = engine.Creditor{Credit: r.prefetch, WhenDrained: !o.EagerCredit}
	if o.DynamicAddress && source != "" {
		return nil, errors.New("client: ReceiverOptions.DynamicAddress needs an empty source address")
	}
	lo := engine.LinkOptions{Name: o.Name, Address: source, RcvSecond: o.SettlementMode == ReceiverSettleModeSecond,
		Presettled: o.RequestedSenderSettleMode == SenderSettleModeSettled,
		Unsettled:  o.RequestedSenderSettleMode == SenderSettleModeUnsettled}
	filter, err := filterSet(o.Filters)
	if err != nil {
		return nil, err
	}
	if o.DynamicAddress || len(o.SourceCapabilities) > 0 || o.SourceExpiryPolicy != 0 || o.SourceExpiryTimeout != 0 || filter != nil {
		lo.Source = &frame.Source{Address: []byte(source), Dynamic: o.DynamicAddress, ExpiryPolicy: o.SourceExpiryPolicy,
			Timeout: o.SourceExpiryTimeout, Capabilities: symbols(o.SourceCapabilities), Filter: filter}
	}
	if o.TargetAddress != "" {
		lo.Target = &frame.Target{Address: []byte(o.TargetAddress)}
	}
	if lo.Properties, err = symbolMap(o.Properties); err != nil {
		return nil, err
	}
	lo.DesiredCapabilities = symbols(o.DesiredCapabilities)
	r.init(s, r, (*engine.Session).AttachReceiver, lo, "receiver")
	if o.Durable {
		r.setDurable(&o)
		r.reattach = r.resumeOptions
	}
	if err := r.open(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// lost runs on the connection's goroutine when the connection is lost
// and will be dialled again: the deliveries waiting unsettled are
// dropped (the peer delivers them again), and those received before can
// no longer be settled (err).
func (r *Receiver) lost(err error) {
	r.draining = false
	r.mu.Lock()
	if r.durable {
		r.keepHanded() // resume_receiver.go
	}
	r.epoch++
	r.lostErr = err
	kept := r.q[:0]
	for _, in := range r.q[r.head:] {
		if in.settled {
			kept = append(kept, in)
		} else {
			r.bufs = append(r.bufs, in.buf)
			if r.durable {
				r.keepDropped(&in)
			}
		}
	}
	clear(r.q[len(kept):])
	r.q, r.head = kept, 0
	r.disp = r.disp[:0]
	r.issue = 0
	r.starved = false
	clear(r.peerSettled)             // of the link lost
	for id, ch := range r.settling { // the sender's settlement will not come
		ch <- err
		delete(r.settling, id)
	}
	r.mu.Unlock()
}

// attached runs on the connection's goroutine at the peer's attach.
func (r *Receiver) attached(l *engine.Link) {
	r.answered(l)
	if src, ok := l.RemoteAttach().Source.Get(); ok {
		r.mu.Lock()
		r.granted = append(r.granted[:0:0], src.Filter...)
		r.mu.Unlock()
	}
	if r.durable {
		r.forgetUnknown(l) // resume_receiver.go
	}
	if r.prefetch > 0 {
		l.Flow(r.prefetch)
	}
}

// Address returns the source address the receiver was attached to: with
// ReceiverOptions.DynamicAddress, the one the peer gave its node.
func (r *Receiver) Address() string { return r.address() }

// LinkName returns the link's name (ReceiverOptions.Name, or the one the
// client gave it).
func (r *Receiver) LinkName() string { return r.lo.Name }

// LinkSourceFilterValue returns the value of the filter named name in
// the source the peer answered with (a filter it applies), or nil when
// it has none of that name: the selector of NewSelectorFilter, for its
// name "apache.org:selector-filter:string", when the peer took it.
func (r *Receiver) LinkSourceFilterValue(name string) any {
	r.mu.Lock()
	set := r.granted
	r.mu.Unlock()
	return filterValue(set, name)
}

// Properties returns the properties of the peer's attach (part 2
// §2.7.3), nil when it sent none.
func (r *Receiver) Properties() map[string]any { return r.peerFields().props }

// OfferedCapabilities returns the capabilities the peer offered in its
// attach (part 2 §2.7.3), nil when it offered none. The slice is shared:
// do not change it.
func (r *Receiver) OfferedCapabilities() []string { return r.peerFields().offered }

// DesiredCapabilities returns the capabilities the peer desired in its
// attach, nil when it named none. The slice is shared: do not change it.
func (r *Receiver) DesiredCapabilities() []string { return r.peerFields().desired }

// FlowProperties returns the properties of the latest flow from the
// sender that carried any (part 2 §2.7.4: link-state properties), nil
// before one has: RabbitMQ 4.3 tells a single-active consumer whether it
// is the active one this way (rabbitmq:active, a bool).
func (r *Receiver) FlowProperties() map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flowProps
}

// Prefetched returns the number of deliveries that have arrived and wait
// for Receive.
func (r *Receiver) Prefetched() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.q) - r.head
}

// Err returns why the link ended (ErrClosed after Close), or nil while it
// is attached.
func (r *Receiver) Err() error { return r.linkCore.Err() }

// delivered runs on the connection's goroutine for each delivery: its
// bytes are copied into a buffer the receiver reuses and queued.
func (r *Receiver) delivered(d engine.Delivery) {
	if d.Aborted {
		r.topUp()
		return
	}
	resumed := r.durable && d.Resumed()
	if resumed && r.resumedIn(&d) { // handed out before the loss: not again
		r.topUp()
		return
	}
	r.mu.Lock()
	var buf []byte
	if n := len(r.bufs); n > 0 {
		buf = r.bufs[n-1]
		r.bufs[n-1] = nil
		r.bufs = r.bufs[:n-1]
	}
	r.mu.Unlock()
	// The copy, and the allocation when no buffer came back (the bytes
	// of a delivery were handed over: TakePayload), outside the lock:
	// a Receive waiting for it would wait through a collection's mark
	// assist too.
	in := inDelivery{id: d.DeliveryID, format: d.MessageFormat, settled: d.Settled, resumed: resumed, tagLen: uint8(min(len(d.DeliveryTag), 32)),
		buf: append(buf[:0], d.Payload...)}
	copy(in.tag[:], d.DeliveryTag)
	r.mu.Lock()
	in.epoch = r.epoch
	if r.head > 0 && r.head == len(r.q) {
		r.q, r.head = r.q[:0], 0
	}
	r.q = append(r.q, in)
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
	r.topUp()
}

// topUp grants credit again, up to the prefetch less the deliveries
// waiting, by the receiver's engine.Creditor. By default that is once the
// sender has used up what it had and Receive has taken at least half the
// prefetch: credit is granted only while none is outstanding
// (WhenDrained), so that no transfer is in flight when the flow goes
// out: topping up while transfers cross the flow is where peers disagree
// on the credit left (RabbitMQ 3.10 then sends beyond it, and the engine
// detaches with amqp:link:transfer-limit-exceeded). It costs one round
// trip per prefetch's worth of deliveries, which EagerCredit spares. It
// runs on the connection's goroutine.
func (r *Receiver) topUp() {
	l := r.l
	if r.prefetch == 0 || l == nil || r.draining {
		return
	}
	r.mu.Lock()
	waiting := uint32(len(r.q) - r.head)
	cur := l.Credit()
	if want := r.creditor.Grant(cur, waiting); want > 0 {
		r.starved = false
		r.mu.Unlock()
		l.Flow(want)
		return
	}
	// With less than half the credit left, a grant may come of Receive
	// taking deliveries, with none arriving: Receive kicks once no more
	// than starveAt wait, the most for which the policy grants (found by
	// halving: fewer waiting never grant less).
	r.starved = false
	if cur < (r.prefetch+1)/2 && waiting > 0 && r.creditor.Grant(cur, 0) > 0 {
		lo, hi := uint32(0), waiting // Grant(cur, lo) > 0, Grant(cur, hi) == 0
		for hi-lo > 1 {
			if mid := lo + (hi-lo)/2; r.creditor.Grant(cur, mid) > 0 {
				lo = mid
			} else {
				hi = mid
			}
		}
		r.starved, r.starveAt = true, lo
	}
	r.mu.Unlock()
}

// Receive returns the next delivery, waiting for one within ctx. The
// delivery and its message are the caller's to keep: it shares nothing
// with the receiver. Accept, Reject, Release or Modify it (unless the
// sender settled it: Settled). It returns ctx's error when ctx ends first,
// and the link's error once it has ended and every delivery that came
// before has been received. A delivery whose message does not decode is
// returned with the error (its Message empty, Payload its bytes): reject
// it. opts may be nil.
//
// Deliveries cost well under one allocation each (0.07 for a message
// of one data section: the Delivery and its bytes are carved from chunks
// the receiver allocates now and then, and a Message keeps one data
// section's slice inline). ReceiveInto reuses a Delivery and allocates
// nothing.
func (r *Receiver) Receive(ctx context.Context, opts *ReceiveOptions) (*Delivery, error) {
	var in inDelivery
	if err := r.next(ctx, &in); err != nil {
		return nil, err
	}
	r.mu.Lock()
	if len(r.slab) == 0 {
		r.slab = make([]Delivery, 16)
	}
	d := &r.slab[0]
	r.slab = r.slab[1:]
	n := len(in.buf) + int(in.tagLen)
	if len(r.bytes) < n {
		r.bytes = make([]byte, max(n, 32<<10))
	}
	b := r.bytes[:n:n]
	r.bytes = r.bytes[n:]
	r.mu.Unlock()
	copy(b, in.buf)
	copy(b[len(in.buf):], in.tag[:in.tagLen])
	r.release(in.buf)
	d.fill(r, &in, b[len(in.buf):])
	if opts != nil && opts.Undecoded {
		d.payload = b[:len(in.buf)]
		return d, nil
	}
	if err := d.Message.DecodeNoCopy(b[:len(in.buf)]); err != nil {
		d.payload = b[:len(in.buf)]
		return d, err
	}
	return d, nil
}

// ReceiveInto is Receive into a Delivery the caller reuses: its Message
// is decoded into again (Message.Decode: storage reused), so that, once
// warm, receiving allocates nothing. What d held before is overwritten:
// keep nothing of it past the call. With ReceiveOptions.Undecoded, d's
// bytes are a receive buffer that d keeps until its next ReceiveInto
// gives it back for reuse: receive into a Delivery, never into a copy
// of one. A nil or zero *Delivery works.
func (r *Receiver) ReceiveInto(ctx context.Context, d *Delivery, opts *ReceiveOptions) error {
	var in inDelivery
	if err := r.next(ctx, &in); err != nil {
		return err
	}
	d.tagBuf = append(d.tagBuf[:0], in.tag[:in.tagLen]...)
	d.fill(r, &in, d.tagBuf)
	if opts != nil && opts.Undecoded {
		// The queued bytes become d's, and the buffer d had from an
		// earlier ReceiveInto goes back for reuse in their place: no
		// copy.
		d.Message.Reset()
		if old := d.payload; d.ownPayload && cap(old) > 0 {
			r.release(old[:0])
		}
		d.payload, d.ownPayload = in.buf, true
		return nil
	}
	err := d.Message.Decode(in.buf)
	if err != nil {
		d.payload = append(d.payload[:0], in.buf...)
	}
	r.release(in.buf)
	return err
}

// woken reports whether Receive has a reason to look again: a delivery
// queued, or the link's end. It is ReadUntil's done: cheap, and takes
// no lock.
func (r *Receiver) woken() bool {
	if len(r.notify) > 0 {
		return true
	}
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// next takes the next delivery off the queue, waiting within ctx.
func (r *Receiver) next(ctx context.Context, in *inDelivery) error {
	for {
		r.mu.Lock()
		if r.head < len(r.q) {
			*in = r.q[r.head]
			r.q[r.head] = inDelivery{}
			r.head++
			if r.durable {
				r.hand(in) // resume_receiver.go
			}
			more := r.head < len(r.q)
			kick := false
			if r.starved && uint32(len(r.q)-r.head) <= r.starveAt {
				r.starved = false
				kick = true
			}
			r.mu.Unlock()
			if more {
				select {
				case r.notify <- struct{}{}:
				default:
				}
			}
			if kick {
				// Out now, with the dispositions given meanwhile,
				// and on this goroutine when no other holds the
				// connection: the credit is wanted before the half
				// of the prefetch still queued is received (its
				// round trip otherwise starts only when the
				// connection's goroutine gets to run: hundreds of
				// microseconds on a busy machine, enough for
				// Receive to run dry), and a Receive with nothing
				// queued waits for a delivery it lets come.
				r.kickNow()
			}
			return nil
		}
		err := r.err
		r.mu.Unlock()
		if err != nil {
			return err
		}
		if e := ctx.Err(); e != nil {
			return ctxErr(ctx)
		}
		if w := r.waker.Load(); w != nil {
			// When the read side rests after a blocking request (a
			// Send's), the next delivery is read on this goroutine
			// (driver.Driver.ReadUntilRested): a reply to a request
			// this goroutine has just sent comes with no hand-off and
			// no wait for the rest to end. A stream of deliveries is
			// left to the reader that reads it.
			w.Driver().ReadUntilRested(ctx, r.woken)
		}
		select {
		case <-r.notify:
		case <-r.done:
		case <-ctx.Done():
			return ctxErr(ctx)
		}
	}
}

func (r *Receiver) release(buf []byte) {
	r.mu.Lock()
	r.bufs = append(r.bufs, buf)
	r.mu.Unlock()
}

// run is the Waker's function: dispositions, credit, drains.
func (r *Receiver) run(ec *engine.Conn) {
	if ec.Closed() {
		return // a lost connection's Driver ending: as Sender.run
	}
	l := r.l
	if l == nil {
		return // lost: attached again later
	}
	r.mu.Lock()
	disp := r.takeDispLocked()
	issue := r.issue
	r.issue = 0
	drain := r.drainReq
	r.drainReq = false
	r.mu.Unlock()
	for i := range disp {
		dr := &disp[i]
		st := frame.DeliveryState{Type: dr.state, DeliveryFailed: dr.failed, UndeliverableHere: dr.undeliverable}
		if dr.err != nil {
			st.Error = frame.AMQPError{Condition: []byte(dr.err.Condition), Description: []byte(dr.err.Description)}
		}
		if dr.maps != nil {
			st.Error.Info, st.MessageAnnotations = dr.maps.info, dr.maps.annotations
		}
		disposeOne(l, dr, st) // txn.go: in its transaction, if any
		if r.durable {
			r.disposedID(dr.id) // resume_receiver.go
		}
		disp[i] = dispReq{}
	}
	r.mu.Lock()
	r.dispSpare = disp[:0]
	r.mu.Unlock()
	if issue > 0 {
		l.Flow(l.Credit() + issue)
	}
	if drain {
		if l.Credit() == 0 {
			r.drainedNow()
		} else {
			r.draining = true
			l.DrainCredit()
		}
	}
	r.topUp()
}

// takeDispLocked returns the queued dispositions, for run to write
// without r.mu held. Those queued meanwhile go to the spare storage, so
// that a stream of Accepts beside the writes of the ones before them
// allocates nothing: run gives the storage it took back as the spare.
func (r *Receiver) takeDispLocked() []dispReq {
	disp := r.disp
	r.disp, r.dispSpare = r.dispSpare[:0], nil
	return disp
}

// flowed runs on the connection's goroutine at the sender's flow.
func (r *Receiver) flowed() {
	if r.l != nil {
		if p := r.l.FlowProperties(); len(p) > 0 {
			m := anyMap(p)
			r.mu.Lock()
			r.flowProps = m
			r.mu.Unlock()
		}
	}
	if r.draining && r.l != nil && r.l.Credit() == 0 {
		r.draining = false
		r.drainedNow()
	}
}

func (r *Receiver) drainedNow() {
	r.mu.Lock()
	ch := r.drained
	r.drained = nil
	r.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}

// IssueCredit grants the sender credit for n more deliveries; only with
// manual credit (ReceiverOptions.Credit -1).
func (r *Receiver) IssueCredit(n uint32) error {
	if r.prefetch != 0 {
		return errors.New("client: IssueCredit needs manual credit (ReceiverOptions.Credit -1)")
	}
	r.mu.Lock()
	if r.err != nil {
		err := r.err
		r.mu.Unlock()
		return err
	}
	r.issue += n
	r.mu.Unlock()
	r.kickNow()
	return nil
}

// DrainCredit asks the sender to use up the credit granted, or give it
// back (a flow with drain, part 2 §2.6.7), and waits within ctx for its
// answer; then no credit is left. Only with manual credit.
func (r *Receiver) DrainCredit(ctx context.Context) error {
	if r.prefetch != 0 {
		return errors.New("client: DrainCredit needs manual credit (ReceiverOptions.Credit -1)")
	}
	r.mu.Lock()
	if r.err != nil {
		err := r.err
		r.mu.Unlock()
		return err
	}
	if r.drained == nil {
		r.drained = make(chan struct{})
	}
	ch := r.drained
	r.drainReq = true
	r.mu.Unlock()
	r.kickNow()
	select {
	case <-ch:
		return nil
	case <-r.done:
		return r.Err()
	case <-ctx.Done():
		return ctxErr(ctx)
	}
}

// dispose queues a disposition for the connection's goroutine. In
// receiver settle mode first (the client's), the disposition settles the
// delivery as it is sent: there is no answer to wait for.
func (r *Receiver) dispose(ctx context.Context, dr dispReq) error {
	if err := ctx.Err(); err != nil {
		return ctxErr(ctx)
	}
	r.mu.Lock()
	if r.err != nil {
		err := r.err
		r.mu.Unlock()
		return err
	}
	if dr.epoch != r.epoch {
		r.mu.Unlock()
		return r.lostErr // received on a link since lost
	}
	if st, ok := r.peerSettled[dr.id]; ok {
		delete(r.peerSettled, dr.id)
		r.mu.Unlock()
		return &PeerSettledError{State: st}
	}
	r.disp = append(r.disp, dr)
	if r.settling == nil {
		// Nothing to wait for: queued, so that the dispositions of a
		// stream of deliveries go out together (one frame for a range,
		// one write), not one write each.
		r.mu.Unlock()
		r.kick()
		return nil
	}
	settled := make(chan error, 1)
	r.settling[dr.id] = settled
	r.mu.Unlock()
	r.kickNow()
	select {
	case err := <-settled:
		return err
	case <-r.done:
		return r.Err()
	case <-ctx.Done():
		r.mu.Lock()
		if r.settling[dr.id] == settled {
			delete(r.settling, dr.id)
		}
		r.mu.Unlock()
		return ctxErr(ctx)
	}
}

// disposed runs on the connection's goroutine at the sender's
// disposition: in receiver settle mode second, its settlement of a
// delivery whose outcome this end sent.
func (r *Receiver) disposed(d engine.DeliveryUpdate) {
	if !d.Settled {
		return
	}
	r.mu.Lock()
	ch := r.settling[d.ID]
	delete(r.settling, d.ID)
	if ch == nil && len(r.peerSettled) < maxPeerSettled {
		// The sender settled a delivery on its own (a consumer
		// time-out): settling it here applies nothing.
		if r.peerSettled == nil {
			r.peerSettled = map[uint32]frame.StateType{}
		}
		r.peerSettled[d.ID] = d.State.Type
	}
	r.mu.Unlock()
	if ch != nil {
		ch <- nil
	}
}

// maxPeerSettled bounds the deliveries a receiver remembers the sender
// settled on its own.
const maxPeerSettled = 4096

// ended runs on the connection's goroutine when the link has ended.
func (r *Receiver) ended(err error) {
	r.mu.Lock()
	r.setErrLocked(err)
	ch := r.drained
	r.drained = nil
	r.mu.Unlock()
	if ch != nil {
		close(ch)
	}
	r.endLink(err)
}

// Close detaches the link (closing it) and waits for the peer's detach
// within ctx. Deliveries not yet received are dropped: the peer settles
// them as it sees fit (a broker delivers them again). It returns nil
// after a clean detach, else the link's error.
func (r *Receiver) Close(ctx context.Context) error {
	return r.close(ctx)
}

// Delivery is a message received, with its delivery's fields (part 2
// §2.7.5). Settle it with Accept, Reject, Release or Modify, unless the
// sender sent it settled.
type Delivery struct {
	// Message is the message, decoded.
	Message message.Message
	// DeliveryID is the delivery-id.
	DeliveryID uint32
	// DeliveryTag is the delivery-tag.
	DeliveryTag []byte
	// MessageFormat is the message-format (0 for an AMQP message).
	MessageFormat uint32
	// Settled reports that the sender settled it: there is no outcome
	// to give.
	Settled bool
	// Resumed reports a delivery a resumable receiver
	// (ReceiverOptions.Durable) had queued unreceived when the
	// connection was lost, which the sender resumed on the new one: it
	// may have had it before (part 2 §2.6.13).
	Resumed bool

	r       *Receiver
	epoch   uint32
	tagBuf  []byte
	payload []byte // a message that did not decode, or received undecoded
	// payload is a receive buffer ReceiveInto gave d, its own to hand
	// back (not a share of Receive's chunks)
	ownPayload bool
}

func (d *Delivery) fill(r *Receiver, in *inDelivery, tag []byte) {
	d.r, d.epoch, d.DeliveryID, d.MessageFormat, d.Settled, d.Resumed, d.DeliveryTag = r, in.epoch, in.id, in.format, in.settled, in.resumed, tag
	d.payload = d.payload[:0]
}

// TakePayload is Payload, with the bytes handed over: they are the
// caller's to keep and change, and nothing of the receiver's writes them
// again. After a ReceiveInto with ReceiveOptions.Undecoded these are the
// bytes as they were queued, with no copy, and d's next ReceiveInto
// takes a buffer of the receiver's in their place; otherwise they are a
// copy of Payload's. It lets a layer that decodes the bytes itself keep
// views into them (strings, binaries) past the delivery's reuse.
func (d *Delivery) TakePayload() []byte {
	if b := d.Message.Bytes(); b != nil {
		return bytes.Clone(b)
	}
	p := d.payload
	if !d.ownPayload {
		return bytes.Clone(p)
	}
	d.payload, d.ownPayload = nil, false
	return p
}

// Payload returns the message as encoded (for a message that did not
// decode, or was received with ReceiveOptions.Undecoded, too).
func (d *Delivery) Payload() []byte {
	if b := d.Message.Bytes(); b != nil {
		return b
	}
	return d.payload
}

// Accept accepts and settles the delivery (part 3 §3.4.2). The
// disposition is final as it is sent (receiver settle mode first), so
// Accept queues it to the connection and returns without a round trip
// (in mode second it waits for the sender: ReceiverOptions.SettlementMode);
// an error says the link had ended (the peer settles the delivery as it
// sees fit, a broker delivers it again), or ctx had. Settled deliveries
// need none: Accept does nothing.
func (d *Delivery) Accept(ctx context.Context) error {
	return d.settle(ctx, dispReq{id: d.DeliveryID, state: frame.StateAccepted})
}

// Reject rejects and settles the delivery (part 3 §3.4.3) with e, which
// may be nil, as Accept does. e's Info, when set, is sent as the error's
// info map (Service Bus reads a dead-letter reason and description
// there: "DeadLetterReason", "DeadLetterErrorDescription").
func (d *Delivery) Reject(ctx context.Context, e *Error) error {
	dr, err := rejectReq(e)
	if err != nil {
		return err
	}
	dr.id = d.DeliveryID
	return d.settle(ctx, dr)
}

// rejectReq is the disposition of Reject with e.
func rejectReq(e *Error) (dispReq, error) {
	dr := dispReq{state: frame.StateRejected, err: e}
	if e != nil && len(e.Info) > 0 {
		info, err := symbolMap(e.Info)
		if err != nil {
			return dr, err
		}
		dr.maps = &dispMaps{info: info}
	}
	return dr, nil
}

// Release releases and settles the delivery (part 3 §3.4.4): the sender
// may deliver it again, here or elsewhere.
func (d *Delivery) Release(ctx context.Context) error {
	return d.settle(ctx, dispReq{id: d.DeliveryID, state: frame.StateReleased})
}

// ModifyOptions is the modified outcome's fields (part 3 §3.4.5).
type ModifyOptions struct {
	// DeliveryFailed counts a failed delivery attempt.
	DeliveryFailed bool
	// UndeliverableHere asks the sender not to deliver it on this link
	// again.
	UndeliverableHere bool
	// Annotations are merged into the message's annotations by the
	// sender (Service Bus's abandon and defer with properties to
	// change, RabbitMQ 4's "x-opt-" keys); keys are symbols, values
	// the Go types message properties take.
	Annotations map[string]any
}

// Modify gives the delivery the modified outcome and settles it.
func (d *Delivery) Modify(ctx context.Context, o ModifyOptions) error {
	dr, err := modifyReq(o)
	if err != nil {
		return err
	}
	dr.id = d.DeliveryID
	return d.settle(ctx, dr)
}

// modifyReq is the disposition of Modify with o.
func modifyReq(o ModifyOptions) (dispReq, error) {
	dr := dispReq{state: frame.StateModified, failed: o.DeliveryFailed, undeliverable: o.UndeliverableHere}
	if len(o.Annotations) > 0 {
		a, err := symbolMap(o.Annotations)
		if err != nil {
			return dr, err
		}
		dr.maps = &dispMaps{annotations: a}
	}
	return dr, nil
}

func (d *Delivery) settle(ctx context.Context, dr dispReq) error {
	if d.r == nil {
		return errors.New("client: not a received delivery")
	}
	if d.Settled {
		return nil
	}
	dr.epoch = d.epoch
	if d.r.durable {
		if handled, err := d.r.disposeKept(ctx, dr, d.DeliveryTag); handled { // resume_receiver.go
			return err
		}
	}
	return d.r.dispose(ctx, dr)
}
