package message

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/composite"
	"github.com/amqpsax/amqpsax/internal/wire"
)

// ParseHeader, ParseProperties and Decode read the header and properties
// with the wire primitives directly rather than through a stream.Cursor,
// by the rules of internal/composite's table (which kinds each field
// takes): a third of the work of the cursor-based composite.Reader, which
// TestFastFields and FuzzMessage hold them to on every input
// (oracle_test.go reads the same table with it).

// fieldReader reads the fields of a list section whose descriptor Scan
// has checked (or the entries of a map section): each field's offset in
// the section, its payload and, from its code, its kind.
type fieldReader struct {
	sec       []byte
	p, end    int // the next field; the end of the list's contents (end <= len(sec))
	left      int // fields still to read
	i         int // index of the field read last
	off, ps   int // its offset and its payload's: sec[ps:p]
	r         int // section rank, for errors
	malformed error
}

// code, kind and pay describe the field read last.
func (f *fieldReader) code() amqpsax.Code { return amqpsax.Code(f.sec[f.off]) }
func (f *fieldReader) kind() amqpsax.Kind { return wire.Table[f.sec[f.off]].Kind() }
func (f *fieldReader) pay() []byte        { return f.sec[f.ps:f.p:f.p] }

// stepVar8 marks in fieldStep a code whose payload has a one-byte size.
const stepVar8 = 0xff

// fieldStep gives, by code, how next's fast path steps over a field: its
// whole length for a plain fixed-width code (1 + width), stepVar8 for the
// 8-bit binary, string and symbol, 0 for the others (nextSlow's).
var fieldStep = func() (t [256]uint8) {
	for c := range t {
		e := wire.Table[c]
		switch op := e.Op(); {
		case op != wire.OpInvalid && op <= wire.OpLastPlain:
			t[c] = 1 + e.W()
		case op >= wire.OpBinary8 && op <= wire.OpSymbol8:
			t[c] = stepVar8
		}
	}
	return t
}()

// open starts reading the list of section sec, of rank r.
func (f *fieldReader) open(sec []byte, r int) error {
	f.sec, f.r, f.i = sec, r, -1
	if len(sec) < 2 || sec[0] != byte(amqpsax.CodeDescribed) {
		return &amqpsax.Error{Op: sectionOps[r], Err: ErrNotSection}
	}
	_, _, n, _ := wire.Descriptor(sec[1:])
	vp := 1 + n
	if n < 0 || vp >= len(sec) {
		return wire.NewErrorAt(sectionOps[r], wire.EOF, sec, len(sec))
	}
	c := amqpsax.Code(sec[vp])
	if wire.Table[c].Kind() != amqpsax.KindList {
		return &amqpsax.Error{Op: sectionOps[r], Offset: vp, Code: c, HasCode: true, Err: ErrSectionType}
	}
	h, size, count := wire.Body(c, sec[vp+1:])
	if h < 0 {
		return wire.NewErrorAt(sectionOps[r], wire.Status(h), sec, vp)
	}
	f.p, f.end, f.left = vp+1+h, vp+1+h+size, count
	return nil
}

// next reads the next field; false at the list's end or on a fault
// (malformed then says which). Plain fixed-width codes and the 8-bit
// binary, string and symbol, which nearly every field is, take the fast
// path, by fieldStep; the rest, and every fault, nextSlow.
func (f *fieldReader) next() bool {
	if p := f.p; f.left > 0 && p < f.end {
		ps, q := p+1, p+int(fieldStep[f.sec[p]])
		if q == p+stepVar8 && p+1 < f.end {
			ps, q = p+2, p+2+int(f.sec[p+1])
		}
		if q > p && q <= f.end {
			f.left--
			f.i++
			f.off, f.ps, f.p = p, ps, q
			return true
		}
	}
	return f.nextSlow()
}

// nextSlow is next for any code, and names a fault.
func (f *fieldReader) nextSlow() bool {
	if f.left == 0 {
		if f.p != f.end {
			f.malformed = wire.NewErrorAt(sectionOps[f.r], wire.SizeMismatch, f.sec, f.p)
		}
		return false
	}
	f.left--
	f.i++
	f.off = f.p
	if f.p >= f.end {
		f.malformed = wire.NewErrorAt(sectionOps[f.r], wire.Overrun, f.sec, f.p)
		return false
	}
	c := amqpsax.Code(f.sec[f.p])
	if c == amqpsax.CodeDescribed {
		// No field of these sections is described: skip it whole for
		// the error (or for a field past the ones defined).
		n, off := wire.Skip(f.sec[f.p:f.end])
		if n < 0 {
			f.malformed = wire.NewErrorAt(sectionOps[f.r], wire.Cut(true), f.sec, f.p+off)
			if wire.Status(n) != wire.EOF {
				f.malformed = wire.NewErrorAt(sectionOps[f.r], wire.Status(n), f.sec, f.p+off)
			}
			return false
		}
		f.p += n
		f.ps = f.p // no payload
		return true
	}
	e := wire.Table[c]
	if e.Cat() == wire.Invalid {
		f.malformed = wire.NewErrorAt(sectionOps[f.r], wire.BadCode, f.sec, f.p)
		return false
	}
	h, size, count := wire.Body(c, f.sec[f.p+1:f.end])
	if h < 0 {
		st := wire.Status(h)
		if st == wire.EOF {
			st = wire.Overrun // the list is complete: nothing can mend it
		}
		f.malformed = wire.NewErrorAt(sectionOps[f.r], st, f.sec, f.p)
		return false
	}
	if e.Cat() == wire.Array {
		body := f.sec[f.p+1+h : f.p+1+h+size]
		if _, cl, off, _ := wire.ArrayCtor(body, count); cl < 0 {
			f.malformed = wire.NewErrorAt(sectionOps[f.r], wire.Status(cl), f.sec, f.p+1+h+off)
			return false
		}
	}
	f.ps = f.p + 1 + h
	f.p = f.ps + size
	return true
}

// wrong is the error of a field of the wrong type.
func (f *fieldReader) wrong() error {
	return wrongField(f.r, f.off, f.code())
}

// parseHeader is ParseHeader for a section Scan found.
func parseHeader(sec []byte) (Header, error) {
	var h Header
	err := readHeader(sec, &h)
	return h, err
}

// readHeader is parseHeader into *hp, which it overwrites.
func readHeader(sec []byte, hp *Header) error {
	*hp = DefaultHeader
	var sp [composite.HeaderFields]span
	if n, ok := listSpans(sec, sp[:]); ok {
		for i := range n {
			c := amqpsax.Code(sec[sp[i].off])
			if k := wire.Table[c].Kind(); k != amqpsax.KindNull {
				if !composite.Header.Fields[i].Takes(k) { // the table says which kinds
					return wrongField(rHeader, sp[i].off, c)
				}
				setHeader(hp, i, c, sec[sp[i].ps:sp[i].q:sp[i].q])
			}
		}
		return nil
	}
	var f fieldReader
	if err := f.open(sec, rHeader); err != nil {
		return err
	}
	for f.next() {
		k := f.kind()
		if k == amqpsax.KindNull || f.i >= len(composite.Header.Fields) {
			continue
		}
		if !composite.Header.Fields[f.i].Takes(k) {
			return f.wrong()
		}
		setHeader(hp, f.i, f.code(), f.pay())
	}
	return f.malformed
}

// setHeader sets field i of *h from its code and payload, of a kind the
// table allows.
func setHeader(h *Header, i int, c amqpsax.Code, pay []byte) {
	switch i {
	case composite.HeaderDurable:
		h.Durable = wire.Bool(c, pay)
	case composite.HeaderPriority:
		h.Priority = pay[0]
	case composite.HeaderTTL:
		h.TTL, h.HasTTL = uint32(wire.Uint(c, pay)), true
	case composite.HeaderFirstAcquirer:
		h.FirstAcquirer = wire.Bool(c, pay)
	case composite.HeaderDeliveryCount:
		h.DeliveryCount = uint32(wire.Uint(c, pay))
	}
}

// span is where a field of a list section lies: its offset, and its
// payload sec[ps:q].
type span struct{ off, ps, q int }

// listSpans finds the fields of the list section sec (its descriptor
// checked by Scan) in one tight loop by fieldStep, as fieldReader's fast
// path steps: n of them, recorded in sp. It reports false when the list
// needs fieldReader — a descriptor other than a smallulong, a list32, a
// field fieldStep does not step (a bool, a 32-bit size, a compound, a
// described value), any fault, or more fields than sp holds — which then
// reads it again, with the same result and errors as ever.
func listSpans(sec []byte, sp []span) (n int, ok bool) {
	vp := 1 + 2 // the descriptor as Proton and nearly every peer write it
	if len(sec) <= vp || sec[1] != byte(amqpsax.CodeSmallUlong) {
		return 0, false
	}
	var p, end int
	switch amqpsax.Code(sec[vp]) {
	case amqpsax.CodeList0:
		return 0, vp+1 == len(sec)
	case amqpsax.CodeList8:
		if vp+2 >= len(sec) {
			return 0, false
		}
		p, end, n = vp+3, vp+2+int(sec[vp+1]), int(sec[vp+2])
	default:
		return 0, false
	}
	if n > len(sp) || end > len(sec) {
		return 0, false
	}
	for i := range n {
		if p >= end { // also catches a field that ran past the end
			return 0, false
		}
		ps, q := p+1, p+int(fieldStep[sec[p]])
		if q == p+stepVar8 {
			if p+1 >= end {
				return 0, false
			}
			ps, q = p+2, p+2+int(sec[p+1])
		}
		if q == p {
			return 0, false
		}
		sp[i] = span{p, ps, q}
		p = q
	}
	return n, p == end
}

// wrongField is the error of a field of the wrong type at off, of code c,
// in the section of rank r.
func wrongField(r, off int, c amqpsax.Code) error {
	return &amqpsax.Error{Op: sectionOps[r], Offset: off, Code: c, HasCode: true, Err: ErrSectionType}
}

// parseProperties is ParseProperties for a section Scan found.
func parseProperties(sec []byte) (Properties, error) {
	var p Properties
	err := readProperties(sec, &p)
	return p, err
}

// readProperties is parseProperties into *pp, which it overwrites.
func readProperties(sec []byte, pp *Properties) error {
	*pp = Properties{}
	pp.MessageID.Kind, pp.CorrelationID.Kind = amqpsax.KindNull, amqpsax.KindNull
	var sp [composite.PropertiesFields]span
	if n, ok := listSpans(sec, sp[:]); ok {
		for i := range n {
			c := amqpsax.Code(sec[sp[i].off])
			if k := wire.Table[c].Kind(); k != amqpsax.KindNull {
				if !composite.Properties.Fields[i].Takes(k) { // the table says which kinds
					return wrongField(rProperties, sp[i].off, c)
				}
				setProperty(pp, i, c, k, sec[sp[i].ps:sp[i].q:sp[i].q])
			}
		}
		return nil
	}
	var f fieldReader
	if err := f.open(sec, rProperties); err != nil {
		return err
	}
	for f.next() {
		k := f.kind()
		if k == amqpsax.KindNull || f.i >= len(composite.Properties.Fields) {
			continue
		}
		if !composite.Properties.Fields[f.i].Takes(k) {
			return f.wrong()
		}
		setProperty(pp, f.i, f.code(), k, f.pay())
	}
	return f.malformed
}

// setProperty sets field i of *p from its code, kind and payload, of a
// kind the table allows.
func setProperty(p *Properties, i int, c amqpsax.Code, k amqpsax.Kind, pay []byte) {
	switch i {
	case composite.PropertiesMessageID, composite.PropertiesCorrelationID:
		id := ID{Kind: k}
		switch k {
		case amqpsax.KindUlong:
			id.Ulong = wire.Uint(c, pay)
		case amqpsax.KindUUID:
			id.UUID = [16]byte(pay)
		default: // binary, string
			id.Bytes = pay
		}
		if i == composite.PropertiesMessageID {
			p.MessageID = id
		} else {
			p.CorrelationID = id
		}
	case composite.PropertiesUserID:
		p.UserID = pay
	case composite.PropertiesTo:
		p.To = pay
	case composite.PropertiesSubject:
		p.Subject = pay
	case composite.PropertiesReplyTo:
		p.ReplyTo = pay
	case composite.PropertiesContentType:
		p.ContentType = pay
	case composite.PropertiesContentEncoding:
		p.ContentEncoding = pay
	case composite.PropertiesAbsoluteExpiryTime:
		p.AbsoluteExpiryTime, p.HasAbsoluteExpiryTime = wire.Timestamp(pay), true
	case composite.PropertiesCreationTime:
		p.CreationTime, p.HasCreationTime = wire.Timestamp(pay), true
	case composite.PropertiesGroupID:
		p.GroupID = pay
	case composite.PropertiesGroupSequence:
		p.GroupSequence, p.HasGroupSequence = uint32(wire.Uint(c, pay)), true
	case composite.PropertiesReplyToGroupID:
		p.ReplyToGroupID = pay
	}
}
