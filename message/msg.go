package message

import (
	"encoding/binary"
	"errors"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/internal/wire"
	"github.com/amqpsax/amqpsax/stream"
)

// Body is a message's body (AMQP 1.0 part 3 §3.2.5–3.2.8): Kind says
// which of its fields holds it. A message has one or more data sections
// (Data, each a payload), one or more amqp-sequence sections (Sequence,
// each a list), or one amqp-value section (Value, any value), or none.
type Body struct {
	Kind     BodyKind
	Data     [][]byte       // BodyData: the payload of each data section
	Sequence []stream.Value // BodySequence: the list of each amqp-sequence section
	Value    stream.Value   // BodyValue: the amqp-value
}

// Message is a whole AMQP message (part 3 §3.2): header and properties
// typed, the map sections as ordered [Entries], the body as data,
// sequences or a value. A nil Header or Properties, the zero Entries and a
// body of Kind BodyNone are absent sections.
//
// [Message.Decode] fills a Message from an encoded message, keeping one
// copy of the input in storage the Message owns and reuses, with every
// byte field, entry and body value a view into that copy: decoding into a
// reused Message allocates nothing once its storage has grown to the
// messages it sees. The views stay valid until the next Decode into the
// same Message (or Reset); copy what must outlive that.
//
// [Message.Append] encodes a Message into the caller's buffer. Build one
// from typed entries, Go values or values already encoded with a
// [Values]; see the package documentation for the mapping of AMQP types
// to Go types.
//
// After Decode, Header and Properties point into the Message's own
// storage: copy the structs (*m.Header), not the Message, to keep them
// past the next Decode. A Message is not for concurrent use while it is
// being decoded into.
type Message struct {
	Header                *Header
	DeliveryAnnotations   Entries
	MessageAnnotations    Entries
	Properties            *Properties
	ApplicationProperties Entries
	Body                  Body
	Footer                Entries

	own owned // storage that Decode reuses
}

// owned is what a Message keeps between Decodes.
type owned struct {
	buf    []byte // Decode's copy of its input
	src    []byte // the input decoded: buf, or DecodeNoCopy's
	header Header
	props  Properties
	data   [][]byte
	data1  [1][]byte // data's first storage: a message of one data section, the common case, costs no allocation
	seq    []stream.Value
	sec    Sections // what scan found, kept: not zeroed on every Decode
	cur    stream.Cursor
	dec    dispatch.Decoder
}

// Reset makes m an empty message (no sections), keeping its storage for
// the next Decode. Views handed out before are invalid afterwards if
// they pointed into m's copy of an input.
func (m *Message) Reset() {
	m.Header, m.Properties = nil, nil
	m.DeliveryAnnotations, m.MessageAnnotations, m.ApplicationProperties, m.Footer = Entries{}, Entries{}, Entries{}, Entries{}
	m.Body = Body{}
	m.own.src = nil
}

// Bytes returns the encoded message m was decoded from: m's own copy
// after Decode, the caller's bytes after DecodeNoCopy, nil otherwise.
func (m *Message) Bytes() []byte { return m.own.src }

// Decode makes m the message data encodes, copying data into storage m
// owns (and reuses: it grows only to the largest message seen), so that
// data may be reused or changed as soon as Decode returns. Every view in
// m points into that copy.
//
// Sections are found as [Scan] finds them (in any order, ulong or
// symbolic descriptors); the header and properties are read as
// [ParseHeader] and [ParseProperties] read them; every map entry and
// body value is checked whole (every length, count and constructor, as a
// decoder walking it would), so that what m holds can be read and written
// back without surprise. Errors are *amqpsax.Error with Op "message", the
// offset of the fault in data and a [SectionError] naming the section.
// On a prefix of a message the error wraps io.ErrUnexpectedEOF, as Scan's
// does; anything wrong inside a complete section is a fault (ErrMalformed,
// ErrSectionType …), never a cut. On any error m is left empty.
//
// It does not allocate once m's storage has grown to the message, except
// for the error it returns.
func (m *Message) Decode(data []byte) error {
	m.own.buf = appendLarge(m.own.buf[:0], data)
	return m.decode(m.own.buf)
}

// DecodeNoCopy is Decode without the copy: m's views point into data
// itself, which the caller must leave unchanged while m is in use — for
// a buffer handed over whole, such as a delivery the caller assembled
// for this message alone.
func (m *Message) DecodeNoCopy(data []byte) error { return m.decode(data) }

func (m *Message) decode(data []byte) error {
	m.Reset()
	s := &m.own.sec
	*s = Sections{}
	if err := scanInto(s, data, nil); err != nil {
		m.Reset()
		return err
	}
	if err := m.fill(s); err != nil {
		m.Reset()
		return err
	}
	m.own.src = data
	return nil
}

func (m *Message) fill(s *Sections) error {
	var err error
	c := &m.own.cur // one for every section, kept: not zeroed on every Decode
	if s.Header != nil {
		if err = readHeader(s.Header, &m.own.header); err != nil {
			return inMessage(err, rHeader, s.Offsets.Header)
		}
		m.Header = &m.own.header
	}
	if s.Properties != nil {
		if err = readProperties(s.Properties, &m.own.props); err != nil {
			return inMessage(err, rProperties, s.Offsets.Properties)
		}
		m.Properties = &m.own.props
	}
	if m.DeliveryAnnotations.raw, err = m.entries(s.DeliveryAnnotations, rDeliveryAnnotations, s.Offsets.DeliveryAnnotations); err != nil {
		return err
	}
	if m.MessageAnnotations.raw, err = m.entries(s.MessageAnnotations, rMessageAnnotations, s.Offsets.MessageAnnotations); err != nil {
		return err
	}
	if m.ApplicationProperties.raw, err = m.entries(s.ApplicationProperties, rApplicationProperties, s.Offsets.ApplicationProperties); err != nil {
		return err
	}
	if m.Footer.raw, err = m.entries(s.Footer, rFooter, s.Offsets.Footer); err != nil {
		return err
	}
	if s.Body != nil {
		return m.body(c, s)
	}
	return nil
}

// valueAt returns the offset of the value of the section sec (after its
// descriptor), which Scan has checked.
func valueAt(sec []byte) int {
	_, _, n, _ := wire.Descriptor(sec[1:])
	return 1 + n
}

// entries reads the map section sec, of rank r at offset base in the
// message, and returns its map as encoded (nil for no section), every
// compound key or value in it checked whole: the raw of its Entries.
func (m *Message) entries(sec []byte, r, base int) ([]byte, error) {
	if sec == nil {
		return nil, nil
	}
	// Scan has checked the descriptor and that the value is a map whose
	// size fits: read the map alone.
	vp := valueAt(sec)
	base += vp
	raw := sec[vp:len(sec):len(sec)]
	// flat's tight loops check nearly every map whole; what they leave
	// (a described value, deep nesting, a fault) is read entry by entry,
	// each compound key or value checked whole, which names any fault.
	if flat(raw) {
		return raw, nil
	}
	h, size, count := wire.Body(amqpsax.Code(raw[0]), raw[1:])
	if h < 0 {
		return nil, inMessage(wire.NewErrorAt(sectionOps[r], wire.Status(h), raw, 0), r, base)
	}
	f := fieldReader{sec: raw, p: 1 + h, end: 1 + h + size, left: count, r: r, i: -1}
	for f.next() {
		if f.kind() >= amqpsax.KindList {
			if err := m.checkRaw(raw[f.off:f.p], r, base+f.off); err != nil {
				return nil, err
			}
		}
	}
	if f.malformed != nil {
		return nil, inMessage(f.malformed, r, base)
	}
	return raw, nil
}

// checkValue checks a compound value v whole (every length, count and
// constructor in it), as a decoder walking it would; off is its offset
// in the message, for the error.
func (m *Message) checkValue(v stream.Value, r, off int) error {
	if v.Kind() < amqpsax.KindList {
		return nil
	}
	return m.checkRaw(v.Raw(), r, off)
}

// checkRaw is checkValue for the encoded compound raw.
func (m *Message) checkRaw(raw []byte, r, off int) error {
	if flat(raw) {
		return nil
	}
	if _, err := m.own.dec.Decode(raw, amqpsax.NopHandler{}); err != nil {
		return inMessage(err, r, off)
	}
	return nil
}

// flat reports whether raw is a sound list, map or array whose values
// are not described and nest at most flatDepth deep, checking the
// constructor and length fields of every one in tight loops: then it
// needs no other check. An array of fixed-width elements takes O(1)
// (wire.ArrayCtor checks that size and count agree exactly). Anything
// else — a described value, deeper nesting, a fault — is false, and the
// full walk decides (and names the fault).
func flat(raw []byte) bool { return flatIn(raw, flatDepth) }

// flatDepth is how deep flat follows compounds inside compounds, far
// below any decoder's limit (amqpsax.DefaultMaxDepth).
const flatDepth = 8

// flatIn is flat with depth levels of nesting left.
func flatIn(raw []byte, depth int) bool {
	if wire.Counting {
		wire.Work.Stepped += len(raw)
	}
	c := amqpsax.Code(raw[0])
	cat := wire.Table[c].Cat()
	if cat != wire.Compound && cat != wire.Array {
		return false
	}
	h, size, count := wire.Body(c, raw[1:])
	if h < 0 || 1+h+size != len(raw) {
		return false
	}
	b := raw[1+h:]
	if cat == wire.Array {
		elem, ctorLen, _, _ := wire.ArrayCtor(b, count)
		if ctorLen != 1 {
			return false // described elements, or a fault
		}
		e := wire.Table[elem]
		switch {
		case e.Cat() == wire.Fixed && e.W() > 0 && elem != amqpsax.CodeBool:
			return true
		case e.Cat() != wire.Variable:
			return false
		}
		p := 1
		for range count {
			n := varSize(b, p, int(e.W()))
			if n < 0 {
				return false
			}
			p += int(e.W()) + n
		}
		return p == len(b)
	}
	p := 0
	for range count {
		if p >= len(b) {
			return false
		}
		// fieldStep's fast path first (a serial chain: code, step, next
		// code), as fieldReader's; list0, the bool's one byte and 32-bit
		// sizes next.
		switch s := fieldStep[b[p]]; {
		case s != 0 && s != stepVar8:
			p += int(s)
			continue
		case s == stepVar8:
			if p+1 >= len(b) {
				return false
			}
			p += 2 + int(b[p+1])
			continue
		}
		ec := amqpsax.Code(b[p])
		e := wire.Table[ec]
		switch {
		case ec == amqpsax.CodeList0:
			p++
		case ec == amqpsax.CodeBool:
			if p+1 >= len(b) || b[p+1] > 1 {
				return false
			}
			p += 2
		case e.Cat() == wire.Variable:
			n := varSize(b, p+1, int(e.W()))
			if n < 0 {
				return false
			}
			p += 1 + int(e.W()) + n
		case (e.Cat() == wire.Compound || e.Cat() == wire.Array) && depth > 0:
			h, size, _ := wire.Body(ec, b[p+1:])
			if h < 0 || !flatIn(b[p:p+1+h+size], depth-1) {
				return false
			}
			p += 1 + h + size
		default:
			return false
		}
	}
	return p == len(b)
}

// varSize reads the w-byte size field (1 or 4) at b[p] and returns the
// size, or -1 when the field or the payload does not fit in b.
func varSize(b []byte, p, w int) int {
	if w == 1 {
		if p >= len(b) {
			return -1
		}
		if n := int(b[p]); p+1+n <= len(b) {
			return n
		}
		return -1
	}
	if p+4 > len(b) {
		return -1
	}
	if n := uint64(binary.BigEndian.Uint32(b[p:])); n <= uint64(len(b)-p-4) {
		return int(n)
	}
	return -1
}

// body reads the body sections, which Scan has found together and of one
// kind.
func (m *Message) body(c *stream.Cursor, s *Sections) error {
	b := s.Body
	m.Body.Kind = s.BodyKind
	if s.BodyKind == BodyData {
		// data sections: a binary each, whose size Scan has checked
		data := m.own.data[:0]
		if cap(data) == 0 {
			data = m.own.data1[:0]
		}
		for p := 0; p < len(b); {
			vp := p + valueAt(b[p:])
			h, size, _ := wire.Body(amqpsax.Code(b[vp]), b[vp+1:])
			data = append(data, b[vp+1+h:vp+1+h+size:vp+1+h+size])
			p = vp + 1 + h + size
		}
		m.own.data, m.Body.Data = data, data
		return nil
	}
	seq := m.own.seq[:0]
	for p := 0; p < len(b); {
		vp := p + valueAt(b[p:])
		c.Reset(b[vp:])
		if !c.Next() {
			return inMessage(c.Err(), rBody, s.Offsets.Body+vp)
		}
		v := c.Value()
		if err := m.checkValue(v, rBody, s.Offsets.Body+vp); err != nil {
			return err
		}
		if s.BodyKind == BodyValue {
			m.Body.Value = v
			return nil
		}
		seq = append(seq, v)
		p = vp + len(v.Raw())
	}
	m.own.seq, m.Body.Sequence = seq, seq
	return nil
}

// inMessage gives an error found in the section of rank r, whose offset
// counts from that section's start at base in the message, the Op
// "message", the offset in the message and a SectionError naming the
// section, as Scan's errors have.
func inMessage(err error, r, base int) error {
	var e *amqpsax.Error
	if !errors.As(err, &e) {
		return err
	}
	c := *e
	c.Op = "message"
	c.Offset += base
	cause := e.Err
	var se *SectionError
	if errors.As(cause, &se) {
		cause = se.Err
	}
	c.Err = &SectionError{Section: sectionNames[r], Err: cause}
	return &c
}
