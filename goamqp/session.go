package amqp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/amqpsax/amqpsax/client"
)

// Session is an AMQP session.
//
// A session multiplexes Receivers.
type Session struct {
	s        *client.Session
	conn     *Conn
	maxLinks int         // SessionOptions.MaxLinks, 0 for no bound
	closed   atomic.Bool // Close was called: its links' calls end with a *SessionError

	mu    sync.Mutex
	links map[linkKey]struct{} // the links attached and not closed, by name and role
}

// linkKey is a link's name and role: a name is unique per direction.
type linkKey struct {
	name     string
	receiver bool
}

// attaching reserves a link's name and a handle for it, as go-amqp's
// session does before its attach: a name in use in that direction, or a
// link past MaxLinks, is an error (the latter ends the session, as there).
func (s *Session) attaching(ctx context.Context, name string, receiver bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	k := linkKey{name, receiver}
	if _, ok := s.links[k]; ok {
		s.mu.Unlock()
		return fmt.Errorf("link with name '%v' already exists", name)
	}
	if s.maxLinks > 0 && len(s.links) >= s.maxLinks {
		s.mu.Unlock()
		if err := s.Close(ctx); err != nil {
			return err
		}
		return &SessionError{inner: fmt.Errorf("reached session handle max (%d)", s.maxLinks)}
	}
	if s.links == nil {
		s.links = make(map[linkKey]struct{})
	}
	s.links[k] = struct{}{}
	s.mu.Unlock()
	return nil
}

// detached frees what attaching reserved.
func (s *Session) detached(name string, receiver bool) {
	s.mu.Lock()
	delete(s.links, linkKey{name, receiver})
	s.mu.Unlock()
}

// linkErr is the error of a call on one of s's links: a link that ended
// with s (closed by this end) is a *SessionError, as in go-amqp.
func (s *Session) linkErr(err error) error {
	on := onLink
	if s.closed.Load() {
		on = onSession
	}
	return mapErr(err, on, s.conn.c)
}

// closeLinkErr is a link's Close's error: nil for a clean end.
func (s *Session) closeLinkErr(err error) error {
	if err == nil || errors.Is(err, client.ErrClosed) {
		return nil
	}
	return s.linkErr(err)
}

// Close closes the session.
//   - ctx controls waiting for the peer to acknowledge the session is closed
//
// If the context's deadline expires or is cancelled before the operation
// completes, an error is returned.  However, the operation will continue to
// execute in the background. Subsequent calls will return a *SessionError
// that contains the context's error message.
func (s *Session) Close(ctx context.Context) error {
	s.closed.Store(true)
	err := s.s.Close(ctx)
	if err == nil || errors.Is(err, client.ErrClosed) {
		return nil
	}
	return mapErr(err, onSession, s.conn.c)
}

// Properties returns the peer's session properties.
// Returns nil if the peer didn't send any properties.
//
// Not yet: it returns nil (see the package documentation).
func (s *Session) Properties() map[string]any { return nil }

// linkNames makes the names of links opened without one: unique in the
// process, as a link's name must be between two containers.
var linkNames atomic.Uint64

func linkName(name string) string {
	if name != "" {
		return name
	}
	return fmt.Sprintf("amqpsax-goamqp-%d", linkNames.Add(1))
}

// NewSender opens a new sender link on the session.
//   - ctx controls waiting for the peer to create a sending terminus
//   - target is the name of the peer's receiving terminus
//   - opts contains optional values, pass nil to accept the defaults
//
// If the context's deadline expires or is cancelled before the operation
// completes, an error is returned. If the Sender was successfully
// created, it will be cleaned up in future calls to NewSender.
func (s *Session) NewSender(ctx context.Context, target string, opts *SenderOptions) (*Sender, error) {
	var o SenderOptions
	if opts != nil {
		o = *opts
	}
	co := client.SenderOptions{
		Name:                linkName(o.Name),
		SourceAddress:       o.SourceAddress,
		DynamicAddress:      o.DynamicAddress,
		TargetCapabilities:  o.TargetCapabilities,
		Properties:          o.Properties,
		DesiredCapabilities: o.DesiredCapabilities,
	}
	mode := SenderSettleModeMixed
	if o.SettlementMode != nil {
		mode = *o.SettlementMode
	}
	switch mode {
	case SenderSettleModeMixed:
		co.SettlementMode = client.SenderSettleModeMixed
	case SenderSettleModeUnsettled:
		co.SettlementMode = client.SenderSettleModeUnsettled
	case SenderSettleModeSettled:
		co.SettlementMode = client.SenderSettleModeSettled
	default:
		return nil, fmt.Errorf("invalid SenderSettlementMode %d", uint8(mode))
	}
	if o.RequestedReceiverSettleMode != nil {
		switch *o.RequestedReceiverSettleMode {
		case ReceiverSettleModeFirst:
		case ReceiverSettleModeSecond:
			co.RequestedReceiverSettleMode = client.ReceiverSettleModeSecond
		default:
			return nil, fmt.Errorf("invalid RequestedReceiverSettleMode %d", uint8(*o.RequestedReceiverSettleMode))
		}
	}
	if err := s.attaching(ctx, co.Name, false); err != nil {
		return nil, err
	}
	snd, err := s.s.NewSender(ctx, target, &co)
	if err != nil {
		s.detached(co.Name, false)
		return nil, s.linkErr(err)
	}
	return &Sender{s: snd, sess: s, name: co.Name, mode: mode}, nil
}

// NewReceiver opens a new receiver link on the session.
//   - ctx controls waiting for the peer to create a sending terminus
//   - source is the name of the peer's sending terminus
//   - opts contains optional values, pass nil to accept the defaults
//
// If the context's deadline expires or is cancelled before the operation
// completes, an error is returned. If the Receiver was successfully
// created, it will be cleaned up in future calls to NewReceiver.
func (s *Session) NewReceiver(ctx context.Context, source string, opts *ReceiverOptions) (*Receiver, error) {
	var o ReceiverOptions
	if opts != nil {
		o = *opts
	}
	if o.Credit < -1 {
		return nil, fmt.Errorf("invalid Credit %d", o.Credit)
	}
	co := client.ReceiverOptions{
		Name:                linkName(o.Name),
		Credit:              o.Credit,
		TargetAddress:       o.TargetAddress,
		DynamicAddress:      o.DynamicAddress,
		SourceCapabilities:  o.SourceCapabilities,
		SourceExpiryTimeout: o.SourceExpiryTimeout,
		Properties:          o.Properties,
		DesiredCapabilities: o.DesiredCapabilities,
		// go-amqp tops its credit up as deliveries are settled, with
		// transfers still on their way; so does this package.
		EagerCredit: true,
	}
	switch o.SourceExpiryPolicy {
	case "", ExpiryPolicySessionEnd:
	case ExpiryPolicyLinkDetach:
		co.SourceExpiryPolicy = client.ExpiryPolicyLinkDetach
	case ExpiryPolicyConnectionClose:
		co.SourceExpiryPolicy = client.ExpiryPolicyConnectionClose
	case ExpiryPolicyNever:
		co.SourceExpiryPolicy = client.ExpiryPolicyNever
	default:
		return nil, validateExpiryPolicy(o.SourceExpiryPolicy)
	}
	if len(o.Filters) > 0 {
		f := filter{}
		for _, lf := range o.Filters {
			lf(f)
		}
		for name, d := range f {
			var code uint64
			if n, ok := d.Descriptor.(uint64); ok {
				code = n
			}
			co.Filters = append(co.Filters, client.NewLinkFilter(string(name), code, d.Value))
		}
	}
	if o.RequestedSenderSettleMode != nil {
		switch *o.RequestedSenderSettleMode {
		case SenderSettleModeMixed:
			co.RequestedSenderSettleMode = client.SenderSettleModeMixed
		case SenderSettleModeUnsettled:
			co.RequestedSenderSettleMode = client.SenderSettleModeUnsettled
		case SenderSettleModeSettled:
			co.RequestedSenderSettleMode = client.SenderSettleModeSettled
		default:
			return nil, fmt.Errorf("invalid RequestedSenderSettleMode %d", uint8(*o.RequestedSenderSettleMode))
		}
	}
	if o.SettlementMode != nil {
		switch *o.SettlementMode {
		case ReceiverSettleModeFirst:
		case ReceiverSettleModeSecond:
			co.SettlementMode = client.ReceiverSettleModeSecond
		default:
			return nil, fmt.Errorf("invalid SettlementMode %d", uint8(*o.SettlementMode))
		}
	}
	if err := s.attaching(ctx, co.Name, true); err != nil {
		return nil, err
	}
	rcv, err := s.s.NewReceiver(ctx, source, &co)
	if err != nil {
		s.detached(co.Name, true)
		return nil, s.linkErr(err)
	}
	return &Receiver{r: rcv, sess: s, name: co.Name, manual: o.Credit == -1}, nil
}
