package interop

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFrameAppendProton writes every performative, SASL frame, source,
// target, coordinator, error and delivery state with frame's Append
// functions, one field at a time set to its zero value, to its default
// and to other values on a struct of the mandatory fields, and reads the
// bytes back with Qpid Proton's decoder (proton/decode.py, one run for
// all cases): each must decode to exactly the values set, a field left
// out absent (null before the last field written, nothing after it), a
// zero written as a zero.
func TestFrameAppendProton(t *testing.T) {
	if err := exec.Command(python, "-c", "import proton").Run(); err != nil {
		skip(t, "%s cannot import proton (install Debian's python3-qpid-proton): %v", python, err)
	}
	cases := frameCases()
	var in bytes.Buffer
	names := map[string]bool{}
	for _, c := range cases {
		require.False(t, names[c.name], "two cases named %s", c.name)
		names[c.name] = true
		fmt.Fprintf(&in, "%s %x\n", c.name, c.bytes)
	}
	cmd := exec.Command(python, "proton/decode.py")
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "proton/decode.py: %s", stderr.String())

	got := map[string]json.RawMessage{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Name  string          `json:"name"`
			Value json.RawMessage `json:"value"`
			Error string          `json:"error"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		if r.Error != "" {
			got[r.Name] = json.RawMessage(strconv.Quote("error: " + r.Error))
			continue
		}
		got[r.Name] = r.Value
	}
	require.Len(t, got, len(cases), "Proton's answers")
	for _, c := range cases {
		want, err := json.Marshal(c.want)
		require.NoError(t, err)
		var w, g any
		require.NoError(t, json.Unmarshal(want, &w))
		require.NoError(t, json.Unmarshal(got[c.name], &g), c.name)
		assert.Equal(t, w, g, "%s: %x", c.name, c.bytes)
	}
	t.Logf("%d cases, each read back by Proton as set", len(cases))
}

// protonCase is one encoding and the tree Proton must read from it.
type protonCase struct {
	name  string
	bytes []byte
	want  any
}

// The trees of proton/decode.py.

// absent marks a field left out of a composite's list.
var absent any = &struct{ absent bool }{}

func num(typ string, v uint64) any { return map[string]any{typ: strconv.FormatUint(v, 10)} }
func ubyte(v uint64) any           { return num("ubyte", v) }
func ushort(v uint64) any          { return num("ushort", v) }
func uint_(v uint64) any           { return num("uint", v) }
func ulong(v uint64) any           { return num("ulong", v) }
func boolean(v bool) any           { return map[string]any{"bool": v} }
func str(s string) any             { return map[string]any{"string": s} }
func sym(s string) any             { return map[string]any{"symbol": s} }
func bin(b string) any             { return map[string]any{"binary": hex.EncodeToString([]byte(b))} }

func list(items ...any) any {
	if items == nil {
		items = []any{}
	}
	return map[string]any{"list": items}
}

func amap(kv ...any) any {
	if kv == nil {
		kv = []any{}
	}
	return map[string]any{"map": kv}
}

func symArray(syms ...string) any {
	items := []any{}
	for _, s := range syms {
		items = append(items, sym(s))
	}
	return map[string]any{"array": "symbol", "items": items}
}

// composite is a described list: descriptor d and the fields in order,
// those left out null before the last one present and not written after
// it.
func composite(d amqpsax.Descriptor, fields ...any) any {
	last := -1
	for i, f := range fields {
		if f != absent {
			last = i
		}
	}
	items := []any{}
	for _, f := range fields[:last+1] {
		if f == absent {
			f = nil
		}
		items = append(items, f)
	}
	return map[string]any{"described": []any{ulong(uint64(d)), list(items...)}}
}

// variant sets one field of a T and says what it must read as.
type variant[T any] struct {
	field int
	label string
	set   func(*T)
	want  any // absent: not written
}

// table is the cases of one composite: base holds its mandatory fields,
// each variant changes one field of it.
type table[T any] struct {
	name     string
	desc     amqpsax.Descriptor
	fields   int
	base     T
	baseWant map[int]any // what base's fields read as
	write    func(b []byte, v T) []byte
	wrap     func(any) any // the tree around the composite (nil: none)
	variants []variant[T]
}

func (tb table[T]) cases() []protonCase {
	build := func(label string, v T, change map[int]any) protonCase {
		fields := make([]any, tb.fields)
		for i := range fields {
			fields[i] = absent
		}
		for i, w := range tb.baseWant {
			fields[i] = w
		}
		for i, w := range change {
			fields[i] = w
		}
		want := composite(tb.desc, fields...)
		if tb.wrap != nil {
			want = tb.wrap(want)
		}
		return protonCase{name: tb.name + "/" + label, bytes: tb.write(nil, v), want: want}
	}
	out := []protonCase{build("base", tb.base, nil)}
	for _, vr := range tb.variants {
		v := tb.base
		vr.set(&v)
		name := strings.ReplaceAll(frame.FieldName(tb.desc, frame.FieldIndex(vr.field)), " ", "-")
		out = append(out, build(name+"="+vr.label, v, map[int]any{vr.field: vr.want}))
	}
	return out
}

// Variants of the kinds of field, for any composite T; get returns the
// field of a T.

func optU32[T any](i int, get func(*T) *frame.Opt[uint32], def ...uint32) []variant[T] {
	vs := []variant[T]{
		{i, "absent", func(v *T) { *get(v) = frame.Opt[uint32]{} }, absent},
		{i, "zero", func(v *T) { *get(v) = frame.Some[uint32](0) }, uint_(0)},
		{i, "7", func(v *T) { *get(v) = frame.Some[uint32](7) }, uint_(7)},
		{i, "max", func(v *T) { *get(v) = frame.Some[uint32](1<<32 - 1) }, uint_(1<<32 - 1)},
	}
	for _, d := range def {
		vs = append(vs, variant[T]{i, "default", func(v *T) { *get(v) = frame.Some(d) }, uint_(uint64(d))})
	}
	return vs
}

func optU16[T any](i int, get func(*T) *frame.Opt[uint16], def ...uint16) []variant[T] {
	vs := []variant[T]{
		{i, "absent", func(v *T) { *get(v) = frame.Opt[uint16]{} }, absent},
		{i, "zero", func(v *T) { *get(v) = frame.Some[uint16](0) }, ushort(0)},
		{i, "7", func(v *T) { *get(v) = frame.Some[uint16](7) }, ushort(7)},
	}
	for _, d := range def {
		vs = append(vs, variant[T]{i, "default", func(v *T) { *get(v) = frame.Some(d) }, ushort(uint64(d))})
	}
	return vs
}

func optU64[T any](i int, get func(*T) *frame.Opt[uint64]) []variant[T] {
	return []variant[T]{
		{i, "absent", func(v *T) { *get(v) = frame.Opt[uint64]{} }, absent},
		{i, "zero", func(v *T) { *get(v) = frame.Some[uint64](0) }, ulong(0)},
		{i, "big", func(v *T) { *get(v) = frame.Some[uint64](1 << 40) }, ulong(1 << 40)},
	}
}

// mandU32: a mandatory uint, written whatever its value.
func mandU32[T any](i int, get func(*T) *uint32) []variant[T] {
	return []variant[T]{
		{i, "zero", func(v *T) { *get(v) = 0 }, uint_(0)},
		{i, "300", func(v *T) { *get(v) = 300 }, uint_(300)},
	}
}

// plainU32: a uint whose zero is the spec's default: left out at zero.
func plainU32[T any](i int, get func(*T) *uint32) []variant[T] {
	return []variant[T]{
		{i, "zero", func(v *T) { *get(v) = 0 }, absent},
		{i, "30", func(v *T) { *get(v) = 30 }, uint_(30)},
	}
}

// flag: a boolean whose default is false.
func flag[T any](i int, get func(*T) *bool) []variant[T] {
	return []variant[T]{
		{i, "zero", func(v *T) { *get(v) = false }, absent},
		{i, "true", func(v *T) { *get(v) = true }, boolean(true)},
	}
}

// bytesField: a string, symbol or binary (typ), written when not nil.
func bytesField[T any](i int, typ string, get func(*T) *[]byte) []variant[T] {
	val := func(s string) any { return map[string]any{typ: s} }
	if typ == "binary" {
		val = bin
	}
	return []variant[T]{
		{i, "nil", func(v *T) { *get(v) = nil }, absent},
		{i, "empty", func(v *T) { *get(v) = []byte{} }, val("")},
		{i, "value", func(v *T) { *get(v) = []byte("v-1") }, val("v-1")},
	}
}

// symbols: a multiple-symbol field, in each of its forms.
func symbols[T any](i int, get func(*T) *frame.Symbols) []variant[T] {
	one := frame.Symbols(encode.AppendSymbol(nil, "one"))
	arr := frame.Symbols(frame.AppendSymbols(nil, "a", "b"))
	empty := frame.Symbols(frame.AppendSymbols(nil))
	lst := encode.BeginList(nil)
	lst = encode.AppendSymbol(encode.AppendSymbol(lst, "x"), "y")
	lst = encode.EndList(lst, 0, 2)
	return []variant[T]{
		{i, "nil", func(v *T) { *get(v) = nil }, absent},
		{i, "symbol", func(v *T) { *get(v) = one }, sym("one")},
		{i, "array", func(v *T) { *get(v) = arr }, symArray("a", "b")},
		{i, "empty-array", func(v *T) { *get(v) = empty }, symArray()},
		{i, "list", func(v *T) { *get(v) = frame.Symbols(lst) }, list(sym("x"), sym("y"))},
	}
}

// mapField: a map, written as given when not nil.
func mapField[T any](i int, get func(*T) *frame.Map) []variant[T] {
	m := encode.BeginMap(nil)
	m = encode.AppendString(encode.AppendSymbol(m, "k"), "v")
	m = encode.EndMap(m, 0, 1)
	empty := encode.EndMap(encode.BeginMap(nil), 0, 0)
	return []variant[T]{
		{i, "nil", func(v *T) { *get(v) = nil }, absent},
		{i, "empty", func(v *T) { *get(v) = frame.Map(empty) }, amap()},
		{i, "value", func(v *T) { *get(v) = frame.Map(m) }, amap(sym("k"), str("v"))},
	}
}

// errorField: an error, written when it has a condition.
func errorField[T any](i int, get func(*T) *frame.AMQPError) []variant[T] {
	info := encode.BeginMap(nil)
	info = encode.AppendString(encode.AppendSymbol(info, "field"), "x")
	info = encode.EndMap(info, 0, 1)
	return []variant[T]{
		{i, "zero", func(v *T) { *get(v) = frame.AMQPError{} }, absent},
		{i, "condition", func(v *T) { *get(v) = frame.AMQPError{Condition: []byte("amqp:not-found")} },
			composite(amqpsax.DescriptorError, sym("amqp:not-found"))},
		{i, "full", func(v *T) {
			*get(v) = frame.AMQPError{Condition: []byte("amqp:internal-error"), Description: []byte("oops"), Info: frame.Map(info)}
		}, composite(amqpsax.DescriptorError, sym("amqp:internal-error"), str("oops"), amap(sym("field"), str("x")))},
	}
}

// stateField: a delivery state, written when it has a type.
func stateField[T any](i int, get func(*T) *frame.DeliveryState) []variant[T] {
	return []variant[T]{
		{i, "none", func(v *T) { *get(v) = frame.DeliveryState{} }, absent},
		{i, "accepted", func(v *T) { *get(v) = frame.DeliveryState{Type: frame.StateAccepted} },
			composite(amqpsax.DescriptorAccepted)},
		{i, "released", func(v *T) { *get(v) = frame.DeliveryState{Type: frame.StateReleased} },
			composite(amqpsax.DescriptorReleased)},
	}
}

func cat[T any](vs ...[]variant[T]) []variant[T] {
	var out []variant[T]
	for _, v := range vs {
		out = append(out, v...)
	}
	return out
}

// frameCases lists every case.
func frameCases() []protonCase {
	var out []protonCase
	add := func(cs []protonCase) { out = append(out, cs...) }

	add(table[frame.Open]{name: "open", desc: amqpsax.DescriptorOpen, fields: 10,
		base: frame.Open{ContainerID: []byte("c-1")}, baseWant: map[int]any{0: str("c-1")},
		write: frame.AppendOpen,
		variants: cat(
			[]variant[frame.Open]{{0, "empty", func(o *frame.Open) { o.ContainerID = []byte{} }, str("")}},
			bytesField(1, "string", func(o *frame.Open) *[]byte { return &o.Hostname }),
			optU32(2, func(o *frame.Open) *frame.Opt[uint32] { return &o.MaxFrameSize }, 1<<32-1),
			optU16(3, func(o *frame.Open) *frame.Opt[uint16] { return &o.ChannelMax }, 1<<16-1),
			optU32(4, func(o *frame.Open) *frame.Opt[uint32] { return &o.IdleTimeOut }),
			symbols(5, func(o *frame.Open) *frame.Symbols { return &o.OutgoingLocales }),
			symbols(6, func(o *frame.Open) *frame.Symbols { return &o.IncomingLocales }),
			symbols(7, func(o *frame.Open) *frame.Symbols { return &o.OfferedCapabilities }),
			symbols(8, func(o *frame.Open) *frame.Symbols { return &o.DesiredCapabilities }),
			mapField(9, func(o *frame.Open) *frame.Map { return &o.Properties }),
		)}.cases())

	add(table[frame.Begin]{name: "begin", desc: amqpsax.DescriptorBegin, fields: 8,
		base:     frame.Begin{NextOutgoingID: 1, IncomingWindow: 2, OutgoingWindow: 3},
		baseWant: map[int]any{1: uint_(1), 2: uint_(2), 3: uint_(3)},
		write:    frame.AppendBegin,
		variants: cat(
			optU16(0, func(b *frame.Begin) *frame.Opt[uint16] { return &b.RemoteChannel }),
			mandU32(1, func(b *frame.Begin) *uint32 { return &b.NextOutgoingID }),
			mandU32(2, func(b *frame.Begin) *uint32 { return &b.IncomingWindow }),
			mandU32(3, func(b *frame.Begin) *uint32 { return &b.OutgoingWindow }),
			optU32(4, func(b *frame.Begin) *frame.Opt[uint32] { return &b.HandleMax }, 1<<32-1),
			symbols(5, func(b *frame.Begin) *frame.Symbols { return &b.OfferedCapabilities }),
			symbols(6, func(b *frame.Begin) *frame.Symbols { return &b.DesiredCapabilities }),
			mapField(7, func(b *frame.Begin) *frame.Map { return &b.Properties }),
		)}.cases())

	add(table[frame.Attach]{name: "attach", desc: amqpsax.DescriptorAttach, fields: 14,
		base:     frame.Attach{Name: []byte("link"), Handle: 3, Role: frame.RoleReceiver},
		baseWant: map[int]any{0: str("link"), 1: uint_(3), 2: boolean(true)},
		write:    frame.AppendAttach,
		variants: cat(
			mandU32(1, func(a *frame.Attach) *uint32 { return &a.Handle }),
			[]variant[frame.Attach]{
				{2, "sender", func(a *frame.Attach) { a.Role = frame.RoleSender }, boolean(false)},
				{3, "absent", func(a *frame.Attach) { a.SndSettleMode = frame.Opt[frame.SenderSettleMode]{} }, absent},
				{3, "unsettled", func(a *frame.Attach) { a.SndSettleMode = frame.Some(frame.SndUnsettled) }, ubyte(0)},
				{3, "settled", func(a *frame.Attach) { a.SndSettleMode = frame.Some(frame.SndSettled) }, ubyte(1)},
				{3, "default", func(a *frame.Attach) { a.SndSettleMode = frame.Some(frame.SndMixed) }, ubyte(2)},
				{4, "first", func(a *frame.Attach) { a.RcvSettleMode = frame.RcvFirst }, absent},
				{4, "second", func(a *frame.Attach) { a.RcvSettleMode = frame.RcvSecond }, ubyte(1)},
				{5, "absent", func(a *frame.Attach) { a.Source = frame.Opt[frame.Source]{} }, absent},
				{5, "empty", func(a *frame.Attach) { a.Source = frame.Some(frame.Source{}) }, composite(amqpsax.DescriptorSource)},
				{6, "absent", func(a *frame.Attach) { a.Target = frame.Opt[frame.Target]{} }, absent},
				{6, "empty", func(a *frame.Attach) { a.Target = frame.Some(frame.Target{}) }, composite(amqpsax.DescriptorTarget)},
			},
			mapField(7, func(a *frame.Attach) *frame.Map { return &a.Unsettled }),
			flag(8, func(a *frame.Attach) *bool { return &a.IncompleteUnsettled }),
			optU32(9, func(a *frame.Attach) *frame.Opt[uint32] { return &a.InitialDeliveryCount }),
			optU64(10, func(a *frame.Attach) *frame.Opt[uint64] { return &a.MaxMessageSize }),
			symbols(11, func(a *frame.Attach) *frame.Symbols { return &a.OfferedCapabilities }),
			symbols(12, func(a *frame.Attach) *frame.Symbols { return &a.DesiredCapabilities }),
			mapField(13, func(a *frame.Attach) *frame.Map { return &a.Properties }),
		)}.cases())

	add(table[frame.Flow]{name: "flow", desc: amqpsax.DescriptorFlow, fields: 11,
		base:     frame.Flow{IncomingWindow: 10, NextOutgoingID: 11, OutgoingWindow: 12},
		baseWant: map[int]any{1: uint_(10), 2: uint_(11), 3: uint_(12)},
		write:    frame.AppendFlow,
		variants: cat(
			optU32(0, func(f *frame.Flow) *frame.Opt[uint32] { return &f.NextIncomingID }),
			mandU32(1, func(f *frame.Flow) *uint32 { return &f.IncomingWindow }),
			mandU32(2, func(f *frame.Flow) *uint32 { return &f.NextOutgoingID }),
			mandU32(3, func(f *frame.Flow) *uint32 { return &f.OutgoingWindow }),
			optU32(4, func(f *frame.Flow) *frame.Opt[uint32] { return &f.Handle }),
			optU32(5, func(f *frame.Flow) *frame.Opt[uint32] { return &f.DeliveryCount }),
			optU32(6, func(f *frame.Flow) *frame.Opt[uint32] { return &f.LinkCredit }),
			optU32(7, func(f *frame.Flow) *frame.Opt[uint32] { return &f.Available }),
			flag(8, func(f *frame.Flow) *bool { return &f.Drain }),
			flag(9, func(f *frame.Flow) *bool { return &f.Echo }),
			mapField(10, func(f *frame.Flow) *frame.Map { return &f.Properties }),
		)}.cases())

	add(table[frame.Transfer]{name: "transfer", desc: amqpsax.DescriptorTransfer, fields: 11,
		base:     frame.Transfer{Handle: 4},
		baseWant: map[int]any{0: uint_(4)},
		write:    frame.AppendTransfer,
		variants: cat(
			mandU32(0, func(t *frame.Transfer) *uint32 { return &t.Handle }),
			optU32(1, func(t *frame.Transfer) *frame.Opt[uint32] { return &t.DeliveryID }),
			bytesField(2, "binary", func(t *frame.Transfer) *[]byte { return &t.DeliveryTag }),
			optU32(3, func(t *frame.Transfer) *frame.Opt[uint32] { return &t.MessageFormat }),
			flag(4, func(t *frame.Transfer) *bool { return &t.Settled }),
			flag(5, func(t *frame.Transfer) *bool { return &t.More }),
			[]variant[frame.Transfer]{
				{6, "absent", func(t *frame.Transfer) { t.RcvSettleMode = frame.Opt[frame.ReceiverSettleMode]{} }, absent},
				{6, "first", func(t *frame.Transfer) { t.RcvSettleMode = frame.Some(frame.RcvFirst) }, ubyte(0)},
				{6, "second", func(t *frame.Transfer) { t.RcvSettleMode = frame.Some(frame.RcvSecond) }, ubyte(1)},
			},
			stateField(7, func(t *frame.Transfer) *frame.DeliveryState { return &t.State }),
			flag(8, func(t *frame.Transfer) *bool { return &t.Resume }),
			flag(9, func(t *frame.Transfer) *bool { return &t.Aborted }),
			flag(10, func(t *frame.Transfer) *bool { return &t.Batchable }),
		)}.cases())

	add(table[frame.Disposition]{name: "disposition", desc: amqpsax.DescriptorDisposition, fields: 6,
		base:     frame.Disposition{Role: frame.RoleReceiver, First: 5},
		baseWant: map[int]any{0: boolean(true), 1: uint_(5)},
		write:    frame.AppendDisposition,
		variants: cat(
			[]variant[frame.Disposition]{{0, "sender", func(d *frame.Disposition) { d.Role = frame.RoleSender }, boolean(false)}},
			mandU32(1, func(d *frame.Disposition) *uint32 { return &d.First }),
			optU32(2, func(d *frame.Disposition) *frame.Opt[uint32] { return &d.Last }),
			flag(3, func(d *frame.Disposition) *bool { return &d.Settled }),
			stateField(4, func(d *frame.Disposition) *frame.DeliveryState { return &d.State }),
			flag(5, func(d *frame.Disposition) *bool { return &d.Batchable }),
		)}.cases())

	add(table[frame.Detach]{name: "detach", desc: amqpsax.DescriptorDetach, fields: 3,
		base: frame.Detach{Handle: 6}, baseWant: map[int]any{0: uint_(6)}, write: frame.AppendDetach,
		variants: cat(
			mandU32(0, func(d *frame.Detach) *uint32 { return &d.Handle }),
			flag(1, func(d *frame.Detach) *bool { return &d.Closed }),
			errorField(2, func(d *frame.Detach) *frame.AMQPError { return &d.Error }),
		)}.cases())
	add(table[frame.End]{name: "end", desc: amqpsax.DescriptorEnd, fields: 1, write: frame.AppendEnd,
		variants: errorField(0, func(e *frame.End) *frame.AMQPError { return &e.Error })}.cases())
	add(table[frame.Close]{name: "close", desc: amqpsax.DescriptorClose, fields: 1, write: frame.AppendClose,
		variants: errorField(0, func(c *frame.Close) *frame.AMQPError { return &c.Error })}.cases())

	// SASL frames.
	add(table[frame.SASLMechanisms]{name: "sasl-mechanisms", desc: amqpsax.DescriptorSASLMechanisms, fields: 1,
		base:     frame.SASLMechanisms{Mechanisms: frame.Symbols(frame.AppendSymbols(nil, "PLAIN"))},
		baseWant: map[int]any{0: symArray("PLAIN")},
		write:    frame.AppendSASLMechanisms,
		variants: symbols(0, func(m *frame.SASLMechanisms) *frame.Symbols { return &m.Mechanisms })[1:], // mandatory: never nil
	}.cases())
	add(table[frame.SASLInit]{name: "sasl-init", desc: amqpsax.DescriptorSASLInit, fields: 3,
		base: frame.SASLInit{Mechanism: []byte("PLAIN")}, baseWant: map[int]any{0: sym("PLAIN")}, write: frame.AppendSASLInit,
		variants: cat(
			[]variant[frame.SASLInit]{{0, "empty", func(s *frame.SASLInit) { s.Mechanism = []byte{} }, sym("")}},
			bytesField(1, "binary", func(s *frame.SASLInit) *[]byte { return &s.InitialResponse }),
			bytesField(2, "string", func(s *frame.SASLInit) *[]byte { return &s.Hostname }),
		)}.cases())
	add(table[frame.SASLChallenge]{name: "sasl-challenge", desc: amqpsax.DescriptorSASLChallenge, fields: 1,
		base: frame.SASLChallenge{Challenge: []byte("c")}, baseWant: map[int]any{0: bin("c")}, write: frame.AppendSASLChallenge,
		variants: []variant[frame.SASLChallenge]{{0, "empty", func(s *frame.SASLChallenge) { s.Challenge = []byte{} }, bin("")}},
	}.cases())
	add(table[frame.SASLResponse]{name: "sasl-response", desc: amqpsax.DescriptorSASLResponse, fields: 1,
		base: frame.SASLResponse{Response: []byte("r")}, baseWant: map[int]any{0: bin("r")}, write: frame.AppendSASLResponse,
		variants: []variant[frame.SASLResponse]{{0, "empty", func(s *frame.SASLResponse) { s.Response = []byte{} }, bin("")}},
	}.cases())
	add(table[frame.SASLOutcome]{name: "sasl-outcome", desc: amqpsax.DescriptorSASLOutcome, fields: 2,
		base: frame.SASLOutcome{Code: frame.SASLAuth}, baseWant: map[int]any{0: ubyte(1)}, write: frame.AppendSASLOutcome,
		variants: cat(
			[]variant[frame.SASLOutcome]{{0, "ok", func(s *frame.SASLOutcome) { s.Code = frame.SASLOk }, ubyte(0)}},
			bytesField(1, "binary", func(s *frame.SASLOutcome) *[]byte { return &s.AdditionalData }),
		)}.cases())

	// Source, target and coordinator, inside an attach.
	inAttach := func(field int) func(any) any {
		return func(c any) any {
			fields := []any{str("l"), uint_(0), boolean(false), absent, absent, absent, absent}
			fields[field] = c
			return composite(amqpsax.DescriptorAttach, fields...)
		}
	}
	attachSource := func(b []byte, s frame.Source) []byte {
		return frame.AppendAttach(b, frame.Attach{Name: []byte("l"), Source: frame.Some(s)})
	}
	attachTarget := func(b []byte, t frame.Target) []byte {
		return frame.AppendAttach(b, frame.Attach{Name: []byte("l"), Target: frame.Some(t)})
	}
	add(table[frame.Source]{name: "source", desc: amqpsax.DescriptorSource, fields: 11,
		write: attachSource, wrap: inAttach(5),
		variants: cat(
			bytesField(0, "string", func(s *frame.Source) *[]byte { return &s.Address }),
			[]variant[frame.Source]{
				{1, "none", func(s *frame.Source) { s.Durable = frame.DurabilityNone }, absent},
				{1, "unsettled-state", func(s *frame.Source) { s.Durable = frame.DurabilityUnsettledState }, uint_(2)},
				{2, "session-end", func(s *frame.Source) { s.ExpiryPolicy = frame.ExpirySessionEnd }, absent},
				{2, "never", func(s *frame.Source) { s.ExpiryPolicy = frame.ExpiryNever }, sym("never")},
				{2, "link-detach", func(s *frame.Source) { s.ExpiryPolicy = frame.ExpiryLinkDetach }, sym("link-detach")},
			},
			plainU32(3, func(s *frame.Source) *uint32 { return &s.Timeout }),
			flag(4, func(s *frame.Source) *bool { return &s.Dynamic }),
			mapField(5, func(s *frame.Source) *frame.Map { return &s.DynamicNodeProperties }),
			bytesField(6, "symbol", func(s *frame.Source) *[]byte { return &s.DistributionMode }),
			mapField(7, func(s *frame.Source) *frame.Map { return &s.Filter }),
			stateField(8, func(s *frame.Source) *frame.DeliveryState { return &s.DefaultOutcome }),
			symbols(9, func(s *frame.Source) *frame.Symbols { return &s.Outcomes }),
			symbols(10, func(s *frame.Source) *frame.Symbols { return &s.Capabilities }),
		)}.cases())
	add(table[frame.Target]{name: "target", desc: amqpsax.DescriptorTarget, fields: 7,
		write: attachTarget, wrap: inAttach(6),
		variants: cat(
			bytesField(0, "string", func(t *frame.Target) *[]byte { return &t.Address }),
			[]variant[frame.Target]{
				{1, "none", func(t *frame.Target) { t.Durable = frame.DurabilityNone }, absent},
				{1, "configuration", func(t *frame.Target) { t.Durable = frame.DurabilityConfiguration }, uint_(1)},
				{2, "session-end", func(t *frame.Target) { t.ExpiryPolicy = frame.ExpirySessionEnd }, absent},
				{2, "connection-close", func(t *frame.Target) { t.ExpiryPolicy = frame.ExpiryConnectionClose }, sym("connection-close")},
			},
			plainU32(3, func(t *frame.Target) *uint32 { return &t.Timeout }),
			flag(4, func(t *frame.Target) *bool { return &t.Dynamic }),
			mapField(5, func(t *frame.Target) *frame.Map { return &t.DynamicNodeProperties }),
			symbols(6, func(t *frame.Target) *frame.Symbols { return &t.Capabilities }),
		)}.cases())
	add(table[frame.Target]{name: "coordinator", desc: amqpsax.DescriptorCoordinator, fields: 1,
		base: frame.Target{Coordinator: true}, write: attachTarget, wrap: inAttach(6),
		variants: symbols(0, func(t *frame.Target) *frame.Symbols { return &t.Capabilities }),
	}.cases())

	// The error, inside a close; the delivery states, inside a
	// disposition.
	add(table[frame.AMQPError]{name: "error", desc: amqpsax.DescriptorError, fields: 3,
		base: frame.AMQPError{Condition: []byte("amqp:not-allowed")}, baseWant: map[int]any{0: sym("amqp:not-allowed")},
		write: func(b []byte, e frame.AMQPError) []byte { return frame.AppendClose(b, frame.Close{Error: e}) },
		wrap:  func(c any) any { return composite(amqpsax.DescriptorClose, c) },
		variants: cat(
			bytesField(1, "string", func(e *frame.AMQPError) *[]byte { return &e.Description }),
			mapField(2, func(e *frame.AMQPError) *frame.Map { return &e.Info }),
		)}.cases())
	inDisposition := func(c any) any {
		return composite(amqpsax.DescriptorDisposition, boolean(true), uint_(0), absent, absent, c)
	}
	disposition := func(b []byte, s frame.DeliveryState) []byte {
		return frame.AppendDisposition(b, frame.Disposition{Role: frame.RoleReceiver, State: s})
	}
	state := func(name string, d amqpsax.Descriptor, fields int, typ frame.StateType, baseWant map[int]any,
		vs ...[]variant[frame.DeliveryState]) {
		add(table[frame.DeliveryState]{name: name, desc: d, fields: fields, base: frame.DeliveryState{Type: typ},
			baseWant: baseWant, write: disposition, wrap: inDisposition, variants: cat(vs...)}.cases())
	}
	state("received", amqpsax.DescriptorReceived, 2, frame.StateReceived, map[int]any{0: uint_(0), 1: ulong(0)},
		[]variant[frame.DeliveryState]{
			{0, "3", func(s *frame.DeliveryState) { s.SectionNumber = 3 }, uint_(3)},
			{1, "1000", func(s *frame.DeliveryState) { s.SectionOffset = 1000 }, ulong(1000)},
		})
	state("accepted", amqpsax.DescriptorAccepted, 0, frame.StateAccepted, nil)
	state("rejected", amqpsax.DescriptorRejected, 1, frame.StateRejected, nil,
		errorField(0, func(s *frame.DeliveryState) *frame.AMQPError { return &s.Error }))
	state("released", amqpsax.DescriptorReleased, 0, frame.StateReleased, nil)
	state("modified", amqpsax.DescriptorModified, 3, frame.StateModified, nil,
		flag(0, func(s *frame.DeliveryState) *bool { return &s.DeliveryFailed }),
		flag(1, func(s *frame.DeliveryState) *bool { return &s.UndeliverableHere }),
		mapField(2, func(s *frame.DeliveryState) *frame.Map { return &s.MessageAnnotations }))
	return out
}
