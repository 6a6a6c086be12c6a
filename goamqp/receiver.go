package amqp

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/client"
)

// Receiver receives messages on a single AMQP link.
type Receiver struct {
	r      *client.Receiver
	sess   *Session
	name   string
	manual bool // Credit -1: IssueCredit and DrainCredit are the caller's
}

// LinkName returns associated link name or an empty string if
// link is not defined.
func (r *Receiver) LinkName() string { return r.name }

// Address returns the link's address.
func (r *Receiver) Address() string { return r.r.Address() }

// LinkSourceFilterValue retrieves the specified link source filter value or nil if it doesn't exist.
func (r *Receiver) LinkSourceFilterValue(name string) any { return r.r.LinkSourceFilterValue(name) }

// Properties returns the peer's link properties.
// Returns nil if the peer didn't send any properties.
func (r *Receiver) Properties() map[string]any { return r.r.Properties() }

// IssueCredit adds credits to be requested in the next flow request.
// Attempting to issue more credit than the receiver's max credit as
// specified in ReceiverOptions.MaxCredit will result in an error.
func (r *Receiver) IssueCredit(credit uint32) error {
	if !r.manual {
		return errors.New("issueCredit can only be used with receiver links using manual credit management")
	}
	return r.sess.linkErr(r.r.IssueCredit(credit))
}

// DrainCredit sets the drain flag on the next outbound FLOW frame and blocks until
// the corresponding FLOW frame is received. While a drain is in progress, messages
// can continue to arrive. After a drain completes, the Receiver will have
// zero active credits. To begin receiving again, call IssueCredit() to add active credits
// to your Receiver.
//
// You may only have a single Drain operation active, at a time.
//
// If the context passed to DrainCredit expires or is cancelled then the receiver's
// issued credits should be considered ambiguous.
//
// Returns nil if the drain has completed, error otherwise.
//
// NOTE: The behavior of drain is optional, as per the AMQP spec. Check with your individual
// broker's documentation for implementation details.
func (r *Receiver) DrainCredit(ctx context.Context, _ *DrainCreditOptions) error {
	if !r.manual {
		return errors.New("drain can only be used with receiver links using manual credit management")
	}
	return r.sess.linkErr(r.r.DrainCredit(ctx))
}

// Receive returns the next message from the sender.
// Blocks until a message is received, ctx completes, or an error occurs.
//
// Once a message is received, and if the sender is configured in any mode other
// than SenderSettleModeSettled, you *must* take an action on the message by calling
// one of the following: AcceptMessage, RejectMessage, ReleaseMessage, ModifyMessage.
func (r *Receiver) Receive(ctx context.Context, opts *ReceiveOptions) (*Message, error) {
	return r.receive(ctx)
}

// deliveries holds client Deliveries for reuse: ReceiveInto fills one,
// the Message keeps it until it is settled (a settled delivery's at
// once), and then it comes back here. Not for the Message's bytes: those
// are a copy of the Message's own.
var deliveries = sync.Pool{New: func() any { return new(client.Delivery) }}

// receive takes the next delivery, waiting within ctx (Receive), or
// only one already queued with an ended ctx (Prefetched).
func (r *Receiver) receive(ctx context.Context) (*Message, error) {
	d := deliveries.Get().(*client.Delivery)
	if err := r.r.ReceiveInto(ctx, d, undecoded); err != nil {
		deliveries.Put(d)
		return nil, r.sess.linkErr(err)
	}
	return r.message(d)
}

// undecoded has client hand over a delivery's bytes as they came: this
// package's decoder reads them (client would check them against the
// spec's types, where go-amqp is more lenient: a message-id of another
// type than ulong, uuid, binary or string, for one).
var undecoded = &client.ReceiveOptions{Undecoded: true}

// message makes the Message of a delivery, settled with d's methods.
//
// A message of one data section alone has its binary copied, so that
// its bytes are that binary's length (NewMessage's 1 KiB body is a
// 1 KiB allocation) and d's buffer is reused. Any other message keeps
// the bytes it came in (TakePayload: no copy), and its binaries and
// strings are views into them.
func (r *Receiver) message(d *client.Delivery) (*Message, error) {
	payload := d.Payload()
	body := dataOnly(payload)
	if len(body) == 0 {
		payload = d.TakePayload()
	}
	m, err := decodeBody(payload, body, d.DeliveryTag, d.MessageFormat)
	if err != nil || d.Settled {
		deliveries.Put(d)
		return m, err
	}
	m.rcv, m.dlv = r, d
	return m, nil
}

// decodeReceived decodes a received message, encoded as payload, with
// its delivery tag and message format.
//
// A message of one data section alone (NewMessage's) is not decoded:
// its bytes are a copy of the section's binary, and payload is not kept.
// Any other message keeps payload as its bytes, not copied: its binaries
// and strings are views into payload, which the caller hands over. The
// Message, its header and properties, its delivery tag and what they
// point to are one allocation (a smaller one when the body comes
// first).
func decodeReceived(payload, tag []byte, format uint32) (*Message, error) {
	return decodeBody(payload, dataOnly(payload), tag, format)
}

// decodeBody is decodeReceived with dataOnly(payload), which the caller
// has found, as body.
func decodeBody(payload, body, tag []byte, format uint32) (*Message, error) {
	var rm *receivedMsg
	var st *received
	if bodyFirst(payload) {
		rm = new(receivedMsg) // a third of received's size
	} else {
		st = new(received)
		rm = &st.receivedMsg
	}
	m := &rm.m
	m.Format = format
	m.DeliveryTag = append(rm.tag[:0:len(rm.tag)], tag...)
	m.DeliveryTag = m.DeliveryTag[:len(m.DeliveryTag):len(m.DeliveryTag)]
	if len(body) > 0 {
		buf := make([]byte, len(body))
		copy(buf, body)
		rm.data[0] = buf
		m.Data = rm.data[:]
		return m, nil
	}
	dec := getDecoder()
	defer dec.free()
	dec.st, dec.data, dec.views = st, &rm.data, true
	if err := m.unmarshal(dec, payload); err != nil {
		return nil, err
	}
	return m, nil
}

// dataOnly returns the binary of a message that is one data section
// alone, as encoded in data (with a smallulong descriptor), or nil.
func dataOnly(data []byte) []byte {
	if len(data) < 5 || data[0] != byte(amqpsax.CodeDescribed) || data[1] != byte(amqpsax.CodeSmallUlong) || data[2] != codeData {
		return nil
	}
	switch amqpsax.Code(data[3]) {
	case amqpsax.CodeVbin8:
		if int(data[4]) == len(data)-5 {
			return data[5:]
		}
	case amqpsax.CodeVbin32:
		if len(data) >= 8 && uint64(binary.BigEndian.Uint32(data[4:8])) == uint64(len(data)-8) {
			return data[8:]
		}
	}
	return nil
}

// Prefetched returns the next message that is stored in the Receiver's
// prefetch cache. It does NOT wait for the remote sender to send messages
// and returns immediately if the prefetch cache is empty. To receive from the
// prefetch and wait for messages from the remote Sender use `Receive`.
//
// Once a message is received, and if the sender is configured in any mode other
// than SenderSettleModeSettled, you *must* take an action on the message by calling
// one of the following: AcceptMessage, RejectMessage, ReleaseMessage, ModifyMessage.
func (r *Receiver) Prefetched() *Message {
	// client's ReceiveInto takes a queued delivery before it looks at
	// ctx.
	m, err := r.receive(ended)
	if err != nil {
		return nil
	}
	return m
}

// ended is a context that has ended.
var ended = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// settle settles msg's delivery with do, once: a settled message (or
// one this Receiver did not receive) needs nothing.
func (r *Receiver) settle(msg *Message, do func(*client.Delivery) error) error {
	if msg == nil || msg.dlv == nil {
		return nil
	}
	if msg.rcv != r {
		return errors.New("amqp: the message was received on another Receiver")
	}
	d := msg.dlv
	msg.rcv, msg.dlv = nil, nil
	err := do(d)
	deliveries.Put(d) // client keeps nothing of d once do returns
	return r.sess.linkErr(err)
}

// AcceptMessage notifies the server that the message has been accepted and does not require redelivery.
//   - ctx controls waiting for the peer to acknowledge the disposition
//   - msg is the message to accept
//
// If the context's deadline expires or is cancelled before the operation
// completes, the message's disposition is in an unknown state.
func (r *Receiver) AcceptMessage(ctx context.Context, msg *Message) error {
	return r.settle(msg, func(d *client.Delivery) error { return d.Accept(ctx) })
}

// RejectMessage notifies the server that the message is invalid.
//   - ctx controls waiting for the peer to acknowledge the disposition
//   - msg is the message to reject
//   - e is an optional rejection error
//
// If the context's deadline expires or is cancelled before the operation
// completes, the message's disposition is in an unknown state.
func (r *Receiver) RejectMessage(ctx context.Context, msg *Message, e *Error) error {
	var ce *client.Error
	if e != nil {
		ce = &client.Error{Condition: string(e.Condition), Description: e.Description, Info: e.Info}
	}
	return r.settle(msg, func(d *client.Delivery) error { return d.Reject(ctx, ce) })
}

// ReleaseMessage releases the message back to the server. The message may be redelivered to this or another consumer.
//   - ctx controls waiting for the peer to acknowledge the disposition
//   - msg is the message to release
//
// If the context's deadline expires or is cancelled before the operation
// completes, the message's disposition is in an unknown state.
func (r *Receiver) ReleaseMessage(ctx context.Context, msg *Message) error {
	return r.settle(msg, func(d *client.Delivery) error { return d.Release(ctx) })
}

// ModifyMessage notifies the server that the message was not acted upon and should be modifed.
//   - ctx controls waiting for the peer to acknowledge the disposition
//   - msg is the message to modify
//   - options contains the optional settings to modify
//
// If the context's deadline expires or is cancelled before the operation
// completes, the message's disposition is in an unknown state.
func (r *Receiver) ModifyMessage(ctx context.Context, msg *Message, options *ModifyMessageOptions) error {
	var o client.ModifyOptions
	if options != nil {
		o = client.ModifyOptions{DeliveryFailed: options.DeliveryFailed, UndeliverableHere: options.UndeliverableHere}
		for k, v := range options.Annotations {
			// Annotations' keys are symbols (a string is written as
			// one); client takes those. An int key is dropped.
			var key string
			switch k := k.(type) {
			case string:
				key = k
			case Symbol:
				key = string(k)
			default:
				continue
			}
			if o.Annotations == nil {
				o.Annotations = make(map[string]any, len(options.Annotations))
			}
			o.Annotations[key] = v
		}
	}
	return r.settle(msg, func(d *client.Delivery) error { return d.Modify(ctx, o) })
}

// Close closes the Receiver and AMQP link.
//   - ctx controls waiting for the peer to acknowledge the close
//
// If the context's deadline expires or is cancelled before the operation
// completes, an error is returned.  However, the operation will continue to
// execute in the background. Subsequent calls will return a *LinkError
// that contains the context's error message.
func (r *Receiver) Close(ctx context.Context) error {
	defer r.sess.detached(r.name, true)
	return r.sess.closeLinkErr(r.r.Close(ctx))
}
