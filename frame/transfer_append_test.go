package frame

import (
	"bytes"
	"testing"
)

// AppendTransferHead writes what AppendTransfer writes, for every
// combination of the fields it takes, and ParseTransferHead reads it back.
func TestAppendTransferHeadOracle(t *testing.T) {
	uints := []uint32{0, 1, 255, 256, 65535, 1 << 31, 1<<32 - 1}
	tags := [][]byte{nil, {}, {7}, bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 200), bytes.Repeat([]byte{3}, 256)}
	n := 0
	for _, handle := range uints {
		for _, id := range append(uints, 0) {
			for _, tag := range tags {
				for bits := range 32 {
					h := TransferHead{Handle: handle, DeliveryID: id, MessageFormat: id / 3, DeliveryTag: tag,
						HasDeliveryID: bits&1 != 0, HasMessageFormat: bits&2 != 0, Settled: bits&4 != 0, More: bits&8 != 0}
					if !h.HasDeliveryID {
						h.DeliveryID = 0
					}
					if !h.HasMessageFormat {
						h.MessageFormat = 0
					}
					got := AppendTransferHead([]byte("x"), &h)
					want := AppendTransfer([]byte("x"), h.Transfer())
					if !bytes.Equal(got, want) {
						t.Fatalf("%+v:\n got % x\nwant % x", h, got, want)
					}
					back, payload, ok := ParseTransferHead(got[1:])
					if !ok || len(payload) != 0 || back.Handle != h.Handle || back.DeliveryID != h.DeliveryID ||
						back.HasDeliveryID != h.HasDeliveryID || !bytes.Equal(back.DeliveryTag, h.DeliveryTag) ||
						back.Settled != h.Settled || back.More != h.More || back.MessageFormat != h.MessageFormat {
						if len(tag) <= 255 && (tag == nil || len(tag) > 0) {
							t.Fatalf("%+v: read back %+v ok=%v", h, back, ok)
						}
					}
					n++
				}
			}
		}
	}
	t.Logf("%d transfers", n)
}

func TestAppendTransferHeadAllocs(t *testing.T) {
	h := TransferHead{Handle: 3, DeliveryID: 77, HasDeliveryID: true, DeliveryTag: []byte{0, 0, 0, 77}, HasMessageFormat: true}
	b := make([]byte, 0, 64)
	if a := testing.AllocsPerRun(100, func() { b = AppendTransferHead(b[:0], &h) }); a != 0 {
		t.Fatal(a, "allocs")
	}
}

func BenchmarkAppendTransfer(b *testing.B) {
	h := TransferHead{Handle: 3, DeliveryID: 77, HasDeliveryID: true, DeliveryTag: []byte{0, 0, 0, 77}, HasMessageFormat: true}
	t := h.Transfer()
	buf := make([]byte, 0, 64)
	b.Run("head", func(b *testing.B) {
		for range b.N {
			buf = AppendTransferHead(buf[:0], &h)
		}
	})
	b.Run("transfer", func(b *testing.B) {
		for range b.N {
			buf = AppendTransfer(buf[:0], t)
		}
	})
}
