package message

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/internal/cases"
	"github.com/amqpsax/amqpsax/internal/corpus"
	"github.com/amqpsax/amqpsax/internal/trace"
	"github.com/amqpsax/amqpsax/stream"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func traceOf(t *testing.T, b []byte) string {
	t.Helper()
	var rec trace.Recorder
	var d dispatch.Decoder
	require.NoError(t, d.DecodeAll(b, &rec))
	return rec.String()
}

// sectionsTrace joins the traces of the sections Scan found, in order.
func sectionsTrace(t *testing.T, s Sections) string {
	var parts []string
	for _, sec := range [][]byte{s.Header, s.DeliveryAnnotations, s.MessageAnnotations, s.Properties, s.ApplicationProperties, s.Body, s.Footer} {
		if sec != nil {
			parts = append(parts, traceOf(t, sec))
		}
	}
	return strings.Join(parts, " ")
}

// TestScanProtonCorpus: on every message of the corpus, the sections Scan
// finds decode to exactly the tree a full decode of the message gives.
func TestScanProtonCorpus(t *testing.T) {
	for _, e := range corpus.Load(t, "messages.jsonl") {
		s, err := Scan(e.Data)
		require.NoError(t, err, e.Name)
		assert.Equal(t, e.Trace, sectionsTrace(t, s), e.Name)
		if s.Properties != nil {
			_, err := ParseProperties(s.Properties)
			assert.NoError(t, err, e.Name)
		}
		_, err = ParseHeader(s.Header)
		assert.NoError(t, err, e.Name)
	}
}

// mkSection builds a section with a ulong or symbolic descriptor.
func mkSection(d amqpsax.Descriptor, symbolic bool, value func([]byte) []byte) []byte {
	b := encode.AppendDescribed(nil)
	if symbolic {
		b = encode.AppendSymbol(b, d.Name())
	} else {
		b = encode.AppendCodeUlong(b, uint64(d)) // the 8-byte ulong form
	}
	return value(b)
}

func strMap(kv ...string) func([]byte) []byte {
	return func(b []byte) []byte {
		s := len(b)
		b = encode.BeginMap(b)
		for i := 0; i < len(kv); i += 2 {
			b = encode.AppendSymbol(b, kv[i])
			b = encode.AppendString(b, kv[i+1])
		}
		return encode.EndMap(b, s, len(kv)/2)
	}
}

func list(vals ...func([]byte) []byte) func([]byte) []byte {
	return func(b []byte) []byte {
		s := len(b)
		b = encode.BeginList(b)
		for _, v := range vals {
			b = v(b)
		}
		return encode.EndList(b, s, len(vals))
	}
}

func strv(v string) func([]byte) []byte {
	return func(b []byte) []byte { return encode.AppendString(b, v) }
}
func bin(v string) func([]byte) []byte {
	return func(b []byte) []byte { return encode.AppendBinary(b, []byte(v)) }
}
func null(b []byte) []byte { return encode.AppendNull(b) }

func join(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestScanSymbolicAndSeveralData(t *testing.T) {
	for _, symbolic := range []bool{false, true} {
		hdr := mkSection(amqpsax.DescriptorHeader, symbolic, list(func(b []byte) []byte { return encode.AppendBool(b, true) }))
		ma := mkSection(amqpsax.DescriptorMessageAnnotations, symbolic, strMap("x-opt-a", "1"))
		props := mkSection(amqpsax.DescriptorProperties, symbolic, list(strv("id"), null, strv("queue")))
		ap := mkSection(amqpsax.DescriptorApplicationProperties, symbolic, strMap("region", "eu"))
		d1 := mkSection(amqpsax.DescriptorData, symbolic, bin("hello "))
		d2 := mkSection(amqpsax.DescriptorData, symbolic, bin("world"))
		footer := mkSection(amqpsax.DescriptorFooter, symbolic, strMap("sig", "x"))
		msg := join(hdr, ma, props, ap, d1, d2, footer)
		s, err := Scan(msg)
		require.NoError(t, err)
		assert.Equal(t, hdr, s.Header)
		assert.Equal(t, ma, s.MessageAnnotations)
		assert.Nil(t, s.DeliveryAnnotations)
		assert.Equal(t, props, s.Properties)
		assert.Equal(t, ap, s.ApplicationProperties)
		assert.Equal(t, join(d1, d2), s.Body)
		assert.Equal(t, BodyData, s.BodyKind)
		assert.Equal(t, footer, s.Footer)
		assert.Equal(t, join(props, ap, d1, d2), s.Bare)
		assert.Equal(t, traceOf(t, msg), sectionsTrace(t, s))
		p, err := ParseProperties(s.Properties)
		require.NoError(t, err)
		assert.Equal(t, "queue", string(p.To))
		v, err := Lookup(s.ApplicationProperties, "region")
		require.NoError(t, err)
		assert.Equal(t, "string:6575", traceOf(t, v.Raw()))
		assert.Equal(t, "eu", string(v.Bytes()))
		assert.Equal(t, Offsets{0, -1, len(hdr), len(hdr) + len(ma), len(hdr) + len(ma) + len(props), len(msg) - len(footer) - len(d1) - len(d2), len(msg) - len(footer)},
			s.Offsets)
		assert.False(t, s.OutOfOrder)
	}
}

// TestScanAnyOrder: sections in the orders deployed encoders write them
// are accepted, reported OutOfOrder, and written back by Append in the
// spec's order with every section byte for byte.
func TestScanAnyOrder(t *testing.T) {
	hdr := mkSection(amqpsax.DescriptorHeader, false, list(func(b []byte) []byte { return encode.AppendBool(b, true) }))
	da := mkSection(amqpsax.DescriptorDeliveryAnnotations, false, strMap("x-opt-d", "1"))
	props := mkSection(amqpsax.DescriptorProperties, false, list(strv("id")))
	ap := mkSection(amqpsax.DescriptorApplicationProperties, false, strMap("region", "eu"))
	footer := mkSection(amqpsax.DescriptorFooter, false, strMap("sig", "x"))
	body := mkSection(amqpsax.DescriptorAMQPValue, false, strv("v"))
	d1 := mkSection(amqpsax.DescriptorData, false, bin("a"))
	d2 := mkSection(amqpsax.DescriptorData, false, bin("b"))
	for _, tt := range []struct {
		name      string
		msg, want []byte // as read; as Append writes it
		bare      []byte // Bare, nil when the bare sections are apart
	}{
		{"rhea: footer before the body", join(props, ap, footer, body), join(props, ap, body, footer), nil},
		{"uAMQP: delivery annotations after the application properties", join(hdr, props, ap, da, body), join(hdr, da, props, ap, body), nil},
		{"delivery annotations last", join(hdr, props, ap, body, da), join(hdr, da, props, ap, body), join(props, ap, body)},
		{"header last", join(props, d1, d2, hdr), join(hdr, props, d1, d2), join(props, d1, d2)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Scan(tt.msg)
			require.NoError(t, err)
			assert.True(t, s.OutOfOrder)
			assert.Equal(t, tt.bare, s.Bare)
			out, err := Append(nil, s, nil)
			require.NoError(t, err)
			assert.Equal(t, tt.want, out)
			s2, err := Scan(out)
			require.NoError(t, err)
			assert.False(t, s2.OutOfOrder)
			for i, pair := range [][2][]byte{{s.Header, s2.Header}, {s.DeliveryAnnotations, s2.DeliveryAnnotations},
				{s.Properties, s2.Properties}, {s.ApplicationProperties, s2.ApplicationProperties}, {s.Body, s2.Body}, {s.Footer, s2.Footer}} {
				assert.Equal(t, pair[0], pair[1], "section %d", i)
			}
		})
	}
	// Still refused: a section twice, in any order.
	_, err := Scan(join(props, footer, body, footer))
	assertCause(t, err, ErrDuplicateSection, len(props)+len(footer)+len(body))
	assert.ErrorContains(t, err, "footer: duplicate section")
	// Body sections apart.
	_, err = Scan(join(d1, footer, d2))
	assertCause(t, err, ErrSectionOrder, len(d1)+len(footer))
}

// TestScanPrefix: on every prefix of a message Scan returns the sections
// complete in it and a cut at the offset where the input ends.
func TestScanPrefix(t *testing.T) {
	for _, e := range corpus.Load(t, "messages.jsonl") {
		if len(e.Data) > 4096 {
			continue
		}
		full, err := Scan(e.Data)
		require.NoError(t, err)
		for cut := range len(e.Data) {
			s, err := Scan(e.Data[:cut:cut])
			if err == nil {
				continue // a cut between sections: a shorter message
			}
			require.ErrorIs(t, err, io.ErrUnexpectedEOF, "%s cut at %d", e.Name, cut)
			var ae *amqpsax.Error
			require.ErrorAs(t, err, &ae)
			// every section that ends before the cut is there, whole
			for i, pair := range [][2][]byte{{full.Header, s.Header}, {full.DeliveryAnnotations, s.DeliveryAnnotations},
				{full.MessageAnnotations, s.MessageAnnotations}, {full.Properties, s.Properties},
				{full.ApplicationProperties, s.ApplicationProperties}, {full.Footer, s.Footer}} {
				off := []int{full.Offsets.Header, full.Offsets.DeliveryAnnotations, full.Offsets.MessageAnnotations,
					full.Offsets.Properties, full.Offsets.ApplicationProperties, full.Offsets.Footer}[i]
				if off >= 0 && off+len(pair[0]) <= cut {
					assert.Equal(t, pair[0], pair[1], "%s cut at %d: section %d", e.Name, cut, i)
				} else {
					assert.Nil(t, pair[1], "%s cut at %d: section %d", e.Name, cut, i)
				}
			}
			assert.LessOrEqual(t, ae.Offset, cut)
		}
	}
	// The router's case: header and properties in the first frame.
	hdr := mkSection(amqpsax.DescriptorHeader, false, list(func(b []byte) []byte { return encode.AppendBool(b, true) }))
	props := mkSection(amqpsax.DescriptorProperties, false, list(strv("id"), null, strv("orders")))
	body := mkSection(amqpsax.DescriptorData, false, bin(strings.Repeat("x", 1000)))
	first := join(hdr, props, body)[:len(hdr)+len(props)+100]
	s, err := Scan(first)
	assertCause(t, err, io.ErrUnexpectedEOF, len(hdr)+len(props))
	assert.Equal(t, fmt.Sprintf("message: body: truncated input (described) at offset %d", len(hdr)+len(props)), err.Error(),
		"worded as the decoders word a cut")
	p, err := ParseProperties(s.Properties)
	require.NoError(t, err)
	assert.Equal(t, "orders", string(p.To))
	assert.Nil(t, s.Body)
	// One allocation: the error, which carries its offset. The sections
	// themselves are views.
	allocs := testing.AllocsPerRun(100, func() { _, _ = Scan(first) })
	assert.Equal(t, 1.0, allocs)
}

// TestScanner checks that a Scanner scans as Scan does and returns a
// prefix's error from its own storage, with no allocation.
func TestScanner(t *testing.T) {
	hdr := mkSection(amqpsax.DescriptorHeader, false, list(func(b []byte) []byte { return encode.AppendBool(b, true) }))
	props := mkSection(amqpsax.DescriptorProperties, false, list(strv("id"), null, strv("orders")))
	body := mkSection(amqpsax.DescriptorData, false, bin(strings.Repeat("x", 1000)))
	msg := join(hdr, props, body)
	var sc Scanner
	for _, in := range [][]byte{msg, msg[:len(hdr)+len(props)+100], msg[:len(hdr)+3], msg[:0], {0x00, 0x53, 0x77, 0xee}, {0x00, 0x53, 0x70, 0x45, 0x00}} {
		want, wantErr := Scan(in)
		got, err := sc.Scan(in)
		assert.Equal(t, want, got, "%x", in)
		if wantErr == nil {
			assert.NoError(t, err)
			continue
		}
		require.Error(t, err)
		assert.Equal(t, wantErr.Error(), err.Error())
		assert.Equal(t, errors.Is(wantErr, io.ErrUnexpectedEOF), errors.Is(err, io.ErrUnexpectedEOF))
		var we, ge *amqpsax.Error
		require.ErrorAs(t, wantErr, &we)
		require.ErrorAs(t, err, &ge)
		assert.Equal(t, we.Offset, ge.Offset)
		var ws, gs *SectionError
		require.ErrorAs(t, wantErr, &ws)
		require.ErrorAs(t, err, &gs)
		assert.Equal(t, ws.Section, gs.Section)
	}

	// The prefix error lives in the Scanner: the next prefix reuses it.
	_, err1 := sc.Scan(msg[:len(hdr)+len(props)+100])
	assertCause(t, err1, io.ErrUnexpectedEOF, len(hdr)+len(props))
	_, err2 := sc.Scan(msg[:len(hdr)+3])
	assert.Same(t, err1, err2)
	assertCause(t, err1, io.ErrUnexpectedEOF, len(hdr))

	first := msg[:len(hdr)+len(props)+100]
	allocs := testing.AllocsPerRun(100, func() { _, _ = sc.Scan(first) })
	assert.Zero(t, allocs)
}

func assertCause(t *testing.T, err, cause error, off int) {
	t.Helper()
	require.Error(t, err)
	assert.ErrorIs(t, err, cause)
	var e *amqpsax.Error
	require.True(t, errors.As(err, &e), "%T", err)
	assert.Equal(t, off, e.Offset, err.Error())
	assert.True(t, strings.HasPrefix(err.Error(), "message: "), err.Error())
}

func TestScanMalformed(t *testing.T) {
	hdr := mkSection(amqpsax.DescriptorHeader, false, list())
	props := mkSection(amqpsax.DescriptorProperties, false, list(strv("id")))
	ap := mkSection(amqpsax.DescriptorApplicationProperties, false, strMap())
	value := mkSection(amqpsax.DescriptorAMQPValue, false, strv("v"))
	data := mkSection(amqpsax.DescriptorData, false, bin("v"))
	seq := mkSection(amqpsax.DescriptorAMQPSequence, false, list())
	footer := mkSection(amqpsax.DescriptorFooter, false, strMap())
	tests := []struct {
		name  string
		msg   []byte
		cause error
		off   int
	}{
		{"duplicate properties", join(props, props), ErrDuplicateSection, len(props)},
		{"duplicate out of order", join(props, hdr, props), ErrDuplicateSection, len(props) + len(hdr)},
		{"two amqp-values", join(value, value), ErrDuplicateSection, len(value)},
		{"data then value", join(data, value), ErrMixedBody, len(data)},
		{"data then sequence", join(data, seq), ErrMixedBody, len(data)},
		{"body after footer after body", join(data, footer, data), ErrSectionOrder, len(data) + len(footer)},
		{"non-section value", join(hdr, encode.AppendString(nil, "x")), ErrNotSection, len(hdr)},
		{"unknown descriptor", join(mkSection(0x1234, false, list())), ErrNotSection, 0},
		{"open performative", join(mkSection(amqpsax.DescriptorOpen, false, list())), ErrNotSection, 0},
		{"header is a map", mkSection(amqpsax.DescriptorHeader, false, strMap()), ErrSectionType, 10}, // the value's offset
		{"data is a string", mkSection(amqpsax.DescriptorData, false, strv("x")), ErrSectionType, 10},
		{"app props twice around the body", join(ap, value, ap), ErrDuplicateSection, len(ap) + len(value)},
		{"invalid code", []byte{0x3f}, amqpsax.ErrInvalidCode, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Scan(tc.msg)
			assertCause(t, err, tc.cause, tc.off)
		})
	}
}

// TestScanTruncation cuts every corpus message at many points: always an
// error with an offset, never a panic.
func TestScanTruncation(t *testing.T) {
	for _, e := range corpus.Load(t, "messages.jsonl") {
		if len(e.Data) > 4096 {
			continue // the big bodies add nothing but time
		}
		// Cut points that are section boundaries give a shorter valid
		// message; every other cut must fail.
		bounds := map[int]bool{0: true}
		s, err := Scan(e.Data)
		require.NoError(t, err)
		for _, sec := range [][]byte{s.Header, s.DeliveryAnnotations, s.MessageAnnotations, s.Properties, s.ApplicationProperties, s.Footer} {
			if sec != nil {
				bounds[cap(e.Data)-cap(sec)+len(sec)] = true
			}
		}
		for cut := 1; cut < len(e.Data); cut++ {
			_, err := Scan(e.Data[:cut:cut])
			if bounds[cut] {
				continue
			}
			if err == nil {
				// a boundary between body sections
				continue
			}
			assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "%s cut at %d", e.Name, cut)
		}
	}
}

func TestParseHeader(t *testing.T) {
	h, err := ParseHeader(nil)
	require.NoError(t, err)
	assert.Equal(t, DefaultHeader, h)
	want := Header{Durable: true, Priority: 9, TTL: 60000, HasTTL: true, FirstAcquirer: true, DeliveryCount: 3}
	got, err := ParseHeader(AppendHeader(nil, want))
	require.NoError(t, err)
	assert.Equal(t, want, got)
	for _, h := range []Header{DefaultHeader, {Priority: 4, Durable: true}, {Priority: 0}, {Priority: 4, DeliveryCount: 1 << 20}} {
		got, err := ParseHeader(AppendHeader(nil, h))
		require.NoError(t, err)
		assert.Equal(t, h, got)
	}
	assert.Equal(t, "00537045", hexOf(AppendHeader(nil, DefaultHeader)))
	_, err = ParseHeader(mkSection(amqpsax.DescriptorHeader, false, list(strv("x"))))
	require.ErrorIs(t, err, ErrSectionType)
	var e *amqpsax.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 13, e.Offset) // in the section: 00, 8-byte ulong, list8 header
	assert.Equal(t, "message/header: value of the wrong type (str8-utf8) at offset 13", err.Error())
}

func hexOf(b []byte) string {
	const h = "0123456789abcdef"
	var sb strings.Builder
	for _, c := range b {
		sb.WriteByte(h[c>>4])
		sb.WriteByte(h[c&15])
	}
	return sb.String()
}

func TestParseProperties(t *testing.T) {
	id := uuid.MustParse("00112233-4455-6677-8899-aabbccddeeff")
	ts := func(v int64) func([]byte) []byte {
		return func(b []byte) []byte { return encode.AppendTimestamp(b, v) }
	}
	sym := func(v string) func([]byte) []byte { return func(b []byte) []byte { return encode.AppendSymbol(b, v) } }
	sec := mkSection(amqpsax.DescriptorProperties, false, list(
		func(b []byte) []byte { return encode.AppendUlong(b, 42) },
		bin("user"), strv("to"), strv("subject"), sym("reply"), // a symbol where a string belongs: accepted
		func(b []byte) []byte { return encode.AppendUUID(b, id) },
		sym("text/plain"), sym("gzip"), ts(1000), ts(2000), strv("group"),
		func(b []byte) []byte { return encode.AppendUint(b, 7) }, strv("rgroup")))
	p, err := ParseProperties(sec)
	require.NoError(t, err)
	assert.Equal(t, ID{Kind: amqpsax.KindUlong, Ulong: 42}, p.MessageID)
	assert.Equal(t, ID{Kind: amqpsax.KindUUID, UUID: id}, p.CorrelationID)
	assert.Equal(t, "user", string(p.UserID))
	assert.Equal(t, "to", string(p.To))
	assert.Equal(t, "subject", string(p.Subject))
	assert.Equal(t, "reply", string(p.ReplyTo))
	assert.Equal(t, "text/plain", string(p.ContentType))
	assert.Equal(t, "gzip", string(p.ContentEncoding))
	assert.True(t, p.HasAbsoluteExpiryTime && p.HasCreationTime && p.HasGroupSequence)
	assert.Equal(t, []int64{1000, 2000}, []int64{p.AbsoluteExpiryTime, p.CreationTime})
	assert.Equal(t, "group", string(p.GroupID))
	assert.Equal(t, uint32(7), p.GroupSequence)
	assert.Equal(t, "rgroup", string(p.ReplyToGroupID))
	for _, idv := range []func([]byte) []byte{bin("b"), strv("s")} {
		p, err := ParseProperties(mkSection(amqpsax.DescriptorProperties, false, list(idv)))
		require.NoError(t, err)
		assert.NotEqual(t, amqpsax.KindNull, p.MessageID.Kind)
		assert.Len(t, p.MessageID.Bytes, 1)
	}
	_, err = ParseProperties(mkSection(amqpsax.DescriptorProperties, false, list(null, strv("not binary"))))
	assert.ErrorIs(t, err, ErrSectionType)
}

// TestSplice: adding an annotation and incrementing delivery-count leaves
// the bare message and footer byte-identical, and the result decodes to
// the original plus the change.
func TestSplice(t *testing.T) {
	for _, e := range corpus.Load(t, "messages.jsonl") {
		s, err := Scan(e.Data)
		require.NoError(t, err, e.Name)
		h, err := ParseHeader(s.Header)
		require.NoError(t, err)
		h.AddDelivery()
		ch := Changes{Header: &h, MessageAnnotations: Edit{Set: []Entry{{SymbolKey("x-opt-routed-by"), encode.AppendString(nil, "amqpsax")}}}}
		out, err := Append(nil, s, &ch)
		require.NoError(t, err, e.Name)
		s2, err := Scan(out)
		require.NoError(t, err, e.Name)
		assert.Equal(t, s.Bare, s2.Bare, e.Name)
		assert.Equal(t, s.Footer, s2.Footer, e.Name)
		assert.Equal(t, s.DeliveryAnnotations, s2.DeliveryAnnotations, e.Name)
		h2, err := ParseHeader(s2.Header)
		require.NoError(t, err)
		assert.Equal(t, h, h2)
		v, err := Lookup(s2.MessageAnnotations, "x-opt-routed-by")
		require.NoError(t, err)
		assert.Equal(t, "string:616d7170736178", traceOf(t, v.Raw()), e.Name)
		// The other annotations are unchanged, in order.
		if s.MessageAnnotations != nil {
			entries := func(tr string) string { // the trace between "map:N" and "/map"
				tr = tr[strings.Index(tr, "map:"):]
				return tr[strings.Index(tr, " "):strings.LastIndex(tr, " /map")]
			}
			before, after := entries(traceOf(t, s.MessageAnnotations)), entries(traceOf(t, s2.MessageAnnotations))
			assert.Equal(t, before+" symbol:782d6f70742d726f757465642d6279 string:616d7170736178", after, e.Name)
		}
	}
}

func TestSpliceEdits(t *testing.T) {
	ma := mkSection(amqpsax.DescriptorMessageAnnotations, false, strMap("a", "1", "b", "2", "c", "3"))
	body := mkSection(amqpsax.DescriptorAMQPValue, false, strv("v"))
	s, err := Scan(join(ma, body))
	require.NoError(t, err)
	out, err := Append(nil, s, &Changes{MessageAnnotations: Edit{
		Set:    []Entry{{SymbolKey("b"), encode.AppendInt(nil, 20)}, {SymbolKey("d"), encode.AppendNull(nil)}, {SymbolKey("c"), encode.AppendNull(nil)}},
		Remove: []Key{SymbolKey("a"), SymbolKey("c")},
	}})
	require.NoError(t, err)
	s2, err := Scan(out)
	require.NoError(t, err)
	// a removed; b replaced in place; c removed then set again (added at the end); d added
	assert.Equal(t, "described ulong:114 map:3 symbol:62 int:20 symbol:64 null symbol:63 null /map /described", traceOf(t, s2.MessageAnnotations))
	assert.Equal(t, body, s2.Body)
	// Removing every entry drops the section.
	out, err = Append(nil, s, &Changes{MessageAnnotations: Edit{Remove: []Key{SymbolKey("a"), SymbolKey("b"), SymbolKey("c")}}})
	require.NoError(t, err)
	assert.Equal(t, body, out)
	// Delivery annotations created where there were none, in their place.
	out, err = Append(nil, s, &Changes{DeliveryAnnotations: Edit{Set: []Entry{{SymbolKey("x"), encode.AppendNull(nil)}}}})
	require.NoError(t, err)
	s3, err := Scan(out)
	require.NoError(t, err)
	assert.NotNil(t, s3.DeliveryAnnotations)
	assert.Equal(t, ma, s3.MessageAnnotations)
	// No changes: the same bytes.
	out, err = Append(nil, s, nil)
	require.NoError(t, err)
	assert.Equal(t, join(ma, body), out)
}

// TestAllocs: Scan, the accessors and the splice allocate nothing.
func TestAllocs(t *testing.T) {
	var msgs [][]byte
	for _, e := range corpus.Load(t, "messages.jsonl") {
		msgs = append(msgs, e.Data)
	}
	buf := make([]byte, 0, 1<<20)
	set := []Entry{{SymbolKey("x-opt-routed-by"), encode.AppendString(nil, "amqpsax")}}
	allocs := testing.AllocsPerRun(5, func() {
		for _, m := range msgs {
			s, _ := Scan(m)
			h, _ := ParseHeader(s.Header)
			_, _ = ParseProperties(s.Properties)
			_, _ = Lookup(s.ApplicationProperties, "k")
			_, _ = LookupKey(s.MessageAnnotations, UlongKey(7))
			h.AddDelivery()
			ch := Changes{Header: &h, MessageAnnotations: Edit{Set: set}}
			buf, _ = Append(buf[:0], s, &ch)
		}
	})
	assert.Zero(t, allocs)
}

// TestAppendValidates: every value given to Append must be exactly one
// well-formed value; anything else is an error and nothing is written.
func TestAppendValidates(t *testing.T) {
	body := mkSection(amqpsax.DescriptorAMQPValue, false, strv("v"))
	s, err := Scan(body)
	require.NoError(t, err)
	dst := []byte("keep")
	for _, tt := range []struct {
		name  string
		value []byte
		cause error
	}{
		{"nothing", nil, io.ErrUnexpectedEOF},
		{"undefined code", []byte{0xee}, amqpsax.ErrInvalidCode},
		{"two values", []byte{0x40, 0x40}, amqpsax.ErrTrailing},
		{"truncated", []byte{0xa1, 0x05, 'a'}, io.ErrUnexpectedEOF},
		{"overrun inside a list", cases.Bytes("c00301a105" + "6161616161"), amqpsax.ErrOverrun},
	} {
		out, err := Append(dst, s, &Changes{MessageAnnotations: Edit{Set: []Entry{{SymbolKey("x"), tt.value}}}})
		require.ErrorIs(t, err, tt.cause, tt.name)
		assert.True(t, strings.HasPrefix(err.Error(), "message/edit: "), err.Error())
		assert.Equal(t, "keep", string(out), tt.name)
	}
	// with room in dst, a validated Append allocates nothing
	buf := make([]byte, 0, 256)
	set := []Entry{{SymbolKey("x-opt-a"), encode.AppendString(nil, "v")}, {UlongKey(5), cases.Bytes("c0030243" + "40")}}
	allocs := testing.AllocsPerRun(100, func() {
		buf, _ = Append(buf[:0], s, &Changes{MessageAnnotations: Edit{Set: set}})
	})
	assert.Zero(t, allocs)
}

// TestLookupKeyAndMap: keys by symbol or ulong; Go values for a section.
func TestLookupKeyAndMap(t *testing.T) {
	ma := encode.AppendDescribed(nil)
	ma = encode.AppendCodeSmallUlong(ma, uint8(amqpsax.DescriptorMessageAnnotations))
	m := len(ma)
	ma = encode.BeginMap(ma)
	ma = encode.AppendSymbol(ma, "x-opt-a")
	ma = encode.AppendInt(ma, 7)
	ma = encode.AppendUlong(ma, 42)
	ma = encode.AppendString(ma, "by number")
	ma = encode.EndMap(ma, m, 2)
	v, err := LookupKey(ma, UlongKey(42))
	require.NoError(t, err)
	assert.Equal(t, "by number", string(v.Bytes()))
	v, err = Lookup(ma, "x-opt-a")
	require.NoError(t, err)
	assert.Equal(t, int64(7), v.Int())
	v, err = Lookup(ma, "absent")
	require.NoError(t, err)
	assert.Equal(t, amqpsax.KindInvalid, v.Kind())
	_, err = AnyMap(ma)
	assert.ErrorIs(t, err, ErrKeyNotString) // a ulong key
	var e *amqpsax.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "message/message-annotations", e.Op)

	ap := mkSection(amqpsax.DescriptorApplicationProperties, false, strMap("region", "eu", "tier", "gold"))
	got, err := AnyMap(ap)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"region": "eu", "tier": "gold"}, got)
	got, err = AnyMap(nil)
	require.NoError(t, err)
	assert.Empty(t, got)
}

// TestAccessorFaultIsNotCut: a section Scan returned is complete, so a
// value in it that claims to run past its map or list is malformed, never
// a cut, also where the section and the message end with it: a router
// must not wait for bytes that cannot mend it.
func TestAccessorFaultIsNotCut(t *testing.T) {
	props := mkSection(amqpsax.DescriptorProperties, false, list(null, null, strv("queue")))
	app := mkSection(amqpsax.DescriptorApplicationProperties, false, strMap("tenant", "acme"))
	for _, tt := range []struct {
		name    string
		section []byte
		last    string // the section's last string, whose length is made to claim 9 bytes more
		of      func(Sections) []byte
		read    func(section []byte) error
	}{
		{"ParseProperties", props, "queue", func(s Sections) []byte { return s.Properties },
			func(s []byte) error { _, err := ParseProperties(s); return err }},
		{"Lookup", app, "acme", func(s Sections) []byte { return s.ApplicationProperties },
			func(s []byte) error { _, err := Lookup(s, "tenant"); return err }},
		{"Map", app, "acme", func(s Sections) []byte { return s.ApplicationProperties },
			func(s []byte) error { _, err := AnyMap(s); return err }},
	} {
		bad := bytes.Clone(tt.section)
		bad[len(bad)-len(tt.last)-1] += 9
		for _, msg := range [][]byte{bad, join(bad, mkSection(amqpsax.DescriptorFooter, false, strMap()))} {
			s, err := Scan(msg)
			require.NoError(t, err, tt.name)
			err = tt.read(tt.of(s))
			require.ErrorIs(t, err, amqpsax.ErrOverrun, tt.name)
			assert.NotErrorIs(t, err, io.ErrUnexpectedEOF, tt.name)
		}
		// The section itself cut short is a cut.
		assert.ErrorIs(t, tt.read(tt.section[:len(tt.section)-2]), io.ErrUnexpectedEOF, tt.name)
	}
}

// TestDuplicateKeysAgree: a map section with a key twice (a string and a
// symbol of the same text, or the same string twice) reads the same
// through Lookup, Map and Cursor.Any: the first entry counts.
func TestDuplicateKeysAgree(t *testing.T) {
	for _, symbolFirst := range []bool{false, true} {
		sec := mkSection(amqpsax.DescriptorApplicationProperties, false, func(b []byte) []byte {
			m := len(b)
			b = encode.BeginMap(b)
			if symbolFirst {
				b = encode.AppendSymbol(b, "tenant")
			} else {
				b = encode.AppendString(b, "tenant")
			}
			b = encode.AppendString(b, "first")
			b = encode.AppendString(b, "tenant")
			b = encode.AppendString(b, "second")
			b = encode.AppendString(b, "tenant")
			b = encode.AppendString(b, "third")
			return encode.EndMap(b, m, 3)
		})
		v, err := Lookup(sec, "tenant")
		require.NoError(t, err)
		assert.Equal(t, "first", string(v.Bytes()))
		m, err := AnyMap(sec)
		require.NoError(t, err)
		assert.Equal(t, map[string]any{"tenant": "first"}, m)

		var c stream.Cursor
		c.Reset(sec)
		require.True(t, c.Next() && c.EnterValue())
		a, err := c.Any()
		require.NoError(t, err)
		want := map[any]any{"tenant": "first"}
		if symbolFirst { // a symbol and a string are different Go keys
			want = map[any]any{stream.Symbol("tenant"): "first", "tenant": "second"}
		}
		assert.Equal(t, want, a, "symbol first: %v", symbolFirst)
	}
}

// TestParseOtherSection: ParseHeader and ParseProperties refuse a section
// of another type, also one whose list would fit (an empty list).
func TestParseOtherSection(t *testing.T) {
	emptyHeader := mkSection(amqpsax.DescriptorHeader, false, list())
	emptyProps := mkSection(amqpsax.DescriptorProperties, true, list())
	app := mkSection(amqpsax.DescriptorApplicationProperties, false, strMap("k", "v"))
	for _, tt := range []struct {
		sec  []byte
		name string
	}{{emptyHeader, "header"}, {app, "application-properties"}} {
		sec, name := tt.sec, tt.name
		_, err := ParseProperties(sec)
		require.ErrorIs(t, err, ErrOtherSection)
		assert.Equal(t, "message/properties: "+name+": section of another type (described) at offset 0", err.Error(),
			"names the section it was given")
	}
	for _, sec := range [][]byte{emptyProps, app} {
		_, err := ParseHeader(sec)
		require.ErrorIs(t, err, ErrOtherSection)
	}
	_, err := ParseHeader(emptyHeader)
	assert.NoError(t, err)
	_, err = ParseProperties(emptyProps) // a symbolic descriptor is the same section
	assert.NoError(t, err)
}

// TestAppendPropertiesProton: for every message of the Proton corpus,
// AppendProperties of what ParseProperties read writes exactly the bytes
// Proton wrote (smallulong descriptor, smallest widths, trailing nulls
// left out), and reads back equal; AppendHeader likewise for headers.
func TestAppendPropertiesProton(t *testing.T) {
	var same, n, headers int
	for _, e := range corpus.Load(t, "messages.jsonl") {
		s, err := Scan(e.Data)
		require.NoError(t, err, e.Name)
		if s.Header != nil {
			h, err := ParseHeader(s.Header)
			require.NoError(t, err, e.Name)
			assert.Equal(t, s.Header, AppendHeader(nil, h), "header of %s", e.Name)
			headers++
		}
		if s.Properties == nil {
			continue
		}
		n++
		p, err := ParseProperties(s.Properties)
		require.NoError(t, err, e.Name)
		out, err := AppendProperties(nil, p)
		require.NoError(t, err, e.Name)
		back, err := ParseProperties(out)
		require.NoError(t, err, e.Name)
		assert.Equal(t, p, back, e.Name)
		if bytes.Equal(out, s.Properties) {
			same++
		} else {
			t.Logf("%s: Proton %x, AppendProperties %x", e.Name, s.Properties, out)
		}
	}
	t.Logf("%d of %d properties sections byte for byte as Proton wrote them", same, n)
	assert.Positive(t, n)
	assert.Equal(t, n, same, "every section as Proton wrote it")
	t.Logf("%d headers byte for byte as Proton wrote them", headers)
}

// TestAppendProperties: every field, absent fields, the list32 form, a
// bad ID kind, and no allocation with room in the buffer.
func TestAppendProperties(t *testing.T) {
	out, err := AppendProperties(nil, Properties{})
	require.NoError(t, err)
	assert.Equal(t, "005373"+"45", fmt.Sprintf("%x", out), "no fields: list0")

	all := Properties{
		MessageID: ID{Kind: amqpsax.KindUUID, UUID: uuid.MustParse("12345678-9abc-def0-1234-56789abcdef0")},
		UserID:    []byte("user"), To: []byte("queue://orders"), Subject: []byte(""), ReplyTo: []byte("reply"),
		CorrelationID: ID{Kind: amqpsax.KindUlong, Ulong: 1 << 40},
		ContentType:   []byte("text/plain"), ContentEncoding: []byte("gzip"),
		AbsoluteExpiryTime: 1767323045678, HasAbsoluteExpiryTime: true,
		CreationTime: -1, HasCreationTime: true,
		GroupID:       []byte(strings.Repeat("g", 300)), // past 255 bytes: str32 in a list32
		GroupSequence: 0, HasGroupSequence: true,
		ReplyToGroupID: []byte("rg"),
	}
	out, err = AppendProperties([]byte("keep"), all)
	require.NoError(t, err)
	require.Equal(t, "keep", string(out[:4]))
	back, err := ParseProperties(out[4:])
	require.NoError(t, err)
	assert.Equal(t, all, back)
	var c stream.Cursor
	c.Reset(out[4:])
	require.True(t, c.Next() && c.EnterValue())
	assert.Equal(t, amqpsax.CodeList32, c.Code())
	require.True(t, c.Enter() && c.Seek(6))
	assert.Equal(t, amqpsax.KindSymbol, c.Kind(), "content-type is a symbol")

	// Only the fields up to the last present one; absent ones before it null.
	out, err = AppendProperties(nil, Properties{To: []byte("q"), MessageID: ID{Kind: amqpsax.KindNull}})
	require.NoError(t, err)
	assert.Equal(t, "005373"+"c00603"+"40"+"40"+"a10171", fmt.Sprintf("%x", out))

	for _, id := range []ID{{Kind: amqpsax.KindInt}, {Kind: amqpsax.KindSymbol, Bytes: []byte("s")}} {
		out, err = AppendProperties([]byte("keep"), Properties{CorrelationID: id})
		require.ErrorIs(t, err, ErrSectionType)
		assert.Contains(t, err.Error(), "correlation-id")
		assert.Equal(t, "keep", string(out), "nothing appended")
	}

	buf := make([]byte, 0, 1024)
	assert.Zero(t, testing.AllocsPerRun(100, func() { buf, _ = AppendProperties(buf[:0], all) }))
}

// TestAppendOracle: AppendHeader and AppendProperties write the bytes of
// the same sections written through composite.Writer (oracle_test.go)
// for every combination of fields present, of sizes either side of a
// list8's and a str8's limits, and Append stays within its size bound.
func TestAppendOracle(t *testing.T) {
	for _, durable := range []bool{false, true} {
		for _, first := range []bool{false, true} {
			for _, priority := range []uint8{0, 4, 6, 255} {
				for _, ttl := range []uint32{0, 1, 255, 256, 1<<32 - 1} {
					for _, hasTTL := range []bool{false, true} {
						for _, count := range []uint32{0, 1, 255, 256, 1<<32 - 1} {
							h := Header{Durable: durable, Priority: priority, TTL: ttl, HasTTL: hasTTL,
								FirstAcquirer: first, DeliveryCount: count}
							want := appendHeaderWriter([]byte("keep"), h)
							require.Equal(t, want, AppendHeader([]byte("keep"), h), "%+v", h)
							m := Message{Header: &h}
							out, err := m.Append(nil)
							require.NoError(t, err)
							require.Equal(t, want[4:], out)
							require.LessOrEqual(t, len(out), m.size())
						}
					}
				}
			}
		}
	}

	text := make([]byte, 300)
	for i := range text {
		text[i] = 'a' + byte(i%26)
	}
	ids := []ID{{Kind: amqpsax.KindUlong}, {Kind: amqpsax.KindUlong, Ulong: 255}, {Kind: amqpsax.KindUlong, Ulong: 256},
		{Kind: amqpsax.KindUUID, UUID: uuid.MustParse("12345678-9abc-def0-1234-56789abcdef0")},
		{Kind: amqpsax.KindBinary, Bytes: text[:16]}, {Kind: amqpsax.KindString, Bytes: text[:300]},
		{Kind: amqpsax.KindString, Bytes: []byte{}}}
	var edges []Properties // fields of 254 to 256 bytes with the count: a list8's limit
	for n := 230; n <= 256; n++ {
		edges = append(edges, Properties{To: text[:n]}, Properties{ReplyToGroupID: text[:n]},
			Properties{To: text[:n], Subject: []byte{}})
	}
	for _, p := range edges {
		got, err := AppendProperties([]byte("keep"), p)
		require.NoError(t, err)
		require.Equal(t, appendPropertiesWriter([]byte("keep"), p), got, "%+v", p)
	}
	lengths := []int{0, 1, 17, 40, 255, 256}
	for mask := range 1 << 13 {
		for variant := range 3 {
			k := mask*3 + variant // picks the values, differently for each field
			pick := func(i int) []byte {
				if mask&(1<<i) == 0 {
					return nil
				}
				return text[:lengths[(k+i*5)%len(lengths)]*(1+variant%2)/2]
			}
			id := func(i int) ID {
				if mask&(1<<i) == 0 {
					return ID{Kind: []amqpsax.Kind{amqpsax.KindInvalid, amqpsax.KindNull}[k%2]}
				}
				return ids[(k+i)%len(ids)]
			}
			p := Properties{
				MessageID: id(0), UserID: pick(1), To: pick(2), Subject: pick(3), ReplyTo: pick(4),
				CorrelationID: id(5), ContentType: pick(6), ContentEncoding: pick(7),
				AbsoluteExpiryTime: int64(k) << 20, HasAbsoluteExpiryTime: mask&(1<<8) != 0,
				CreationTime: -int64(k), HasCreationTime: mask&(1<<9) != 0,
				GroupID: pick(10), GroupSequence: uint32(k) * 7, HasGroupSequence: mask&(1<<11) != 0,
				ReplyToGroupID: pick(12),
			}
			want := appendPropertiesWriter([]byte("keep"), p)
			got, err := AppendProperties([]byte("keep"), p)
			require.NoError(t, err)
			require.Equal(t, want, got, "%+v", p)
			m := Message{Properties: &p}
			out, err := m.Append(nil)
			require.NoError(t, err)
			require.Equal(t, want[4:], out)
			require.LessOrEqual(t, len(out), m.size())
		}
	}
}

// TestBodyValues: each body section's value, for every body kind, the
// Proton corpus included; errors; early stop; no allocation.
func TestBodyValues(t *testing.T) {
	values := func(body []byte) ([]stream.Value, error) {
		var out []stream.Value
		for v, err := range BodyValues(body) {
			if err != nil {
				return out, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	data := join(mkSection(amqpsax.DescriptorData, false, bin("hello, ")), mkSection(amqpsax.DescriptorData, true, bin("world")))
	vs, err := values(data)
	require.NoError(t, err)
	require.Len(t, vs, 2)
	assert.Equal(t, "hello, world", string(vs[0].Bytes())+string(vs[1].Bytes()))

	seq := join(mkSection(amqpsax.DescriptorAMQPSequence, false, list(strv("a"))), mkSection(amqpsax.DescriptorAMQPSequence, false, list()))
	vs, err = values(seq)
	require.NoError(t, err)
	require.Len(t, vs, 2)
	assert.Equal(t, amqpsax.KindList, vs[0].Kind())
	a, err := vs[0].Any()
	require.NoError(t, err)
	assert.Equal(t, []any{"a"}, a)

	vs, err = values(mkSection(amqpsax.DescriptorAMQPValue, false, null))
	require.NoError(t, err)
	require.Len(t, vs, 1)
	assert.True(t, vs[0].IsNull(), "an amqp-value of null is a value")

	vs, err = values(nil)
	assert.NoError(t, err)
	assert.Empty(t, vs)

	// Not a body section; a body cut short.
	_, err = values(join(data, mkSection(amqpsax.DescriptorFooter, false, strMap())))
	require.ErrorIs(t, err, ErrOtherSection)
	assert.Equal(t, fmt.Sprintf("message/body: footer: section of another type (described) at offset %d", len(data)), err.Error())
	_, err = values(join(data, encode.AppendUint(nil, 7)))
	require.ErrorIs(t, err, ErrNotSection)
	vs, err = values(data[:len(data)-1])
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Len(t, vs, 1, "the complete section before the cut")

	// Stopping early stops.
	n := 0
	for range BodyValues(data) {
		n++
		break
	}
	assert.Equal(t, 1, n)

	// Every message of the Proton corpus: one value per body section, of
	// the body's kind.
	for _, e := range corpus.Load(t, "messages.jsonl") {
		s, err := Scan(e.Data)
		require.NoError(t, err, e.Name)
		vs, err := values(s.Body)
		require.NoError(t, err, e.Name)
		for _, v := range vs {
			switch s.BodyKind {
			case BodyData:
				assert.Equal(t, amqpsax.KindBinary, v.Kind(), e.Name)
			case BodySequence:
				assert.Equal(t, amqpsax.KindList, v.Kind(), e.Name)
			}
		}
		if s.Body != nil {
			assert.NotEmpty(t, vs, e.Name)
		}
	}

	var total int
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		for v, err := range BodyValues(data) {
			if err == nil {
				total += len(v.Bytes())
			}
		}
	}))
}

// checkLookupFast holds lookupFast to the cursor's lookup on sec: when it
// answers, the cursor finds the same value, or the same absence, without
// an error.
func checkLookupFast(t *testing.T, sec []byte, key string) (answered bool) {
	t.Helper()
	v, ok := lookupFast(sec, key)
	if !ok {
		return false
	}
	w, err := lookupCursor(sec, SymbolKey(key))
	if err != nil || v.Kind() != w.Kind() || v.Code() != w.Code() || !bytes.Equal(v.Raw(), w.Raw()) {
		t.Fatalf("section %x, key %q: fast %v %x, cursor %v %x (%v)", sec, key, v.Kind(), v.Raw(), w.Kind(), w.Raw(), err)
	}
	return true
}

// TestLookupFast: Lookup's fast path answers for maps of plain entries
// (the first of two equal keys counts), as the cursor does, and leaves
// to the cursor every section it does not read whole: a 32-bit string
// key, an odd count, sizes that do not add up, a section that is not a
// map. Cut at every byte, each answers as the cursor or not at all.
func TestLookupFast(t *testing.T) {
	ap := func(entries func([]byte) []byte, n int) []byte {
		b := encode.AppendCodeSmallUlong(encode.AppendDescribed(nil), uint8(amqpsax.DescriptorApplicationProperties))
		s := len(b)
		b = encode.BeginMap(b)
		b = entries(b)
		return encode.EndMap(b, s, n)
	}
	plain := ap(func(b []byte) []byte {
		b = encode.AppendString(encode.AppendString(b, "k"), "v")
		b = encode.AppendSymbol(encode.AppendInt(b, 7), "x") // an int key: not a match
		b = encode.AppendInt(encode.AppendSymbol(b, "to"), -3)
		b = encode.AppendBool(encode.AppendString(b, "to"), true) // the second "to": the first counts
		return encode.AppendNull(encode.AppendString(b, "n"))
	}, 5)
	for _, key := range []string{"k", "to", "n", "x", "absent", ""} {
		require.True(t, checkLookupFast(t, plain, key), key)
	}
	require.Equal(t, byte(amqpsax.CodeMap8), plain[3])
	require.Equal(t, byte(10), plain[5]) // its count
	v, err := Lookup(plain, "to")
	require.NoError(t, err)
	assert.Equal(t, int64(-3), v.Int())

	long := ap(func(b []byte) []byte {
		b = append(b, 0xb1, 0, 0, 0, 2, 'k', '2') // str32 "k2"
		return encode.AppendString(b, "v")
	}, 1)
	sym := mkSection(amqpsax.DescriptorApplicationProperties, true, strMap("k", "v"))
	for _, tc := range []struct {
		name, key string
		sec       []byte
		fast      bool
	}{
		{"symbolic descriptor", "k", sym, true},
		{"str32 key", "k", long, false},
		{"odd count", "k", func() []byte { b := slices.Clone(plain); b[5] = 9; return b }(), false},
		{"size too small", "n", func() []byte { b := slices.Clone(plain); b[4]--; return b }(), false},
		{"size too small, found before", "k", func() []byte { b := slices.Clone(plain); b[4]--; return b }(), true},
		{"a list", "k", mkSection(amqpsax.DescriptorApplicationProperties, false, list()), false},
		{"not described", "k", encode.AppendString(nil, "k"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.fast, checkLookupFast(t, tc.sec, tc.key))
			for i := range tc.sec {
				checkLookupFast(t, tc.sec[:i], tc.key)
			}
		})
	}
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = Lookup(plain, "n") }))
}
