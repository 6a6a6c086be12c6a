package amqp

import (
	"context"
	"errors"
	"sync"

	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/message"
)

// Sender sends messages on a single AMQP link.
type Sender struct {
	s    *client.Sender
	sess *Session
	name string
	mode SenderSettleMode
}

// LinkName is the name of the link used for this Sender.
func (s *Sender) LinkName() string { return s.name }

// MaxMessageSize is the maximum size of a single message.
func (s *Sender) MaxMessageSize() uint64 { return s.s.MaxMessageSize() }

// Properties returns the peer's link properties.
// Returns nil if the peer didn't send any properties.
func (s *Sender) Properties() map[string]any { return s.s.Properties() }

// Address returns the link's address.
func (s *Sender) Address() string { return s.s.Address() }

// Close closes the Sender and AMQP link.
//   - ctx controls waiting for the peer to acknowledge the close
//
// If the context's deadline expires or is cancelled before the operation
// completes, an error is returned.  However, the operation will continue to
// execute in the background. Subsequent calls will return a *LinkError
// that contains the context's error message.
func (s *Sender) Close(ctx context.Context) error {
	defer s.sess.detached(s.name, false)
	return s.sess.closeLinkErr(s.s.Close(ctx))
}

// outgoing is a message being sent: its go-amqp encoding, handed to
// client as SendOptions.Encoded, or, for data sections alone, the
// message.Message client encodes. Pooled: client copies or encodes the
// message before Send or SendAsync returns, so it is free again then.
type outgoing struct {
	buf []byte
	m   message.Message
}

var outgoings = sync.Pool{New: func() any { return new(outgoing) }}

// prepare readies msg for client: it returns the message.Message to send,
// or nil with so.Encoded set to msg's bytes.
func (o *outgoing) prepare(msg *Message, so *client.SendOptions) (*message.Message, error) {
	if msg == nil {
		return nil, errors.New("amqp: nil message")
	}
	if msg.dataOnly() {
		// Data sections alone (NewMessage's): client writes them as
		// go-amqp does, from the caller's slices, with no copy here.
		for _, p := range msg.Data {
			if uint64(len(p)) > maxVariableBytes {
				return nil, errTooLong
			}
		}
		o.m.Body = message.Body{Kind: message.BodyData, Data: msg.Data}
		return &o.m, nil
	}
	if err := msg.sendable(); err != nil {
		return nil, err
	}
	var err error
	if o.buf, err = msg.appendTo(o.buf[:0]); err != nil {
		return nil, err
	}
	so.Encoded = o.buf
	if so.Encoded == nil {
		so.Encoded = []byte{} // an empty message: Encoded set all the same
	}
	return nil, nil
}

// dataOnly reports whether m has data sections and no other section.
func (m *Message) dataOnly() bool {
	return len(m.Data) > 0 && m.Header == nil && m.DeliveryAnnotations == nil && m.Annotations == nil &&
		m.Properties == nil && m.ApplicationProperties == nil && m.Value == nil && m.Sequence == nil && m.Footer == nil
}

var (
	errBodyKinds = errors.New("amqp: a message body is Data, Value or Sequence, not more than one of them")
	errIDType    = errors.New("amqp: a message-id or correlation-id is a uint64, UUID, []byte or string")
)

// sendable refuses what is not a message by the spec, where go-amqp
// sends it as it is: a body of more than one kind, or a message-id or
// correlation-id that is not written as a ulong, uuid, binary or string.
func (m *Message) sendable() error {
	kinds := 0
	if len(m.Data) > 0 {
		kinds++
	}
	if m.Value != nil {
		kinds++
	}
	if len(m.Sequence) > 0 {
		kinds++
	}
	if kinds > 1 {
		return errBodyKinds
	}
	if p := m.Properties; p != nil && (!idType(p.MessageID) || !idType(p.CorrelationID)) {
		return errIDType
	}
	return nil
}

// idType reports whether appendValue writes v as a ulong, uuid, binary
// or string (or leaves it out: nil).
func idType(v any) bool {
	switch v.(type) {
	case nil, uint64, *uint64, uint, *uint, UUID, *UUID, []byte, *[]byte, string, *string:
		return true
	}
	return false
}

func (o *outgoing) free() {
	o.m.Reset()
	if cap(o.buf) <= 64<<10 {
		outgoings.Put(o)
	}
}

var errSettledUnsettled = errors.New("can't send message as settled when sender settlement mode is unsettled")

// Send sends a Message.
//
// Blocks until the message is sent or an error occurs. If the peer is
// configured for receiver settlement mode second, the call also blocks
// until the peer confirms message settlement.
//
//   - ctx controls waiting for the message to be sent and possibly confirmed
//   - msg is the message to send
//   - opts contains optional values, pass nil to accept the defaults
//
// If the context's deadline expires or is cancelled before the operation
// completes, the message is in an unknown state of transmission.
//
// If the peer rejects the message, an error is returned. As in go-amqp,
// the released and modified outcomes are not errors: Send returns nil
// (client.Sender.Send returns an error for them; use SendWithReceipt to
// see them here).
//
// Send is safe for concurrent use. Since only a single message can be
// sent on a link at a time, this is most useful when settlement confirmation
// has been requested (receiver settle mode is second). In this case,
// additional messages can be sent while the current goroutine is waiting
// for the confirmation.
func (s *Sender) Send(ctx context.Context, msg *Message, opts *SendOptions) error {
	settled := opts != nil && opts.Settled
	if settled && s.mode == SenderSettleModeUnsettled {
		return errSettledUnsettled
	}
	o := outgoings.Get().(*outgoing)
	defer o.free()
	so := &client.SendOptions{Settled: settled}
	m, err := o.prepare(msg, so)
	if err != nil {
		return err
	}
	so.MessageFormat = msg.Format
	return sendErr(s.s.Send(ctx, m, so), s.sess)
}

// SendWithReceipt sends a Message and returns a [SendReceipt] which is used
// to defer confirmation of settlement until [SendReceipt.Wait] is called.
// The [SendReceipt] can also be used to obtain the [DeliveryState] of the sent message.
// Call this method in order to rapidly send messages on a link without waiting
// for confirmation of settlement.
//
//   - ctx controls waiting for the message to be sent
//   - msg is the message to send
//   - opts contains optional values, pass nil to accept the defaults
//
// If the context's deadline expires or is cancelled before the operation
// completes, the message is in an unknown state of transmission.
//
// If the Sender has been configured with [SenderSettleModeSettled] an error is returned.
//
// SendWithReceipt is safe for concurrent use.
func (s *Sender) SendWithReceipt(ctx context.Context, msg *Message, opts *SendWithReceiptOptions) (SendReceipt, error) {
	if s.mode == SenderSettleModeSettled {
		return SendReceipt{}, errors.New("can't send with receipt on a sender configured for settled")
	}
	o := outgoings.Get().(*outgoing)
	defer o.free()
	so := &client.SendOptions{}
	m, err := o.prepare(msg, so)
	if err != nil {
		return SendReceipt{}, err
	}
	so.MessageFormat = msg.Format
	p, err := s.s.SendAsync(ctx, m, so)
	if err != nil {
		return SendReceipt{}, s.sess.linkErr(err)
	}
	return SendReceipt{r: &receipt{p: p, sess: s.sess}}, nil
}

// SendReceipt is returned by [Sender.SendWithReceipt] and is used
// to defer the confirmation of settlement of a [Message].
type SendReceipt struct {
	r *receipt
}

type receipt struct {
	p    client.Pending
	sess *Session

	mu    sync.Mutex
	state DeliveryState
}

// DeliveryTag returns the message's delivery tag that's
// associated with this receipt.
//
// Can be used to correlate a message with its receipt.
//
// Not yet: it returns nil (see the package documentation).
func (s SendReceipt) DeliveryTag() []byte { return nil }

// Wait blocks until the peer confirms message settlement or an error occurs.
// If the peer is configured for receiver settlement mode second, the call also
// blocks until the confirmation of settlement is sent.
//
// Upon completion, one of the possible [DeliveryState]
// concrete types is returned, else nil and an error are returned.
//
// If the context's deadline expires or is cancelled before the operation
// completes, the message is in an unknown state of settlement.
func (s *SendReceipt) Wait(ctx context.Context) (DeliveryState, error) {
	r := s.r
	if r == nil {
		return nil, errors.New("amqp: Wait on a SendReceipt that SendWithReceipt did not return")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != nil {
		return r.state, nil
	}
	err := r.p.Wait(ctx)
	var oe *client.OutcomeError
	switch {
	case err == nil:
		r.state = &StateAccepted{}
	case errors.As(err, &oe):
		switch {
		case errors.Is(oe, client.ErrRejected):
			st := &StateRejected{}
			if oe.Err != nil {
				st.Error = &Error{Condition: ErrCond(oe.Err.Condition), Description: oe.Err.Description}
			}
			r.state = st
		case errors.Is(oe, client.ErrReleased):
			r.state = &StateReleased{}
		default:
			r.state = &StateModified{DeliveryFailed: oe.DeliveryFailed, UndeliverableHere: oe.UndeliverableHere}
		}
	default:
		return nil, r.sess.linkErr(err)
	}
	return r.state, nil
}
