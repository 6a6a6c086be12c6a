package engine

import (
	"bytes"
	"strconv"
	"testing"
	"time"
)

// echoBack is a server handler that answers each message it receives
// with one on the link the peer attached as a receiver, settled, as
// credit allows.
type echoBack struct {
	NopHandler
	back *Link
	owed int
}

func (h *echoBack) OnLinkAttach(l *Link) {
	if l.IsSender() {
		h.back = l
	}
}

func (h *echoBack) OnDelivery(*Link, Delivery) { h.owed++; h.pump() }
func (h *echoBack) OnFlow(*Link)               { h.pump() }

func (h *echoBack) pump() {
	for h.back != nil && h.owed > 0 {
		if _, err := h.back.Send(nil, []byte("echo"), true); err != nil {
			return
		}
		h.owed--
	}
}

// TestOutputValidUntilWritten holds the engine to what a driver relies
// on (Output's documentation): the bytes of a view Output returned stay
// as they were while the Conn is fed, ticked and acted on, until
// Written. The server's output goes to a writer in pieces, as the
// Driver's does, and each piece is reported written only after a round
// of everything else: the client's frames fed in (transfers, flows,
// dispositions), the server's answers and echoes written, timers run.
func TestOutputValidUntilWritten(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	const messages = 300
	sent, got, settled := 0, 0, 0
	cli := &recorder{}
	var snd *Link
	cli.onOpen = func(c *Conn) {
		s, _ := c.Begin()
		s.AttachReceiver(LinkOptions{Name: "back", Address: "q", Credit: 50})
		snd, _ = s.AttachSender(LinkOptions{Name: "out", Address: "q"})
	}
	cli.onFlow = func(l *Link) {
		for l == snd && sent < messages && l.Credit() > 0 {
			if _, err := l.Send(nil, []byte("message "+strconv.Itoa(sent)), false); err != nil {
				return
			}
			sent++
		}
	}
	cli.onDel = func(*Link, Delivery) { got++ }
	cli.onDisp = func(*Link, DeliveryUpdate) { settled++ }
	c := NewClient(Config{NoSASL: true, IdleTimeout: time.Second}, cli)
	s := NewServer(Config{Credit: 20, AutoAccept: true, IdleTimeout: time.Second}, &echoBack{})
	held, want := []byte(nil), []byte(nil) // the writer's piece, and a copy of it as it was taken
	for round := 0; round < 10000 && (got < messages || settled < messages); round++ {
		if out := c.Output(); len(out) > 0 {
			b := bytes.Clone(out)
			c.Written(len(b))
			s.Feed(b, now)
		}
		now = now.Add(50 * time.Millisecond)
		s.Tick(now)
		c.Tick(now)
		if len(held) > 0 {
			if !bytes.Equal(held, want) {
				t.Fatalf("round %d: the server's output piece of %d bytes changed before Written", round, len(held))
			}
			s.Written(len(held))
			c.Feed(want, now)
		}
		out := s.Output()
		held = out[:min(len(out), 700)]
		want = bytes.Clone(held)
	}
	if got < messages || settled < messages {
		t.Fatalf("%d of %d messages settled, %d came back: the exchange stalled", settled, messages, got)
	}
}
