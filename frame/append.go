package frame

import (
	"encoding/binary"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
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

// lw writes the fields of a composite's list one at a time, each either
// written or left out; fields left out before one that is written become
// nulls, trailing ones are not written at all.
type lw struct {
	b     []byte
	start int // of the list
	idx   int // fields considered so far
	n     int // list elements written so far
}

// compose begins the composite with descriptor d: the descriptor as a
// smallulong, then a list whose size end fills in.
func compose(b []byte, d amqpsax.Descriptor) lw {
	b = encode.AppendUlong(encode.AppendDescribed(b), uint64(d))
	start := len(b)
	return lw{b: encode.BeginList(b), start: start}
}

// field considers the next field and reports whether to write it, after
// the nulls of the fields left out before it.
func (w *lw) field(write bool) bool {
	if write {
		for w.n < w.idx {
			w.b = encode.AppendNull(w.b)
			w.n++
		}
		w.n++
	}
	w.idx++
	return write
}

// end completes the list with at least as many elements as f says the
// composite had when read (trailing nulls), in its smallest encoding, or
// as a list32 when it was read as one.
func (w *lw) end(f Fields) []byte {
	for w.n < min(f.Elements(), w.idx) {
		w.b = encode.AppendNull(w.b)
		w.n++
	}
	if f.wide {
		return encode.EndList32(w.b, w.start, w.n)
	}
	return encode.EndList(w.b, w.start, w.n)
}

// optUint and its kin write an Opt field when it is present.
func (w *lw) optUint(o Opt[uint32]) {
	if w.field(o.ok) {
		w.b = encode.AppendUint(w.b, o.v)
	}
}

func (w *lw) optUlong(o Opt[uint64]) {
	if w.field(o.ok) {
		w.b = encode.AppendUlong(w.b, o.v)
	}
}

func (w *lw) optUshort(o Opt[uint16]) {
	if w.field(o.ok) {
		w.b = encode.AppendUshort(w.b, o.v)
	}
}

func (w *lw) uint(write bool, v uint32) {
	if w.field(write) {
		w.b = encode.AppendUint(w.b, v)
	}
}

func (w *lw) ulong(write bool, v uint64) {
	if w.field(write) {
		w.b = encode.AppendUlong(w.b, v)
	}
}

func (w *lw) ubyte(write bool, v uint8) {
	if w.field(write) {
		w.b = encode.AppendUbyte(w.b, v)
	}
}

func (w *lw) bool(write bool, v bool) {
	if w.field(write) {
		w.b = encode.AppendBool(w.b, v)
	}
}

func (w *lw) string(write bool, v []byte) {
	if w.field(write) {
		w.b = encode.AppendStringBytes(w.b, v)
	}
}

func (w *lw) symbol(write bool, v []byte) {
	if w.field(write) {
		w.b = encode.AppendSymbolBytes(w.b, v)
	}
}

func (w *lw) binary(write bool, v []byte) {
	if w.field(write) {
		w.b = encode.AppendBinary(w.b, v)
	}
}

// raw writes an encoded value (a Map, Symbols) as it is, or null when
// it is empty.
func (w *lw) raw(write bool, v []byte) {
	if w.field(write) {
		if len(v) == 0 {
			w.b = encode.AppendNull(w.b)
		} else {
			w.b = append(w.b, v...)
		}
	}
}

func (w *lw) error(write bool, e *AMQPError) {
	if w.field(write) {
		w.b = appendError(w.b, e)
	}
}

func (w *lw) state(write bool, s *DeliveryState) {
	if w.field(write) {
		w.b = appendState(w.b, s)
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
	w := compose(b, amqpsax.DescriptorOpen)
	w.string(true, o.ContainerID)
	w.string(o.Has(OpenHostname) || o.Hostname != nil, o.Hostname)
	w.optUint(o.MaxFrameSize)
	w.optUshort(o.ChannelMax)
	w.optUint(o.IdleTimeOut)
	w.raw(o.Has(OpenOutgoingLocales) || o.OutgoingLocales != nil, o.OutgoingLocales)
	w.raw(o.Has(OpenIncomingLocales) || o.IncomingLocales != nil, o.IncomingLocales)
	w.raw(o.Has(OpenOfferedCapabilities) || o.OfferedCapabilities != nil, o.OfferedCapabilities)
	w.raw(o.Has(OpenDesiredCapabilities) || o.DesiredCapabilities != nil, o.DesiredCapabilities)
	w.raw(o.Has(OpenProperties) || o.Properties != nil, o.Properties)
	return w.end(o.Fields)
}

// AppendBegin appends bg as a begin performative, as AppendOpen does.
func AppendBegin(b []byte, bg Begin) []byte {
	w := compose(b, amqpsax.DescriptorBegin)
	w.optUshort(bg.RemoteChannel)
	w.uint(true, bg.NextOutgoingID)
	w.uint(true, bg.IncomingWindow)
	w.uint(true, bg.OutgoingWindow)
	w.optUint(bg.HandleMax)
	w.raw(bg.Has(BeginOfferedCapabilities) || bg.OfferedCapabilities != nil, bg.OfferedCapabilities)
	w.raw(bg.Has(BeginDesiredCapabilities) || bg.DesiredCapabilities != nil, bg.DesiredCapabilities)
	w.raw(bg.Has(BeginProperties) || bg.Properties != nil, bg.Properties)
	return w.end(bg.Fields)
}

// AppendAttach appends a as an attach performative, as AppendOpen does.
func AppendAttach(b []byte, a Attach) []byte {
	w := compose(b, amqpsax.DescriptorAttach)
	w.string(true, a.Name)
	w.uint(true, a.Handle)
	w.bool(true, bool(a.Role))
	if w.field(a.SndSettleMode.ok) {
		w.b = encode.AppendUbyte(w.b, uint8(a.SndSettleMode.v))
	}
	w.ubyte(a.Has(AttachRcvSettleMode) || a.RcvSettleMode != 0, uint8(a.RcvSettleMode))
	if w.field(a.Source.ok) {
		w.b = appendSource(w.b, &a.Source.v)
	}
	if w.field(a.Target.ok) {
		w.b = appendTarget(w.b, &a.Target.v)
	}
	w.raw(a.Has(AttachUnsettled) || a.Unsettled != nil, a.Unsettled)
	w.bool(a.Has(AttachIncompleteUnsettled) || a.IncompleteUnsettled, a.IncompleteUnsettled)
	w.optUint(a.InitialDeliveryCount)
	w.optUlong(a.MaxMessageSize)
	w.raw(a.Has(AttachOfferedCapabilities) || a.OfferedCapabilities != nil, a.OfferedCapabilities)
	w.raw(a.Has(AttachDesiredCapabilities) || a.DesiredCapabilities != nil, a.DesiredCapabilities)
	w.raw(a.Has(AttachProperties) || a.Properties != nil, a.Properties)
	return w.end(a.Fields)
}

// AppendFlow appends f as a flow performative, as AppendOpen does.
func AppendFlow(b []byte, f Flow) []byte {
	w := compose(b, amqpsax.DescriptorFlow)
	w.optUint(f.NextIncomingID)
	w.uint(true, f.IncomingWindow)
	w.uint(true, f.NextOutgoingID)
	w.uint(true, f.OutgoingWindow)
	w.optUint(f.Handle)
	w.optUint(f.DeliveryCount)
	w.optUint(f.LinkCredit)
	w.optUint(f.Available)
	w.bool(f.Has(FlowDrain) || f.Drain, f.Drain)
	w.bool(f.Has(FlowEcho) || f.Echo, f.Echo)
	w.raw(f.Has(FlowProperties) || f.Properties != nil, f.Properties)
	return w.end(f.Fields)
}

// AppendTransfer appends t as a transfer performative, as AppendOpen
// does; the payload goes after it. The first transfer of a delivery
// carries its DeliveryID, DeliveryTag and MessageFormat (Some[uint32](0)
// for the standard format); those continuing it may leave them out.
func AppendTransfer(b []byte, t Transfer) []byte {
	w := compose(b, amqpsax.DescriptorTransfer)
	w.uint(true, t.Handle)
	w.optUint(t.DeliveryID)
	w.binary(t.Has(TransferDeliveryTag) || t.DeliveryTag != nil, t.DeliveryTag)
	w.optUint(t.MessageFormat)
	w.bool(t.Has(TransferSettled) || t.Settled, t.Settled)
	w.bool(t.Has(TransferMore) || t.More, t.More)
	if w.field(t.RcvSettleMode.ok) {
		w.b = encode.AppendUbyte(w.b, uint8(t.RcvSettleMode.v))
	}
	w.state(t.Has(TransferState) || t.State.Type != StateNone, &t.State)
	w.bool(t.Has(TransferResume) || t.Resume, t.Resume)
	w.bool(t.Has(TransferAborted) || t.Aborted, t.Aborted)
	w.bool(t.Has(TransferBatchable) || t.Batchable, t.Batchable)
	return w.end(t.Fields)
}

// AppendDisposition appends d as a disposition performative, as
// AppendOpen does.
func AppendDisposition(b []byte, d Disposition) []byte {
	w := compose(b, amqpsax.DescriptorDisposition)
	w.bool(true, bool(d.Role))
	w.uint(true, d.First)
	w.optUint(d.Last)
	w.bool(d.Has(DispositionSettled) || d.Settled, d.Settled)
	w.state(d.Has(DispositionState) || d.State.Type != StateNone, &d.State)
	w.bool(d.Has(DispositionBatchable) || d.Batchable, d.Batchable)
	return w.end(d.Fields)
}

// AppendDetach appends d as a detach performative, as AppendOpen does.
func AppendDetach(b []byte, d Detach) []byte {
	w := compose(b, amqpsax.DescriptorDetach)
	w.uint(true, d.Handle)
	w.bool(d.Has(DetachClosed) || d.Closed, d.Closed)
	w.error(d.Has(DetachError) || !d.Error.isZero(), &d.Error)
	return w.end(d.Fields)
}

// AppendEnd appends e as an end performative, as AppendOpen does.
func AppendEnd(b []byte, e End) []byte {
	w := compose(b, amqpsax.DescriptorEnd)
	w.error(e.Has(EndError) || !e.Error.isZero(), &e.Error)
	return w.end(e.Fields)
}

// AppendClose appends c as a close performative, as AppendOpen does.
func AppendClose(b []byte, c Close) []byte {
	w := compose(b, amqpsax.DescriptorClose)
	w.error(c.Has(CloseError) || !c.Error.isZero(), &c.Error)
	return w.end(c.Fields)
}

// AppendSASLMechanisms appends m as a sasl-mechanisms frame body, as
// AppendOpen does. Build m.Mechanisms with AppendSymbols.
func AppendSASLMechanisms(b []byte, m SASLMechanisms) []byte {
	w := compose(b, amqpsax.DescriptorSASLMechanisms)
	if w.field(true) {
		if len(m.Mechanisms) == 0 { // mandatory: none is an empty array, not null
			w.b = AppendSymbols(w.b)
		} else {
			w.b = append(w.b, m.Mechanisms...)
		}
	}
	return w.end(m.Fields)
}

// AppendSASLInit appends s as a sasl-init frame body, as AppendOpen does.
func AppendSASLInit(b []byte, s SASLInit) []byte {
	w := compose(b, amqpsax.DescriptorSASLInit)
	w.symbol(true, s.Mechanism)
	w.binary(s.Has(SASLInitInitialResponse) || s.InitialResponse != nil, s.InitialResponse)
	w.string(s.Has(SASLInitHostname) || s.Hostname != nil, s.Hostname)
	return w.end(s.Fields)
}

// AppendSASLChallenge appends s as a sasl-challenge frame body.
func AppendSASLChallenge(b []byte, s SASLChallenge) []byte {
	w := compose(b, amqpsax.DescriptorSASLChallenge)
	w.binary(true, s.Challenge)
	return w.end(s.Fields)
}

// AppendSASLResponse appends s as a sasl-response frame body.
func AppendSASLResponse(b []byte, s SASLResponse) []byte {
	w := compose(b, amqpsax.DescriptorSASLResponse)
	w.binary(true, s.Response)
	return w.end(s.Fields)
}

// AppendSASLOutcome appends s as a sasl-outcome frame body.
func AppendSASLOutcome(b []byte, s SASLOutcome) []byte {
	w := compose(b, amqpsax.DescriptorSASLOutcome)
	w.ubyte(true, uint8(s.Code))
	w.binary(s.Has(SASLOutcomeAdditionalData) || s.AdditionalData != nil, s.AdditionalData)
	return w.end(s.Fields)
}

func appendError(b []byte, e *AMQPError) []byte {
	w := compose(b, amqpsax.DescriptorError)
	w.symbol(true, e.Condition)
	w.string(e.Has(AMQPErrorDescription) || e.Description != nil, e.Description)
	w.raw(e.Has(AMQPErrorInfo) || e.Info != nil, e.Info)
	return w.end(e.Fields)
}

func appendSource(b []byte, s *Source) []byte {
	w := compose(b, amqpsax.DescriptorSource)
	w.string(s.Has(SourceAddress) || s.Address != nil, s.Address)
	w.uint(s.Has(SourceDurable) || s.Durable != 0, uint32(s.Durable))
	w.symbolString(s.Has(SourceExpiryPolicy) || s.ExpiryPolicy != ExpirySessionEnd, s.ExpiryPolicy.String())
	w.uint(s.Has(SourceTimeout) || s.Timeout != 0, s.Timeout)
	w.bool(s.Has(SourceDynamic) || s.Dynamic, s.Dynamic)
	w.raw(s.Has(SourceDynamicNodeProperties) || s.DynamicNodeProperties != nil, s.DynamicNodeProperties)
	w.symbol(s.Has(SourceDistributionMode) || s.DistributionMode != nil, s.DistributionMode)
	w.raw(s.Has(SourceFilter) || s.Filter != nil, s.Filter)
	w.state(s.Has(SourceDefaultOutcome) || s.DefaultOutcome.Type != StateNone, &s.DefaultOutcome)
	w.raw(s.Has(SourceOutcomes) || s.Outcomes != nil, s.Outcomes)
	w.raw(s.Has(SourceCapabilities) || s.Capabilities != nil, s.Capabilities)
	return w.end(s.Fields)
}

func appendTarget(b []byte, t *Target) []byte {
	if t.Coordinator {
		w := compose(b, amqpsax.DescriptorCoordinator)
		w.raw(t.Has(CoordinatorCapabilities) || t.Capabilities != nil, t.Capabilities)
		return w.end(t.Fields)
	}
	w := compose(b, amqpsax.DescriptorTarget)
	w.string(t.Has(TargetAddress) || t.Address != nil, t.Address)
	w.uint(t.Has(TargetDurable) || t.Durable != 0, uint32(t.Durable))
	w.symbolString(t.Has(TargetExpiryPolicy) || t.ExpiryPolicy != ExpirySessionEnd, t.ExpiryPolicy.String())
	w.uint(t.Has(TargetTimeout) || t.Timeout != 0, t.Timeout)
	w.bool(t.Has(TargetDynamic) || t.Dynamic, t.Dynamic)
	w.raw(t.Has(TargetDynamicNodeProperties) || t.DynamicNodeProperties != nil, t.DynamicNodeProperties)
	w.raw(t.Has(TargetCapabilities) || t.Capabilities != nil, t.Capabilities)
	return w.end(t.Fields)
}

func (w *lw) symbolString(write bool, v string) {
	if w.field(write) {
		w.b = encode.AppendSymbol(w.b, v)
	}
}

// appendState writes a delivery state: the described list of one of the
// five states, a StateOther's Raw, or null for StateNone.
func appendState(b []byte, s *DeliveryState) []byte {
	var w lw
	switch s.Type {
	case StateReceived:
		w = compose(b, amqpsax.DescriptorReceived)
		w.uint(true, s.SectionNumber)
		w.ulong(true, s.SectionOffset)
	case StateAccepted:
		w = compose(b, amqpsax.DescriptorAccepted)
	case StateRejected:
		w = compose(b, amqpsax.DescriptorRejected)
		w.error(s.Has(RejectedError) || !s.Error.isZero(), &s.Error)
	case StateReleased:
		w = compose(b, amqpsax.DescriptorReleased)
	case StateModified:
		w = compose(b, amqpsax.DescriptorModified)
		w.bool(s.Has(ModifiedDeliveryFailed) || s.DeliveryFailed, s.DeliveryFailed)
		w.bool(s.Has(ModifiedUndeliverableHere) || s.UndeliverableHere, s.UndeliverableHere)
		w.raw(s.Has(ModifiedMessageAnnotations) || s.MessageAnnotations != nil, s.MessageAnnotations)
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
