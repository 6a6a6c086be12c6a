package main

import (
	"encoding/binary"

	"github.com/amqpsax/amqpsax/cmd/internal/dump"
	"github.com/amqpsax/amqpsax/frame"
)

// maxSASLFrame bounds the SASL frames the masker holds back to mask:
// SASL frames are small (part 5 §5.3.1: a peer need accept no more than
// 512 bytes). A larger one ends masking: it and what follows are recorded
// as they are.
const maxSASLFrame = 64 << 10

// masker masks the secrets of one direction's SASL frames in what
// -record writes (dump.MaskSecrets: a sasl-init's initial-response and a
// sasl-response's response become as many '*'), keeping every length, so
// that the recording still parses. It holds back the bytes of a SASL
// frame until the frame is whole; once the direction is past SASL (a
// protocol header other than SASL's, a frame of another type) it passes
// bytes on as they come.
type masker struct {
	held []byte
	done bool // past the SASL layer: nothing more to mask
}

// write takes the next chunk of the direction and returns the bytes that
// may be recorded now.
func (m *masker) write(b []byte) []byte {
	if m.done {
		return b
	}
	m.held = append(m.held, b...)
	var out []byte
	for !m.done && len(m.held) >= 8 {
		h := m.held
		if string(h[:4]) == "AMQP" {
			out = append(out, h[:8]...)
			m.held = h[8:]
			m.done = frame.ProtocolID(h[4]) != frame.ProtocolSASL
			continue
		}
		size := binary.BigEndian.Uint32(h)
		doff := 4 * int(h[4])
		if h[5] != frame.TypeSASL || size < 8 || size > maxSASLFrame || doff < 8 || doff > int(size) {
			m.done = true // not a SASL frame we can read: the rest as it is
			break
		}
		if len(h) < int(size) {
			break // the rest of the frame is still to come
		}
		dump.MaskSecrets(h[doff:size])
		out = append(out, h[:size]...)
		m.held = h[size:]
	}
	if m.done {
		out = append(out, m.held...)
		m.held = nil
	}
	return out
}

// flush returns what is held at the end of the direction: a SASL frame
// cut short, whose body is masked whole (it cannot be read to find its
// secret).
func (m *masker) flush() []byte {
	h := m.held
	m.held = nil
	if len(h) > 8 && string(h[:4]) != "AMQP" {
		for i := range h[8:] {
			h[8+i] = dump.MaskByte
		}
	}
	return h
}
