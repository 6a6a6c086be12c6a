package message

import (
	"errors"
	"io"
	"strconv"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
)

// Causes of the errors Scan and the accessors return, for errors.Is; they
// arrive in an *amqpsax.Error whose cause is a *SectionError naming the
// section at fault. Malformed encodings have the causes of package
// amqpsax.
var (
	ErrNotSection       = errors.New("value is not a message section")
	ErrSectionOrder     = errors.New("body sections not together")
	ErrDuplicateSection = errors.New("duplicate section")
	ErrMixedBody        = errors.New("body sections of different kinds")
	ErrSectionType      = errors.New("value of the wrong type")
	// ErrOtherSection: ParseHeader, ParseProperties or BodyValues was
	// given a section of another type (its descriptor says which).
	ErrOtherSection = errors.New("section of another type")
)

// SectionError is the cause of a message error about one section: its
// name ("properties", "application-properties" …) and what is wrong.
// It unwraps to the cause, so errors.Is(err, ErrDuplicateSection) and
// errors.Is(err, io.ErrUnexpectedEOF) work.
type SectionError struct {
	Section string
	Err     error

	// The section before, for a value that is no section: its name and
	// offset, which the text gives (a wrong size there is the usual cause
	// of a value that is no section).
	after    string
	afterOff int
}

func (e *SectionError) Error() string {
	s := e.Section
	if e.after != "" {
		s += " after " + e.after + " at offset " + strconv.Itoa(e.afterOff)
	}
	if e.Err == io.ErrUnexpectedEOF { // worded as the decoders word it
		return s + ": truncated input"
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *SectionError) Unwrap() error { return e.Err }

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
	// sender signs, which a broker forwards unchanged. It is nil when the
	// bare message's sections do not lie together in the spec's order
	// (another section between them); Append then copies each of them on
	// its own, byte for byte.
	Bare     []byte
	BodyKind BodyKind
	// FooterFirst reports a footer written before the body, as a widely
	// used JavaScript client (rhea) writes it; OutOfOrder is set too.
	FooterFirst bool
	// OutOfOrder reports sections not in the spec's order (header,
	// delivery-annotations, message-annotations, properties,
	// application-properties, body, footer), as some deployed encoders
	// write them. Append writes them back in the spec's order.
	OutOfOrder bool
	// Offsets holds the offset of each section in the data, -1 for a
	// section that is absent.
	Offsets Offsets
}

// Offsets gives where each section starts in the data Scan read.
type Offsets struct {
	Header, DeliveryAnnotations, MessageAnnotations int
	Properties, ApplicationProperties               int
	Body, Footer                                    int
}

// Section ranks: the order the spec gives.
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

// sectionNames names the sections by rank, as errors do.
var sectionNames = [...]string{
	rHeader:                "header",
	rDeliveryAnnotations:   "delivery-annotations",
	rMessageAnnotations:    "message-annotations",
	rProperties:            "properties",
	rApplicationProperties: "application-properties",
	rBody:                  "body",
	rFooter:                "footer",
	rNone:                  "section",
}

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

// sectionFault is an error of Scan about the section at off (an offset in
// the message), of rank r.
func sectionFault(cause error, r int, off int, code amqpsax.Code, hasCode bool) error {
	return &amqpsax.Error{Op: "message", Offset: off, Code: code, HasCode: hasCode,
		Err: &SectionError{Section: sectionNames[r], Err: cause}}
}

// cutError is the error of Scan on a prefix: the error and its cause in
// one object, so that it costs one allocation, or none in a Scanner.
type cutError struct {
	amqpsax.Error
	SectionError
}

// cutAt is the error of Scan on a prefix that ends inside the section of
// rank r starting at pos, written into e (a new one when e is nil).
func cutAt(e *cutError, pos, r int) error {
	if e == nil {
		e = new(cutError)
	}
	e.SectionError = SectionError{Section: sectionNames[r], Err: io.ErrUnexpectedEOF}
	e.Error = amqpsax.Error{Op: "message", Offset: pos, Code: amqpsax.CodeDescribed, HasCode: true, Err: &e.SectionError}
	return &e.Error
}

// errCut stands, inside Scan, for a section that the data's end cuts:
// Scan makes the error it returns (cutAt), once.
var errCut = errors.New("message: cut")

// wireFault is sectionFault for a fault of a wire primitive at data[off].
// Truncation is errCut: a section is a top-level value, so its limit is
// the data's end and every truncation a cut.
func wireFault(st wire.Status, r int, data []byte, off int) error {
	if st == wire.EOF {
		return errCut
	}
	if off < len(data) {
		return sectionFault(st.Err(), r, off, amqpsax.Code(data[off]), true)
	}
	return sectionFault(st.Err(), r, off, 0, false)
}

// section reads the section starting at data[pos]: its rank, body kind,
// the code of its value and its end. Every length is checked; the value is
// skipped by its size (O(1) for lists, maps and binaries). The data is the
// whole message: a section is a top-level value, so a value that runs past
// the data's end is a cut (io.ErrUnexpectedEOF).
func section(data []byte, pos int) (r int, bk BodyKind, valueCode amqpsax.Code, end int, err error) {
	if wire.Counting {
		wire.Work.Sections++
	}
	if data[pos] != byte(amqpsax.CodeDescribed) {
		if wire.Table[data[pos]].Cat() == wire.Invalid {
			return rNone, 0, 0, 0, wireFault(wire.BadCode, rNone, data, pos)
		}
		return rNone, 0, 0, 0, sectionFault(ErrNotSection, rNone, pos, amqpsax.Code(data[pos]), true)
	}
	d, n, ok := amqpsax.Descriptor(0), 2, true
	if pos+2 < len(data) && data[pos+1] == byte(amqpsax.CodeSmallUlong) {
		d = amqpsax.Descriptor(data[pos+2]) // as nearly every peer writes it
	} else {
		d, _, n, ok = wire.Descriptor(data[pos+1:])
	}
	if n < 0 {
		off := pos + 1
		if off < len(data) {
			// where the descriptor's fault lies
			_, f := wire.Skip(data[off:])
			off += f
		}
		return rNone, 0, 0, 0, wireFault(wire.Status(n), rNone, data, off)
	}
	r, bk = rankOf(d)
	if !ok || r == rNone {
		// Not a section; still report a malformed encoding as such.
		if n, off := wire.Skip(data[pos:]); n < 0 {
			return rNone, 0, 0, 0, wireFault(wire.Status(n), rNone, data, pos+off)
		}
		return rNone, 0, 0, 0, sectionFault(ErrNotSection, rNone, pos, amqpsax.CodeDescribed, true)
	}
	vp := pos + 1 + n
	if vp >= len(data) {
		return r, bk, 0, 0, wireFault(wire.EOF, r, data, vp)
	}
	valueCode = amqpsax.Code(data[vp])
	if want := kindFor(r, bk); want != amqpsax.KindInvalid && wire.Table[valueCode].Kind() != want {
		if wire.Table[valueCode].Cat() == wire.Invalid {
			return r, bk, 0, 0, wireFault(wire.BadCode, r, data, vp)
		}
		return r, bk, 0, 0, sectionFault(ErrSectionType, r, vp, valueCode, true)
	}
	// Lists, maps and binaries, which every section but amqp-value
	// holds, by their size (the fast paths first, then wire.Body, which
	// names any fault); anything else by wire.Skip.
	switch e := wire.Table[valueCode]; e.Op() {
	case wire.OpList32, wire.OpMap32:
		if size, count := wire.Compound32(data[vp+1:]); size >= 0 && (count&1 == 0 || e.Op() == wire.OpList32) {
			return r, bk, valueCode, vp + 9 + size, nil
		}
	case wire.OpList8, wire.OpMap8:
		if rest, count := wire.Compound8(data[vp+1:]); rest >= 0 && (count&1 == 0 || e.Op() == wire.OpList8) {
			return r, bk, valueCode, vp + 3 + rest, nil
		}
	case wire.OpBinary8:
		if size := wire.Var8(data[vp+1:]); size >= 0 {
			return r, bk, valueCode, vp + 2 + size, nil
		}
	}
	if e := wire.Table[valueCode]; e.Cat() == wire.Compound || e.Cat() == wire.Variable {
		h, size, _ := wire.Body(valueCode, data[vp+1:])
		if h < 0 {
			return r, bk, 0, 0, wireFault(wire.Status(h), r, data, vp)
		}
		return r, bk, valueCode, vp + 1 + h + size, nil
	}
	sn, off := wire.Skip(data[vp:])
	if sn < 0 {
		return r, bk, 0, 0, wireFault(wire.Status(sn), r, data, vp+off)
	}
	return r, bk, valueCode, vp + sn, nil
}

// Scan finds the sections of the encoded message data in one pass,
// skipping each section's value by its size: O(1) per section, whatever
// the body's size, and no allocation.
//
// Descriptors are recognised in every encoding a peer may use: ulong
// (smallulong or the 8-byte form) and the symbolic names
// ("amqp:properties:list" …). Sections may come in any order, as deployed
// encoders write them (one writes delivery annotations after the
// application properties, another the footer before the body); Sections
// then reports OutOfOrder. Each non-body section may appear at most once;
// body sections must be all of one kind (one amqp-value, or one or more
// amqp-sequence, or one or more data) and lie together; each section's
// value must be of its type (list, map or binary). Anything else is an
// error with the offset in data of the section at fault, naming it. A
// value that is no section is named with the section before it and that
// one's offset ("section after application-properties at offset 12: …"):
// a wrong size there is the usual cause.
//
// On a prefix of a message — the first transfer frames of a delivery —
// Scan returns every section complete in the prefix, and an error wrapping
// io.ErrUnexpectedEOF whose offset is where the section the input ends in
// starts (where to resume when more bytes arrive): a router can decide on
// the header, properties and application properties before the body has
// arrived. That error is Scan's one allocation; a [Scanner] has none. Any
// other error returns no sections.
//
// The bytes alone cannot say whether a message is whole: a prefix that
// ends exactly between two sections scans without error, and a complete
// message whose section size was corrupted upwards looks cut. Only the
// delivery can tell — its last transfer frame (more = false) — so once it
// has ended, every error, a cut included, means reject.
func Scan(data []byte) (Sections, error) { return scan(data, nil) }

// A Scanner scans messages as [Scan] does, keeping the storage of the
// error it returns for a prefix, so that a Scanner held by a router (one
// per connection or goroutine) allocates nothing, even on first frames
// that end inside a section.
//
// The prefix error a Scanner returns is valid until its next Scan, which
// reuses it: read its offset before scanning again, or copy it. Other
// errors are allocated and kept as [Scan]'s are. The zero Scanner is ready
// to use; a Scanner is not for concurrent use.
type Scanner struct {
	cut cutError
}

// Scan is [Scan], with the prefix error in the Scanner's storage.
func (sc *Scanner) Scan(data []byte) (Sections, error) { return scan(data, &sc.cut) }

// scan is Scan, writing a prefix error into cut when it is not nil.
// before names the section that ends at pos, and gives its offset: the
// sections are walked again from the start, once, on the error path only,
// so the loop of scan keeps no state for an error it may never report.
func before(data []byte, pos int) (string, int) {
	for at := 0; at < pos; {
		r, bk, _, end, err := section(data, at)
		if err != nil {
			break
		}
		if end == pos {
			if r == rBody {
				return bodyNames[bk], at
			}
			return sectionNames[r], at
		}
		at = end
	}
	return "", 0
}

func scan(data []byte, cut *cutError) (s Sections, err error) {
	err = scanInto(&s, data, cut)
	return s, err
}

// scanInto is scan into *s (Message.Decode keeps one), which must be the
// zero Sections (zeroing it here would zero scan's result twice): on an
// error other than a cut, *s is the zero Sections again.
func scanInto(s *Sections, data []byte, cut *cutError) error {
	s.Offsets = Offsets{-1, -1, -1, -1, -1, -1, -1}
	seen := 0 // ranks seen, a bit each
	top := -1 // the highest rank seen
	bodyStart, bodyEnd := -1, -1
	pos := 0
	for pos < len(data) {
		r, bk, _, end, err := section(data, pos)
		if err != nil {
			if err == errCut {
				// The complete sections before the cut, and the cut at
				// the start of the section it ends in.
				s.finish(data, bodyStart, bodyEnd)
				return cutAt(cut, pos, r)
			}
			if e, ok := err.(*amqpsax.Error); ok && r == rNone && pos > 0 {
				// A value that is no section: say what came before,
				// whose size may be wrong.
				if se, ok := e.Err.(*SectionError); ok {
					se.after, se.afterOff = before(data, pos)
				}
			}
			*s = Sections{}
			return err
		}
		raw := data[pos:end:end]
		if r < top && !(r == rBody && top == rBody) {
			s.OutOfOrder = true
			s.FooterFirst = s.FooterFirst || r == rBody && top == rFooter
		}
		if r == rBody {
			switch {
			case s.BodyKind == BodyNone:
				s.BodyKind, bodyStart, s.Offsets.Body = bk, pos, pos
			case bk != s.BodyKind:
				return s.fault(sectionFault(ErrMixedBody, r, pos, amqpsax.CodeDescribed, true))
			case bk == BodyValue:
				return s.fault(sectionFault(ErrDuplicateSection, r, pos, amqpsax.CodeDescribed, true))
			case bodyEnd != pos:
				return s.fault(sectionFault(ErrSectionOrder, r, pos, amqpsax.CodeDescribed, true))
			}
			bodyEnd = end
		} else {
			if seen&(1<<(uint(r)&7)) != 0 { // r < 8: one shift
				return s.fault(sectionFault(ErrDuplicateSection, r, pos, amqpsax.CodeDescribed, true))
			}
			s.set(r, raw, pos)
		}
		seen |= 1 << (uint(r) & 7)
		top = max(top, r)
		pos = end
	}
	s.finish(data, bodyStart, bodyEnd)
	return nil
}

// fault empties s and returns err.
func (s *Sections) fault(err error) error {
	*s = Sections{}
	return err
}

// set records the non-body section of rank r.
func (s *Sections) set(r int, raw []byte, pos int) {
	switch r {
	case rHeader:
		s.Header, s.Offsets.Header = raw, pos
	case rDeliveryAnnotations:
		s.DeliveryAnnotations, s.Offsets.DeliveryAnnotations = raw, pos
	case rMessageAnnotations:
		s.MessageAnnotations, s.Offsets.MessageAnnotations = raw, pos
	case rProperties:
		s.Properties, s.Offsets.Properties = raw, pos
	case rApplicationProperties:
		s.ApplicationProperties, s.Offsets.ApplicationProperties = raw, pos
	case rFooter:
		s.Footer, s.Offsets.Footer = raw, pos
	}
}

// finish sets Body and Bare from the offsets found (on a prefix, from the
// sections complete in it).
func (s *Sections) finish(data []byte, bodyStart, bodyEnd int) {
	if bodyStart >= 0 {
		s.Body = data[bodyStart:bodyEnd:bodyEnd]
	}
	// The bare message lies together when its sections follow one
	// another, in the spec's order, with nothing between them.
	start, end := -1, -1
	s.bare(&start, &end, s.Offsets.Properties, len(s.Properties))
	s.bare(&start, &end, s.Offsets.ApplicationProperties, len(s.ApplicationProperties))
	s.bare(&start, &end, s.Offsets.Body, len(s.Body))
	if start >= 0 && end >= 0 {
		s.Bare = data[start:end:end]
	}
}

// bare extends the bare message [*start, *end) with the section at off, of
// n bytes (absent when off < 0); *end becomes -1 when the section does not
// follow the ones before.
func (s *Sections) bare(start, end *int, off, n int) {
	switch {
	case off < 0:
		return
	case *start < 0:
		*start = off
	case off != *end:
		*end = -2 // apart: no bare message in one piece
		return
	}
	if *end != -2 {
		*end = off + n
	}
}
