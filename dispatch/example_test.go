package dispatch_test

import (
	"fmt"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/encode"
)

// stats counts strings and their bytes, and skips every map unread.
type stats struct {
	amqpsax.NopHandler
	strings, bytes int
}

func (s *stats) OnString(v []byte) error {
	s.strings++
	s.bytes += len(v)
	return nil
}

func (s *stats) OnMapStart(int) error { return amqpsax.SkipValue }

func Example() {
	b := encode.BeginList(nil)
	b = encode.AppendString(b, "hello")
	b = encode.AppendUint(b, 7)
	m := len(b)
	b = encode.BeginMap(b)
	b = encode.AppendString(b, "not")
	b = encode.AppendString(b, "counted")
	b = encode.EndMap(b, m, 1)
	b = encode.AppendString(b, "world!")
	b = encode.EndList(b, 0, 4)

	var d dispatch.Decoder
	var s stats
	n, err := d.Decode(b, &s)
	fmt.Println(n == len(b), err, s.strings, s.bytes)
	// Output: true <nil> 2 11
}

func ExampleDecoder_Decode_error() {
	// A list8 that claims 3 bytes of which only 1 is present.
	_, err := dispatch.Decode([]byte{0xc0, 0x03, 0x02, 0x40}, amqpsax.NopHandler{})
	fmt.Println(err)
	// Output: dispatch: truncated input (list8) at offset 0
}
