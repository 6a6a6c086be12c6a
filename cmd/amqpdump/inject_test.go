package main

import (
	"bytes"
	"slices"
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
	// A source whose descriptor is a symbol of the peer's: a fault
	// whose text names it.
	in = amqp(in, attachWithSource("x:"+forged))
	in = amqp(in, frame.AppendClose(nil, frame.Close{Error: frame.AMQPError{Condition: []byte("amqp:" + forged), Description: []byte("d" + forged)}}))
	for _, args := range [][]string{{"-frames"}, {"-frames", "-json"}, {"-frames", "-summary"}, {"-frames", "-o"}} {
		var out, errOut bytes.Buffer
		run(args, bytes.NewReader(in), &out, &errOut)
		if !slices.Contains(args, "-summary") && !strings.Contains(errOut.String(), `descriptor x:\nforged line`) { // (a summary reports no faults)
			t.Errorf("%v: no fault naming the source's descriptor in %q", args, errOut.String())
		}
		for _, line := range strings.Split(out.String()+errOut.String(), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "forged") {
				t.Errorf("%v: a line of the peer's: %q in\n%s%s", args, line, out.String(), errOut.String())
			}
		}
	}
}

// attachWithSource is an attach whose source is described by the symbol
// sym, which is no source's descriptor.
func attachWithSource(sym string) []byte {
	b := encode.AppendDescribed(nil)
	b = encode.AppendUlong(b, 0x12)
	s := len(b)
	b = encode.BeginList(b)
	b = encode.AppendString(b, "l")
	b = encode.AppendUint(b, 0)
	b = encode.AppendBool(b, false)
	b = encode.AppendNull(b)
	b = encode.AppendNull(b)
	b = encode.AppendDescribed(b)
	b = encode.AppendSymbol(b, sym)
	b = append(b, 0x45) // list0
	return encode.EndList(b, s, 6)
}
