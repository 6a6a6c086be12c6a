package frame

import (
	"encoding/binary"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
)

// TransferHead is what a receiver's hot path reads of a transfer (part 2
// §2.7.5): the link, the delivery, and whether it is settled and
// complete. [ParseTransferHead] fills it for the transfers peers write for
// a message in flight, without building a [Transfer].
//
// It is flat, plain values with their presence beside them rather than
// [Opt]s, so that it fills in one pass and costs little to return. Its
// [Fields] record what the parse saw, as a Transfer's do.
type TransferHead struct {
	Fields
	Handle uint32
	// DeliveryID is the delivery-id, when HasDeliveryID (it may be absent
	// on the transfers that continue a delivery).
	DeliveryID uint32
	// MessageFormat is the message-format, when HasMessageFormat.
	MessageFormat uint32
	// DeliveryTag is the delivery-tag, a view into the body; nil when
	// absent.
	DeliveryTag      []byte
	HasDeliveryID    bool
	HasMessageFormat bool
	Settled          bool
	More             bool
}

// Transfer returns the transfer h describes: what ParseTransfer returns
// for a body ParseTransferHead took, Fields included.
func (h *TransferHead) Transfer() Transfer {
	return Transfer{Fields: h.Fields, Handle: h.Handle,
		DeliveryID: Opt[uint32]{h.DeliveryID, h.HasDeliveryID}, DeliveryTag: h.DeliveryTag,
		MessageFormat: Opt[uint32]{h.MessageFormat, h.HasMessageFormat}, Settled: h.Settled, More: h.More}
}

// The first four bytes of a transfer body in a list8 and in a list32:
// descriptor constructor, smallulong, transfer's descriptor, list code.
const (
	transferList8  = 0x00<<24 | uint32(amqpsax.CodeSmallUlong)<<16 | uint32(amqpsax.DescriptorTransfer)<<8 | uint32(amqpsax.CodeList8)
	transferList32 = 0x00<<24 | uint32(amqpsax.CodeSmallUlong)<<16 | uint32(amqpsax.DescriptorTransfer)<<8 | uint32(amqpsax.CodeList32)
)

// ParseTransferHead is a transfer's fast path: it reads the handle,
// delivery-id, delivery-tag, message-format, settled and more of the
// transfer at the start of body (a frame's Body) in one pass, and returns
// them with the payload after the performative (a view into body).
//
// It takes the encodings peers write for a message in flight: descriptor
// 0x00 0x53 0x14, a list8 or list32 of at most the eleven fields of a
// transfer, each of the first six null or in the plain encodings of its
// type (uint0, smalluint or uint; vbin8 or vbin32; true, false or 0x56),
// and the fields after more null, or false for resume, aborted and
// batchable. For anything else (a rcv-settle-mode or state, a resume,
// aborted or batchable set, another encoding, or any fault) ok is false:
// call [ParseTransfer], which decodes every transfer and names the fault.
// When ok is true, ParseTransfer accepts body and gives the same values,
// Fields and payload ([TransferHead.Transfer]), and the fields TransferHead
// lacks are at their zero. It does not allocate.
func ParseTransferHead(body []byte) (h TransferHead, payload []byte, ok bool) {
	payload, ok = h.Parse(body)
	return h, payload, ok
}

// Parse is ParseTransferHead into h, which it overwrites: h.Parse(body)
// in a receiver's loop costs no copy of the TransferHead. When ok is
// false, h is zero.
func (h *TransferHead) Parse(body []byte) (payload []byte, ok bool) {
	*h = TransferHead{}
	// list0 has no handle; anything else is not a plain transfer.
	i, rest, count := performativeList(body, transferList8, transferList32)
	h.wide = i == 12
	if count < 1 || count > 11 { // a fault (count 0: -1 rest), or fields beyond the spec's
		return h.fail()
	}
	end := i + rest // where the list's elements end (Compound8/32 checked it is within body)
	h.n = uint8(count)

	b := body[:end]
	var j int
	var has bool
	// handle: mandatory, so a null will not do.
	if h.Handle, j, has = uintAt(b, i); !has {
		return h.fail()
	}
	i, h.set = j, 1<<TransferHandle
	if count == 1 {
		goto done
	}
	if h.DeliveryID, j, has = uintAt(b, i); j < 0 {
		return h.fail()
	}
	i, h.HasDeliveryID = j, has
	if has {
		h.set |= 1 << TransferDeliveryID
	}
	if count == 2 {
		goto done
	}
	if h.DeliveryTag, j = binaryAt(b, i); j < 0 {
		return h.fail()
	}
	i = j
	if h.DeliveryTag != nil {
		h.set |= 1 << TransferDeliveryTag
	}
	if count == 3 {
		goto done
	}
	if h.MessageFormat, j, has = uintAt(b, i); j < 0 {
		return h.fail()
	}
	i, h.HasMessageFormat = j, has
	if has {
		h.set |= 1 << TransferMessageFormat
	}
	if count == 4 {
		goto done
	}
	if h.Settled, j, has = boolAt(b, i); j < 0 {
		return h.fail()
	}
	i = j
	if has {
		h.set |= 1 << TransferSettled
	}
	if count == 5 {
		goto done
	}
	if h.More, j, has = boolAt(b, i); j < 0 {
		return h.fail()
	}
	i = j
	if has {
		h.set |= 1 << TransferMore
	}
	if count > 6 {
		if i = restAt(b, i, count, &h.Fields); i < 0 {
			return h.fail()
		}
	}
done:
	if i != len(b) { // the elements fill the list's size exactly
		return h.fail()
	}
	return body[end:], true
}

// performativeList reads the head of the performative at the start of
// body when its first four bytes are list8's or list32's (descriptor
// and list code): where its elements start (6 or 12), their size and
// their count. count is below 1 for another head, and for a list that
// does not fit in body.
func performativeList(body []byte, list8, list32 uint32) (i, rest, count int) {
	if len(body) >= 6 {
		switch binary.BigEndian.Uint32(body) {
		case list8:
			rest, count = wire.Compound8(body[4:])
			return 6, rest, count
		case list32:
			rest, count = wire.Compound32(body[4:])
			return 12, rest, count
		}
	}
	return 0, 0, -1
}

// fail zeroes h and reports that Parse did not take the body.
func (h *TransferHead) fail() ([]byte, bool) {
	*h = TransferHead{}
	return nil, false
}

// parseTransferFast is ParseTransfer's fast path: ParseTransferHead's
// transfer. FuzzTransferFast holds it to the spec-table parser, Fields
// and all.
func parseTransferFast(body []byte) (t Transfer, payload []byte, ok bool) {
	h, payload, ok := ParseTransferHead(body)
	if !ok {
		return Transfer{}, nil, false
	}
	return h.Transfer(), payload, true
}

// The readers of ParseTransferHead's fields, at b[i]: the value, where
// it ends in b (the transfer's list), and has, false for a null; j is
// negative when b[i] starts neither a null nor a value of the field's
// type, in the encodings read here, that ends within b. The widths are
// the spec's (part 1 §1.6), which wire.Table holds;
// TestTransferHeadCodes holds the two to each other. They inline.

// uintAt reads a uint0, smalluint or uint, or a null.
func uintAt(b []byte, i int) (v uint32, j int, has bool) {
	if i < len(b) {
		switch amqpsax.Code(b[i]) {
		case amqpsax.CodeSmallUint:
			if i+1 < len(b) {
				return uint32(b[i+1]), i + 2, true
			}
		case amqpsax.CodeUint0:
			return 0, i + 1, true
		case amqpsax.CodeUint:
			if i+4 < len(b) {
				return binary.BigEndian.Uint32(b[i+1:]), i + 5, true
			}
		case amqpsax.CodeNull:
			return 0, i + 1, false
		}
	}
	return 0, -1, false
}

// binaryAt reads a vbin8 or vbin32, as a view with its capacity cut to
// its length, or a null (v nil).
func binaryAt(b []byte, i int) (v []byte, j int) {
	if i < len(b) {
		switch amqpsax.Code(b[i]) {
		case amqpsax.CodeVbin8:
			if n := wire.Var8(b[i+1:]); n >= 0 {
				j = i + 2 + n
				return b[i+2 : j : j], j
			}
		case amqpsax.CodeNull:
			return nil, i + 1
		case amqpsax.CodeVbin32:
			if n := wire.Var32(b[i+1:]); n >= 0 {
				j = i + 5 + n
				return b[i+5 : j : j], j
			}
		}
	}
	return nil, -1
}

// boolAt reads a true, false, or 0x56 and its byte (0 or 1), or a null.
func boolAt(b []byte, i int) (v bool, j int, has bool) {
	if i < len(b) {
		switch amqpsax.Code(b[i]) {
		case amqpsax.CodeFalse:
			return false, i + 1, true
		case amqpsax.CodeTrue:
			return true, i + 1, true
		case amqpsax.CodeBool:
			if i+1 < len(b) && b[i+1] <= 1 {
				return b[i+1] == 1, i + 2, true
			}
		case amqpsax.CodeNull:
			return false, i + 1, false
		}
	}
	return false, -1, false
}

// restAt reads the fields after more, from b[i]: rcv-settle-mode and
// state null, resume, aborted and batchable null or false. It returns
// where they end, or -1.
func restAt(b []byte, i, count int, f *Fields) int {
	for k := int(TransferRcvSettleMode); k < count; k++ {
		if i < len(b) && b[i] == byte(amqpsax.CodeNull) {
			i++
			continue
		}
		if k < int(TransferResume) {
			return -1
		}
		v, j, _ := boolAt(b, i)
		if j < 0 || v {
			return -1
		}
		i, f.set = j, f.set|1<<k
	}
	return i
}

// The first four bytes of a disposition body in a list8 and in a list32.
const (
	dispositionList8  = 0x00<<24 | uint32(amqpsax.CodeSmallUlong)<<16 | uint32(amqpsax.DescriptorDisposition)<<8 | uint32(amqpsax.CodeList8)
	dispositionList32 = 0x00<<24 | uint32(amqpsax.CodeSmallUlong)<<16 | uint32(amqpsax.DescriptorDisposition)<<8 | uint32(amqpsax.CodeList32)
)

// parseDispositionFast is ParseDisposition's fast path, for the
// dispositions peers write for outcomes: descriptor 0x00 0x53 0x15, a
// list8 or list32 of two to six fields that fill body, role, settled and
// batchable as boolAt reads them, first and last as uintAt does, and a
// state that is null or an accepted or released with no fields (0x00
// 0x53 0x24 or 0x26, then list0). For anything else ok is false, and
// ParseDisposition decodes the body through the spec table, which takes
// every encoding and names any fault. FuzzDispositionFast holds the two
// to the same Disposition, Fields included.
func parseDispositionFast(body []byte) (d Disposition, ok bool) {
	i, rest, count := performativeList(body, dispositionList8, dispositionList32)
	d.wide = i == 12
	// role and first are mandatory; a fault gives count 0.
	if count < 2 || count > int(DispositionBatchable)+1 || i+rest != len(body) {
		return Disposition{}, false
	}
	d.n = uint8(count)
	b := body
	var j int
	var has, v bool
	if v, j, has = boolAt(b, i); !has {
		return Disposition{}, false
	}
	d.Role, i, d.set = Role(v), j, 1<<DispositionRole
	if d.First, j, has = uintAt(b, i); !has {
		return Disposition{}, false
	}
	i, d.set = j, d.set|1<<DispositionFirst
	if count > int(DispositionLast) {
		var last uint32
		if last, j, has = uintAt(b, i); j < 0 {
			return Disposition{}, false
		}
		if i = j; has {
			d.Last, d.set = Some(last), d.set|1<<DispositionLast
		}
	}
	if count > int(DispositionSettled) {
		if d.Settled, j, has = boolAt(b, i); j < 0 {
			return Disposition{}, false
		}
		if i = j; has {
			d.set |= 1 << DispositionSettled
		}
	}
	if count > int(DispositionState) {
		if i, ok = stateAt(b, i, &d.State); !ok {
			return Disposition{}, false
		}
		if d.State.Type != StateNone {
			d.set |= 1 << DispositionState
		}
	}
	if count > int(DispositionBatchable) {
		if d.Batchable, j, has = boolAt(b, i); j < 0 {
			return Disposition{}, false
		}
		if i = j; has {
			d.set |= 1 << DispositionBatchable
		}
	}
	if i != len(b) { // the elements fill the list's size exactly
		return Disposition{}, false
	}
	return d, true
}

// stateAt reads, at b[i], a null or an accepted or released with no
// fields (0x00 0x53 0x24 or 0x26, then list0) into s, and returns where
// it ends; ok is false for anything else.
func stateAt(b []byte, i int, s *DeliveryState) (j int, ok bool) {
	if i < len(b) && b[i] == byte(amqpsax.CodeNull) {
		return i + 1, true
	}
	if i+4 > len(b) || b[i] != 0x00 || b[i+1] != byte(amqpsax.CodeSmallUlong) || b[i+3] != byte(amqpsax.CodeList0) {
		return -1, false
	}
	switch d := amqpsax.Descriptor(b[i+2]); d {
	case amqpsax.DescriptorAccepted:
		s.Type = StateAccepted
	case amqpsax.DescriptorReleased:
		s.Type = StateReleased
	default:
		return -1, false
	}
	s.Descriptor, s.Raw = amqpsax.Descriptor(b[i+2]), b[i:i+4:i+4]
	return i + 4, true
}
