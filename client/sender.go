package client

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
)

// SenderSettleMode is a sender's settle mode (part 2 §2.8.2): whether its
// deliveries go settled (fire and forget), unsettled (each outcome
// awaited), or either, as each Send asks.
type SenderSettleMode uint8

// The sender settle modes. The zero value is mixed.
const (
	SenderSettleModeMixed SenderSettleMode = iota
	SenderSettleModeUnsettled
	SenderSettleModeSettled
)

// SenderOptions sets up a sender; nil or the zero value works (a link
// named by the client, settle mode mixed, Send unsettled).
type SenderOptions struct {
	// Name is the link's name; empty gives a unique one.
	Name string
	// SettlementMode is the sender settle mode asked for.
	SettlementMode SenderSettleMode
	// Durable makes the sender resumable (link recovery, part 2
	// §2.6.13): under ConnOptions.Reconnect, a message sent unsettled
	// whose outcome had not come when the connection was lost is
	// settled or sent again on the new connection, as the peer's state
	// of it says, and its Send or Pending.Wait returns its real outcome
	// instead of the loss's error. The link's target is durable
	// (unsettled-state, expiry-policy never, or link-detach with
	// ExpiryTimeout) and receiver settle mode second is asked for; its
	// name (Name, or the one the client gives it) and the connection's
	// container-id stay the same across reconnects. Settle mode
	// settled is refused. See "Resuming" in the package doc for what
	// the peer must do.
	Durable bool
	// ExpiryTimeout, with Durable, bounds how long the peer keeps the
	// link's unsettled state after a loss (expiry-policy link-detach,
	// the timeout rounded up to seconds); 0 keeps it with no bound
	// (expiry-policy never).
	ExpiryTimeout time.Duration

	// SourceAddress is the address of this end's source terminus (a
	// peer may route replies or check identity by it); empty sends
	// none.
	SourceAddress string
	// DynamicAddress asks the peer to make a node for the link (part 3
	// §3.5.4 dynamic): NewSender's target address must be empty, and
	// Address returns the one the peer gave.
	DynamicAddress bool
	// TargetCapabilities are the target terminus's capabilities
	// (symbols such as "queue", "topic").
	TargetCapabilities []string
	// Properties are the properties of the link's attach (part 2
	// §2.7.3), keys as symbols (RabbitMQ's "paired" for a
	// request/response pair).
	Properties map[string]any
	// DesiredCapabilities are capabilities wanted of the peer's link
	// end.
	DesiredCapabilities []string
	// RequestedReceiverSettleMode asks the receiver for a settle mode:
	// ReceiverSettleModeSecond makes the peer settle each delivery
	// only after this end has settled on its outcome.
	RequestedReceiverSettleMode ReceiverSettleMode
}

// ReceiverSettleMode is a receiver's settle mode (part 2 §2.8.3): first
// settles a delivery as its outcome is sent, second only once the
// sender has settled it.
type ReceiverSettleMode uint8

// The receiver settle modes. The zero value is first.
const (
	ReceiverSettleModeFirst ReceiverSettleMode = iota
	ReceiverSettleModeSecond
)

// SendOptions sets up one Send; nil sends unsettled (settle mode mixed or
// unsettled) or settled (settle mode settled).
type SendOptions struct {
	// Settled sends the message settled (pre-settled): Send returns once
	// it has been handed to the connection, with no outcome. The link's
	// settle mode must be mixed or settled.
	Settled bool
	// MessageFormat is the delivery's message-format (part 2 §2.7.5):
	// 0, the standard AMQP message, or a vendor's (Azure's batch
	// format 0x80013700 for several messages in one delivery).
	MessageFormat uint32
	// Transaction, when set, sends the message in that transaction
	// (part 4 §4.4.1): the coordinator makes it visible when the
	// transaction commits and drops it when it rolls back. On a
	// transaction that has ended, Send and SendAsync return
	// ErrTransactionDone and send nothing. See Transaction.
	Transaction *Transaction
	// Encoded, when not nil, is the message already encoded (its
	// sections, as message.Message.Append writes them): Send and
	// SendAsync send these bytes as they are, unchecked, and msg must
	// be nil. For a layer that encodes messages its own way (goamqp
	// writes go-amqp's bytes), which would otherwise decode its bytes
	// into a message.Message only to have them encoded again.
	Encoded []byte
}

// Sender is a sending link (part 2 §2.6). Its Send and SendAsync are safe
// to call from any goroutine, concurrently: messages go out in the order
// the calls queued them.
type Sender struct {
	linkCore // its mu guards what follows, up to the connection's goroutine's
	mode     SenderSettleMode

	queue   []*sendReq // queued by callers, not yet taken by the connection
	free    []*sendReq
	maxSize uint64
	// SendAsync's bound (maxUnsent): messages admitted and not yet
	// taken (reserved counts those being encoded), those the
	// connection's goroutine holds unsent as of its last pump, and the
	// callers waiting for room, woken one at a time through room.
	reserved, held, waiters int
	room                    chan struct{} // cap 1
	// stalled: the connection's goroutine holds messages unsent for
	// want of credit, the session window, output room or the unsettled
	// cap (as of its last pump), so the event that lifts it (OnFlow,
	// OnWritable, an outcome) pumps again and takes the queue with
	// them: SendAsync queues behind them without a kick.
	stalled bool
	// flying: messages sent are awaiting their outcome, as of the
	// connection's goroutine's last look (a hint: SendAsync hands a
	// message behind them to the connection's goroutine rather than
	// writing it on the caller's).
	flying atomic.Bool
	// runs counts the runs of the link's work (run) that SendAsync and
	// Send kicked, for tests (pipeline_test.go).
	runs atomic.Int64

	// the connection's goroutine only
	backlog  []*sendReq // taken, waiting for credit, window or output room
	inflight map[uint32]*sendReq
	ready    bool // the peer's attach of l has come

	// Durable (resume.go): the tags' first half, the last sequence
	// number, the requests kept at a loss for the next attach, the
	// loss's error, the bound on deliveries unsettled at once, and
	// whether pump stopped at it.
	durable      bool
	instance     [8]byte
	seq          uint64
	resume       []*sendReq
	lostErr      error
	maxUnsettled int
	capped       bool
}

// sendReq is one message on its way: encoded by the caller, sent by the
// connection's goroutine, completed with its outcome. Its state says who
// owns it; exactly one of caller and connection recycles it.
type sendReq struct {
	buf     []byte
	format  uint32 // SendOptions.MessageFormat
	settled bool
	state   atomic.Int32
	err     error
	done    chan struct{} // cap 1: signalled once, when state becomes reqDone
	gen     atomic.Uint32 // bumped at each reuse: a stale Pending sees it
	txn     *Transaction  // txn.go: sent in it, when set
	counted bool          // txn.go: counted in txn as work not yet written
	// Durable (resume.go), on the connection's goroutine: its tag and
	// sequence number once given, and how a kept request is resumed.
	tag    [tagLen]byte
	seq    uint64
	tagged bool
	res    uint8
}

const (
	reqQueued    int32 = iota // in queue or backlog: nothing sent
	reqSending                // the connection's goroutine is sending it now
	reqSent                   // handed to the connection, outcome awaited
	reqDone                   // complete: err is the outcome
	reqAbandoned              // the caller gave up: whoever finishes recycles it
)

// NewSender attaches a sending link to the node at target (the address
// of the target terminus) and returns once the peer has answered; ctx
// bounds the wait. A link the peer refuses (an attach without a target
// followed by a detach, a detach right after its attach, or its session
// or connection ended under it) returns an *Error carrying the peer's
// condition and description. opts may be nil.
func (s *Session) NewSender(ctx context.Context, target string, opts *SenderOptions) (*Sender, error) {
	var o SenderOptions
	if opts != nil {
		o = *opts
	}
	snd := &Sender{mode: o.SettlementMode, inflight: make(map[uint32]*sendReq), room: make(chan struct{}, 1)}
	if o.DynamicAddress && target != "" {
		return nil, errors.New("client: SenderOptions.DynamicAddress needs an empty target address")
	}
	lo := engine.LinkOptions{Name: o.Name, Address: target, RcvSecond: o.RequestedReceiverSettleMode == ReceiverSettleModeSecond,
		Presettled: o.SettlementMode == SenderSettleModeSettled, Unsettled: o.SettlementMode == SenderSettleModeUnsettled}
	if o.SourceAddress != "" {
		lo.Source = &frame.Source{Address: []byte(o.SourceAddress)}
	}
	if o.DynamicAddress || len(o.TargetCapabilities) > 0 {
		lo.Target = &frame.Target{Address: []byte(target), Dynamic: o.DynamicAddress, Capabilities: symbols(o.TargetCapabilities)}
	}
	var err error
	if lo.Properties, err = symbolMap(o.Properties); err != nil {
		return nil, err
	}
	lo.DesiredCapabilities = symbols(o.DesiredCapabilities)
	snd.init(s, snd, (*engine.Session).AttachSender, lo, "sender")
	if o.Durable {
		if err := snd.setDurable(&o); err != nil {
			return nil, err
		}
		snd.reattach = snd.resumeOptions
	}
	if err := snd.open(ctx); err != nil {
		return nil, err
	}
	return snd, nil
}

var linkSeq atomic.Uint64

// linkName is a unique link name.
func linkName(c *Conn, role string) string {
	return c.opts.ContainerID + "-" + role + "-" + strconv.FormatUint(linkSeq.Add(1), 10)
}

// lost runs on the connection's goroutine when the connection is lost
// and will be dialled again: messages in flight complete with err (their
// outcome is unknown), those not yet sent wait for the link's next
// attach.
func (snd *Sender) lost(err error) {
	snd.ready = false
	if snd.durable {
		snd.keepResume(err) // resume.go: kept for the next attach
	}
	snd.mu.Lock()
	snd.queue = append(snd.backlog, snd.queue...)
	snd.backlog = nil
	snd.held, snd.stalled = 0, false
	snd.mu.Unlock()
	snd.flying.Store(false)
	for id, r := range snd.inflight {
		delete(snd.inflight, id)
		snd.complete(r, err)
	}
}

// attached runs on the connection's goroutine at the peer's attach.
func (snd *Sender) attached(l *engine.Link) {
	snd.answered(l)
	snd.mu.Lock()
	snd.maxSize = l.RemoteMaxMessageSize()
	snd.mu.Unlock()
	snd.ready = true
	if snd.durable {
		snd.resolve(l) // resume.go
	}
}

// Address returns the target address the sender was attached to: with
// SenderOptions.DynamicAddress, the one the peer gave its node.
func (snd *Sender) Address() string { return snd.address() }

// LinkName returns the link's name (SenderOptions.Name, or the one the
// client gave it).
func (snd *Sender) LinkName() string { return snd.lo.Name }

// Properties returns the properties of the peer's attach (part 2
// §2.7.3), nil when it sent none.
func (snd *Sender) Properties() map[string]any { return snd.peerFields().props }

// OfferedCapabilities returns the capabilities the peer offered in its
// attach (part 2 §2.7.3), nil when it offered none. The slice is shared:
// do not change it.
func (snd *Sender) OfferedCapabilities() []string { return snd.peerFields().offered }

// DesiredCapabilities returns the capabilities the peer desired in its
// attach, nil when it named none. The slice is shared: do not change it.
func (snd *Sender) DesiredCapabilities() []string { return snd.peerFields().desired }

// MaxMessageSize returns the largest message the peer takes (its
// max-message-size; 0: no limit).
func (snd *Sender) MaxMessageSize() uint64 {
	snd.mu.Lock()
	defer snd.mu.Unlock()
	return snd.maxSize
}

// Err returns why the link ended (ErrClosed after Close), or nil while it
// is attached.
func (snd *Sender) Err() error { return snd.linkCore.Err() }

// Send sends msg and waits: for link credit, then, unsettled, for the
// peer's outcome (settled, until it has been handed to the connection).
// It returns nil for accepted; an *OutcomeError for rejected, released
// or modified (errors.Is: ErrRejected, ErrReleased, ErrModified), never
// nil; the *Error of the link, session or connection when it ends first.
//
// msg is encoded before Send returns or waits, so it may be reused as
// soon as Send returns. opts may be nil.
//
// When ctx ends:
//   - before the transfer (waiting for credit, window or output room):
//     the message is not sent and never will be; Send returns ctx's
//     error.
//   - after the transfer, before the outcome: the message has gone to
//     the connection and the peer may take it; Send returns an error
//     matching both ErrOutcomeUnknown and ctx's error. The outcome, when
//     it comes, settles the delivery and is dropped.
//   - after the outcome: Send returns the outcome, as if ctx had not
//     ended.
//
// An ended ctx given to Send sends nothing.
func (snd *Sender) Send(ctx context.Context, msg *message.Message, opts *SendOptions) error {
	p, err := snd.sendAsync(ctx, msg, opts, true)
	if err != nil {
		return err
	}
	r := p.r
	select {
	case <-r.done:
		return snd.finish(r)
	default:
	}
	if w := snd.waker.Load(); w != nil {
		// The outcome is read on this goroutine when it can be
		// (driver.Driver.ReadUntil): no hand-off from the reader.
		w.Driver().ReadUntil(ctx, func() bool { return len(r.done) > 0 })
	}
	select {
	case <-r.done:
		return snd.finish(r)
	case <-ctx.Done():
	}
	for {
		st := r.state.Load()
		switch st {
		case reqDone:
			<-r.done
			return snd.finish(r)
		case reqSending:
			runtime.Gosched() // the connection is in link.Send: a moment
			continue
		}
		if r.state.CompareAndSwap(st, reqAbandoned) {
			if st == reqQueued {
				return ctxErr(ctx)
			}
			return unknownOutcome{ctxErr(ctx)}
		}
	}
}

// finish takes the outcome of a completed request and recycles it.
func (snd *Sender) finish(r *sendReq) error {
	err := r.err
	snd.recycle(r)
	return err
}

// Pending is a message SendAsync has queued: Wait gives its outcome. It
// is a small value; copy it freely, but Wait for it once: after the
// outcome, its storage is reused by the sender.
type Pending struct {
	snd *Sender
	r   *sendReq
	gen uint32
}

// ErrWaited is what Wait returns on a Pending whose outcome an earlier
// Wait returned.
var ErrWaited = errors.New("client: Pending waited for already")

// Wait waits for the outcome of the message, within ctx, and returns it
// as Send would. When ctx ends first it returns ctx's error and the
// message stays on its way: Wait again for its outcome. Wait from one
// goroutine at a time.
func (p Pending) Wait(ctx context.Context) error {
	r := p.r
	if r == nil || r.gen.Load() != p.gen {
		return ErrWaited
	}
	select {
	case <-r.done: // the outcome first, whatever ctx says
		return p.snd.finish(r)
	default:
	}
	select {
	case <-r.done:
		return p.snd.finish(r)
	case <-ctx.Done():
		return ctxErr(ctx)
	}
}

// maxUnsent bounds the messages a sender holds unsent: queued by
// SendAsync (or Send) and not yet transferred for want of credit, the
// session window or output room. SendAsync beyond it waits for room.
const maxUnsent = 1024

// SendAsync queues msg to be sent and returns without waiting for the
// outcome: Pending.Wait gives it. Messages go out in the order they
// were queued, as credit allows, thousands in flight on one link with no
// goroutine for each. msg is encoded before SendAsync returns.
//
// A sender holds at most 1,024 messages unsent (waiting for credit, the
// session window or output room): when that many are, SendAsync waits
// within ctx until the link takes one (backpressure; messages sent and
// awaiting their outcome do not count, the peer's credit bounds them).
// When ctx ends first, or had ended, it returns ctx's error and queues
// nothing.
//
// A Pending never waited for costs nothing but its memory, which the
// garbage collector takes back.
//
// With nothing of the sender's on its way, the message is written at
// once on the calling goroutine, as Send's is; behind messages awaiting
// their outcome, the connection's goroutine writes it, with whatever
// else is queued by then; behind messages held for want of credit it
// waits in the queue for the peer's next grant (see "Sending" in the
// package doc).
func (snd *Sender) SendAsync(ctx context.Context, msg *message.Message, opts *SendOptions) (Pending, error) {
	return snd.sendAsync(ctx, msg, opts, false)
}

// sendAsync is SendAsync; now (Send, which waits for the outcome at
// once) writes the message on the caller's goroutine when the
// connection is free, as SendAsync does only when no message is on its
// way: a message behind others goes to the connection's goroutine, so
// that a burst of SendAsync goes out in a few writes, made there.
func (snd *Sender) sendAsync(ctx context.Context, msg *message.Message, opts *SendOptions, now bool) (Pending, error) {
	if err := ctx.Err(); err != nil {
		return Pending{}, ctxErr(ctx)
	}
	settled := snd.mode == SenderSettleModeSettled
	var format uint32
	var encoded []byte
	if opts != nil {
		settled = settled || opts.Settled
		format = opts.MessageFormat
		encoded = opts.Encoded
	}
	if (encoded == nil) == (msg == nil) {
		return Pending{}, errEncoded
	}
	snd.mu.Lock()
	if err := snd.reserve(ctx); err != nil {
		snd.mu.Unlock()
		return Pending{}, err
	}
	var r *sendReq
	if n := len(snd.free); n > 0 {
		r = snd.free[n-1]
		snd.free[n-1] = nil
		snd.free = snd.free[:n-1]
	}
	snd.mu.Unlock()
	if r == nil {
		r = &sendReq{done: make(chan struct{}, 1)}
	}
	var err error
	if encoded != nil {
		r.buf = append(r.buf[:0], encoded...)
	} else if r.buf, err = msg.Append(r.buf[:0]); err != nil {
		snd.unreserve()
		snd.recycle(r)
		return Pending{}, err
	}
	r.settled, r.format = settled, format
	r.tagged, r.res = false, resNone
	r.state.Store(reqQueued)
	p := Pending{snd: snd, r: r, gen: r.gen.Load()}
	snd.mu.Lock()
	snd.reserved--
	if snd.err != nil {
		err := snd.err
		snd.mu.Unlock()
		snd.recycle(r)
		return Pending{}, err
	}
	if err := snd.admitTxn(r, opts); err != nil { // txn.go: a transaction that has ended sends nothing
		snd.roomLocked()
		snd.mu.Unlock()
		snd.recycle(r)
		return Pending{}, err
	}
	snd.queue = append(snd.queue, r)
	stalled := snd.stalled
	snd.mu.Unlock()
	switch {
	case stalled:
	case now || !snd.flying.Load():
		snd.kickNow() // no lock held
	default:
		snd.kick()
	}
	return p, nil
}

var errEncoded = errors.New("client: Send and SendAsync take a message or SendOptions.Encoded, one of them")

// reserve takes room for one message unsent, waiting within ctx while
// the sender holds maxUnsent; snd.mu is held, and released while it
// waits.
func (snd *Sender) reserve(ctx context.Context) error {
	for {
		if snd.err != nil {
			return snd.err
		}
		if snd.reserved+len(snd.queue)+snd.held < maxUnsent {
			snd.reserved++
			snd.roomLocked() // room for another waiter too
			return nil
		}
		snd.waiters++
		snd.mu.Unlock()
		var err error
		select {
		case <-snd.room:
		case <-snd.done:
		case <-ctx.Done():
			err = ctxErr(ctx)
		}
		snd.mu.Lock()
		snd.waiters--
		if err != nil {
			snd.roomLocked() // a wake-up it took may be another's
			return err
		}
	}
}

// unreserve gives back a reservation that queued nothing.
func (snd *Sender) unreserve() {
	snd.mu.Lock()
	snd.reserved--
	snd.roomLocked()
	snd.mu.Unlock()
}

// roomLocked wakes a caller waiting in reserve when there is room; with
// snd.mu held.
func (snd *Sender) roomLocked() {
	if snd.waiters > 0 && snd.reserved+len(snd.queue)+snd.held < maxUnsent {
		select {
		case snd.room <- struct{}{}:
		default:
		}
	}
}

func (snd *Sender) recycle(r *sendReq) {
	r.untxn() // txn.go: an abandoned send is no work of its transaction
	r.gen.Add(1)
	r.err = nil
	snd.mu.Lock()
	snd.free = append(snd.free, r)
	snd.mu.Unlock()
}

// run is the Waker's function: SendAsync kicks it.
func (snd *Sender) run(ec *engine.Conn) {
	snd.runs.Add(1)
	if ec.Closed() {
		// A lost connection's Driver runs what was queued on it as it
		// ends; the link may be on the next connection by now, whose
		// goroutine alone touches it (attachOn queues a run there).
		return
	}
	if len(snd.inflight) > 0 {
		// Messages are on their way, so others are likely being
		// sent at once (goroutines each in Send, woken by the
		// outcomes that just came): let those that can run queue
		// theirs first, so that they go out together, in one
		// write, rather than one by one as each wakes this. A
		// lone Send, with nothing in flight, goes at once.
		runtime.Gosched()
	}
	snd.pump()
}

// flowed: OnFlow or OnWritable.
func (snd *Sender) flowed() { snd.pump() }

// pump sends what is queued while the link has credit, the session window
// and the output room. It runs on the connection's goroutine.
func (snd *Sender) pump() {
	l := snd.l
	if l == nil || !snd.ready {
		return
	}
	snd.mu.Lock()
	snd.backlog = append(snd.backlog, snd.queue...)
	clear(snd.queue)
	snd.queue = snd.queue[:0]
	snd.stalled = false // what SendAsync queues from now on kicks
	snd.mu.Unlock()
	i := 0
	for ; i < len(snd.backlog); i++ {
		r := snd.backlog[i]
		var tag []byte
		if snd.durable {
			if r.res != resNone { // kept at a loss (resume.go)
				if !snd.sendResumed(l, r) {
					goto out
				}
				continue
			}
			if !r.settled {
				if len(snd.inflight) >= snd.maxUnsettled {
					snd.capped = true // disposed resumes
					goto out
				}
				if r.txn == nil { // a transaction's work is not resumed
					tag = snd.tagOf(r)
				}
			}
		}
		if !r.state.CompareAndSwap(reqQueued, reqSending) {
			snd.recycle(r) // abandoned
			continue
		}
		id, withdrawn, err := sendOne(l, r, tag) // txn.go: in its transaction, if any
		if withdrawn {
			snd.complete(r, err)
			continue
		}
		switch {
		case err == nil:
		case errors.Is(err, engine.ErrTryLater):
			// OnFlow (credit, the window reopened, the busy delivery
			// sent) or OnWritable resumes.
			r.state.Store(reqQueued)
			goto out
		default:
			r.state.Store(reqSent)
			snd.complete(r, sendErr(l, err))
			continue
		}
		r.state.Store(reqSent)
		if r.settled {
			snd.complete(r, nil)
		} else {
			snd.inflight[id] = r
		}
	}
out:
	n := copy(snd.backlog, snd.backlog[i:])
	clear(snd.backlog[n:])
	snd.backlog = snd.backlog[:n]
	snd.flying.Store(len(snd.inflight) > 0)
	snd.mu.Lock()
	snd.held = n
	snd.stalled = n > 0
	snd.roomLocked()
	snd.mu.Unlock()
}

// sendErr is Send's error for an engine error that no waiting mends.
func sendErr(l *engine.Link, err error) error {
	switch err {
	case engine.ErrMessageSize:
		return ErrMessageSize
	case engine.ErrState:
		if e := l.Err(); e != nil {
			return fromEngine(e, ScopeLink)
		}
		return ErrClosed
	}
	return errors.New("client: " + err.Error())
}

// complete gives r its outcome: the waiting caller wakes, or, if it gave
// up, r is recycled here. It runs on the connection's goroutine.
func (snd *Sender) complete(r *sendReq, err error) {
	r.untxn() // txn.go: no longer work to write in its transaction
	r.err = err
	for {
		st := r.state.Load()
		if st == reqAbandoned {
			snd.recycle(r)
			return
		}
		if r.state.CompareAndSwap(st, reqDone) {
			r.done <- struct{}{}
			return
		}
	}
}

// disposed handles the peer's disposition of a delivery: a terminal
// outcome, or settlement, completes it.
func (snd *Sender) disposed(d engine.DeliveryUpdate) {
	r := snd.inflight[d.ID]
	if r == nil {
		return
	}
	if !d.Settled && !d.State.Type.Terminal() {
		return // received, or a state of no outcome yet
	}
	delete(snd.inflight, d.ID)
	if len(snd.inflight) == 0 {
		snd.flying.Store(false)
	}
	snd.complete(r, outcome(&d.State))
	if snd.capped {
		snd.capped = false
		snd.pump()
	}
}

// ended runs on the connection's goroutine when the link has ended:
// everything queued or in flight completes with err.
func (snd *Sender) ended(err error) {
	snd.mu.Lock()
	err = snd.setErrLocked(err)
	snd.backlog = append(snd.backlog, snd.queue...)
	clear(snd.queue)
	snd.queue = snd.queue[:0]
	snd.held, snd.stalled = 0, false
	snd.mu.Unlock()
	snd.flying.Store(false)
	for _, r := range snd.backlog {
		snd.complete(r, err)
	}
	clear(snd.backlog)
	snd.backlog = snd.backlog[:0]
	for id, r := range snd.inflight {
		delete(snd.inflight, id)
		snd.complete(r, err)
	}
	for _, r := range snd.resume {
		snd.complete(r, err)
	}
	snd.resume = nil
	snd.endLink(err)
}

// Close detaches the link (closing it) and waits for the peer's detach
// within ctx. Messages still queued or awaiting their outcome complete
// with ErrClosed. It returns nil after a clean detach, else the link's
// error.
func (snd *Sender) Close(ctx context.Context) error { return snd.close(ctx) }
