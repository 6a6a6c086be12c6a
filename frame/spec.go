package frame

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/protocol/composite"
)

// FieldIndex is the position of a field in the list of a composite type, from
// 0, in the order the spec lists them: TransferDeliveryID is 1 because
// delivery-id is the second field of transfer. The constants below are
// named after the Go type and field; use them with Fields.Has and
// FieldName.
type FieldIndex uint8

// Fields of open (part 2 §2.7.1).
const (
	OpenContainerID FieldIndex = iota
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
	BeginRemoteChannel FieldIndex = iota
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
	AttachName FieldIndex = iota
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
	FlowNextIncomingID FieldIndex = iota
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
	TransferHandle FieldIndex = iota
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
	DispositionRole FieldIndex = iota
	DispositionFirst
	DispositionLast
	DispositionSettled
	DispositionState
	DispositionBatchable
)

// Fields of detach (part 2 §2.7.7).
const (
	DetachHandle FieldIndex = iota
	DetachClosed
	DetachError
)

// Fields of end (part 2 §2.7.8).
const (
	EndError FieldIndex = iota
)

// Fields of close (part 2 §2.7.9).
const (
	CloseError FieldIndex = iota
)

// Fields of error (part 2 §2.8.14).
const (
	AMQPErrorCondition FieldIndex = iota
	AMQPErrorDescription
	AMQPErrorInfo
)

// Fields of the SASL frames (part 5 §5.3.3).
const (
	SASLMechanismsMechanisms FieldIndex = 0 // sasl-server-mechanisms

	SASLInitMechanism       FieldIndex = 0
	SASLInitInitialResponse FieldIndex = 1
	SASLInitHostname        FieldIndex = 2

	SASLChallengeChallenge FieldIndex = 0

	SASLResponseResponse FieldIndex = 0

	SASLOutcomeCode           FieldIndex = 0
	SASLOutcomeAdditionalData FieldIndex = 1
)

// Fields of source (part 3 §3.5.3).
const (
	SourceAddress FieldIndex = iota
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
	TargetAddress FieldIndex = iota
	TargetDurable
	TargetExpiryPolicy
	TargetTimeout
	TargetDynamic
	TargetDynamicNodeProperties
	TargetCapabilities
)

// The field of coordinator (part 4 §4.5.1), a target whose fields a
// Target holds with Coordinator set.
const CoordinatorCapabilities FieldIndex = 0

// Fields of the delivery states (part 3 §3.4); accepted and released
// have none.
const (
	ReceivedSectionNumber FieldIndex = 0
	ReceivedSectionOffset FieldIndex = 1

	RejectedError FieldIndex = 0

	ModifiedDeliveryFailed     FieldIndex = 0
	ModifiedUndeliverableHere  FieldIndex = 1
	ModifiedMessageAnnotations FieldIndex = 2
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
func (f Fields) Has(i FieldIndex) bool { return i < 32 && f.set&(1<<i) != 0 }

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

// The composite types this package decodes, field by field as the spec's
// XML lists them, defaults included (the tests check every row against
// it). Package composite reads and writes them by these tables; it holds
// the tables of the message's header and properties sections, which
// package message reads.
var (
	specOpen = composite.New("open", amqpsax.DescriptorOpen,
		mand("container-id", kString), opt("hostname", kString), opt("max-frame-size", kUint).Def("4294967295"),
		opt("channel-max", kUshort).Def("65535"), opt("idle-time-out", kUint), syms("outgoing-locales"),
		syms("incoming-locales"), syms("offered-capabilities"), syms("desired-capabilities"),
		opt("properties", kMap))
	specBegin = composite.New("begin", amqpsax.DescriptorBegin,
		opt("remote-channel", kUshort), mand("next-outgoing-id", kUint), mand("incoming-window", kUint),
		mand("outgoing-window", kUint), opt("handle-max", kUint).Def("4294967295"), syms("offered-capabilities"),
		syms("desired-capabilities"), opt("properties", kMap))
	specAttach = composite.New("attach", amqpsax.DescriptorAttach,
		mand("name", kString), mand("handle", kUint), mand("role", kBool), opt("snd-settle-mode", kUbyte).Def("2"),
		opt("rcv-settle-mode", kUbyte).Def("0"), comp("source", "source"), comp("target", "target"),
		opt("unsettled", kMap), opt("incomplete-unsettled", kBool).Def("false"), opt("initial-delivery-count", kUint),
		opt("max-message-size", kUlong), syms("offered-capabilities"), syms("desired-capabilities"),
		opt("properties", kMap))
	specFlow = composite.New("flow", amqpsax.DescriptorFlow,
		opt("next-incoming-id", kUint), mand("incoming-window", kUint), mand("next-outgoing-id", kUint),
		mand("outgoing-window", kUint), opt("handle", kUint), opt("delivery-count", kUint),
		opt("link-credit", kUint), opt("available", kUint), opt("drain", kBool).Def("false"),
		opt("echo", kBool).Def("false"), opt("properties", kMap))
	specTransfer = composite.New("transfer", amqpsax.DescriptorTransfer,
		mand("handle", kUint), opt("delivery-id", kUint), opt("delivery-tag", kBinary),
		opt("message-format", kUint), opt("settled", kBool), opt("more", kBool).Def("false"),
		opt("rcv-settle-mode", kUbyte), comp("state", "delivery-state"), opt("resume", kBool).Def("false"),
		opt("aborted", kBool).Def("false"), opt("batchable", kBool).Def("false"))
	specDisposition = composite.New("disposition", amqpsax.DescriptorDisposition,
		mand("role", kBool), mand("first", kUint), opt("last", kUint), opt("settled", kBool).Def("false"),
		comp("state", "delivery-state"), opt("batchable", kBool).Def("false"))
	specDetach = composite.New("detach", amqpsax.DescriptorDetach,
		mand("handle", kUint), opt("closed", kBool).Def("false"), comp("error", "error"))
	specEnd   = composite.New("end", amqpsax.DescriptorEnd, comp("error", "error"))
	specClose = composite.New("close", amqpsax.DescriptorClose, comp("error", "error"))
	specError = composite.New("error", amqpsax.DescriptorError,
		mand("condition", kSymbol), opt("description", kString), opt("info", kMap))

	specSASLMechanisms = composite.New("sasl-mechanisms", amqpsax.DescriptorSASLMechanisms,
		composite.Field{Name: "sasl-server-mechanisms", Kind: kSymbol, Want: "symbol or array of symbols", Mandatory: true, Multiple: true})
	specSASLInit = composite.New("sasl-init", amqpsax.DescriptorSASLInit,
		mand("mechanism", kSymbol), opt("initial-response", kBinary), opt("hostname", kString))
	specSASLChallenge = composite.New("sasl-challenge", amqpsax.DescriptorSASLChallenge, mand("challenge", kBinary))
	specSASLResponse  = composite.New("sasl-response", amqpsax.DescriptorSASLResponse, mand("response", kBinary))
	specSASLOutcome   = composite.New("sasl-outcome", amqpsax.DescriptorSASLOutcome,
		mand("code", kUbyte), opt("additional-data", kBinary))

	specSource = composite.New("source", amqpsax.DescriptorSource,
		opt("address", kString), opt("durable", kUint).Def("0"), opt("expiry-policy", kSymbol).Def("session-end"),
		opt("timeout", kUint).Def("0"), opt("dynamic", kBool).Def("false"), opt("dynamic-node-properties", kMap),
		opt("distribution-mode", kSymbol), opt("filter", kMap), comp("default-outcome", "outcome"),
		syms("outcomes"), syms("capabilities"))
	specTarget = composite.New("target", amqpsax.DescriptorTarget,
		opt("address", kString), opt("durable", kUint).Def("0"), opt("expiry-policy", kSymbol).Def("session-end"),
		opt("timeout", kUint).Def("0"), opt("dynamic", kBool).Def("false"), opt("dynamic-node-properties", kMap),
		syms("capabilities"))
	specCoordinator = composite.New("coordinator", amqpsax.DescriptorCoordinator, syms("capabilities"))

	specReceived = composite.New("received", amqpsax.DescriptorReceived,
		mand("section-number", kUint), mand("section-offset", kUlong))
	specAccepted = composite.New("accepted", amqpsax.DescriptorAccepted)
	specRejected = composite.New("rejected", amqpsax.DescriptorRejected, comp("error", "error"))
	specReleased = composite.New("released", amqpsax.DescriptorReleased)
	specModified = composite.New("modified", amqpsax.DescriptorModified,
		opt("delivery-failed", kBool), opt("undeliverable-here", kBool), opt("message-annotations", kMap))
)

var (
	mand = composite.Mand
	opt  = composite.Opt
	syms = composite.Syms
	comp = composite.Comp
)

const (
	kUint   = amqpsax.KindUint
	kUlong  = amqpsax.KindUlong
	kUshort = amqpsax.KindUshort
	kUbyte  = amqpsax.KindUbyte
	kBool   = amqpsax.KindBool
	kString = amqpsax.KindString
	kSymbol = amqpsax.KindSymbol
	kBinary = amqpsax.KindBinary
	kMap    = amqpsax.KindMap
)

// specs maps each descriptor this package decodes to its type.
var specs = map[amqpsax.Descriptor]*composite.Spec{
	amqpsax.DescriptorOpen:           specOpen,
	amqpsax.DescriptorBegin:          specBegin,
	amqpsax.DescriptorAttach:         specAttach,
	amqpsax.DescriptorFlow:           specFlow,
	amqpsax.DescriptorTransfer:       specTransfer,
	amqpsax.DescriptorDisposition:    specDisposition,
	amqpsax.DescriptorDetach:         specDetach,
	amqpsax.DescriptorEnd:            specEnd,
	amqpsax.DescriptorClose:          specClose,
	amqpsax.DescriptorError:          specError,
	amqpsax.DescriptorSASLMechanisms: specSASLMechanisms,
	amqpsax.DescriptorSASLInit:       specSASLInit,
	amqpsax.DescriptorSASLChallenge:  specSASLChallenge,
	amqpsax.DescriptorSASLResponse:   specSASLResponse,
	amqpsax.DescriptorSASLOutcome:    specSASLOutcome,
	amqpsax.DescriptorSource:         specSource,
	amqpsax.DescriptorTarget:         specTarget,
	amqpsax.DescriptorCoordinator:    specCoordinator,
	amqpsax.DescriptorReceived:       specReceived,
	amqpsax.DescriptorAccepted:       specAccepted,
	amqpsax.DescriptorRejected:       specRejected,
	amqpsax.DescriptorReleased:       specReleased,
	amqpsax.DescriptorModified:       specModified,

	amqpsax.DescriptorDeclare:            specDeclare,
	amqpsax.DescriptorDischarge:          specDischarge,
	amqpsax.DescriptorDeclared:           specDeclared,
	amqpsax.DescriptorTransactionalState: specTransactionalState,
}

// sections are the message's header and properties sections (part 3
// §3.2.1, §3.2.4), which package message reads by their tables.
var sections = map[amqpsax.Descriptor]*composite.Spec{
	amqpsax.DescriptorHeader:     composite.Header,
	amqpsax.DescriptorProperties: composite.Properties,
}

// FieldName returns the spec's name of field i of the composite type with
// descriptor d ("delivery-id" for DescriptorTransfer and
// TransferDeliveryID), for every composite type of the spec — those this
// package decodes, the message's header and properties sections and the
// transaction types — or "" when d is not one or has no field i. Tools
// that print performatives and sections use it to label fields.
func FieldName(d amqpsax.Descriptor, i FieldIndex) string {
	s := specs[d]
	if s == nil {
		s = sections[d]
	}
	if s != nil {
		if int(i) < len(s.Fields) {
			return s.Fields[i].Name
		}
	}
	return ""
}

// NumFields returns the number of fields the spec gives the composite
// type with descriptor d, or -1 when FieldName does not know d.
func NumFields(d amqpsax.Descriptor) int {
	if s := specs[d]; s != nil {
		return len(s.Fields)
	}
	if s := sections[d]; s != nil {
		return len(s.Fields)
	}
	return -1
}

// ChoiceName returns the name the spec gives value v of field i of the
// composite type with descriptor d, when that field has a restricted
// type of numbered or boolean choices: role (part 2 §2.8.1, v 0 or 1 for
// false or true), sender-settle-mode and receiver-settle-mode (§2.8.2,
// §2.8.3), terminus-durability (part 3 §3.5.5) and sasl-code (part 5
// §5.3.3.6). It returns "" and false for any other field (symbols, such
// as expiry policies and error conditions, name themselves). Tools that
// print performatives use it to label such values.
func ChoiceName(d amqpsax.Descriptor, i FieldIndex, v uint64) (string, bool) {
	switch {
	case d == amqpsax.DescriptorAttach && i == AttachRole, d == amqpsax.DescriptorDisposition && i == DispositionRole:
		if v > 1 {
			return "", false
		}
		return Role(v == 1).String(), true
	case d == amqpsax.DescriptorAttach && i == AttachSndSettleMode:
		return SenderSettleMode(v).String(), v <= uint64(SndMixed)
	case d == amqpsax.DescriptorAttach && i == AttachRcvSettleMode, d == amqpsax.DescriptorTransfer && i == TransferRcvSettleMode:
		return ReceiverSettleMode(v).String(), v <= uint64(RcvSecond)
	case d == amqpsax.DescriptorSource && i == SourceDurable, d == amqpsax.DescriptorTarget && i == TargetDurable:
		return TerminusDurability(v).String(), v <= uint64(DurabilityUnsettledState)
	case d == amqpsax.DescriptorSASLOutcome && i == SASLOutcomeCode:
		return SASLCode(v).String(), v <= uint64(SASLSysTemp)
	}
	return "", false
}
