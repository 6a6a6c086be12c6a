package client

import (
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
)

// symbolMap encodes m as an AMQP map of symbol keys (fields, annotations,
// an error's info: part 2 §2.8.13, part 3 §3.2.10), its values by
// message.Values.Any (so the Go types a message's properties take), its
// keys in sorted order; nil for an empty m.
func symbolMap(m map[string]any) (frame.Map, error) {
	if len(m) == 0 {
		return nil, nil
	}
	var vs message.Values
	e, err := vs.AnnotationsOf(m)
	if err != nil {
		return nil, err
	}
	b := encode.BeginMap(nil)
	n := 0
	for k, v := range e.All() {
		b = append(append(b, k.Raw()...), v.Raw()...)
		n++
	}
	return frame.Map(encode.EndMap(b, 0, n)), nil
}
