package bench

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
)

// The sender benchmarks (send_test.go) are the receiver benchmarks turned
// round: a protocol engine as a client that sends many messages over one
// link, fed in memory the bytes a server (a broker) writes to it. The
// server's stream is recorded (SenderStream); the sender answers it and
// its output is taken and dropped, as a driver would hand it to
// write(2). Qpid Proton-C's pn_connection_driver as a client
// (send_proton.go, build tag proton) and amqpsax's engine.NewClient
// (send_engine.go) send the same messages on the same credit.

// SendBatch is how many messages a sender sends between two writes of its
// output; for unsettled sends the recorded server answers each batch with
// one disposition accepting and settling its range, as a receiver that
// coalesces its dispositions does.
const SendBatch = 100

// SenderStream is a server's recorded stream to a client that sends Msgs
// messages of Workload on one link, fed in stages as the sender's
// progress allows:
//
//   - Data[:Open]: the SASL protocol header, sasl-mechanisms (ANONYMOUS),
//     sasl-outcome ok, the AMQP protocol header and open (max-frame-size
//     64 KiB: every message of the small and medium workloads fits one
//     transfer). The sender answers with sasl-init, its AMQP header, open,
//     begin and the attach of a sender link (handle 0).
//   - Data[Open:Attach]: begin answering the sender's (incoming window
//     2^20 transfers), attach of the receiving end (handle 0), and a flow
//     granting Msgs credit.
//   - unsettled only, Data[Disps[i]:Disps[i+1]] (Disps[0] is Attach): a
//     disposition accepting and settling batch i, delivery-ids
//     i*SendBatch up to the batch's last; fed once the batch is written.
//   - Data[Tail:]: detach (closed), end and close, once every message is
//     written; the sender answers them.
type SenderStream struct {
	Name     string
	Workload *Workload
	Settled  bool // the sender sends pre-settled (snd-settle-mode settled)
	Msgs     int
	Data     []byte
	Open     int
	Attach   int
	Disps    []int // unsettled: len(Disps) = batches+1, Disps[batches] = Tail
	Tail     int
}

// Batches returns how many batches of SendBatch messages (the last maybe
// shorter) n messages make.
func Batches(n int) int { return (n + SendBatch - 1) / SendBatch }

// DriverSenderAddress is the target address of the sender's link, and
// its name.
const (
	DriverSenderAddress = "bench-queue"
	DriverSenderLink    = "bench-sender"
)

// SendStreams returns the recorded server streams of DriverMsgs messages,
// built once: small and medium, each unsettled and pre-settled.
var SendStreams = sync.OnceValues(func() ([]*SenderStream, error) {
	var out []*SenderStream
	for _, w := range Workloads() {
		if w.Name != "small" && w.Name != "medium" {
			continue
		}
		if len(w.AMQP)+64 > driverMaxFrame {
			return nil, fmt.Errorf("%s: message does not fit one frame", w.Name)
		}
		for _, settled := range []bool{false, true} {
			out = append(out, RecordServerStream(w, DriverMsgs, settled))
		}
	}
	return out, nil
})

// RecordServerStream writes the stream a server sends to a client that
// sends w's message n times on one link.
func RecordServerStream(w *Workload, n int, settled bool) *SenderStream {
	s := &SenderStream{Name: w.Name, Workload: w, Settled: settled, Msgs: n}
	if settled {
		s.Name += "-presettled"
	} else {
		s.Name += "-unsettled"
	}
	var b []byte
	put := func(typ uint8, perf []byte) {
		start := len(b)
		b = frame.BeginFrame(b, typ, 0)
		b = append(b, perf...)
		b = frame.EndFrame(b, start)
	}
	b = frame.AppendProtocolHeader(b, frame.HeaderSASL)
	put(frame.TypeSASL, frame.AppendSASLMechanisms(nil, frame.SASLMechanisms{Mechanisms: encode.AppendSymbol(nil, "ANONYMOUS")}))
	put(frame.TypeSASL, frame.AppendSASLOutcome(nil, frame.SASLOutcome{Code: frame.SASLOk}))
	b = frame.AppendProtocolHeader(b, frame.HeaderAMQP)
	put(frame.TypeAMQP, frame.AppendOpen(nil, frame.Open{ContainerID: []byte("bench-server"),
		MaxFrameSize: frame.Some[uint32](driverMaxFrame), ChannelMax: frame.Some[uint16](15)}))
	s.Open = len(b)
	put(frame.TypeAMQP, frame.AppendBegin(nil, frame.Begin{RemoteChannel: frame.Some[uint16](0),
		NextOutgoingID: 0, IncomingWindow: 1 << 20, OutgoingWindow: 1 << 20}))
	mode := frame.SndUnsettled
	if settled {
		mode = frame.SndSettled
	}
	put(frame.TypeAMQP, frame.AppendAttach(nil, frame.Attach{Name: []byte(DriverSenderLink), Handle: 0,
		Role: frame.RoleReceiver, SndSettleMode: frame.Some(mode),
		Source: frame.Some(frame.Source{Address: []byte("bench-client")}),
		Target: frame.Some(frame.Target{Address: []byte(DriverSenderAddress)})}))
	put(frame.TypeAMQP, frame.AppendFlow(nil, frame.Flow{NextIncomingID: frame.Some[uint32](0),
		IncomingWindow: 1 << 20, NextOutgoingID: 0, OutgoingWindow: 1 << 20,
		Handle: frame.Some[uint32](0), DeliveryCount: frame.Some[uint32](0), LinkCredit: frame.Some(uint32(n))}))
	s.Attach = len(b)
	if !settled {
		s.Disps = append(s.Disps, len(b))
		for first := 0; first < n; first += SendBatch {
			b = AppendAcceptFrame(b, uint32(first), uint32(min(first+SendBatch, n)-1))
			s.Disps = append(s.Disps, len(b))
		}
	}
	s.Tail = len(b)
	put(frame.TypeAMQP, frame.AppendDetach(nil, frame.Detach{Handle: 0, Closed: true}))
	put(frame.TypeAMQP, frame.AppendEnd(nil, frame.End{}))
	put(frame.TypeAMQP, frame.AppendClose(nil, frame.Close{}))
	s.Data = b
	return s
}

// AppendAcceptFrame appends a frame (channel 0) holding the receiver's
// disposition accepting and settling deliveries first through last.
func AppendAcceptFrame(b []byte, first, last uint32) []byte {
	start := len(b)
	b = frame.BeginFrame(b, frame.TypeAMQP, 0)
	b = frame.AppendDisposition(b, frame.Disposition{Role: frame.RoleReceiver, First: first,
		Last: frame.Some(last), Settled: true, State: frame.DeliveryState{Type: frame.StateAccepted}})
	return frame.EndFrame(b, start)
}

// Sender is one protocol engine as the sending client of a recorded
// server stream: Proton-C's connection driver (build tag proton) or
// amqpsax's engine.
type Sender struct {
	Name string
	// New readies the sender for s; with capture, Run keeps every byte
	// the sender wrote (SenderResult.Written) for CheckSent.
	New func(s *SenderStream, capture bool) (SenderRun, error)
}

// SenderRun is a Sender made ready for one stream.
type SenderRun struct {
	// Run sends n messages: n/Msgs whole connections of the stream, then
	// one that sends the rest, its last batch answered by a disposition
	// of the messages sent.
	Run func(n int) (SenderResult, error)
	// Close frees what New allocated.
	Close func()
}

// SenderResult is what a Run saw.
type SenderResult struct {
	Sent     int   // messages handed to the sender
	Accepted int   // outcomes (accepted) reported to the application
	Conns    int   // connections run
	Out      int64 // bytes the sender wrote (to the bit bucket)
	// Written is the sender's output, kept only with capture: one
	// connection's client stream after another.
	Written []byte
}

// Senders lists the senders; send_engine.go and send_proton.go add
// theirs.
var Senders []Sender

// Check reports whether r is what sending n messages of s gives.
func (r SenderResult) Check(s *SenderStream, n int) error {
	want := n
	if s.Settled {
		want = 0
	}
	if conns := (n + s.Msgs - 1) / s.Msgs; r.Sent != n || r.Accepted != want || r.Conns != conns {
		return fmt.Errorf("%s: sent %d messages, %d accepted, over %d connections; want %d, %d, %d",
			s.Name, r.Sent, r.Accepted, r.Conns, n, want, conns)
	}
	return nil
}

// CheckSent parses what a sender wrote over the connections of a run of
// n messages of s (SenderResult.Written), with the frame package, and
// reports whether it holds, connection after connection, the protocol
// headers, an open, a begin, the attach of a sending link (handle 0)
// settling as s asks, then the transfers of that connection's messages,
// each in one frame: delivery-ids from 0 and tags their 4 big-endian
// bytes, settled as s asks, the workload's message byte for byte.
func CheckSent(s *SenderStream, n int, written []byte) error {
	rd := frame.NewReader(bytes.NewReader(written))
	msg := s.Workload.AMQP
	conns, transfers, attached := 0, 0, false
	var next uint32 // the next delivery-id of this connection
	for {
		f, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: frame at %d: %w", s.Name, rd.Offset(), err)
		}
		if f.IsHeader {
			if f.Header == frame.HeaderSASL {
				if conns > 0 && int(next) != s.Msgs {
					return fmt.Errorf("%s: connection %d carried %d transfers, want %d", s.Name, conns, next, s.Msgs)
				}
				conns, next, attached = conns+1, 0, false
			}
			continue
		}
		if f.Type != frame.TypeAMQP || len(f.Body) == 0 {
			continue
		}
		d, err := frame.Performative(f.Body)
		if err != nil {
			return fmt.Errorf("%s: frame at %d: %w", s.Name, f.Offset, err)
		}
		switch d {
		case amqpsax.DescriptorAttach:
			a, err := frame.ParseAttach(f.Body)
			if err != nil {
				return fmt.Errorf("%s: attach at %d: %w", s.Name, f.Offset, err)
			}
			mode := frame.SndUnsettled
			if s.Settled {
				mode = frame.SndSettled
			}
			if a.Role != frame.RoleSender || a.Handle != 0 || a.SndSettleMode.Or(frame.SndMixed) != mode {
				return fmt.Errorf("%s: attach at %d: role %v handle %d snd-settle-mode %v", s.Name, f.Offset,
					a.Role, a.Handle, a.SndSettleMode.Or(frame.SndMixed))
			}
			attached = true
		case amqpsax.DescriptorTransfer:
			t, payload, err := frame.ParseTransfer(f.Body)
			if err != nil {
				return fmt.Errorf("%s: transfer at %d: %w", s.Name, f.Offset, err)
			}
			id, ok := t.DeliveryID.Get()
			tag := []byte{byte(next >> 24), byte(next >> 16), byte(next >> 8), byte(next)}
			switch {
			case !attached || f.Channel != 0 || t.Handle != 0:
				return fmt.Errorf("%s: transfer at %d on channel %d handle %d before an attach of handle 0", s.Name, f.Offset, f.Channel, t.Handle)
			case !ok || id != next || !bytes.Equal(t.DeliveryTag, tag):
				return fmt.Errorf("%s: transfer at %d: delivery-id %d (set %v) tag %x, want %d, %x", s.Name, f.Offset, id, ok, t.DeliveryTag, next, tag)
			case t.More || t.Aborted || t.Settled != s.Settled || t.MessageFormat.Or(0) != 0:
				return fmt.Errorf("%s: transfer at %d: more %v aborted %v settled %v format %d", s.Name, f.Offset,
					t.More, t.Aborted, t.Settled, t.MessageFormat.Or(0))
			case !bytes.Equal(payload, msg):
				return fmt.Errorf("%s: transfer at %d: %d bytes of payload differ from the message's %d", s.Name, f.Offset, len(payload), len(msg))
			}
			next++
			transfers++
		}
	}
	if want := (n + s.Msgs - 1) / s.Msgs; conns != want || transfers != n {
		return fmt.Errorf("%s: %d connections with %d transfers in all; want %d, %d", s.Name, conns, transfers, want, n)
	}
	if last := n - (conns-1)*s.Msgs; int(next) != last {
		return fmt.Errorf("%s: the last connection carried %d transfers, want %d", s.Name, next, last)
	}
	return nil
}
