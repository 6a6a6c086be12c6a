//go:build ignore

// Gen writes sample.amqp, the message the route example reads: a header
// (durable, priority 7), message annotations (x-opt-partition-key),
// properties (message-id, to, subject, reply-to, content-type),
// application properties (customer, attempt, region) and a data body of
// JSON, built with package encode. Run it from this directory:
//
//	go run gen.go
package main

import (
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
)

// section appends the descriptor of a section (as the smallulong a peer
// such as Qpid Proton writes).
func section(b []byte, d amqpsax.Descriptor) []byte {
	b = encode.AppendDescribed(b)
	return encode.AppendUlong(b, uint64(d))
}

func main() {
	// header: durable, priority 7; the other fields left at their defaults
	b := section(nil, amqpsax.DescriptorHeader)
	start := len(b)
	b = encode.BeginList(b)
	b = encode.AppendBool(b, true)
	b = encode.AppendUbyte(b, 7)
	b = encode.EndList(b, start, 2)

	// message annotations: one the broker must keep
	b = section(b, amqpsax.DescriptorMessageAnnotations)
	start = len(b)
	b = encode.BeginMap(b)
	b = encode.AppendSymbol(b, "x-opt-partition-key")
	b = encode.AppendString(b, "customer-42")
	b = encode.EndMap(b, start, 1)

	// properties: message-id, user-id, to, subject, reply-to,
	// correlation-id, content-type
	b = section(b, amqpsax.DescriptorProperties)
	start = len(b)
	b = encode.BeginList(b)
	b = encode.AppendString(b, "order-1042")
	b = encode.AppendNull(b)
	b = encode.AppendString(b, "orders")
	b = encode.AppendString(b, "order.created")
	b = encode.AppendString(b, "replies")
	b = encode.AppendNull(b)
	b = encode.AppendSymbol(b, "application/json")
	b = encode.EndList(b, start, 7)

	// application properties: region last, so a lookup skips the others
	b = section(b, amqpsax.DescriptorApplicationProperties)
	start = len(b)
	b = encode.BeginMap(b)
	b = encode.AppendString(b, "customer")
	b = encode.AppendString(b, "acme")
	b = encode.AppendString(b, "attempt")
	b = encode.AppendInt(b, 1)
	b = encode.AppendString(b, "region")
	b = encode.AppendString(b, "eu-west")
	b = encode.EndMap(b, start, 3)

	// body: one data section holding the order as JSON, which a broker
	// never reads
	var lines []string
	for i := 1; i <= 12; i++ {
		lines = append(lines, fmt.Sprintf(`{"sku":"SKU-%04d","qty":%d}`, 1000+7*i, i%4+1))
	}
	body := `{"order":1042,"customer":"acme","lines":[` + strings.Join(lines, ",") + `]}`
	b = section(b, amqpsax.DescriptorData)
	b = encode.AppendBinary(b, []byte(body))

	if err := os.WriteFile("sample.amqp", b, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("wrote sample.amqp, %d bytes\n", len(b))
}
