package frame

import (
	"bytes"
	"sort"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// headAgrees checks ParseTransferHead on body against the spec-table
// parser: when it takes the body, the parser takes it too and gives the
// same values, Fields and payload, and the fields TransferHead lacks are
// zero. It returns whether ParseTransferHead took it.
func headAgrees(t testing.TB, body []byte) bool {
	t.Helper()
	h, hp, ok := ParseTransferHead(body)
	var h2 TransferHead
	hp2, ok2 := h2.Parse(body)
	if ok != ok2 || !sameHead(h, h2) || !bytes.Equal(hp, hp2) {
		t.Fatalf("% x: ParseTransferHead %+v %v and Parse %+v %v differ", body, h, ok, h2, ok2)
	}
	if !ok {
		if !sameHead(h, TransferHead{}) || hp != nil {
			t.Fatalf("% x: not taken, but %+v % x", body, h, hp)
		}
		return false
	}
	st, sp, err := parseTransferSlow(body)
	if err != nil {
		t.Fatalf("% x: taken as %+v, but ParseTransfer says %v", body, h, err)
	}
	if !sameTransfer(h.Transfer(), st) || !bytes.Equal(hp, sp) || len(hp) != len(sp) || (len(sp) > 0 && &hp[0] != &sp[0]) {
		t.Fatalf("% x: head %+v payload % x; ParseTransfer %+v payload % x", body, h, hp, st, sp)
	}
	return true
}

func sameHead(a, b TransferHead) bool {
	return sameTransfer(a.Transfer(), b.Transfer())
}

// transferBodies returns the body of every transfer frame of every
// recorded connection in testdata/, and of the performatives corpus,
// payload included.
func transferBodies(t testing.TB) [][]byte {
	var out [][]byte
	streams := peerStreams(t)
	names := make([]string, 0, len(streams))
	for name := range streams {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for b := streams[name]; len(b) > 0; {
			f, n, err := Split(b, 1<<31-1)
			require.NoError(t, err, name)
			require.NotZero(t, n, name)
			if d, err := Performative(f.Body); !f.IsHeader && err == nil && d == amqpsax.DescriptorTransfer {
				out = append(out, f.Body)
			}
			b = b[n:]
		}
	}
	for _, e := range loadPerformatives(t) {
		if e.Name == "transfer" {
			out = append(out, append(bytes.Clone(e.perf), e.payload...))
		}
	}
	return out
}

// TestTransferHeadCorpus: every transfer every peer in testdata/ wrote,
// through ParseTransferHead and ParseTransfer. The two agree on each it
// takes, and it takes the transfers of messages in flight: all but those
// that carry a state, an aborted or a rcv-settle-mode.
func TestTransferHeadCorpus(t *testing.T) {
	bodies := transferBodies(t)
	taken := 0
	for _, body := range bodies {
		if headAgrees(t, body) {
			taken++
			continue
		}
		tr, _, err := ParseTransfer(body)
		require.NoError(t, err)
		assert.True(t, tr.State.Type != StateNone || tr.Aborted || tr.Resume || tr.Batchable || tr.RcvSettleMode.Present(),
			"% x: a plain transfer not taken: %+v", body[:min(len(body), 40)], tr)
	}
	t.Logf("%d of %d transfers taken", taken, len(bodies))
	assert.Greater(t, taken, len(bodies)*3/4)
}

// TestParseTransferWhole: for every recorded transfer, and each of them
// cut short or with its list's count broken, ParseTransferWhole gives
// what ParseTransfer gives (the same transfer, the same payload view, or
// an error both), the fast path left out.
func TestParseTransferWhole(t *testing.T) {
	bodies := transferBodies(t)
	wholes := 0
	for _, body := range bodies {
		variants := [][]byte{body, body[:len(body)/2]}
		if len(body) > 5 {
			broken := append([]byte(nil), body...)
			broken[5] = 0xff // list8's count: more fields than the list holds
			variants = append(variants, broken)
		}
		for _, b := range variants {
			want, wp, werr := ParseTransfer(b)
			got, gp, gerr := ParseTransferWhole(b)
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("% x: ParseTransfer error %v, ParseTransferWhole %v", b, werr, gerr)
			}
			if werr != nil {
				assert.Equal(t, werr.Error(), gerr.Error())
				continue
			}
			wholes++
			if !sameTransfer(want, got) || len(wp) != len(gp) || (len(wp) > 0 && &wp[0] != &gp[0]) {
				t.Fatalf("% x: ParseTransfer %+v payload % x; ParseTransferWhole %+v payload % x", b, want, wp, got, gp)
			}
		}
	}
	assert.Greater(t, wholes, len(bodies)/2)
}

// TestTransferHeadTable: encodings taken and refused.
func TestTransferHeadTable(t *testing.T) {
	for _, c := range []struct {
		name string
		hex  []byte
		ok   bool
		want TransferHead
	}{
		{"handle only", []byte{0x00, 0x53, 0x14, 0xc0, 0x02, 0x01, 0x43}, true, TransferHead{}},
		{"proton's trailing nulls, 0x56", []byte{0x00, 0x53, 0x14, 0xc0, 0x09, 0x06, 0x43, 0x43, 0xa0, 0x00, 0x43, 0x56, 0x01, 0x40, 'x'}, true,
			TransferHead{HasDeliveryID: true, DeliveryTag: []byte{}, HasMessageFormat: true, Settled: true}},
		{"list32, uint", []byte{0x00, 0x53, 0x14, 0xd0, 0, 0, 0, 0x0b, 0, 0, 0, 0x02, 0x52, 0x05, 0x70, 0, 0, 1, 0}, true,
			TransferHead{Handle: 5, DeliveryID: 256, HasDeliveryID: true}},
		{"vbin32 tag", []byte{0x00, 0x53, 0x14, 0xc0, 0x0a, 0x03, 0x43, 0x43, 0xb0, 0, 0, 0, 2, 7, 8}, true,
			TransferHead{HasDeliveryID: true, DeliveryTag: []byte{7, 8}}},
		{"eleven fields, the last null or false", []byte{0x00, 0x53, 0x14, 0xc0, 0x0d, 0x0b, 0x43, 0x40, 0x40, 0x40, 0x41, 0x42, 0x40, 0x40, 0x42, 0x56, 0x00, 0x40}, true,
			TransferHead{Settled: true}},
		{"list0", []byte{0x00, 0x53, 0x14, 0x45}, false, TransferHead{}},
		{"null handle", []byte{0x00, 0x53, 0x14, 0xc0, 0x02, 0x01, 0x40}, false, TransferHead{}},
		{"ulong handle", []byte{0x00, 0x53, 0x14, 0xc0, 0x02, 0x01, 0x44}, false, TransferHead{}},
		{"aborted", []byte{0x00, 0x53, 0x14, 0xc0, 0x0b, 0x0a, 0x43, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x41}, false, TransferHead{}},
		{"rcv-settle-mode", []byte{0x00, 0x53, 0x14, 0xc0, 0x09, 0x07, 0x43, 0x40, 0x40, 0x40, 0x40, 0x40, 0x50, 0x01}, false, TransferHead{}},
		{"0x56 2", []byte{0x00, 0x53, 0x14, 0xc0, 0x07, 0x05, 0x43, 0x40, 0x40, 0x40, 0x56, 0x02}, false, TransferHead{}},
		{"count past the elements", []byte{0x00, 0x53, 0x14, 0xc0, 0x03, 0x02, 0x43}, false, TransferHead{}},
		{"bytes past the elements", []byte{0x00, 0x53, 0x14, 0xc0, 0x04, 0x01, 0x43, 0x43, 0x43}, false, TransferHead{}},
		{"tag past the list", []byte{0x00, 0x53, 0x14, 0xc0, 0x05, 0x03, 0x43, 0x43, 0xa0, 0x05, 1, 2, 3, 4, 5}, false, TransferHead{}},
		{"uint cut by the list", []byte{0x00, 0x53, 0x14, 0xc0, 0x03, 0x01, 0x70, 0, 0, 0, 1}, false, TransferHead{}},
		{"symbolic descriptor", append([]byte{0x00, 0xa3, 0x15}, "amqp:transfer:list\xc0\x02\x01\x43"...), false, TransferHead{}},
		{"another performative", []byte{0x00, 0x53, 0x15, 0xc0, 0x02, 0x01, 0x43}, false, TransferHead{}},
	} {
		h, _, ok := ParseTransferHead(c.hex)
		require.Equal(t, c.ok, ok, c.name)
		if c.name == "aborted" || c.name == "rcv-settle-mode" || c.name == "list32, uint" {
			_, _, err := ParseTransfer(c.hex)
			require.NoError(t, err, "%s: a transfer ParseTransfer takes", c.name)
		}
		headAgrees(t, c.hex)
		if ok {
			h.Fields = Fields{}
			assert.Equal(t, c.want, h, c.name)
		}
	}
	for _, s := range fastSeeds() {
		headAgrees(t, s)
	}
}

// TestTransferHeadCodes holds the field readers' encodings to wire's
// code table: as a handle, delivery-id, delivery-tag or settled, every
// code byte followed by the payload its row gives is taken exactly when
// the row is of the field's type (and not a null, for the handle).
func TestTransferHeadCodes(t *testing.T) {
	for code := range 256 {
		c := amqpsax.Code(code)
		e := wire.Table[c]
		var val []byte
		switch e.Cat() {
		case wire.Fixed:
			val = append([]byte{byte(c)}, make([]byte, e.W())...)
		case wire.Variable:
			val = append([]byte{byte(c)}, make([]byte, e.W())...) // size 0
		default:
			continue
		}
		for field, kind := range []amqpsax.Kind{amqpsax.KindUint, amqpsax.KindUint, amqpsax.KindBinary, amqpsax.KindUint, amqpsax.KindBool} {
			list := []byte{0x43, 0x40, 0x40, 0x40, 0x40}[:field]
			list = append(list, val...)
			body := append([]byte{0x00, 0x53, 0x14, 0xc0, byte(len(list) + 1), byte(field + 1)}, list...)
			_, _, ok := ParseTransferHead(body)
			want := e.Kind() == kind || (field > 0 && c == amqpsax.CodeNull)
			assert.Equal(t, want, ok, "code %#x as field %d", code, field)
			headAgrees(t, body)
		}
	}
}

// TestTransferHeadAllocs: no allocation, either form.
func TestTransferHeadAllocs(t *testing.T) {
	bodies := transferBodies(t)
	var h TransferHead
	assert.Zero(t, testing.AllocsPerRun(10, func() {
		for _, b := range bodies {
			ParseTransferHead(b)
			h.Parse(b)
		}
	}))
}

// FuzzTransferHead holds ParseTransferHead to the spec-table parser on
// any body: whatever it takes, ParseTransfer takes and decodes the same,
// Fields and payload included; what it does not take leaves it zero.
func FuzzTransferHead(f *testing.F) {
	for _, b := range transferBodies(f) {
		f.Add(b)
	}
	for _, s := range fastSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		headAgrees(t, body)
	})
}
