package frame

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/internal/protocol/composite"
	"github.com/amqpsax/amqpsax/stream"
)

// This file is part 4 of the spec, transactions (§4.5): the values a
// controller and a coordinator exchange. A controller attaches a sending
// link whose target is a coordinator (a [Target] with Coordinator set)
// and sends it messages whose body is an amqp-value holding a [Declare]
// or a [Discharge]; the coordinator answers a declare with the
// [Declared] state in its disposition, a discharge with accepted or
// rejected. Work inside a transaction carries a [TransactionalState] as
// the state of its transfers and dispositions. Declared and
// transactional-state arrive as a [DeliveryState] of type [StateOther]
// (Descriptor tells which), decoded from its Raw by [ParseDeclared] and
// [ParseTransactionalState]; declare and discharge, from the
// amqp-value's value, by [ParseDeclare] and [ParseDischarge].

// TxnCapLocal and its kin are the txn-capability symbols (part 4 §4.5.6)
// of a coordinator's capabilities.
const (
	TxnCapLocal         = "amqp:local-transactions"
	TxnCapDistributed   = "amqp:distributed-transactions"
	TxnCapPromotable    = "amqp:promotable-transactions"
	TxnCapMultiPerSsn   = "amqp:multi-txns-per-ssn"
	TxnCapMultiSsnPerTx = "amqp:multi-ssns-per-txn"
)

// Declare is the declare of part 4 §4.5.2: a controller asks the
// coordinator for a new transaction. Its one field, global-id, asks for
// a distributed transaction (a global-tx-id, a type no part of the spec
// defines: it is the transaction manager's). This package does local
// transactions only: [ParseDeclare] refuses a declare that carries one
// ([ErrFieldType]), which a coordinator answers with rejected, and
// GlobalID, when set, is written by [AppendDeclare] as it is (an encoded
// value), for a controller that asks anyway.
type Declare struct {
	Fields
	GlobalID []byte
}

// Discharge is the discharge of part 4 §4.5.3: the controller ends a
// transaction, committing it, or rolling it back when Fail is set.
type Discharge struct {
	Fields
	TxnID []byte // binary (transaction-id), mandatory
	// Fail asks for a rollback; absent means commit (false, though the
	// spec gives no default).
	Fail bool
}

// Declared is the declared outcome of part 4 §4.5.4: the coordinator's
// answer to a declare, with the transaction's id.
type Declared struct {
	Fields
	TxnID []byte // binary (transaction-id), mandatory
}

// TransactionalState is the transactional-state of part 4 §4.5.5: the
// state of a transfer or disposition that is part of transaction TxnID,
// with the outcome it takes when the transaction commits (Type
// [StateNone] when it has none, as on a controller's transactional
// transfer). Outcome is one of accepted, rejected, released, modified
// (received is no outcome) or a declared; another described value is
// kept raw as [StateOther].
type TransactionalState struct {
	Fields
	TxnID   []byte // binary (transaction-id), mandatory
	Outcome DeliveryState
}

// Fields of the transaction types (part 4 §4.5).
const (
	DeclareGlobalID FieldIndex = 0

	DischargeTxnID FieldIndex = 0
	DischargeFail  FieldIndex = 1

	DeclaredTxnID FieldIndex = 0

	TransactionalStateTxnID   FieldIndex = 0
	TransactionalStateOutcome FieldIndex = 1
)

var (
	specDeclare = composite.New("declare", amqpsax.DescriptorDeclare,
		composite.Field{Name: "global-id", Kind: amqpsax.KindInvalid, Want: "global-tx-id"})
	specDischarge = composite.New("discharge", amqpsax.DescriptorDischarge,
		mand("txn-id", kBinary), opt("fail", kBool))
	specDeclared           = composite.New("declared", amqpsax.DescriptorDeclared, mand("txn-id", kBinary))
	specTransactionalState = composite.New("transactional-state", amqpsax.DescriptorTransactionalState,
		mand("txn-id", kBinary), comp("outcome", "outcome"))
)

// ParseDeclare decodes the declare value holds: the value of the
// amqp-value section of a message sent to a coordinator. Bytes after it
// are refused (ErrTrailing); errors are as ParseOpen's.
func ParseDeclare(value []byte) (d Declare, err error) {
	var p parser
	end, ok := p.start(value, 0, amqpsax.DescriptorDeclare, specDeclare)
	if !ok {
		return d, p.error()
	}
	for p.Next() {
	}
	if err := p.done(&d.Fields); err != nil {
		return d, err
	}
	return d, trailing(value, end, specDeclare.Name)
}

// ParseDischarge decodes the discharge value holds, as ParseDeclare
// does. TxnID is a view into value.
func ParseDischarge(value []byte) (d Discharge, err error) {
	var p parser
	end, ok := p.start(value, 0, amqpsax.DescriptorDischarge, specDischarge)
	if !ok {
		return d, p.error()
	}
	for p.Next() {
		switch p.field() {
		case DischargeTxnID:
			d.TxnID = p.C.Bytes()
		case DischargeFail:
			d.Fail = p.Bool()
		}
	}
	if err := p.done(&d.Fields); err != nil {
		return d, err
	}
	return d, trailing(value, end, specDischarge.Name)
}

// ParseDeclared decodes a declared state: the Raw of a [DeliveryState]
// of type StateOther with Descriptor DescriptorDeclared. TxnID is a view
// into raw.
func ParseDeclared(raw []byte) (d Declared, err error) {
	var p parser
	end, ok := p.start(raw, 0, amqpsax.DescriptorDeclared, specDeclared)
	if !ok {
		return d, p.error()
	}
	for p.Next() {
		if p.field() == DeclaredTxnID {
			d.TxnID = p.C.Bytes()
		}
	}
	if err := p.done(&d.Fields); err != nil {
		return d, err
	}
	return d, trailing(raw, end, specDeclared.Name)
}

// ParseTransactionalState decodes a transactional-state: the Raw of a
// [DeliveryState] of type StateOther with Descriptor
// DescriptorTransactionalState. An outcome that is a received state is
// refused (ErrFieldValue: received is no outcome). TxnID and the
// outcome's bytes are views into raw.
func ParseTransactionalState(raw []byte) (s TransactionalState, err error) {
	var p parser
	end, ok := p.start(raw, 0, amqpsax.DescriptorTransactionalState, specTransactionalState)
	if !ok {
		return s, p.error()
	}
	for p.Next() {
		switch p.field() {
		case TransactionalStateTxnID:
			s.TxnID = p.C.Bytes()
		case TransactionalStateOutcome:
			s.Outcome, p.Err = parseState(p.Raw, p.Base+p.C.Offset())
			if p.Err == nil && (s.Outcome.Type == StateReceived ||
				s.Outcome.Descriptor == amqpsax.DescriptorTransactionalState) {
				p.BadValue(s.Outcome.Descriptor.String())
			}
		}
	}
	if err := p.done(&s.Fields); err != nil {
		return s, err
	}
	return s, trailing(raw, end, specTransactionalState.Name)
}

// AppendDeclare appends d as a declare, as AppendOpen does.
func AppendDeclare(b []byte, d Declare) []byte {
	w := compose(b, specDeclare)
	w.Raw(d.Has(DeclareGlobalID) || d.GlobalID != nil, d.GlobalID)
	return w.end(d.Fields)
}

// AppendDischarge appends d as a discharge, as AppendOpen does.
func AppendDischarge(b []byte, d Discharge) []byte {
	w := compose(b, specDischarge)
	w.Binary(true, d.TxnID)
	w.Bool(d.Has(DischargeFail) || d.Fail, d.Fail)
	return w.end(d.Fields)
}

// AppendDeclared appends d as a declared state, as AppendOpen does. Put
// it in a disposition as DeliveryState{Type: StateOther, Raw: …}.
func AppendDeclared(b []byte, d Declared) []byte {
	w := compose(b, specDeclared)
	w.Binary(true, d.TxnID)
	return w.end(d.Fields)
}

// AppendTransactionalState appends s as a transactional-state, as
// AppendOpen does: the outcome when its Type is not StateNone. Put it in
// a transfer or disposition as DeliveryState{Type: StateOther, Raw: …}.
// It allocates only to grow b.
func AppendTransactionalState(b []byte, s TransactionalState) []byte {
	return appendTxnState(b, &s)
}

func appendTxnState(b []byte, s *TransactionalState) []byte {
	w := compose(b, specTransactionalState)
	w.Binary(true, s.TxnID)
	w.state(s.Has(TransactionalStateOutcome) || s.Outcome.Type != StateNone, &s.Outcome)
	return w.end(s.Fields)
}

// AppendControl appends the message a controller sends a coordinator:
// one amqp-value section holding value, the encoding of a declare or
// discharge (from [AppendDeclare] or [AppendDischarge]).
func AppendControl(b, value []byte) []byte {
	b = encode.AppendUlong(encode.AppendDescribed(b), uint64(amqpsax.DescriptorAMQPValue))
	return append(b, value...)
}

// ParseDeliveryState decodes a delivery state on its own, as the values
// of an attach's unsettled map hold them (part 2 §2.6.13): one of part
// 3's, part 4's declared or transactional-state as StateOther (decode
// those with ParseDeclared, ParseTransactionalState), or null
// (StateNone). Bytes after it are refused.
func ParseDeliveryState(raw []byte) (DeliveryState, error) {
	if len(raw) == 1 && raw[0] == byte(amqpsax.CodeNull) {
		return DeliveryState{}, nil
	}
	s, err := parseState(raw, 0)
	if err != nil {
		return s, err
	}
	var c stream.Cursor
	c.Reset(raw)
	if c.Next(); len(c.Raw()) != len(raw) {
		return s, trailing(raw, len(c.Raw()), "delivery-state")
	}
	return s, nil
}

// AppendDeliveryState appends s as a delivery state on its own (null for
// StateNone), as ParseDeliveryState reads it: the values of an attach's
// unsettled map.
func AppendDeliveryState(b []byte, s DeliveryState) []byte { return appendState(b, &s) }
