package message_test

import (
	"errors"
	"fmt"
	"io"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/message"
)

// sample builds a message: a header, properties with a subject but no
// user-id and no to (nulls: absent), application properties and an
// amqp-value body.
func sample() []byte {
	b := message.AppendHeader(nil, message.Header{Durable: true, Priority: 4})
	b = encode.AppendDescribed(b)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorProperties))
	s := len(b)
	b = encode.BeginList(b)
	b = encode.AppendString(b, "id-7")
	b = encode.AppendNull(b) // user-id
	b = encode.AppendNull(b) // to
	b = encode.AppendString(b, "order.created")
	b = encode.EndList(b, s, 4)
	b = encode.AppendDescribed(b)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorApplicationProperties))
	s = len(b)
	b = encode.BeginMap(b)
	b = encode.AppendString(b, "region")
	b = encode.AppendString(b, "eu-west")
	b = encode.EndMap(b, s, 1)
	b = encode.AppendDescribed(b)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorAMQPValue))
	return encode.AppendString(b, "hello")
}

// What a broker does with every message: find the sections, read what it
// routes on, count the delivery, stamp an annotation, forward.
func Example() {
	msg := sample()
	s, err := message.Scan(msg) // O(1) per section
	if err != nil {
		fmt.Println(err)
		return
	}
	p, _ := message.ParseProperties(s.Properties)
	region, _ := message.Lookup(s.ApplicationProperties, "region")
	h, _ := message.ParseHeader(s.Header)
	fmt.Printf("to=%q subject=%s region=%s durable=%v body=%s\n", p.To, p.Subject, region.Bytes(), h.Durable, s.BodyKind)

	h.AddDelivery()
	out, err := message.Append(nil, s, &message.Changes{
		Header: &h,
		MessageAnnotations: message.Edit{Set: []message.Entry{
			{Key: message.SymbolKey("x-opt-routed-by"), Value: encode.AppendString(nil, "amqpsax")},
		}},
	}) // the bare message copied byte for byte
	if err != nil {
		fmt.Println(err)
		return
	}
	s2, _ := message.Scan(out)
	h2, _ := message.ParseHeader(s2.Header)
	fmt.Println("delivery-count", h2.DeliveryCount, "bare unchanged:", string(s2.Bare) == string(s.Bare))
	// Output:
	// to="" subject=order.created region=eu-west durable=true body=amqp-value
	// delivery-count 1 bare unchanged: true
}

// Go values, when they are wanted: the application properties as a map.
func ExampleAnyMap() {
	s, _ := message.Scan(sample())
	props, err := message.AnyMap(s.ApplicationProperties)
	fmt.Println(props, err)
	// Output: map[region:eu-west] <nil>
}

// On the first transfer frame of a large message, the sections complete
// in it can be read before the rest arrives.
func ExampleScan_prefix() {
	msg := sample()
	first := msg[:len(msg)-4] // the body is cut
	s, err := message.Scan(first)
	p, _ := message.ParseProperties(s.Properties)
	fmt.Printf("subject=%s wait=%v\n", p.Subject, errors.Is(err, io.ErrUnexpectedEOF))
	// Output: subject=order.created wait=true
}

// A router keeps a Scanner and scans the first frame of each delivery
// without allocating, even when the frame ends inside a section.
func ExampleScanner() {
	var sc message.Scanner // one per connection or goroutine
	msg := sample()
	for _, first := range [][]byte{msg, msg[:len(msg)-4]} {
		s, err := sc.Scan(first)
		var e *amqpsax.Error
		if errors.As(err, &e) && !errors.Is(err, io.ErrUnexpectedEOF) {
			fmt.Println("reject:", err)
			continue
		}
		p, _ := message.ParseProperties(s.Properties)
		// e is reused by the next Scan: read it now.
		fmt.Printf("subject=%s body=%v more=%v\n", p.Subject, s.Body != nil, e != nil)
	}
	// Output:
	// subject=order.created body=true more=false
	// subject=order.created body=false more=true
}

// Build a message from its parts, then read it back: the header and
// properties from their structs, the body section by section.
func ExampleBodyValues() {
	b := message.AppendHeader(nil, message.DefaultHeader)
	b, err := message.AppendProperties(b, message.Properties{
		MessageID: message.ID{Kind: amqpsax.KindString, Bytes: []byte("id-8")},
		To:        []byte("queue://orders"),
	})
	if err != nil {
		panic(err)
	}
	for _, part := range []string{"hello, ", "world"} { // two data sections
		b = encode.AppendDescribed(b)
		b = encode.AppendCodeSmallUlong(b, uint8(amqpsax.DescriptorData))
		b = encode.AppendBinary(b, []byte(part))
	}

	s, err := message.Scan(b)
	if err != nil {
		panic(err)
	}
	p, _ := message.ParseProperties(s.Properties)
	fmt.Printf("to %s, id %s, body of %v:", p.To, p.MessageID.Bytes, s.BodyKind)
	for v, err := range message.BodyValues(s.Body) {
		if err != nil {
			panic(err)
		}
		fmt.Printf(" %q", v.Bytes())
	}
	fmt.Println()
	// Output: to queue://orders, id id-8, body of data: "hello, " "world"
}
