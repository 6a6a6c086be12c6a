package stream_test

import (
	"fmt"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/stream"
)

// message builds a small AMQP message: properties (message-id, user-id,
// to) and application properties, then a data body.
func message() []byte {
	b := encode.AppendDescribed(nil)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorProperties))
	start := len(b)
	b = encode.BeginList(b)
	b = encode.AppendString(b, "id-1")
	b = encode.AppendNull(b)
	b = encode.AppendString(b, "orders")
	b = encode.EndList(b, start, 3)

	b = encode.AppendDescribed(b)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorApplicationProperties))
	start = len(b)
	b = encode.BeginMap(b)
	b = encode.AppendString(b, "priority")
	b = encode.AppendInt(b, 3)
	b = encode.AppendString(b, "region")
	b = encode.AppendString(b, "eu-west")
	b = encode.EndMap(b, start, 2)

	b = encode.AppendDescribed(b)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorData))
	return encode.AppendBinary(b, make([]byte, 1000))
}

// A broker's routing step: read properties.to and one application
// property, and skip everything else — the body is never read.
func Example_route() {
	var c stream.Cursor
	c.Reset(message())
	for c.Next() {
		d, _, _ := c.Descriptor()
		switch d {
		case amqpsax.DescriptorProperties:
			c.Enter()
			c.Next() // the descriptor
			c.Next() // the list
			c.Enter()
			if c.Elem(2) { // to
				fmt.Printf("to=%s\n", c.Bytes())
			}
			c.Exit()
			c.Exit()
		case amqpsax.DescriptorApplicationProperties:
			c.Enter()
			c.Next()
			c.Next()
			c.Enter()
			if c.Lookup("region") {
				fmt.Printf("region=%s\n", c.Bytes())
			}
			c.Exit()
			c.Exit()
		default:
			fmt.Printf("skipped %s (%d bytes)\n", d, len(c.Raw()))
		}
	}
	if err := c.Err(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// to=orders
	// region=eu-west
	// skipped amqp:data:binary (1008 bytes)
}

func ExampleCursor_Lookup() {
	b := encode.BeginMap(nil)
	b = encode.AppendSymbol(b, "x-opt-partition")
	b = encode.AppendInt(b, 7)
	b = encode.AppendSymbol(b, "x-opt-offset")
	b = encode.AppendLong(b, 123456789)
	b = encode.EndMap(b, 0, 2)

	var c stream.Cursor
	c.Reset(b)
	c.Next()
	c.Enter()
	if c.Lookup("x-opt-offset") {
		fmt.Println(c.Kind(), c.Int())
	}
	// Output: long 123456789
}

func ExampleCursor_Elem() {
	b := encode.BeginList(nil)
	for _, s := range []string{"zero", "one", "two"} {
		b = encode.AppendString(b, s)
	}
	b = encode.EndList(b, 0, 3)

	var c stream.Cursor
	c.Reset(b)
	c.Next()
	c.Enter()
	if c.Elem(2) {
		fmt.Printf("%s\n", c.Bytes())
	}
	// Output: two
}

func ExampleCursor_Descriptor() {
	// A section described by its symbolic name, as some peers send it.
	b := encode.AppendDescribed(nil)
	b = encode.AppendSymbol(b, "amqp:header:list")
	b = encode.AppendList0(b)

	var c stream.Cursor
	c.Reset(b)
	c.Next()
	d, sym, _ := c.Descriptor()
	fmt.Printf("%#x %s\n", uint64(d), sym)
	// Output: 0x70 amqp:header:list
}

func ExampleCursor_AppendInts() {
	b := encode.BeginArray(nil, amqpsax.CodeLong)
	for _, v := range []int64{10, -20, 30} {
		b = encode.AppendIntElem(b, amqpsax.CodeLong, v)
	}
	b = encode.EndArray(b, 0, 3)

	var c stream.Cursor
	c.Reset(b)
	c.Next()
	buf := make([]int64, 0, 16) // reused: no allocation
	fmt.Println(c.AppendInts(buf))
	// Output: [10 -20 30]
}
