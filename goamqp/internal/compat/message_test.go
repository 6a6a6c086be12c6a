package compat

import (
	"bytes"
	"encoding/hex"
	"math"
	"strings"
	"testing"
	"time"

	goamqp "github.com/Azure/go-amqp"
	ours "github.com/amqpsax/amqpsax/goamqp"
)

func ptr[T any](v T) *T { return &v }

var (
	when   = time.UnixMilli(1_700_000_000_123)
	uuid1  = goamqp.UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	uuid2  = goamqp.UUID{0xff, 0xfe, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0}
	long   = strings.Repeat("x", 300)
	blob   = bytes.Repeat([]byte{0xab}, 70000)
	before = time.UnixMilli(-86_400_001)
)

// values is every Go value go-amqp's Message can hold in a value
// position (Value, an annotation, an application property, a list
// element), each width of each type.
func values() map[string]any {
	return map[string]any{
		"nil": nil, "true": true, "false": false, "*bool": ptr(true),
		"uint8": uint8(7), "uint16": uint16(0x1234), "uint32-0": uint32(0), "uint32-small": uint32(200), "uint32": uint32(70000),
		"uint64-0": uint64(0), "uint64-small": uint64(255), "uint64": uint64(math.MaxUint64), "uint": uint(1 << 40),
		"int8": int8(-5), "int16": int16(-30000), "int32-small": int32(-128), "int32": int32(math.MinInt32), "int32-127": int32(127), "int32-128": int32(128),
		"int64-small": int64(127), "int64": int64(math.MinInt64), "int": -1 << 40,
		"float32": float32(1.5), "float64": math.Inf(-1), "nan": math.NaN(),
		"string": "héllo", "string-empty": "", "string-long": long, "*string": ptr("p"),
		"binary": []byte{0, 1, 2}, "binary-empty": []byte{}, "binary-long": blob,
		"symbol": goamqp.Symbol("sym"), "symbol-long": goamqp.Symbol(long),
		"timestamp": when, "timestamp-before-1970": before, "*time": ptr(when),
		"uuid": uuid1,
		"list": []any{uint8(1), "two", goamqp.Symbol("three"), nil, []any{int64(4)}}, "list-empty": []any{},
		"map-any":     map[any]any{int64(-1): "minus one"},
		"map-string":  map[string]any{"k": []any{true}},
		"map-symbol":  map[goamqp.Symbol]any{"s": uint32(1)},
		"map-of-maps": map[string]any{"outer": map[string]any{"inner": map[any]any{uint64(9): []string{"a"}}}},
		"map-empty":   map[any]any{},
		"annotations": goamqp.Annotations{"x-opt": int32(1)},
		// go-amqp exports no described type: these come from its decoder.
		"described":       decoded("00800000468c00000004a1216170616368652e6f72673a73656c6563746f722d66696c7465723a737472696e67"),
		"described-sym":   decoded("00a311636f6d2e6578616d706c653a7468696e67c0020150" + "01"),
		"lifetime-policy": decoded("00532b45"),
		"error":           &goamqp.Error{Condition: goamqp.ErrCondNotFound, Description: "gone", Info: map[string]any{"k": "v"}},
		"error-bare":      &goamqp.Error{Condition: goamqp.ErrCondInternalError},
		"accepted":        &goamqp.StateAccepted{},
		"rejected":        &goamqp.StateRejected{Error: &goamqp.Error{Condition: "amqp:x"}},
		"released":        &goamqp.StateReleased{},
		"modified":        &goamqp.StateModified{DeliveryFailed: true, MessageAnnotations: goamqp.Annotations{"a": "b"}},
		"received":        &goamqp.StateReceived{SectionNumber: 3, SectionOffset: 1 << 33},
		"null":            goamqp.Null{},
		// arrays
		"[]int8": []int8{-1, 2}, "[]uint16": []uint16{1, 0xffff}, "[]int16": []int16{-2, 3},
		"[]uint32-small": []uint32{0, 255}, "[]uint32": []uint32{0, 256}, "[]uint32-empty": []uint32{},
		"[]int32-small": []int32{-128, 127}, "[]int32": []int32{1, 128},
		"[]uint64-small": []uint64{1, 2}, "[]uint64": []uint64{1, math.MaxUint64},
		"[]int64-small": []int64{-7}, "[]int64": []int64{math.MaxInt64, -1},
		"[]float32": []float32{1.25, -0}, "[]float64": []float64{math.Pi},
		"[]bool":   []bool{true, false, true},
		"[]string": []string{"a", "bc"}, "[]string-long": []string{"a", long}, "[]string-empty": []string{},
		"[]symbol": []goamqp.Symbol{"x", "yz"}, "[]symbol-long": []goamqp.Symbol{goamqp.Symbol(long)},
		"[][]byte": [][]byte{{1}, {}}, "[][]byte-long": [][]byte{blob[:300]},
		"[]time": []time.Time{when.UTC(), before.UTC()},
		"[]uuid": []goamqp.UUID{uuid1, uuid2},
		"[]map":  []map[any]any{{"a": int64(1)}, {uint64(2): "b"}},
		"array-big": func() []uint64 { // array32: more than 255 bytes of elements
			a := make([]uint64, 40)
			for i := range a {
				a[i] = uint64(i) << 40
			}
			return a
		}(),
	}
}

// decoded returns the value go-amqp decodes from the hex of one AMQP value.
func decoded(h string) any {
	b, err := hex.DecodeString("005377" + h)
	if err != nil {
		panic(err)
	}
	var m goamqp.Message
	if err := m.UnmarshalBinary(b); err != nil {
		panic(h + ": " + err.Error())
	}
	return m.Value
}

// corpus is a set of whole messages: each section alone and together,
// and each value in each place a value goes. Every map has at most one
// entry, so that go-amqp's bytes do not depend on Go's map order.
func corpus() map[string]*goamqp.Message {
	c := map[string]*goamqp.Message{
		"empty":       {},
		"data":        goamqp.NewMessage([]byte("hello")),
		"data-empty":  {Data: [][]byte{{}}},
		"data-many":   {Data: [][]byte{[]byte("a"), blob}},
		"header-zero": {Header: &goamqp.MessageHeader{}},
		"header": {Header: &goamqp.MessageHeader{Durable: true, Priority: 9, TTL: 90 * time.Second, FirstAcquirer: true, DeliveryCount: 300},
			Data: [][]byte{[]byte("x")}},
		"header-priority-4": {Header: &goamqp.MessageHeader{Priority: 4, DeliveryCount: 1}},
		"properties": {Properties: &goamqp.MessageProperties{
			MessageID: "id-1", UserID: []byte("user"), To: ptr("queue"), Subject: ptr("subject"), ReplyTo: ptr("reply"),
			CorrelationID: uint64(77), ContentType: ptr("text/plain"), ContentEncoding: ptr("gzip"),
			AbsoluteExpiryTime: ptr(when.Add(time.Hour)), CreationTime: ptr(when), GroupID: ptr("g"), GroupSequence: ptr(uint32(5)),
			ReplyToGroupID: ptr("rg"),
		}, Value: "v"},
		"properties-uuid-id":   {Properties: &goamqp.MessageProperties{MessageID: uuid1, CorrelationID: []byte{9}}},
		"properties-sparse":    {Properties: &goamqp.MessageProperties{GroupSequence: ptr(uint32(0))}},
		"properties-empty":     {Properties: &goamqp.MessageProperties{}},
		"sequence":             {Sequence: [][]any{{uint8(1), "two"}, {}}},
		"value-list":           {Value: []any{"a", []any{}}},
		"annotations-int-keys": {Annotations: goamqp.Annotations{int64(5): "five"}, DeliveryAnnotations: goamqp.Annotations{7: uint8(1)}},
		"footer":               {Footer: goamqp.Annotations{"x-opt-hash": []byte{1, 2}}, Data: [][]byte{nil}},
		"app-props-empty":      {ApplicationProperties: map[string]any{}},
		"everything": {
			Header:                &goamqp.MessageHeader{Durable: true},
			DeliveryAnnotations:   goamqp.Annotations{"x-opt-lock-token": uuid1},
			Annotations:           goamqp.Annotations{"x-opt-enqueued-time": when},
			Properties:            &goamqp.MessageProperties{MessageID: "m"},
			ApplicationProperties: map[string]any{"prop": []any{uuid1, uuid2}},
			Value:                 map[string]any{"nested": map[string]any{"deeper": []time.Time{when.UTC()}}},
			Footer:                goamqp.Annotations{"f": int64(1)},
		},
	}
	for name, v := range values() {
		c["value/"+name] = &goamqp.Message{Value: v}
		c["annotation/"+name] = &goamqp.Message{Annotations: goamqp.Annotations{"k": v}}
		c["delivery-annotation/"+name] = &goamqp.Message{DeliveryAnnotations: goamqp.Annotations{"k": v}}
		c["application-property/"+name] = &goamqp.Message{ApplicationProperties: map[string]any{"k": v}}
		c["footer/"+name] = &goamqp.Message{Footer: goamqp.Annotations{"k": v}}
		c["sequence/"+name] = &goamqp.Message{Sequence: [][]any{{v, v}}}
		c["message-id/"+name] = &goamqp.Message{Properties: &goamqp.MessageProperties{MessageID: v, CorrelationID: v}}
	}
	return c
}

// TestMarshalBytes: for every message of the corpus, our MarshalBinary
// writes go-amqp's bytes exactly, or fails where go-amqp fails.
func TestMarshalBytes(t *testing.T) {
	for name, m := range corpus() {
		want, werr := m.MarshalBinary()
		o := conv(*m).(ours.Message)
		got, gerr := o.MarshalBinary()
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%s: go-amqp's error %v, ours %v", name, werr, gerr)
			continue
		}
		if werr != nil {
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: bytes differ\n ours   %s\n go-amqp %s", name, hex.EncodeToString(got), hex.EncodeToString(want))
		}
	}
}

// TestUnmarshalSame: for every message of the corpus, our UnmarshalBinary
// of go-amqp's bytes gives the Message go-amqp's UnmarshalBinary gives,
// field by field and type by type (named types by name).
func TestUnmarshalSame(t *testing.T) {
	for name, m := range corpus() {
		b, err := m.MarshalBinary()
		if err != nil {
			continue
		}
		var want goamqp.Message
		werr := want.UnmarshalBinary(b)
		var got ours.Message
		gerr := got.UnmarshalBinary(b)
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%s: go-amqp's error %v, ours %v", name, werr, gerr)
			continue
		}
		if w, g := dump(want), dump(got); w != g {
			t.Errorf("%s: decoded messages differ\n ours    %s\n go-amqp %s", name, g, w)
		}
	}
}

// TestManyEntryMaps: maps of several entries, whose bytes follow Go's map
// order in go-amqp and here: each side reads the other's bytes to the same
// message.
func TestManyEntryMaps(t *testing.T) {
	vals := values()
	props := map[string]any{}
	ann := goamqp.Annotations{}
	for k, v := range vals {
		props[k] = v
		ann[k] = v
	}
	m := &goamqp.Message{ApplicationProperties: props, Annotations: ann, Value: map[any]any{"a": uint8(1), int64(2): "b", uuid1: nil}}
	theirs, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	o := conv(*m).(ours.Message)
	mine, err := o.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if len(mine) != len(theirs) {
		t.Errorf("lengths differ: ours %d, go-amqp's %d", len(mine), len(theirs))
	}
	var fromMine, fromTheirs goamqp.Message
	if err := fromMine.UnmarshalBinary(mine); err != nil {
		t.Fatal(err)
	}
	if err := fromTheirs.UnmarshalBinary(theirs); err != nil {
		t.Fatal(err)
	}
	if a, b := dump(fromMine), dump(fromTheirs); a != b {
		t.Errorf("go-amqp reads ours and its own differently\n ours    %s\n go-amqp %s", a, b)
	}
	var oursFromTheirs ours.Message
	if err := oursFromTheirs.UnmarshalBinary(theirs); err != nil {
		t.Fatal(err)
	}
	if a, b := dump(oursFromTheirs), dump(fromTheirs); a != b {
		t.Errorf("decoded messages differ\n ours    %s\n go-amqp %s", a, b)
	}
}
