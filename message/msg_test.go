package message

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/internal/corpus"
	"github.com/amqpsax/amqpsax/internal/protocol/composite"
	"github.com/amqpsax/amqpsax/stream"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// peerMessage is one message of a testdata corpus, with the peer that
// wrote it.
type peerMessage struct {
	Peer, Name string
	Data       []byte
}

// loadMessages reads every whole message of testdata: the Proton corpus,
// uAMQP-C's, and the deliveries of the recorded peers (go-amqp, rhea,
// Proton, uAMQP-C, RabbitMQ).
func loadMessages(t testing.TB) []peerMessage {
	t.Helper()
	var out []peerMessage
	for _, e := range corpus.Load(t, "messages.jsonl") {
		out = append(out, peerMessage{"proton", e.Name, e.Data})
	}
	root := filepath.Join(corpus.Dir(), "..")
	files, err := filepath.Glob(filepath.Join(root, "peers", "*-messages.jsonl"))
	require.NoError(t, err)
	files = append(files, filepath.Join(root, "uamqp", "messages.jsonl"))
	for _, path := range files {
		f, err := os.Open(path)
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		peer := strings.TrimSuffix(filepath.Base(path), "-messages.jsonl")
		if peer == "messages.jsonl" {
			peer = "uamqp"
		}
		for sc.Scan() {
			var rec struct{ Name, Hex string }
			require.NoError(t, json.Unmarshal(sc.Bytes(), &rec))
			data, err := hex.DecodeString(rec.Hex)
			require.NoError(t, err)
			if len(data) > 0 {
				out = append(out, peerMessage{peer, rec.Name, data})
			}
		}
		require.NoError(t, sc.Err())
		f.Close()
	}
	require.Greater(t, len(out), 100)
	return out
}

// describe renders a decoded message's values (types kept: a string is
// not a symbol, ulong 1 is not uint 1) so two messages compare as values.
func describe(m *Message) string {
	var b strings.Builder
	if m.Header != nil {
		fmt.Fprintf(&b, "header %+v\n", *m.Header)
	}
	if p := m.Properties; p != nil {
		fmt.Fprintf(&b, "properties %+v\n", *p)
	}
	for _, s := range []struct {
		name string
		e    Entries
	}{{"da", m.DeliveryAnnotations}, {"ma", m.MessageAnnotations}, {"ap", m.ApplicationProperties}, {"footer", m.Footer}} {
		if !s.e.Present() {
			continue
		}
		fmt.Fprintf(&b, "%s %d:", s.name, s.e.Len())
		for k, v := range s.e.All() {
			fmt.Fprintf(&b, " %s=%s", valueText(k), valueText(v))
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "body %v", m.Body.Kind)
	for _, d := range m.Body.Data {
		fmt.Fprintf(&b, " %x", d)
	}
	for _, v := range m.Body.Sequence {
		fmt.Fprintf(&b, " %s", valueText(v))
	}
	if m.Body.Kind == BodyValue {
		fmt.Fprintf(&b, " %s", valueText(m.Body.Value))
	}
	return b.String()
}

// valueText is a value as the dispatch decoder reads it: every value with
// its type, whatever its width.
func valueText(v stream.Value) string {
	var w traceHandler
	if err := new(dispatch.Decoder).DecodeAll(v.Raw(), &w); err != nil {
		return "error:" + err.Error()
	}
	return w.b.String()
}

// traceHandler writes each value as kind:value.
type traceHandler struct{ b strings.Builder }

func (h *traceHandler) w(k string, v any) error { fmt.Fprintf(&h.b, "%s:%v ", k, v); return nil }

func (h *traceHandler) OnNull() error                         { return h.w("null", "") }
func (h *traceHandler) OnBool(v bool) error                   { return h.w("bool", v) }
func (h *traceHandler) OnUbyte(v uint8) error                 { return h.w("ubyte", v) }
func (h *traceHandler) OnUshort(v uint16) error               { return h.w("ushort", v) }
func (h *traceHandler) OnUint(v uint32) error                 { return h.w("uint", v) }
func (h *traceHandler) OnUlong(v uint64) error                { return h.w("ulong", v) }
func (h *traceHandler) OnByte(v int8) error                   { return h.w("byte", v) }
func (h *traceHandler) OnShort(v int16) error                 { return h.w("short", v) }
func (h *traceHandler) OnInt(v int32) error                   { return h.w("int", v) }
func (h *traceHandler) OnLong(v int64) error                  { return h.w("long", v) }
func (h *traceHandler) OnFloat(v float32) error               { return h.w("float", v) }
func (h *traceHandler) OnDouble(v float64) error              { return h.w("double", v) }
func (h *traceHandler) OnDecimal32(v amqpsax.Decimal32) error { return h.w("d32", v) }
func (h *traceHandler) OnDecimal64(v amqpsax.Decimal64) error { return h.w("d64", v) }
func (h *traceHandler) OnDecimal128(v amqpsax.Decimal128) error {
	return h.w("d128", v)
}
func (h *traceHandler) OnChar(v rune) error        { return h.w("char", v) }
func (h *traceHandler) OnTimestamp(ms int64) error { return h.w("ts", ms) }
func (h *traceHandler) OnUUID(v uuid.UUID) error   { return h.w("uuid", v) }
func (h *traceHandler) OnBinary(v []byte) error    { return h.w("bin", fmt.Sprintf("%x", v)) }
func (h *traceHandler) OnString(v []byte) error    { return h.w("str", fmt.Sprintf("%q", v)) }
func (h *traceHandler) OnSymbol(v []byte) error    { return h.w("sym", fmt.Sprintf("%q", v)) }
func (h *traceHandler) OnListStart(n int) error    { return h.w("list", n) }
func (h *traceHandler) OnListEnd() error           { return h.w("/list", "") }
func (h *traceHandler) OnMapStart(n int) error     { return h.w("map", n) }
func (h *traceHandler) OnMapEnd() error            { return h.w("/map", "") }
func (h *traceHandler) OnArrayStart(n int, k amqpsax.Kind) error {
	return h.w("array", fmt.Sprint(n, k))
}
func (h *traceHandler) OnArrayEnd() error       { return h.w("/array", "") }
func (h *traceHandler) OnDescribedStart() error { return h.w("described", "") }
func (h *traceHandler) OnDescribedEnd() error   { return h.w("/described", "") }

// TestMessageRoundTrip: every message of testdata, from every peer,
// decoded and appended again gives the same values; the same bytes for
// every message Proton wrote, and for every other message whose sections
// the peer wrote in the spec's order, with the smallest encodings and
// header and properties fields as Proton leaves them out; and decoding
// what Append wrote and appending it again changes nothing.
func TestMessageRoundTrip(t *testing.T) {
	var m, m2 Message
	same, total := map[string]int{}, map[string]int{}
	for _, pm := range loadMessages(t) {
		require.NoError(t, m.Decode(pm.Data), "%s %s", pm.Peer, pm.Name)
		out, err := m.Append(nil)
		require.NoError(t, err, pm.Name)
		require.NoError(t, m2.Decode(out), pm.Name)
		require.Equal(t, describe(&m), describe(&m2), "%s %s", pm.Peer, pm.Name)
		again, err := m2.Append(nil)
		require.NoError(t, err)
		require.Equal(t, out, again, pm.Name)

		total[pm.Peer]++
		if bytes.Equal(out, pm.Data) {
			same[pm.Peer]++
			continue
		}
		if pm.Peer == "proton" {
			t.Errorf("%s: %x, Proton wrote %x", pm.Name, out, pm.Data)
			continue
		}
		// Another peer: the bytes may differ only where it did not write
		// as Proton does — sections out of order, a wider encoding, or
		// header and properties fields Proton leaves out or writes as
		// null (default values written out, trailing nulls).
		s, err := Scan(pm.Data)
		require.NoError(t, err)
		protonish := true
		if s.Header != nil {
			h, _ := ParseHeader(s.Header)
			protonish = bytes.Equal(AppendHeader(nil, h), s.Header)
		}
		if s.Properties != nil {
			p, _ := ParseProperties(s.Properties)
			pb, _ := AppendProperties(nil, p)
			protonish = protonish && bytes.Equal(pb, s.Properties)
		}
		if !s.OutOfOrder && protonish && smallSections(pm.Data) {
			t.Errorf("%s %s: written in the spec's order, header and properties as Proton writes them, smallulong descriptors and data sizes, yet\n got %x\nwant %x", pm.Peer, pm.Name, out, pm.Data)
		}
	}
	for peer, n := range total {
		t.Logf("%-28s %3d messages, %3d byte for byte", peer, n, same[peer])
	}
	assert.Equal(t, total["proton"], same["proton"])
}

// smallSections reports whether every section of a message has a
// smallulong descriptor and every data section the smallest size field
// (vbin8 up to 255 bytes): how Append writes them. (Entries and body
// values are copied as they are; the width of a map section is kept.)
func smallSections(data []byte) bool {
	var c stream.Cursor
	c.Reset(data)
	for c.Next() {
		raw := c.Raw()
		if len(raw) < 4 || raw[1] != byte(amqpsax.CodeSmallUlong) {
			return false
		}
		if raw[2] == byte(amqpsax.DescriptorData) && (raw[3] == byte(amqpsax.CodeVbin32)) != (len(raw) > 3+2+255) {
			return false
		}
	}
	return c.Err() == nil
}

// TestDecodeAllocs: decoding into a reused Message and appending it into
// a buffer with room allocate nothing, for every message of testdata.
func TestDecodeAllocs(t *testing.T) {
	var msgs [][]byte
	for _, pm := range loadMessages(t) {
		msgs = append(msgs, pm.Data)
	}
	var m Message
	buf := make([]byte, 0, 1<<20)
	allocs := testing.AllocsPerRun(5, func() {
		for _, d := range msgs {
			if err := m.Decode(d); err != nil {
				panic(err)
			}
			var err error
			if buf, err = m.Append(buf[:0]); err != nil {
				panic(err)
			}
			_ = m.ApplicationProperties.Get("k")
			_ = m.MessageAnnotations.GetKey(UlongKey(7))
			for k, v := range m.ApplicationProperties.All() {
				_, _ = k.Bytes(), v.Kind()
			}
		}
	})
	assert.Zero(t, allocs)
}

// TestDecodeOwns: after Decode the input may change; the message does not.
func TestDecodeOwns(t *testing.T) {
	var vs Values
	in := Message{
		Header:                &Header{Durable: true, Priority: 4},
		Properties:            &Properties{MessageID: StringID("id-1"), To: []byte("q")},
		ApplicationProperties: EntriesOf(Field{vs.String("tenant"), vs.String("acme")}),
		Body:                  Body{Kind: BodyData, Data: [][]byte{[]byte("hello")}},
	}
	data, err := in.Append(nil)
	require.NoError(t, err)
	var m Message
	require.NoError(t, m.Decode(data))
	want := describe(&m)
	for i := range data {
		data[i] = 0xff
	}
	assert.Equal(t, want, describe(&m))
	assert.Equal(t, "acme", string(m.ApplicationProperties.Get("tenant").Bytes()))
	assert.Equal(t, "hello", string(m.Body.Data[0]))

	// DecodeNoCopy shares the input.
	data, _ = in.Append(nil)
	require.NoError(t, m.DecodeNoCopy(data))
	data[len(data)-1] = 'O'
	assert.Equal(t, "hellO", string(m.Body.Data[0]))
}

// TestDecodeCutAndFault: on every prefix of a message Decode says cut
// (io.ErrUnexpectedEOF) or, at a section's end, decodes the sections
// before; a fault inside a complete section (a compound value whose
// inside is wrong) is ErrMalformed at its offset in the message, never a
// cut; and m is empty after any error.
func TestDecodeCutAndFault(t *testing.T) {
	var vs Values
	list, err := vs.Any([]any{int64(1), "two", []any{uint32(3)}})
	require.NoError(t, err)
	in := Message{
		Header:                &Header{Priority: 4, DeliveryCount: 2},
		MessageAnnotations:    EntriesOf(Field{vs.Symbol("x-opt-l"), list}),
		Properties:            &Properties{To: []byte("q")},
		ApplicationProperties: EntriesOf(Field{vs.String("k"), vs.Long(-7)}),
		Body:                  Body{Kind: BodySequence, Sequence: []stream.Value{list, list}},
		Footer:                EntriesOf(Field{vs.Symbol("f"), vs.Binary([]byte{1, 2})}),
	}
	data, err := in.Append(nil)
	require.NoError(t, err)
	var m Message
	for n := range len(data) {
		err := m.Decode(data[:n])
		if err == nil {
			continue // ends between sections
		}
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, "prefix %d", n)
		assert.Nil(t, m.Header)
		assert.False(t, m.ApplicationProperties.Present())
	}
	require.NoError(t, m.Decode(data))

	// The list inside the message annotations claims one element more
	// than it holds: its size still fits the section, so it is a fault.
	at := bytes.Index(data, list.Raw())
	require.Positive(t, at)
	bad := bytes.Clone(data)
	require.Equal(t, byte(amqpsax.CodeList8), bad[at])
	bad[at+2]++ // the count
	err = m.Decode(bad)
	require.Error(t, err)
	assert.NotErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.ErrorIs(t, err, amqpsax.ErrMalformed)
	var e *amqpsax.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "message", e.Op)
	assert.GreaterOrEqual(t, e.Offset, at)
	assert.LessOrEqual(t, e.Offset, at+len(list.Raw()))
	var se *SectionError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "message-annotations", se.Section)
	assert.Nil(t, m.Header)
	assert.Equal(t, BodyNone, m.Body.Kind)
}

// TestZeroMessage: the accessors of a zero Message and its zero parts
// return zero values, and it encodes as nothing.
func TestZeroMessage(t *testing.T) {
	var m Message
	assert.Equal(t, amqpsax.KindInvalid, m.ApplicationProperties.Get("k").Kind())
	assert.Equal(t, amqpsax.KindInvalid, m.Footer.GetKey(UlongKey(1)).Kind())
	out, err := m.Append([]byte("x"))
	require.NoError(t, err)
	assert.Equal(t, "x", string(out))
	assert.Nil(t, m.Bytes())
}

// TestAppendRefuses: what Append cannot write is an error, and nothing is
// appended.
func TestAppendRefuses(t *testing.T) {
	var vs Values
	var arr stream.Cursor
	arrBytes, err := vs.Any([]int64{1 << 40, 2})
	require.NoError(t, err)
	arr.Reset(arrBytes.Raw())
	require.True(t, arr.Next() && arr.Enter() && arr.Next())
	elem := arr.Value() // an array element: no constructor of its own
	for name, m := range map[string]Message{
		"zero value":       {ApplicationProperties: EntriesOf(Field{vs.String("k"), stream.Value{}})},
		"zero key":         {Footer: EntriesOf(Field{stream.Value{}, vs.Null()})},
		"array element":    {MessageAnnotations: EntriesOf(Field{vs.Symbol("k"), elem})},
		"data and value":   {Body: Body{Kind: BodyData, Data: [][]byte{{1}}, Value: vs.Null()}},
		"no value":         {Body: Body{Kind: BodyValue}},
		"sequence no list": {Body: Body{Kind: BodySequence, Sequence: []stream.Value{vs.Null()}}},
		"none with data":   {Body: Body{Data: [][]byte{{1}}}},
		"bad kind":         {Body: Body{Kind: 9}},
		"bad id":           {Properties: &Properties{MessageID: ID{Kind: amqpsax.KindSymbol, Bytes: []byte("s")}}},
	} {
		out, err := m.Append([]byte("keep"))
		assert.Error(t, err, name)
		assert.Equal(t, "keep", string(out), name)
		var e *amqpsax.Error
		assert.ErrorAs(t, err, &e, name)
	}
	_, err = vs.Raw([]byte{0xa1, 5, 'a'})
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	_, err = vs.Raw([]byte{0x40, 0x40})
	assert.ErrorIs(t, err, amqpsax.ErrTrailing)
	_, err = vs.Any(struct{}{})
	assert.ErrorIs(t, err, ErrGoType)
	var loop []any
	loop = append(loop, nil)
	loop[0] = loop
	_, err = vs.Any(loop)
	assert.ErrorIs(t, err, ErrGoType)
}

// TestMapDeterministic: the same map built 1,000 times gives the same
// bytes, keys in byte order (go-amqp's MarshalBinary ranges over the Go
// map, so its bytes change from run to run).
func TestMapDeterministic(t *testing.T) {
	props := map[string]any{}
	for i := range 40 {
		props[fmt.Sprintf("key-%02d", i)] = int64(i)
	}
	props["nested"] = map[string]any{"b": "x", "a": []any{uint8(1), "y"}, "c": map[any]any{int64(2): "two", "one": 1.5}}
	props["ts"] = time.UnixMilli(1_767_225_600_000)
	props["sym"] = stream.Symbol("s")
	var vs Values
	var first []byte
	for i := range 1000 {
		vs.Reset()
		ap, err := vs.PropertiesOf(props)
		require.NoError(t, err)
		ma, err := vs.AnnotationsOf(map[string]any{"x-b": "2", "x-a": uint64(1)})
		require.NoError(t, err)
		m := Message{MessageAnnotations: ma, ApplicationProperties: ap}
		out, err := m.Append(nil)
		require.NoError(t, err)
		if i == 0 {
			first = out
			// keys in byte order
			var got []string
			for k := range ap.All() {
				got = append(got, string(k.Bytes()))
			}
			assert.Len(t, got, len(props))
			assert.IsNonDecreasing(t, got)
			mf, af := ma.AppendFields(nil), ap.AppendFields(nil)
			assert.Equal(t, "x-a", string(mf[0].Key.Bytes()))
			assert.Equal(t, amqpsax.KindSymbol, mf[0].Key.Kind())
			assert.Equal(t, amqpsax.KindString, af[0].Key.Kind())
			continue
		}
		require.Equal(t, first, out, "run %d", i)
	}
}

// TestValuesAny: Go values encode as the table in the package
// documentation says, and read back through stream.Value.Any.
func TestValuesAny(t *testing.T) {
	u := uuid.MustParse("0f8fad5b-d9cb-469f-a165-70867728950e")
	ts := time.UnixMilli(1_700_000_000_123).UTC()
	for _, tc := range []struct {
		in   any
		kind amqpsax.Kind
		back any
	}{
		{nil, amqpsax.KindNull, nil},
		{true, amqpsax.KindBool, true},
		{uint8(7), amqpsax.KindUbyte, uint8(7)},
		{uint16(7), amqpsax.KindUshort, uint16(7)},
		{uint32(7), amqpsax.KindUint, uint32(7)},
		{uint64(7), amqpsax.KindUlong, uint64(7)},
		{uint(7), amqpsax.KindUlong, uint64(7)},
		{int8(-7), amqpsax.KindByte, int8(-7)},
		{int16(-7), amqpsax.KindShort, int16(-7)},
		{int32(-7), amqpsax.KindInt, int32(-7)},
		{int64(-7), amqpsax.KindLong, int64(-7)},
		{-7, amqpsax.KindLong, int64(-7)},
		{float32(1.5), amqpsax.KindFloat, float32(1.5)},
		{2.5, amqpsax.KindDouble, 2.5},
		{amqpsax.Decimal32{1, 2, 3, 4}, amqpsax.KindDecimal32, amqpsax.Decimal32{1, 2, 3, 4}},
		{ts, amqpsax.KindTimestamp, ts},
		{u, amqpsax.KindUUID, u},
		{[]byte{1, 2}, amqpsax.KindBinary, []byte{1, 2}},
		{"s", amqpsax.KindString, "s"},
		{stream.Symbol("s"), amqpsax.KindSymbol, stream.Symbol("s")},
		{[]any{"a", int64(1)}, amqpsax.KindList, []any{"a", int64(1)}},
		{map[string]any{"k": "v"}, amqpsax.KindMap, map[any]any{"k": "v"}},
		{map[stream.Symbol]any{"k": "v"}, amqpsax.KindMap, map[any]any{stream.Symbol("k"): "v"}},
		{[]string{"a", "b"}, amqpsax.KindArray, []any{"a", "b"}},
		{[]stream.Symbol{"a"}, amqpsax.KindArray, []any{stream.Symbol("a")}},
		{[]int64{1, 2}, amqpsax.KindArray, []any{int64(1), int64(2)}},
		{stream.Described{Descriptor: uint64(9), Value: "v"}, amqpsax.KindDescribed, stream.Described{Descriptor: uint64(9), Value: "v"}},
	} {
		var vs Values
		v, err := vs.Any(tc.in)
		require.NoError(t, err, "%T", tc.in)
		assert.Equal(t, tc.kind, v.Kind(), "%T", tc.in)
		back, err := v.Any()
		require.NoError(t, err)
		assert.Equal(t, tc.back, back, "%T", tc.in)
		// A stream.Value is written as it is encoded.
		again, err := vs.Any(v)
		require.NoError(t, err)
		assert.Equal(t, v.Raw(), again.Raw())
	}
}

// TestIDs: message-id and correlation-id in their four types, and the
// times as time.Time.
func TestIDs(t *testing.T) {
	u := uuid.New()
	ids := []ID{UlongID(7), UUIDID(u), BinaryID([]byte{1, 2}), StringID("corr")}
	for _, id := range ids {
		p := Properties{MessageID: id, CorrelationID: id}
		p.SetCreationTime(time.UnixMilli(1_700_000_000_000))
		p.SetAbsoluteExpiryTime(time.UnixMilli(1_700_000_060_000))
		m := Message{Properties: &p}
		out, err := m.Append(nil)
		require.NoError(t, err)
		var d Message
		require.NoError(t, d.Decode(out))
		assert.True(t, d.Properties.MessageID.Equal(id), "%v", id.Kind)
		assert.True(t, d.Properties.CorrelationID.Equal(id))
		back, err := IDOf(id.Any())
		require.NoError(t, err)
		assert.True(t, back.Equal(id))
		ct, ok := d.Properties.CreationTimeAt()
		assert.True(t, ok)
		assert.Equal(t, int64(1_700_000_000_000), ct.UnixMilli())
		assert.Equal(t, time.UTC, ct.Location())
		et, ok := d.Properties.AbsoluteExpiryTimeAt()
		assert.True(t, ok)
		assert.Equal(t, int64(1_700_000_060_000), et.UnixMilli())
	}
	assert.False(t, StringID("a").Equal(BinaryID([]byte("a"))))
	assert.True(t, ID{}.Equal(ID{Kind: amqpsax.KindNull}))
	_, err := IDOf(int32(1))
	assert.ErrorIs(t, err, ErrGoType)
	_, ok := (&Properties{}).CreationTimeAt()
	assert.False(t, ok)
}

// TestEntriesGet: lookup by key, first of equal keys, ulong and long
// keys, symbols and strings alike.
func TestEntriesGet(t *testing.T) {
	var vs Values
	built := EntriesOf(
		Field{vs.Symbol("a"), vs.Int(1)},
		Field{vs.String("a"), vs.Int(2)},
		Field{vs.Ulong(7), vs.Int(3)},
		Field{vs.Long(8), vs.Int(4)},
		Field{vs.Long(-1), vs.Int(5)},
	)
	// The same entries decoded: views of the encoded map.
	out, err := (&Message{Footer: built}).Append(nil)
	require.NoError(t, err)
	var m Message
	require.NoError(t, m.Decode(out))
	for _, e := range []Entries{built, m.Footer} {
		assert.True(t, e.Present())
		assert.Equal(t, 5, e.Len())
		assert.Equal(t, int64(1), e.Get("a").Int())
		assert.Equal(t, int64(1), e.GetKey(SymbolKey("a")).Int())
		assert.Equal(t, int64(3), e.GetKey(UlongKey(7)).Int())
		assert.Equal(t, int64(4), e.GetKey(UlongKey(8)).Int())
		assert.Equal(t, amqpsax.KindInvalid, e.GetKey(UlongKey(1<<64-1)).Kind())
		assert.Equal(t, amqpsax.KindInvalid, e.Get("b").Kind())
		n := 0
		for k, v := range e.All() {
			n++
			if n == 2 {
				assert.Equal(t, amqpsax.KindString, k.Kind())
				assert.Equal(t, int64(2), v.Int())
				break
			}
		}
		assert.Len(t, e.AppendFields(nil), 5)
	}
	assert.False(t, Entries{}.Present())
	assert.True(t, EntriesOf().Present())
	assert.Zero(t, Entries{}.Len())
}

// TestFastFields: the header and properties Decode reads are what
// ParseHeader and ParseProperties read, on every section of testdata
// and on every way of breaking one.
func TestFastFields(t *testing.T) {
	for _, pm := range loadMessages(t) {
		s, err := Scan(pm.Data)
		require.NoError(t, err)
		sameFields(t, s.Header)
		sameFields(t, s.Properties)
		for _, sec := range [][]byte{s.Header, s.Properties, extraFields(s.Header), extraFields(s.Properties)} {
			for i := range sec {
				for _, b := range []byte{0x00, 0x40, 0x41, 0x45, 0x52, 0x56, 0xa1, 0xc0, 0xd0, 0xe0, 0xff, sec[i] + 1} {
					bad := bytes.Clone(sec)
					bad[i] = b
					sameFields(t, bad)
				}
			}
		}
	}
}

// extraFields returns the list8 section sec with one more field, a
// string past the fields the spec defines (which readers skip), or sec
// itself when it is not a list8 with all its fields.
func extraFields(sec []byte) []byte {
	if len(sec) < 6 || sec[3] != byte(amqpsax.CodeList8) || int(sec[4])+5 != len(sec) || sec[4] > 250 {
		return sec
	}
	out := bytes.Clone(sec)
	for n := int(out[5]); n < composite.PropertiesFields; n++ { // all defined fields first
		out = append(out, byte(amqpsax.CodeNull))
	}
	out = append(out, byte(amqpsax.CodeStr8), 1, 'x')
	out[5] = byte(composite.PropertiesFields + 1)
	out[4] = byte(len(out) - 5)
	return out
}

// sameFields checks ParseHeader and ParseProperties (the wire-level
// reader of fast.go) against the same table read through
// composite.Reader (oracle_test.go) on the section sec, where Scan finds
// it a header or properties section: the same fields, and an error where
// they have one.
func sameFields(t *testing.T, sec []byte) {
	t.Helper()
	s, err := Scan(sec)
	if err != nil {
		return
	}
	if s.Header != nil {
		h1, err1 := parseHeaderCursor(sec)
		h2, err2 := ParseHeader(sec)
		require.Equal(t, err1 == nil, err2 == nil, "%x: %v / %v", sec, err1, err2)
		if err1 == nil {
			require.Equal(t, h1, h2, "%x", sec)
		}
	}
	if s.Properties != nil {
		p1, err1 := parsePropertiesCursor(sec)
		p2, err2 := ParseProperties(sec)
		require.Equal(t, err1 == nil, err2 == nil, "%x: %v / %v", sec, err1, err2)
		if err1 == nil {
			require.Equal(t, p1, p2, "%x", sec)
		}
	}
}

// TestFlat: a list, map or array of values that are not compounds is
// checked by one tight loop, and what that check lets through the full
// walk lets through (FuzzMessage holds it to that on every input).
func TestFlat(t *testing.T) {
	var vs Values
	for _, v := range []any{[]int64{1, 2, 3}, []string{"a", "bc"}, []stream.Symbol{"s"},
		[]any{int32(1), "x", true, nil, 1.5, []byte{1}}, map[string]any{"k": "v", "n": uint64(1 << 40)}} {
		enc, err := vs.Any(v)
		require.NoError(t, err)
		assert.True(t, flat(enc.Raw()), "%T", v)
	}
	nested, err := vs.Any([]any{[]any{int32(1)}, map[string]any{"k": []int64{1, 2}}, []string{"a"}})
	require.NoError(t, err)
	assert.True(t, flat(nested.Raw()), "compounds in compounds")
	var deep any = int32(1)
	for range flatDepth + 2 { // a list, and flatDepth+1 lists nested in it
		deep = []any{deep}
	}
	tooDeep, err := vs.Any(deep)
	require.NoError(t, err)
	assert.False(t, flat(tooDeep.Raw()), "nested deeper than flatDepth: the full walk decides")
	described := []byte{0xc0, 0x04, 0x01, 0x00, 0x53, 0x70}
	assert.False(t, flat(described), "a described value: the full walk decides")
	for _, raw := range [][]byte{
		{0xe0, 0x0a, 0x02, 0x81, 0, 0, 0, 0, 0, 0, 0, 1, 0},       // an array's size past its elements
		{0xe0, 0x12, 0x02, 0x81, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}, // count 2, one and a half longs
		{0xe0, 0x03, 0x02, 0x56, 0x00, 0x02},                      // booleans: the byte is checked
		{0xe0, 0x02, 0x01, 0x40},                                  // zero-width elements
		{0xe0, 0x05, 0x02, 0xa1, 0x01, 'a', 0x05},                 // a string past the array
		{0xc0, 0x04, 0x02, 0x56, 0x02, 0x40},                      // a bad boolean in a list
		{0xc0, 0x04, 0x02, 0xa1, 0x05, 0x40},                      // a string past the list
		{0xc1, 0x03, 0x01, 0x40, 0x40},                            // odd map count
		{0xc0, 0x03, 0x01, 0x40, 0x40},                            // a list's size past its count
		{0xc0, 0x05, 0x01, 0xc0, 0x03, 0x01, 0x40},                // a nested list's size past the list
		{0xc0, 0x06, 0x01, 0xc1, 0x03, 0x01, 0x40, 0x40},          // odd count of a nested map
		{0xc0, 0x06, 0x02, 0xc0, 0x01, 0x00, 0x45, 0x40},          // nested list8 and list0
	} {
		var d dispatch.Decoder
		n, err := d.Decode(raw, amqpsax.NopHandler{})
		if flat(raw) {
			assert.NoError(t, err, "%x", raw)
			assert.Equal(t, len(raw), n)
		}
	}
}

// TestBytes: Bytes is the input decoded — the Message's copy after
// Decode, the caller's slice after DecodeNoCopy — and nil after an error
// or Reset; DecodeNoCopy keeps the copy's storage for the next Decode.
func TestBytes(t *testing.T) {
	var vs Values
	data, err := (&Message{Body: Body{Kind: BodyValue, Value: vs.String("x")}}).Append(nil)
	require.NoError(t, err)
	var m Message
	require.NoError(t, m.Decode(data))
	own := m.Bytes()
	assert.Equal(t, data, own)
	assert.NotSame(t, &data[0], &own[0])
	require.NoError(t, m.DecodeNoCopy(data))
	assert.Same(t, &data[0], &m.Bytes()[0])
	require.NoError(t, m.Decode(data))
	assert.Same(t, &own[0], &m.Bytes()[0], "the copy's storage is reused")
	assert.Error(t, m.Decode(data[:len(data)-1]))
	assert.Nil(t, m.Bytes())
	require.NoError(t, m.Decode(data))
	m.Reset()
	assert.Nil(t, m.Bytes())
}

// TestAppendGrowsOnce: Append's size bound holds, so it grows the buffer
// once, for every message of testdata and for UUID ids (the widest
// fields).
func TestAppendGrowsOnce(t *testing.T) {
	u := uuid.New()
	msgs := []*Message{{Properties: &Properties{MessageID: UUIDID(u), CorrelationID: UUIDID(u),
		UserID: []byte("u"), To: []byte("t"), HasGroupSequence: true, GroupSequence: 1 << 31,
		HasCreationTime: true, CreationTime: -1, HasAbsoluteExpiryTime: true, AbsoluteExpiryTime: -1}}}
	for _, pm := range loadMessages(t) {
		m := new(Message)
		require.NoError(t, m.Decode(pm.Data))
		msgs = append(msgs, m)
	}
	for _, m := range msgs {
		out, err := m.Append(nil)
		require.NoError(t, err)
		// Append grows the buffer to m.size() first: within that bound,
		// appending never grows it again.
		assert.LessOrEqual(t, len(out), m.size())
	}
}
