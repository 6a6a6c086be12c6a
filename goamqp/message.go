package amqp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/stream"
)

// Message is an AMQP message.
type Message struct {
	// Message format code.
	//
	// The upper three octets of a message format code identify a particular message
	// format. The lowest octet indicates the version of said message format. Any
	// given version of a format is forwards compatible with all higher versions.
	Format uint32

	// The DeliveryTag can be up to 32 octets of binary data.
	// Note that when mode one is enabled there will be no delivery tag.
	DeliveryTag []byte

	// The header section carries standard delivery details about the transfer
	// of a message through the AMQP network.
	Header *MessageHeader

	// The delivery-annotations section is used for delivery-specific non-standard
	// properties at the head of the message. Delivery annotations convey information
	// from the sending peer to the receiving peer.
	DeliveryAnnotations Annotations

	// The message-annotations section is used for properties of the message which
	// are aimed at the infrastructure.
	Annotations Annotations

	// The properties section is used for a defined set of standard properties of
	// the message.
	Properties *MessageProperties

	// The application-properties section is a part of the bare message used for
	// structured application data. Intermediaries can use the data within this
	// structure for the purposes of filtering or routing.
	ApplicationProperties map[string]any

	// Data payloads.
	// A data section contains opaque binary data.
	Data [][]byte

	// Value payload.
	// An amqp-value section contains a single AMQP value.
	Value any

	// Sequence will contain AMQP sequence sections from the body of the message.
	// An amqp-sequence section contains an AMQP sequence.
	Sequence [][]any

	// The footer section is used for details about the message or delivery which
	// can only be calculated or evaluated once the whole bare message has been
	// constructed or seen (for example message hashes, HMACs, signatures and
	// encryption details).
	Footer Annotations

	rcv *Receiver        // the Receiver that received it, while it is not settled
	dlv *client.Delivery // its delivery, likewise
}

// NewMessage returns a *Message with data as the first payload in the Data field.
//
// This constructor is intended as a helper for basic Messages with a
// single data payload. It is valid to construct a Message directly for
// more complex usages.
//
// To create a Message using the Value or Sequence fields, don't use this
// constructor, create a new Message instead.
func NewMessage(data []byte) *Message {
	return &Message{Data: [][]byte{data}}
}

// GetData returns the first []byte from the Data field
// or nil if Data is empty.
func (m *Message) GetData() []byte {
	if len(m.Data) == 0 {
		return nil
	}
	return m.Data[0]
}

// Null is an AMQP null.
// Typically used in Message.Value to send a null.
type Null struct{}

// Marshal encodes this type into a buffer. It is not intended for public use.
func (n Null) Marshal(wr *buffer) error {
	wr.AppendByte(byte(amqpsax.CodeNull))
	return nil
}

// MarshalBinary encodes the message into binary form.
func (m *Message) MarshalBinary() ([]byte, error) {
	return m.appendTo(make([]byte, 0, m.sizeHint()))
}

// sizeHint is a guess at m's encoded size, so that MarshalBinary grows
// its buffer once or not at all: the payloads, and room for the rest.
func (m *Message) sizeHint() int {
	n := 256
	for _, p := range m.Data {
		n += len(p) + 8
	}
	return n
}

// Marshal encodes the message into a buffer. It is not intended for public use.
func (m *Message) Marshal(wr *buffer) error {
	b, err := m.appendTo(nil)
	if err != nil {
		return err
	}
	wr.Append(b)
	return nil
}

// section appends a section's descriptor and then v.
func section(dst []byte, code uint8, v any) ([]byte, error) {
	dst = append(dst, byte(amqpsax.CodeDescribed), byte(amqpsax.CodeSmallUlong), code)
	return appendValue(dst, v)
}

// appendTo appends m as go-amqp v1.7.0's MarshalBinary writes it, byte
// for byte (maps in Go's map order, as there).
func (m *Message) appendTo(dst []byte) ([]byte, error) {
	var err error
	if m.Header != nil {
		if dst, err = m.Header.appendTo(dst); err != nil {
			return dst, err
		}
	}
	if m.DeliveryAnnotations != nil {
		if dst, err = section(dst, codeDeliveryAnn, m.DeliveryAnnotations); err != nil {
			return dst, err
		}
	}
	if m.Annotations != nil {
		if dst, err = section(dst, codeMessageAnn, m.Annotations); err != nil {
			return dst, err
		}
	}
	if m.Properties != nil {
		if dst, err = m.Properties.appendTo(dst); err != nil {
			return dst, err
		}
	}
	if m.ApplicationProperties != nil {
		if dst, err = section(dst, codeAppProps, m.ApplicationProperties); err != nil {
			return dst, err
		}
	}
	for _, p := range m.Data {
		// Not through section: a []byte in an interface costs an
		// allocation per Send.
		dst = append(dst, byte(amqpsax.CodeDescribed), byte(amqpsax.CodeSmallUlong), codeData)
		if dst, err = appendBinary(dst, p); err != nil {
			return dst, err
		}
	}
	if m.Value != nil {
		if dst, err = section(dst, codeValue, m.Value); err != nil {
			return dst, err
		}
	}
	for _, s := range m.Sequence {
		if dst, err = section(dst, codeSequence, s); err != nil {
			return dst, err
		}
	}
	if m.Footer != nil {
		if dst, err = section(dst, codeFooter, m.Footer); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// UnmarshalBinary decodes the message from binary form.
//
// As go-amqp's, it adds to m: data and sequence sections are appended to
// those m has, the other sections replace m's. Sections may come in any
// order. The values are the Go types go-amqp gives (symbols as strings,
// maps whose keys are all strings as map[string]any, arrays as typed
// slices; see the package documentation).
//
// The strings of the sections before the body share one copy of those
// bytes: keeping any of them keeps that copy (at most the message's
// size).
func (m *Message) UnmarshalBinary(data []byte) error {
	d := getDecoder()
	defer d.free()
	return m.unmarshal(d, data)
}

// unmarshal is UnmarshalBinary with d, whose st and views Receive sets.
func (m *Message) unmarshal(d *decoder, data []byte) error {
	if !d.views { // else strings are views into data
		d.src, d.strEnd = data, bodyAt(&d.C, data)
	}
	d.C.Reset(data)
	for d.C.Next() {
		if err := m.section(d); err != nil {
			return err
		}
	}
	return d.C.Err()
}

// bodyAt returns the offset of the first body section (data,
// amqp-sequence or amqp-value) of the message in data, or where its
// sections end: the sections before it (header, annotations,
// properties, application properties) hold the strings a message is
// read for, and its body may be large.
func bodyAt(c *stream.Cursor, data []byte) int {
	c.Reset(data)
	end := 0
	for c.Next() {
		switch raw := c.Raw(); {
		case len(raw) > 2 && raw[0] == byte(amqpsax.CodeDescribed) && raw[1] == byte(amqpsax.CodeSmallUlong) &&
			raw[2] >= codeData && raw[2] <= codeValue:
			return c.Offset()
		case len(raw) > 9 && raw[0] == byte(amqpsax.CodeDescribed) && raw[1] == byte(amqpsax.CodeUlong):
			if code := binary.BigEndian.Uint64(raw[2:]); code >= codeData && code <= codeValue {
				return c.Offset()
			}
		}
		end = c.Offset() + len(c.Raw())
	}
	return end
}

// receivedMsg is a received Message, its first data section's slice and
// its delivery tag, allocated as one: all that a message whose body
// comes first (no header, annotations or properties: NewMessage's)
// needs.
type receivedMsg struct {
	m    Message
	data [1][]byte
	tag  [32]byte // the delivery tag: client keeps at most 32 bytes of it
}

// received is receivedMsg with room for the sections before the body,
// allocated as one: Receive's decoder puts the header, the properties
// and their times and group sequence, and the first strings that need
// a place of their own (the properties' *string fields, and strings put
// in an interface: a message-id, a map's values) here.
type received struct {
	receivedMsg
	header   MessageHeader
	props    MessageProperties
	strs     [5]string // in the order read; once full, a string costs an allocation
	times    [2]time.Time
	groupSeq uint32
	nstrs    uint8 // strs in use
}

// bodyFirst reports whether a message's first section is a body section
// (data, amqp-sequence or amqp-value, with a smallulong descriptor):
// then it has no header, annotations or properties before it, and a
// receivedMsg holds what it points to.
func bodyFirst(data []byte) bool {
	return len(data) > 2 && data[0] == byte(amqpsax.CodeDescribed) && data[1] == byte(amqpsax.CodeSmallUlong) &&
		data[2] >= codeData && data[2] <= codeValue
}

// Unmarshal decodes the message from a buffer, reading it to its end. It
// is not intended for public use.
func (m *Message) Unmarshal(r *buffer) error {
	err := m.UnmarshalBinary(r.Bytes())
	if err == nil {
		r.Skip(r.Len())
	}
	return err
}

var errSection = errors.New("amqp: decode: a message section must be a described value with a ulong descriptor")

// section reads the section at d's cursor into m.
func (m *Message) section(d *decoder) error {
	c := &d.C
	if c.Kind() != amqpsax.KindDescribed {
		return fmt.Errorf("%w: offset %d", errSection, c.Offset())
	}
	at := c.Offset()
	var code uint64
	switch raw := c.Raw(); {
	case len(raw) > 2 && raw[1] == byte(amqpsax.CodeSmallUlong):
		code = uint64(raw[2])
	case len(raw) > 9 && raw[1] == byte(amqpsax.CodeUlong):
		code = binary.BigEndian.Uint64(raw[2:])
	default:
		// Walk it: a malformed value is the cursor's error, more to
		// the point than this one.
		c.Enter()
		for c.Next() {
		}
		if err := c.Err(); err != nil {
			return err
		}
		return fmt.Errorf("%w: offset %d", errSection, at)
	}
	switch code {
	case codeHeader:
		if m.Header == nil {
			if d.st != nil {
				m.Header = &d.st.header
			} else {
				m.Header = new(MessageHeader)
			}
		}
		return m.Header.read(d)
	case codeProperties:
		if m.Properties == nil {
			if d.st != nil {
				m.Properties = &d.st.props
			} else {
				m.Properties = new(MessageProperties)
			}
		}
		return m.Properties.read(d)
	}
	c.Enter()
	c.Next() // the descriptor
	if !c.Next() {
		if err := c.Err(); err != nil {
			return err
		}
		return fmt.Errorf("amqp: decode: section without a value at offset %d", at)
	}
	null := c.IsNull()
	var err error
	switch code {
	case codeDeliveryAnn:
		if !null {
			m.DeliveryAnnotations, err = d.Annotations()
		}
	case codeMessageAnn:
		if !null {
			m.Annotations, err = d.Annotations()
		}
	case codeAppProps:
		if !null {
			m.ApplicationProperties, err = d.StringMap()
		}
	case codeData:
		var p []byte
		if !null {
			p, err = d.Binary()
		}
		if m.Data == nil && d.data != nil {
			m.Data = d.data[:0:1]
		}
		m.Data = append(m.Data, p)
	case codeSequence:
		var l []any
		if !null {
			l, err = d.List()
		}
		m.Sequence = append(m.Sequence, l)
	case codeValue:
		if !null {
			m.Value, err = d.Any()
		}
	case codeFooter:
		if !null {
			m.Footer, err = d.Annotations()
		}
	default:
		return fmt.Errorf("amqp: decode: unknown message section %#02x at offset %d", code, at)
	}
	if err != nil {
		return err
	}
	c.Exit()
	return nil
}

// MessageHeader carries standard delivery details about the transfer
// of a message.
type MessageHeader struct {
	Durable       bool
	Priority      uint8
	TTL           time.Duration // from milliseconds
	FirstAcquirer bool
	DeliveryCount uint32
}

// appendTo writes the header as appendFields would write its five fields
// (trailing defaults left out, the others null), without putting them in
// interfaces: a uint32 of 256 or more in one costs an allocation.
func (h *MessageHeader) appendTo(dst []byte) ([]byte, error) {
	n := 5
	switch {
	case h.DeliveryCount != 0:
	case h.FirstAcquirer:
		n = 4
	case h.TTL != 0:
		n = 3
	case h.Priority != 4:
		n = 2
	default:
		n = 1
	}
	dst = encode.AppendCodeSmallUlong(encode.AppendDescribed(dst), codeHeader)
	start := len(dst)
	dst = encode.BeginList(dst)
	dst = encode.AppendBool(dst, h.Durable)
	if n > 1 {
		if h.Priority == 4 {
			dst = encode.AppendNull(dst)
		} else {
			dst = encode.AppendUbyte(dst, h.Priority)
		}
	}
	if n > 2 {
		if h.TTL == 0 {
			dst = encode.AppendNull(dst)
		} else {
			dst = encode.AppendUint(dst, uint32(h.TTL/time.Millisecond))
		}
	}
	if n > 3 {
		if !h.FirstAcquirer {
			dst = encode.AppendNull(dst)
		} else {
			dst = encode.AppendBool(dst, true)
		}
	}
	if n > 4 {
		dst = encode.AppendUint(dst, h.DeliveryCount)
	}
	return encode.EndList32(dst, start, n), nil
}

// Marshal encodes this type into a buffer. It is not intended for public use.
func (h *MessageHeader) Marshal(wr *buffer) error {
	b, err := h.appendTo(nil)
	if err == nil {
		wr.Append(b)
	}
	return err
}

// Unmarshal decodes a buffer into this type. It is not intended for public use.
func (h *MessageHeader) Unmarshal(r *buffer) error {
	return readOne(r, func(d *decoder) error { return h.read(d) })
}

// read reads the header section at d's cursor (part 3 §3.2.1); a
// priority left out or null is the default, 4.
func (h *MessageHeader) read(d *decoder) error {
	priority := false
	err := d.Composite(codeHeader, 5, func(i int) error {
		var err error
		switch i {
		case 0:
			h.Durable, err = d.Bool()
		case 1:
			h.Priority, err = d.Ubyte()
			priority = true
		case 2:
			var ms uint64
			ms, err = d.Unsigned()
			h.TTL = time.Duration(ms) * time.Millisecond
		case 3:
			h.FirstAcquirer, err = d.Bool()
		case 4:
			h.DeliveryCount, err = d.Uint32()
		}
		return err
	})
	if err == nil && !priority {
		h.Priority = 4
	}
	return err
}

// MessageProperties is the defined set of properties for AMQP messages.
type MessageProperties struct {
	// Message-id, if set, uniquely identifies a message within the message system.
	// The message producer is usually responsible for setting the message-id in
	// such a way that it is assured to be globally unique. A broker MAY discard a
	// message as a duplicate if the value of the message-id matches that of a
	// previously received message sent to the same node.
	//
	// The value is restricted to the following types
	//   - uint64, UUID, []byte, or string
	MessageID any

	// The identity of the user responsible for producing the message.
	// The client sets this value, and it MAY be authenticated by intermediaries.
	UserID []byte

	// The to field identifies the node that is the intended destination of the message.
	// On any given transfer this might not be the node at the receiving end of the link.
	To *string

	// A common field for summary information about the message content and purpose.
	Subject *string

	// The address of the node to send replies to.
	ReplyTo *string

	// This is a client-specific id that can be used to mark or identify messages
	// between clients.
	//
	// The value is restricted to the following types
	//   - uint64, UUID, []byte, or string
	CorrelationID any

	// The RFC-2046 [RFC2046] MIME type for the message's application-data section
	// (body). As per RFC-2046 [RFC2046] this can contain a charset parameter defining
	// the character encoding used: e.g., 'text/plain; charset="utf-8"'.
	//
	// For clarity, as per section 7.2.1 of RFC-2616 [RFC2616], where the content type
	// is unknown the content-type SHOULD NOT be set. This allows the recipient the
	// opportunity to determine the actual type. Where the section is known to be truly
	// opaque binary data, the content-type SHOULD be set to application/octet-stream.
	//
	// When using an application-data section with a section code other than data,
	// content-type SHOULD NOT be set.
	ContentType *string

	// The content-encoding property is used as a modifier to the content-type.
	// When present, its value indicates what additional content encodings have been
	// applied to the application-data, and thus what decoding mechanisms need to be
	// applied in order to obtain the media-type referenced by the content-type header
	// field.
	//
	// Content-encoding is primarily used to allow a document to be compressed without
	// losing the identity of its underlying content type.
	//
	// Content-encodings are to be interpreted as per section 3.5 of RFC 2616 [RFC2616].
	// Valid content-encodings are registered at IANA [IANAHTTPPARAMS].
	//
	// The content-encoding MUST NOT be set when the application-data section is other
	// than data. The binary representation of all other application-data section types
	// is defined completely in terms of the AMQP type system.
	//
	// Implementations MUST NOT use the identity  Instead, implementations
	// SHOULD NOT set this property. Implementations SHOULD NOT use the compress encoding,
	// except as to remain compatible with messages originally sent with other protocols,
	// e.g. HTTP or SMTP.
	//
	// Implementations SHOULD NOT specify multiple content-encoding values except as to
	// be compatible with messages originally sent with other protocols, e.g. HTTP or SMTP.
	ContentEncoding *string

	// An absolute time when this message is considered to be expired.
	AbsoluteExpiryTime *time.Time

	// An absolute time when this message was created.
	CreationTime *time.Time

	// Identifies the group the message belongs to.
	GroupID *string

	// The relative position of this message within its group.
	//
	// The value is defined as a RFC-1982 sequence number
	GroupSequence *uint32

	// This is a client-specific id that is used so that client can send replies to this
	// message to a specific group.
	ReplyToGroupID *string
}

func (p *MessageProperties) appendTo(dst []byte) ([]byte, error) {
	// The content type and encoding are symbols; a *Symbol in an
	// interface, unlike a Symbol, costs no allocation.
	return appendFields(dst, codeProperties,
		[]any{p.MessageID, &p.UserID, p.To, p.Subject, p.ReplyTo, p.CorrelationID,
			(*Symbol)(p.ContentType), (*Symbol)(p.ContentEncoding), p.AbsoluteExpiryTime, p.CreationTime,
			p.GroupID, p.GroupSequence, p.ReplyToGroupID},
		[]bool{p.MessageID == nil, len(p.UserID) == 0, p.To == nil, p.Subject == nil, p.ReplyTo == nil, p.CorrelationID == nil,
			p.ContentType == nil, p.ContentEncoding == nil, p.AbsoluteExpiryTime == nil, p.CreationTime == nil,
			p.GroupID == nil, p.GroupSequence == nil, p.ReplyToGroupID == nil})
}

// Marshal encodes this type into a buffer. It is not intended for public use.
func (p *MessageProperties) Marshal(wr *buffer) error {
	b, err := p.appendTo(nil)
	if err == nil {
		wr.Append(b)
	}
	return err
}

// Unmarshal decodes a buffer into this type. It is not intended for public use.
func (p *MessageProperties) Unmarshal(r *buffer) error {
	return readOne(r, func(d *decoder) error { return p.read(d) })
}

// read reads the properties section at d's cursor (part 3 §3.2.4).
func (p *MessageProperties) read(d *decoder) error {
	// Received (d.st), the fields point into the storage allocated
	// with the Message (d.stringPtr; a time's slot is the field's
	// there). (new, not the address of a local: that would be
	// allocated whichever branch runs.)
	str := func(dst **string) error {
		s, err := d.Str()
		if err != nil {
			return err
		}
		*dst = d.stringPtr(s)
		return nil
	}
	ts := func(dst **time.Time, slot int) error {
		t, err := d.Timestamp()
		if err != nil {
			return err
		}
		var p *time.Time
		if d.st != nil {
			p = &d.st.times[slot]
		} else {
			p = new(time.Time)
		}
		*p, *dst = t, p
		return nil
	}
	return d.Composite(codeProperties, 13, func(i int) error {
		var err error
		switch i {
		case 0:
			p.MessageID, err = d.Any()
		case 1:
			p.UserID, err = d.Binary()
		case 2:
			err = str(&p.To)
		case 3:
			err = str(&p.Subject)
		case 4:
			err = str(&p.ReplyTo)
		case 5:
			p.CorrelationID, err = d.Any()
		case 6:
			err = str(&p.ContentType)
		case 7:
			err = str(&p.ContentEncoding)
		case 8:
			err = ts(&p.AbsoluteExpiryTime, 0)
		case 9:
			err = ts(&p.CreationTime, 1)
		case 10:
			err = str(&p.GroupID)
		case 11:
			var n uint32
			if n, err = d.Uint32(); err == nil {
				var q *uint32
				if d.st != nil {
					q = &d.st.groupSeq
				} else {
					q = new(uint32)
				}
				*q, p.GroupSequence = n, q
			}
		case 12:
			err = str(&p.ReplyToGroupID)
		}
		return err
	})
}

// readOne reads the first value of r's unread bytes with read, and moves
// r past it.
func readOne(r *buffer, read func(*decoder) error) error {
	var d decoder
	d.C.Reset(r.Bytes())
	if !d.C.Next() {
		if err := d.C.Err(); err != nil {
			return err
		}
		return errors.New("amqp: decode: no value")
	}
	n := d.C.Offset() + len(d.C.Raw())
	if err := read(&d); err != nil {
		return err
	}
	r.Skip(n)
	return nil
}
