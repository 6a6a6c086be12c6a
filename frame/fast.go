package frame

import (
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
)

// parseTransferFast is ParseTransfer's fast path: it decodes the
// transfers every peer writes for a message in flight — descriptor 0x00
// 0x53 0x14, a list of at most the first six fields (handle, delivery-id,
// delivery-tag, message-format, settled, more) in their usual encodings —
// reading each value's length fields with wire.Body, the byte rules' one
// home. Anything else (other fields, other encodings, any fault) is not
// ok, and the spec-table parser decodes it and names the fault. For what
// it accepts it gives what that parser gives, Fields included
// (FuzzTransferFast holds it to that), in a fraction of the time: every
// receiver's hot path.
func parseTransferFast(body []byte) (t Transfer, payload []byte, ok bool) {
	if len(body) < 4 || body[0] != 0x00 || body[1] != 0x53 || body[2] != byte(amqpsax.DescriptorTransfer) {
		return t, nil, false
	}
	lc := amqpsax.Code(body[3])
	if op := wire.Table[lc].Op(); op != wire.OpList8 && op != wire.OpList32 {
		return t, nil, false
	}
	hdr, size, count := wire.Body(lc, body[4:])
	if hdr < 0 || count < 1 || count > 6 {
		return t, nil, false
	}
	t.n, t.wide = uint8(count), lc == amqpsax.CodeList32
	end := 4 + hdr + size
	list := body[4+hdr : end]
	pos := 0
	for i := range count {
		if pos >= len(list) {
			return t, nil, false
		}
		c := amqpsax.Code(list[pos])
		e := wire.Table[c]
		if cat := e.Cat(); cat != wire.Fixed && cat != wire.Variable {
			return t, nil, false
		}
		h, sz, _ := wire.Body(c, list[pos+1:])
		if h < 0 {
			return t, nil, false
		}
		p := list[pos+1+h : pos+1+h+sz]
		pos += 1 + h + sz
		op := e.Op()
		isUint := op == wire.OpUint0 || op == wire.OpSmallUint || op == wire.OpUint
		isBool := op == wire.OpTrue || op == wire.OpFalse || op == wire.OpBool
		switch {
		case i > 0 && op == wire.OpNull:
			continue
		case i == 0 && isUint:
			t.Handle = uint32(wire.Uint(c, p))
		case (i == 1 || i == 3) && isUint:
			v := Some(uint32(wire.Uint(c, p)))
			if i == 1 {
				t.DeliveryID = v
			} else {
				t.MessageFormat = v
			}
		case i == 2 && op == wire.OpBinary8:
			t.DeliveryTag = p
		case (i == 4 || i == 5) && isBool:
			if i == 4 {
				t.Settled = wire.Bool(c, p)
			} else {
				t.More = wire.Bool(c, p)
			}
		default:
			return t, nil, false
		}
		t.set |= 1 << i
	}
	if pos != len(list) {
		return t, nil, false
	}
	return t, body[end:], true
}
