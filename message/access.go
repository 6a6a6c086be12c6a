package message

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/internal/wire"
	"github.com/google/uuid"
)

// Header is the header section (part 3 §3.2.1), with the spec's defaults
// for absent fields.
type Header struct {
	Durable       bool
	Priority      uint8 // default 4
	TTL           uint32
	HasTTL        bool // a ttl was given (0 is a ttl of 0 ms)
	FirstAcquirer bool
	DeliveryCount uint32
}

// AddDelivery counts one more delivery attempt, as a broker does before
// redelivering a message: DeliveryCount + 1, saturating at the largest
// uint rather than wrapping to 0 (which would read as never delivered).
func (h *Header) AddDelivery() {
	if h.DeliveryCount != ^uint32(0) {
		h.DeliveryCount++
	}
}

// DefaultHeader is a header of all defaults.
var DefaultHeader = Header{Priority: 4}

// fieldErr is the error for a field of the wrong type.
func fieldErr(v val) error { return fail(ErrSectionType, v.start, v.code) }

// ParseHeader reads a header section, as Scan returned it; nil gives the
// defaults. A field of the wrong type is an ErrSectionType error with its
// offset in sec. It does not allocate.
func ParseHeader(sec []byte) (Header, error) {
	h := DefaultHeader
	if sec == nil {
		return h, nil
	}
	it, err := openSection(sec, amqpsax.KindList)
	if err != nil {
		return h, err
	}
	for i := 0; ; i++ {
		v, ok, err := it.next()
		if err != nil || !ok {
			return h, err
		}
		if v.kind == amqpsax.KindNull {
			continue
		}
		p := sec[v.payload:]
		switch i {
		case 0, 3:
			if v.kind != amqpsax.KindBool {
				return h, fieldErr(v)
			}
			if i == 0 {
				h.Durable = wire.Bool(v.code, p)
			} else {
				h.FirstAcquirer = wire.Bool(v.code, p)
			}
		case 1:
			if v.kind != amqpsax.KindUbyte {
				return h, fieldErr(v)
			}
			h.Priority = p[0]
		case 2, 4:
			if v.kind != amqpsax.KindUint {
				return h, fieldErr(v)
			}
			if i == 2 {
				h.TTL, h.HasTTL = uint32(wire.Uint(v.code, p)), true
			} else {
				h.DeliveryCount = uint32(wire.Uint(v.code, p))
			}
		}
	}
}

// AppendHeader appends h as a header section (descriptor smallulong 0x70,
// a list8), leaving out trailing fields that have their default values.
func AppendHeader(b []byte, h Header) []byte {
	n := 0
	switch {
	case h.DeliveryCount != 0:
		n = 5
	case h.FirstAcquirer:
		n = 4
	case h.HasTTL:
		n = 3
	case h.Priority != 4:
		n = 2
	case h.Durable:
		n = 1
	}
	b = append(b, byte(amqpsax.CodeDescribed), byte(amqpsax.CodeSmallUlong), byte(amqpsax.DescriptorHeader))
	if n == 0 {
		return append(b, byte(amqpsax.CodeList0))
	}
	start := len(b)
	b = append(b, byte(amqpsax.CodeList8), 0, byte(n))
	b = encode.AppendBool(b, h.Durable)
	if n > 1 {
		b = append(b, byte(amqpsax.CodeUbyte), h.Priority)
	}
	if n > 2 {
		if h.HasTTL {
			b = encode.AppendUint(b, h.TTL)
		} else {
			b = append(b, byte(amqpsax.CodeNull))
		}
	}
	if n > 3 {
		b = encode.AppendBool(b, h.FirstAcquirer)
	}
	if n > 4 {
		b = encode.AppendUint(b, h.DeliveryCount)
	}
	b[start+1] = byte(len(b) - start - 2) // at most 17 bytes: always a list8
	return b
}

// ID is a message-id or correlation-id (part 3 §3.2.4): a ulong, a uuid,
// a binary or a string, as Kind says (KindNull when absent).
type ID struct {
	Kind  amqpsax.Kind
	Ulong uint64
	UUID  uuid.UUID
	Bytes []byte // binary or string: a view into the section
}

// Properties is the properties section (part 3 §3.2.4). Byte slices are
// views into the section, nil when the field is absent.
type Properties struct {
	MessageID          ID
	UserID             []byte
	To                 []byte
	Subject            []byte
	ReplyTo            []byte
	CorrelationID      ID
	ContentType        []byte // a symbol
	ContentEncoding    []byte // a symbol
	AbsoluteExpiryTime int64  // ms since the epoch, valid when HasAbsoluteExpiryTime
	CreationTime       int64  // ms since the epoch, valid when HasCreationTime
	GroupID            []byte
	GroupSequence      uint32 // valid when HasGroupSequence
	ReplyToGroupID     []byte

	HasAbsoluteExpiryTime, HasCreationTime, HasGroupSequence bool
}

// ParseProperties reads a properties section, as Scan returned it; nil
// gives no fields. Byte fields are views into sec; it does not allocate.
// Address and string fields may be strings or symbols (peers use both);
// a field of another type is an ErrSectionType error.
func ParseProperties(sec []byte) (Properties, error) {
	var p Properties
	p.MessageID.Kind, p.CorrelationID.Kind = amqpsax.KindNull, amqpsax.KindNull
	if sec == nil {
		return p, nil
	}
	it, err := openSection(sec, amqpsax.KindList)
	if err != nil {
		return p, err
	}
	for i := 0; ; i++ {
		v, ok, err := it.next()
		if err != nil || !ok {
			return p, err
		}
		if v.kind == amqpsax.KindNull {
			continue
		}
		var bad bool
		switch i {
		case 0, 5:
			id := ID{Kind: v.kind}
			switch v.kind {
			case amqpsax.KindUlong:
				id.Ulong = wire.Uint(v.code, sec[v.payload:])
			case amqpsax.KindUUID:
				id.UUID = uuid.UUID(sec[v.payload : v.payload+16])
			case amqpsax.KindBinary, amqpsax.KindString:
				id.Bytes = v.bytes(sec)
			default:
				bad = true
			}
			if i == 0 {
				p.MessageID = id
			} else {
				p.CorrelationID = id
			}
		case 1:
			p.UserID, bad = v.bytes(sec), v.kind != amqpsax.KindBinary
		case 2, 3, 4, 6, 7, 10, 12:
			bad = v.kind != amqpsax.KindString && v.kind != amqpsax.KindSymbol
			b := v.bytes(sec)
			switch i {
			case 2:
				p.To = b
			case 3:
				p.Subject = b
			case 4:
				p.ReplyTo = b
			case 6:
				p.ContentType = b
			case 7:
				p.ContentEncoding = b
			case 10:
				p.GroupID = b
			default:
				p.ReplyToGroupID = b
			}
		case 8, 9:
			if bad = v.kind != amqpsax.KindTimestamp; !bad {
				ts := wire.Timestamp(sec[v.payload:])
				if i == 8 {
					p.AbsoluteExpiryTime, p.HasAbsoluteExpiryTime = ts, true
				} else {
					p.CreationTime, p.HasCreationTime = ts, true
				}
			}
		case 11:
			if bad = v.kind != amqpsax.KindUint; !bad {
				p.GroupSequence, p.HasGroupSequence = uint32(wire.Uint(v.code, sec[v.payload:])), true
			}
		}
		if bad {
			return p, fieldErr(v)
		}
	}
}

// Lookup returns the encoded value (constructor included: read it with a
// stream.Cursor or dispatch) of the entry whose key is a string or symbol
// equal to key, in a map section: application-properties, delivery- or
// message-annotations, or footer, as Scan returned it. It returns nil
// when there is no such key. Other entries' values are skipped by their
// size, not read; it does not allocate.
func Lookup(sec []byte, key string) ([]byte, error) {
	if sec == nil {
		return nil, nil
	}
	it, err := openSection(sec, amqpsax.KindMap)
	if err != nil {
		return nil, err
	}
	for {
		k, ok, err := it.next()
		if err != nil || !ok {
			return nil, err
		}
		v, _, err := it.next() // a map's count is even: the value is there
		if err != nil {
			return nil, err
		}
		if keyIs(sec, k, key) {
			return sec[v.start:v.end:v.end], nil
		}
	}
}

// keyIs reports whether k is a string or symbol equal to key.
func keyIs(data []byte, k val, key string) bool {
	return (k.kind == amqpsax.KindString || k.kind == amqpsax.KindSymbol) && string(k.bytes(data)) == key
}
