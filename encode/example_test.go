package encode_test

import (
	"fmt"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/encode"
)

func ExampleAppendUint() {
	var b []byte
	for _, v := range []uint32{0, 200, 70000} {
		b = encode.AppendUint(b[:0], v)
		fmt.Printf("% x\n", b)
	}
	// Output:
	// 43
	// 52 c8
	// 70 00 01 11 70
}

// A list is written with its size and count patched in at the end, and
// in its 8-bit form when it fits.
func ExampleBeginList() {
	b := encode.AppendDescribed(nil)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorHeader))
	start := len(b)
	b = encode.BeginList(b)
	b = encode.AppendBool(b, true) // durable
	b = encode.AppendUbyte(b, 9)   // priority
	b = encode.EndList(b, start, 2)
	fmt.Printf("% x\n", b)
	// Output: 00 53 70 c0 04 02 41 50 09
}

// dropper forwards every event to a Writer except strings equal to
// "secret", which it replaces with null: a streaming filter.
type dropper struct{ *encode.Writer }

func (d dropper) OnString(v []byte) error {
	if string(v) == "secret" {
		return d.Writer.OnNull()
	}
	return d.Writer.OnString(v)
}

func ExampleWriter() {
	in := encode.BeginList(nil)
	in = encode.AppendString(in, "public")
	in = encode.AppendString(in, "secret")
	in = encode.EndList(in, 0, 2)

	var w encode.Writer
	if _, err := dispatch.Decode(in, dropper{&w}); err != nil {
		fmt.Println(err)
	}
	fmt.Printf("% x\n", w.Bytes())
	// Output: c0 0a 02 a1 06 70 75 62 6c 69 63 40
}
