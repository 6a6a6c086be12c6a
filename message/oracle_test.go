package message

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/internal/protocol/composite"
	"github.com/amqpsax/amqpsax/stream"
)

// The oracle of the header and properties readers: the same table
// (internal/protocol/composite) read through its cursor-based Reader, as package
// frame reads its performatives. ParseHeader and ParseProperties read with
// the wire primitives instead (fast.go), a third of the work; TestFastFields
// and FuzzMessage hold them to this on every input.

// parseHeaderCursor is ParseHeader through composite.Reader.
func parseHeaderCursor(sec []byte) (Header, error) {
	h := DefaultHeader
	if sec == nil {
		return h, nil
	}
	var rd composite.Reader
	if err := openFields(&rd, sec, rHeader, composite.Header); err != nil {
		return h, err
	}
	for rd.Next() {
		switch rd.I {
		case composite.HeaderDurable:
			h.Durable = rd.Bool()
		case composite.HeaderPriority:
			h.Priority = uint8(rd.C.Uint())
		case composite.HeaderTTL:
			h.TTL, h.HasTTL = rd.Uint32(), true
		case composite.HeaderFirstAcquirer:
			h.FirstAcquirer = rd.Bool()
		case composite.HeaderDeliveryCount:
			h.DeliveryCount = rd.Uint32()
		}
	}
	return h, readErr(&rd, rHeader)
}

// parsePropertiesCursor is ParseProperties through composite.Reader.
func parsePropertiesCursor(sec []byte) (Properties, error) {
	var p Properties
	p.MessageID.Kind, p.CorrelationID.Kind = amqpsax.KindNull, amqpsax.KindNull
	if sec == nil {
		return p, nil
	}
	var rd composite.Reader
	if err := openFields(&rd, sec, rProperties, composite.Properties); err != nil {
		return p, err
	}
	for rd.Next() {
		switch rd.I {
		case composite.PropertiesMessageID:
			readID(&rd.C, &p.MessageID)
		case composite.PropertiesUserID:
			p.UserID = rd.C.Bytes()
		case composite.PropertiesTo:
			p.To = rd.C.Bytes()
		case composite.PropertiesSubject:
			p.Subject = rd.C.Bytes()
		case composite.PropertiesReplyTo:
			p.ReplyTo = rd.C.Bytes()
		case composite.PropertiesCorrelationID:
			readID(&rd.C, &p.CorrelationID)
		case composite.PropertiesContentType:
			p.ContentType = rd.C.Bytes()
		case composite.PropertiesContentEncoding:
			p.ContentEncoding = rd.C.Bytes()
		case composite.PropertiesAbsoluteExpiryTime:
			p.AbsoluteExpiryTime, p.HasAbsoluteExpiryTime = rd.C.Timestamp(), true
		case composite.PropertiesCreationTime:
			p.CreationTime, p.HasCreationTime = rd.C.Timestamp(), true
		case composite.PropertiesGroupID:
			p.GroupID = rd.C.Bytes()
		case composite.PropertiesGroupSequence:
			p.GroupSequence, p.HasGroupSequence = rd.Uint32(), true
		case composite.PropertiesReplyToGroupID:
			p.ReplyToGroupID = rd.C.Bytes()
		}
	}
	return p, readErr(&rd, rProperties)
}

// openFields makes rd read the fields of section sec, of rank r, whose
// list the composite table spec describes: the header or properties.
func openFields(rd *composite.Reader, sec []byte, r int, spec *composite.Spec) error {
	if err := onSection(&rd.C, sec, r); err != nil {
		return err
	}
	if !rd.Fields(spec) {
		return readErr(rd, r)
	}
	return nil
}

// readErr is the error of rd, reading section r: a field of a kind its
// table does not take is ErrSectionType at that field.
func readErr(rd *composite.Reader, r int) error {
	if rd.Err == nil {
		return nil
	}
	return readFault(rd, r)
}

func readFault(rd *composite.Reader, r int) error {
	switch rd.Err {
	case composite.ErrCursor:
		return relabel(rd.C.Err(), r)
	case composite.ErrFault:
		f := &rd.Fault
		return &amqpsax.Error{Op: sectionOps[r], Offset: f.Off, Code: f.Code, HasCode: f.HasCode, Err: ErrSectionType}
	}
	return rd.Err
}

// readID reads into id, absent until then, the message-id or
// correlation-id the cursor is on, of one of the kinds the table takes:
// ulong, uuid, binary or string.
func readID(c *stream.Cursor, id *ID) {
	switch id.Kind = c.Kind(); id.Kind {
	case amqpsax.KindUlong:
		id.Ulong = c.Uint()
	case amqpsax.KindUUID:
		id.UUID = c.UUID()
	default:
		id.Bytes = c.Bytes()
	}
}

// The oracle of AppendHeader and AppendProperties: the same sections
// written through composite.Writer, as package frame writes its
// performatives. appendHeader and appendProperties write every field (a
// null for one left out) and cut the list after the last one written,
// with less work per field; TestAppendOracle holds them to this.

// appendHeaderWriter is AppendHeader through composite.Writer.
func appendHeaderWriter(b []byte, h Header) []byte {
	spec := composite.Header
	w := composite.Begin(b, spec)
	w.Bool(spec.OffBool(composite.HeaderDurable, h.Durable), h.Durable)
	w.Ubyte(spec.Off(composite.HeaderPriority, uint64(h.Priority)), h.Priority)
	w.Uint(h.HasTTL, h.TTL)
	w.Bool(spec.OffBool(composite.HeaderFirstAcquirer, h.FirstAcquirer), h.FirstAcquirer)
	w.Uint(spec.Off(composite.HeaderDeliveryCount, uint64(h.DeliveryCount)), h.DeliveryCount)
	return w.End(0, false)
}

// appendPropertiesWriter is AppendProperties through composite.Writer,
// for p's IDs of a kind it writes.
func appendPropertiesWriter(b []byte, p Properties) []byte {
	w := composite.Begin(b, composite.Properties)
	if w.Field(hasID(&p.MessageID)) {
		w.B = appendID(w.B, &p.MessageID)
	}
	w.Binary(p.UserID != nil, p.UserID)
	w.String(p.To != nil, p.To)
	w.String(p.Subject != nil, p.Subject)
	w.String(p.ReplyTo != nil, p.ReplyTo)
	if w.Field(hasID(&p.CorrelationID)) {
		w.B = appendID(w.B, &p.CorrelationID)
	}
	w.Symbol(p.ContentType != nil, p.ContentType)
	w.Symbol(p.ContentEncoding != nil, p.ContentEncoding)
	if w.Field(p.HasAbsoluteExpiryTime) {
		w.B = encode.AppendTimestamp(w.B, p.AbsoluteExpiryTime)
	}
	if w.Field(p.HasCreationTime) {
		w.B = encode.AppendTimestamp(w.B, p.CreationTime)
	}
	w.String(p.GroupID != nil, p.GroupID)
	w.Uint(p.HasGroupSequence, p.GroupSequence)
	w.String(p.ReplyToGroupID != nil, p.ReplyToGroupID)
	return w.End(0, false)
}
