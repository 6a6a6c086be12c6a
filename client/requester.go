package client

import (
	"context"
	"strconv"
	"sync"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/message"
)

// RequesterOptions sets up a Requester; nil or the zero value works: a
// sender to the node and a receiver from it whose target address is the
// reply address (the way Azure's $cbs and $management take requests).
type RequesterOptions struct {
	// Name is the name of both links (RabbitMQ's /management wants one
	// name for its pair); empty gives each a unique one.
	Name string
	// Paired marks both links as a pair (attach properties
	// {paired: true}), as RabbitMQ 4's /management requires, and gives
	// the sender's source the receiver's target address (the reply
	// address), as RabbitMQ checks.
	Paired bool
	// Settled sends requests settled (RabbitMQ's /management takes
	// them so); else each request's outcome is awaited before its
	// reply.
	Settled bool
	// ReplyAddress is the receiver's target address, and the reply-to
	// of requests unless ReplyTo is set; empty gives a unique one.
	ReplyAddress string
	// ReplyTo, when set, is the reply-to of requests instead of the
	// reply address (RabbitMQ's /management: "$me").
	ReplyTo string
	// DynamicReply takes replies on a node the peer makes (a dynamic
	// receiver from a temporary queue): requests' reply-to is its
	// address. The receiver is then not attached to the request
	// address.
	DynamicReply bool
	// Credit is the reply receiver's prefetch (0: 100).
	Credit int32
}

// Requester sends requests to a node and returns the reply to each
// (request/response, as AMQP management, Azure's $cbs and
// $management and RabbitMQ 4's /management do it): Request sets a
// fresh message-id and the reply-to, and returns the reply whose
// correlation-id is that message-id. Many requests may be in flight on
// its one pair of links; every method is safe from any goroutine. The
// replies are read by whichever Request is waiting: no goroutine runs
// for a Requester.
type Requester struct {
	snd     *Sender
	rcv     *Receiver
	replyTo []byte
	settled bool

	prefix string
	mu     sync.Mutex
	seq    uint64
	wait   map[string]chan *Delivery // by message-id
	token  chan struct{}             // cap 1: held by the Request reading replies
}

// NewRequester attaches a sender to the node at address and a receiver
// for its replies, and returns once the peer has answered both; ctx
// bounds it. opts may be nil.
func (s *Session) NewRequester(ctx context.Context, address string, opts *RequesterOptions) (*Requester, error) {
	var o RequesterOptions
	if opts != nil {
		o = *opts
	}
	var props map[string]any
	if o.Paired {
		props = map[string]any{"paired": true}
	}
	if o.Credit == 0 {
		o.Credit = 100
	}
	ro := &ReceiverOptions{Name: o.Name, Properties: props, Credit: o.Credit}
	source := address
	if o.DynamicReply {
		source, ro.DynamicAddress = "", true
	} else {
		ro.TargetAddress = o.ReplyAddress
		if ro.TargetAddress == "" {
			ro.TargetAddress = linkName(s.c, "reply")
		}
	}
	so := &SenderOptions{Name: o.Name, Properties: props}
	if o.Paired {
		// The two ends of a pair on this side name one address (the
		// sender's source, the receiver's target): RabbitMQ refuses the
		// second attach of a pair whose addresses differ.
		so.SourceAddress = ro.TargetAddress
	}
	if o.Settled {
		so.SettlementMode = SenderSettleModeSettled
	}
	snd, err := s.NewSender(ctx, address, so)
	if err != nil {
		return nil, err
	}
	rcv, err := s.NewReceiver(ctx, source, ro)
	if err != nil {
		snd.Close(ctx)
		return nil, err
	}
	r := &Requester{snd: snd, rcv: rcv, settled: o.Settled, prefix: linkName(s.c, "request") + "-",
		wait: map[string]chan *Delivery{}, token: make(chan struct{}, 1)}
	switch {
	case o.ReplyTo != "":
		r.replyTo = []byte(o.ReplyTo)
	case o.DynamicReply:
		r.replyTo = []byte(rcv.Address())
	default:
		r.replyTo = []byte(ro.TargetAddress)
	}
	return r, nil
}

// ReplyTo returns the reply-to Request sets.
func (r *Requester) ReplyTo() string { return string(r.replyTo) }

// Request sends req with a fresh message-id and the Requester's
// reply-to (req itself is not changed: its other properties are sent as
// they are) and returns the reply whose correlation-id is that
// message-id, waiting within ctx. An unsettled request the node does
// not accept returns Send's *OutcomeError; the end of either link, its
// error. When ctx ends first it returns ctx's error, and a reply that
// comes later is accepted and dropped.
//
// The reply is the caller's to keep; it has been accepted. A node's
// status (AMQP management's "statusCode", RabbitMQ's subject "201") is
// the caller's to read.
func (r *Requester) Request(ctx context.Context, req *message.Message) (*message.Message, error) {
	r.mu.Lock()
	r.seq++
	id := r.prefix + strconv.FormatUint(r.seq, 10)
	ch := make(chan *Delivery, 1)
	r.wait[id] = ch
	r.mu.Unlock()
	defer r.forget(id)

	m := *req
	var p message.Properties
	if req.Properties != nil {
		p = *req.Properties
	}
	p.MessageID, p.ReplyTo = message.StringID(id), r.replyTo
	m.Properties = &p
	var err error
	if r.settled {
		err = r.snd.Send(ctx, &m, &SendOptions{Settled: true})
	} else {
		err = r.snd.Send(ctx, &m, nil)
	}
	if err != nil {
		return nil, err
	}
	for {
		select {
		case d := <-ch:
			return &d.Message, nil
		case <-ctx.Done():
			return nil, ctxErr(ctx)
		case r.token <- struct{}{}:
			// This Request reads replies (its own, or another's) until
			// its own has come.
			select {
			case d := <-ch:
				<-r.token
				return &d.Message, nil
			default:
			}
			d, err := r.rcv.Receive(ctx, nil)
			if err == nil {
				r.dispatch(ctx, d)
			}
			<-r.token
			if err != nil {
				return nil, err
			}
		}
	}
}

// dispatch hands a reply to the Request waiting for it, by its
// correlation-id, and accepts it (one nobody waits for is dropped).
func (r *Requester) dispatch(ctx context.Context, d *Delivery) {
	var key string
	if d.Message.Properties != nil {
		if id := d.Message.Properties.CorrelationID; id.Kind == amqpsax.KindString {
			key = string(id.Bytes)
		}
	}
	r.mu.Lock()
	ch := r.wait[key]
	delete(r.wait, key)
	r.mu.Unlock()
	d.Accept(ctx) // an error is the link's end: Receive reports it next
	if ch != nil {
		ch <- d
	}
}

func (r *Requester) forget(id string) {
	r.mu.Lock()
	delete(r.wait, id)
	r.mu.Unlock()
}

// Close detaches both links, waiting within ctx; Requests blocked wake
// with ErrClosed.
func (r *Requester) Close(ctx context.Context) error {
	err := r.snd.Close(ctx)
	if e := r.rcv.Close(ctx); err == nil {
		err = e
	}
	return err
}
