package stream_test

import (
	"fmt"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/stream"
)

// message builds a small AMQP message: properties with a message-id, a
// subject and null in between (no user-id, no to — AMQP's absent fields),
// application properties, then a data body.
func message() []byte {
	b := encode.AppendDescribed(nil)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorProperties))
	start := len(b)
	b = encode.BeginList(b)
	b = encode.AppendString(b, "id-1")
	b = encode.AppendNull(b) // user-id
	b = encode.AppendNull(b) // to
	b = encode.AppendString(b, "order.created")
	b = encode.EndList(b, start, 4)

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

// A broker's routing step: read properties.to, properties.subject and one
// application property, and skip everything else — the body is never
// read. A null field reads as absent: Bytes returns nil, no error.
func Example_route() {
	msg := message()
	var to, subject, region []byte // views into msg
	var c stream.Cursor
	c.Reset(msg)
	for c.Next() { // each section; the body is skipped by its size
		switch d, _, _ := c.Descriptor(); d {
		case amqpsax.DescriptorProperties:
			c.EnterValue() // into the section, onto its list
			c.Enter()
			if c.Seek(2) {
				to = c.Bytes() // null here: nil
			}
			if c.Seek(3) {
				subject = c.Bytes()
			}
			c.Exit()
			c.Exit()
		case amqpsax.DescriptorApplicationProperties:
			c.EnterValue()
			c.Enter()
			if c.SeekKey("region") {
				region = c.Bytes()
			}
			c.Exit()
			c.Exit()
		}
	}
	if err := c.Err(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("to=%q subject=%s region=%s\n", to, subject, region)
	// Output:
	// to="" subject=order.created region=eu-west
}

func ExampleCursor_SeekKey() {
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
	if c.SeekKey("x-opt-offset") {
		fmt.Println(c.Kind(), c.Int())
	}
	// Output: long 123456789
}

func ExampleCursor_Seek() {
	b := encode.BeginList(nil)
	for _, s := range []string{"zero", "one", "two"} {
		b = encode.AppendString(b, s)
	}
	b = encode.EndList(b, 0, 3)

	var c stream.Cursor
	c.Reset(b)
	c.Next()
	c.Enter()
	if c.Seek(2) {
		fmt.Printf("%s\n", c.Bytes())
	}
	// Output: two
}

func ExampleCursor_Descriptor() {
	// A section described by its symbolic name, as some peers send it.
	b := encode.AppendDescribed(nil)
	b = encode.AppendSymbol(b, "amqp:header:list")
	b = encode.AppendCodeList0(b)

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

func ExampleCursor_IsNull() {
	b := encode.BeginList(nil)
	b = encode.AppendString(b, "a")
	b = encode.AppendNull(b)
	b = encode.AppendUint(b, 7)
	b = encode.EndList(b, 0, 3)

	var c stream.Cursor
	c.Reset(b)
	c.Next()
	c.Enter()
	for c.Next() {
		switch {
		case c.IsNull(): // a getter would give the zero value: absent, not an error
			fmt.Println(c.Index(), "absent", c.Uint())
		case c.Kind() == amqpsax.KindString:
			fmt.Println(c.Index(), string(c.Bytes()))
		default:
			fmt.Println(c.Index(), c.Uint())
		}
	}
	fmt.Println(c.Err())
	// Output:
	// 0 a
	// 1 absent 0
	// 2 7
	// <nil>
}

// A getter called on a value of another kind returns the zero value and
// records an error naming both kinds; the cursor stops there, as it does
// on bad input, so a walk never goes on past a value it misread.
func ExampleCursor_Err() {
	b := encode.BeginList(nil)
	b = encode.AppendString(b, "a")
	b = encode.AppendUint(b, 7)
	b = encode.EndList(b, 0, 2)

	var c stream.Cursor
	c.Reset(b)
	c.Next()
	c.Enter()
	for c.Next() {
		fmt.Println(c.Index(), c.Uint())
	}
	fmt.Println(c.Exit(), c.Err())
	// Output:
	// 0 0
	// false stream: value of another kind: want ubyte, ushort, uint or ulong, have string (str8-utf8) at offset 3
}

func ExampleCursor_Any() {
	var c stream.Cursor
	c.Reset(message())
	c.Next()
	c.Next() // the application properties
	c.EnterValue()
	m, err := c.Any()
	fmt.Println(m, err)
	// Output: map[priority:3 region:eu-west] <nil>
}

func ExampleValue() {
	v, err := stream.ParseValue(encode.AppendTimestamp(nil, 1767323045678))
	fmt.Println(v.Kind(), v.Timestamp(), err)
	// Output: timestamp 1767323045678 <nil>
}

// Copy one section of a message into another buffer through a Writer:
// Emit reports the cursor's value to any Handler, as dispatch would.
func ExampleCursor_Emit() {
	var c stream.Cursor
	c.Reset(message())
	c.Next()
	c.Next() // the application properties
	var w encode.Writer
	if err := c.Emit(&w); err != nil {
		fmt.Println(err)
	}
	fmt.Printf("% x\n", w.Bytes())
	// Output: 00 53 74 c1 1e 04 a1 08 70 72 69 6f 72 69 74 79 54 03 a1 06 72 65 67 69 6f 6e a1 07 65 75 2d 77 65 73 74
}
