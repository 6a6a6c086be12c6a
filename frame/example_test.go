package frame_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
)

// orderMessage builds a message whose application property "region" is
// region, with a data body of n bytes.
func orderMessage(region string, n int) []byte {
	b := encode.AppendDescribed(nil)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorApplicationProperties))
	start := len(b)
	b = encode.BeginMap(b)
	b = encode.AppendString(b, "region")
	b = encode.AppendString(b, region)
	b = encode.EndMap(b, start, 1)
	b = encode.AppendDescribed(b)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorData))
	return encode.AppendBinary(b, make([]byte, n))
}

// connection returns what a client sends a broker: the AMQP header,
// open, begin, attach, then three messages, the last split over two
// transfers (more set on the first), with a heartbeat between them.
func connection() io.Reader {
	b := frame.AppendProtocolHeader(nil, frame.HeaderAMQP)
	perf := func(channel uint16, body []byte, payload []byte) {
		start := len(b)
		b = frame.BeginFrame(b, frame.TypeAMQP, channel)
		b = append(append(b, body...), payload...)
		b = frame.EndFrame(b, start)
	}
	perf(0, frame.AppendOpen(nil, frame.Open{ContainerID: []byte("client")}), nil)
	perf(0, frame.AppendBegin(nil, frame.Begin{IncomingWindow: 100, OutgoingWindow: 100}), nil)
	perf(0, frame.AppendAttach(nil, frame.Attach{Name: []byte("orders"), Role: frame.RoleSender,
		Target: frame.Some(frame.Target{Address: []byte("orders")})}), nil)
	for i, region := range []string{"eu-west", "us-east", "eu-west"} {
		t := frame.Transfer{DeliveryID: frame.Some(uint32(i)), DeliveryTag: []byte{byte(i)},
			MessageFormat: frame.Some[uint32](0)}
		msg := orderMessage(region, 600)
		if i == 2 {
			t.More = true
			perf(0, frame.AppendTransfer(nil, t), msg[:400])
			perf(0, nil, nil) // a heartbeat
			perf(0, frame.AppendTransfer(nil, frame.Transfer{Settled: true}), msg[400:])
			continue
		}
		perf(0, frame.AppendTransfer(nil, t), msg)
	}
	return bytes.NewReader(b)
}

// A broker's frame loop: read frames off the connection, join each
// delivery's transfers, and route every message on one application
// property, reading nothing else of it. Nothing is copied for a message
// that fits in one frame, and nothing is allocated per frame.
func Example() {
	conn := connection() // a net.Conn
	r := frame.NewReader(conn)
	var a frame.Assembler
	for {
		f, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		if d, _ := frame.Performative(f.Body); d != amqpsax.DescriptorTransfer {
			continue // protocol headers, heartbeats, other performatives
		}
		t, payload, err := frame.ParseTransfer(f.Body)
		if err != nil {
			log.Fatal(err)
		}
		d, done, err := a.Add(f.Channel, t, payload)
		if err != nil || !done {
			continue
		}
		s, err := message.Scan(d.Payload)
		if err != nil {
			log.Fatal(err)
		}
		v, _ := message.Lookup(s.ApplicationProperties, "region")
		fmt.Printf("delivery %d (%d frames, settled %v) → queue %s\n", d.DeliveryID, d.Frames, d.Settled, v.Bytes())
	}
	// Output:
	// delivery 0 (1 frames, settled false) → queue eu-west
	// delivery 1 (1 frames, settled false) → queue us-east
	// delivery 2 (2 frames, settled true) → queue eu-west
}

// Reading a captured connection: protocol headers come in place, between
// the frames.
func ExampleReader_Next() {
	data, err := os.ReadFile("../testdata/proton/conn-server.bin")
	if err != nil {
		log.Fatal(err)
	}
	r := frame.NewReader(bytes.NewReader(data))
	for range 6 {
		f, err := r.Next()
		if err != nil {
			log.Fatal(err)
		}
		if f.IsHeader {
			fmt.Printf("%4d header %v\n", f.Offset, f.Header)
			continue
		}
		d, _ := frame.Performative(f.Body)
		fmt.Printf("%4d frame type %d channel %d: %v\n", f.Offset, f.Type, f.Channel, d)
	}
	// Output:
	//    0 header AMQP sasl 1.0.0
	//    8 frame type 1 channel 0: amqp:sasl-mechanisms:list
	//   36 frame type 1 channel 0: amqp:sasl-outcome:list
	//   52 header AMQP amqp 1.0.0
	//   60 frame type 0 channel 0: amqp:open:list
	//  109 frame type 0 channel 0: amqp:begin:list
}

// A transfer written by Qpid Proton: a delivery-id of 0 is told from an
// absent one by Has.
func ExampleParseTransfer() {
	body, _ := hex.DecodeString("005314c00a054343a0037072654341" + // the transfer
		"0053704500537345005377a10a707265736574746c6564") // its message
	t, payload, err := frame.ParseTransfer(body)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("handle %d, delivery-id %v, tag %q, settled %v\n", t.Handle, t.DeliveryID, t.DeliveryTag, t.Settled)
	fmt.Printf("more %v, rcv-settle-mode %v, payload % x\n", t.More, t.RcvSettleMode, payload)
	// Output:
	// handle 0, delivery-id 0, tag "pre", settled true
	// more false, rcv-settle-mode absent, payload 00 53 70 45 00 53 73 45 00 53 77 a1 0a 70 72 65 73 65 74 74 6c 65 64
}

// A field the spec marks multiple holds one symbol or an array of them;
// All reads them either way, as views, without allocating.
func ExampleSymbols_All() {
	o := frame.Open{ContainerID: []byte("c"),
		OfferedCapabilities: frame.Symbols(frame.AppendSymbols(nil, "ANONYMOUS-RELAY", "DELAYED_DELIVERY"))}
	o, err := frame.ParseOpen(frame.AppendOpen(nil, o))
	if err != nil {
		log.Fatal(err)
	}
	for sym := range o.OfferedCapabilities.All() {
		fmt.Printf("%s\n", sym)
	}
	fmt.Println(o.OfferedCapabilities.Contains("ANONYMOUS-RELAY"), o.MaxFrameSize)
	// Output:
	// ANONYMOUS-RELAY
	// DELAYED_DELIVERY
	// true absent
}

// Writing a frame: the performative's fields in their smallest encodings,
// those left at zero or the spec's default left out, the size filled in
// at the end.
func ExampleBeginFrame() {
	d := frame.Disposition{Role: frame.RoleReceiver, First: 7, Settled: true,
		State: frame.DeliveryState{Type: frame.StateRejected,
			Error: frame.AMQPError{Condition: []byte("amqp:not-allowed")}}}
	var b []byte
	start := len(b)
	b = frame.BeginFrame(b, frame.TypeAMQP, 1)
	b = frame.AppendDisposition(b, d)
	b = frame.EndFrame(b, start)
	fmt.Printf("% x\n", b)

	f, _ := frame.NewReader(bytes.NewReader(b)).Next()
	got, _ := frame.ParseDisposition(f.Body)
	first, last := got.Range()
	fmt.Println(got.Role, first, last, got.State.Type, got.State.Error.Cond())
	// Output:
	// 00 00 00 31 02 00 00 01 00 53 15 c0 24 05 41 52 07 40 41 00 53 25 c0 19 01 00 53 1d c0 13 01 a3 10 61 6d 71 70 3a 6e 6f 74 2d 61 6c 6c 6f 77 65 64
	// receiver 7 7 rejected amqp:not-allowed
}

// Writing what a receiver sends: a flow that stops link 0 (link-credit 0
// on handle 0, every zero sent because each is an Opt made with Some),
// then one that grants 10, and a disposition that accepts and settles
// deliveries 0 through 4. A field left out of the literal is not sent.
func ExampleAppendFlow() {
	var b []byte
	put := func(body []byte) {
		start := len(b)
		b = frame.BeginFrame(b, frame.TypeAMQP, 0)
		b = append(b, body...)
		b = frame.EndFrame(b, start)
	}
	stop := frame.Flow{
		NextIncomingID: frame.Some[uint32](0), IncomingWindow: 2048,
		NextOutgoingID: 0, OutgoingWindow: 2048,
		Handle: frame.Some[uint32](0), DeliveryCount: frame.Some[uint32](0),
		LinkCredit: frame.Some[uint32](0),
	}
	put(frame.AppendFlow(nil, stop))
	grant := stop
	grant.LinkCredit = frame.Some[uint32](10)
	put(frame.AppendFlow(nil, grant))
	put(frame.AppendDisposition(nil, frame.Disposition{
		Role: frame.RoleReceiver, First: 0, Last: frame.Some[uint32](4), Settled: true,
		State: frame.DeliveryState{Type: frame.StateAccepted},
	}))

	r := frame.NewReader(bytes.NewReader(b))
	for {
		f, err := r.Next()
		if err != nil {
			break
		}
		switch d, _ := frame.Performative(f.Body); d {
		case amqpsax.DescriptorFlow:
			fl, _ := frame.ParseFlow(f.Body)
			fmt.Println("flow: handle", fl.Handle, "delivery-count", fl.DeliveryCount, "link-credit", fl.LinkCredit,
				"available", fl.Available)
		case amqpsax.DescriptorDisposition:
			d, _ := frame.ParseDisposition(f.Body)
			first, last := d.Range()
			fmt.Println("disposition:", d.Role, first, "to", last, d.State.Type, "settled", d.Settled)
		}
	}
	// Output:
	// flow: handle 0 delivery-count 0 link-credit 0 available absent
	// flow: handle 0 delivery-count 0 link-credit 10 available absent
	// disposition: receiver 0 to 4 accepted settled true
}

// ExampleSplit splits bytes held by the caller, as an event loop or a
// sans-IO engine holds them, where they lie: each frame is a view into the
// slice, and a slice that ends inside a frame gives n 0 until the rest is
// there.
func ExampleSplit() {
	stream, _ := io.ReadAll(connection())
	held := stream[:100] // what the first read brought
	rest := stream[100:]
	for {
		f, n, err := frame.Split(held, 0)
		if err != nil {
			log.Fatal(err) // a frame header that cannot be right: close the connection
		}
		if n == 0 { // a prefix of a frame: keep it, read more
			if len(rest) == 0 {
				break
			}
			held = append(held, rest...) // the next read
			rest = nil
			continue
		}
		switch {
		case f.IsHeader:
			fmt.Println(f.Header)
		case f.IsHeartbeat():
			fmt.Println("heartbeat")
		default:
			d, _ := frame.Performative(f.Body)
			fmt.Println(d.Name(), f.Size)
		}
		held = held[n:]
	}
	fmt.Println(len(held), "bytes left")
	// Output:
	// AMQP amqp 1.0.0
	// amqp:open:list 22
	// amqp:begin:list 20
	// amqp:attach:list 41
	// amqp:transfer:list 651
	// amqp:transfer:list 652
	// amqp:transfer:list 423
	// heartbeat
	// amqp:transfer:list 250
	// 0 bytes left
}

// A receiver's loop, as an engine runs it: split the bytes where they
// lie, read each transfer's head on the fast path (ParseTransfer when it
// says no), and join each link's deliveries with the Join kept beside the
// link. Nothing is copied for a message in one frame.
func ExampleTransferHead_Parse() {
	stream, _ := io.ReadAll(connection())
	var join frame.Join // kept with the link: this connection attaches handle 0 only
	var h frame.TransferHead
	for b := stream; len(b) > 0; {
		f, n, err := frame.Split(b, 0)
		if err != nil || n == 0 {
			log.Fatal("cut or bad frame")
		}
		b = b[n:]
		if f.IsHeader {
			continue
		}
		if d, _ := frame.Performative(f.Body); d != amqpsax.DescriptorTransfer {
			continue
		}
		payload, ok := h.Parse(f.Body)
		if ok && h.Handle != 0 {
			log.Fatal("transfer on a link not attached") // an engine detaches or closes
		}
		if ok && !h.More && !join.InProgress() {
			// A delivery in one frame: the payload is a view of it.
			fmt.Printf("delivery %d: %d bytes in one frame\n", h.DeliveryID, len(payload))
			continue
		}
		t, payload, err := frame.ParseTransfer(f.Body) // or h.Transfer() when ok
		if err != nil || t.Handle != 0 {
			log.Fatal("bad transfer")
		}
		d, done, err := join.Add(&t, payload, 0)
		if err != nil {
			log.Fatal(err)
		}
		if done {
			fmt.Printf("delivery %d: %d bytes in %d frames, settled %v\n", d.DeliveryID, len(d.Payload), d.Frames, d.Settled)
		}
	}
	// Output:
	// delivery 0: 631 bytes in one frame
	// delivery 1: 631 bytes in one frame
	// delivery 2: 631 bytes in 2 frames, settled true
}
