package frame

import (
	"errors"
	"io"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseCuts cuts every performative of the corpus at every byte and
// gives each prefix to the Parse function as a frame body: a body is a
// whole frame's, so no prefix is a cut (io.ErrUnexpectedEOF, "wait for
// more") but a fault wrapping amqpsax.ErrMalformed (the empty body:
// ErrPerformative), at an offset inside the prefix (Proton's
// OSS-Fuzz corpora held 1,134 complete frames reported as cut).
func TestParseCuts(t *testing.T) {
	for _, e := range loadPerformatives(t) {
		d, err := Performative(e.perf)
		require.NoError(t, err)
		for n := range len(e.perf) {
			_, _, _, err := parseAny(e.perf[:n])
			if n == 0 {
				// No performative to dispatch on: parse it as the
				// one it was.
				err = parseAs(d, e.perf[:n])
				require.ErrorIs(t, err, ErrPerformative, "%s, empty body", e.Name)
				continue
			}
			require.Error(t, err, "%s cut at %d", e.Name, n)
			assert.NotErrorIs(t, err, io.ErrUnexpectedEOF, "%s cut at %d", e.Name, n)
			assert.ErrorIs(t, err, amqpsax.ErrMalformed, "%s cut at %d", e.Name, n)
			var ae *amqpsax.Error
			require.ErrorAs(t, err, &ae, "%s cut at %d", e.Name, n)
			assert.Equal(t, "frame", ae.Op)
			assert.LessOrEqual(t, ae.Offset, n, "%s cut at %d", e.Name, n)
		}
	}
	// The smallest case of the OSS-Fuzz corpora: a close whose list8
	// claims 2 bytes with one left in the frame.
	_, err := ParseClose([]byte{0x00, 0x53, 0x18, 0xc0, 0x02, 0x01})
	require.ErrorIs(t, err, amqpsax.ErrOverrun)
	assert.NotErrorIs(t, err, io.ErrUnexpectedEOF)
	// An open whose list32 claims 2^31 elements inside a complete frame.
	_, err = ParseOpen([]byte{0x00, 0x53, 0x10, 0xd0, 0x00, 0x00, 0x00, 0x08, 0x80, 0x00, 0x00, 0x00, 0xa1, 0x01, 'c'})
	require.ErrorIs(t, err, amqpsax.ErrMalformed)
	assert.NotErrorIs(t, err, io.ErrUnexpectedEOF)
}

// TestParseTrailing: a performative that carries no payload followed by
// anything is a fault at the first byte after it (its Parse function
// returns no rest for a caller to ignore); a transfer's are its payload.
func TestParseTrailing(t *testing.T) {
	for _, e := range loadPerformatives(t) {
		d, _ := Performative(e.perf)
		body := append(append([]byte(nil), e.perf...), 0x01, 0x02, 0x03)
		err := parseAs(d, body)
		if d == amqpsax.DescriptorTransfer {
			require.NoError(t, err, e.Name)
			continue
		}
		require.ErrorIs(t, err, amqpsax.ErrTrailing, e.Name)
		require.ErrorIs(t, err, amqpsax.ErrMalformed, e.Name)
		var ae *amqpsax.Error
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, len(e.perf), ae.Offset, e.Name)
		assert.Contains(t, err.Error(), "3 more bytes", e.Name)
	}
}

// parseAs parses body with the Parse function of descriptor d.
func parseAs(d amqpsax.Descriptor, body []byte) error {
	var err error
	switch d {
	case amqpsax.DescriptorOpen:
		_, err = ParseOpen(body)
	case amqpsax.DescriptorBegin:
		_, err = ParseBegin(body)
	case amqpsax.DescriptorAttach:
		_, err = ParseAttach(body)
	case amqpsax.DescriptorFlow:
		_, err = ParseFlow(body)
	case amqpsax.DescriptorTransfer:
		_, _, err = ParseTransfer(body)
	case amqpsax.DescriptorDisposition:
		_, err = ParseDisposition(body)
	case amqpsax.DescriptorDetach:
		_, err = ParseDetach(body)
	case amqpsax.DescriptorEnd:
		_, err = ParseEnd(body)
	case amqpsax.DescriptorClose:
		_, err = ParseClose(body)
	case amqpsax.DescriptorSASLMechanisms:
		_, err = ParseSASLMechanisms(body)
	case amqpsax.DescriptorSASLInit:
		_, err = ParseSASLInit(body)
	case amqpsax.DescriptorSASLChallenge:
		_, err = ParseSASLChallenge(body)
	case amqpsax.DescriptorSASLResponse:
		_, err = ParseSASLResponse(body)
	case amqpsax.DescriptorSASLOutcome:
		_, err = ParseSASLOutcome(body)
	default:
		err = errors.New("unknown")
	}
	return err
}

var allPerformatives = []amqpsax.Descriptor{
	amqpsax.DescriptorOpen, amqpsax.DescriptorBegin, amqpsax.DescriptorAttach, amqpsax.DescriptorFlow,
	amqpsax.DescriptorTransfer, amqpsax.DescriptorDisposition, amqpsax.DescriptorDetach,
	amqpsax.DescriptorEnd, amqpsax.DescriptorClose, amqpsax.DescriptorSASLMechanisms,
	amqpsax.DescriptorSASLInit, amqpsax.DescriptorSASLChallenge, amqpsax.DescriptorSASLResponse,
	amqpsax.DescriptorSASLOutcome,
}

// TestParseWrongPerformative gives every Parse function the body of
// every other performative of the corpus: ErrPerformative at offset 0.
func TestParseWrongPerformative(t *testing.T) {
	for _, e := range loadPerformatives(t) {
		d, _ := Performative(e.perf)
		for _, want := range allPerformatives {
			if want == d {
				continue
			}
			err := parseAs(want, e.perf)
			require.ErrorIs(t, err, ErrPerformative, "%s as %s", e.Name, want)
			var ae *amqpsax.Error
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, 0, ae.Offset)
		}
	}
	// Not a described value at all, and a descriptor of another type.
	for _, body := range [][]byte{{0x52, 0x14}, {0x00, 0xa1, 0x01, 'x', 0x45}} {
		_, _, err := ParseTransfer(body)
		assert.ErrorIs(t, err, ErrPerformative)
		_, err = Performative(body)
		assert.ErrorIs(t, err, ErrPerformative)
	}
	// A described value that is not a list.
	_, _, err := ParseTransfer([]byte{0x00, 0x53, 0x14, 0x52, 0x01})
	assert.ErrorIs(t, err, ErrFieldType)
	d, err := Performative(nil)
	assert.NoError(t, err)
	assert.Zero(t, d)
	_, _, err = ParseTransfer(nil)
	assert.ErrorIs(t, err, ErrPerformative)
	_, err = Performative([]byte{0x00, 0x53})
	assert.ErrorIs(t, err, amqpsax.ErrOverrun)
}

// TestParseChoices: restricted fields with a value outside the spec's
// choices are ErrFieldValue at that value.
func TestParseChoices(t *testing.T) {
	u := func(v uint8) []byte { return encode.AppendUbyte(nil, v) }
	str := encode.AppendString(nil, "l")
	h := encode.AppendUint(nil, 0)
	role := encode.AppendBool(nil, false)
	for _, c := range []struct {
		name string
		body []byte
		at   int // the field's index in the list
	}{
		{"snd-settle-mode", encComposite(amqpsax.DescriptorAttach, str, h, role, u(3)), 3},
		{"rcv-settle-mode", encComposite(amqpsax.DescriptorAttach, str, h, role, nil, u(2)), 4},
		{"rcv-settle-mode", encComposite(amqpsax.DescriptorTransfer, h, nil, nil, nil, nil, nil, u(2)), 6},
		{"durable", encComposite(amqpsax.DescriptorAttach, str, h, role, nil, nil,
			encComposite(amqpsax.DescriptorSource, nil, encode.AppendUint(nil, 3))), 5},
		{"expiry-policy", encComposite(amqpsax.DescriptorAttach, str, h, role, nil, nil, nil,
			encComposite(amqpsax.DescriptorTarget, nil, nil, encode.AppendSymbol(nil, "whenever"))), 6},
		{"code", encComposite(amqpsax.DescriptorSASLOutcome, u(5)), 0},
	} {
		err := parseAs(mustPerformative(t, c.body), c.body)
		require.ErrorIs(t, err, ErrFieldValue, c.name)
		var fe *FieldError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, c.name, fe.Field)
		assert.Contains(t, err.Error(), "not among the spec's choices")
	}
}

func mustPerformative(t *testing.T, body []byte) amqpsax.Descriptor {
	d, err := Performative(body)
	require.NoError(t, err)
	return d
}

// TestParseForms reads the forms a peer other than Proton may write: a
// symbolic descriptor, list32, uint fields in their four-byte form, more
// fields than the spec defines (skipped), a coordinator as the target, a
// transactional state (kept raw).
func TestParseForms(t *testing.T) {
	b := encode.AppendDescribed(nil)
	b = encode.AppendSymbol(b, "amqp:transfer:list")
	start := len(b)
	b = encode.BeginList(b)
	b = encode.AppendCodeUint(b, 5)
	b = encode.AppendCodeUint(b, 0)
	b = encode.AppendBinary(b, []byte("t"))
	b = encode.AppendNull(b)
	b = encode.AppendBool(b, true)
	for range 7 {
		b = encode.AppendNull(b)
	}
	b = encode.AppendString(b, "a field of a later version")
	b = encode.EndList32(b, start, 13)
	body := append(b, "payload"...)

	d, err := Performative(body)
	require.NoError(t, err)
	assert.Equal(t, amqpsax.DescriptorTransfer, d)
	tr, payload, err := ParseTransfer(body)
	require.NoError(t, err)
	assert.Equal(t, "payload", string(payload))
	assert.Equal(t, uint32(5), tr.Handle)
	assert.True(t, tr.Has(TransferDeliveryID))
	assert.Equal(t, Some[uint32](0), tr.DeliveryID)
	assert.False(t, tr.Has(TransferMessageFormat))
	assert.True(t, tr.Settled)
	assert.Equal(t, 11, tr.Elements())
	assert.True(t, tr.Wide())
	assert.Equal(t, "t", string(tr.DeliveryTag))

	coord := encComposite(amqpsax.DescriptorCoordinator, AppendSymbols(nil, "amqp:local-transactions"))
	att := encComposite(amqpsax.DescriptorAttach, encode.AppendString(nil, "txn"), encode.AppendUint(nil, 0),
		encode.AppendBool(nil, false), nil, nil, nil, coord)
	a, err := ParseAttach(att)
	require.NoError(t, err)
	tgt, ok := a.Target.Get()
	assert.True(t, ok)
	assert.True(t, tgt.Coordinator)
	assert.True(t, tgt.Capabilities.Contains("amqp:local-transactions"))
	assert.True(t, tgt.Has(CoordinatorCapabilities))
	assert.False(t, a.Has(AttachSource))
	assert.Equal(t, att, AppendAttach(nil, a))

	txn := encComposite(amqpsax.DescriptorTransactionalState, encode.AppendBinary(nil, []byte{1, 2}),
		encComposite(amqpsax.DescriptorAccepted))
	disp := encComposite(amqpsax.DescriptorDisposition, encode.AppendBool(nil, true), encode.AppendUint(nil, 9),
		nil, encode.AppendBool(nil, true), txn)
	ds, err := ParseDisposition(disp)
	require.NoError(t, err)
	assert.Equal(t, StateOther, ds.State.Type)
	assert.Equal(t, amqpsax.DescriptorTransactionalState, ds.State.Descriptor)
	assert.Equal(t, txn, ds.State.Raw)
	assert.False(t, ds.Last.Present())
	first, last := ds.Range()
	assert.Equal(t, [2]uint32{9, 9}, [2]uint32{first, last})
	assert.Equal(t, disp, AppendDisposition(nil, ds))
}

// TestParseMalformed: a malformed value inside a performative is the
// cursor's error, with Op "frame" and its offset in the body (here in a
// nested composite, two levels down).
func TestParseMalformed(t *testing.T) {
	bad := []byte{0xa1, 0x05, 'x'} // a str8 claiming 5 bytes, in a list that holds 3
	errList := encComposite(amqpsax.DescriptorError, encode.AppendSymbol(nil, "amqp:x"), nil)
	errList = append(errList[:len(errList)-1], bad...)
	errList[4] += 2 // the error's list8 size
	body := encComposite(amqpsax.DescriptorDetach, encode.AppendUint(nil, 1), nil, errList)
	_, err := ParseDetach(body)
	require.Error(t, err)
	var ae *amqpsax.Error
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "frame", ae.Op)
	assert.Equal(t, len(body)-len(bad), ae.Offset, "%v", err)

	// An array of symbols with an element past its end.
	arr := AppendSymbols(nil, "abc")
	arr[len(arr)-4] = 9
	body = encComposite(amqpsax.DescriptorSASLMechanisms, arr)
	_, err = ParseSASLMechanisms(body)
	require.Error(t, err)
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, len(body)-4, ae.Offset, "%v", err)
}

func TestSymbols(t *testing.T) {
	var none Symbols
	assert.Zero(t, none.Len())
	assert.False(t, none.Contains("x"))
	assert.Empty(t, none.Append(nil))

	one := Symbols(encode.AppendSymbol(nil, "PLAIN"))
	assert.Equal(t, 1, one.Len())
	assert.True(t, one.Contains("PLAIN"))
	assert.Equal(t, [][]byte{[]byte("PLAIN")}, one.Append(nil))

	many := Symbols(AppendSymbols(nil, "a", "bb", "ccc"))
	assert.Equal(t, byte(amqpsax.CodeArray8), many[0])
	assert.Equal(t, 3, many.Len())
	var got []string
	for s := range many.All() {
		got = append(got, string(s))
		if len(got) == 2 {
			break
		}
	}
	assert.Equal(t, []string{"a", "bb"}, got)
	assert.True(t, many.Contains("ccc"))
	assert.False(t, many.Contains("dd"))

	long := string(make([]byte, 300))
	wide := Symbols(AppendSymbols(nil, "a", long))
	assert.Equal(t, byte(amqpsax.CodeArray32), wide[0])
	assert.Equal(t, [][]byte{[]byte("a"), []byte(long)}, wide.Append(nil))

	var buf [4][]byte
	allocs := testing.AllocsPerRun(100, func() {
		n := 0
		for range many.All() {
			n++
		}
		if n != 3 || !many.Contains("bb") || len(many.Append(buf[:0])) != 3 {
			panic("symbols")
		}
	})
	assert.Zero(t, allocs)
}

func TestMap(t *testing.T) {
	var none Map
	assert.Zero(t, none.Len())
	_, ok := none.Lookup("k")
	assert.False(t, ok)

	b := encode.BeginMap(nil)
	b = encode.AppendSymbol(b, "a")
	b = encode.AppendUint(b, 1)
	b = encode.AppendString(b, "b")
	b = encode.AppendString(b, "two")
	b = encode.AppendUlong(b, 3)
	b = encode.AppendBool(b, true)
	m := Map(encode.EndMap(b, 0, 3))
	assert.Equal(t, 3, m.Len())
	v, ok := m.Lookup("b")
	assert.True(t, ok)
	assert.Equal(t, encode.AppendString(nil, "two"), v)
	_, ok = m.Lookup("c")
	assert.False(t, ok)
	var keys, vals [][]byte
	for k, v := range m.All() {
		keys, vals = append(keys, k), append(vals, v)
	}
	assert.Equal(t, [][]byte{encode.AppendSymbol(nil, "a"), encode.AppendString(nil, "b"), encode.AppendUlong(nil, 3)}, keys)
	assert.Equal(t, [][]byte{encode.AppendUint(nil, 1), encode.AppendString(nil, "two"), encode.AppendBool(nil, true)}, vals)

	allocs := testing.AllocsPerRun(100, func() {
		n := 0
		for range m.All() {
			n++
		}
		if _, ok := m.Lookup("b"); !ok || n != 3 || m.Len() != 3 {
			panic("map")
		}
	})
	assert.Zero(t, allocs)
}

// TestParseAllocs: every Parse function decodes every performative of the
// corpus without allocating.
func TestParseAllocs(t *testing.T) {
	for _, e := range loadPerformatives(t) {
		d, _ := Performative(e.perf)
		allocs := testing.AllocsPerRun(50, func() {
			if err := parseAs(d, e.perf); err != nil {
				panic(err)
			}
		})
		assert.Zero(t, allocs, e.Name)
	}
}

// TestAppendAllocs: with room in the buffer, every Append function writes
// without allocating.
func TestAppendAllocs(t *testing.T) {
	buf := make([]byte, 0, 1024)
	for _, e := range loadPerformatives(t) {
		v, _, _, err := parseAny(e.perf)
		require.NoError(t, err)
		allocs := testing.AllocsPerRun(50, func() {
			start := len(buf)
			b := BeginFrame(buf, TypeAMQP, 0)
			switch x := v.(type) {
			case *Open:
				b = AppendOpen(b, *x)
			case *Begin:
				b = AppendBegin(b, *x)
			case *Attach:
				b = AppendAttach(b, *x)
			case *Flow:
				b = AppendFlow(b, *x)
			case *Transfer:
				b = AppendTransfer(b, *x)
			case *Disposition:
				b = AppendDisposition(b, *x)
			case *Detach:
				b = AppendDetach(b, *x)
			case *End:
				b = AppendEnd(b, *x)
			case *Close:
				b = AppendClose(b, *x)
			case *SASLMechanisms:
				b = AppendSASLMechanisms(b, *x)
			case *SASLInit:
				b = AppendSASLInit(b, *x)
			case *SASLOutcome:
				b = AppendSASLOutcome(b, *x)
			}
			EndFrame(b, start)
		})
		assert.Zero(t, allocs, e.Name)
	}
}

func TestEnumsAndErrors(t *testing.T) {
	assert.Equal(t, "receiver", RoleReceiver.String())
	assert.Equal(t, "ExpiryPolicy(9)", ExpiryPolicy(9).String())
	assert.Equal(t, "Condition(200)", Condition(200).String())
	assert.Equal(t, "", Condition(200).Symbol())
	assert.Equal(t, "rejected", StateRejected.String())
	assert.Equal(t, "StateType(9)", StateType(9).String())
	e := AMQPError{Condition: []byte("amqp:link:stolen")}
	assert.Equal(t, CondStolen, e.Cond())
	assert.Equal(t, "durable", FieldName(amqpsax.DescriptorHeader, 0))
	assert.Equal(t, "", FieldName(amqpsax.DescriptorTransfer, 11))
	assert.Equal(t, 5, NumFields(amqpsax.DescriptorHeader))
	assert.Equal(t, "", FieldName(amqpsax.DescriptorApplicationProperties, 0))
	assert.Equal(t, -1, NumFields(amqpsax.DescriptorApplicationProperties))

	var f Fields
	assert.False(t, f.Has(TransferMore))
	assert.False(t, f.Has(40))
	f.SetElements(3)
	f.SetWide(true)
	assert.Equal(t, 3, f.Elements())
	assert.True(t, f.Wide())
}

// TestAppendBuilt: performatives built in code are written in the
// smallest form, with what the struct says: an absent Opt is left out, a
// present one written, zero included.
func TestAppendBuilt(t *testing.T) {
	tr := Transfer{Handle: 1, DeliveryID: Some[uint32](0), DeliveryTag: []byte("t")}
	b := AppendTransfer(nil, tr)
	assert.Equal(t, []byte{0x00, 0x53, 0x14, 0xc0, 0x07, 0x03, 0x52, 0x01, 0x43, 0xa0, 0x01, 't'}, b)

	o := Open{ContainerID: []byte("c")}
	assert.Equal(t, []byte{0x00, 0x53, 0x10, 0xc0, 0x04, 0x01, 0xa1, 0x01, 'c'}, AppendOpen(nil, o))
	o.ChannelMax = Some[uint16](0)
	assert.Equal(t, []byte{0x00, 0x53, 0x10, 0xc0, 0x09, 0x04, 0xa1, 0x01, 'c', 0x40, 0x40, 0x60, 0, 0}, AppendOpen(nil, o))

	a := Attach{Name: []byte("l"), Role: RoleReceiver,
		Source: Some(Source{Address: []byte("q")}), Target: Some(Target{ExpiryPolicy: ExpiryNever})}
	got, err := ParseAttach(AppendAttach(nil, a))
	require.NoError(t, err)
	assert.False(t, got.SndSettleMode.Present(), "absent is left out")
	assert.Equal(t, SndMixed, got.SndSettleMode.Or(SpecSndSettleMode))
	src, _ := got.Source.Get()
	tgt, _ := got.Target.Get()
	assert.Equal(t, "q", string(src.Address))
	assert.Equal(t, ExpiryNever, tgt.ExpiryPolicy)
	assert.True(t, got.Has(AttachSource) && got.Has(AttachTarget))
	a.SndSettleMode = Some(SndUnsettled)
	got, err = ParseAttach(AppendAttach(nil, a))
	require.NoError(t, err)
	assert.Equal(t, Some(SndUnsettled), got.SndSettleMode)

	d := Disposition{Role: RoleReceiver, First: 4, Settled: true,
		State: DeliveryState{Type: StateRejected, Error: AMQPError{Condition: []byte("amqp:not-found")}}}
	gotD, err := ParseDisposition(AppendDisposition(nil, d))
	require.NoError(t, err)
	assert.False(t, gotD.Has(DispositionLast))
	assert.Equal(t, CondNotFound, gotD.State.Error.Cond())
	assert.True(t, gotD.State.Has(RejectedError))

	c := Close{Error: AMQPError{Condition: []byte("amqp:connection:forced"), Description: []byte("bye")}}
	gotC, err := ParseClose(AppendClose(nil, c))
	require.NoError(t, err)
	assert.Equal(t, CondConnectionForced, gotC.Error.Cond())
	assert.Equal(t, "bye", string(gotC.Error.Description))
	assert.Equal(t, []byte{0x00, 0x53, 0x18, 0x45}, AppendClose(nil, Close{}))

	m := SASLMechanisms{Mechanisms: Symbols(AppendSymbols(nil, "ANONYMOUS"))}
	assert.Equal(t, "005340c00f01e00c01a309414e4f4e594d4f5553", hexOf(AppendSASLMechanisms(nil, m)))
	ch := SASLChallenge{Challenge: []byte{1}}
	gotCh, err := ParseSASLChallenge(AppendSASLChallenge(nil, ch))
	require.NoError(t, err)
	assert.Equal(t, []byte{1}, gotCh.Challenge)
	rs := SASLResponse{Response: []byte{}}
	gotR, err := ParseSASLResponse(AppendSASLResponse(nil, rs))
	require.NoError(t, err)
	assert.Equal(t, []byte{}, gotR.Response)
	_, err = ParseSASLResponse(encComposite(amqpsax.DescriptorSASLResponse))
	assert.ErrorIs(t, err, ErrMissingField)

	ds := DeliveryState{Type: StateReceived, SectionNumber: 1, SectionOffset: 300}
	gotS, err := parseState(appendState(nil, &ds), 0)
	require.NoError(t, err)
	assert.Equal(t, uint64(300), gotS.SectionOffset)
	ds = DeliveryState{Type: StateModified, UndeliverableHere: true}
	gotS, err = parseState(appendState(nil, &ds), 0)
	require.NoError(t, err)
	assert.True(t, gotS.UndeliverableHere)
	assert.False(t, gotS.Has(ModifiedDeliveryFailed))
	assert.Equal(t, []byte{0x40}, appendState(nil, &DeliveryState{Type: StateOther}))
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}
