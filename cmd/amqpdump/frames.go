package main

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/wire"
)

// frameError is a fault in the framing of a connection byte stream (a
// protocol header or frame header that is cut short or inconsistent).
type frameError struct {
	What   string // "protocol header", "frame 5"
	Offset int    // where it begins
	Msg    string // what is wrong
}

func (e *frameError) Error() string {
	return "amqpdump: " + e.What + " at offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// link identifies the link a transfer belongs to: handles are scoped to
// the session, which is the channel.
type link struct {
	channel uint16
	handle  uint32
}

// delivery is the payload of a delivery gathered so far from its
// transfers.
type delivery struct {
	buf        []byte
	segs       []segment // where each transfer's payload lies in the input
	firstFrame int       // the number of the frame of its first transfer
}

// frameTypes names the frame types (part 2 §2.3.1, part 5 §5.3.1).
var frameTypes = [...]string{0: "AMQP", 1: "SASL"}

// protocolIDs names the protocol ids of a protocol header (part 2 §2.2,
// part 5 §5.2.1, §5.3.1).
var protocolIDs = [...]string{0: "AMQP", 2: "TLS", 3: "SASL"}

// dumpFrames prints p.data as a connection byte stream (part 2 §2.2 and
// §2.3): protocol headers and frames, with their performatives, and the
// message of every delivery once its last transfer has arrived.
//
// A protocol header may appear wherever a frame could begin: the stream
// starts with one, and a client that uses SASL sends the AMQP header after
// its SASL frames (often before the outcome arrives). A frame never begins
// with "AMQP", which as a size would be over a gigabyte.
func dumpFrames(p *printer) error {
	data := p.data
	pending := map[link]*delivery{}
	frames := 0
	pos := 0
	for pos < len(data) {
		rest := data[pos:]
		if len(rest) >= 4 && string(rest[:4]) == "AMQP" {
			if len(rest) < 8 {
				return &frameError{"protocol header", pos, fmt.Sprintf("truncated: %d of its 8 bytes present", len(rest))}
			}
			p.line(pos, 0, protocolHeader(rest[:8], pos))
			pos += 8
			continue
		}
		frames++
		what := "frame " + strconv.Itoa(frames)
		if len(rest) < 8 {
			return &frameError{what, pos, fmt.Sprintf("truncated frame header: %d of its 8 bytes present", len(rest))}
		}
		size := binary.BigEndian.Uint32(rest)
		doff, typ, channel := int(rest[4]), int(rest[5]), binary.BigEndian.Uint16(rest[6:])
		text := fmt.Sprintf("%s at %d: size %d, doff %d, type %d (%s), channel %d",
			what, pos, size, doff, typ, name(frameTypes[:], typ), channel)
		switch {
		case size < 8:
			p.line(pos, 0, text)
			return &frameError{what, pos, fmt.Sprintf("size %d is less than the 8 bytes of the frame header", size)}
		case doff < 2:
			p.line(pos, 0, text)
			return &frameError{what, pos, fmt.Sprintf("data offset %d is less than 2", doff)}
		case uint32(doff)*4 > size:
			p.line(pos, 0, text)
			return &frameError{what, pos, fmt.Sprintf("data offset %d (%d bytes) is past the frame's size %d", doff, doff*4, size)}
		case uint64(size) > uint64(len(rest)):
			body := rest[min(doff*4, len(rest)):]
			p.line(pos, 0, text+": "+performativeName(body))
			return &frameError{what, pos, fmt.Sprintf("truncated: size %d, only %d bytes present (the input ends at offset %d)",
				size, len(rest), len(data))}
		}
		end := pos + int(size)
		body := pos + doff*4
		if body == end {
			p.line(pos, 0, text+": empty (heartbeat)")
		} else {
			p.line(pos, 0, text+": "+performativeName(data[body:end]))
		}
		if doff > 2 {
			p.line(pos+8, 1, "extended header: "+hex.EncodeToString(data[pos+8:body]))
		}
		if body == end {
			pos = end
			continue
		}
		perfEnd, err := p.value(data[:end], body, head{at: body, indent: 1})
		if err != nil {
			return err
		}
		if d, _ := performative(data[body:perfEnd]); d == amqpsax.DescriptorTransfer {
			if err := p.transfer(pending, frames, channel, data[body:perfEnd], perfEnd, end); err != nil {
				return err
			}
		} else if perfEnd < end {
			p.line(perfEnd, 1, fmt.Sprintf("payload: %d bytes after a performative other than transfer", end-perfEnd))
		}
		pos = end
	}

	// Deliveries whose last transfer is not in the input.
	keys := make([]link, 0, len(pending))
	for k := range pending {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b link) int {
		return pending[a].firstFrame - pending[b].firstFrame
	})
	for _, k := range keys {
		dl := pending[k]
		p.line(dl.segs[0].off, 0, fmt.Sprintf("incomplete delivery on channel %d, handle %d: %d bytes in %d transfers from frame %d, no last transfer",
			k.channel, k.handle, len(dl.buf), len(dl.segs), dl.firstFrame))
	}
	return nil
}

// transfer handles the payload data[payload:end] of frame number frame, a
// transfer perf on channel: it adds it to its delivery and prints the
// delivery's message when this transfer is its last.
func (p *printer) transfer(pending map[link]*delivery, frame int, channel uint16, perf []byte, payload, end int) error {
	handle, more, aborted := transferFields(perf)
	key := link{channel, handle}
	dl := pending[key]
	if dl == nil {
		dl = &delivery{firstFrame: frame}
		pending[key] = dl
	}
	dl.segs = append(dl.segs, segment{pos: len(dl.buf), off: payload})
	dl.buf = append(dl.buf, p.data[payload:end]...)
	n := end - payload
	switch {
	case aborted:
		delete(pending, key)
		p.line(payload, 1, fmt.Sprintf("payload: %d bytes; delivery aborted: %d bytes from %d transfers dropped", n, len(dl.buf), len(dl.segs)))
		return nil
	case more:
		p.line(payload, 1, fmt.Sprintf("payload: %d bytes, more to come", n))
		return nil
	}
	delete(pending, key)
	if len(dl.segs) == 1 {
		p.line(payload, 1, fmt.Sprintf("message: %d bytes", n))
	} else {
		p.line(payload, 1, fmt.Sprintf("payload: %d bytes, the last of %d transfers", n, len(dl.segs)))
		p.line(dl.segs[0].off, 1, fmt.Sprintf("message: %d bytes from frames %d-%d", len(dl.buf), dl.firstFrame, frame))
	}
	m := p.at(dl.buf, dl.segs)
	return m.all(0, len(dl.buf), 2)
}

// transferFields reads the fields handle (index 0), more (5) and aborted
// (9) of a transfer performative (part 2 §2.7.5), which has been printed,
// hence checked; absent or null fields take their defaults.
func transferFields(perf []byte) (handle uint32, more, aborted bool) {
	n, _ := wire.Skip(perf[1:]) // the descriptor
	if n < 0 || 1+n >= len(perf) {
		return 0, false, false
	}
	pos := 1 + n
	c := amqpsax.Code(perf[pos])
	if wire.Table[c].Cat() != wire.Compound || c.Kind() != amqpsax.KindList {
		return 0, false, false // list0: no fields
	}
	hdr, _, count := wire.Body(c, perf[pos+1:])
	if hdr < 0 {
		return 0, false, false
	}
	pos += 1 + hdr
	for i := 0; i < count && i <= 9; i++ {
		c := amqpsax.Code(perf[pos])
		v := perf[pos+1:]
		switch {
		case i == 0 && c.Kind() == amqpsax.KindUint:
			handle = uint32(wire.Uint(c, v))
		case i == 5 && c.Kind() == amqpsax.KindBool:
			more = wire.Bool(c, v)
		case i == 9 && c.Kind() == amqpsax.KindBool:
			aborted = wire.Bool(c, v)
		}
		n, _ := wire.Skip(perf[pos:])
		if n < 0 {
			break
		}
		pos += n
	}
	return handle, more, aborted
}

// performative returns the descriptor of the described value at the start
// of b, when it is a ulong or a symbol the spec defines.
func performative(b []byte) (amqpsax.Descriptor, bool) {
	if len(b) < 2 || b[0] != byte(amqpsax.CodeDescribed) || !isPrimitive(amqpsax.Code(b[1])) {
		return 0, false
	}
	_, _, d, known, st := descriptor(b, 1)
	return d, st == wire.OK && known
}

// performativeName names the frame body b by its performative.
func performativeName(b []byte) string {
	if d, ok := performative(b); ok {
		if s, ok := performativeNames[d]; ok {
			return s
		}
		return "not a performative: " + d.Name()
	}
	return "not a performative"
}

// protocolHeader describes the protocol header h found at offset pos.
func protocolHeader(h []byte, pos int) string {
	return fmt.Sprintf("protocol header at %d: AMQP %d %d.%d.%d (%s)", pos, h[4], h[5], h[6], h[7], name(protocolIDs[:], int(h[4])))
}

// name returns names[i], or "unknown" when there is none.
func name(names []string, i int) string {
	if i < len(names) && names[i] != "" {
		return names[i]
	}
	return "unknown"
}
