package bench

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/stream"
)

// Whole messages with package message's Message: decoded into a reused
// Message that owns a copy of the input (message-owned) or shares it
// (message-nocopy), and encoded from one (message-build: a Message
// decoded once, as Proton's encode benchmark encodes a pn_message_t
// decoded once; message-build-map: the application properties built from
// a map[string]any on every run, as go-amqp's MarshalBinary encodes its
// map); beside them both, the copy alone (memmove).
func init() {
	Impls = append(Impls,
		Impl{Task: Decode, Name: "message-owned", New: decodeMessageOwned},
		Impl{Task: Decode, Name: "message-nocopy", New: decodeMessageNoCopy},
		Impl{Task: Decode, Name: "memmove", New: memmoveOp},
		Impl{Task: Encode, Name: "memmove", New: memmoveOp},
		Impl{Task: Encode, Name: "message-build", New: encodeMessageBuild},
		Impl{Task: Encode, Name: "message-build-map", Only: isDataBody, New: encodeMessageBuildMap},
	)
}

// isDataBody: the workloads whose body is a data section, which go-amqp
// and a Message both hold as a []byte, so that encoding the message from
// Go values is like for like (the others' amqp-value bodies are Go trees
// in go-amqp, encoded views in a Message).
func isDataBody(w *Workload) bool { return w.Model[len(w.Model)-1].Descriptor == descData }

// checkMessage checks a decoded Message against its workload: the route
// fields, and every value, by appending it and decoding that with go-amqp
// (which fills in the header's defaults, as Proton's check does).
func checkMessage(w *Workload, m *message.Message) error {
	if m.Properties == nil {
		return errors.New("no properties")
	}
	if err := checkRoute(w, m.Properties.To, m.ApplicationProperties.Get("tenant").Bytes()); err != nil {
		return err
	}
	out, err := m.Append(nil)
	if err != nil {
		return err
	}
	return checkGoAMQP(w, out)
}

// checkGoAMQP checks an encoded message's values against the workload's
// through go-amqp.
func checkGoAMQP(w *Workload, out []byte) error {
	var g amqp.Message
	if err := g.UnmarshalBinary(out); err != nil {
		return err
	}
	return sameDigest(digestGoAMQP(&g), w.Digest.Leaves())
}

func decodeMessageOwned(w *Workload) Op {
	var m message.Message
	return Op{
		Run: func() error { return m.Decode(w.AMQP) },
		Check: func() error {
			if &m.Bytes()[0] == &w.AMQP[0] {
				return errors.New("message-owned: shares the input")
			}
			return checkMessage(w, &m)
		},
	}
}

// memmoveOp only copies the encoded message into a buffer it reuses (the
// runtime's memmove): the floor of any decoder that keeps a copy of its
// input, as message-owned and Proton's pn_message_decode do, and of any
// encoder, which writes every byte once.
func memmoveOp(w *Workload) Op {
	var buf []byte
	return Op{
		Run: func() error {
			buf = append(buf[:0], w.AMQP...)
			return nil
		},
		Check: func() error {
			if !bytes.Equal(buf, w.AMQP) {
				return errors.New("memmove: not the input")
			}
			return nil
		},
	}
}

func decodeMessageNoCopy(w *Workload) Op {
	var m message.Message
	return Op{
		Run:   func() error { return m.DecodeNoCopy(w.AMQP) },
		Check: func() error { return checkMessage(w, &m) },
	}
}

// encodeMessageBuild appends a Message decoded once into a buffer it
// reuses.
func encodeMessageBuild(w *Workload) Op {
	var m message.Message
	if err := m.Decode(w.AMQP); err != nil {
		panic(err)
	}
	var buf []byte
	return Op{
		Run: func() (err error) {
			buf, err = m.Append(buf[:0])
			return err
		},
		Check: func() error { return checkGoAMQP(w, buf) },
	}
}

// goValue is a model value as a Go user holds it, as go-amqp decodes it:
// a timestamp as time.Time, a symbol as stream.Symbol, a binary as []byte.
func goValue(v any) any {
	switch v := v.(type) {
	case Timestamp:
		return time.UnixMilli(int64(v)).UTC()
	case Symbol:
		return stream.Symbol(v)
	case Binary:
		return []byte(v)
	}
	return v
}

// appPropsMap is the workload's application properties as a
// map[string]any.
func appPropsMap(w *Workload) map[string]any {
	for _, d := range w.Model {
		if d.Descriptor == descAppProps {
			m := map[string]any{}
			for _, kv := range d.Value.(Map) {
				m[kv.Key.(string)] = goValue(kv.Value)
			}
			return m
		}
	}
	panic("bench: no application properties")
}

// encodeMessageBuildMap encodes the message from Go values: header and
// properties from their structs, the application properties from a
// map[string]any (converted and sorted on every run), the body from its
// []byte — what go-amqp's MarshalBinary does from its Message.
func encodeMessageBuildMap(w *Workload) Op {
	var decoded message.Message
	if err := decoded.Decode(w.AMQP); err != nil {
		panic(err)
	}
	header, props := *decoded.Header, *decoded.Properties
	props.MessageID.Bytes = []byte(string(props.MessageID.Bytes)) // off the decoded buffer
	payload := []byte(w.Model[len(w.Model)-1].Value.(Binary))
	appProps := appPropsMap(w)
	var vs message.Values
	m := message.Message{Header: &header, Properties: &props,
		Body: message.Body{Kind: message.BodyData, Data: [][]byte{payload}}}
	var buf []byte
	return Op{
		Run: func() (err error) {
			vs.Reset()
			if m.ApplicationProperties, err = vs.PropertiesOf(appProps); err != nil {
				return err
			}
			buf, err = m.Append(buf[:0])
			return err
		},
		Check: func() error {
			var g amqp.Message
			if err := g.UnmarshalBinary(buf); err != nil {
				return err
			}
			if err := sameProps(w, g.ApplicationProperties); err != nil {
				return fmt.Errorf("message-build-map: %w", err)
			}
			return checkGoAMQP(w, buf)
		},
	}
}
