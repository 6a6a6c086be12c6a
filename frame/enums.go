package frame

import "strconv"

// Role is the role of a link's end (part 2 §2.8.1), a boolean on the wire.
type Role bool

// The two roles.
const (
	RoleSender   Role = false
	RoleReceiver Role = true
)

// String returns "sender" or "receiver".
func (r Role) String() string {
	if r {
		return "receiver"
	}
	return "sender"
}

// SenderSettleMode is a sender's settlement policy (part 2 §2.8.2), a
// ubyte on the wire; the constants are the wire values.
type SenderSettleMode uint8

// The sender settle modes.
const (
	SndUnsettled SenderSettleMode = 0 // the sender sends all deliveries unsettled
	SndSettled   SenderSettleMode = 1 // the sender sends all deliveries settled
	SndMixed     SenderSettleMode = 2 // either; the default
)

// String returns the spec's name ("unsettled", "settled", "mixed"), or
// "SenderSettleMode(N)" for a value the spec does not define.
func (m SenderSettleMode) String() string {
	switch m {
	case SndUnsettled:
		return "unsettled"
	case SndSettled:
		return "settled"
	case SndMixed:
		return "mixed"
	}
	return "SenderSettleMode(" + strconv.Itoa(int(m)) + ")"
}

// ReceiverSettleMode is a receiver's settlement policy (part 2 §2.8.3), a
// ubyte on the wire; the constants are the wire values.
type ReceiverSettleMode uint8

// The receiver settle modes.
const (
	RcvFirst  ReceiverSettleMode = 0 // the receiver settles first; the default
	RcvSecond ReceiverSettleMode = 1 // the receiver settles after the sender
)

// String returns "first" or "second", or "ReceiverSettleMode(N)".
func (m ReceiverSettleMode) String() string {
	switch m {
	case RcvFirst:
		return "first"
	case RcvSecond:
		return "second"
	}
	return "ReceiverSettleMode(" + strconv.Itoa(int(m)) + ")"
}

// TerminusDurability is what of a terminus survives (part 3 §3.5.5), a
// uint on the wire; the constants are the wire values.
type TerminusDurability uint32

// The terminus durabilities.
const (
	DurabilityNone           TerminusDurability = 0 // nothing; the default
	DurabilityConfiguration  TerminusDurability = 1 // the terminus's configuration
	DurabilityUnsettledState TerminusDurability = 2 // its configuration and unsettled state
)

// String returns "none", "configuration" or "unsettled-state", or
// "TerminusDurability(N)".
func (d TerminusDurability) String() string {
	switch d {
	case DurabilityNone:
		return "none"
	case DurabilityConfiguration:
		return "configuration"
	case DurabilityUnsettledState:
		return "unsettled-state"
	}
	return "TerminusDurability(" + strconv.FormatUint(uint64(d), 10) + ")"
}

// ExpiryPolicy is when a terminus's expiry timer starts (part 3 §3.5.6),
// a symbol on the wire. The zero value is the spec's default,
// session-end.
type ExpiryPolicy uint8

// The expiry policies.
const (
	ExpirySessionEnd      ExpiryPolicy = iota // "session-end"; the default
	ExpiryLinkDetach                          // "link-detach"
	ExpiryConnectionClose                     // "connection-close"
	ExpiryNever                               // "never"
)

var expiryNames = [...]string{
	ExpirySessionEnd:      "session-end",
	ExpiryLinkDetach:      "link-detach",
	ExpiryConnectionClose: "connection-close",
	ExpiryNever:           "never",
}

// String returns the policy's symbol, or "ExpiryPolicy(N)".
func (p ExpiryPolicy) String() string {
	if int(p) < len(expiryNames) {
		return expiryNames[p]
	}
	return "ExpiryPolicy(" + strconv.Itoa(int(p)) + ")"
}

// lookupExpiry returns the policy whose symbol is sym.
func lookupExpiry(sym []byte) (ExpiryPolicy, bool) {
	for i, s := range expiryNames {
		if s == string(sym) {
			return ExpiryPolicy(i), true
		}
	}
	return 0, false
}

// SASLCode is the outcome of a SASL exchange (part 5 §5.3.3.6), a ubyte
// on the wire; the constants are the wire values.
type SASLCode uint8

// The SASL outcome codes.
const (
	SASLOk      SASLCode = 0 // authentication succeeded
	SASLAuth    SASLCode = 1 // failed: bad credentials
	SASLSys     SASLCode = 2 // failed: system error
	SASLSysPerm SASLCode = 3 // failed: unrecoverable system error
	SASLSysTemp SASLCode = 4 // failed: transient system error
)

var saslCodeNames = [...]string{"ok", "auth", "sys", "sys-perm", "sys-temp"}

// String returns the spec's name ("ok", "auth", "sys", "sys-perm",
// "sys-temp"), or "SASLCode(N)".
func (c SASLCode) String() string {
	if int(c) < len(saslCodeNames) {
		return saslCodeNames[c]
	}
	return "SASLCode(" + strconv.Itoa(int(c)) + ")"
}

// Condition is one of the error conditions the spec defines (part 2
// §2.8.15 to §2.8.18, part 4 §4.5.8): the symbol of an AMQPError. Peers
// may send others (vendor conditions); those are CondOther.
type Condition uint8

// The conditions the spec defines, and CondOther for any other symbol.
const (
	CondOther Condition = iota

	// amqp-error, part 2 §2.8.15
	CondInternalError
	CondNotFound
	CondUnauthorizedAccess
	CondDecodeError
	CondResourceLimitExceeded
	CondNotAllowed
	CondInvalidField
	CondNotImplemented
	CondResourceLocked
	CondPreconditionFailed
	CondResourceDeleted
	CondIllegalState
	CondFrameSizeTooSmall

	// connection-error, §2.8.16
	CondConnectionForced
	CondFramingError
	CondConnectionRedirect

	// session-error, §2.8.17
	CondWindowViolation
	CondErrantLink
	CondHandleInUse
	CondUnattachedHandle

	// link-error, §2.8.18
	CondDetachForced
	CondTransferLimitExceeded
	CondMessageSizeExceeded
	CondLinkRedirect
	CondStolen

	// transaction-error, part 4 §4.5.8
	CondUnknownID
	CondTransactionRollback
	CondTransactionTimeout
)

var conditionSymbols = [...]string{
	CondOther:                 "",
	CondInternalError:         "amqp:internal-error",
	CondNotFound:              "amqp:not-found",
	CondUnauthorizedAccess:    "amqp:unauthorized-access",
	CondDecodeError:           "amqp:decode-error",
	CondResourceLimitExceeded: "amqp:resource-limit-exceeded",
	CondNotAllowed:            "amqp:not-allowed",
	CondInvalidField:          "amqp:invalid-field",
	CondNotImplemented:        "amqp:not-implemented",
	CondResourceLocked:        "amqp:resource-locked",
	CondPreconditionFailed:    "amqp:precondition-failed",
	CondResourceDeleted:       "amqp:resource-deleted",
	CondIllegalState:          "amqp:illegal-state",
	CondFrameSizeTooSmall:     "amqp:frame-size-too-small",
	CondConnectionForced:      "amqp:connection:forced",
	CondFramingError:          "amqp:connection:framing-error",
	CondConnectionRedirect:    "amqp:connection:redirect",
	CondWindowViolation:       "amqp:session:window-violation",
	CondErrantLink:            "amqp:session:errant-link",
	CondHandleInUse:           "amqp:session:handle-in-use",
	CondUnattachedHandle:      "amqp:session:unattached-handle",
	CondDetachForced:          "amqp:link:detach-forced",
	CondTransferLimitExceeded: "amqp:link:transfer-limit-exceeded",
	CondMessageSizeExceeded:   "amqp:link:message-size-exceeded",
	CondLinkRedirect:          "amqp:link:redirect",
	CondStolen:                "amqp:link:stolen",
	CondUnknownID:             "amqp:transaction:unknown-id",
	CondTransactionRollback:   "amqp:transaction:rollback",
	CondTransactionTimeout:    "amqp:transaction:timeout",
}

// LookupCondition returns the condition whose symbol is sym, or
// CondOther. It does not allocate.
func LookupCondition(sym []byte) Condition {
	if len(sym) < 5 || string(sym[:5]) != "amqp:" {
		return CondOther
	}
	for i, s := range conditionSymbols {
		if i > 0 && s == string(sym) {
			return Condition(i)
		}
	}
	return CondOther
}

// Symbol returns the condition's symbol ("amqp:not-found"), or "" for
// CondOther.
func (c Condition) Symbol() string {
	if int(c) < len(conditionSymbols) {
		return conditionSymbols[c]
	}
	return ""
}

// String returns the condition's symbol, "other" for CondOther, or
// "Condition(N)".
func (c Condition) String() string {
	switch {
	case c == CondOther:
		return "other"
	case int(c) < len(conditionSymbols):
		return conditionSymbols[c]
	}
	return "Condition(" + strconv.Itoa(int(c)) + ")"
}

// StateType tells which delivery state (part 3 §3.4) a DeliveryState
// holds.
type StateType uint8

// The delivery states. StateNone is the absence of a state; StateOther
// is a described value of any other descriptor, such as the
// transactional-state and declared of part 4, kept raw.
const (
	StateNone StateType = iota
	StateReceived
	StateAccepted
	StateRejected
	StateReleased
	StateModified
	StateOther
)

var stateNames = [...]string{"none", "received", "accepted", "rejected", "released", "modified", "other"}

// Terminal reports an outcome (part 3 §3.4): accepted, rejected,
// released or modified, the states after which a delivery's state does
// not change. Received, none and other states (such as part 4's
// transactional-state, whose outcome is inside it) are not terminal.
// Every layer decides by this one rule: a sender's delivery is done at
// a terminal outcome (part 2 §2.6.12), and a resume settles what the
// receiver holds in a terminal state (§2.6.13).
func (s StateType) Terminal() bool { return s-StateAccepted <= StateModified-StateAccepted }

// String returns the state's name ("accepted", …), or "StateType(N)".
func (s StateType) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "StateType(" + strconv.Itoa(int(s)) + ")"
}
