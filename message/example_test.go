package message_test

import (
	"fmt"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/message"
)

// sample builds a message: a header, properties with a "to", application
// properties and an amqp-value body.
func sample() []byte {
	b := message.AppendHeader(nil, message.Header{Durable: true, Priority: 4})
	b = encode.AppendDescribed(b)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorProperties))
	s := len(b)
	b = encode.BeginList(b)
	b = encode.AppendString(b, "id-7")
	b = encode.AppendNull(b)
	b = encode.AppendString(b, "orders")
	b = encode.EndList(b, s, 3)
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
	s, err := message.Scan(msg)
	if err != nil {
		fmt.Println(err)
		return
	}
	p, _ := message.ParseProperties(s.Properties)
	region, _ := message.Lookup(s.ApplicationProperties, "region")
	h, _ := message.ParseHeader(s.Header)
	fmt.Printf("to=%s region=%s durable=%v body=%s\n", p.To, region.Bytes(), h.Durable, s.BodyKind)

	h.AddDelivery()
	out, err := message.Append(nil, s, &message.Changes{
		Header: &h,
		MessageAnnotations: message.Edit{Set: []message.Entry{
			{Key: message.Symbol("x-opt-routed-by"), Value: encode.AppendString(nil, "amqpsax")},
		}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	s2, _ := message.Scan(out)
	h2, _ := message.ParseHeader(s2.Header)
	fmt.Println("delivery-count", h2.DeliveryCount, "bare unchanged:", string(s2.Bare) == string(s.Bare))
	// Output:
	// to=orders region=eu-west durable=true body=amqp-value
	// delivery-count 1 bare unchanged: true
}
