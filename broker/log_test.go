package broker

import (
	"bytes"
	"log"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// TestLogQuotesPeerText: text a peer chooses before it is authenticated
// — its container-id, its SASL mechanism — is quoted in the broker's log,
// so a newline in it cannot forge a line of its own.
func TestLogQuotesPeerText(t *testing.T) {
	const forged = "\nforged: admin logged in"
	amqpFrame := func(b []byte, body func([]byte) []byte) []byte {
		s := len(b)
		return frame.EndFrame(body(frame.BeginFrame(b, frame.TypeAMQP, 0)), s)
	}
	open := frame.AppendProtocolHeader(nil, frame.HeaderAMQP)
	open = amqpFrame(open, func(b []byte) []byte {
		return frame.AppendOpen(b, frame.Open{ContainerID: []byte("c" + forged)})
	})
	sasl := frame.AppendProtocolHeader(nil, frame.HeaderSASL)
	s := len(sasl)
	sasl = frame.BeginFrame(sasl, frame.TypeSASL, 0)
	sasl = frame.EndFrame(frame.AppendSASLInit(sasl, frame.SASLInit{Mechanism: []byte("PLAIN" + forged), InitialResponse: []byte("\x00u\x00p")}), s)
	for name, in := range map[string][]byte{"container-id": open, "mechanism": sasl} {
		var buf bytes.Buffer
		o := fuzzOptions(0)
		if name == "mechanism" {
			o.Engine.Auth = engine.Mechanisms(engine.PlainServer(func(string, string) bool { return false }))
		}
		o.Log = log.New(&buf, "broker: ", 0)
		b := New(o)
		serveInput(t, b, in, len(in))
		if buf.Len() == 0 {
			t.Fatalf("%s: nothing logged", name)
		}
		for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
			if !strings.HasPrefix(line, "broker: ") {
				t.Errorf("%s: a line the broker did not write: %q in\n%s", name, line, buf.String())
			}
		}
	}
}
