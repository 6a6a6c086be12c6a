package frame

import (
	"encoding/binary"

	"github.com/amqpsax/amqpsax"
)

// AppendTransferHead appends the transfer performative that h describes
// — handle, delivery-id, delivery-tag, message-format, settled, more — to
// b: the sender's fast path, the mirror of ParseTransferHead. It writes
// exactly what AppendTransfer writes for h.Transfer() built with no
// Fields (a test holds the two equal): the list ends after the last field
// present, an absent field before it is a null, a uint takes its smallest
// encoding, false settled and more are left out. h.Fields is not read.
// A tag longer than 255 bytes (the spec allows 32) goes through
// AppendTransfer. It does not allocate once b has room.
func AppendTransferHead(b []byte, h *TransferHead) []byte {
	if len(h.DeliveryTag) > 255 || h.DeliveryTag != nil && len(h.DeliveryTag) == 0 {
		return AppendTransfer(b, h.Transfer())
	}
	last := 0 // the index of the last field written
	switch {
	case h.More:
		last = 5
	case h.Settled:
		last = 4
	case h.HasMessageFormat:
		last = 3
	case h.DeliveryTag != nil:
		last = 2
	case h.HasDeliveryID:
		last = 1
	}
	start := len(b)
	b = append(b, 0x00, byte(amqpsax.CodeSmallUlong), byte(amqpsax.DescriptorTransfer), byte(amqpsax.CodeList8), 0, byte(last+1))
	b = appendHeadUint(b, h.Handle)
	if last >= 1 {
		if h.HasDeliveryID {
			b = appendHeadUint(b, h.DeliveryID)
		} else {
			b = append(b, byte(amqpsax.CodeNull))
		}
	}
	if last >= 2 {
		if h.DeliveryTag != nil {
			b = append(b, byte(amqpsax.CodeVbin8), byte(len(h.DeliveryTag)))
			b = append(b, h.DeliveryTag...)
		} else {
			b = append(b, byte(amqpsax.CodeNull))
		}
	}
	if last >= 3 {
		if h.HasMessageFormat {
			b = appendHeadUint(b, h.MessageFormat)
		} else {
			b = append(b, byte(amqpsax.CodeNull))
		}
	}
	if last >= 4 {
		if h.Settled {
			b = append(b, byte(amqpsax.CodeTrue))
		} else {
			b = append(b, byte(amqpsax.CodeNull))
		}
	}
	if last == 5 {
		b = append(b, byte(amqpsax.CodeTrue))
	}
	// The list's size: its count byte and fields, at most 6+4*5+2+255
	// bytes, so a list8 unless the tag is long.
	if size := len(b) - start - 5; size <= 255 {
		b[start+4] = byte(size)
		return b
	}
	return AppendTransfer(b[:start], h.Transfer())
}

// appendHeadUint appends v as a uint in its smallest encoding.
func appendHeadUint(b []byte, v uint32) []byte {
	switch {
	case v == 0:
		return append(b, byte(amqpsax.CodeUint0))
	case v < 256:
		return append(b, byte(amqpsax.CodeSmallUint), byte(v))
	}
	return binary.BigEndian.AppendUint32(append(b, byte(amqpsax.CodeUint)), v)
}
