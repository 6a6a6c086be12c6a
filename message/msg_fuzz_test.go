package message

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/internal/corpus"
	"github.com/amqpsax/amqpsax/stream"
	"github.com/google/uuid"
)

// FuzzMessage: Decode never panics and its errors are *amqpsax.Error
// within the input, a cut only where Scan says cut; whatever it accepts,
// Append writes back and Decode reads again to the same message, and the
// header and properties it reads are what ParseHeader and ParseProperties
// read. Then the same bytes drive a generator of messages built with a
// Values: decode(append(m)) == m. Every header and properties appended is
// written as through composite.Writer.
func FuzzMessage(f *testing.F) {
	for _, e := range corpus.Load(f, "messages.jsonl") {
		if len(e.Data) < 4096 {
			f.Add(e.Data)
		}
	}
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	// compounds, for the flat check
	f.Add([]byte{0xe0, 0x05, 0x02, 0xa1, 0x01, 'a', 0x00})
	f.Add([]byte{0xc0, 0x06, 0x03, 0x56, 0x01, 0x45, 0x54, 0x07})
	f.Add([]byte{0xd1, 0, 0, 0, 0x0b, 0, 0, 0, 0x02, 0xa3, 0x01, 'k', 0xb1, 0, 0, 0, 0x01, 'v'})
	f.Add([]byte{0xf0, 0, 0, 0, 0x0d, 0, 0, 0, 0x01, 0x81, 0, 0, 0, 0, 0, 0, 0, 0x01})
	var m, m2 Message
	var vs Values
	f.Fuzz(func(t *testing.T, data []byte) {
		err := m.Decode(data)
		_, serr := Scan(data)
		if err != nil {
			checkErr(t, err, len(data))
			if errors.Is(err, io.ErrUnexpectedEOF) != errors.Is(serr, io.ErrUnexpectedEOF) {
				t.Fatalf("Decode: %v; Scan: %v", err, serr)
			}
			if m.Header != nil || m.Properties != nil || m.ApplicationProperties.Present() || m.Body.Kind != BodyNone {
				t.Fatal("a message left after an error")
			}
		} else {
			s, _ := Scan(data)
			sameFields(t, s.Header)
			sameFields(t, s.Properties)
			roundTrip(t, &m, &m2)
		}

		// What the flat check lets through, the full walk does.
		if len(data) > 0 && flat(data) {
			var d dispatch.Decoder
			if n, err := d.Decode(data, amqpsax.NopHandler{}); err != nil || n != len(data) {
				t.Fatalf("flat passes %x, dispatch: %d, %v", data, n, err)
			}
		}

		// Build a message from the bytes and read it back.
		vs.Reset()
		built := generate(&vs, data)
		roundTrip(t, built, &m2)
	})
}

// roundTrip appends m, decodes that into m2 and checks they hold the same
// message and that appending m2 gives the same bytes; and that m's header
// and properties are written as through composite.Writer (oracle_test.go).
func roundTrip(t *testing.T, m, m2 *Message) {
	t.Helper()
	if h := m.Header; h != nil {
		if got, want := AppendHeader(nil, *h), appendHeaderWriter(nil, *h); !bytes.Equal(got, want) {
			t.Fatalf("AppendHeader %x, through composite.Writer %x", got, want)
		}
	}
	if p := m.Properties; p != nil && writableID(p.MessageID.Kind) && writableID(p.CorrelationID.Kind) {
		if got, _ := AppendProperties(nil, *p); !bytes.Equal(got, appendPropertiesWriter(nil, *p)) {
			t.Fatalf("AppendProperties %x, through composite.Writer %x", got, appendPropertiesWriter(nil, *p))
		}
	}
	out, err := m.Append(nil)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	if err := m2.Decode(out); err != nil {
		t.Fatalf("Decode of Append's %x: %v", out, err)
	}
	if a, b := describe(m), describe(m2); a != b {
		t.Fatalf("round trip:\n%s\n%s", a, b)
	}
	again, err := m2.Append(nil)
	if err != nil || !bytes.Equal(again, out) {
		t.Fatalf("Append again: %x, %v; first %x", again, err, out)
	}
}

// gen reads choices from fuzz bytes, zeros once they run out.
type gen struct{ b []byte }

func (g *gen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

func (g *gen) bytes(n int) []byte {
	n = min(n, len(g.b))
	p := g.b[:n]
	g.b = g.b[n:]
	return p
}

func (g *gen) u64() uint64 {
	var b [8]byte
	copy(b[:], g.bytes(8))
	return binary.BigEndian.Uint64(b[:])
}

// value generates a value of some kind, nested at most depth deep.
func (g *gen) value(vs *Values, depth int) stream.Value {
	switch k := g.byte() % 16; {
	case k == 0:
		return vs.Null()
	case k == 1:
		return vs.Bool(g.byte()&1 == 1)
	case k == 2:
		return vs.Ulong(g.u64() >> (g.byte() % 64))
	case k == 3:
		return vs.Long(int64(g.u64()) >> (g.byte() % 64))
	case k == 4:
		return vs.Int(int32(g.u64()))
	case k == 5:
		return vs.Double(math.Float64frombits(g.u64()))
	case k == 6:
		return vs.Timestamp(int64(g.u64()))
	case k == 7:
		var u uuid.UUID
		copy(u[:], g.bytes(16))
		return vs.UUID(u)
	case k == 8:
		return vs.Binary(g.bytes(int(g.byte()) * 2))
	case k == 9:
		return vs.Symbol(string(g.bytes(int(g.byte() % 40))))
	case k == 10:
		return vs.Char(rune(g.u64() & 0x10ffff))
	case k == 11:
		return vs.Ubyte(g.byte())
	case k >= 12 && depth > 0:
		n := int(g.byte() % 6)
		items := make([]any, n)
		for i := range items {
			items[i] = g.value(vs, depth-1)
		}
		if k == 12 {
			v, _ := vs.Any(items)
			return v
		}
		mp := map[string]any{}
		for i := range items {
			mp[string(g.bytes(int(g.byte()%5)))] = items[i]
		}
		v, _ := vs.Any(mp)
		return v
	}
	return vs.String(string(g.bytes(int(g.byte()) + int(g.byte()))))
}

// entries generates a map section, nil (absent) for some choices.
func (g *gen) entries(vs *Values, symbols bool) Entries {
	n := int(g.byte() % 9)
	if n == 8 {
		return Entries{}
	}
	e := []Field{}
	for range n {
		var key stream.Value
		switch {
		case symbols && g.byte()%4 == 0:
			key = vs.Ulong(g.u64())
		case symbols:
			key = vs.Symbol(string(g.bytes(int(g.byte() % 12))))
		default:
			key = vs.String(string(g.bytes(int(g.byte() % 12))))
		}
		e = append(e, Field{key, g.value(vs, 2)})
	}
	return EntriesOf(e...)
}

func (g *gen) id() ID {
	switch g.byte() % 5 {
	case 1:
		return UlongID(g.u64())
	case 2:
		var u uuid.UUID
		copy(u[:], g.bytes(16))
		return UUIDID(u)
	case 3:
		return BinaryID(g.bytes(int(g.byte() % 20)))
	case 4:
		return ID{Kind: amqpsax.KindString, Bytes: g.bytes(int(g.byte() % 20))}
	}
	return ID{Kind: amqpsax.KindNull}
}

// maybe returns some bytes or nil.
func (g *gen) maybe() []byte {
	if n := g.byte(); n%3 != 0 {
		return append([]byte{}, g.bytes(int(n%30))...)
	}
	return nil
}

// generate builds a message from fuzz bytes.
func generate(vs *Values, data []byte) *Message {
	g := &gen{data}
	m := &Message{}
	if c := g.byte(); c%3 != 0 {
		h := Header{Durable: c&4 != 0, Priority: g.byte(), FirstAcquirer: c&8 != 0}
		if c&16 != 0 {
			h.TTL, h.HasTTL = uint32(g.u64()), true
		}
		h.DeliveryCount = uint32(g.u64() >> (g.byte() % 64))
		m.Header = &h
	}
	m.DeliveryAnnotations = g.entries(vs, true)
	m.MessageAnnotations = g.entries(vs, true)
	if c := g.byte(); c%3 != 0 {
		p := Properties{MessageID: g.id(), UserID: g.maybe(), To: g.maybe(), Subject: g.maybe(),
			ReplyTo: g.maybe(), CorrelationID: g.id(), ContentType: g.maybe(), ContentEncoding: g.maybe(),
			GroupID: g.maybe(), ReplyToGroupID: g.maybe()}
		if c&4 != 0 {
			p.AbsoluteExpiryTime, p.HasAbsoluteExpiryTime = int64(g.u64()), true
		}
		if c&8 != 0 {
			p.CreationTime, p.HasCreationTime = int64(g.u64()), true
		}
		if c&16 != 0 {
			p.GroupSequence, p.HasGroupSequence = uint32(g.u64()), true
		}
		m.Properties = &p
	}
	m.ApplicationProperties = g.entries(vs, false)
	switch g.byte() % 4 {
	case 1:
		m.Body.Kind = BodyData
		for range 1 + g.byte()%3 {
			m.Body.Data = append(m.Body.Data, g.bytes(int(g.byte())*3))
		}
	case 2:
		m.Body.Kind = BodySequence
		for range 1 + g.byte()%3 {
			v, _ := vs.Any([]any{g.value(vs, 1), g.value(vs, 1)})
			m.Body.Sequence = append(m.Body.Sequence, v)
		}
	case 3:
		m.Body.Kind = BodyValue
		m.Body.Value = g.value(vs, 3)
	}
	m.Footer = g.entries(vs, true)
	return m
}
