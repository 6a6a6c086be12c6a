package bench

import (
	"fmt"
	"sync"

	"github.com/amqpsax/amqpsax/frame"
)

// The receiver benchmarks (driver_test.go) feed a protocol engine, in
// memory, the bytes a client writes to deliver many messages over one
// link: what a broker's connection does with a socket's input, without the
// socket. The engine answers (open, begin, attach, a flow granting credit,
// a disposition per delivery); its output is taken and dropped, as a
// driver would hand it to write(2). Qpid Proton-C's pn_connection_driver
// (driver_proton.go, build tag proton) and amqpsax's engine (engine.go) are
// fed the same bytes.

// DriverMsgs is how many messages a recorded stream carries: one
// connection of the receiver benchmark.
const DriverMsgs = 4000

// driverMaxFrame is the max-frame-size the client offers; every message
// of the small and medium workloads fits one transfer frame.
const driverMaxFrame = 64 << 10

// DriverStream is a client's recorded stream: the SASL protocol header
// and a sasl-init for ANONYMOUS, the AMQP protocol header, open, begin,
// attach of a sender link (handle 0,
// unsettled or pre-settled deliveries) — Data[:Setup], which a receiver
// reads and answers before the rest, as a client waits for its credit —
// then Msgs transfers of the workload's message, each in one frame,
// pipelined: the client never waited for the receiver's later flows or
// dispositions, as a client that writes ahead does. It ends with detach,
// end and close.
type DriverStream struct {
	Name     string
	Workload *Workload
	Settled  bool // the transfers are pre-settled
	Data     []byte
	Setup    int // the bytes before the first transfer
	Msgs     int
	// Ends[i] is the offset just past message i's transfer frame: a
	// prefix Data[:Ends[i]] delivers messages 0..i.
	Ends []int
	// Transfers is how many bytes of Data are transfer frames: b.SetBytes
	// gets Transfers/Msgs.
	Transfers int
}

// PerMessage is the number of bytes of stream per message.
func (s *DriverStream) PerMessage() int64 { return int64(s.Transfers / s.Msgs) }

// DriverAddress is the target address of the recorded sender link.
const DriverAddress = "bench-queue"

// DriverStreams returns the recorded streams, built once: small and
// medium, each unsettled and pre-settled.
var DriverStreams = sync.OnceValues(func() ([]*DriverStream, error) {
	var out []*DriverStream
	for _, w := range Workloads() {
		if w.Name != "small" && w.Name != "medium" {
			continue
		}
		for _, settled := range []bool{false, true} {
			s := RecordStream(w, DriverMsgs, settled)
			if len(w.AMQP)+64 > driverMaxFrame {
				return nil, fmt.Errorf("%s: message does not fit one frame", s.Name)
			}
			out = append(out, s)
		}
	}
	return out, nil
})

// RecordStream writes the stream a client sends to deliver w's message n
// times on one link.
func RecordStream(w *Workload, n int, settled bool) *DriverStream {
	s := &DriverStream{Name: w.Name, Workload: w, Settled: settled, Msgs: n, Ends: make([]int, n)}
	if settled {
		s.Name += "-presettled"
	} else {
		s.Name += "-unsettled"
	}
	var b []byte
	putType := func(typ uint8, perf []byte, payload []byte) {
		start := len(b)
		b = frame.BeginFrame(b, typ, 0)
		b = append(append(b, perf...), payload...)
		b = frame.EndFrame(b, start)
	}
	put := func(perf []byte, payload []byte) { putType(frame.TypeAMQP, perf, payload) }
	b = frame.AppendProtocolHeader(b, frame.HeaderSASL)
	putType(frame.TypeSASL, frame.AppendSASLInit(nil, frame.SASLInit{Mechanism: []byte("ANONYMOUS")}), nil)
	b = frame.AppendProtocolHeader(b, frame.HeaderAMQP)
	put(appendDriverOpen(nil), nil)
	put(appendDriverBegin(nil), nil)
	put(appendDriverAttach(nil, settled), nil)
	first := len(b)
	s.Setup = first
	var perf []byte
	tag := make([]byte, 4)
	for i := range n {
		tag[0], tag[1], tag[2], tag[3] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
		perf = appendDriverTransfer(perf[:0], uint32(i), tag, settled)
		put(perf, w.AMQP)
		s.Ends[i] = len(b)
	}
	s.Transfers = len(b) - first
	put(frame.AppendDetach(nil, frame.Detach{Handle: 0, Closed: true}), nil)
	put(frame.AppendEnd(nil, frame.End{}), nil)
	put(frame.AppendClose(nil, frame.Close{}), nil)
	s.Data = b
	return s
}

// Receiver is one protocol engine as the receiver of a recorded stream:
// Proton-C's connection driver (build tag proton) or amqpsax's engine.
type Receiver struct {
	Name string
	// New readies the receiver for s; with check, it compares every
	// message it receives with the workload's, byte for byte (the test
	// does, the benchmark does not).
	New func(s *DriverStream, check bool) (ReceiverRun, error)
}

// ReceiverRun is a Receiver made ready for one stream.
type ReceiverRun struct {
	// Run receives n messages: n/Msgs whole connections of the stream,
	// then a prefix of one that delivers the rest.
	Run func(n int) (ReceiverResult, error)
	// Close frees what New allocated.
	Close func()
}

// ReceiverResult is what a Run saw.
type ReceiverResult struct {
	Delivered  int   // complete messages handed to the application
	Bytes      int64 // their bytes
	Mismatched int   // messages that differed from the workload's (check only)
	Conns      int   // connections run
	Out        int64 // bytes the receiver wrote (to the bit bucket)
}

// Receivers lists the receivers; driver_proton.go and engine.go add
// theirs.
var Receivers []Receiver

// Check reports whether r is what receiving n messages of s gives.
func (r ReceiverResult) Check(s *DriverStream, n int) error {
	want := int64(n) * int64(len(s.Workload.AMQP))
	if r.Delivered != n || r.Bytes != want || r.Mismatched != 0 {
		return fmt.Errorf("%s: delivered %d messages of %d bytes in all, %d differing; want %d messages, %d bytes",
			s.Name, r.Delivered, r.Bytes, r.Mismatched, n, want)
	}
	return nil
}
