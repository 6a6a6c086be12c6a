package engine

import (
	"bytes"
	"testing"

	"github.com/amqpsax/amqpsax/frame"
)

func sameTransfer(a, b frame.Transfer) bool {
	return a.Handle == b.Handle && a.DeliveryID == b.DeliveryID && bytes.Equal(a.DeliveryTag, b.DeliveryTag) &&
		(a.DeliveryTag == nil) == (b.DeliveryTag == nil) && a.MessageFormat == b.MessageFormat &&
		a.Settled == b.Settled && a.More == b.More && !b.Aborted && !b.Resume && !b.Batchable &&
		b.State.Type == frame.StateNone && !b.RcvSettleMode.Present()
}

func fastSeeds() [][]byte {
	var seeds [][]byte
	for _, t := range []frame.Transfer{
		{Handle: 0, DeliveryID: frame.Some[uint32](0), DeliveryTag: []byte{}, MessageFormat: frame.Some[uint32](0)},
		{Handle: 7, DeliveryID: frame.Some[uint32](300), DeliveryTag: []byte("tag"), Settled: true},
		{Handle: 1 << 20, DeliveryID: frame.Some[uint32](1 << 31), DeliveryTag: []byte{1, 2, 3, 4}, More: true},
		{Handle: 2},
		{Handle: 2, More: true},
		{Handle: 2, Aborted: true},
		{Handle: 2, DeliveryID: frame.Some[uint32](5), RcvSettleMode: frame.Some(frame.RcvSecond)},
		{Handle: 3, DeliveryID: frame.Some[uint32](5), State: frame.DeliveryState{Type: frame.StateAccepted}},
	} {
		seeds = append(seeds, append(frame.AppendTransfer(nil, t), "payload"...))
	}
	// Proton's style: list with trailing nulls; a list32; bool 0x56.
	seeds = append(seeds,
		[]byte{0x00, 0x53, 0x14, 0xc0, 0x08, 0x06, 0x43, 0x43, 0xa0, 0x00, 0x43, 0x56, 0x01, 0x40, 'x'},
		[]byte{0x00, 0x53, 0x14, 0xd0, 0, 0, 0, 0x07, 0, 0, 0, 0x02, 0x52, 0x05, 0x70, 0, 0, 1, 0},
		[]byte{0x00, 0x53, 0x14, 0xc0, 0x03, 0x02, 0x43, 0x40},
		[]byte{0x00, 0x53, 0x14, 0xc0, 0x03, 0x02, 0x43},
		[]byte{0x00, 0x53, 0x14, 0xc0, 0x04, 0x01, 0x43, 0x43, 0x43},
		[]byte{0x00, 0x53, 0x14, 0xc0, 0x03, 0x01, 0x56, 0x02},
	)
	return seeds
}

func TestFastTransfer(t *testing.T) {
	fast := 0
	for _, s := range fastSeeds() {
		ft, fp, ok := fastTransfer(s)
		st, sp, err := frame.ParseTransfer(s)
		if !ok {
			continue
		}
		fast++
		if err != nil || !sameTransfer(ft, st) || !bytes.Equal(fp, sp) {
			t.Fatalf("% x: fast %+v %q, frame %+v %q %v", s, ft, fp, st, sp, err)
		}
	}
	if fast < 6 {
		t.Fatalf("only %d of the usual encodings take the fast path", fast)
	}
}

// FuzzFastTransfer holds fastTransfer to frame.ParseTransfer: whatever
// it accepts, ParseTransfer accepts and decodes the same.
func FuzzFastTransfer(f *testing.F) {
	for _, s := range fastSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ft, fp, ok := fastTransfer(body)
		if !ok {
			return
		}
		st, sp, err := frame.ParseTransfer(body)
		if err != nil || !sameTransfer(ft, st) || !bytes.Equal(fp, sp) {
			t.Fatalf("% x: fast %+v %q, frame %+v %q %v", body, ft, fp, st, sp, err)
		}
	})
}
