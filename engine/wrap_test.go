package engine

import (
	"testing"

	"github.com/amqpsax/amqpsax/frame"
)

// Ids and counts are serial numbers (RFC 1982): transfer-ids,
// delivery-ids and delivery-counts wrap past 2^32 - 1 with windows,
// credit, disposition ranges and settlement intact.
func TestSerialWrap(t *testing.T) {
	srv := &recorder{}
	cli := &recorder{}
	const start = 0xFFFF_FFF0
	var l *Link
	cli.onOpen = func(c *Conn) {
		ch, _ := c.freeChannel()
		s := c.newSession(ch)
		s.nextOutgoingID, s.nextDeliveryID = start, start
		s.writeBegin()
		h, _ := s.freeHandle()
		l = s.newLink(h, true, []byte("wrap"), true)
		l.sndMode = frame.SndUnsettled
		l.deliveryCount = start + 3
		l.writeAttach(frame.Some(frame.Source{}), frame.Some(frame.Target{Address: []byte("q")}))
		s.waiting = append(s.waiting, l)
	}
	p := newPipe(t, Config{}, Config{Credit: 8, AutoAccept: true, Window: 6}, cli, srv)
	p.run()
	if l.Credit() != 8 {
		t.Fatalf("credit %d", l.Credit())
	}
	sent := 0
	for round := 0; round < 10; round++ {
		for l.Credit() > 0 {
			if _, err := l.Send(nil, []byte{byte(sent)}, false); err != nil {
				break
			}
			sent++
		}
		p.run()
	}
	if len(srv.got) != sent || sent < 40 {
		t.Fatalf("sent %d, received %d", sent, len(srv.got))
	}
	for i, g := range srv.got {
		if g[0] != byte(i) {
			t.Fatalf("message %d is %d", i, g[0])
		}
	}
	s := l.Session()
	if s.Unsettled() != 0 || s.nextOutgoingID != start+uint32(sent) || l.deliveryCount != start+3+uint32(sent) {
		t.Fatalf("unsettled %d, next-outgoing-id %#x, delivery-count %#x", s.Unsettled(), s.nextOutgoingID, l.deliveryCount)
	}
	rs := p.s.byLocal[0]
	if rs.nextIncomingID != s.nextOutgoingID || p.s.byLocal[0].byLocal[0].deliveryCount != l.deliveryCount {
		t.Fatalf("receiver next-incoming-id %#x", rs.nextIncomingID)
	}
	if !has(cli.log, "disposition 4294967295 accepted settled=true") || !has(cli.log, "disposition 0 accepted settled=true") {
		t.Fatal("no dispositions across the wrap")
	}
}

func TestInRange(t *testing.T) {
	cases := []struct {
		id, first, last uint32
		in              bool
	}{
		{5, 5, 5, true}, {4, 5, 9, false}, {10, 5, 9, false}, {0xFFFF_FFFF, 0xFFFF_FFF0, 3, true},
		{2, 0xFFFF_FFF0, 3, true}, {4, 0xFFFF_FFF0, 3, false}, {0xFFFF_FFEF, 0xFFFF_FFF0, 3, false},
	}
	for _, c := range cases {
		if inRange(c.id, c.first, c.last) != c.in {
			t.Errorf("inRange(%#x, %#x, %#x) != %v", c.id, c.first, c.last, c.in)
		}
	}
}
