package message

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/protocol/composite"
	"github.com/amqpsax/amqpsax/internal/wire"
	"github.com/amqpsax/amqpsax/stream"
)

// ParseHeader, ParseProperties and Decode read the header and properties
// with the wire primitives directly rather than through a stream.Cursor,
// by the rules of internal/protocol/composite's table (which kinds each field
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

// fieldStep gives, by code, how the tight loops (fieldReader.next,
// fields.fast, flat) step over a value: its whole length for a plain
// fixed-width code (1 + width), stepVar8 for the 8-bit binary, string and
// symbol, 0 for the others, which they leave to slower paths.
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

// lookupFast is LookupKey for a string or symbol key in a map section
// whose entries, up to the one it finds (all of them when none
// matches), take fieldReader's fast path: keys and values of plain
// fixed-width codes and of 8-bit binaries, strings and symbols, as
// nearly every application property and annotation is. It reads them
// with the wire primitives, a fifth of the cursor's work. ok is false
// for anything else (another code, a size that does not add up, any
// fault): LookupKey then reads the section with the cursor, so that
// what it returns, errors included, is always the cursor's.
func lookupFast(sec []byte, key string) (v stream.Value, ok bool) {
	if len(sec) < 2 || sec[0] != byte(amqpsax.CodeDescribed) {
		return v, false
	}
	_, _, n, dok := wire.Descriptor(sec[1:])
	vp := 1 + n
	if !dok || vp >= len(sec) {
		return v, false
	}
	c := amqpsax.Code(sec[vp])
	if wire.Table[c].Kind() != amqpsax.KindMap {
		return v, false
	}
	h, size, count := wire.Body(c, sec[vp+1:])
	if h < 0 || count&1 != 0 {
		return v, false
	}
	p, end := vp+1+h, vp+1+h+size
	for ; count > 0; count -= 2 {
		kps, kq := stepField(sec, p, end)
		if kq < 0 {
			return v, false
		}
		vq := kq
		if _, vq = stepField(sec, kq, end); vq < 0 {
			return v, false
		}
		k := wire.Table[sec[p]].Kind()
		if (k == amqpsax.KindString || k == amqpsax.KindSymbol) && string(sec[kps:kq]) == key {
			v, err := stream.ParseValue(sec[kq:vq])
			return v, err == nil
		}
		p = vq
	}
	return v, p == end
}

// stepField steps over the value at sec[p:end] as fieldReader.next's
// fast path does: its payload's offset and its end, or q < 0 for a
// value that path leaves to the slow one (or that does not fit).
func stepField(sec []byte, p, end int) (ps, q int) {
	if p >= end {
		return 0, -1
	}
	ps, q = p+1, p+int(fieldStep[sec[p]])
	if q == p+stepVar8 && p+1 < end {
		ps, q = p+2, p+2+int(sec[p+1])
	}
	if q <= p || q > end {
		return 0, -1
	}
	return ps, q
}

// parseHeader is ParseHeader for a section Scan found.
func parseHeader(sec []byte) (Header, error) {
	var h Header
	err := readHeader(sec, &h)
	return h, err
}

// readHeader is parseHeader into *hp, which it overwrites.
func readHeader(sec []byte, hp *Header) error {
	var f fields
	if err := f.read(sec, rHeader, composite.Header, fieldCodes[0][:composite.HeaderFields]); err != nil {
		return err
	}
	c, pay := &f.code, &f.pay
	*hp = headerDefault
	if c[composite.HeaderDurable] != 0 {
		hp.Durable = wire.Bool(amqpsax.Code(c[composite.HeaderDurable]), pay[composite.HeaderDurable])
	}
	if c[composite.HeaderPriority] != 0 {
		hp.Priority = pay[composite.HeaderPriority][0]
	}
	if c[composite.HeaderTTL] != 0 {
		hp.TTL, hp.HasTTL = uint32(wire.Uint(amqpsax.Code(c[composite.HeaderTTL]), pay[composite.HeaderTTL])), true
	}
	if c[composite.HeaderFirstAcquirer] != 0 {
		hp.FirstAcquirer = wire.Bool(amqpsax.Code(c[composite.HeaderFirstAcquirer]), pay[composite.HeaderFirstAcquirer])
	}
	if c[composite.HeaderDeliveryCount] != 0 {
		hp.DeliveryCount = uint32(wire.Uint(amqpsax.Code(c[composite.HeaderDeliveryCount]), pay[composite.HeaderDeliveryCount]))
	}
	return nil
}

// fields holds the fields of a header or properties section that read
// found present (not null), each by its index: its code (0 when absent)
// and its payload.
type fields struct {
	code [composite.PropertiesFields]byte
	pay  [composite.PropertiesFields][]byte
}

// read finds the fields of the list section sec, of rank r, whose fields
// spec types; codes gives, for each field spec defines, the codes the
// fast path reads it from (fieldCodes).
//
// The fast path reads the list as nearly every peer writes it — a
// smallulong descriptor, a list8 or list0 of no more fields than the
// spec's, every field a code fieldStep steps over and of a kind the table
// allows — in one tight loop that calls nothing. At the first field it
// cannot read that way, read starts again with fieldReader, which reads
// any list and names any fault: the same fields, the same errors (both
// read in order and stop at the first fault).
func (f *fields) read(sec []byte, r int, spec *composite.Spec, codes [][256]bool) error {
	if f.fast(sec, codes) {
		return nil
	}
	*f = fields{}
	var fr fieldReader
	if err := fr.open(sec, r); err != nil {
		return err
	}
	for fr.next() {
		k := fr.kind()
		if k == amqpsax.KindNull || fr.i >= len(spec.Fields) {
			continue
		}
		if !spec.Fields[fr.i].Takes(k) { // the table says which kinds
			return fr.wrong()
		}
		f.code[fr.i], f.pay[fr.i] = byte(fr.code()), fr.pay()
	}
	return fr.malformed
}

// fast is read's fast path; false when fieldReader must read sec.
func (f *fields) fast(sec []byte, codes [][256]bool) bool {
	const vp = 1 + 2 // after the descriptor
	if len(sec) <= vp+2 || sec[1] != byte(amqpsax.CodeSmallUlong) || sec[vp] != byte(amqpsax.CodeList8) {
		return len(sec) == vp+1 && sec[1] == byte(amqpsax.CodeSmallUlong) && sec[vp] == byte(amqpsax.CodeList0)
	}
	p, end, n := vp+3, vp+2+int(sec[vp+1]), int(sec[vp+2])
	if end > len(sec) || n > len(codes) {
		return false
	}
	codes = codes[:n]
	for i := range codes {
		if p >= end { // also a field that ran past the end
			return false
		}
		c := sec[p]
		if !codes[i][c] { // a kind the field takes, and a code fieldStep steps over
			return false
		}
		ps, q := p+1, p+int(fieldStep[c])
		if q == p+stepVar8 {
			if p+1 >= end {
				return false
			}
			ps, q = p+2, p+2+int(sec[p+1])
		}
		if q > end {
			return false
		}
		if c != byte(amqpsax.CodeNull) && i < len(f.code) {
			f.code[i], f.pay[i] = c, sec[ps:q:q]
		}
		p = q
	}
	return p == end
}

// fieldCodes gives, for each field of the header ([0]) and the
// properties ([1]), the codes fields.fast reads it from: null, and those
// fieldStep steps over whose kind the table allows.
var fieldCodes = func() (t [2][composite.PropertiesFields][256]bool) {
	for x, spec := range [2]*composite.Spec{composite.Header, composite.Properties} {
		for i := range spec.Fields {
			for c := range 256 {
				k := wire.Table[c].Kind()
				if fieldStep[c] != 0 && (k == amqpsax.KindNull || spec.Fields[i].Takes(k)) {
					t[x][i][c] = true
				}
			}
		}
	}
	return t
}()

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
	var f fields
	if err := f.read(sec, rProperties, composite.Properties, fieldCodes[1][:]); err != nil {
		return err
	}
	c, pay := &f.code, &f.pay
	*pp = Properties{}
	setID(&pp.MessageID, c[composite.PropertiesMessageID], pay[composite.PropertiesMessageID])
	pp.UserID = pay[composite.PropertiesUserID]
	pp.To = pay[composite.PropertiesTo]
	pp.Subject = pay[composite.PropertiesSubject]
	pp.ReplyTo = pay[composite.PropertiesReplyTo]
	setID(&pp.CorrelationID, c[composite.PropertiesCorrelationID], pay[composite.PropertiesCorrelationID])
	pp.ContentType = pay[composite.PropertiesContentType]
	pp.ContentEncoding = pay[composite.PropertiesContentEncoding]
	pp.GroupID = pay[composite.PropertiesGroupID]
	pp.ReplyToGroupID = pay[composite.PropertiesReplyToGroupID]
	if c[composite.PropertiesAbsoluteExpiryTime] != 0 {
		pp.AbsoluteExpiryTime, pp.HasAbsoluteExpiryTime = wire.Timestamp(pay[composite.PropertiesAbsoluteExpiryTime]), true
	}
	if c[composite.PropertiesCreationTime] != 0 {
		pp.CreationTime, pp.HasCreationTime = wire.Timestamp(pay[composite.PropertiesCreationTime]), true
	}
	if gs := c[composite.PropertiesGroupSequence]; gs != 0 {
		pp.GroupSequence, pp.HasGroupSequence = uint32(wire.Uint(amqpsax.Code(gs), pay[composite.PropertiesGroupSequence])), true
	}
	return nil
}

// setID sets the zero *id to the message-id or correlation-id of code c
// (0: absent) and payload pay, of a kind the table allows.
func setID(id *ID, c byte, pay []byte) {
	if c == 0 {
		id.Kind = amqpsax.KindNull
		return
	}
	id.Kind = wire.Table[c].Kind()
	switch id.Kind {
	case amqpsax.KindUlong:
		id.Ulong = wire.Uint(amqpsax.Code(c), pay)
	case amqpsax.KindUUID:
		id.UUID = [16]byte(pay)
	default: // binary, string
		id.Bytes = pay
	}
}
