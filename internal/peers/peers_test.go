package peers

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"sort"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/internal/trace"
	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCorpusSize: the corpus holds at least 1,000
// frames and 300 messages, written by at least four client encoders, and
// RabbitMQ's encoder on the server side.
func TestCorpusSize(t *testing.T) {
	frames, msgs := map[string]int{}, map[string]int{}
	totalF, totalM := 0, 0
	for _, s := range Load(t) {
		for _, f := range s.Frames {
			if f.Kind == "frame" {
				frames[s.Encoder()]++
				totalF++
			}
		}
		msgs[s.Encoder()] += len(s.Messages)
		totalM += len(s.Messages)
	}
	var names []string
	for n := range frames {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("%-14s frames %4d messages %4d", n, frames[n], msgs[n])
	}
	t.Logf("total          frames %4d messages %4d", totalF, totalM)
	assert.GreaterOrEqual(t, totalF, 1000)
	assert.GreaterOrEqual(t, totalM, 300)
	for _, enc := range []string{"goamqp", "rhea", "proton", "uamqp", "rabbitmq"} {
		assert.Greater(t, msgs[enc], 20, "messages written by %s", enc)
	}
}

// TestFrameSplit: every stream splits into exactly its listed protocol
// headers and frames (AMQP 1.0 part 2 §2.3.1: a 4-byte size, DOFF, type,
// channel), and nothing is left over. This reads the bytes itself: it does
// not use package frame.
func TestFrameSplit(t *testing.T) {
	for _, s := range Load(t) {
		off := 0
		for i, f := range s.Frames {
			require.Equal(t, off, f.Offset, "%s item %d", s.Name, i)
			switch f.Kind {
			case "protocol-header":
				require.Equal(t, f.Hex, hex.EncodeToString(s.Data[off:off+8]), "%s at %d", s.Name, off)
				require.Equal(t, "AMQP", string(s.Data[off:off+4]))
				off += 8
			case "frame":
				require.LessOrEqual(t, off+8, len(s.Data), s.Name)
				size := int(binary.BigEndian.Uint32(s.Data[off:]))
				assert.Equal(t, f.Size, size, "%s at %d", s.Name, off)
				assert.Equal(t, f.Doff, int(s.Data[off+4]), "%s at %d", s.Name, off)
				assert.Equal(t, f.Type, int(s.Data[off+5]), "%s at %d", s.Name, off)
				assert.Equal(t, f.Channel, int(binary.BigEndian.Uint16(s.Data[off+6:])), "%s at %d", s.Name, off)
				require.GreaterOrEqual(t, f.Doff, 2)
				require.LessOrEqual(t, off+size, len(s.Data), s.Name)
				off += size
			default:
				t.Fatalf("%s: unknown kind %q", s.Name, f.Kind)
			}
		}
		assert.Equal(t, len(s.Data), off, "%s: bytes after the last frame", s.Name)
	}
}

// body returns the frame's body: performative then payload.
func body(s *Stream, f Frame) []byte {
	return s.Data[f.Offset+4*f.Doff : f.Offset+f.Size]
}

// walk reports every value of the cursor's level, and everything in them,
// to h as the push decoder would (stream.Cursor.Emit); it is how a
// stream.Cursor walk is compared with dispatch, event for event.
func walk(c *stream.Cursor, h amqpsax.Handler) error {
	for c.Next() {
		if err := c.Emit(h); err != nil {
			return err
		}
	}
	return c.Err()
}

// trees decodes data with dispatch and with a full cursor walk and
// returns both traces.
func trees(t *testing.T, data []byte, what string) (push, pull string) {
	t.Helper()
	var d dispatch.Decoder
	var rec trace.Recorder
	require.NoError(t, d.DecodeAll(data, &rec), "dispatch: %s", what)
	push = rec.String()
	rec.Reset()
	var c stream.Cursor
	c.Reset(data)
	require.NoError(t, walk(&c, &rec), "stream: %s", what)
	return push, rec.String()
}

// TestPerformatives: every performative decodes through dispatch and
// through a cursor walk to the same tree, and to Proton's; the payloads
// of each delivery's transfer frames, joined, are the message gen.py
// listed.
func TestPerformatives(t *testing.T) {
	n := 0
	for _, s := range Load(t) {
		at := map[int]Frame{}
		for _, f := range s.Frames {
			if f.Kind != "frame" {
				continue
			}
			at[f.Offset] = f
			b := body(&s, f)
			if len(b) == 0 {
				assert.Nil(t, f.Performative, "%s at %d: empty frame", s.Name, f.Offset)
				continue
			}
			require.NotNil(t, f.Trace, "%s at %d: Proton could not decode this performative: %s", s.Name, f.Offset, f.Error)
			size, err := dispatch.Decode(b, amqpsax.NopHandler{})
			require.NoError(t, err, "%s at %d", s.Name, f.Offset)
			push, pull := trees(t, b[:size], s.Name)
			assert.Equal(t, *f.Trace, push, "%s at %d: dispatch and Proton", s.Name, f.Offset)
			assert.Equal(t, push, pull, "%s at %d: dispatch and stream", s.Name, f.Offset)
			n++
		}
		for _, m := range s.Messages {
			var joined []byte
			for _, off := range m.Frames {
				f, ok := at[off]
				require.True(t, ok, "%s: no frame at %d", m.Name, off)
				require.Equal(t, "transfer", *f.Performative)
				b := body(&s, f)
				size, err := dispatch.Decode(b, amqpsax.NopHandler{})
				require.NoError(t, err)
				joined = append(joined, b[size:]...)
			}
			assert.True(t, bytes.Equal(m.Data, joined), "%s: payloads of its transfers", m.Name)
		}
	}
	t.Logf("%d performatives", n)
}

// sectionAt is a top-level value of a message: its descriptor and offset.
type sectionAt struct {
	d   amqpsax.Descriptor
	off int
}

// sectionsOf lists the top-level values of a message, read with the
// cursor (not with message.Scan, which is under test).
func sectionsOf(t *testing.T, data []byte) []sectionAt {
	var out []sectionAt
	var c stream.Cursor
	c.Reset(data)
	for c.Next() {
		d, _, ok := c.Descriptor()
		require.True(t, ok, "a top-level value that is not described at %d", c.Offset())
		out = append(out, sectionAt{d, c.Offset()})
	}
	require.NoError(t, c.Err())
	return out
}

// scanQuirk names the documented section-order quirk of a message, and
// the offset of the section out of place; "" when there is none but,
// perhaps, a footer before the body.
func scanQuirk(secs []sectionAt) (quirk string, off int) {
	seenLater := false
	for _, s := range secs {
		switch s.d {
		case amqpsax.DescriptorDeliveryAnnotations:
			if seenLater {
				// uAMQP-C writes delivery-annotations after
				// application-properties (and after the footer).
				return "uamqp-delivery-annotations-late", s.off
			}
		case amqpsax.DescriptorMessageAnnotations, amqpsax.DescriptorProperties,
			amqpsax.DescriptorApplicationProperties, amqpsax.DescriptorFooter:
			seenLater = true
		}
	}
	return "", 0
}

// TestMessages: every message decodes through dispatch and through a
// full cursor walk to the same tree, and to Proton's; and message.Scan
// takes every one, reporting the documented quirks as stated.
func TestMessages(t *testing.T) {
	counts := map[string]int{}
	for _, s := range Load(t) {
		for _, m := range s.Messages {
			push, pull := trees(t, m.Data, m.Name)
			require.NotNil(t, m.Trace, "%s: Proton could not decode it: %s", m.Name, m.Error)
			assert.Equal(t, *m.Trace, push, "%s: dispatch and Proton", m.Name)
			assert.Equal(t, push, pull, "%s: dispatch and stream", m.Name)

			secs := sectionsOf(t, m.Data)
			sc, err := message.Scan(m.Data)
			switch quirk, off := scanQuirk(secs); quirk {
			case "":
				require.NoError(t, err, "%s: message.Scan", m.Name)
				hasBody := false
				for _, sec := range secs {
					hasBody = hasBody || sec.d == amqpsax.DescriptorData ||
						sec.d == amqpsax.DescriptorAMQPSequence || sec.d == amqpsax.DescriptorAMQPValue
				}
				assert.Equal(t, hasBody, sc.Body != nil, "%s: body found", m.Name)
				if !hasBody {
					// go-amqp and Proton write no body section at
					// all for a nil/None body.
					counts["no body section"]++
				}
				counts["scan ok"]++
				if sc.FooterFirst {
					counts["scan ok, footer before body"]++
				}
			case "uamqp-delivery-annotations-late":
				// Quirk: uAMQP-C writes delivery-annotations after
				// application-properties (doc/peers.md). message.Scan
				// takes it and says so (OutOfOrder); the bare message's
				// sections do not lie together, so Bare is nil.
				require.NoError(t, err, "%s: message.Scan", m.Name)
				assert.True(t, sc.OutOfOrder, m.Name)
				assert.Equal(t, off, sc.Offsets.DeliveryAnnotations, "%s: the offset of the delivery-annotations", m.Name)
				assert.Nil(t, sc.Bare, m.Name)
				assert.Equal(t, "uamqp", s.Client, "%s: only uAMQP writes this order", m.Name)
				counts["scan takes, out of order: "+quirk]++
			}
		}
	}
	t.Logf("%v", counts)
}
