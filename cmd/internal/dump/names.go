package dump

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/stream"
)

// fieldName returns the name of field i of the described list with
// descriptor d, or "" when the spec gives it none (frame.FieldName knows
// every composite type of the spec).
func fieldName(d amqpsax.Descriptor, i int) string {
	if i < 0 || i > 255 {
		return ""
	}
	return frame.FieldName(d, frame.Field(i))
}

// hasFields reports whether the list of a value described by d has named
// fields.
func hasFields(d amqpsax.Descriptor) bool { return frame.NumFields(d) > 0 }

// isPerformative reports whether d is one of the frame bodies the spec
// defines (part 2 §2.7, part 5 §5.3.3).
func isPerformative(d amqpsax.Descriptor) bool {
	return d != 0 && performatives[d.TypeName()] == d
}

// performatives are the frame bodies the spec defines, by short name.
var performatives = func() map[string]amqpsax.Descriptor {
	m := map[string]amqpsax.Descriptor{}
	for _, d := range []amqpsax.Descriptor{amqpsax.DescriptorOpen, amqpsax.DescriptorBegin, amqpsax.DescriptorAttach,
		amqpsax.DescriptorFlow, amqpsax.DescriptorTransfer, amqpsax.DescriptorDisposition,
		amqpsax.DescriptorDetach, amqpsax.DescriptorEnd, amqpsax.DescriptorClose,
		amqpsax.DescriptorSASLMechanisms, amqpsax.DescriptorSASLInit,
		amqpsax.DescriptorSASLChallenge, amqpsax.DescriptorSASLResponse,
		amqpsax.DescriptorSASLOutcome} {
		m[d.TypeName()] = d
	}
	return m
}()

// shortName returns the short name of a descriptor the spec defines:
// "attach" for amqp:attach:list, "header" for amqp:header:list.
func shortName(d amqpsax.Descriptor) string { return d.TypeName() }

// perfName names a frame body by its performative, for a frame's line.
func perfName(body []byte) string {
	d, err := frame.Performative(body)
	switch {
	case err != nil:
		return "not a performative"
	case isPerformative(d):
		return shortName(d)
	case d == 0:
		return "not a performative: an undefined symbolic descriptor"
	case d.Name() != "":
		return "not a performative: " + d.Name()
	}
	return "not a performative: " + d.String()
}

// enumName returns the name the spec gives the value the cursor is on,
// when it is field i of the composite with descriptor d and that field is
// one of the enumerated types (part 2 §2.8.1 to §2.8.3, part 3 §3.5.5, part
// 5 §5.3.3.6), or "" otherwise. Symbols (expiry policies, error
// conditions) name themselves, and delivery states are named by their
// descriptors.
func enumName(d amqpsax.Descriptor, i int, c *stream.Cursor) string {
	k := c.Kind()
	switch {
	case k == amqpsax.KindBool && (d == amqpsax.DescriptorAttach && i == int(frame.AttachRole) ||
		d == amqpsax.DescriptorDisposition && i == int(frame.DispositionRole)):
		return frame.Role(c.Bool()).String()
	case k == amqpsax.KindUbyte && d == amqpsax.DescriptorAttach && i == int(frame.AttachSndSettleMode):
		return frame.SenderSettleMode(c.Uint()).String()
	case k == amqpsax.KindUbyte && (d == amqpsax.DescriptorAttach && i == int(frame.AttachRcvSettleMode) ||
		d == amqpsax.DescriptorTransfer && i == int(frame.TransferRcvSettleMode)):
		return frame.ReceiverSettleMode(c.Uint()).String()
	case k == amqpsax.KindUint && (d == amqpsax.DescriptorSource && i == int(frame.SourceDurable) ||
		d == amqpsax.DescriptorTarget && i == int(frame.TargetDurable)):
		return frame.TerminusDurability(c.Uint()).String() // a uint: 32 bits
	case k == amqpsax.KindUbyte && d == amqpsax.DescriptorSASLOutcome && i == int(frame.SASLOutcomeCode):
		return frame.SASLCode(c.Uint()).String()
	}
	return ""
}
