package frame

import (
	"errors"
	"io"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/stream"
)

// Causes of the errors the Parse functions return, for errors.Is. They
// arrive as an *amqpsax.Error (Op "frame", Offset in the body) whose Err is
// a *FieldError wrapping one of them. A malformed encoding gives the
// *amqpsax.Error the cursor reports, with Op "frame" and its offset in the
// body; since a frame body is complete, a value that runs past its end is
// amqpsax.ErrOverrun, never io.ErrUnexpectedEOF: no more bytes can mend
// a frame. Bytes after a performative that carries no payload are
// amqpsax.ErrTrailing. Those causes wrap amqpsax.ErrMalformed;
// ErrPerformative, ErrFieldType, ErrMissingField and ErrFieldValue do not.
var (
	// ErrPerformative: the body does not hold the performative asked for
	// (or the field does not hold the composite type the spec requires).
	ErrPerformative = errors.New("not the expected performative")
	// ErrFieldType: a field holds a value of another type than the spec's.
	ErrFieldType = errors.New("field of the wrong type")
	// ErrMissingField: a mandatory field is absent or null.
	ErrMissingField = errors.New("mandatory field missing")
	// ErrFieldValue: a field of a restricted type holds a value that is
	// not one of the spec's choices (a sender settle mode of 3, say).
	ErrFieldValue = errors.New("field value not among the spec's choices")
)

// FieldError says which field of which composite type is at fault, and
// how. It is the Err of the *amqpsax.Error a Parse function returns.
type FieldError struct {
	Type  string // the composite type, as the spec names it: "transfer", "source", …
	Field string // the field, as the spec names it; "" when the fault is the composite itself
	Want  string // what the spec requires there
	Found string // what the input holds
	Err   error  // ErrPerformative, ErrFieldType, ErrMissingField or ErrFieldValue
}

// Error formats the fault as "transfer field delivery-id: uint expected,
// found string".
func (e *FieldError) Error() string {
	s := e.Type
	if e.Field != "" {
		s += " field " + e.Field
	}
	switch e.Err {
	case ErrMissingField:
		return s + ": mandatory field missing"
	case ErrFieldValue:
		return s + ": " + e.Found + " is not among the spec's choices"
	}
	return s + ": " + e.Want + " expected, found " + e.Found
}

// Unwrap returns the cause.
func (e *FieldError) Unwrap() error { return e.Err }

// parser reads one composite value through a stream.Cursor: the
// described value, its list, then its fields one at a time, each checked
// against the spec's type. Every composite is read by its own parser (a
// Cursor declared where it is used holds four levels without allocating;
// a composite needs three).
type parser struct {
	c    stream.Cursor
	spec *compositeSpec
	fs   Fields // what was read: copied into the composite's Fields by done
	base int    // offset of the cursor's data in the body, for errors
	list int    // offset of the list, for errors
	raw  []byte // the encoding of the current field, for maps, symbols and composites
	i    Field  // the current field, set by next
	err  error
}

func (p *parser) fail(off int, code amqpsax.Code, hasCode bool, fe *FieldError) bool {
	if p.err == nil {
		p.err = &amqpsax.Error{Op: "frame", Offset: p.base + off, Code: code, HasCode: hasCode, Err: fe}
	}
	return false
}

// cursorErr records the cursor's error, rebased: its offset in the body
// and Op "frame".
func (p *parser) cursorErr() bool {
	if p.err != nil {
		return false
	}
	if err := p.c.Err(); err != nil {
		p.err = rebase(err, p.base)
		return false
	}
	return true
}

// rebase returns the cursor's error err as this package reports it: with
// Op "frame" and its offset in the body, the cursor's data starting at
// base. A cut is an overrun: the body is a whole frame's, so a value that
// runs past its end can never be completed.
func rebase(err error, base int) error {
	var ae *amqpsax.Error
	if errors.As(err, &ae) {
		e := *ae
		e.Op, e.Offset = "frame", base+ae.Offset
		if e.Err == io.ErrUnexpectedEOF {
			e.Err = amqpsax.ErrOverrun
		}
		return &e
	}
	return err
}

// trailing checks that the performative read from body ended at end: bytes
// after one that carries no payload are a fault.
func trailing(body []byte, end int, name string) error {
	if end == len(body) {
		return nil
	}
	return &amqpsax.Error{Op: "frame", Offset: end, Err: &FieldError{Type: name, Want: "end of frame",
		Found: u64(uint64(len(body)-end)) + " more bytes", Err: amqpsax.ErrTrailing}}
}

// describedName names the descriptor found, for errors.
func describedName(d amqpsax.Descriptor, sym []byte) string {
	if sym != nil && d == 0 {
		return "descriptor " + string(sym)
	}
	return d.String()
}

// open reads the described value at the start of data, whose offset in
// the body is base, and returns its descriptor and the length of its
// encoding. The cursor is left on it.
func (p *parser) open(data []byte, base int, want string) (d amqpsax.Descriptor, end int, ok bool) {
	p.base = base
	p.c.Reset(data)
	if !p.c.Next() {
		if p.cursorErr() { // no value at all: an empty body
			p.fail(0, 0, false, &FieldError{Type: want, Want: want, Found: "empty body", Err: ErrPerformative})
		}
		return 0, 0, false
	}
	if p.c.Kind() != amqpsax.KindDescribed {
		return 0, 0, p.fail(p.c.Offset(), p.c.Code(), true,
			&FieldError{Type: want, Want: want, Found: p.c.Kind().String(), Err: ErrPerformative})
	}
	d, sym, ok := p.c.Descriptor()
	if !ok {
		if p.c.Raw() == nil { // cut or malformed
			return 0, 0, p.cursorErr()
		}
		return 0, 0, p.fail(p.c.Offset(), p.c.Code(), true,
			&FieldError{Type: want, Want: want, Found: "descriptor of another type", Err: ErrPerformative})
	}
	raw := p.c.Raw()
	if raw == nil {
		return 0, 0, p.cursorErr()
	}
	_ = sym // an undefined symbolic descriptor is 0, which no type has
	return d, len(raw), true
}

// wrong reports the described value the cursor is on as not the
// composite wanted.
func (p *parser) wrong(want string, d amqpsax.Descriptor) bool {
	_, sym, _ := p.c.Descriptor()
	return p.fail(p.c.Offset(), p.c.Code(), true,
		&FieldError{Type: want, Want: want, Found: describedName(d, sym), Err: ErrPerformative})
}

// fields enters the described value the cursor is on and its list, to
// read the fields of spec.
func (p *parser) fields(spec *compositeSpec) bool {
	p.spec = spec
	if !p.c.Enter() || !p.c.Next() || !p.c.Next() { // the descriptor, then the value
		return p.cursorErr()
	}
	if p.c.Kind() != amqpsax.KindList {
		return p.fail(p.c.Offset(), p.c.Code(), true,
			&FieldError{Type: spec.name, Want: "list", Found: p.c.Kind().String(), Err: ErrFieldType})
	}
	p.list = p.c.Offset()
	p.fs.n = uint8(min(p.c.Count(), len(spec.fields)))
	p.fs.wide = p.c.Code() == amqpsax.CodeList32
	if !p.c.Enter() {
		return p.cursorErr()
	}
	return true
}

// next moves to the next field that is present and not null, checks it
// against the spec, marks it in p.fs and sets p.i to its position. It returns
// false at the end of the list (extra fields, which a later version of
// the spec may define, are skipped) or on error. For a map, a symbol
// field and a composite, p.raw is the field's encoding.
func (p *parser) next() bool {
	for p.err == nil && p.c.Next() {
		i := p.c.Index()
		if i >= len(p.spec.fields) || p.c.Kind() == amqpsax.KindNull {
			continue
		}
		fs := &p.spec.fields[i]
		if !p.check(fs) {
			return false
		}
		p.fs.set |= 1 << i
		p.i = Field(i)
		return true
	}
	p.cursorErr()
	return false
}

// check checks the value the cursor is on against field fs. Maps and
// arrays of symbols are walked (their keys and values, their elements),
// so that reading them later cannot fail.
func (p *parser) check(fs *fieldSpec) bool {
	k := p.c.Kind()
	switch {
	case k == fs.kind:
	case fs.multiple && k == amqpsax.KindArray && p.c.ElemKind() == fs.kind:
	case fs.multiple && k == amqpsax.KindList:
		return p.symbolList(fs)
	default:
		return p.fieldType(fs)
	}
	switch k {
	case amqpsax.KindMap, amqpsax.KindArray, amqpsax.KindDescribed:
		if p.raw = p.c.Raw(); p.raw == nil {
			return p.cursorErr()
		}
		if k == amqpsax.KindDescribed {
			return true
		}
		if !p.c.Enter() {
			return p.cursorErr()
		}
		for p.c.Next() {
		}
		if !p.cursorErr() {
			return false
		}
		p.c.Exit()
	case amqpsax.KindSymbol:
		if fs.multiple {
			p.raw = p.c.Raw()
		}
	}
	return true
}

// symbolList checks a list given where the spec wants a symbol or an
// array of symbols: Qpid Proton's python binding writes a Python list of
// symbols as one (doc/peers.md), and deployed peers accept it, so a list
// whose elements are all symbols is taken (and kept raw for Symbols);
// any other element is a field of the wrong type.
func (p *parser) symbolList(fs *fieldSpec) bool {
	off, code := p.c.Offset(), p.c.Code()
	if p.raw = p.c.Raw(); p.raw == nil || !p.c.Enter() {
		return p.cursorErr()
	}
	for p.c.Next() {
		if p.c.Kind() != amqpsax.KindSymbol {
			return p.fail(off, code, true, &FieldError{Type: p.spec.name, Field: fs.name, Want: fs.want,
				Found: "list holding " + p.c.Kind().String(), Err: ErrFieldType})
		}
	}
	if !p.cursorErr() {
		return false
	}
	p.c.Exit()
	return true
}

func (p *parser) fieldType(fs *fieldSpec) bool {
	found := p.c.Kind().String()
	if p.c.Kind() == amqpsax.KindArray {
		found = "array of " + p.c.ElemKind().String()
	}
	return p.fail(p.c.Offset(), p.c.Code(), true,
		&FieldError{Type: p.spec.name, Field: fs.name, Want: fs.want, Found: found, Err: ErrFieldType})
}

// badValue reports the current field's value as not among the spec's
// choices.
func (p *parser) badValue(i Field, found string) bool {
	fs := &p.spec.fields[i]
	return p.fail(p.c.Offset(), p.c.Code(), true,
		&FieldError{Type: p.spec.name, Field: fs.name, Want: fs.want, Found: found, Err: ErrFieldValue})
}

// done checks the mandatory fields, once the list has been read, and
// stores in f what was read. (The parser keeps its own Fields until then:
// a pointer to the caller's kept in the parser would move the caller's
// value to the heap.)
func (p *parser) done(f *Fields) error {
	*f = p.fs
	if p.err != nil {
		return p.err
	}
	if p.spec.mand&^p.fs.set == 0 {
		return nil
	}
	for i, fs := range p.spec.fields {
		if fs.mandatory && !p.fs.Has(Field(i)) {
			p.fail(p.list, 0, false, &FieldError{Type: p.spec.name, Field: fs.name, Want: fs.want, Err: ErrMissingField})
			return p.err
		}
	}
	return nil
}

// Value readers for the field the cursor is on, once next has checked
// its kind.

func (p *parser) uint32() uint32 { return uint32(p.c.Uint()) }
func (p *parser) bytes() []byte  { return p.c.Bytes() }
func (p *parser) bool() bool     { return p.c.Bool() }

func (p *parser) sndSettle() SenderSettleMode {
	v := p.c.Uint()
	if v > uint64(SndMixed) {
		p.badValue(p.i, "sender settle mode "+u64(v))
	}
	return SenderSettleMode(v)
}

func (p *parser) rcvSettle() ReceiverSettleMode {
	v := p.c.Uint()
	if v > uint64(RcvSecond) {
		p.badValue(p.i, "receiver settle mode "+u64(v))
	}
	return ReceiverSettleMode(v)
}

func (p *parser) durability() TerminusDurability {
	v := p.c.Uint()
	if v > uint64(DurabilityUnsettledState) {
		p.badValue(p.i, "terminus durability "+u64(v))
	}
	return TerminusDurability(v)
}

func (p *parser) expiry() ExpiryPolicy {
	v, ok := lookupExpiry(p.c.Bytes())
	if !ok {
		p.badValue(p.i, "expiry policy "+string(p.c.Bytes()))
	}
	return v
}

func u64(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return string(b[i:])
}

// Performative returns the descriptor of the performative body holds
// (amqpsax.DescriptorTransfer, DescriptorSASLInit, …), whether it is
// encoded as a ulong or a symbol, without reading its fields; 0 and no
// error for an empty body (a heartbeat). A body that does not start with
// a described value is an error wrapping ErrPerformative. A numeric
// descriptor this package does not know is returned as it is, a symbolic
// one the spec does not define as 0: check the result with a switch.
func Performative(body []byte) (amqpsax.Descriptor, error) {
	if len(body) == 0 {
		return 0, nil
	}
	var c stream.Cursor
	c.Reset(body)
	if !c.Next() {
		return 0, rebase(c.Err(), 0)
	}
	d, _, ok := c.Descriptor()
	if !ok {
		if c.Kind() == amqpsax.KindDescribed && c.Raw() == nil { // cut or malformed
			return 0, rebase(c.Err(), 0)
		}
		found := c.Kind().String()
		if c.Kind() == amqpsax.KindDescribed {
			found = "descriptor of another type"
		}
		return 0, &amqpsax.Error{Op: "frame", Offset: 0, Code: c.Code(), HasCode: true,
			Err: &FieldError{Type: "performative", Want: "described value", Found: found, Err: ErrPerformative}}
	}
	return d, nil
}

// ParseTransfer decodes the transfer performative at the start of body
// (a frame's Body) and returns it with the payload that follows it: the
// bytes of the delivery's message carried by this frame (a view into
// body). It does not allocate. A body that holds another performative is
// an error wrapping ErrPerformative; a field of the wrong type, a missing
// mandatory field or a malformed encoding is an *amqpsax.Error with its
// offset in body.
func ParseTransfer(body []byte) (t Transfer, payload []byte, err error) {
	if t, payload, ok := parseTransferFast(body); ok {
		return t, payload, nil
	}
	return parseTransferSlow(body)
}

// parseTransferSlow is ParseTransfer through the spec table: every
// encoding, every field, and the fault named.
func parseTransferSlow(body []byte) (t Transfer, payload []byte, err error) {
	var p parser
	d, end, ok := p.open(body, 0, specTransfer.name)
	switch {
	case !ok:
		return t, nil, p.err
	case d != amqpsax.DescriptorTransfer:
		p.wrong(specTransfer.name, d)
		return t, nil, p.err
	}
	if !p.fields(&specTransfer) {
		return t, nil, p.err
	}
	for p.next() {
		switch p.i {
		case TransferHandle:
			t.Handle = p.uint32()
		case TransferDeliveryID:
			t.DeliveryID = Some(p.uint32())
		case TransferDeliveryTag:
			t.DeliveryTag = p.bytes()
		case TransferMessageFormat:
			t.MessageFormat = Some(p.uint32())
		case TransferSettled:
			t.Settled = p.bool()
		case TransferMore:
			t.More = p.bool()
		case TransferRcvSettleMode:
			t.RcvSettleMode = Some(p.rcvSettle())
		case TransferState:
			t.State, p.err = parseState(p.raw, p.base+p.c.Offset())
		case TransferResume:
			t.Resume = p.bool()
		case TransferAborted:
			t.Aborted = p.bool()
		case TransferBatchable:
			t.Batchable = p.bool()
		}
	}
	if err := p.done(&t.Fields); err != nil {
		return t, nil, err
	}
	return t, body[end:], nil
}

// ParseOpen decodes the open performative that body (a frame's Body)
// holds, as ParseTransfer does. An open carries no payload: bytes after
// it are an error wrapping amqpsax.ErrTrailing.
func ParseOpen(body []byte) (o Open, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorOpen, &specOpen)
	if !ok {
		return o, p.err
	}
	for p.next() {
		switch p.i {
		case OpenContainerID:
			o.ContainerID = p.bytes()
		case OpenHostname:
			o.Hostname = p.bytes()
		case OpenMaxFrameSize:
			o.MaxFrameSize = Some(p.uint32())
		case OpenChannelMax:
			o.ChannelMax = Some(uint16(p.c.Uint()))
		case OpenIdleTimeOut:
			o.IdleTimeOut = Some(p.uint32())
		case OpenOutgoingLocales:
			o.OutgoingLocales = p.raw
		case OpenIncomingLocales:
			o.IncomingLocales = p.raw
		case OpenOfferedCapabilities:
			o.OfferedCapabilities = p.raw
		case OpenDesiredCapabilities:
			o.DesiredCapabilities = p.raw
		case OpenProperties:
			o.Properties = p.raw
		}
	}
	if err := p.done(&o.Fields); err != nil {
		return o, err
	}
	return o, trailing(body, end, specOpen.name)
}

// start opens the composite want at the start of data, which begins at
// base in the body, and enters its fields: the common start of every
// Parse function but ParseTransfer (written out there, the hottest path)
// and of the composites they hold. It returns the composite's length.
func (p *parser) start(data []byte, base int, want amqpsax.Descriptor, spec *compositeSpec) (int, bool) {
	d, end, ok := p.open(data, base, spec.name)
	switch {
	case !ok:
		return 0, false
	case d != want:
		return 0, p.wrong(spec.name, d)
	}
	return end, p.fields(spec)
}

// ParseBegin decodes the begin performative body holds, as ParseOpen does.
func ParseBegin(body []byte) (b Begin, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorBegin, &specBegin)
	if !ok {
		return b, p.err
	}
	for p.next() {
		switch p.i {
		case BeginRemoteChannel:
			b.RemoteChannel = Some(uint16(p.c.Uint()))
		case BeginNextOutgoingID:
			b.NextOutgoingID = p.uint32()
		case BeginIncomingWindow:
			b.IncomingWindow = p.uint32()
		case BeginOutgoingWindow:
			b.OutgoingWindow = p.uint32()
		case BeginHandleMax:
			b.HandleMax = Some(p.uint32())
		case BeginOfferedCapabilities:
			b.OfferedCapabilities = p.raw
		case BeginDesiredCapabilities:
			b.DesiredCapabilities = p.raw
		case BeginProperties:
			b.Properties = p.raw
		}
	}
	if err := p.done(&b.Fields); err != nil {
		return b, err
	}
	return b, trailing(body, end, specBegin.name)
}

// ParseAttach decodes the attach performative body holds, as ParseOpen does.
func ParseAttach(body []byte) (a Attach, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorAttach, &specAttach)
	if !ok {
		return a, p.err
	}
	for p.next() {
		switch p.i {
		case AttachName:
			a.Name = p.bytes()
		case AttachHandle:
			a.Handle = p.uint32()
		case AttachRole:
			a.Role = Role(p.bool())
		case AttachSndSettleMode:
			a.SndSettleMode = Some(p.sndSettle())
		case AttachRcvSettleMode:
			a.RcvSettleMode = p.rcvSettle()
		case AttachSource:
			a.Source.v, p.err = parseSource(p.raw, p.base+p.c.Offset())
			a.Source.ok = true
		case AttachTarget:
			a.Target.v, p.err = parseTarget(p.raw, p.base+p.c.Offset())
			a.Target.ok = true
		case AttachUnsettled:
			a.Unsettled = p.raw
		case AttachIncompleteUnsettled:
			a.IncompleteUnsettled = p.bool()
		case AttachInitialDeliveryCount:
			a.InitialDeliveryCount = Some(p.uint32())
		case AttachMaxMessageSize:
			a.MaxMessageSize = Some(p.c.Uint())
		case AttachOfferedCapabilities:
			a.OfferedCapabilities = p.raw
		case AttachDesiredCapabilities:
			a.DesiredCapabilities = p.raw
		case AttachProperties:
			a.Properties = p.raw
		}
	}
	if err := p.done(&a.Fields); err != nil {
		return a, err
	}
	return a, trailing(body, end, specAttach.name)
}

// ParseFlow decodes the flow performative body holds, as ParseOpen does.
func ParseFlow(body []byte) (f Flow, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorFlow, &specFlow)
	if !ok {
		return f, p.err
	}
	for p.next() {
		switch p.i {
		case FlowNextIncomingID:
			f.NextIncomingID = Some(p.uint32())
		case FlowIncomingWindow:
			f.IncomingWindow = p.uint32()
		case FlowNextOutgoingID:
			f.NextOutgoingID = p.uint32()
		case FlowOutgoingWindow:
			f.OutgoingWindow = p.uint32()
		case FlowHandle:
			f.Handle = Some(p.uint32())
		case FlowDeliveryCount:
			f.DeliveryCount = Some(p.uint32())
		case FlowLinkCredit:
			f.LinkCredit = Some(p.uint32())
		case FlowAvailable:
			f.Available = Some(p.uint32())
		case FlowDrain:
			f.Drain = p.bool()
		case FlowEcho:
			f.Echo = p.bool()
		case FlowProperties:
			f.Properties = p.raw
		}
	}
	if err := p.done(&f.Fields); err != nil {
		return f, err
	}
	return f, trailing(body, end, specFlow.name)
}

// ParseDisposition decodes the disposition performative body holds, as ParseOpen does.
func ParseDisposition(body []byte) (d Disposition, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorDisposition, &specDisposition)
	if !ok {
		return d, p.err
	}
	for p.next() {
		switch p.i {
		case DispositionRole:
			d.Role = Role(p.bool())
		case DispositionFirst:
			d.First = p.uint32()
		case DispositionLast:
			d.Last = Some(p.uint32())
		case DispositionSettled:
			d.Settled = p.bool()
		case DispositionState:
			d.State, p.err = parseState(p.raw, p.base+p.c.Offset())
		case DispositionBatchable:
			d.Batchable = p.bool()
		}
	}
	if err := p.done(&d.Fields); err != nil {
		return d, err
	}
	return d, trailing(body, end, specDisposition.name)
}

// ParseDetach decodes the detach performative body holds, as ParseOpen does.
func ParseDetach(body []byte) (d Detach, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorDetach, &specDetach)
	if !ok {
		return d, p.err
	}
	for p.next() {
		switch p.i {
		case DetachHandle:
			d.Handle = p.uint32()
		case DetachClosed:
			d.Closed = p.bool()
		case DetachError:
			d.Error, p.err = parseError(p.raw, p.base+p.c.Offset())
		}
	}
	if err := p.done(&d.Fields); err != nil {
		return d, err
	}
	return d, trailing(body, end, specDetach.name)
}

// ParseEnd decodes the end performative body holds, as ParseOpen does.
func ParseEnd(body []byte) (e End, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorEnd, &specEnd)
	if !ok {
		return e, p.err
	}
	for p.next() {
		if p.i == EndError {
			e.Error, p.err = parseError(p.raw, p.base+p.c.Offset())
		}
	}
	if err := p.done(&e.Fields); err != nil {
		return e, err
	}
	return e, trailing(body, end, specEnd.name)
}

// ParseClose decodes the close performative body holds, as ParseOpen does.
func ParseClose(body []byte) (c Close, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorClose, &specClose)
	if !ok {
		return c, p.err
	}
	for p.next() {
		if p.i == CloseError {
			c.Error, p.err = parseError(p.raw, p.base+p.c.Offset())
		}
	}
	if err := p.done(&c.Fields); err != nil {
		return c, err
	}
	return c, trailing(body, end, specClose.name)
}

// ParseSASLMechanisms decodes the sasl-mechanisms frame body holds, as ParseOpen does.
func ParseSASLMechanisms(body []byte) (m SASLMechanisms, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorSASLMechanisms, &specSASLMechanisms)
	if !ok {
		return m, p.err
	}
	for p.next() {
		if p.i == SASLMechanismsMechanisms {
			m.Mechanisms = p.raw
		}
	}
	if err := p.done(&m.Fields); err != nil {
		return m, err
	}
	return m, trailing(body, end, specSASLMechanisms.name)
}

// ParseSASLInit decodes the sasl-init frame body holds, as ParseOpen does.
func ParseSASLInit(body []byte) (s SASLInit, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorSASLInit, &specSASLInit)
	if !ok {
		return s, p.err
	}
	for p.next() {
		switch p.i {
		case SASLInitMechanism:
			s.Mechanism = p.bytes()
		case SASLInitInitialResponse:
			s.InitialResponse = p.bytes()
		case SASLInitHostname:
			s.Hostname = p.bytes()
		}
	}
	if err := p.done(&s.Fields); err != nil {
		return s, err
	}
	return s, trailing(body, end, specSASLInit.name)
}

// ParseSASLChallenge decodes the sasl-challenge frame body holds, as ParseOpen does.
func ParseSASLChallenge(body []byte) (s SASLChallenge, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorSASLChallenge, &specSASLChallenge)
	if !ok {
		return s, p.err
	}
	for p.next() {
		if p.i == SASLChallengeChallenge {
			s.Challenge = p.bytes()
		}
	}
	if err := p.done(&s.Fields); err != nil {
		return s, err
	}
	return s, trailing(body, end, specSASLChallenge.name)
}

// ParseSASLResponse decodes the sasl-response frame body holds, as ParseOpen does.
func ParseSASLResponse(body []byte) (s SASLResponse, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorSASLResponse, &specSASLResponse)
	if !ok {
		return s, p.err
	}
	for p.next() {
		if p.i == SASLResponseResponse {
			s.Response = p.bytes()
		}
	}
	if err := p.done(&s.Fields); err != nil {
		return s, err
	}
	return s, trailing(body, end, specSASLResponse.name)
}

// ParseSASLOutcome decodes the sasl-outcome frame body holds, as ParseOpen does.
func ParseSASLOutcome(body []byte) (s SASLOutcome, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorSASLOutcome, &specSASLOutcome)
	if !ok {
		return s, p.err
	}
	for p.next() {
		switch p.i {
		case SASLOutcomeCode:
			v := p.c.Uint()
			if v > uint64(SASLSysTemp) {
				p.badValue(p.i, "sasl code "+u64(v))
			}
			s.Code = SASLCode(v)
		case SASLOutcomeAdditionalData:
			s.AdditionalData = p.bytes()
		}
	}
	if err := p.done(&s.Fields); err != nil {
		return s, err
	}
	return s, trailing(body, end, specSASLOutcome.name)
}

// parseError decodes an error composite: raw is its encoding, at offset
// base in the body.
func parseError(raw []byte, base int) (e AMQPError, err error) {
	var p parser
	if _, ok := p.start(raw, base, amqpsax.DescriptorError, &specError); !ok {
		return e, p.err
	}
	for p.next() {
		switch p.i {
		case AMQPErrorCondition:
			e.Condition = p.bytes()
		case AMQPErrorDescription:
			e.Description = p.bytes()
		case AMQPErrorInfo:
			e.Info = p.raw
		}
	}
	return e, p.done(&e.Fields)
}

// parseSource decodes a source composite, as parseError does.
func parseSource(raw []byte, base int) (s Source, err error) {
	var p parser
	if _, ok := p.start(raw, base, amqpsax.DescriptorSource, &specSource); !ok {
		return s, p.err
	}
	for p.next() {
		switch p.i {
		case SourceAddress:
			s.Address = p.bytes()
		case SourceDurable:
			s.Durable = p.durability()
		case SourceExpiryPolicy:
			s.ExpiryPolicy = p.expiry()
		case SourceTimeout:
			s.Timeout = p.uint32()
		case SourceDynamic:
			s.Dynamic = p.bool()
		case SourceDynamicNodeProperties:
			s.DynamicNodeProperties = p.raw
		case SourceDistributionMode:
			s.DistributionMode = p.bytes()
		case SourceFilter:
			s.Filter = p.raw
		case SourceDefaultOutcome:
			s.DefaultOutcome, p.err = parseState(p.raw, p.base+p.c.Offset())
		case SourceOutcomes:
			s.Outcomes = p.raw
		case SourceCapabilities:
			s.Capabilities = p.raw
		}
	}
	return s, p.done(&s.Fields)
}

// parseTarget decodes a target or coordinator composite, as parseError
// does.
func parseTarget(raw []byte, base int) (t Target, err error) {
	var p parser
	d, _, ok := p.open(raw, base, specTarget.name)
	switch {
	case !ok:
		return t, p.err
	case d == amqpsax.DescriptorCoordinator:
		t.Coordinator = true
		if !p.fields(&specCoordinator) {
			return t, p.err
		}
		for p.next() {
			if p.i == CoordinatorCapabilities {
				t.Capabilities = p.raw
			}
		}
		return t, p.done(&t.Fields)
	case d != amqpsax.DescriptorTarget:
		p.wrong(specTarget.name, d)
		return t, p.err
	}
	if !p.fields(&specTarget) {
		return t, p.err
	}
	for p.next() {
		switch p.i {
		case TargetAddress:
			t.Address = p.bytes()
		case TargetDurable:
			t.Durable = p.durability()
		case TargetExpiryPolicy:
			t.ExpiryPolicy = p.expiry()
		case TargetTimeout:
			t.Timeout = p.uint32()
		case TargetDynamic:
			t.Dynamic = p.bool()
		case TargetDynamicNodeProperties:
			t.DynamicNodeProperties = p.raw
		case TargetCapabilities:
			t.Capabilities = p.raw
		}
	}
	return t, p.done(&t.Fields)
}

// parseState decodes a delivery state: one of the five of part 3, or any
// other described value as StateOther.
func parseState(raw []byte, base int) (s DeliveryState, err error) {
	var p parser
	d, _, ok := p.open(raw, base, "delivery-state")
	if !ok {
		return s, p.err
	}
	s.Descriptor, s.Raw = d, raw
	var spec *compositeSpec
	switch d {
	case amqpsax.DescriptorReceived:
		s.Type, spec = StateReceived, &specReceived
	case amqpsax.DescriptorAccepted:
		s.Type, spec = StateAccepted, &specAccepted
	case amqpsax.DescriptorRejected:
		s.Type, spec = StateRejected, &specRejected
	case amqpsax.DescriptorReleased:
		s.Type, spec = StateReleased, &specReleased
	case amqpsax.DescriptorModified:
		s.Type, spec = StateModified, &specModified
	default:
		s.Type = StateOther
		return s, nil
	}
	if !p.fields(spec) {
		return s, p.err
	}
	for p.next() {
		switch {
		case s.Type == StateReceived && p.i == ReceivedSectionNumber:
			s.SectionNumber = p.uint32()
		case s.Type == StateReceived && p.i == ReceivedSectionOffset:
			s.SectionOffset = p.c.Uint()
		case s.Type == StateRejected && p.i == RejectedError:
			s.Error, p.err = parseError(p.raw, p.base+p.c.Offset())
		case s.Type == StateModified && p.i == ModifiedDeliveryFailed:
			s.DeliveryFailed = p.bool()
		case s.Type == StateModified && p.i == ModifiedUndeliverableHere:
			s.UndeliverableHere = p.bool()
		case s.Type == StateModified && p.i == ModifiedMessageAnnotations:
			s.MessageAnnotations = p.raw
		}
	}
	return s, p.done(&s.Fields)
}
