package interop

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/stream"
)

// Frame is one frame of a recorded stream, read with amqpsax's public
// packages only.
type Frame struct {
	Offset       int
	Type         uint8
	Channel      uint16
	Performative amqpsax.Descriptor // 0 for an empty frame
	Body         []byte             // performative then payload
	Payload      []byte             // after the performative
	fields       []byte             // the performative's list, whole
}

// Delivery is one message of a stream: the payloads of its transfer
// frames joined.
type Delivery struct {
	Channel uint16
	Handle  uint64
	Frames  int
	Data    []byte
}

// Stream is one direction of a connection, split and decoded.
type Stream struct {
	Frames     []Frame
	Deliveries []Delivery
	// Rejected counts the deliveries this side rejected (disposition
	// ranges with the rejected outcome).
	Rejected int
	// EndedWithError: this side sent an end or close carrying an error.
	EndedWithError bool
}

// Split reads a recorded stream: protocol headers, then frames (AMQP 1.0
// part 2 §2.3.1). Every performative must decode with dispatch and with a
// full stream.Cursor walk; deliveries are joined from their transfer
// frames (part 2 §2.6.14) and every message must decode the same two ways.
func Split(data []byte) (*Stream, error) {
	s := &Stream{}
	var d dispatch.Decoder
	open := map[[2]uint64]*Delivery{}
	for off := 0; off < len(data); {
		if bytes.HasPrefix(data[off:], []byte("AMQP")) {
			off += 8
			continue
		}
		if off+8 > len(data) {
			return s, fmt.Errorf("stream ends inside a frame header at %d", off)
		}
		size := int(binary.BigEndian.Uint32(data[off:]))
		doff := int(data[off+4]) * 4
		if size < 8 || doff < 8 || doff > size || off+size > len(data) {
			return s, fmt.Errorf("bad frame at %d: size %d, data offset %d", off, size, doff)
		}
		f := Frame{Offset: off, Type: data[off+5], Channel: binary.BigEndian.Uint16(data[off+6:]), Body: data[off+doff : off+size]}
		off += size
		if len(f.Body) == 0 {
			s.Frames = append(s.Frames, f)
			continue
		}
		// The performative, with dispatch and with a full stream.Cursor
		// walk; the payload is a piece of a message, decoded once the
		// delivery's pieces are joined.
		n, err := d.Decode(f.Body, amqpsax.NopHandler{})
		if err != nil {
			return s, fmt.Errorf("frame at %d: dispatch: %w", f.Offset, err)
		}
		var c stream.Cursor
		c.Reset(f.Body[:n])
		if err := walkAll(&c); err != nil {
			return s, fmt.Errorf("frame at %d: stream: %w", f.Offset, err)
		}
		c.Reset(f.Body[:n])
		if !c.Next() {
			return s, fmt.Errorf("frame at %d: no performative: %v", f.Offset, c.Err())
		}
		desc, _, ok := c.Descriptor()
		if !ok {
			return s, fmt.Errorf("frame at %d: the performative is not a described list", f.Offset)
		}
		f.Performative = desc
		perf := c.Raw()
		f.Payload = f.Body[len(perf):]
		c.Reset(perf)
		c.Next()
		c.Enter()
		c.Next() // descriptor
		c.Next() // the list
		f.fields = c.Raw()
		s.Frames = append(s.Frames, f)

		switch desc {
		case amqpsax.DescriptorTransfer:
			handle, _ := field(f.fields, 0)
			more, _ := field(f.fields, 5)
			aborted, _ := field(f.fields, 9)
			key := [2]uint64{uint64(f.Channel), handle.u}
			dl := open[key]
			if dl == nil {
				dl = &Delivery{Channel: f.Channel, Handle: handle.u}
				open[key] = dl
			}
			dl.Frames++
			dl.Data = append(dl.Data, f.Payload...)
			if aborted.b {
				delete(open, key)
			} else if !more.b {
				delete(open, key)
				if err := d.DecodeAll(dl.Data, amqpsax.NopHandler{}); err != nil {
					return s, fmt.Errorf("message ending at frame %d: dispatch: %w", f.Offset, err)
				}
				var mc stream.Cursor
				mc.Reset(dl.Data)
				if err := walkAll(&mc); err != nil {
					return s, fmt.Errorf("message ending at frame %d: stream: %w", f.Offset, err)
				}
				s.Deliveries = append(s.Deliveries, *dl)
			}
		case amqpsax.DescriptorDisposition:
			role, _ := field(f.fields, 0)
			first, _ := field(f.fields, 1)
			last, hasLast := field(f.fields, 2)
			if !hasLast {
				last = first
			}
			if role.b && stateIs(f.fields, 4, amqpsax.DescriptorRejected) {
				s.Rejected += int(last.u-first.u) + 1
			}
		case amqpsax.DescriptorEnd, amqpsax.DescriptorClose:
			if _, has := field(f.fields, 0); has {
				s.EndedWithError = true
			}
		}
	}
	return s, nil
}

// fieldValue is what the checks need of a performative field.
type fieldValue struct {
	u uint64
	b bool
}

// field reads field i of a performative's list: a number or a boolean,
// and whether it is there (not null, not past the end).
func field(list []byte, i int) (fieldValue, bool) {
	var c stream.Cursor
	c.Reset(list)
	if !c.Next() || !c.Enter() {
		return fieldValue{}, false
	}
	for j := 0; c.Next(); j++ {
		if j < i {
			continue
		}
		switch c.Kind() {
		case amqpsax.KindNull:
			return fieldValue{}, false
		case amqpsax.KindBool:
			return fieldValue{b: c.Bool()}, true
		case amqpsax.KindUbyte, amqpsax.KindUshort, amqpsax.KindUint, amqpsax.KindUlong:
			return fieldValue{u: c.Uint()}, true
		}
		return fieldValue{}, true
	}
	return fieldValue{}, false
}

// stateIs: field i of the list is a described value with descriptor d.
func stateIs(list []byte, i int, d amqpsax.Descriptor) bool {
	var c stream.Cursor
	c.Reset(list)
	if !c.Next() || !c.Enter() {
		return false
	}
	for j := 0; c.Next(); j++ {
		if j == i {
			got, _, ok := c.Descriptor()
			return ok && got == d
		}
	}
	return false
}

// walkAll visits every value under the cursor, entering every compound
// and reading every scalar, as a full decode does.
func walkAll(c *stream.Cursor) error {
	for c.Next() {
		switch c.Kind() {
		case amqpsax.KindList, amqpsax.KindMap, amqpsax.KindArray, amqpsax.KindDescribed:
			if !c.Enter() {
				return c.Err()
			}
			if err := walkAll(c); err != nil {
				return err
			}
			c.Exit()
		case amqpsax.KindBinary, amqpsax.KindString, amqpsax.KindSymbol:
			c.Bytes()
		case amqpsax.KindUUID:
			c.UUID()
		default:
			c.Raw()
		}
	}
	return c.Err()
}

// Comparison is what a broker did to the messages of a connection.
type Comparison struct {
	Sent, Received   int
	Identical        int // bare message byte-identical (message.Scan on both sides)
	WholeIdentical   int // refused by message.Scan, whole payload identical
	PropertiesAdded  int // RabbitMQ: no properties sent, properties with a subject received
	BodyReversed     int // RabbitMQ: several body sections, received in reverse order
	EmptyDataAdded   int // RabbitMQ: no body sent, one empty data section received
	ScanRefused      int // deliveries message.Scan refuses (both directions)
	Unmatched        []string
	NotDelivered     int // sent, never received (rejected, or on a connection the broker ended)
	MayBeNotReceived int // rejected by the receiver, or sent on a connection ended with an error
}

// Compare matches the messages the broker delivered (server streams) with
// those the clients sent (client streams) of a client's connections.
// A delivered message must equal a sent one: its bare message (message.Scan
// on both sides, Sections.Bare) byte for byte, or, through RabbitMQ, up to
// one of its documented rewrites (doc/peers.md). A message message.Scan
// refuses must be identical whole.
func Compare(client, server []*Stream, rabbitmq bool) Comparison {
	var cmp Comparison
	type sentMsg struct {
		data []byte
		sc   message.Sections
		ok   bool
		used bool
	}
	var sent []*sentMsg
	for i, cs := range client {
		for _, dl := range cs.Deliveries {
			m := &sentMsg{data: dl.Data}
			sc, err := message.Scan(dl.Data)
			m.sc, m.ok = sc, err == nil
			if err != nil {
				cmp.ScanRefused++
			}
			sent = append(sent, m)
		}
		cmp.MayBeNotReceived += server[i].Rejected + cs.Rejected
		if server[i].EndedWithError {
			cmp.MayBeNotReceived += len(cs.Deliveries)
		}
	}
	cmp.Sent = len(sent)
	for _, ss := range server {
		for _, dl := range ss.Deliveries {
			cmp.Received++
			got, err := message.Scan(dl.Data)
			if err != nil {
				cmp.ScanRefused++
				found := false
				for _, m := range sent {
					if bytes.Equal(m.data, dl.Data) {
						m.used, found = true, true
						cmp.WholeIdentical++
						break
					}
				}
				if !found {
					cmp.Unmatched = append(cmp.Unmatched, fmt.Sprintf("%x (message.Scan: %v)", dl.Data, err))
				}
				continue
			}
			var match *sentMsg
			for _, m := range sent {
				if m.ok && sameBare(m.sc, got) {
					match = m
					cmp.Identical++
					break
				}
			}
			if match == nil && rabbitmq {
				for _, m := range sent {
					if !m.ok || !bytes.Equal(m.sc.ApplicationProperties, got.ApplicationProperties) {
						continue
					}
					propsOK := bytes.Equal(m.sc.Properties, got.Properties) ||
						(m.sc.Properties == nil && got.Properties != nil && addedProperties(got.Properties))
					emptyData := m.sc.Body == nil && bytes.Equal(got.Body, []byte{0x00, 0x53, 0x75, 0xa0, 0x00})
					reversed := !emptyData && bytes.Equal(reverseSections(m.sc.Body), got.Body)
					if !propsOK || !(emptyData || reversed || bytes.Equal(m.sc.Body, got.Body)) {
						continue
					}
					match = m
					switch {
					case emptyData:
						cmp.EmptyDataAdded++
					case reversed && !bytes.Equal(m.sc.Body, got.Body):
						cmp.BodyReversed++
					}
					if !bytes.Equal(m.sc.Properties, got.Properties) {
						cmp.PropertiesAdded++
					}
					break
				}
			}
			if match == nil {
				cmp.Unmatched = append(cmp.Unmatched, fmt.Sprintf("%x", dl.Data))
				continue
			}
			match.used = true
		}
	}
	for _, m := range sent {
		if !m.used {
			cmp.NotDelivered++
		}
	}
	return cmp
}

// sameBare: the bare messages are byte-identical. Sections.Bare is nil
// when the bare message's sections do not lie together (uAMQP writes the
// footer and delivery-annotations between application-properties and the
// body): then each of its sections must be identical.
func sameBare(a, b message.Sections) bool {
	if a.Bare != nil || b.Bare != nil {
		return a.Bare != nil && bytes.Equal(a.Bare, b.Bare)
	}
	return a.Body != nil && bytes.Equal(a.Properties, b.Properties) &&
		bytes.Equal(a.ApplicationProperties, b.ApplicationProperties) && bytes.Equal(a.Body, b.Body)
}

// addedProperties: the properties section RabbitMQ 3.10 adds to a message
// sent without one: every field null but the subject (the routing key).
func addedProperties(sec []byte) bool {
	p, err := message.ParseProperties(sec)
	return err == nil && p.Subject != nil && p.To == nil && p.UserID == nil && p.ReplyTo == nil
}

// reverseSections returns the body sections of body in reverse order.
func reverseSections(body []byte) []byte {
	var secs [][]byte
	var c stream.Cursor
	c.Reset(body)
	for c.Next() {
		secs = append(secs, c.Raw())
	}
	var out []byte
	for i := len(secs) - 1; i >= 0; i-- {
		out = append(out, secs[i]...)
	}
	return out
}
