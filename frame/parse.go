package frame

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/protocol/composite"
	"github.com/amqpsax/amqpsax/stream"
)

// This file is laid out from the errors down to the composites:
//
//   - the causes (ErrPerformative …) and FieldError, then parser, frame's
//     face of internal/protocol/composite's Reader (its error as frame reports it,
//     the trailing-bytes rule, the restricted types' readers);
//   - Performative, then ParseTransfer (its fast path is in fast.go) and
//     the Parse function of every other performative and SASL frame, in
//     the spec's order;
//   - the composites held in them: parseError, parseSource, parseTarget
//     (or a coordinator) and parseState.

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
	ErrPerformative = composite.ErrPerformative
	// ErrFieldType: a field holds a value of another type than the spec's.
	ErrFieldType = composite.ErrFieldType
	// ErrMissingField: a mandatory field is absent or null.
	ErrMissingField = composite.ErrMissingField
	// ErrFieldValue: a field of a restricted type holds a value that is
	// not one of the spec's choices (a sender settle mode of 3, say).
	ErrFieldValue = composite.ErrFieldValue
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

// parser reads one composite value with a composite.Reader, by the
// tables of spec.go, and reports its faults as this package does: an
// *amqpsax.Error with Op "frame" and its offset in the body, whose Err is
// a *FieldError; a cut is amqpsax.ErrOverrun. Every composite is read by
// its own parser (a Cursor declared where it is used holds four levels
// without allocating; a composite needs three).
type parser struct{ composite.Reader }

// field is the field Next moved to.
func (p *parser) field() FieldIndex { return FieldIndex(p.I) }

// error returns the parser's error as this package reports it.
func (p *parser) error() error {
	switch p.Err {
	case composite.ErrCursor:
		return rebase(p.C.Err(), p.Base)
	case composite.ErrFault:
	default:
		return p.Err
	}
	f := &p.Fault
	return &amqpsax.Error{Op: "frame", Offset: f.Off, Code: f.Code, HasCode: f.HasCode,
		Err: &FieldError{Type: f.Type, Field: f.Field, Want: f.Want, Found: f.Found, Err: f.Cause}}
}

// rebase returns the cursor's error err as this package reports it: with
// Op "frame" and its offset in the body, the cursor's data starting at
// base. A cut is an overrun: the body is a whole frame's, so a value that
// runs past its end can never be completed.
func rebase(err error, base int) error { return composite.Rebase(err, "frame", base, true) }

// trailing checks that the performative read from body ended at end: bytes
// after one that carries no payload are a fault.
func trailing(body []byte, end int, name string) error {
	if end == len(body) {
		return nil
	}
	return &amqpsax.Error{Op: "frame", Offset: end, Err: &FieldError{Type: name, Want: "end of frame",
		Found: u64(uint64(len(body)-end)) + " more bytes", Err: amqpsax.ErrTrailing}}
}

// done checks the mandatory fields, once the list has been read, and
// stores in f what was read. (The parser keeps its own record until then:
// a pointer to the caller's kept in the parser would move the caller's
// value to the heap.)
func (p *parser) done(f *Fields) error {
	*f = Fields{set: p.Set, n: p.N, wide: p.Wide}
	if p.Done() {
		return nil
	}
	return p.error()
}

// Value readers for the field the cursor is on, once Next has checked
// its kind (composite.Reader has Uint32 and Bool).

func (p *parser) sndSettle() SenderSettleMode {
	v := p.C.Uint()
	if v > uint64(SndMixed) {
		p.BadValue("sender settle mode " + u64(v))
	}
	return SenderSettleMode(v)
}

func (p *parser) rcvSettle() ReceiverSettleMode {
	v := p.C.Uint()
	if v > uint64(RcvSecond) {
		p.BadValue("receiver settle mode " + u64(v))
	}
	return ReceiverSettleMode(v)
}

func (p *parser) durability() TerminusDurability {
	v := p.C.Uint()
	if v > uint64(DurabilityUnsettledState) {
		p.BadValue("terminus durability " + u64(v))
	}
	return TerminusDurability(v)
}

func (p *parser) expiry() ExpiryPolicy {
	v, ok := lookupExpiry(p.C.Bytes())
	if !ok {
		p.BadValue("expiry policy " + string(p.C.Bytes()))
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

// ParseTransferWhole is ParseTransfer for a body that
// [TransferHead.Parse] refused: it decodes the transfer through the spec
// table at once (every encoding and field, and the fault named), without
// trying the head's fast path again, so a receiver that tries the head
// first reads each transfer's head once. For any body it returns what
// ParseTransfer returns.
func ParseTransferWhole(body []byte) (t Transfer, payload []byte, err error) {
	return parseTransferSlow(body)
}

// parseTransferSlow is ParseTransfer through the spec table: every
// encoding, every field, and the fault named.
func parseTransferSlow(body []byte) (t Transfer, payload []byte, err error) {
	var p parser
	d, end, ok := p.Open(body, 0, specTransfer.Name)
	switch {
	case !ok:
		return t, nil, p.error()
	case d != amqpsax.DescriptorTransfer:
		p.Wrong(specTransfer.Name, d)
		return t, nil, p.error()
	}
	if !p.Fields(specTransfer) {
		return t, nil, p.error()
	}
	for p.Next() {
		switch p.field() {
		case TransferHandle:
			t.Handle = p.Uint32()
		case TransferDeliveryID:
			t.DeliveryID = Some(p.Uint32())
		case TransferDeliveryTag:
			t.DeliveryTag = p.C.Bytes()
		case TransferMessageFormat:
			t.MessageFormat = Some(p.Uint32())
		case TransferSettled:
			t.Settled = p.Bool()
		case TransferMore:
			t.More = p.Bool()
		case TransferRcvSettleMode:
			t.RcvSettleMode = Some(p.rcvSettle())
		case TransferState:
			t.State, p.Err = parseState(p.Raw, p.Base+p.C.Offset())
		case TransferResume:
			t.Resume = p.Bool()
		case TransferAborted:
			t.Aborted = p.Bool()
		case TransferBatchable:
			t.Batchable = p.Bool()
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
	end, ok := p.start(body, 0, amqpsax.DescriptorOpen, specOpen)
	if !ok {
		return o, p.error()
	}
	for p.Next() {
		switch p.field() {
		case OpenContainerID:
			o.ContainerID = p.C.Bytes()
		case OpenHostname:
			o.Hostname = p.C.Bytes()
		case OpenMaxFrameSize:
			o.MaxFrameSize = Some(p.Uint32())
		case OpenChannelMax:
			o.ChannelMax = Some(uint16(p.C.Uint()))
		case OpenIdleTimeOut:
			o.IdleTimeOut = Some(p.Uint32())
		case OpenOutgoingLocales:
			o.OutgoingLocales = p.Raw
		case OpenIncomingLocales:
			o.IncomingLocales = p.Raw
		case OpenOfferedCapabilities:
			o.OfferedCapabilities = p.Raw
		case OpenDesiredCapabilities:
			o.DesiredCapabilities = p.Raw
		case OpenProperties:
			o.Properties = p.Raw
		}
	}
	if err := p.done(&o.Fields); err != nil {
		return o, err
	}
	return o, trailing(body, end, specOpen.Name)
}

// start opens the composite want at the start of data, which begins at
// base in the body, and enters its fields: the common start of every
// Parse function but ParseTransfer (written out there, the hottest path)
// and of the composites they hold. It returns the composite's length.
func (p *parser) start(data []byte, base int, want amqpsax.Descriptor, spec *composite.Spec) (int, bool) {
	d, end, ok := p.Open(data, base, spec.Name)
	switch {
	case !ok:
		return 0, false
	case d != want:
		return 0, p.Wrong(spec.Name, d)
	}
	return end, p.Fields(spec)
}

// ParseBegin decodes the begin performative body holds, as ParseOpen does.
func ParseBegin(body []byte) (b Begin, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorBegin, specBegin)
	if !ok {
		return b, p.error()
	}
	for p.Next() {
		switch p.field() {
		case BeginRemoteChannel:
			b.RemoteChannel = Some(uint16(p.C.Uint()))
		case BeginNextOutgoingID:
			b.NextOutgoingID = p.Uint32()
		case BeginIncomingWindow:
			b.IncomingWindow = p.Uint32()
		case BeginOutgoingWindow:
			b.OutgoingWindow = p.Uint32()
		case BeginHandleMax:
			b.HandleMax = Some(p.Uint32())
		case BeginOfferedCapabilities:
			b.OfferedCapabilities = p.Raw
		case BeginDesiredCapabilities:
			b.DesiredCapabilities = p.Raw
		case BeginProperties:
			b.Properties = p.Raw
		}
	}
	if err := p.done(&b.Fields); err != nil {
		return b, err
	}
	return b, trailing(body, end, specBegin.Name)
}

// ParseAttach decodes the attach performative body holds, as ParseOpen does.
func ParseAttach(body []byte) (a Attach, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorAttach, specAttach)
	if !ok {
		return a, p.error()
	}
	for p.Next() {
		switch p.field() {
		case AttachName:
			a.Name = p.C.Bytes()
		case AttachHandle:
			a.Handle = p.Uint32()
		case AttachRole:
			a.Role = Role(p.Bool())
		case AttachSndSettleMode:
			a.SndSettleMode = Some(p.sndSettle())
		case AttachRcvSettleMode:
			a.RcvSettleMode = p.rcvSettle()
		case AttachSource:
			a.Source.v, p.Err = parseSource(p.Raw, p.Base+p.C.Offset())
			a.Source.ok = true
		case AttachTarget:
			a.Target.v, p.Err = parseTarget(p.Raw, p.Base+p.C.Offset())
			a.Target.ok = true
		case AttachUnsettled:
			a.Unsettled = p.Raw
		case AttachIncompleteUnsettled:
			a.IncompleteUnsettled = p.Bool()
		case AttachInitialDeliveryCount:
			a.InitialDeliveryCount = Some(p.Uint32())
		case AttachMaxMessageSize:
			a.MaxMessageSize = Some(p.C.Uint())
		case AttachOfferedCapabilities:
			a.OfferedCapabilities = p.Raw
		case AttachDesiredCapabilities:
			a.DesiredCapabilities = p.Raw
		case AttachProperties:
			a.Properties = p.Raw
		}
	}
	if err := p.done(&a.Fields); err != nil {
		return a, err
	}
	return a, trailing(body, end, specAttach.Name)
}

// ParseFlow decodes the flow performative body holds, as ParseOpen does.
func ParseFlow(body []byte) (f Flow, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorFlow, specFlow)
	if !ok {
		return f, p.error()
	}
	for p.Next() {
		switch p.field() {
		case FlowNextIncomingID:
			f.NextIncomingID = Some(p.Uint32())
		case FlowIncomingWindow:
			f.IncomingWindow = p.Uint32()
		case FlowNextOutgoingID:
			f.NextOutgoingID = p.Uint32()
		case FlowOutgoingWindow:
			f.OutgoingWindow = p.Uint32()
		case FlowHandle:
			f.Handle = Some(p.Uint32())
		case FlowDeliveryCount:
			f.DeliveryCount = Some(p.Uint32())
		case FlowLinkCredit:
			f.LinkCredit = Some(p.Uint32())
		case FlowAvailable:
			f.Available = Some(p.Uint32())
		case FlowDrain:
			f.Drain = p.Bool()
		case FlowEcho:
			f.Echo = p.Bool()
		case FlowProperties:
			f.Properties = p.Raw
		}
	}
	if err := p.done(&f.Fields); err != nil {
		return f, err
	}
	return f, trailing(body, end, specFlow.Name)
}

// ParseDisposition decodes the disposition performative body holds, as ParseOpen does.
func ParseDisposition(body []byte) (d Disposition, err error) {
	if d, ok := parseDispositionFast(body); ok {
		return d, nil
	}
	return parseDispositionSlow(body)
}

// parseDispositionSlow is ParseDisposition through the spec table: every
// encoding, every field, and the fault named.
func parseDispositionSlow(body []byte) (d Disposition, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorDisposition, specDisposition)
	if !ok {
		return d, p.error()
	}
	for p.Next() {
		switch p.field() {
		case DispositionRole:
			d.Role = Role(p.Bool())
		case DispositionFirst:
			d.First = p.Uint32()
		case DispositionLast:
			d.Last = Some(p.Uint32())
		case DispositionSettled:
			d.Settled = p.Bool()
		case DispositionState:
			d.State, p.Err = parseState(p.Raw, p.Base+p.C.Offset())
		case DispositionBatchable:
			d.Batchable = p.Bool()
		}
	}
	if err := p.done(&d.Fields); err != nil {
		return d, err
	}
	return d, trailing(body, end, specDisposition.Name)
}

// ParseDetach decodes the detach performative body holds, as ParseOpen does.
func ParseDetach(body []byte) (d Detach, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorDetach, specDetach)
	if !ok {
		return d, p.error()
	}
	for p.Next() {
		switch p.field() {
		case DetachHandle:
			d.Handle = p.Uint32()
		case DetachClosed:
			d.Closed = p.Bool()
		case DetachError:
			d.Error, p.Err = parseError(p.Raw, p.Base+p.C.Offset())
		}
	}
	if err := p.done(&d.Fields); err != nil {
		return d, err
	}
	return d, trailing(body, end, specDetach.Name)
}

// ParseEnd decodes the end performative body holds, as ParseOpen does.
func ParseEnd(body []byte) (e End, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorEnd, specEnd)
	if !ok {
		return e, p.error()
	}
	for p.Next() {
		if p.field() == EndError {
			e.Error, p.Err = parseError(p.Raw, p.Base+p.C.Offset())
		}
	}
	if err := p.done(&e.Fields); err != nil {
		return e, err
	}
	return e, trailing(body, end, specEnd.Name)
}

// ParseClose decodes the close performative body holds, as ParseOpen does.
func ParseClose(body []byte) (c Close, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorClose, specClose)
	if !ok {
		return c, p.error()
	}
	for p.Next() {
		if p.field() == CloseError {
			c.Error, p.Err = parseError(p.Raw, p.Base+p.C.Offset())
		}
	}
	if err := p.done(&c.Fields); err != nil {
		return c, err
	}
	return c, trailing(body, end, specClose.Name)
}

// ParseSASLMechanisms decodes the sasl-mechanisms frame body holds, as ParseOpen does.
func ParseSASLMechanisms(body []byte) (m SASLMechanisms, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorSASLMechanisms, specSASLMechanisms)
	if !ok {
		return m, p.error()
	}
	for p.Next() {
		if p.field() == SASLMechanismsMechanisms {
			m.Mechanisms = p.Raw
		}
	}
	if err := p.done(&m.Fields); err != nil {
		return m, err
	}
	return m, trailing(body, end, specSASLMechanisms.Name)
}

// ParseSASLInit decodes the sasl-init frame body holds, as ParseOpen does.
func ParseSASLInit(body []byte) (s SASLInit, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorSASLInit, specSASLInit)
	if !ok {
		return s, p.error()
	}
	for p.Next() {
		switch p.field() {
		case SASLInitMechanism:
			s.Mechanism = p.C.Bytes()
		case SASLInitInitialResponse:
			s.InitialResponse = p.C.Bytes()
		case SASLInitHostname:
			s.Hostname = p.C.Bytes()
		}
	}
	if err := p.done(&s.Fields); err != nil {
		return s, err
	}
	return s, trailing(body, end, specSASLInit.Name)
}

// ParseSASLChallenge decodes the sasl-challenge frame body holds, as ParseOpen does.
func ParseSASLChallenge(body []byte) (s SASLChallenge, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorSASLChallenge, specSASLChallenge)
	if !ok {
		return s, p.error()
	}
	for p.Next() {
		if p.field() == SASLChallengeChallenge {
			s.Challenge = p.C.Bytes()
		}
	}
	if err := p.done(&s.Fields); err != nil {
		return s, err
	}
	return s, trailing(body, end, specSASLChallenge.Name)
}

// ParseSASLResponse decodes the sasl-response frame body holds, as ParseOpen does.
func ParseSASLResponse(body []byte) (s SASLResponse, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorSASLResponse, specSASLResponse)
	if !ok {
		return s, p.error()
	}
	for p.Next() {
		if p.field() == SASLResponseResponse {
			s.Response = p.C.Bytes()
		}
	}
	if err := p.done(&s.Fields); err != nil {
		return s, err
	}
	return s, trailing(body, end, specSASLResponse.Name)
}

// ParseSASLOutcome decodes the sasl-outcome frame body holds, as ParseOpen does.
func ParseSASLOutcome(body []byte) (s SASLOutcome, err error) {
	var p parser
	end, ok := p.start(body, 0, amqpsax.DescriptorSASLOutcome, specSASLOutcome)
	if !ok {
		return s, p.error()
	}
	for p.Next() {
		switch p.field() {
		case SASLOutcomeCode:
			v := p.C.Uint()
			if v > uint64(SASLSysTemp) {
				p.BadValue("sasl code " + u64(v))
			}
			s.Code = SASLCode(v)
		case SASLOutcomeAdditionalData:
			s.AdditionalData = p.C.Bytes()
		}
	}
	if err := p.done(&s.Fields); err != nil {
		return s, err
	}
	return s, trailing(body, end, specSASLOutcome.Name)
}

// parseError decodes an error composite: raw is its encoding, at offset
// base in the body.
func parseError(raw []byte, base int) (e AMQPError, err error) {
	var p parser
	if _, ok := p.start(raw, base, amqpsax.DescriptorError, specError); !ok {
		return e, p.error()
	}
	for p.Next() {
		switch p.field() {
		case AMQPErrorCondition:
			e.Condition = p.C.Bytes()
		case AMQPErrorDescription:
			e.Description = p.C.Bytes()
		case AMQPErrorInfo:
			e.Info = p.Raw
		}
	}
	return e, p.done(&e.Fields)
}

// parseSource decodes a source composite, as parseError does.
func parseSource(raw []byte, base int) (s Source, err error) {
	var p parser
	if _, ok := p.start(raw, base, amqpsax.DescriptorSource, specSource); !ok {
		return s, p.error()
	}
	for p.Next() {
		switch p.field() {
		case SourceAddress:
			s.Address = p.C.Bytes()
		case SourceDurable:
			s.Durable = p.durability()
		case SourceExpiryPolicy:
			s.ExpiryPolicy = p.expiry()
		case SourceTimeout:
			s.Timeout = p.Uint32()
		case SourceDynamic:
			s.Dynamic = p.Bool()
		case SourceDynamicNodeProperties:
			s.DynamicNodeProperties = p.Raw
		case SourceDistributionMode:
			s.DistributionMode = p.C.Bytes()
		case SourceFilter:
			s.Filter = p.Raw
		case SourceDefaultOutcome:
			s.DefaultOutcome, p.Err = parseState(p.Raw, p.Base+p.C.Offset())
		case SourceOutcomes:
			s.Outcomes = p.Raw
		case SourceCapabilities:
			s.Capabilities = p.Raw
		}
	}
	return s, p.done(&s.Fields)
}

// parseTarget decodes a target or coordinator composite, as parseError
// does.
func parseTarget(raw []byte, base int) (t Target, err error) {
	var p parser
	d, _, ok := p.Open(raw, base, specTarget.Name)
	switch {
	case !ok:
		return t, p.error()
	case d == amqpsax.DescriptorCoordinator:
		t.Coordinator = true
		if !p.Fields(specCoordinator) {
			return t, p.error()
		}
		for p.Next() {
			if p.field() == CoordinatorCapabilities {
				t.Capabilities = p.Raw
			}
		}
		return t, p.done(&t.Fields)
	case d != amqpsax.DescriptorTarget:
		p.Wrong(specTarget.Name, d)
		return t, p.error()
	}
	if !p.Fields(specTarget) {
		return t, p.error()
	}
	for p.Next() {
		switch p.field() {
		case TargetAddress:
			t.Address = p.C.Bytes()
		case TargetDurable:
			t.Durable = p.durability()
		case TargetExpiryPolicy:
			t.ExpiryPolicy = p.expiry()
		case TargetTimeout:
			t.Timeout = p.Uint32()
		case TargetDynamic:
			t.Dynamic = p.Bool()
		case TargetDynamicNodeProperties:
			t.DynamicNodeProperties = p.Raw
		case TargetCapabilities:
			t.Capabilities = p.Raw
		}
	}
	return t, p.done(&t.Fields)
}

// parseState decodes a delivery state: one of the five of part 3, or any
// other described value as StateOther.
func parseState(raw []byte, base int) (s DeliveryState, err error) {
	var p parser
	d, _, ok := p.Open(raw, base, "delivery-state")
	if !ok {
		return s, p.error()
	}
	s.Descriptor, s.Raw = d, raw
	var spec *composite.Spec
	switch d {
	case amqpsax.DescriptorReceived:
		s.Type, spec = StateReceived, specReceived
	case amqpsax.DescriptorAccepted:
		s.Type, spec = StateAccepted, specAccepted
	case amqpsax.DescriptorRejected:
		s.Type, spec = StateRejected, specRejected
	case amqpsax.DescriptorReleased:
		s.Type, spec = StateReleased, specReleased
	case amqpsax.DescriptorModified:
		s.Type, spec = StateModified, specModified
	default:
		s.Type = StateOther
		return s, nil
	}
	if !p.Fields(spec) {
		return s, p.error()
	}
	for p.Next() {
		switch {
		case s.Type == StateReceived && p.field() == ReceivedSectionNumber:
			s.SectionNumber = p.Uint32()
		case s.Type == StateReceived && p.field() == ReceivedSectionOffset:
			s.SectionOffset = p.C.Uint()
		case s.Type == StateRejected && p.field() == RejectedError:
			s.Error, p.Err = parseError(p.Raw, p.Base+p.C.Offset())
		case s.Type == StateModified && p.field() == ModifiedDeliveryFailed:
			s.DeliveryFailed = p.Bool()
		case s.Type == StateModified && p.field() == ModifiedUndeliverableHere:
			s.UndeliverableHere = p.Bool()
		case s.Type == StateModified && p.field() == ModifiedMessageAnnotations:
			s.MessageAnnotations = p.Raw
		}
	}
	return s, p.done(&s.Fields)
}
