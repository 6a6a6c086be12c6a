package engine

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/frame"
)

// raw is a peer written by hand: it feeds a Conn frames built with
// frame.Append* and reads back what the Conn writes.
type raw struct {
	t   testing.TB
	c   *Conn
	now time.Time
	in  []byte // everything the Conn wrote, not yet read
	err error  // of the last Feed
}

func newRaw(t testing.TB, c *Conn) *raw {
	return &raw{t: t, c: c, now: time.Unix(1_700_000_000, 0)}
}

func (r *raw) feed(b []byte) {
	r.err = r.c.Feed(b, r.now)
	out := r.c.Output()
	r.in = append(r.in, out...)
	r.c.Written(len(out))
}

// perf appends an AMQP frame on ch whose body appendBody writes.
func perf(b []byte, ch uint16, appendBody func([]byte) []byte) []byte {
	start := len(b)
	b = frame.BeginFrame(b, frame.TypeAMQP, ch)
	b = appendBody(b)
	return frame.EndFrame(b, start)
}

func saslFrame(b []byte, appendBody func([]byte) []byte) []byte {
	start := len(b)
	b = frame.BeginFrame(b, frame.TypeSASL, 0)
	b = appendBody(b)
	return frame.EndFrame(b, start)
}

func openBody(b []byte) []byte {
	return frame.AppendOpen(b, frame.Open{ContainerID: []byte("raw"), MaxFrameSize: frame.Some[uint32](4096)})
}

func beginBody(b []byte) []byte {
	return frame.AppendBegin(b, frame.Begin{NextOutgoingID: 0, IncomingWindow: 100, OutgoingWindow: 100})
}

func attachSender(handle uint32, name string) func([]byte) []byte {
	return func(b []byte) []byte {
		return frame.AppendAttach(b, frame.Attach{Name: []byte(name), Handle: handle, Role: frame.RoleSender,
			Source: frame.Some(frame.Source{Address: []byte("src")}), Target: frame.Some(frame.Target{Address: []byte("q")}),
			InitialDeliveryCount: frame.Some[uint32](0)})
	}
}

func transferBody(handle, id uint32, payload []byte) func([]byte) []byte {
	return func(b []byte) []byte {
		b = frame.AppendTransfer(b, frame.Transfer{Handle: handle, DeliveryID: frame.Some(id), DeliveryTag: []byte{byte(id)},
			MessageFormat: frame.Some[uint32](0), Settled: true})
		return append(b, payload...)
	}
}

// handshake: AMQP header, open, begin on channel 0, and an attach of a
// sending link with handle 0.
func handshake() []byte {
	b := frame.AppendProtocolHeader(nil, frame.HeaderAMQP)
	b = perf(b, 0, openBody)
	b = perf(b, 0, beginBody)
	return perf(b, 0, attachSender(0, "l0"))
}

// frames reads the frames the Conn wrote so far (and consumes them).
func (r *raw) frames() []frame.Frame {
	rd := frame.NewReader(bytes.NewReader(r.in))
	var fs []frame.Frame
	for {
		f, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			r.t.Fatalf("output: %v", err)
		}
		f.Body = append([]byte(nil), f.Body...)
		fs = append(fs, f)
	}
	r.in = r.in[:0]
	return fs
}

// last returns the descriptor and error condition of the last
// performative written that carries one (close, end, detach), or of the
// last frame.
type seen struct {
	desc amqpsax.Descriptor
	cond string
	text string
}

func (r *raw) performatives() []seen {
	var out []seen
	for _, f := range r.frames() {
		if f.IsHeader || len(f.Body) == 0 {
			continue
		}
		d, err := frame.Performative(f.Body)
		if err != nil {
			r.t.Fatal(err)
		}
		s := seen{desc: d}
		var e frame.AMQPError
		switch d {
		case amqpsax.DescriptorClose:
			c, err := frame.ParseClose(f.Body)
			if err != nil {
				r.t.Fatal(err)
			}
			e = c.Error
		case amqpsax.DescriptorEnd:
			c, err := frame.ParseEnd(f.Body)
			if err != nil {
				r.t.Fatal(err)
			}
			e = c.Error
		case amqpsax.DescriptorDetach:
			c, err := frame.ParseDetach(f.Body)
			if err != nil {
				r.t.Fatal(err)
			}
			e = c.Error
		case amqpsax.DescriptorSASLOutcome:
			o, err := frame.ParseSASLOutcome(f.Body)
			if err != nil {
				r.t.Fatal(err)
			}
			s.cond = "sasl:" + o.Code.String()
		}
		if e.Condition != nil {
			s.cond, s.text = string(e.Condition), string(e.Description)
		}
		out = append(out, s)
	}
	return out
}
