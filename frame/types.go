package frame

import "github.com/amqpsax/amqpsax"

// The types below hold decoded performatives and the composite values in
// them. Their fields follow the spec's field lists in order, named after
// them (delivery-id is DeliveryID). Strings, symbols and binaries are
// views into the body given to the Parse function ([]byte, nil when
// absent); maps are Map and symbol lists Symbols, both raw encodings.
// Each embeds Fields, which tells which fields were present and how many
// elements the encoding held. Absent and null fields hold the spec's
// default, or the zero value where the spec has none (Has tells those
// from a zero that was sent).

// Open is the open performative (part 2 §2.7.1): the first frame of a
// connection in each direction.
type Open struct {
	Fields
	ContainerID  []byte // string, mandatory
	Hostname     []byte // string
	MaxFrameSize uint32 // default 4294967295
	ChannelMax   uint16 // default 65535
	// IdleTimeOut is in milliseconds; none when absent.
	IdleTimeOut         uint32
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
	// absent (Has false) in the begin that starts a session.
	RemoteChannel       uint16
	NextOutgoingID      uint32 // mandatory
	IncomingWindow      uint32 // mandatory
	OutgoingWindow      uint32 // mandatory
	HandleMax           uint32 // default 4294967295
	OfferedCapabilities Symbols
	DesiredCapabilities Symbols
	Properties          Map
}

// Attach is the attach performative (part 2 §2.7.3): a link end attaches.
type Attach struct {
	Fields
	Name          []byte // string, mandatory
	Handle        uint32 // mandatory
	Role          Role   // mandatory
	SndSettleMode SenderSettleMode
	RcvSettleMode ReceiverSettleMode
	// Source and Target are absent (Has(AttachSource) false) when null: a
	// link end refusing an attach sends null for one of them.
	Source               Source
	Target               Target
	Unsettled            Map
	IncompleteUnsettled  bool
	InitialDeliveryCount uint32 // set by the sender; none when absent
	// MaxMessageSize is the largest message the end accepts; absent (Has
	// false) or 0 means no limit.
	MaxMessageSize      uint64
	OfferedCapabilities Symbols
	DesiredCapabilities Symbols
	Properties          Map
}

// Flow is the flow performative (part 2 §2.7.4): session and link flow
// state. Handle and the link fields are absent in a session-only flow.
type Flow struct {
	Fields
	NextIncomingID uint32
	IncomingWindow uint32 // mandatory
	NextOutgoingID uint32 // mandatory
	OutgoingWindow uint32 // mandatory
	Handle         uint32
	DeliveryCount  uint32
	LinkCredit     uint32
	Available      uint32
	Drain          bool
	Echo           bool
	Properties     Map
}

// Transfer is the transfer performative (part 2 §2.7.5): a frame of a
// delivery. DeliveryID, DeliveryTag and MessageFormat may be absent on the
// frames that continue a delivery (More was set on the one before).
type Transfer struct {
	Fields
	Handle        uint32 // mandatory
	DeliveryID    uint32
	DeliveryTag   []byte // binary, at most 32 bytes by the spec (not enforced)
	MessageFormat uint32
	// Settled has no default: absent on the first frame of a delivery it
	// means false; on a later frame, unchanged.
	Settled       bool
	More          bool
	RcvSettleMode ReceiverSettleMode // none when absent: the link's mode applies
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
	// Last is First when absent, as the spec says.
	Last      uint32
	Settled   bool
	State     DeliveryState
	Batchable bool
}

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

func (s *Source) isZero() bool {
	return s.Address == nil && s.Durable == 0 && s.ExpiryPolicy == ExpirySessionEnd && s.Timeout == 0 &&
		!s.Dynamic && s.DynamicNodeProperties == nil && s.DistributionMode == nil && s.Filter == nil &&
		s.DefaultOutcome.Type == StateNone && s.Outcomes == nil && s.Capabilities == nil
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

func (t *Target) isZero() bool {
	return !t.Coordinator && t.Address == nil && t.Durable == 0 && t.ExpiryPolicy == ExpirySessionEnd && t.Timeout == 0 &&
		!t.Dynamic && t.DynamicNodeProperties == nil && t.Capabilities == nil
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
