package dump

import (
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/stream"
)

// MaskByte is what the bytes of a secret are replaced with: '*'.
const MaskByte = '*'

// secretSpan returns where the secret of a performative lies in body
// (a frame body, or one encoded value): the initial-response of a
// sasl-init (part 5 §5.3.3.2), which for PLAIN is the password, or the
// response of a sasl-response (§5.3.3.4). n is 0 when body is neither,
// or has none.
func secretSpan(body []byte) (off, n int) {
	d, err := frame.Performative(body)
	if err != nil {
		return 0, 0
	}
	field := 0
	switch d {
	case amqpsax.DescriptorSASLInit:
		field = 1 // after the mechanism
	case amqpsax.DescriptorSASLResponse:
		field = 0 // response
	default:
		return 0, 0
	}
	var c stream.Cursor
	c.Reset(body)
	if !c.Next() || c.Kind() != amqpsax.KindDescribed || !c.Enter() || !c.Next() || !c.Next() ||
		c.Kind() != amqpsax.KindList || !c.Enter() {
		return 0, 0
	}
	for i := 0; c.Next(); i++ {
		if i < field {
			continue
		}
		switch c.Kind() {
		case amqpsax.KindBinary, amqpsax.KindString, amqpsax.KindSymbol:
			raw, b := c.Raw(), c.Bytes()
			return c.Offset() + len(raw) - len(b), len(b)
		}
		return 0, 0
	}
	return 0, 0
}

// MaskSecrets replaces the bytes of the secret in body, a frame's body —
// a sasl-init's initial-response or a sasl-response's response — with as
// many MaskByte, in place, and reports whether there was one. The frame
// keeps its length and its encoding: it still parses, and what it says
// but for the secret (the mechanism, the hostname) is still there.
func MaskSecrets(body []byte) bool {
	off, n := secretSpan(body)
	for i := range n {
		body[off+i] = MaskByte
	}
	return n > 0
}

// maskValues returns data, a run of encoded values, with the secret of
// each value that is a sasl-init or a sasl-response masked as
// MaskSecrets does, in a copy: data itself is never written.
func maskValues(data []byte) []byte {
	var c stream.Cursor
	c.Reset(data)
	copied := false
	for c.Next() {
		raw := c.Raw()
		if raw == nil {
			break // a fault: the walk that prints will meet it
		}
		off, n := secretSpan(raw)
		if n == 0 {
			continue
		}
		if !copied {
			data, copied = append([]byte(nil), data...), true
		}
		at := c.Offset() + off
		for i := range n {
			data[at+i] = MaskByte
		}
	}
	return data
}

// OneLine returns the text of err for one line of output: every control
// character in it (a newline, say) escaped as strconv.Quote writes it,
// and the rest as it is. A fault's text may hold what the peer sent (an
// unknown descriptor symbol), which must not start a line of its own.
func OneLine(err error) string {
	s := err.Error()
	clean := true
	for _, r := range s {
		if unicode.IsControl(r) || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}
