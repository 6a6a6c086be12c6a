package frame

import "github.com/amqpsax/amqpsax"

// The types below hold decoded performatives and the composite values in
// them. Their fields follow the spec's field lists in order, named after
// them (delivery-id is DeliveryID). Strings, symbols and binaries are
// views into the body given to the Parse function ([]byte, nil when
// absent); maps are Map and symbol lists Symbols, both raw encodings.
//
// A field that may be absent and whose zero means something (a handle, a
// delivery-id, a link-credit) or differs from the spec's default (a
// channel-max of 0 is not 65535) is an [Opt]: absent unless made with
// [Some]. The other fields are plain: mandatory ones, always written;
// booleans and fields whose zero is the spec's default, written when they
// differ from it. So a struct literal sends exactly what it says.
//
// Each embeds [Fields], the record of what a Parse function saw (which
// fields were on the wire, how many list elements, list8 or list32), so
// that a parsed value is written back to the same bytes.

// Open is the open performative (part 2 §2.7.1): the first frame of a
// connection in each direction.
type Open struct {
	Fields
	ContainerID  []byte      // string, mandatory
	Hostname     []byte      // string
	MaxFrameSize Opt[uint32] // absent: 4294967295, no limit but the spec's
	// ChannelMax is the highest channel number the sender may use; absent:
	// SpecChannelMax (65535). Some(0) allows channel 0 only.
	ChannelMax Opt[uint16]
	// IdleTimeOut is in milliseconds; absent: none.
	IdleTimeOut         Opt[uint32]
	OutgoingLocales     Symbols
	IncomingLocales     Symbols
	OfferedCapabilities Symbols
	DesiredCapabilities Symbols
	Properties          Map
}

// Begin is the begin performative (part 2 §2.7.2): a session starts.
type Begin struct {
	Fields
	// RemoteChannel is the channel of the peer's begin this one answers;
	// absent in the begin that starts a session.
	RemoteChannel  Opt[uint16]
	NextOutgoingID uint32 // mandatory
	IncomingWindow uint32 // mandatory
	OutgoingWindow uint32 // mandatory
	// HandleMax is the highest handle the sender may use; absent:
	// SpecHandleMax (4294967295).
	HandleMax           Opt[uint32]
	OfferedCapabilities Symbols
	DesiredCapabilities Symbols
	Properties          Map
}

// Attach is the attach performative (part 2 §2.7.3): a link end attaches.
type Attach struct {
	Fields
	Name   []byte // string, mandatory
	Handle uint32 // mandatory
	Role   Role   // mandatory
	// SndSettleMode is absent: SpecSndSettleMode (mixed).
	SndSettleMode Opt[SenderSettleMode]
	RcvSettleMode ReceiverSettleMode // default first (the zero value)
	// Source and Target are absent when null: a link end refusing an
	// attach sends null for one of them. An attach that answers one
	// echoes what it accepts: Source: frame.Some(src).
	Source               Opt[Source]
	Target               Opt[Target]
	Unsettled            Map
	IncompleteUnsettled  bool
	InitialDeliveryCount Opt[uint32] // mandatory from a sender, absent from a receiver
	// MaxMessageSize is the largest message the end accepts; absent or 0
	// means no limit.
	MaxMessageSize      Opt[uint64]
	OfferedCapabilities Symbols
	DesiredCapabilities Symbols
	Properties          Map
}

// Flow is the flow performative (part 2 §2.7.4): session and link flow
// state. Handle and the link fields are absent in a session-only flow;
// NextIncomingID is absent only before the sender has seen the peer's
// begin.
type Flow struct {
	Fields
	NextIncomingID Opt[uint32]
	IncomingWindow uint32 // mandatory
	NextOutgoingID uint32 // mandatory
	OutgoingWindow uint32 // mandatory
	Handle         Opt[uint32]
	DeliveryCount  Opt[uint32]
	LinkCredit     Opt[uint32]
	Available      Opt[uint32]
	Drain          bool
	Echo           bool
	Properties     Map
}

// Transfer is the transfer performative (part 2 §2.7.5): a frame of a
// delivery. DeliveryID, DeliveryTag and MessageFormat may be absent on the
// frames that continue a delivery (More was set on the one before).
type Transfer struct {
	Fields
	Handle uint32 // mandatory
	// DeliveryID and MessageFormat are required on the first transfer of
	// a delivery (Some(0) is delivery 0, message format 0, the standard
	// one) and may be absent on the ones that continue it.
	DeliveryID    Opt[uint32]
	DeliveryTag   []byte // binary, at most 32 bytes by the spec (not enforced)
	MessageFormat Opt[uint32]
	// Settled has no default: absent on the first frame of a delivery it
	// means false; on a later frame, unchanged.
	Settled       bool
	More          bool
	RcvSettleMode Opt[ReceiverSettleMode] // absent: the link's mode applies
	State         DeliveryState
	Resume        bool
	Aborted       bool
	Batchable     bool
}

// Disposition is the disposition performative (part 2 §2.7.6): the state
// or settlement of the deliveries First through Last.
type Disposition struct {
	Fields
	Role  Role   // mandatory: of the end that sends the disposition
	First uint32 // mandatory
	// Last is absent when the range is First alone; Range applies that.
	Last      Opt[uint32]
	Settled   bool
	State     DeliveryState
	Batchable bool
}

// Range returns the deliveries the disposition covers: First through
// Last, or First alone when Last is absent.
func (d *Disposition) Range() (first, last uint32) { return d.First, d.Last.Or(d.First) }

// Detach is the detach performative (part 2 §2.7.7).
type Detach struct {
	Fields
	Handle uint32 // mandatory
	Closed bool
	Error  AMQPError
}

// End is the end performative (part 2 §2.7.8): a session ends.
type End struct {
	Fields
	Error AMQPError
}

// Close is the close performative (part 2 §2.7.9): the connection closes.
type Close struct {
	Fields
	Error AMQPError
}

// AMQPError is the error composite (part 2 §2.8.14) of detach, end, close
// and the rejected outcome. Whether it was there is the Has bit of the
// field holding it (DetachError, RejectedError, …). It is not a Go error: its bytes are views, valid
// only as long as the body they were read from.
type AMQPError struct {
	Fields
	Condition   []byte // symbol, mandatory; see Cond
	Description []byte // string
	Info        Map
}

// Cond returns the condition as one of the spec's, or CondOther.
func (e AMQPError) Cond() Condition { return LookupCondition(e.Condition) }

func (e *AMQPError) isZero() bool { return e.Condition == nil && e.Description == nil && e.Info == nil }

// Source is the source terminus of a link (part 3 §3.5.3).
type Source struct {
	Fields
	Address               []byte // string
	Durable               TerminusDurability
	ExpiryPolicy          ExpiryPolicy
	Timeout               uint32 // seconds; default 0
	Dynamic               bool
	DynamicNodeProperties Map
	DistributionMode      []byte // symbol: "move", "copy" or another
	Filter                Map
	// DefaultOutcome is the outcome of deliveries the link settles without
	// one: accepted, rejected, released or modified.
	DefaultOutcome DeliveryState
	Outcomes       Symbols
	Capabilities   Symbols
}

// Target is the target terminus of a link (part 3 §3.5.4), or, with
// Coordinator set, the coordinator of transactions (part 4 §4.5.1), whose
// only field is Capabilities (CoordinatorCapabilities in Fields).
type Target struct {
	Fields
	Address               []byte // string
	Durable               TerminusDurability
	ExpiryPolicy          ExpiryPolicy
	Timeout               uint32 // seconds; default 0
	Dynamic               bool
	DynamicNodeProperties Map
	Capabilities          Symbols
	// Coordinator reports a coordinator (descriptor 0x30) instead of a
	// target (0x29).
	Coordinator bool
}

// DeliveryState is the state of a delivery (part 3 §3.4), in transfer,
// disposition and a source's default outcome: one of the five states of
// part 3, whose fields it holds, or another described value (StateOther,
// such as part 4's transactional-state), kept raw.
type DeliveryState struct {
	Fields // of the state's own list: ReceivedSectionNumber, RejectedError, …
	Type   StateType
	// Descriptor is the state's numeric descriptor (0 for a symbolic one
	// the spec does not define).
	Descriptor amqpsax.Descriptor
	// Raw is the whole encoded state, descriptor included, as read; nil
	// in a state built in code. Append functions write a StateOther's
	// Raw as it is.
	Raw []byte

	// received
	SectionNumber uint32
	SectionOffset uint64
	// rejected
	Error AMQPError
	// modified: no defaults (Has tells)
	DeliveryFailed     bool
	UndeliverableHere  bool
	MessageAnnotations Map
}

// SASLMechanisms is the sasl-mechanisms frame (part 5 §5.3.3.1): the
// mechanisms a server offers.
type SASLMechanisms struct {
	Fields
	Mechanisms Symbols // sasl-server-mechanisms, mandatory
}

// SASLInit is the sasl-init frame (part 5 §5.3.3.2): the mechanism a
// client picks and its initial response.
type SASLInit struct {
	Fields
	Mechanism       []byte // symbol, mandatory
	InitialResponse []byte // binary
	Hostname        []byte // string
}

// SASLChallenge is the sasl-challenge frame (part 5 §5.3.3.3).
type SASLChallenge struct {
	Fields
	Challenge []byte // binary, mandatory
}

// SASLResponse is the sasl-response frame (part 5 §5.3.3.4).
type SASLResponse struct {
	Fields
	Response []byte // binary, mandatory
}

// SASLOutcome is the sasl-outcome frame (part 5 §5.3.3.5).
type SASLOutcome struct {
	Fields
	Code           SASLCode // mandatory
	AdditionalData []byte   // binary
}
