package message

import (
	"errors"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/stream"
)

// Field is one entry of a map section (annotations, application
// properties, footer): its key and its value, each a stream.Value, read
// with the Value's getters. After [Message.Decode] both are views into
// the message's own copy of the input.
type Field struct {
	Key, Value stream.Value
}

// Entries are the entries of a map section in the order they were
// decoded or are to be written. A nil Entries is an absent section; an
// empty, non-nil one (Entries{}) a section with an empty map.
type Entries []Field

// Get returns the value of the first entry whose key is a string or a
// symbol equal to key, the zero Value (Kind KindInvalid) when there is
// none. It does not allocate.
func (e Entries) Get(key string) stream.Value {
	for i := range e {
		k := &e[i].Key
		if kk := k.Kind(); (kk == amqpsax.KindString || kk == amqpsax.KindSymbol) && string(k.Bytes()) == key {
			return e[i].Value
		}
	}
	return stream.Value{}
}

// GetKey is Get for any [Key]: a symbol or string, or a ulong (a long
// key of the same value matches too, as for [LookupKey]).
func (e Entries) GetKey(key Key) stream.Value {
	if !key.isUlong {
		return e.Get(key.name)
	}
	for i := range e {
		k := &e[i].Key
		switch k.Kind() {
		case amqpsax.KindUlong:
			if k.Uint() == key.ulong {
				return e[i].Value
			}
		case amqpsax.KindLong:
			if n := k.Int(); n >= 0 && uint64(n) == key.ulong {
				return e[i].Value
			}
		}
	}
	return stream.Value{}
}

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
// sequences or a value. A nil Header or Properties, a nil Entries and a
// body of Kind BodyNone are absent sections.
//
// [Message.Decode] fills a Message from an encoded message, keeping one
// copy of the input in storage the Message owns and reuses, with every
// byte field, Field and body value a view into that copy: decoding into a
// reused Message allocates nothing once its storage has grown to the
// messages it sees. The views stay valid until the next Decode into the
// same Message (or Reset); copy what must outlive that.
//
// [Message.Append] encodes a Message into the caller's buffer. Build one
// from typed entries, Go values or values already encoded with a
// [Values]; see the package documentation for the mapping of AMQP types
// to Go types.
//
// A Message is not for concurrent use while it is being decoded into.
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
	buf    []byte
	header Header
	props  Properties
	maps   [4][]Field // delivery annotations, message annotations, application properties, footer
	map8   [4]bool    // the map section in that slot was decoded from a map8
	data   [][]byte
	seq    []stream.Value
}

// Reset makes m an empty message (no sections), keeping its storage for
// the next Decode. Views handed out before are invalid afterwards if
// they pointed into m's copy of an input.
func (m *Message) Reset() {
	own := m.own
	own.map8 = [4]bool{}
	*m = Message{own: own}
}

// Bytes returns the encoded message m was decoded from: m's own copy
// after Decode, the caller's bytes after DecodeNoCopy, nil otherwise.
func (m *Message) Bytes() []byte { return m.own.buf }

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
	m.own.buf = append(m.own.buf[:0], data...)
	return m.decode(m.own.buf)
}

// DecodeNoCopy is Decode without the copy: m's views point into data
// itself, which the caller must leave unchanged while m is in use — for
// a buffer handed over whole, such as a delivery the caller assembled
// for this message alone.
func (m *Message) DecodeNoCopy(data []byte) error {
	m.own.buf = nil
	return m.decode(data)
}

// Map sections' slots in owned.maps.
const (
	slotDA = iota
	slotMA
	slotAP
	slotFooter
)

func (m *Message) decode(data []byte) error {
	buf := m.own.buf
	m.Reset()
	m.own.buf = buf
	s, err := scan(data, nil)
	if err != nil {
		m.Reset()
		return err
	}
	if err := m.fill(&s); err != nil {
		m.Reset()
		return err
	}
	return nil
}

func (m *Message) fill(s *Sections) error {
	var err error
	if s.Header != nil {
		if m.own.header, err = ParseHeader(s.Header); err != nil {
			return inMessage(err, rHeader, s.Offsets.Header)
		}
		m.Header = &m.own.header
	}
	if s.Properties != nil {
		if m.own.props, err = ParseProperties(s.Properties); err != nil {
			return inMessage(err, rProperties, s.Offsets.Properties)
		}
		m.Properties = &m.own.props
	}
	if m.DeliveryAnnotations, err = m.entries(s.DeliveryAnnotations, rDeliveryAnnotations, s.Offsets.DeliveryAnnotations, slotDA); err != nil {
		return err
	}
	if m.MessageAnnotations, err = m.entries(s.MessageAnnotations, rMessageAnnotations, s.Offsets.MessageAnnotations, slotMA); err != nil {
		return err
	}
	if m.ApplicationProperties, err = m.entries(s.ApplicationProperties, rApplicationProperties, s.Offsets.ApplicationProperties, slotAP); err != nil {
		return err
	}
	if m.Footer, err = m.entries(s.Footer, rFooter, s.Offsets.Footer, slotFooter); err != nil {
		return err
	}
	if s.Body != nil {
		return m.body(s)
	}
	return nil
}

// entries reads the map section sec, of rank r at offset base in the
// message, into the storage of slot.
func (m *Message) entries(sec []byte, r, base, slot int) (Entries, error) {
	if sec == nil {
		return nil, nil
	}
	// Scan has checked the descriptor and that the value is a map.
	var c stream.Cursor
	c.Reset(sec)
	if !c.Next() || !c.EnterValue() || c.Kind() != amqpsax.KindMap {
		return nil, inMessage(errOr(c.Err(), rNone), r, base)
	}
	m.own.map8[slot] = c.Code() == amqpsax.CodeMap8
	if !c.Enter() {
		return nil, inMessage(c.Err(), r, base)
	}
	list := m.own.maps[slot][:0]
	for c.Next() {
		k, err := checked(&c, r, base)
		if err != nil {
			return nil, err
		}
		if !c.Next() {
			break
		}
		v, err := checked(&c, r, base)
		if err != nil {
			return nil, err
		}
		list = append(list, Field{k, v})
	}
	if err := c.Err(); err != nil {
		return nil, inMessage(err, r, base)
	}
	m.own.maps[slot] = list
	if list == nil {
		return Entries{}, nil
	}
	return Entries(list), nil
}

// checked returns the value at the cursor, which reads the section of
// rank r at offset base in the message, checking a compound whole.
func checked(c *stream.Cursor, r, base int) (stream.Value, error) {
	v := c.Value()
	switch v.Kind() {
	case amqpsax.KindList, amqpsax.KindMap, amqpsax.KindArray, amqpsax.KindDescribed:
		if _, err := stream.ParseValue(v.Raw()); err != nil {
			return stream.Value{}, inMessage(err, r, base+c.Offset())
		}
	}
	return v, nil
}

// body reads the body sections.
func (m *Message) body(s *Sections) error {
	var c stream.Cursor
	c.Reset(s.Body)
	base := s.Offsets.Body
	m.Body.Kind = s.BodyKind
	data, seq := m.own.data[:0], m.own.seq[:0]
	for c.Next() {
		if !c.EnterValue() {
			break
		}
		v, err := checked(&c, rBody, base)
		if err != nil {
			return err
		}
		switch s.BodyKind {
		case BodyData:
			data = append(data, v.Bytes())
		case BodySequence:
			seq = append(seq, v)
		default:
			m.Body.Value = v
		}
		if !c.Exit() {
			break
		}
	}
	if err := c.Err(); err != nil {
		return inMessage(err, rBody, base)
	}
	m.own.data, m.own.seq = data, seq
	switch s.BodyKind {
	case BodyData:
		m.Body.Data = data
	case BodySequence:
		m.Body.Sequence = seq
	}
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

// errOr is err, or when it is nil an ErrSectionType error for a section
// of rank r (which Scan rules out).
func errOr(err error, r int) error {
	if err != nil {
		return err
	}
	return &amqpsax.Error{Op: sectionOps[r], Err: ErrSectionType}
}
