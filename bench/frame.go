package bench

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/frame"
)

// The frame benchmarks (frame_test.go) measure package frame on whole
// connections and on single transfers.
//
// go-amqp's frame layer (internal/frames: ParseFrame, the performative
// types and their unmarshalling; internal/buffer) is internal to its
// module, and its Conn reads frames only inside its own connection
// goroutines, so nothing of it can be called on captured bytes from
// outside: the reading benchmark has amqpsax alone. What go-amqp exports
// of a transfer's decoding is the message: Message.UnmarshalBinary, which
// its receiver runs on every delivery's payload after its internal frame
// and transfer parsing. The transfer benchmark sets it beside amqpsax's
// ParseTransfer plus message reading; go-amqp's number leaves out its
// transfer performative, so it is a lower bound of its work.

// FrameStream is a connection's byte stream, captured or generated.
type FrameStream struct {
	Name       string
	Data       []byte
	Frames     int // frames and protocol headers
	Deliveries int // deliveries its transfers make
}

// streamMaxFrame is the max-frame-size the generated streams split
// transfers at, a common broker setting.
const streamMaxFrame = 64 << 10

// FrameStreams returns the streams of the frame benchmarks, built once:
// the two directions of the Qpid Proton connection of testdata/proton,
// and for the small, medium and data-64k workloads a client's stream of
// SASL, open, begin, attach and then transfers of the workload's message,
// split at 64 KiB frames (about 1 MiB of transfers).
var FrameStreams = sync.OnceValues(func() ([]*FrameStream, error) {
	var out []*FrameStream
	for _, dir := range []string{"client", "server"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "proton", "conn-"+dir+".bin"))
		if err != nil {
			return nil, err
		}
		out = append(out, &FrameStream{Name: "proton-" + dir, Data: data})
	}
	for _, w := range Workloads() {
		switch w.Name {
		case "small", "medium", "data-64k":
			n := max(1, (1<<20)/len(w.AMQP))
			out = append(out, &FrameStream{Name: "transfers-" + w.Name, Data: transferStream(w.AMQP, n)})
		}
	}
	for _, s := range out {
		frames, deliveries, err := LoopFrames(frame.NewReader(bytes.NewReader(s.Data)), new(frame.Assembler))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		s.Frames, s.Deliveries = frames, deliveries
	}
	return out, nil
})

// transferStream writes what a client sends to deliver msg n times.
func transferStream(msg []byte, n int) []byte {
	b := frame.AppendProtocolHeader(nil, frame.HeaderSASL)
	put := func(typ uint8, perf []byte, payload []byte) {
		start := len(b)
		b = frame.BeginFrame(b, typ, 0)
		b = append(append(b, perf...), payload...)
		b = frame.EndFrame(b, start)
	}
	put(frame.TypeSASL, frame.AppendSASLInit(nil, frame.SASLInit{Mechanism: []byte("ANONYMOUS")}), nil)
	b = frame.AppendProtocolHeader(b, frame.HeaderAMQP)
	put(frame.TypeAMQP, frame.AppendOpen(nil, frame.Open{ContainerID: []byte("bench"), MaxFrameSize: frame.Some[uint32](streamMaxFrame)}), nil)
	put(frame.TypeAMQP, frame.AppendBegin(nil, frame.Begin{NextOutgoingID: 0, IncomingWindow: 5000, OutgoingWindow: 5000}), nil)
	put(frame.TypeAMQP, frame.AppendAttach(nil, frame.Attach{Name: []byte("sender"), Role: frame.RoleSender,
		Target: frame.Some(frame.Target{Address: []byte(routeTo)}), InitialDeliveryCount: frame.Some[uint32](0)}), nil)
	var perf []byte
	for i := range n {
		rest := msg
		for first := true; first || len(rest) > 0; first = false {
			t := frame.Transfer{}
			if first {
				t.DeliveryID, t.DeliveryTag = frame.Some(uint32(i)), []byte{byte(i), byte(i >> 8), byte(i >> 16)}
				t.MessageFormat = frame.Some[uint32](0)
			}
			perf = frame.AppendTransfer(perf[:0], t)
			room := streamMaxFrame - 8 - len(perf) - 8 // room for more=true
			if len(rest) > room {
				t.More = true
				perf = frame.AppendTransfer(perf[:0], t)
				put(frame.TypeAMQP, perf, rest[:room])
				rest = rest[room:]
				continue
			}
			put(frame.TypeAMQP, perf, rest)
			rest = nil
		}
	}
	return b
}

// ReadFrames reads every frame and protocol header of r's stream and
// returns how many there were.
func ReadFrames(r *frame.Reader) (int, error) {
	n := 0
	for {
		if _, err := r.Next(); err != nil {
			if err == io.EOF {
				return n, nil
			}
			return n, err
		}
		n++
	}
}

// LoopFrames runs the loop of a broker's receiving side: every frame
// read, each transfer parsed and joined into its delivery. It returns the
// frames and the deliveries.
func LoopFrames(r *frame.Reader, a *frame.Assembler) (frames, deliveries int, err error) {
	for {
		f, err := r.Next()
		if err == io.EOF {
			return frames, deliveries, nil
		}
		if err != nil {
			return frames, deliveries, err
		}
		frames++
		if d, _ := frame.Performative(f.Body); d != amqpsax.DescriptorTransfer {
			continue
		}
		t, payload, err := frame.ParseTransfer(f.Body)
		if err != nil {
			return frames, deliveries, err
		}
		_, done, err := a.Add(f.Channel, t, payload)
		if err != nil {
			return frames, deliveries, err
		}
		if done {
			deliveries++
		}
	}
}

// TransferBody returns the body of one transfer frame carrying w's
// message whole (a frame as large as the message needs).
func TransferBody(w *Workload) []byte {
	t := frame.Transfer{Handle: 0, DeliveryID: frame.Some[uint32](7), DeliveryTag: []byte("tag-7"),
		MessageFormat: frame.Some[uint32](0), Settled: true}
	return append(frame.AppendTransfer(nil, t), w.AMQP...)
}

// TransferImpl is one way to decode a transfer frame's body.
type TransferImpl struct {
	Name string
	New  func(w *Workload) Op
}

// TransferImpls are the implementations of the transfer benchmark. The
// route ones read properties.to and the application property "tenant"
// (the Route task); the keep ones build Go values of the whole message.
var TransferImpls = []TransferImpl{
	{"amqpsax-parse", transferParse},
	{"amqpsax-route", transferRoute},
	{"amqpsax-keep", transferKeep},
	{"goamqp-route", transferGoAMQPRoute},
}

// transferParse decodes the transfer performative alone: handle,
// delivery-id, tag, settled; the payload is a view.
func transferParse(w *Workload) Op {
	body := TransferBody(w)
	var t frame.Transfer
	var payload []byte
	return Op{
		Run: func() (err error) {
			t, payload, err = frame.ParseTransfer(body)
			return err
		},
		Check: func() error {
			if t.DeliveryID != frame.Some[uint32](7) || string(t.DeliveryTag) != "tag-7" || !t.Settled || !bytes.Equal(payload, w.AMQP) {
				return fmt.Errorf("transfer %+v", t)
			}
			return nil
		},
	}
}

// transferRoute decodes the transfer, then reads the two route fields of
// its message with package message.
func transferRoute(w *Workload) Op {
	body := TransferBody(w)
	var to, tenant []byte
	return Op{
		Run: func() error {
			t, payload, err := frame.ParseTransfer(body)
			if err != nil || t.DeliveryID != frame.Some[uint32](7) {
				return fmt.Errorf("transfer: %v", err)
			}
			to, tenant, err = messageRoute(payload)
			return err
		},
		Check: func() error { return checkRoute(w, to, tenant) },
	}
}

// transferKeep decodes the transfer, then builds the whole message as Go
// values (strings and binaries copied), as go-amqp does.
func transferKeep(w *Workload) Op {
	body := TransferBody(w)
	var d dispatch.Decoder
	var k keeper
	return Op{
		Run: func() error {
			t, payload, err := frame.ParseTransfer(body)
			if err != nil || t.DeliveryID != frame.Some[uint32](7) {
				return fmt.Errorf("transfer: %v", err)
			}
			k.reset()
			return d.DecodeAll(payload, &k)
		},
		Check: func() error { return sameDigest(DigestOf(k.root), w.Digest.Leaves()) },
	}
}

// transferGoAMQPRoute is what go-amqp's receiver exports of a transfer:
// the message unmarshalled whole into a new Message (its transfer
// performative is parsed inside the module, out of reach), then the two
// route fields read from it.
func transferGoAMQPRoute(w *Workload) Op {
	body := TransferBody(w)
	return goAMQPRouteOf(w, body[len(body)-len(w.AMQP):])
}
