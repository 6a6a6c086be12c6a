package frame

import "github.com/amqpsax/amqpsax"

// Field is the position of a field in the list of a composite type, from
// 0, in the order the spec lists them: TransferDeliveryID is 1 because
// delivery-id is the second field of transfer. The constants below are
// named after the Go type and field; use them with Fields.Has and
// FieldName.
type Field uint8

// Fields of open (part 2 §2.7.1).
const (
	OpenContainerID Field = iota
	OpenHostname
	OpenMaxFrameSize
	OpenChannelMax
	OpenIdleTimeOut
	OpenOutgoingLocales
	OpenIncomingLocales
	OpenOfferedCapabilities
	OpenDesiredCapabilities
	OpenProperties
)

// Fields of begin (part 2 §2.7.2).
const (
	BeginRemoteChannel Field = iota
	BeginNextOutgoingID
	BeginIncomingWindow
	BeginOutgoingWindow
	BeginHandleMax
	BeginOfferedCapabilities
	BeginDesiredCapabilities
	BeginProperties
)

// Fields of attach (part 2 §2.7.3).
const (
	AttachName Field = iota
	AttachHandle
	AttachRole
	AttachSndSettleMode
	AttachRcvSettleMode
	AttachSource
	AttachTarget
	AttachUnsettled
	AttachIncompleteUnsettled
	AttachInitialDeliveryCount
	AttachMaxMessageSize
	AttachOfferedCapabilities
	AttachDesiredCapabilities
	AttachProperties
)

// Fields of flow (part 2 §2.7.4).
const (
	FlowNextIncomingID Field = iota
	FlowIncomingWindow
	FlowNextOutgoingID
	FlowOutgoingWindow
	FlowHandle
	FlowDeliveryCount
	FlowLinkCredit
	FlowAvailable
	FlowDrain
	FlowEcho
	FlowProperties
)

// Fields of transfer (part 2 §2.7.5).
const (
	TransferHandle Field = iota
	TransferDeliveryID
	TransferDeliveryTag
	TransferMessageFormat
	TransferSettled
	TransferMore
	TransferRcvSettleMode
	TransferState
	TransferResume
	TransferAborted
	TransferBatchable
)

// Fields of disposition (part 2 §2.7.6).
const (
	DispositionRole Field = iota
	DispositionFirst
	DispositionLast
	DispositionSettled
	DispositionState
	DispositionBatchable
)

// Fields of detach (part 2 §2.7.7).
const (
	DetachHandle Field = iota
	DetachClosed
	DetachError
)

// Fields of end (part 2 §2.7.8).
const (
	EndError Field = iota
)

// Fields of close (part 2 §2.7.9).
const (
	CloseError Field = iota
)

// Fields of error (part 2 §2.8.14).
const (
	AMQPErrorCondition Field = iota
	AMQPErrorDescription
	AMQPErrorInfo
)

// Fields of the SASL frames (part 5 §5.3.3).
const (
	SASLMechanismsMechanisms Field = 0 // sasl-server-mechanisms

	SASLInitMechanism       Field = 0
	SASLInitInitialResponse Field = 1
	SASLInitHostname        Field = 2

	SASLChallengeChallenge Field = 0

	SASLResponseResponse Field = 0

	SASLOutcomeCode           Field = 0
	SASLOutcomeAdditionalData Field = 1
)

// Fields of source (part 3 §3.5.3).
const (
	SourceAddress Field = iota
	SourceDurable
	SourceExpiryPolicy
	SourceTimeout
	SourceDynamic
	SourceDynamicNodeProperties
	SourceDistributionMode
	SourceFilter
	SourceDefaultOutcome
	SourceOutcomes
	SourceCapabilities
)

// Fields of target (part 3 §3.5.4).
const (
	TargetAddress Field = iota
	TargetDurable
	TargetExpiryPolicy
	TargetTimeout
	TargetDynamic
	TargetDynamicNodeProperties
	TargetCapabilities
)

// The field of coordinator (part 4 §4.5.1), a target whose fields a
// Target holds with Coordinator set.
const CoordinatorCapabilities Field = 0

// Fields of the delivery states (part 3 §3.4); accepted and released
// have none.
const (
	ReceivedSectionNumber Field = 0
	ReceivedSectionOffset Field = 1

	RejectedError Field = 0

	ModifiedDeliveryFailed     Field = 0
	ModifiedUndeliverableHere  Field = 1
	ModifiedMessageAnnotations Field = 2
)

// Fields records what a Parse function saw of a composite value: which
// fields were present (not null), how many elements its list held, and
// whether the list was a list32. Every type of this package embeds one.
// Append functions honour it, so that a parsed value is written back to
// the bytes it was read from: a field Has reports is written even when it
// holds the spec's default or false, and at least Elements elements are
// written. A value built in code leaves Fields zero and says what to send
// with its fields alone ([Opt] for a zero that must be sent).
type Fields struct {
	set  uint32 // bit i: field i present
	n    uint8  // list elements of the encoding, up to the type's field count
	wide bool   // the list was a list32
}

// Has reports whether a Parse function found field i present and not
// null. For an [Opt] field it agrees with the field's Present.
func (f Fields) Has(i Field) bool { return i < 32 && f.set&(1<<i) != 0 }

// Elements returns how many of the type's fields the decoded list held,
// trailing nulls included (0 for a value built in code). Append functions
// write at least that many, so that what they write back is the encoding
// they read: some peers (Qpid Proton among them) write trailing nulls.
func (f Fields) Elements() int { return int(f.n) }

// SetElements sets what Elements returns.
func (f *Fields) SetElements(n int) { f.n = uint8(max(0, min(n, 32))) }

// Wide reports that the decoded list was a list32. Append functions then
// write a list32 too, even where a list8 would do, as some peers do for
// values they copy (Qpid Proton, for the delivery states of a
// disposition); otherwise they write the smallest list encoding.
func (f Fields) Wide() bool { return f.wide }

// SetWide sets what Wide returns.
func (f *Fields) SetWide(wide bool) { f.wide = wide }

// fieldSpec describes one field of a composite type, as the spec's XML
// does: the kind it must have on the wire (KindDescribed for a field
// holding a composite), whether it is mandatory, and whether it may hold
// an array of its type (multiple).
type fieldSpec struct {
	name      string
	kind      amqpsax.Kind
	want      string // the spec's type, for error messages
	mandatory bool
	multiple  bool
}

// compositeSpec describes one composite type.
type compositeSpec struct {
	name   string
	fields []fieldSpec
	mand   uint32 // bit i: field i is mandatory (set by init)
}

func init() {
	for _, s := range specs {
		for i, f := range s.fields {
			if f.mandatory {
				s.mand |= 1 << i
			}
		}
	}
}

func mand(name string, k amqpsax.Kind) fieldSpec {
	return fieldSpec{name: name, kind: k, want: k.String(), mandatory: true}
}

func opt(name string, k amqpsax.Kind) fieldSpec {
	return fieldSpec{name: name, kind: k, want: k.String()}
}

func syms(name string) fieldSpec {
	return fieldSpec{name: name, kind: amqpsax.KindSymbol, want: "symbol or array of symbols", multiple: true}
}

func comp(name, requires string) fieldSpec {
	return fieldSpec{name: name, kind: amqpsax.KindDescribed, want: requires}
}

const (
	kUint    = amqpsax.KindUint
	kUlong   = amqpsax.KindUlong
	kUshort  = amqpsax.KindUshort
	kUbyte   = amqpsax.KindUbyte
	kBool    = amqpsax.KindBool
	kString  = amqpsax.KindString
	kSymbol  = amqpsax.KindSymbol
	kBinary  = amqpsax.KindBinary
	kMap     = amqpsax.KindMap
	kDescrib = amqpsax.KindDescribed
)

// The composite types this package decodes, field by field as the spec's
// XML lists them (the tests check every row against it).
var (
	specOpen = compositeSpec{name: "open", fields: []fieldSpec{
		mand("container-id", kString), opt("hostname", kString), opt("max-frame-size", kUint),
		opt("channel-max", kUshort), opt("idle-time-out", kUint), syms("outgoing-locales"),
		syms("incoming-locales"), syms("offered-capabilities"), syms("desired-capabilities"),
		opt("properties", kMap)}}
	specBegin = compositeSpec{name: "begin", fields: []fieldSpec{
		opt("remote-channel", kUshort), mand("next-outgoing-id", kUint), mand("incoming-window", kUint),
		mand("outgoing-window", kUint), opt("handle-max", kUint), syms("offered-capabilities"),
		syms("desired-capabilities"), opt("properties", kMap)}}
	specAttach = compositeSpec{name: "attach", fields: []fieldSpec{
		mand("name", kString), mand("handle", kUint), mand("role", kBool), opt("snd-settle-mode", kUbyte),
		opt("rcv-settle-mode", kUbyte), comp("source", "source"), comp("target", "target"),
		opt("unsettled", kMap), opt("incomplete-unsettled", kBool), opt("initial-delivery-count", kUint),
		opt("max-message-size", kUlong), syms("offered-capabilities"), syms("desired-capabilities"),
		opt("properties", kMap)}}
	specFlow = compositeSpec{name: "flow", fields: []fieldSpec{
		opt("next-incoming-id", kUint), mand("incoming-window", kUint), mand("next-outgoing-id", kUint),
		mand("outgoing-window", kUint), opt("handle", kUint), opt("delivery-count", kUint),
		opt("link-credit", kUint), opt("available", kUint), opt("drain", kBool), opt("echo", kBool),
		opt("properties", kMap)}}
	specTransfer = compositeSpec{name: "transfer", fields: []fieldSpec{
		mand("handle", kUint), opt("delivery-id", kUint), opt("delivery-tag", kBinary),
		opt("message-format", kUint), opt("settled", kBool), opt("more", kBool),
		opt("rcv-settle-mode", kUbyte), comp("state", "delivery-state"), opt("resume", kBool),
		opt("aborted", kBool), opt("batchable", kBool)}}
	specDisposition = compositeSpec{name: "disposition", fields: []fieldSpec{
		mand("role", kBool), mand("first", kUint), opt("last", kUint), opt("settled", kBool),
		comp("state", "delivery-state"), opt("batchable", kBool)}}
	specDetach = compositeSpec{name: "detach", fields: []fieldSpec{
		mand("handle", kUint), opt("closed", kBool), comp("error", "error")}}
	specEnd   = compositeSpec{name: "end", fields: []fieldSpec{comp("error", "error")}}
	specClose = compositeSpec{name: "close", fields: []fieldSpec{comp("error", "error")}}
	specError = compositeSpec{name: "error", fields: []fieldSpec{
		mand("condition", kSymbol), opt("description", kString), opt("info", kMap)}}

	specSASLMechanisms = compositeSpec{name: "sasl-mechanisms", fields: []fieldSpec{
		{name: "sasl-server-mechanisms", kind: kSymbol, want: "symbol or array of symbols", mandatory: true, multiple: true}}}
	specSASLInit = compositeSpec{name: "sasl-init", fields: []fieldSpec{
		mand("mechanism", kSymbol), opt("initial-response", kBinary), opt("hostname", kString)}}
	specSASLChallenge = compositeSpec{name: "sasl-challenge", fields: []fieldSpec{mand("challenge", kBinary)}}
	specSASLResponse  = compositeSpec{name: "sasl-response", fields: []fieldSpec{mand("response", kBinary)}}
	specSASLOutcome   = compositeSpec{name: "sasl-outcome", fields: []fieldSpec{
		mand("code", kUbyte), opt("additional-data", kBinary)}}

	specSource = compositeSpec{name: "source", fields: []fieldSpec{
		opt("address", kString), opt("durable", kUint), opt("expiry-policy", kSymbol),
		opt("timeout", kUint), opt("dynamic", kBool), opt("dynamic-node-properties", kMap),
		opt("distribution-mode", kSymbol), opt("filter", kMap), comp("default-outcome", "outcome"),
		syms("outcomes"), syms("capabilities")}}
	specTarget = compositeSpec{name: "target", fields: []fieldSpec{
		opt("address", kString), opt("durable", kUint), opt("expiry-policy", kSymbol),
		opt("timeout", kUint), opt("dynamic", kBool), opt("dynamic-node-properties", kMap),
		syms("capabilities")}}
	specCoordinator = compositeSpec{name: "coordinator", fields: []fieldSpec{syms("capabilities")}}

	specReceived = compositeSpec{name: "received", fields: []fieldSpec{
		mand("section-number", kUint), mand("section-offset", kUlong)}}
	specAccepted = compositeSpec{name: "accepted"}
	specRejected = compositeSpec{name: "rejected", fields: []fieldSpec{comp("error", "error")}}
	specReleased = compositeSpec{name: "released"}
	specModified = compositeSpec{name: "modified", fields: []fieldSpec{
		opt("delivery-failed", kBool), opt("undeliverable-here", kBool), opt("message-annotations", kMap)}}
)

// specs maps each descriptor this package decodes to its type.
var specs = map[amqpsax.Descriptor]*compositeSpec{
	amqpsax.DescriptorOpen:           &specOpen,
	amqpsax.DescriptorBegin:          &specBegin,
	amqpsax.DescriptorAttach:         &specAttach,
	amqpsax.DescriptorFlow:           &specFlow,
	amqpsax.DescriptorTransfer:       &specTransfer,
	amqpsax.DescriptorDisposition:    &specDisposition,
	amqpsax.DescriptorDetach:         &specDetach,
	amqpsax.DescriptorEnd:            &specEnd,
	amqpsax.DescriptorClose:          &specClose,
	amqpsax.DescriptorError:          &specError,
	amqpsax.DescriptorSASLMechanisms: &specSASLMechanisms,
	amqpsax.DescriptorSASLInit:       &specSASLInit,
	amqpsax.DescriptorSASLChallenge:  &specSASLChallenge,
	amqpsax.DescriptorSASLResponse:   &specSASLResponse,
	amqpsax.DescriptorSASLOutcome:    &specSASLOutcome,
	amqpsax.DescriptorSource:         &specSource,
	amqpsax.DescriptorTarget:         &specTarget,
	amqpsax.DescriptorCoordinator:    &specCoordinator,
	amqpsax.DescriptorReceived:       &specReceived,
	amqpsax.DescriptorAccepted:       &specAccepted,
	amqpsax.DescriptorRejected:       &specRejected,
	amqpsax.DescriptorReleased:       &specReleased,
	amqpsax.DescriptorModified:       &specModified,
}

// otherFields names the fields of the spec's composite types this
// package does not decode, so that FieldName covers every one: the
// message's header and properties sections (part 3 §3.2.1, §3.2.4),
// which package message reads, and the transaction types (part 4 §4.5).
// (The lifetime policies have no fields.)
var otherFields = map[amqpsax.Descriptor][]string{
	amqpsax.DescriptorHeader: {"durable", "priority", "ttl", "first-acquirer", "delivery-count"},
	amqpsax.DescriptorProperties: {"message-id", "user-id", "to", "subject", "reply-to",
		"correlation-id", "content-type", "content-encoding", "absolute-expiry-time",
		"creation-time", "group-id", "group-sequence", "reply-to-group-id"},
	amqpsax.DescriptorDeclare:            {"global-id"},
	amqpsax.DescriptorDischarge:          {"txn-id", "fail"},
	amqpsax.DescriptorDeclared:           {"txn-id"},
	amqpsax.DescriptorTransactionalState: {"txn-id", "outcome"},
}

// FieldName returns the spec's name of field i of the composite type with
// descriptor d ("delivery-id" for DescriptorTransfer and
// TransferDeliveryID), for every composite type of the spec — those this
// package decodes, the message's header and properties sections and the
// transaction types — or "" when d is not one or has no field i. Tools
// that print performatives and sections use it to label fields.
func FieldName(d amqpsax.Descriptor, i Field) string {
	if s := specs[d]; s != nil {
		if int(i) < len(s.fields) {
			return s.fields[i].name
		}
		return ""
	}
	if names := otherFields[d]; int(i) < len(names) {
		return names[i]
	}
	return ""
}

// NumFields returns the number of fields the spec gives the composite
// type with descriptor d, or -1 when FieldName does not know d.
func NumFields(d amqpsax.Descriptor) int {
	if s := specs[d]; s != nil {
		return len(s.fields)
	}
	if names, ok := otherFields[d]; ok {
		return len(names)
	}
	return -1
}
