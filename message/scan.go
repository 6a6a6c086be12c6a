package message

import (
	"errors"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
)

// Causes of the errors Scan and the accessors return, for errors.Is; they
// arrive wrapped in an *amqpsax.Error with the offset of the section at
// fault. Malformed encodings have the causes of package amqpsax.
var (
	ErrNotSection       = errors.New("value is not a message section")
	ErrSectionOrder     = errors.New("section out of order")
	ErrDuplicateSection = errors.New("duplicate section")
	ErrMixedBody        = errors.New("body sections of different kinds")
	ErrSectionType      = errors.New("section value of the wrong type")
)

// BodyKind tells how a message's body is encoded (AMQP 1.0 part 3 §3.2).
type BodyKind uint8

const (
	BodyNone     BodyKind = iota // no body section
	BodyData                     // one or more data sections (binary)
	BodySequence                 // one or more amqp-sequence sections (lists)
	BodyValue                    // one amqp-value section
)

var bodyNames = [...]string{"none", "data", "amqp-sequence", "amqp-value"}

func (k BodyKind) String() string {
	if int(k) < len(bodyNames) {
		return bodyNames[k]
	}
	return "BodyKind(?)"
}

// Sections are the parts of an encoded message, each the whole described
// value of its section (descriptor included) as a view into the data given
// to Scan, or nil when the message has none.
type Sections struct {
	Header, DeliveryAnnotations, MessageAnnotations []byte
	Properties, ApplicationProperties               []byte
	// Body holds all body sections: one amqp-value, one or more
	// amqp-sequence, or one or more data sections.
	Body   []byte
	Footer []byte
	// Bare is the bare message, properties through body: the bytes a
	// sender signs, which a broker forwards unchanged. When the footer
	// precedes the body (FooterFirst), Bare runs from the first of
	// properties, application-properties and footer to the end of the body,
	// and so contains the footer.
	Bare     []byte
	BodyKind BodyKind
	// FooterFirst reports a footer written before the body sections, as a
	// widely used JavaScript client does (see Scan).
	FooterFirst bool
}

// Section ranks: the order the spec requires.
const (
	rHeader = iota
	rDeliveryAnnotations
	rMessageAnnotations
	rProperties
	rApplicationProperties
	rBody
	rFooter
	rNone
)

// rankOf maps a section descriptor to its rank and body kind.
func rankOf(d amqpsax.Descriptor) (int, BodyKind) {
	switch d {
	case amqpsax.DescriptorHeader:
		return rHeader, 0
	case amqpsax.DescriptorDeliveryAnnotations:
		return rDeliveryAnnotations, 0
	case amqpsax.DescriptorMessageAnnotations:
		return rMessageAnnotations, 0
	case amqpsax.DescriptorProperties:
		return rProperties, 0
	case amqpsax.DescriptorApplicationProperties:
		return rApplicationProperties, 0
	case amqpsax.DescriptorData:
		return rBody, BodyData
	case amqpsax.DescriptorAMQPSequence:
		return rBody, BodySequence
	case amqpsax.DescriptorAMQPValue:
		return rBody, BodyValue
	case amqpsax.DescriptorFooter:
		return rFooter, 0
	}
	return rNone, 0
}

// The kind each section's value must have (KindInvalid: any).
var sectionKinds = [...]amqpsax.Kind{
	rHeader:                amqpsax.KindList,
	rDeliveryAnnotations:   amqpsax.KindMap,
	rMessageAnnotations:    amqpsax.KindMap,
	rProperties:            amqpsax.KindList,
	rApplicationProperties: amqpsax.KindMap,
	rFooter:                amqpsax.KindMap,
}

func fail(cause error, off int, code amqpsax.Code) error {
	return &amqpsax.Error{Op: "message", Offset: off, Code: code, HasCode: true, Err: cause}
}

func failStatus(st wire.Status, off int, data []byte) error {
	return wire.NewErrorAt("message", st, data, off)
}

// section reads the section starting at data[pos]: its descriptor, the
// code of its value and its end. Every length is checked; the value is
// skipped by its size (O(1) for lists, maps and binaries).
func section(data []byte, pos int) (d amqpsax.Descriptor, valueCode amqpsax.Code, end int, err error) {
	if pos >= len(data) {
		return 0, 0, 0, failStatus(wire.EOF, pos, data)
	}
	if data[pos] != byte(amqpsax.CodeDescribed) {
		if wire.Table[data[pos]].Cat() == wire.Invalid {
			return 0, 0, 0, failStatus(wire.BadCode, pos, data)
		}
		return 0, 0, 0, fail(ErrNotSection, pos, amqpsax.Code(data[pos]))
	}
	dp := pos + 1
	if dp >= len(data) {
		return 0, 0, 0, failStatus(wire.EOF, dp, data)
	}
	dc := amqpsax.Code(data[dp])
	known := false
	switch wire.Table[dc].Kind() {
	case amqpsax.KindUlong:
		hdr, _, _ := wire.Body(dc, data[dp+1:])
		if hdr < 0 {
			return 0, 0, 0, failStatus(wire.Status(hdr), dp, data)
		}
		d, known = amqpsax.Descriptor(wire.Uint(dc, data[dp+1:])), true
	case amqpsax.KindSymbol:
		hdr, size, _ := wire.Body(dc, data[dp+1:])
		if hdr < 0 {
			return 0, 0, 0, failStatus(wire.Status(hdr), dp, data)
		}
		d, known = amqpsax.LookupDescriptor(data[dp+1+hdr : dp+1+hdr+size])
	}
	if r, _ := rankOf(d); !known || r == rNone {
		// Not a section descriptor; still report a malformed encoding
		// as such.
		if n, off := wire.Skip(data[pos:]); n < 0 {
			return 0, 0, 0, failStatus(wire.Status(n), pos+off, data)
		}
		return 0, 0, 0, fail(ErrNotSection, pos, amqpsax.CodeDescribed)
	}
	n, off := wire.Skip(data[dp:])
	if n < 0 {
		return 0, 0, 0, failStatus(wire.Status(n), dp+off, data)
	}
	vp := dp + n
	if vp >= len(data) {
		return 0, 0, 0, failStatus(wire.EOF, vp, data)
	}
	valueCode = amqpsax.Code(data[vp])
	n, off = wire.Skip(data[vp:])
	if n < 0 {
		return 0, 0, 0, failStatus(wire.Status(n), vp+off, data)
	}
	return d, valueCode, vp + n, nil
}

// Scan finds the sections of the encoded message data in one pass,
// skipping each section's value by its size: O(1) per section, whatever
// the body's size, and no allocation.
//
// Descriptors are recognised in every encoding a peer may use: ulong
// (smallulong or the 8-byte form) and the symbolic names
// ("amqp:properties:list" …). Sections must come in the order of the spec
// (header, delivery-annotations, message-annotations, properties,
// application-properties, body, footer), each non-body section at most
// once, and body sections all of one kind (one amqp-value, or one or more
// amqp-sequence, or one or more data); each section's value must be of its
// type (list, map or binary). Anything else is an error with the offset
// of the section at fault. One exception is accepted because real traffic
// has it: a footer written before the body sections (a widely used
// JavaScript client does this); Scan then reports FooterFirst, and no
// section may follow the body.
func Scan(data []byte) (Sections, error) {
	var s Sections
	rank := -1
	bareStart, bareEnd, bodyStart, bodyEnd, footerStart := -1, -1, -1, -1, -1
	pos := 0
	for pos < len(data) {
		d, vc, end, err := section(data, pos)
		if err != nil {
			return Sections{}, err
		}
		r, bk := rankOf(d)
		if want := kindFor(r, bk); want != amqpsax.KindInvalid && wire.Table[vc].Kind() != want {
			return Sections{}, fail(ErrSectionType, pos, amqpsax.CodeDescribed)
		}
		raw := data[pos:end:end]
		switch {
		case s.FooterFirst: // after footer and body, only more body
			if r == rFooter {
				return Sections{}, fail(ErrDuplicateSection, pos, amqpsax.CodeDescribed)
			}
			if r != rBody {
				return Sections{}, fail(ErrSectionOrder, pos, amqpsax.CodeDescribed)
			}
			if bk != s.BodyKind {
				return Sections{}, fail(ErrMixedBody, pos, amqpsax.CodeDescribed)
			}
			if bk == BodyValue {
				return Sections{}, fail(ErrDuplicateSection, pos, amqpsax.CodeDescribed)
			}
		case r == rBody && rank == rFooter && s.BodyKind == BodyNone:
			s.FooterFirst = true // the footer came before the body
		case r == rBody && rank == rBody:
			if bk != s.BodyKind {
				return Sections{}, fail(ErrMixedBody, pos, amqpsax.CodeDescribed)
			}
			if bk == BodyValue {
				return Sections{}, fail(ErrDuplicateSection, pos, amqpsax.CodeDescribed)
			}
		case r == rank:
			return Sections{}, fail(ErrDuplicateSection, pos, amqpsax.CodeDescribed)
		case r < rank:
			return Sections{}, fail(ErrSectionOrder, pos, amqpsax.CodeDescribed)
		}
		rank = max(rank, r)
		if r >= rProperties && r <= rBody {
			if bareStart < 0 {
				bareStart = pos
			}
			bareEnd = end
		}
		switch r {
		case rHeader:
			s.Header = raw
		case rDeliveryAnnotations:
			s.DeliveryAnnotations = raw
		case rMessageAnnotations:
			s.MessageAnnotations = raw
		case rProperties:
			s.Properties = raw
		case rApplicationProperties:
			s.ApplicationProperties = raw
		case rBody:
			if bodyStart < 0 {
				bodyStart = pos
			}
			bodyEnd = end
			s.BodyKind = bk
		case rFooter:
			s.Footer = raw
			footerStart = pos
		}
		pos = end
	}
	if bodyStart >= 0 {
		s.Body = data[bodyStart:bodyEnd:bodyEnd]
	}
	if s.FooterFirst && bareStart > footerStart {
		// No properties before the footer: the range that holds the
		// body and the footer starts at the footer.
		bareStart = footerStart
	}
	if bareStart >= 0 {
		s.Bare = data[bareStart:bareEnd:bareEnd]
	}
	return s, nil
}

func kindFor(r int, bk BodyKind) amqpsax.Kind {
	switch {
	case r < len(sectionKinds) && r != rBody:
		return sectionKinds[r]
	case bk == BodyData:
		return amqpsax.KindBinary
	case bk == BodySequence:
		return amqpsax.KindList
	}
	return amqpsax.KindInvalid
}
