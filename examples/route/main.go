// Command route shows what a broker does with a message it routes: read
// the few fields the routing decision needs — header durable and
// priority, properties message-id, to and subject, and the application
// property "region" — skip everything else, the body included, without
// reading it, decide, and forward the message with its delivery-count
// raised and an annotation added, the bare message copied byte for byte.
//
// It reads the fields two ways, which must agree:
//
//   - withCursor drives a stream.Cursor over the sections (Next, Descriptor,
//     Enter, Elem, Lookup): the lowest level, for code that wants nothing
//     but the cursor;
//   - withMessage uses package message (Scan, ParseHeader,
//     ParseProperties, Lookup), which does the same walk for you.
//
// Then forward splices the message with message.Append.
//
// Run it on the bundled sample (written by gen.go with package encode: a
// header, message annotations, properties, application properties with
// "region" and a JSON data body), or on a file of encoded message bytes:
//
//	go run ./examples/route [file]
package main

//go:generate go run gen.go

import (
	"bytes"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/stream"
	"github.com/google/uuid"
)

//go:embed sample.amqp
var sample []byte

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "route:", err)
		os.Exit(1)
	}
}

// run routes the message in the file args[0], or the bundled sample when
// there is no argument, and prints what it read, the decision and the
// forwarded message.
func run(w io.Writer, args []string) error {
	name, msg := "sample.amqp", sample
	switch len(args) {
	case 0:
	case 1:
		name = args[0]
		var err error
		if msg, err = os.ReadFile(name); err != nil {
			return err
		}
	default:
		return errors.New("usage: route [file]")
	}
	fmt.Fprintf(w, "%s, %d bytes\n", name, len(msg))

	a, err := withCursor(msg)
	if err != nil {
		return fmt.Errorf("stream cursor: %w", err)
	}
	fmt.Fprintf(w, "stream cursor:   %s\n", a)
	b, err := withMessage(msg)
	if err != nil {
		return fmt.Errorf("package message: %w", err)
	}
	fmt.Fprintf(w, "package message: %s\n", b)
	if a != b {
		return errors.New("the two readings differ")
	}

	fmt.Fprintln(w, decide(a))

	f, err := forward(msg)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "forwarded, %d bytes: delivery-count %d -> %d, message annotation %s = %q added\n",
		len(f.out), f.count, f.count2, routedBy, "amqpsax")
	fmt.Fprintf(w, "bare message (%d bytes) byte-identical: %t\n", f.bare, f.identical)
	return nil
}

// fields are what the routing decision needs. (The strings are copies, for
// printing and comparing; a broker on its hot path would keep the []byte
// views both ways of reading hand out, and allocate nothing.)
type fields struct {
	Durable   bool
	Priority  uint8
	MessageID string // see idString; "" when absent
	To        string
	Subject   string
	Region    string // "" when absent or not a string
	BodyBytes int    // size of the body sections, which are skipped, not read
}

func (f fields) String() string {
	id := f.MessageID
	if id == "" {
		id = "none"
	}
	return fmt.Sprintf("durable=%t priority=%d message-id=%s to=%q subject=%q region=%q body=%d bytes (skipped)",
		f.Durable, f.Priority, id, f.To, f.Subject, f.Region, f.BodyBytes)
}

// idString formats a message-id, whichever of its four types it has: a
// ulong in decimal, a uuid in canonical form, a binary in hex after 0x, a
// string quoted; "" when there is none.
func idString(k amqpsax.Kind, u uint64, id uuid.UUID, b []byte) string {
	switch k {
	case amqpsax.KindUlong:
		return strconv.FormatUint(u, 10)
	case amqpsax.KindUUID:
		return id.String()
	case amqpsax.KindBinary:
		return "0x" + hex.EncodeToString(b)
	case amqpsax.KindString:
		return strconv.Quote(string(b))
	}
	return ""
}

// withCursor reads the fields with a stream.Cursor alone. Each section is
// a described value; the cursor reads its descriptor without entering it,
// enters only the three sections that matter, moves to the fields it
// wants with Elem and Lookup, and skips the rest — message annotations and
// body are passed over by their size, in O(1), never read.
func withCursor(msg []byte) (fields, error) {
	f := fields{Priority: 4} // the header's default
	var c stream.Cursor
	c.Reset(msg)
	for c.Next() {
		d, _, ok := c.Descriptor()
		if !ok {
			return f, fmt.Errorf("value at offset %d is not a section", c.Offset())
		}
		switch d {
		case amqpsax.DescriptorHeader:
			if enterSection(&c) {
				if c.Seek(0) && c.Kind() != amqpsax.KindNull {
					f.Durable = c.Bool() // a wrong type is an error in c.Err
				}
				if c.Seek(1) && c.Kind() != amqpsax.KindNull {
					f.Priority = uint8(c.Uint())
				}
				exitSection(&c)
			}
		case amqpsax.DescriptorProperties:
			if enterSection(&c) {
				if c.Seek(0) {
					f.MessageID = cursorID(&c)
				}
				if c.Seek(2) {
					f.To = cursorText(&c)
				}
				if c.Seek(3) {
					f.Subject = cursorText(&c)
				}
				exitSection(&c)
			}
		case amqpsax.DescriptorApplicationProperties:
			if enterSection(&c) {
				if c.SeekKey("region") {
					f.Region = cursorText(&c)
				}
				exitSection(&c)
			}
		case amqpsax.DescriptorData, amqpsax.DescriptorAMQPSequence, amqpsax.DescriptorAMQPValue:
			f.BodyBytes += len(c.Raw()) // found by the sizes, not by reading
		}
		// Next skips whatever was not entered.
	}
	return f, c.Err()
}

// enterSection moves into the list or map of the section the cursor is
// on: into the described value, onto its value (EnterValue), into it.
func enterSection(c *stream.Cursor) bool { return c.EnterValue() && c.Enter() }

// exitSection leaves the section enterSection entered, skipping the
// fields not read.
func exitSection(c *stream.Cursor) {
	c.Exit() // the list or map
	c.Exit() // the described value
}

// cursorText returns the current value when it is a string or symbol
// (peers send addresses as either), else "".
func cursorText(c *stream.Cursor) string {
	if k := c.Kind(); k == amqpsax.KindString || k == amqpsax.KindSymbol {
		return string(c.Bytes())
	}
	return ""
}

// cursorID formats the current value as a message-id.
func cursorID(c *stream.Cursor) string {
	switch c.Kind() {
	case amqpsax.KindUlong:
		return idString(amqpsax.KindUlong, c.Uint(), uuid.UUID{}, nil)
	case amqpsax.KindUUID:
		return idString(amqpsax.KindUUID, 0, c.UUID(), nil)
	case amqpsax.KindBinary, amqpsax.KindString:
		return idString(c.Kind(), 0, uuid.UUID{}, c.Bytes())
	}
	return idString(amqpsax.KindNull, 0, uuid.UUID{}, nil)
}

// withMessage reads the same fields with package message: Scan finds the
// sections (skipping each by its size), ParseHeader and ParseProperties
// read those two, and Lookup finds the application property, whose
// encoded value a cursor then reads.
func withMessage(msg []byte) (fields, error) {
	var f fields
	s, err := message.Scan(msg)
	if err != nil {
		return f, err
	}
	h, err := message.ParseHeader(s.Header)
	if err != nil {
		return f, err
	}
	p, err := message.ParseProperties(s.Properties)
	if err != nil {
		return f, err
	}
	region, err := message.Lookup(s.ApplicationProperties, "region")
	if err != nil {
		return f, err
	}
	f.Durable, f.Priority = h.Durable, h.Priority
	f.MessageID = idString(p.MessageID.Kind, p.MessageID.Ulong, p.MessageID.UUID, p.MessageID.Bytes)
	f.To, f.Subject = string(p.To), string(p.Subject)
	f.Region = string(region.Bytes()) // "" when absent or null
	f.BodyBytes = len(s.Body)
	return f, nil
}

// decide is the routing decision: the queue is the address (to) with the
// region appended, the lane follows the priority (above the default 4 is
// express), and a durable message is stored before it is settled.
func decide(f fields) string {
	if f.To == "" {
		return "route to queue dead-letter because the message has no address (to)"
	}
	queue, why := f.To, "to="+f.To
	if f.Region != "" {
		queue += "." + f.Region
		why += ", region=" + f.Region
	}
	lane := "normal"
	if f.Priority > 4 {
		lane = "express"
	}
	store := "in memory, durable=false"
	if f.Durable {
		store = "stored before settling, durable=true"
	}
	return fmt.Sprintf("route to queue %s because %s; %s lane because priority=%d; %s",
		queue, why, lane, f.Priority, store)
}

// routedBy is the annotation the broker adds when it forwards.
const routedBy = "x-opt-routed-by"

// forwarded is the result of forward.
type forwarded struct {
	out           []byte
	count, count2 uint32 // delivery-count before and after
	bare          int    // length of the bare message
	identical     bool   // the bare message is byte-identical
}

// forward splices msg as a broker forwards it: delivery-count + 1 (kept at
// the largest uint rather than wrapped to 0) and the message annotation
// x-opt-routed-by = "amqpsax"; the bare message (properties, application
// properties, body), which the sender may have signed, is copied byte for
// byte, never decoded. It then scans the result to show that the bare
// message is unchanged.
func forward(msg []byte) (forwarded, error) {
	var f forwarded
	s, err := message.Scan(msg)
	if err != nil {
		return f, err
	}
	h, err := message.ParseHeader(s.Header)
	if err != nil {
		return f, err
	}
	f.count = h.DeliveryCount
	h.AddDelivery() // saturates at the largest uint
	ch := message.Changes{
		Header: &h,
		MessageAnnotations: message.Edit{Set: []message.Entry{
			{Key: message.SymbolKey(routedBy), Value: encode.AppendString(nil, "amqpsax")},
		}},
	}
	if f.out, err = message.Append(make([]byte, 0, len(msg)+64), s, &ch); err != nil {
		return f, err
	}
	s2, err := message.Scan(f.out)
	if err != nil {
		return f, err
	}
	h2, err := message.ParseHeader(s2.Header)
	if err != nil {
		return f, err
	}
	f.count2 = h2.DeliveryCount
	f.bare = len(s.Bare)
	f.identical = bytes.Equal(s.Bare, s2.Bare)
	return f, nil
}
