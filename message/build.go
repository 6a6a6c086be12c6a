package message

import (
	"errors"
	"slices"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/stream"
)

// Causes of the errors Append returns for a Message it cannot write.
var (
	// ErrNoValue: a key or value is the zero stream.Value (no value at
	// all), or a value of an array element, which has no constructor of
	// its own and cannot stand alone.
	ErrNoValue = errors.New("no value (the zero stream.Value, or an array element)")
	// ErrBodyKind: the body's fields do not agree with its Kind (data
	// given for an amqp-value body, a sequence that is not a list, no
	// value for an amqp-value body).
	ErrBodyKind = errors.New("body fields do not match its kind")
)

// buildErr is an error of Append about the section of rank r.
func buildErr(r int, cause error) error {
	return &amqpsax.Error{Op: "message/build", Err: &SectionError{Section: sectionNames[r], Err: cause}}
}

// Append appends m, encoded, to dst and returns the extended buffer: the
// sections present in the spec's order (header, delivery-annotations,
// message-annotations, properties, application-properties, body, footer),
// each with a smallulong descriptor — byte for byte what Qpid Proton
// writes for the same message, and for a decoded message the bytes it
// came from wherever the peer wrote as Proton does (see [AppendHeader]
// and [AppendProperties] for how those two sections are written). Every
// size and count takes its smallest encoding but one: the map of an
// annotations, application-properties or footer section built from
// Fields is a map32, as Proton, go-amqp and rhea write it (a decoded one
// is copied as it came: a map8 from uAMQP-C stays a map8). Entries and
// body values are copied as they are encoded, never re-encoded.
//
// It grows dst at most once, to the size the message needs, and copies
// each value once; with room in dst it does not allocate.
//
// m is checked first, and on an error nothing is appended: a key or value
// that is the zero stream.Value (ErrNoValue), a body whose fields do not
// match its Kind (ErrBodyKind), a message-id or correlation-id of another
// type (ErrSectionType). Values made by stream.ParseValue, by a [Values]
// or by Decode are well-formed by construction. The error is an
// *amqpsax.Error with Op "message/build" and a [SectionError] naming the
// section.
func (m *Message) Append(dst []byte) ([]byte, error) {
	if err := m.check(); err != nil {
		return dst, err
	}
	dst = slices.Grow(dst, m.size())
	if m.Header != nil {
		dst = appendHeader(dst, m.Header)
	}
	dst = appendEntries(dst, amqpsax.DescriptorDeliveryAnnotations, &m.DeliveryAnnotations)
	dst = appendEntries(dst, amqpsax.DescriptorMessageAnnotations, &m.MessageAnnotations)
	if m.Properties != nil {
		dst = appendProperties(dst, m.Properties) // its IDs are checked
	}
	dst = appendEntries(dst, amqpsax.DescriptorApplicationProperties, &m.ApplicationProperties)
	switch m.Body.Kind {
	case BodyData:
		for _, p := range m.Body.Data {
			dst = append(dst, byte(amqpsax.CodeDescribed), byte(amqpsax.CodeSmallUlong), byte(amqpsax.DescriptorData))
			if len(p) <= 255 {
				dst = encode.AppendBinary(dst, p)
				continue
			}
			n := len(p)
			dst = append(dst, byte(amqpsax.CodeVbin32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
			dst = appendLarge(dst, p)
		}
	case BodySequence:
		for i := range m.Body.Sequence {
			dst = append(dst, byte(amqpsax.CodeDescribed), byte(amqpsax.CodeSmallUlong), byte(amqpsax.DescriptorAMQPSequence))
			dst = appendLarge(dst, m.Body.Sequence[i].Raw())
		}
	case BodyValue:
		dst = append(dst, byte(amqpsax.CodeDescribed), byte(amqpsax.CodeSmallUlong), byte(amqpsax.DescriptorAMQPValue))
		dst = appendLarge(dst, m.Body.Value.Raw())
	}
	dst = appendEntries(dst, amqpsax.DescriptorFooter, &m.Footer)
	return dst, nil
}

// standalone reports whether v is a value that can be written on its
// own: not the zero Value, and not an array element (whose bytes lack a
// constructor: its first byte is then not its code).
func standalone(v *stream.Value) bool {
	raw := v.Raw()
	return len(raw) > 0 && v.Kind() != amqpsax.KindInvalid && raw[0] == byte(v.Code())
}

// check finds what Append cannot write.
func (m *Message) check() error {
	if len(m.DeliveryAnnotations.fields)|len(m.MessageAnnotations.fields)|
		len(m.ApplicationProperties.fields)|len(m.Footer.fields) != 0 {
		if err := m.checkFields(); err != nil {
			return err
		}
	}
	if p := m.Properties; p != nil && (!writableID(p.MessageID.Kind) || !writableID(p.CorrelationID.Kind)) {
		return buildErr(rProperties, ErrSectionType)
	}
	b := &m.Body
	ok := true
	switch b.Kind {
	case BodyNone:
		ok = b.Data == nil && b.Sequence == nil && b.Value.Kind() == amqpsax.KindInvalid
	case BodyData:
		ok = b.Sequence == nil && b.Value.Kind() == amqpsax.KindInvalid
	case BodySequence:
		ok = b.Data == nil && b.Value.Kind() == amqpsax.KindInvalid
		for i := range b.Sequence {
			ok = ok && standalone(&b.Sequence[i]) && b.Sequence[i].Kind() == amqpsax.KindList
		}
	case BodyValue:
		ok = b.Data == nil && b.Sequence == nil && standalone(&b.Value)
	default:
		ok = false
	}
	if !ok {
		return buildErr(rBody, ErrBodyKind)
	}
	return nil
}

// checkFields finds a built field of a map section that cannot be
// written on its own (a decoded map is well-formed).
func (m *Message) checkFields() error {
	for _, s := range [...]struct {
		e *Entries
		r int
	}{{&m.DeliveryAnnotations, rDeliveryAnnotations}, {&m.MessageAnnotations, rMessageAnnotations},
		{&m.ApplicationProperties, rApplicationProperties}, {&m.Footer, rFooter}} {
		for i := range s.e.fields {
			if !standalone(&s.e.fields[i].Key) || !standalone(&s.e.fields[i].Value) {
				return buildErr(s.r, ErrNoValue)
			}
		}
	}
	return nil
}

// writableIDs has bit k set for the kinds of a message-id or
// correlation-id AppendProperties writes: ulong, uuid, binary, string, and
// null or the zero ID's KindInvalid, which it leaves out.
const writableIDs = 1<<amqpsax.KindInvalid | 1<<amqpsax.KindNull | 1<<amqpsax.KindUlong |
	1<<amqpsax.KindUUID | 1<<amqpsax.KindBinary | 1<<amqpsax.KindString

// writableID reports whether an ID of kind k can be written.
func writableID(k amqpsax.Kind) bool { return uint64(writableIDs)>>k&1 != 0 } // 0 past 63

// size is an upper bound of the bytes Append writes for m.
func (m *Message) size() int {
	n := 0
	if m.Header != nil {
		n += 20
	}
	if p := m.Properties; p != nil {
		n += 3 + 9 + 13*9 + 2*16 + len(p.MessageID.Bytes) + len(p.UserID) + len(p.To) + len(p.Subject) +
			len(p.ReplyTo) + len(p.CorrelationID.Bytes) + len(p.ContentType) + len(p.ContentEncoding) +
			len(p.GroupID) + len(p.ReplyToGroupID)
	}
	n += entriesBound(&m.DeliveryAnnotations) + entriesBound(&m.MessageAnnotations) +
		entriesBound(&m.ApplicationProperties) + entriesBound(&m.Footer)
	for _, p := range m.Body.Data {
		n += 8 + len(p)
	}
	for i := range m.Body.Sequence {
		n += 3 + len(m.Body.Sequence[i].Raw())
	}
	return n + 3 + len(m.Body.Value.Raw())
}

// entriesBound is an upper bound of the bytes appendEntries writes for e.
func entriesBound(e *Entries) int { return 12 + len(e.raw) + entriesSize(e.fields) }

func entriesSize(e []Field) int {
	n := 0
	for i := range e {
		n += len(e[i].Key.Raw()) + len(e[i].Value.Raw())
	}
	return n
}

// appendEntries appends the map section of descriptor d holding e (none
// when e is absent): a decoded map as it came, byte for byte (a map8
// stays a map8, as uAMQP-C writes them), built fields as a map32, as
// Qpid Proton, go-amqp and rhea write every map section.
//
// It is inlined (TestInlining): of Append's four map sections, most
// messages have one or two.
func appendEntries(b []byte, d amqpsax.Descriptor, e *Entries) []byte {
	if !e.Present() {
		return b
	}
	return appendMap(b, d, e)
}

// appendMap is appendEntries of a present section.
func appendMap(b []byte, d amqpsax.Descriptor, e *Entries) []byte {
	b = append(b, byte(amqpsax.CodeDescribed), byte(amqpsax.CodeSmallUlong), byte(d))
	if e.raw != nil {
		return appendLarge(b, e.raw)
	}
	size, count := entriesSize(e.fields)+4, 2*len(e.fields)
	b = append(b, byte(amqpsax.CodeMap32), byte(size>>24), byte(size>>16), byte(size>>8), byte(size),
		byte(count>>24), byte(count>>16), byte(count>>8), byte(count))
	for i := range e.fields {
		b = append(b, e.fields[i].Key.Raw()...)
		b = append(b, e.fields[i].Value.Raw()...)
	}
	return b
}

// copyChunk is the piece appendLarge copies at a time.
const copyChunk = 16 << 10

// appendLarge appends p in pieces of copyChunk bytes. The runtime's
// memmove copies a megabyte or more with non-temporal stores, which
// bypass the cache that the next read of the message (writing it to a
// socket) wants it in; pieces keep every store in the cache
// (BenchmarkAppendLarge).
func appendLarge(b, p []byte) []byte {
	for len(p) > copyChunk {
		b = append(b, p[:copyChunk]...)
		p = p[copyChunk:]
	}
	return append(b, p...)
}
