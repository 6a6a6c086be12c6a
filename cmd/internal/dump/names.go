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
	return frame.FieldName(d, frame.FieldIndex(i))
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
// one of the enumerated types (frame.ChoiceName), or "" otherwise.
// Symbols (expiry policies, error conditions) name themselves, and
// delivery states are named by their descriptors. A value of another
// kind than the field's (a fault the parse reports) is not named.
func enumName(d amqpsax.Descriptor, i int, c *stream.Cursor) string {
	if i < 0 || i > 255 {
		return ""
	}
	var v uint64
	switch c.Kind() {
	case amqpsax.KindBool:
		if c.Bool() {
			v = 1
		}
	case amqpsax.KindUbyte, amqpsax.KindUint:
		v = c.Uint()
	default:
		return ""
	}
	want := amqpsax.KindUbyte
	switch {
	case d == amqpsax.DescriptorAttach && i == int(frame.AttachRole), d == amqpsax.DescriptorDisposition && i == int(frame.DispositionRole):
		want = amqpsax.KindBool
	case d == amqpsax.DescriptorSource || d == amqpsax.DescriptorTarget:
		want = amqpsax.KindUint // terminus-durability is a uint
	}
	if c.Kind() != want {
		return ""
	}
	name, _ := frame.ChoiceName(d, frame.FieldIndex(i), v)
	return name
}
