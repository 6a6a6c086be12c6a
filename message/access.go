package message

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/internal/protocol/composite"
	"github.com/amqpsax/amqpsax/stream"
	"github.com/google/uuid"
)

// The accessors read one section, as Scan returned it, through a
// stream.Cursor declared in each call (no allocation). Their errors are
// *amqpsax.Error with Op "message/" and the section's name
// ("message/properties"), and the offset is within the section's bytes.

// sectionOp is the Op of the errors of the accessor of section r.
var sectionOps = [...]string{
	rHeader:                "message/header",
	rDeliveryAnnotations:   "message/delivery-annotations",
	rMessageAnnotations:    "message/message-annotations",
	rProperties:            "message/properties",
	rApplicationProperties: "message/application-properties",
	rBody:                  "message/body",
	rFooter:                "message/footer",
	rNone:                  "message/section",
}

// relabel gives an error of the cursor reading section r the accessor's
// Op; its offset is already within the section.
func relabel(err error, r int) error {
	if err == nil {
		return nil
	}
	return relabelErr(err, r)
}

func relabelErr(err error, r int) error {
	var e *amqpsax.Error
	if !errors.As(err, &e) {
		return err
	}
	c := *e
	c.Op = sectionOps[r]
	return &c
}

// otherSection is the error of the accessor of section r given, at off, a
// section of rank got, which it names ("message/header: properties:
// section of another type"), or a value that is not a section.
func otherSection(r, got, off int, code amqpsax.Code) error {
	var cause error = ErrNotSection
	if got != rNone {
		cause = &SectionError{Section: sectionNames[got], Err: ErrOtherSection}
	}
	return &amqpsax.Error{Op: sectionOps[r], Offset: off, Code: code, HasCode: true, Err: cause}
}

// fieldErr is the error for a field of the wrong type at the cursor.
func fieldErr(c *stream.Cursor, r int) error {
	return &amqpsax.Error{Op: sectionOps[r], Offset: c.Offset(), Code: c.Code(), HasCode: true, Err: ErrSectionType}
}

// open makes c read the fields (a list) or entries (a map, keys and
// values alternately) of the section sec, of rank r (its descriptor must
// be that section's, unless r is rNone), whose value must be of kind k.
func open(c *stream.Cursor, sec []byte, r int, k amqpsax.Kind) error {
	if err := onSection(c, sec, r); err != nil {
		return err
	}
	if !c.EnterValue() {
		return relabel(c.Err(), r)
	}
	if c.Kind() != k {
		return fieldErr(c, r)
	}
	c.Enter()
	return nil
}

// onSection moves c onto the section sec, of rank r: its descriptor must
// be that section's, unless r is rNone.
func onSection(c *stream.Cursor, sec []byte, r int) error {
	c.Reset(sec)
	if !c.Next() {
		if c.Err() != nil {
			return relabel(c.Err(), r)
		}
		return &amqpsax.Error{Op: sectionOps[r], Err: ErrNotSection}
	}
	if c.Kind() != amqpsax.KindDescribed {
		return &amqpsax.Error{Op: sectionOps[r], Code: c.Code(), HasCode: true, Err: ErrNotSection}
	}
	if d, _, _ := c.Descriptor(); r != rNone {
		if got, _ := rankOf(d); got != r {
			return otherSection(r, got, c.Offset(), c.Code())
		}
	}
	return nil
}

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
var DefaultHeader = Header{
	Durable:       composite.Header.DefaultUint(composite.HeaderDurable) == 1,
	Priority:      uint8(composite.Header.DefaultUint(composite.HeaderPriority)),
	FirstAcquirer: composite.Header.DefaultUint(composite.HeaderFirstAcquirer) == 1,
	DeliveryCount: uint32(composite.Header.DefaultUint(composite.HeaderDeliveryCount)),
}

// ParseHeader reads a header section, as Scan returned it; nil gives the
// defaults. Null fields take their defaults. A field of the wrong type is
// an ErrSectionType error with its offset in sec; a section of another
// type, ErrOtherSection. It does not allocate.
func ParseHeader(sec []byte) (Header, error) {
	if sec == nil {
		return DefaultHeader, nil
	}
	var c stream.Cursor
	if err := onSection(&c, sec, rHeader); err != nil {
		return DefaultHeader, err
	}
	return parseHeader(sec) // the table's rules, read with the wire primitives
}

// AppendHeader appends h as a header section (descriptor smallulong 0x70,
// a list8), leaving out trailing fields that have their default values
// and writing null for the others at their defaults, as Qpid Proton does.
// Priority's default is 4, not Header's zero value: start from
// DefaultHeader.
func AppendHeader(b []byte, h Header) []byte { return appendHeader(b, &h) }

// headerDefault is the header's defaults, as internal/protocol/composite's table
// gives them (DefaultHeader is a variable callers can change).
var headerDefault = DefaultHeader

// appendHeader is AppendHeader. Like appendProperties it writes every
// field, a null for one it leaves out, and then cuts the list after the
// last field written: the bytes of composite.Writer, without its
// bookkeeping per field. It writes at most 20 bytes.
func appendHeader(b []byte, h *Header) []byte {
	b = append(b, byte(amqpsax.CodeDescribed), byte(amqpsax.CodeSmallUlong), byte(amqpsax.DescriptorHeader),
		byte(amqpsax.CodeList8), 0, 0)
	start := len(b) - 3 // of the list
	end, n := len(b), 0 // after the last field written, and the fields to it
	d := &headerDefault
	if h.Durable != d.Durable {
		b = encode.AppendBool(b, h.Durable)
		end, n = len(b), 1
	} else {
		b = encode.AppendNull(b)
	}
	if h.Priority != d.Priority {
		b = encode.AppendUbyte(b, h.Priority)
		end, n = len(b), 2
	} else {
		b = encode.AppendNull(b)
	}
	if h.HasTTL {
		b = encode.AppendUint(b, h.TTL)
		end, n = len(b), 3
	} else {
		b = encode.AppendNull(b)
	}
	if h.FirstAcquirer != d.FirstAcquirer {
		b = encode.AppendBool(b, h.FirstAcquirer)
		end, n = len(b), 4
	} else {
		b = encode.AppendNull(b)
	}
	if h.DeliveryCount != d.DeliveryCount {
		b = encode.AppendUint(b, h.DeliveryCount)
		end, n = len(b), 5
	}
	if n == 0 {
		return append(b[:start], byte(amqpsax.CodeList0))
	}
	b = b[:end]
	b[start+1] = byte(end - start - 2) // at most 15
	b[start+2] = byte(n)
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

// AppendProperties appends p as a properties section (descriptor
// smallulong 0x73, a list), leaving out trailing absent fields: a nil byte
// field, an ID of Kind KindNull (or the zero ID), a time or group
// sequence whose Has flag is false. Address and string fields are written
// as strings, ContentType and ContentEncoding as symbols, as the spec
// types them; like package encode, it does not check their text. An ID of
// a kind other than ulong, uuid, binary or string is an error wrapping
// ErrSectionType, and nothing is appended. ParseProperties reads back
// what it writes.
func AppendProperties(b []byte, p Properties) ([]byte, error) {
	for i, id := range [2]*ID{&p.MessageID, &p.CorrelationID} {
		if !writableID(id.Kind) {
			name := composite.Properties.Fields[[2]int{composite.PropertiesMessageID, composite.PropertiesCorrelationID}[i]].Name
			return b, fmt.Errorf("message: AppendProperties: %s of kind %v: %w", name, id.Kind, ErrSectionType)
		}
	}
	return appendProperties(b, &p), nil
}

// appendProperties is AppendProperties of p, whose IDs are writable. It
// writes every field, a null for one left out, then cuts the list after
// the last field written: the bytes composite.Writer writes (nulls for the
// fields left out before a written one, nothing for trailing ones), for
// less work per field. The list begins as a list8, which the section is
// unless its fields pass 254 bytes; then they move up to make room for a
// list32's size and count. It writes at most 12 + 13*9 + 2*16 bytes more
// than the fields' lengths (Append's size bound).
func appendProperties(b []byte, p *Properties) []byte {
	b = append(b, byte(amqpsax.CodeDescribed), byte(amqpsax.CodeSmallUlong), byte(amqpsax.DescriptorProperties),
		byte(amqpsax.CodeList8), 0, 0)
	start := len(b) - 3 // of the list
	end, n := len(b), 0 // after the last field written, and the fields to it
	if hasID(&p.MessageID) {
		b = appendID(b, &p.MessageID)
		end, n = len(b), 1
	} else {
		b = encode.AppendNull(b)
	}
	if p.UserID != nil {
		b = encode.AppendBinary(b, p.UserID)
		end, n = len(b), 2
	} else {
		b = encode.AppendNull(b)
	}
	if p.To != nil {
		b = encode.AppendStringBytes(b, p.To)
		end, n = len(b), 3
	} else {
		b = encode.AppendNull(b)
	}
	if p.Subject != nil {
		b = encode.AppendStringBytes(b, p.Subject)
		end, n = len(b), 4
	} else {
		b = encode.AppendNull(b)
	}
	if p.ReplyTo != nil {
		b = encode.AppendStringBytes(b, p.ReplyTo)
		end, n = len(b), 5
	} else {
		b = encode.AppendNull(b)
	}
	if hasID(&p.CorrelationID) {
		b = appendID(b, &p.CorrelationID)
		end, n = len(b), 6
	} else {
		b = encode.AppendNull(b)
	}
	if p.ContentType != nil {
		b = encode.AppendSymbolBytes(b, p.ContentType)
		end, n = len(b), 7
	} else {
		b = encode.AppendNull(b)
	}
	if p.ContentEncoding != nil {
		b = encode.AppendSymbolBytes(b, p.ContentEncoding)
		end, n = len(b), 8
	} else {
		b = encode.AppendNull(b)
	}
	if p.HasAbsoluteExpiryTime {
		b = encode.AppendTimestamp(b, p.AbsoluteExpiryTime)
		end, n = len(b), 9
	} else {
		b = encode.AppendNull(b)
	}
	if p.HasCreationTime {
		b = encode.AppendTimestamp(b, p.CreationTime)
		end, n = len(b), 10
	} else {
		b = encode.AppendNull(b)
	}
	if p.GroupID != nil {
		b = encode.AppendStringBytes(b, p.GroupID)
		end, n = len(b), 11
	} else {
		b = encode.AppendNull(b)
	}
	if p.HasGroupSequence {
		b = encode.AppendUint(b, p.GroupSequence)
		end, n = len(b), 12
	} else {
		b = encode.AppendNull(b)
	}
	if p.ReplyToGroupID != nil {
		b = encode.AppendStringBytes(b, p.ReplyToGroupID)
		end, n = len(b), 13
	}
	if n == 0 {
		return append(b[:start], byte(amqpsax.CodeList0))
	}
	b = b[:end]
	if size := end - start - 2; size <= math.MaxUint8 { // the count's byte and the fields
		b[start+1] = byte(size)
		b[start+2] = byte(n)
		return b
	}
	return list8To32(b, start, n)
}

// list8To32 makes the list8 at start, the last value in b, of n elements
// a list32: its elements move up by six bytes.
func list8To32(b []byte, start, n int) []byte {
	end := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0)
	copy(b[start+9:], b[start+3:end])
	b[start] = byte(amqpsax.CodeList32)
	binary.BigEndian.PutUint32(b[start+1:], uint32(end-start-3+4))
	binary.BigEndian.PutUint32(b[start+5:], uint32(n))
	return b
}

// hasID reports whether id is present: of a kind other than null (or the
// zero ID's KindInvalid).
func hasID(id *ID) bool { return id.Kind != amqpsax.KindInvalid && id.Kind != amqpsax.KindNull }

// appendID appends a present message-id or correlation-id.
func appendID(b []byte, id *ID) []byte {
	switch id.Kind {
	case amqpsax.KindUlong:
		return encode.AppendUlong(b, id.Ulong)
	case amqpsax.KindUUID:
		return encode.AppendUUID(b, id.UUID)
	case amqpsax.KindBinary:
		return encode.AppendBinary(b, id.Bytes)
	}
	return encode.AppendStringBytes(b, id.Bytes)
}

// ParseProperties reads a properties section, as Scan returned it; nil
// gives no fields, and so do null fields. Byte fields are views into sec;
// it does not allocate. Address and string fields may be strings or
// symbols (peers use both); a field of another type is an ErrSectionType
// error with its offset in sec, and a section of another type
// ErrOtherSection.
func ParseProperties(sec []byte) (Properties, error) {
	var p Properties
	p.MessageID.Kind, p.CorrelationID.Kind = amqpsax.KindNull, amqpsax.KindNull
	if sec == nil {
		return p, nil
	}
	var c stream.Cursor
	if err := onSection(&c, sec, rProperties); err != nil {
		return p, err
	}
	return parseProperties(sec) // the table's rules, read with the wire primitives
}

// rankOfMap returns the rank of the map section sec by its descriptor
// (application-properties, annotations or footer), for its errors.
func rankOfMap(sec []byte) int {
	var c stream.Cursor
	c.Reset(sec)
	if c.Next() {
		if d, _, ok := c.Descriptor(); ok {
			if r, _ := rankOf(d); r != rBody {
				return r
			}
		}
	}
	return rNone
}

// Lookup returns the value of the entry whose key is a string or symbol
// equal to key in a map section — application-properties, delivery- or
// message-annotations, or footer, as Scan returned it — as a stream.Value:
// read it with its getters (v.Bytes(), v.Int() …), or Raw for the encoded
// bytes. The zero Value (Kind KindInvalid) means there is no such key;
// where there are two, the first counts (as for Map). Other entries'
// values are skipped by their size, not read; it does not allocate.
func Lookup(sec []byte, key string) (stream.Value, error) {
	return LookupKey(sec, SymbolKey(key))
}

// LookupKey is Lookup for any key: a symbol or string (Symbol), or a
// ulong (Ulong), as annotation keys may be.
func LookupKey(sec []byte, key Key) (stream.Value, error) {
	if sec == nil {
		return stream.Value{}, nil
	}
	if !key.isUlong {
		if v, ok := lookupFast(sec, key.name); ok {
			return v, nil
		}
	}
	return lookupCursor(sec, key)
}

// lookupCursor is LookupKey with the cursor, for any section.
func lookupCursor(sec []byte, key Key) (stream.Value, error) {
	var c stream.Cursor
	if err := open(&c, sec, rNone, amqpsax.KindMap); err != nil {
		return stream.Value{}, relabel(err, rankOfMap(sec))
	}
	var found bool
	if key.isUlong {
		found = c.SeekUlongKey(key.ulong)
	} else {
		found = c.SeekKey(key.name)
	}
	if !found {
		return stream.Value{}, relabel(c.Err(), rankOfMap(sec))
	}
	return c.Value(), nil
}

// BodyValues yields the value of each section of a body, as Scan returned
// it in Sections.Body: for a data section a binary (its Bytes are the
// payload), for an amqp-sequence section a list, for the amqp-value
// section its value, whatever its type. Each is a stream.Value, a view
// into body. (A body of several data sections or sequences is one
// message: the spec leaves how they join to the application, which
// commonly concatenates the payloads.) On a fault it yields the zero Value
// with the error, whose Op is "message/body", and stops; a value that is
// not a body section is ErrOtherSection (ErrNotSection when it is no
// section at all). A nil body yields nothing. It
// does not allocate.
func BodyValues(body []byte) iter.Seq2[stream.Value, error] {
	return func(yield func(stream.Value, error) bool) {
		var c stream.Cursor
		c.Reset(body)
		for c.Next() {
			d, _, ok := c.Descriptor()
			if r, _ := rankOf(d); !ok || r != rBody {
				yield(stream.Value{}, otherSection(rBody, r, c.Offset(), c.Code()))
				return
			}
			if !c.EnterValue() {
				break
			}
			v := c.Value()
			if !c.Exit() {
				break
			}
			if !yield(v, nil) {
				return
			}
		}
		if err := c.Err(); err != nil {
			yield(stream.Value{}, relabel(err, rBody))
		}
	}
}

// ErrKeyNotString is the error of Map for a key that is not a string or symbol.
var ErrKeyNotString = errors.New("map key is not a string or symbol")

// AnyMap returns the entries of a map section — application-properties,
// annotations, footer — as a Go map of string keys (strings and symbols
// alike) and plain Go values (see stream.Cursor.Any for their types). It
// is the convenience for when Go values are wanted; it allocates. A key
// of another type (annotations may have ulong keys; see LookupKey) is
// ErrKeyNotString. A nil section gives an empty map. Where a key appears twice
// (the spec forbids it, but nothing stops a peer), a string and a symbol
// of the same text included, the first entry counts, as it does for
// Lookup: a router that reads one property with Lookup and a consumer
// that reads them all with AnyMap agree on its value. Each value is read
// as stream.Cursor.Any reads it, within its bound on values per byte: a
// value beyond it (an array of many nulls in a few bytes) is an error
// wrapping stream.ErrAnyLimit.
func AnyMap(sec []byte) (map[string]any, error) {
	if sec == nil {
		return map[string]any{}, nil
	}
	var c stream.Cursor
	if err := open(&c, sec, rNone, amqpsax.KindMap); err != nil {
		return nil, relabel(err, rankOfMap(sec))
	}
	out := make(map[string]any, c.Count())
	for c.Next() {
		if k := c.Kind(); k != amqpsax.KindString && k != amqpsax.KindSymbol {
			r := rankOfMap(sec)
			return nil, &amqpsax.Error{Op: sectionOps[r], Offset: c.Offset(), Code: c.Code(), HasCode: true, Err: ErrKeyNotString}
		}
		key := string(c.Bytes())
		if !c.Next() {
			break
		}
		v, err := c.Any()
		if err != nil {
			return nil, relabel(err, rankOfMap(sec))
		}
		if _, dup := out[key]; !dup { // the first of equal keys counts, as for Lookup
			out[key] = v
		}
	}
	return out, relabel(c.Err(), rankOfMap(sec))
}
