package amqp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/amqpsax/amqpsax/client"
)

func ptr[T any](v T) *T { return &v }

// sample is a message with every section and a value of most types; its
// maps have one entry each, so that its encoding is one byte string.
func sample() *Message {
	when := time.UnixMilli(1_700_000_000_000)
	return &Message{
		Header:                &MessageHeader{Durable: true, Priority: 7, TTL: time.Minute, DeliveryCount: 2},
		DeliveryAnnotations:   Annotations{"x-opt-lock-token": UUID{1, 2, 3}},
		Annotations:           Annotations{int64(1): []any{uint8(1), "two", []int32{3, -4000}}},
		Properties:            &MessageProperties{MessageID: "id", To: ptr("q"), CreationTime: &when, GroupSequence: ptr(uint32(9))},
		ApplicationProperties: map[string]any{"k": map[string]any{"nested": []string{"a", "b"}}},
		Data:                  [][]byte{[]byte("one"), {}},
		Footer:                Annotations{"f": []time.Time{when.UTC()}},
	}
}

func TestMessageRoundTrip(t *testing.T) {
	m := sample()
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var got Message
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	// Read back as go-amqp reads: a local-zone creation time.
	want := *sample()
	want.Properties.CreationTime = ptr(want.Properties.CreationTime.Local())
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got  %#v\n want %#v", got, want)
	}
	again, err := got.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, b) {
		t.Errorf("re-encoded:\n %x\n %x", again, b)
	}
}

// TestUnmarshalCut: every prefix of a message that ends inside a section
// is an error, never a panic, and a prefix that ends between sections is
// the sections before it.
func TestUnmarshalCut(t *testing.T) {
	b, err := sample().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	ends := map[int]bool{0: true}
	var whole Message
	if err := whole.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	for n := range len(b) {
		var m Message
		err := m.UnmarshalBinary(b[:n])
		if err == nil {
			ends[n] = true
		}
	}
	// header, 2 annotations, properties, application properties, 2 data: 7 ends before the footer.
	if len(ends) != 8 {
		t.Errorf("%d prefixes decoded, want 8 (the empty one and one after each section but the last)", len(ends))
	}
}

func TestMarshalErrors(t *testing.T) {
	for name, m := range map[string]*Message{
		"bad UTF-8":          {Value: "\xff"},
		"unsupported type":   {Value: struct{}{}},
		"annotation key":     {Annotations: Annotations{1.5: "x"}},
		"nested unsupported": {ApplicationProperties: map[string]any{"k": []any{make(chan int)}}},
	} {
		if _, err := m.MarshalBinary(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestNewMessage(t *testing.T) {
	m := NewMessage([]byte("x"))
	if string(m.GetData()) != "x" || len(m.Data) != 1 {
		t.Errorf("GetData = %q", m.GetData())
	}
	if (&Message{}).GetData() != nil {
		t.Error("GetData of no data is not nil")
	}
	b, err := (&Message{Value: Null{}}).MarshalBinary()
	if err != nil || !bytes.Equal(b, []byte{0x00, 0x53, 0x77, 0x40}) {
		t.Errorf("Null: %x, %v", b, err)
	}
}

// FuzzUnmarshal: any input decodes or fails without a panic, and a
// decoded message that encodes (as in go-amqp, one whose annotations
// have keys of a type other than string and int does not) decodes again.
func FuzzUnmarshal(f *testing.F) {
	for _, m := range []*Message{sample(), NewMessage([]byte("data")), NewMessage(bytes.Repeat([]byte{1}, 300))} {
		b, _ := m.MarshalBinary()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Message
		err := m.UnmarshalBinary(b)
		// Receive's decoding (storage allocated with the Message,
		// binaries and strings as views) reads what UnmarshalBinary
		// reads.
		got, rerr := decodeReceived(b, nil, 0)
		if (err == nil) != (rerr == nil) {
			t.Fatalf("UnmarshalBinary: %v; Receive's decoding: %v\n%x", err, rerr, b)
		}
		if err != nil {
			return
		}
		got.DeliveryTag = nil
		// (A NaN is not DeepEqual to itself.)
		if !reflect.DeepEqual(got, &m) && !strings.Contains(fmt.Sprint(m.DeliveryAnnotations, m.Annotations, m.Properties,
			m.ApplicationProperties, m.Value, m.Sequence, m.Footer), "NaN") {
			t.Fatalf("Receive's decoding\n%+v\nUnmarshalBinary\n%+v\n%x", got, &m, b)
		}
		b2, err := m.MarshalBinary()
		if err != nil {
			return
		}
		var again Message
		if err := again.UnmarshalBinary(b2); err != nil {
			t.Fatalf("a re-encoded message does not decode: %v\n%x", err, b2)
		}
	})
}

// TestGoAMQPLimits: what go-amqp's decoder refuses though the encoding
// allows it is refused here too, so that a message this decodes decodes
// with go-amqp.
func TestGoAMQPLimits(t *testing.T) {
	value := func(v []byte) []byte { return append([]byte{0x00, 0x53, 0x77}, v...) }
	// An array32 of 48 trues: zero-width elements, a size of 5.
	trues := value([]byte{0xf0, 0, 0, 0, 5, 0, 0, 0, 48, 0x41})
	var m Message
	if err := m.UnmarshalBinary(trues); err == nil {
		t.Errorf("48 zero-width elements in 5 bytes: %v", m.Value)
	}
	// A list32 of 65537 uint0.
	n := 65537
	list := []byte{0xd0, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(list[1:], uint32(4+n))
	binary.BigEndian.PutUint32(list[5:], uint32(n))
	list = append(list, bytes.Repeat([]byte{0x43}, n)...)
	if err := m.UnmarshalBinary(value(list)); err == nil {
		t.Error("a list of 65537 elements decoded")
	}
	binary.BigEndian.PutUint32(list[1:], uint32(4+n-1))
	binary.BigEndian.PutUint32(list[5:], uint32(n-1))
	if err := m.UnmarshalBinary(value(list[:len(list)-1])); err != nil {
		t.Errorf("a list of 65536 elements: %v", err)
	}
}

// TestHeaderBytes: the header is written without interfaces as
// appendFields writes its five fields, for every field left out, null or
// set (a TTL and delivery count of 256 or more among them).
func TestHeaderBytes(t *testing.T) {
	for _, durable := range []bool{false, true} {
		for _, priority := range []uint8{0, 4, 9} {
			for _, ttl := range []time.Duration{0, time.Millisecond, time.Minute} {
				for _, first := range []bool{false, true} {
					for _, count := range []uint32{0, 1, 300} {
						h := MessageHeader{Durable: durable, Priority: priority, TTL: ttl, FirstAcquirer: first, DeliveryCount: count}
						want, err := appendFields(nil, codeHeader,
							[]any{h.Durable, h.Priority, uint32(h.TTL / time.Millisecond), h.FirstAcquirer, h.DeliveryCount},
							[]bool{false, h.Priority == 4, h.TTL == 0, !h.FirstAcquirer, h.DeliveryCount == 0})
						if err != nil {
							t.Fatal(err)
						}
						got, err := h.appendTo(nil)
						if err != nil || !bytes.Equal(got, want) {
							t.Errorf("%+v: % x, %v; want % x", h, got, err, want)
						}
					}
				}
			}
		}
	}
}

// TestSendDataOnly: a message of data sections alone goes to client as
// its slices, and client writes the bytes MarshalBinary writes.
func TestSendDataOnly(t *testing.T) {
	for _, data := range [][][]byte{
		{nil}, {{}}, {[]byte("x")}, {make([]byte, 255)}, {make([]byte, 256)}, {make([]byte, 70000), []byte("two")},
	} {
		m := &Message{Data: data}
		if !m.dataOnly() {
			t.Fatalf("%d sections: not data only", len(data))
		}
		o := new(outgoing)
		var so client.SendOptions
		cm, err := o.prepare(m, &so)
		if err != nil || cm == nil || so.Encoded != nil {
			t.Fatalf("prepare: %v, %v, % x", cm, err, so.Encoded)
		}
		got, err := cm.Append(nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%d sections: client writes % x, MarshalBinary % x", len(data), got[:min(len(got), 16)], want[:min(len(want), 16)])
		}
		o.free()
	}
	for _, m := range []*Message{{}, {Data: [][]byte{{1}}, Header: &MessageHeader{}}, {Data: [][]byte{{1}}, Annotations: Annotations{}}} {
		if m.dataOnly() {
			t.Errorf("%+v: data only", m)
		}
	}
}

// TestReceivedMessage: Receive's decoding (storage allocated with the
// Message, binaries and strings as views) gives the Message
// UnmarshalBinary gives, with the delivery tag and format, no binary
// whose capacity reaches past it, and allocates no more: for a message
// with every section, one whose body comes first (NewMessage's), and
// one whose header comes after its body.
func TestReceivedMessage(t *testing.T) {
	sampleBytes, err := sample().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	data, err := NewMessage([]byte("data")).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	header, err := (&Message{Header: &MessageHeader{Durable: true}}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	long, err := NewMessage(bytes.Repeat([]byte{1}, 300)).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	two, err := (&Message{Data: [][]byte{[]byte("one"), []byte("two")}}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	empty, err := NewMessage([]byte{}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"sample":            sampleBytes,
		"body first":        data,
		"body first vbin32": long,
		"two data sections": two,
		"empty data":        empty,
		"header after body": append(append([]byte{}, data...), header...),
	} {
		var want Message
		if err := want.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		want.DeliveryTag, want.Format = []byte{7, 8}, 3
		receive := func() *Message {
			m, err := decodeReceived(b, want.DeliveryTag, want.Format)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		got := receive()
		if !reflect.DeepEqual(got, &want) {
			t.Errorf("%s: received\n%+v\nwant\n%+v", name, got, &want)
		}
		for i, p := range append(got.Data, got.DeliveryTag) {
			if cap(p) != len(p) {
				t.Errorf("%s: Data[%d] or the tag: capacity %d past its length %d", name, i, cap(p), len(p))
			}
		}
		var m Message
		plain := testing.AllocsPerRun(100, func() {
			m = Message{}
			if err := m.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
		})
		fast := testing.AllocsPerRun(100, func() { receive() })
		// Never more than UnmarshalBinary into a Message of the
		// caller's, or than two (the Message's storage and its bytes);
		// fewer with sections before the body; a message whose body
		// comes first gets the smaller storage (the Message with its
		// data slice and tag), and its bytes.
		if fast > max(plain, 2) || name == "sample" && fast >= plain || strings.HasPrefix(name, "body first") && fast != 2 {
			t.Errorf("%s: Receive's decoding: %v allocations, UnmarshalBinary's %v", name, fast, plain)
		}
	}
}

// TestStringAt: a string put in an interface by stringAt is that
// string to everything that reads an interface (type switches,
// comparison, hashing as a map key, fmt, reflect), allocates nothing,
// and keeps its storage alive through a collection.
func TestStringAt(t *testing.T) {
	st := new(received)
	d := decoder{st: st}
	text := strings.Repeat("x", 3) + "yz"
	var v any
	if n := testing.AllocsPerRun(100, func() { st.nstrs = 0; v = d.boxed(text) }); n != 0 {
		t.Errorf("boxed: %v allocations", n)
	}
	if p := (*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1]; p != unsafe.Pointer(&st.strs[0]) {
		t.Fatalf("boxed's data word is %p, not the first of received's strings at %p", p, &st.strs[0])
	}
	st, d.st = nil, nil // v alone keeps received
	runtime.GC()
	s, ok := v.(string)
	if !ok || s != "xxxyz" || v != any("xxxyz") || fmt.Sprint(v) != "xxxyz" ||
		reflect.TypeOf(v) != reflect.TypeOf("") || reflect.ValueOf(v).String() != "xxxyz" ||
		!reflect.DeepEqual(v, any("xxxyz")) {
		t.Errorf("boxed(%q) reads as %T %#v", "xxxyz", v, v)
	}
	if m := map[any]int{"xxxyz": 1}; m[v] != 1 {
		t.Error("boxed: not the same map key as the string")
	}
	// Past received's strings, and without storage, as any(s).
	full := decoder{st: &received{nstrs: uint8(len(received{}.strs))}}
	for _, d := range []*decoder{&full, {}} {
		if v := d.boxed("k"); v != any("k") {
			t.Errorf("boxed: %#v", v)
		}
	}
}

// TestSendEncoded: any other message goes to client as the bytes
// MarshalBinary writes; what is not a message by the spec is refused,
// as client's decoding refused it before: a body of two kinds, a
// message-id or correlation-id of another type than ulong, uuid,
// binary or string.
func TestSendEncoded(t *testing.T) {
	for name, m := range map[string]*Message{
		"sample":         sample(),
		"int annotation": {Annotations: Annotations{int64(1): "x"}, Data: [][]byte{{1}}},
		"map property":   {ApplicationProperties: map[string]any{"k": map[string]any{"a": 1}}, Data: [][]byte{{1}}},
		"sequence":       {Sequence: [][]any{{1, "a"}}},
		"value":          {Value: map[string]any{"a": 1}},
		"empty":          {},
		"ulong id":       {Properties: &MessageProperties{MessageID: uint64(5), CorrelationID: uint(6)}},
		"uuid id":        {Properties: &MessageProperties{MessageID: UUID{1}, CorrelationID: &UUID{2}}},
		"binary id":      {Properties: &MessageProperties{MessageID: []byte{1}}},
		"string id":      {Properties: &MessageProperties{MessageID: "s", CorrelationID: ptr("c")}},
	} {
		o := new(outgoing)
		var so client.SendOptions
		cm, err := o.prepare(m, &so)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		want, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if cm != nil || so.Encoded == nil || !bytes.Equal(so.Encoded, want) {
			t.Errorf("%s: %v, % x; want % x", name, cm, so.Encoded, want)
		}
	}
	for name, m := range map[string]*Message{
		"long id":         {Properties: &MessageProperties{MessageID: int64(5)}},
		"uint id":         {Properties: &MessageProperties{CorrelationID: uint32(5)}},
		"symbol id":       {Properties: &MessageProperties{MessageID: Symbol("s")}},
		"value and data":  {Value: "x", Data: [][]byte{{1}}},
		"sequence, value": {Value: "x", Sequence: [][]any{{1}}},
	} {
		var so client.SendOptions
		if _, err := new(outgoing).prepare(m, &so); err == nil || so.Encoded != nil {
			t.Errorf("%s: sent (%v)", name, err)
		}
	}
}

// TestReceivedSize: a received Message's storage is at most 512 bytes,
// the largest object with pointers the runtime allocates without a
// header of type information (cheaper to allocate, and smaller).
func TestReceivedSize(t *testing.T) {
	if n := unsafe.Sizeof(received{}); n > 512 {
		t.Errorf("received is %d bytes", n)
	}
}
