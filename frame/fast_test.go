package frame

import (
	"bytes"
	"reflect"
	"testing"
)

// sameTransfer: the fast path's transfer is the spec-table parser's,
// every field and the Fields record alike.
func sameTransfer(a, b Transfer) bool {
	return reflect.DeepEqual(a, b) && (a.DeliveryTag == nil) == (b.DeliveryTag == nil)
}

func fastSeeds() [][]byte {
	var seeds [][]byte
	for _, t := range []Transfer{
		{Handle: 0, DeliveryID: Some[uint32](0), DeliveryTag: []byte{}, MessageFormat: Some[uint32](0)},
		{Handle: 7, DeliveryID: Some[uint32](300), DeliveryTag: []byte("tag"), Settled: true},
		{Handle: 1 << 20, DeliveryID: Some[uint32](1 << 31), DeliveryTag: []byte{1, 2, 3, 4}, More: true},
		{Handle: 2},
		{Handle: 2, More: true},
		{Handle: 2, Aborted: true},
		{Handle: 2, DeliveryID: Some[uint32](5), RcvSettleMode: Some(RcvSecond)},
		{Handle: 3, DeliveryID: Some[uint32](5), State: DeliveryState{Type: StateAccepted}},
	} {
		seeds = append(seeds, append(AppendTransfer(nil, t), "payload"...))
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

func TestTransferFast(t *testing.T) {
	fast := 0
	for _, s := range fastSeeds() {
		ft, fp, ok := parseTransferFast(s)
		st, sp, err := parseTransferSlow(s)
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

// FuzzTransferFast holds ParseTransfer's fast path to the spec-table
// parser: whatever it accepts, the parser accepts and decodes the same,
// Fields included (so Append writes it back the same).
func FuzzTransferFast(f *testing.F) {
	for _, s := range fastSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ft, fp, ok := parseTransferFast(body)
		if !ok {
			return
		}
		st, sp, err := parseTransferSlow(body)
		if err != nil || !sameTransfer(ft, st) || !bytes.Equal(fp, sp) {
			t.Fatalf("% x: fast %+v %q, frame %+v %q %v", body, ft, fp, st, sp, err)
		}
	})
}
