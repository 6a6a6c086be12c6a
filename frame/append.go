package frame

import (
	"encoding/binary"

	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/internal/protocol/composite"
)

// BeginFrame appends the 8-byte header of a frame of type typ (TypeAMQP,
// TypeSASL) on channel, with data offset 2 and a size EndFrame fills in.
// Append the performative and the payload, then call EndFrame with the
// length b had before BeginFrame:
//
//	start := len(b)
//	b = frame.BeginFrame(b, frame.TypeAMQP, 0)
//	b = frame.AppendTransfer(b, t)
//	b = append(b, payload...)
//	b = frame.EndFrame(b, start)
//
// A heartbeat is BeginFrame then EndFrame with nothing between.
func BeginFrame(b []byte, typ uint8, channel uint16) []byte {
	return append(b, 0, 0, 0, 0, 2, typ, byte(channel>>8), byte(channel))
}

// EndFrame writes the size of the frame begun at start into its header.
// The caller keeps the frame within the peer's max-frame-size.
func EndFrame(b []byte, start int) []byte {
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start))
	return b
}

// AppendFrame appends f as Next returned it: a protocol header, or a
// frame with its extended header (zero-padded to a multiple of 4 bytes;
// at most 1012 bytes, what a data offset of 255 leaves) and body. A
// Reader's frames are written back byte for byte.
func AppendFrame(b []byte, f Frame) []byte {
	if f.IsHeader {
		return AppendProtocolHeader(b, f.Header)
	}
	ext := min((len(f.Ext)+3)/4*4, 253*4)
	f.Ext = f.Ext[:min(len(f.Ext), ext)]
	size := headerSize + ext + len(f.Body)
	b = binary.BigEndian.AppendUint32(b, uint32(size))
	b = append(b, byte(2+ext/4), f.Type, byte(f.Channel>>8), byte(f.Channel))
	b = append(b, f.Ext...)
	for range ext - len(f.Ext) {
		b = append(b, 0)
	}
	return append(b, f.Body...)
}

// lw writes the fields of a composite's list with a composite.Writer,
// by the tables of spec.go: a plain field when it was seen when parsed
// (Has) or is not its zero value, which is the spec's default (the tests
// check it against the table's default column); an Opt field when
// present.
type lw struct{ composite.Writer }

// compose begins the composite of type s.
func compose(b []byte, s *composite.Spec) lw { return lw{composite.Begin(b, s)} }

// end completes the list with at least as many elements as f says the
// composite had when read (trailing nulls), in its smallest encoding, or
// as a list32 when it was read as one.
func (w *lw) end(f Fields) []byte { return w.End(f.Elements(), f.wide) }

// optUint and its kin write an Opt field when it is present.
func (w *lw) optUint(o Opt[uint32]) {
	if w.Field(o.ok) {
		w.B = encode.AppendUint(w.B, o.v)
	}
}

func (w *lw) optUlong(o Opt[uint64]) {
	if w.Field(o.ok) {
		w.B = encode.AppendUlong(w.B, o.v)
	}
}

func (w *lw) optUshort(o Opt[uint16]) {
	if w.Field(o.ok) {
		w.B = encode.AppendUshort(w.B, o.v)
	}
}

func (w *lw) error(write bool, e *AMQPError) {
	if w.Field(write) {
		w.B = appendError(w.B, e)
	}
}

func (w *lw) state(write bool, s *DeliveryState) {
	if w.Field(write) {
		w.B = appendState(w.B, s)
	}
}

// AppendOpen appends o as an open performative (descriptor 0x10, a list
// of its fields), in the smallest encodings. It writes what o says:
// mandatory fields always; an [Opt] field when present, zero included;
// any other field when it is not the zero value (nil, false), which is
// also the spec's default there; and any field o.Has reports, so that a
// parsed performative is written back byte for byte. Fields left out
// before one that is written become nulls; trailing ones are not written,
// except as many as o.Elements says (Qpid Proton writes trailing nulls).
// Maps and Symbols are written as they are. It allocates only to grow b.
func AppendOpen(b []byte, o Open) []byte {
	w := compose(b, specOpen)
	w.String(true, o.ContainerID)
	w.String(o.Has(OpenHostname) || o.Hostname != nil, o.Hostname)
	w.optUint(o.MaxFrameSize)
	w.optUshort(o.ChannelMax)
	w.optUint(o.IdleTimeOut)
	w.Raw(o.Has(OpenOutgoingLocales) || o.OutgoingLocales != nil, o.OutgoingLocales)
	w.Raw(o.Has(OpenIncomingLocales) || o.IncomingLocales != nil, o.IncomingLocales)
	w.Raw(o.Has(OpenOfferedCapabilities) || o.OfferedCapabilities != nil, o.OfferedCapabilities)
	w.Raw(o.Has(OpenDesiredCapabilities) || o.DesiredCapabilities != nil, o.DesiredCapabilities)
	w.Raw(o.Has(OpenProperties) || o.Properties != nil, o.Properties)
	return w.end(o.Fields)
}

// AppendBegin appends bg as a begin performative, as AppendOpen does.
func AppendBegin(b []byte, bg Begin) []byte {
	w := compose(b, specBegin)
	w.optUshort(bg.RemoteChannel)
	w.Uint(true, bg.NextOutgoingID)
	w.Uint(true, bg.IncomingWindow)
	w.Uint(true, bg.OutgoingWindow)
	w.optUint(bg.HandleMax)
	w.Raw(bg.Has(BeginOfferedCapabilities) || bg.OfferedCapabilities != nil, bg.OfferedCapabilities)
	w.Raw(bg.Has(BeginDesiredCapabilities) || bg.DesiredCapabilities != nil, bg.DesiredCapabilities)
	w.Raw(bg.Has(BeginProperties) || bg.Properties != nil, bg.Properties)
	return w.end(bg.Fields)
}

// AppendAttach appends a as an attach performative, as AppendOpen does.
func AppendAttach(b []byte, a Attach) []byte {
	w := compose(b, specAttach)
	w.String(true, a.Name)
	w.Uint(true, a.Handle)
	w.Bool(true, bool(a.Role))
	if w.Field(a.SndSettleMode.ok) {
		w.B = encode.AppendUbyte(w.B, uint8(a.SndSettleMode.v))
	}
	w.Ubyte(a.Has(AttachRcvSettleMode) || a.RcvSettleMode != 0, uint8(a.RcvSettleMode))
	if w.Field(a.Source.ok) {
		w.B = appendSource(w.B, &a.Source.v)
	}
	if w.Field(a.Target.ok) {
		w.B = appendTarget(w.B, &a.Target.v)
	}
	w.Raw(a.Has(AttachUnsettled) || a.Unsettled != nil, a.Unsettled)
	w.Bool(a.Has(AttachIncompleteUnsettled) || a.IncompleteUnsettled, a.IncompleteUnsettled)
	w.optUint(a.InitialDeliveryCount)
	w.optUlong(a.MaxMessageSize)
	w.Raw(a.Has(AttachOfferedCapabilities) || a.OfferedCapabilities != nil, a.OfferedCapabilities)
	w.Raw(a.Has(AttachDesiredCapabilities) || a.DesiredCapabilities != nil, a.DesiredCapabilities)
	w.Raw(a.Has(AttachProperties) || a.Properties != nil, a.Properties)
	return w.end(a.Fields)
}

// AppendFlow appends f as a flow performative, as AppendOpen does.
func AppendFlow(b []byte, f Flow) []byte {
	w := compose(b, specFlow)
	w.optUint(f.NextIncomingID)
	w.Uint(true, f.IncomingWindow)
	w.Uint(true, f.NextOutgoingID)
	w.Uint(true, f.OutgoingWindow)
	w.optUint(f.Handle)
	w.optUint(f.DeliveryCount)
	w.optUint(f.LinkCredit)
	w.optUint(f.Available)
	w.Bool(f.Has(FlowDrain) || f.Drain, f.Drain)
	w.Bool(f.Has(FlowEcho) || f.Echo, f.Echo)
	w.Raw(f.Has(FlowProperties) || f.Properties != nil, f.Properties)
	return w.end(f.Fields)
}

// AppendTransfer appends t as a transfer performative, as AppendOpen
// does; the payload goes after it. The first transfer of a delivery
// carries its DeliveryID, DeliveryTag and MessageFormat (Some[uint32](0)
// for the standard format); those continuing it may leave them out.
func AppendTransfer(b []byte, t Transfer) []byte {
	w := compose(b, specTransfer)
	w.Uint(true, t.Handle)
	w.optUint(t.DeliveryID)
	w.Binary(t.Has(TransferDeliveryTag) || t.DeliveryTag != nil, t.DeliveryTag)
	w.optUint(t.MessageFormat)
	w.Bool(t.Has(TransferSettled) || t.Settled, t.Settled)
	w.Bool(t.Has(TransferMore) || t.More, t.More)
	if w.Field(t.RcvSettleMode.ok) {
		w.B = encode.AppendUbyte(w.B, uint8(t.RcvSettleMode.v))
	}
	w.state(t.Has(TransferState) || t.State.Type != StateNone, &t.State)
	w.Bool(t.Has(TransferResume) || t.Resume, t.Resume)
	w.Bool(t.Has(TransferAborted) || t.Aborted, t.Aborted)
	w.Bool(t.Has(TransferBatchable) || t.Batchable, t.Batchable)
	return w.end(t.Fields)
}

// AppendDisposition appends d as a disposition performative, as
// AppendOpen does.
func AppendDisposition(b []byte, d Disposition) []byte {
	w := compose(b, specDisposition)
	w.Bool(true, bool(d.Role))
	w.Uint(true, d.First)
	w.optUint(d.Last)
	w.Bool(d.Has(DispositionSettled) || d.Settled, d.Settled)
	w.state(d.Has(DispositionState) || d.State.Type != StateNone, &d.State)
	w.Bool(d.Has(DispositionBatchable) || d.Batchable, d.Batchable)
	return w.end(d.Fields)
}

// AppendDetach appends d as a detach performative, as AppendOpen does.
func AppendDetach(b []byte, d Detach) []byte {
	w := compose(b, specDetach)
	w.Uint(true, d.Handle)
	w.Bool(d.Has(DetachClosed) || d.Closed, d.Closed)
	w.error(d.Has(DetachError) || !d.Error.isZero(), &d.Error)
	return w.end(d.Fields)
}

// AppendEnd appends e as an end performative, as AppendOpen does.
func AppendEnd(b []byte, e End) []byte {
	w := compose(b, specEnd)
	w.error(e.Has(EndError) || !e.Error.isZero(), &e.Error)
	return w.end(e.Fields)
}

// AppendClose appends c as a close performative, as AppendOpen does.
func AppendClose(b []byte, c Close) []byte {
	w := compose(b, specClose)
	w.error(c.Has(CloseError) || !c.Error.isZero(), &c.Error)
	return w.end(c.Fields)
}

// AppendSASLMechanisms appends m as a sasl-mechanisms frame body, as
// AppendOpen does. Build m.Mechanisms with AppendSymbols.
func AppendSASLMechanisms(b []byte, m SASLMechanisms) []byte {
	w := compose(b, specSASLMechanisms)
	if w.Field(true) {
		if len(m.Mechanisms) == 0 { // mandatory: none is an empty array, not null
			w.B = AppendSymbols(w.B)
		} else {
			w.B = append(w.B, m.Mechanisms...)
		}
	}
	return w.end(m.Fields)
}

// AppendSASLInit appends s as a sasl-init frame body, as AppendOpen does.
func AppendSASLInit(b []byte, s SASLInit) []byte {
	w := compose(b, specSASLInit)
	w.Symbol(true, s.Mechanism)
	w.Binary(s.Has(SASLInitInitialResponse) || s.InitialResponse != nil, s.InitialResponse)
	w.String(s.Has(SASLInitHostname) || s.Hostname != nil, s.Hostname)
	return w.end(s.Fields)
}

// AppendSASLChallenge appends s as a sasl-challenge frame body.
func AppendSASLChallenge(b []byte, s SASLChallenge) []byte {
	w := compose(b, specSASLChallenge)
	w.Binary(true, s.Challenge)
	return w.end(s.Fields)
}

// AppendSASLResponse appends s as a sasl-response frame body.
func AppendSASLResponse(b []byte, s SASLResponse) []byte {
	w := compose(b, specSASLResponse)
	w.Binary(true, s.Response)
	return w.end(s.Fields)
}

// AppendSASLOutcome appends s as a sasl-outcome frame body.
func AppendSASLOutcome(b []byte, s SASLOutcome) []byte {
	w := compose(b, specSASLOutcome)
	w.Ubyte(true, uint8(s.Code))
	w.Binary(s.Has(SASLOutcomeAdditionalData) || s.AdditionalData != nil, s.AdditionalData)
	return w.end(s.Fields)
}

func appendError(b []byte, e *AMQPError) []byte {
	w := compose(b, specError)
	w.Symbol(true, e.Condition)
	w.String(e.Has(AMQPErrorDescription) || e.Description != nil, e.Description)
	w.Raw(e.Has(AMQPErrorInfo) || e.Info != nil, e.Info)
	return w.end(e.Fields)
}

func appendSource(b []byte, s *Source) []byte {
	w := compose(b, specSource)
	w.terminus(s.Fields, s.Address, s.Durable, s.ExpiryPolicy, s.Timeout, s.Dynamic, s.DynamicNodeProperties)
	w.Symbol(s.Has(SourceDistributionMode) || s.DistributionMode != nil, s.DistributionMode)
	w.Raw(s.Has(SourceFilter) || s.Filter != nil, s.Filter)
	w.state(s.Has(SourceDefaultOutcome) || s.DefaultOutcome.Type != StateNone, &s.DefaultOutcome)
	w.Raw(s.Has(SourceOutcomes) || s.Outcomes != nil, s.Outcomes)
	w.Raw(s.Has(SourceCapabilities) || s.Capabilities != nil, s.Capabilities)
	return w.end(s.Fields)
}

// terminus writes the six fields a source and a target share, first in
// both (part 3 §3.5.3, §3.5.4: SourceAddress is TargetAddress, and so on).
func (w *lw) terminus(f Fields, address []byte, durable TerminusDurability, expiry ExpiryPolicy, timeout uint32,
	dynamic bool, props Map) {
	w.String(f.Has(SourceAddress) || address != nil, address)
	w.Uint(f.Has(SourceDurable) || durable != 0, uint32(durable))
	w.SymbolText(f.Has(SourceExpiryPolicy) || expiry != ExpirySessionEnd, expiry.String())
	w.Uint(f.Has(SourceTimeout) || timeout != 0, timeout)
	w.Bool(f.Has(SourceDynamic) || dynamic, dynamic)
	w.Raw(f.Has(SourceDynamicNodeProperties) || props != nil, props)
}

func appendTarget(b []byte, t *Target) []byte {
	if t.Coordinator {
		w := compose(b, specCoordinator)
		w.Raw(t.Has(CoordinatorCapabilities) || t.Capabilities != nil, t.Capabilities)
		return w.end(t.Fields)
	}
	w := compose(b, specTarget)
	w.terminus(t.Fields, t.Address, t.Durable, t.ExpiryPolicy, t.Timeout, t.Dynamic, t.DynamicNodeProperties)
	w.Raw(t.Has(TargetCapabilities) || t.Capabilities != nil, t.Capabilities)
	return w.end(t.Fields)
}

// appendState writes a delivery state: the described list of one of the
// five states, a StateOther's Raw, or null for StateNone.
func appendState(b []byte, s *DeliveryState) []byte {
	var w lw
	switch s.Type {
	case StateReceived:
		w = compose(b, specReceived)
		w.Uint(true, s.SectionNumber)
		w.Ulong(true, s.SectionOffset)
	case StateAccepted:
		w = compose(b, specAccepted)
	case StateRejected:
		w = compose(b, specRejected)
		w.error(s.Has(RejectedError) || !s.Error.isZero(), &s.Error)
	case StateReleased:
		w = compose(b, specReleased)
	case StateModified:
		w = compose(b, specModified)
		w.Bool(s.Has(ModifiedDeliveryFailed) || s.DeliveryFailed, s.DeliveryFailed)
		w.Bool(s.Has(ModifiedUndeliverableHere) || s.UndeliverableHere, s.UndeliverableHere)
		w.Raw(s.Has(ModifiedMessageAnnotations) || s.MessageAnnotations != nil, s.MessageAnnotations)
	case StateOther:
		if len(s.Raw) > 0 {
			return append(b, s.Raw...)
		}
		return encode.AppendNull(b)
	default:
		return encode.AppendNull(b)
	}
	return w.end(s.Fields)
}
