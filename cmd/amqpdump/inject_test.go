package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
)

// TestPeerTextQuoted: text a peer chooses — a container-id, a link name,
// a SASL mechanism, an error's description, a descriptor symbol the spec
// does not define, a symbol where a performative belongs — never starts
// a line of amqpdump's output of its own, in any output form: a newline
// in it is escaped.
func TestPeerTextQuoted(t *testing.T) {
	const forged = "\nforged line"
	amqp := func(b []byte, body []byte) []byte {
		s := len(b)
		return frame.EndFrame(append(frame.BeginFrame(b, frame.TypeAMQP, 0), body...), s)
	}
	in := frame.AppendProtocolHeader(nil, frame.HeaderSASL)
	s := len(in)
	in = frame.BeginFrame(in, frame.TypeSASL, 0)
	in = frame.EndFrame(frame.AppendSASLInit(in, frame.SASLInit{Mechanism: []byte("PLAIN" + forged)}), s)
	in = frame.AppendProtocolHeader(in, frame.HeaderAMQP)
	in = amqp(in, frame.AppendOpen(nil, frame.Open{ContainerID: []byte("c" + forged)}))
	in = amqp(in, frame.AppendAttach(nil, frame.Attach{Name: []byte("link" + forged)}))
	odd := encode.AppendDescribed(nil)
	odd = encode.AppendSymbol(odd, "x:"+forged)
	odd = encode.AppendString(odd, "v"+forged)
	in = amqp(in, odd)
	in = amqp(in, frame.AppendClose(nil, frame.Close{Error: frame.AMQPError{Condition: []byte("amqp:" + forged), Description: []byte("d" + forged)}}))
	for _, args := range [][]string{{"-frames"}, {"-frames", "-json"}, {"-frames", "-summary"}, {"-frames", "-o"}} {
		var out, errOut bytes.Buffer
		run(args, bytes.NewReader(in), &out, &errOut)
		for _, line := range strings.Split(out.String()+errOut.String(), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "forged") {
				t.Errorf("%v: a line of the peer's: %q in\n%s%s", args, line, out.String(), errOut.String())
			}
		}
	}
}
