package amqp

// The AMQP types of go-amqp's API (its internal/encoding package, which
// it exposes through aliases), defined here.

import (
	"encoding/hex"
	"fmt"
)

// Symbol is an AMQP symbolic string.
type Symbol string

// Marshal encodes this type into a buffer. It is not intended for public use.
func (s Symbol) Marshal(wr *buffer) error { return marshalInto(wr, s) }

// UUID is a 128 bit identifier as defined in RFC 4122.
type UUID [16]byte

// String returns the hex encoded representation described in RFC 4122, Section 3.
func (u UUID) String() string {
	var b [36]byte
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		hex.Encode(b[j:j+2], []byte{c})
		j += 2
	}
	return string(b[:])
}

// Marshal encodes this type into a buffer. It is not intended for public use.
func (u UUID) Marshal(wr *buffer) error { return marshalInto(wr, u) }

// Unmarshal decodes a buffer into this type. It is not intended for public use.
func (u *UUID) Unmarshal(r *buffer) error { return unmarshalFrom(r, u) }

// Annotations keys must be of type string, int, or int64.
//
// String keys are encoded as AMQP Symbols.
type Annotations map[any]any

// Marshal encodes this type into a buffer. It is not intended for public use.
func (a Annotations) Marshal(wr *buffer) error { return marshalInto(wr, a) }

// Unmarshal decodes a buffer into this type. It is not intended for public use.
func (a *Annotations) Unmarshal(r *buffer) error { return unmarshalFrom(r, a) }

// describedType is used for describing a filter.
// http://docs.oasis-open.org/amqp/core/v1.0/os/amqp-core-messaging-v1.0-os.html#type-filter-set
type describedType struct {
	Descriptor any
	Value      any
}

// Marshal encodes this type into a buffer. It is not intended for public use.
func (t describedType) Marshal(wr *buffer) error { return marshalInto(wr, t) }

// Unmarshal decodes a buffer into this type. It is not intended for public use.
func (t *describedType) Unmarshal(r *buffer) error { return unmarshalFrom(r, t) }

// String implements the [fmt.Stringer] interface.
// Note that the values are for diagnostic purposes and may change over time.
func (t describedType) String() string {
	return fmt.Sprintf("describedType{descriptor: %v, value: %v}", t.Descriptor, t.Value)
}

// filter is a set of named filters.
// http://docs.oasis-open.org/amqp/core/v1.0/os/amqp-core-messaging-v1.0-os.html#type-filter-set
type filter map[Symbol]*describedType

// Marshal encodes this type into a buffer. It is not intended for public use.
func (f filter) Marshal(wr *buffer) error { return marshalInto(wr, f) }

// arrayUByte allows encoding []uint8/[]byte as an array
// rather than binary data.
type arrayUByte []uint8

// Marshal encodes this type into a buffer. It is not intended for public use.
func (a arrayUByte) Marshal(wr *buffer) error { return marshalInto(wr, a) }

// Unmarshal decodes a buffer into this type. It is not intended for public use.
func (a *arrayUByte) Unmarshal(r *buffer) error { return unmarshalFrom(r, a) }

// lifetimePolicy is a dynamic node's lifetime policy (part 3 §3.5.10),
// as read from a described value with its descriptor.
type lifetimePolicy uint8

// The lifetime policies: each is the code of its descriptor.
const (
	deleteOnClose             lifetimePolicy = 0x2b
	deleteOnNoLinks           lifetimePolicy = 0x2c
	deleteOnNoMessages        lifetimePolicy = 0x2d
	deleteOnNoLinksOrMessages lifetimePolicy = 0x2e
)

// Marshal encodes this type into a buffer. It is not intended for public use.
func (p lifetimePolicy) Marshal(wr *buffer) error { return marshalInto(wr, p) }

// Durability specifies the durability of a link.
type Durability uint32

// String implements the [fmt.Stringer] interface.
// Note that the values are for diagnostic purposes and may change over time.
func (d *Durability) String() string {
	if d == nil {
		return "<nil>"
	}
	switch *d {
	case DurabilityNone:
		return "none"
	case DurabilityConfiguration:
		return "configuration"
	case DurabilityUnsettledState:
		return "unsettled-state"
	}
	return fmt.Sprintf("unknown durability %d", uint32(*d))
}

// Marshal encodes this type into a buffer. It is not intended for public use.
func (d Durability) Marshal(wr *buffer) error { return marshalInto(wr, uint32(d)) }

// Unmarshal decodes a buffer into this type. It is not intended for public use.
func (d *Durability) Unmarshal(r *buffer) error { return unmarshalFrom(r, (*uint32)(d)) }

// ExpiryPolicy specifies when the expiry timer of a terminus
// starts counting down from the timeout value.
//
// If the link is subsequently re-attached before the terminus is expired,
// then the count down is aborted. If the conditions for the
// terminus-expiry-policy are subsequently re-met, the expiry timer restarts
// from its originally configured timeout value.
type ExpiryPolicy Symbol

// validateExpiryPolicy returns an error for a policy that is none of the four.
func validateExpiryPolicy(e ExpiryPolicy) error {
	switch e {
	case ExpiryPolicyLinkDetach, ExpiryPolicySessionEnd, ExpiryPolicyConnectionClose, ExpiryPolicyNever:
		return nil
	}
	return fmt.Errorf("unknown expiry-policy %q", string(e))
}

// Marshal encodes this type into a buffer. It is not intended for public use.
func (e ExpiryPolicy) Marshal(wr *buffer) error { return marshalInto(wr, Symbol(e)) }

// Unmarshal decodes a buffer into this type. It is not intended for public use.
func (e *ExpiryPolicy) Unmarshal(r *buffer) error {
	if err := unmarshalFrom(r, (*Symbol)(e)); err != nil {
		return err
	}
	return validateExpiryPolicy(*e)
}

// String implements the [fmt.Stringer] interface.
// Note that the values are for diagnostic purposes and may change over time.
func (e *ExpiryPolicy) String() string {
	if e == nil {
		return "<nil>"
	}
	return string(*e)
}

// SenderSettleMode specifies how the sender will settle messages.
type SenderSettleMode uint8

// Ptr returns a pointer to the value of m.
func (m SenderSettleMode) Ptr() *SenderSettleMode { return &m }

// String implements the [fmt.Stringer] interface.
// Note that the values are for diagnostic purposes and may change over time.
func (m *SenderSettleMode) String() string {
	if m == nil {
		return "<nil>"
	}
	switch *m {
	case SenderSettleModeUnsettled:
		return "unsettled"
	case SenderSettleModeSettled:
		return "settled"
	case SenderSettleModeMixed:
		return "mixed"
	}
	return fmt.Sprintf("unknown sender mode %d", uint8(*m))
}

// Marshal encodes this type into a buffer. It is not intended for public use.
func (m SenderSettleMode) Marshal(wr *buffer) error { return marshalInto(wr, uint8(m)) }

// Unmarshal decodes a buffer into this type. It is not intended for public use.
func (m *SenderSettleMode) Unmarshal(r *buffer) error { return unmarshalFrom(r, (*uint8)(m)) }

// ReceiverSettleMode specifies how the receiver will settle messages.
type ReceiverSettleMode uint8

// Ptr returns a pointer to the value of m.
func (m ReceiverSettleMode) Ptr() *ReceiverSettleMode { return &m }

// String implements the [fmt.Stringer] interface.
// Note that the values are for diagnostic purposes and may change over time.
func (m *ReceiverSettleMode) String() string {
	if m == nil {
		return "<nil>"
	}
	switch *m {
	case ReceiverSettleModeFirst:
		return "first"
	case ReceiverSettleModeSecond:
		return "second"
	}
	return fmt.Sprintf("unknown receiver mode %d", uint8(*m))
}

// Marshal encodes this type into a buffer. It is not intended for public use.
func (m ReceiverSettleMode) Marshal(wr *buffer) error { return marshalInto(wr, uint8(m)) }

// Unmarshal decodes a buffer into this type. It is not intended for public use.
func (m *ReceiverSettleMode) Unmarshal(r *buffer) error {
	return unmarshalFrom(r, (*uint8)(m))
}

// ErrCond is one of the error conditions defined in the AMQP spec.
type ErrCond string

// Marshal encodes this type into a buffer. It is not intended for public use.
func (ec ErrCond) Marshal(wr *buffer) error { return marshalInto(wr, Symbol(ec)) }

// Unmarshal decodes a buffer into this type. It is not intended for public use.
func (ec *ErrCond) Unmarshal(r *buffer) error { return unmarshalFrom(r, (*Symbol)(ec)) }

// Error is an AMQP error.
type Error struct {
	// A symbolic value indicating the error condition.
	Condition ErrCond

	// descriptive text about the error condition
	//
	// This text supplies any supplementary details not indicated by the condition field.
	// This text can be logged as an aid to resolving issues.
	Description string

	// map carrying information about the error condition
	Info map[string]any
}

// Marshal encodes this type into a buffer. It is not intended for public use.
func (e *Error) Marshal(wr *buffer) error { return marshalInto(wr, e) }

// Unmarshal decodes a buffer into this type. It is not intended for public use.
func (e *Error) Unmarshal(r *buffer) error { return unmarshalFrom(r, e) }

// String implements the [fmt.Stringer] interface.
// Note that the values are for diagnostic purposes and may change over time.
func (e *Error) String() string {
	if e == nil {
		return "*Error(nil)"
	}
	return fmt.Sprintf("*Error{Condition: %s, Description: %s, Info: %v}", e.Condition, e.Description, e.Info)
}

// Error implements the error interface.
func (e *Error) Error() string { return e.String() }

// DeliveryState encapsulates the various concrete delivery states.
// http://docs.oasis-open.org/amqp/core/v1.0/os/amqp-core-messaging-v1.0-os.html#section-delivery-state
type DeliveryState interface {
	deliveryState() // marker method
}

// StateReceived indicates the furthest point in the payload of the message which the
// target will not need to have resent if the link is resumed.
type StateReceived struct {
	// When sent by the sender this indicates the first section of the message
	// (with section-number 0 being the first section) for which data can be resent.
	// Data from sections prior to the given section cannot be retransmitted for
	// this delivery.
	//
	// When sent by the receiver this indicates the first section of the message
	// for which all data might not yet have been received.
	SectionNumber uint32

	// When sent by the sender this indicates the first byte of the encoded section
	// data of the section given by section-number for which data can be resent
	// (with section-offset 0 being the first byte). Bytes from the same section
	// prior to the given offset section cannot be retransmitted for this delivery.
	//
	// When sent by the receiver this indicates the first byte of the given section
	// which has not yet been received.
	SectionOffset uint64
}

func (*StateReceived) deliveryState() {}

// Marshal encodes this type into a buffer. It is not intended for public use.
func (sr *StateReceived) Marshal(wr *buffer) error { return marshalInto(wr, sr) }

// Unmarshal decodes a buffer into this type. It is not intended for public use.
func (sr *StateReceived) Unmarshal(r *buffer) error { return unmarshalFrom(r, sr) }

// String implements the [fmt.Stringer] interface.
// Note that the values are for diagnostic purposes and may change over time.
func (sr *StateReceived) String() string {
	return fmt.Sprintf("StateReceived{SectionNumber : %d, SectionOffset: %d}", sr.SectionNumber, sr.SectionOffset)
}

// StateAccepted indicates that an incoming message has been successfully processed,
// and that the receiver of the message is expecting the sender to transition the
// delivery to the accepted state at the source.
type StateAccepted struct{}

func (*StateAccepted) deliveryState() {}

// Marshal encodes this type into a buffer. It is not intended for public use.
func (sa *StateAccepted) Marshal(wr *buffer) error { return marshalInto(wr, sa) }

// Unmarshal decodes a buffer into this type. It is not intended for public use.
func (sa *StateAccepted) Unmarshal(r *buffer) error { return unmarshalFrom(r, sa) }

// String implements the [fmt.Stringer] interface.
// Note that the values are for diagnostic purposes and may change over time.
func (sa *StateAccepted) String() string { return "StateAccepted{}" }

// StateRejected indicates that an incoming message is invalid and therefore unprocessable.
// The rejected outcome when applied to a message will cause the delivery-count to be
// incremented in the header of the rejected message.
type StateRejected struct {
	Error *Error
}

func (*StateRejected) deliveryState() {}

// Marshal encodes this type into a buffer. It is not intended for public use.
func (sr *StateRejected) Marshal(wr *buffer) error { return marshalInto(wr, sr) }

// Unmarshal decodes a buffer into this type. It is not intended for public use.
func (sr *StateRejected) Unmarshal(r *buffer) error { return unmarshalFrom(r, sr) }

// String implements the [fmt.Stringer] interface.
// Note that the values are for diagnostic purposes and may change over time.
func (sr *StateRejected) String() string { return fmt.Sprintf("StateRejected{Error: %v}", sr.Error) }

// StateReleased indicates that a given transfer was not and will not be acted upon.
type StateReleased struct{}

func (*StateReleased) deliveryState() {}

// Marshal encodes this type into a buffer. It is not intended for public use.
func (sr *StateReleased) Marshal(wr *buffer) error { return marshalInto(wr, sr) }

// Unmarshal decodes a buffer into this type. It is not intended for public use.
func (sr *StateReleased) Unmarshal(r *buffer) error { return unmarshalFrom(r, sr) }

// String implements the [fmt.Stringer] interface.
// Note that the values are for diagnostic purposes and may change over time.
func (sr *StateReleased) String() string { return "StateReleased{}" }

// StateModified indicates that a given transfer was not and will not be acted upon,
// and that the message SHOULD be modified in the specified ways at the node.
type StateModified struct {
	// count the transfer as an unsuccessful delivery attempt
	//
	// If the delivery-failed flag is set, any messages modified
	// MUST have their delivery-count incremented.
	DeliveryFailed bool

	// prevent redelivery
	//
	// If the undeliverable-here is set, then any messages released MUST NOT
	// be redelivered to the modifying link endpoint.
	UndeliverableHere bool

	// message attributes
	// Map containing attributes to combine with the existing message-annotations
	// held in the message's header section. Where the existing message-annotations
	// of the message contain an entry with the same key as an entry in this field,
	// the value in this field associated with that key replaces the one in the
	// existing headers; where the existing message-annotations has no such value,
	// the value in this map is added.
	MessageAnnotations Annotations
}

func (*StateModified) deliveryState() {}

// Marshal encodes this type into a buffer. It is not intended for public use.
func (sm *StateModified) Marshal(wr *buffer) error { return marshalInto(wr, sm) }

// Unmarshal decodes a buffer into this type. It is not intended for public use.
func (sm *StateModified) Unmarshal(r *buffer) error { return unmarshalFrom(r, sm) }

// String implements the [fmt.Stringer] interface.
// Note that the values are for diagnostic purposes and may change over time.
func (sm *StateModified) String() string {
	return fmt.Sprintf("StateModified{DeliveryFailed: %t, UndeliverableHere: %t, MessageAnnotations: %v}", sm.DeliveryFailed, sm.UndeliverableHere, sm.MessageAnnotations)
}
