package engine

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/frame"
)

// Link names are unique per direction between two containers (part 2
// §2.6.1): a second attach of a name in use is refused, answered without
// a terminus and detached with amqp:not-allowed, and the application
// never sees it; the first link is untouched.
func TestLinkNameInUse(t *testing.T) {
	h := &recorder{}
	c := NewServer(Config{Credit: 10}, h)
	r := newRaw(t, c)
	r.feed(handshake()) // "l0", handle 0, the peer sends
	r.performatives()
	r.feed(perf(nil, 0, attachSender(1, "l0")))
	ps := r.performatives()
	if len(ps) != 2 || ps[0].desc != amqpsax.DescriptorAttach || ps[1].desc != amqpsax.DescriptorDetach ||
		ps[1].cond != "amqp:not-allowed" || !strings.Contains(ps[1].text, `"l0" is already attached`) {
		t.Fatalf("%+v", ps)
	}
	if n := strings.Count(strings.Join(h.log, "\n"), "attach l0"); n != 1 || has(h.log, "detach") {
		t.Fatal(h.log)
	}
	// The peer answers the refusal's detach: handle 1 is free again and
	// nothing reaches the application.
	r.feed(perf(nil, 0, func(b []byte) []byte { return frame.AppendDetach(b, frame.Detach{Handle: 1, Closed: true}) }))
	if has(h.log, "detach") || c.Err() != nil {
		t.Fatal(h.log, c.Err())
	}
	// The same name in the other direction is another link.
	r.feed(perf(nil, 0, func(b []byte) []byte {
		return frame.AppendAttach(b, frame.Attach{Name: []byte("l0"), Handle: 1, Role: frame.RoleReceiver,
			Source: frame.Some(frame.Source{Address: []byte("q")})})
	}))
	if ps := r.performatives(); len(ps) != 1 || ps[0].desc != amqpsax.DescriptorAttach {
		t.Fatalf("%+v", ps)
	}
	// The first link still takes deliveries.
	r.feed(perf(nil, 0, transferBody(0, 0, []byte("x"))))
	if !has(h.log, `delivery 0 "x"`) {
		t.Fatal(h.log)
	}
}

// With LinkStealing the new attach takes the name: the old link is
// detached with amqp:link:stolen.
func TestLinkStealing(t *testing.T) {
	h := &recorder{}
	c := NewServer(Config{LinkStealing: true}, h)
	r := newRaw(t, c)
	r.feed(handshake())
	r.performatives()
	r.feed(perf(nil, 0, attachSender(1, "l0")))
	ps := r.performatives()
	if len(ps) != 2 || ps[0].desc != amqpsax.DescriptorDetach || ps[0].cond != "amqp:link:stolen" || ps[1].desc != amqpsax.DescriptorAttach {
		t.Fatalf("%+v", ps)
	}
	if n := strings.Count(strings.Join(h.log, "\n"), "attach l0"); n != 2 {
		t.Fatal(h.log)
	}
}

// This end's own attach of a name in use fails at once.
func TestAttachNameInUse(t *testing.T) {
	w := newWorld(t, 5)
	if _, err := w.s.AttachSender(LinkOptions{Name: "snd"}); !errors.Is(err, ErrLinkName) {
		t.Fatal(err)
	}
	if _, err := w.s.AttachReceiver(LinkOptions{Name: "snd"}); err != nil {
		t.Fatal(err)
	}
	// A detached link gives its name back.
	w.snd.Detach(nil)
	w.p.run()
	if _, err := w.s.AttachSender(LinkOptions{Name: "snd"}); err != nil {
		t.Fatal(err)
	}
}

// A refused link learns why even when the peer ends the session (as
// RabbitMQ does for an address it refuses) or closes the connection
// under it: OnLinkDetach carries that error.
func TestLinkDetachCarriesReason(t *testing.T) {
	for _, how := range []string{"end", "close"} {
		t.Run(how, func(t *testing.T) {
			srv := &recorder{}
			srv.onAtt = func(l *Link) {
				e := NewError(frame.CondNotFound, "no queue q")
				if how == "end" {
					l.Session().End(e)
				} else {
					l.Conn().Close(e)
				}
			}
			var got *Error
			cli := &linkWatcher{recorder: &recorder{}, detached: &got}
			cli.onOpen = func(c *Conn) {
				s, _ := c.Begin()
				s.AttachReceiver(LinkOptions{Address: "q"})
			}
			p := newPipe(t, Config{}, Config{}, cli, srv)
			p.run()
			if got == nil || got.Condition != frame.CondNotFound || got.Description != "no queue q" || !got.Remote {
				t.Fatalf("OnLinkDetach got %v; %v", got, cli.log)
			}
		})
	}
}

type linkWatcher struct {
	*recorder
	detached **Error
}

func (w *linkWatcher) OnLinkDetach(l *Link, e *Error) { *w.detached = e; w.recorder.OnLinkDetach(l, e) }

// A lost connection says at which stage, and how it ended.
func TestReadFailedNamesStage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(r *raw)
		err   error
		want  string
	}{
		{"header", func(r *raw) {}, io.EOF, "connection lost before the protocol header: peer sent EOF"},
		{"sasl", func(r *raw) { r.feed(frame.AppendProtocolHeader(nil, frame.HeaderSASL)) }, syscall.ECONNRESET,
			"connection lost during SASL: " + syscall.ECONNRESET.Error()},
		{"open", func(r *raw) { r.feed(frame.AppendProtocolHeader(nil, frame.HeaderAMQP)) }, io.EOF, "connection lost before the open: peer sent EOF"},
		{"opened", func(r *raw) { r.feed(handshake()) }, io.EOF, "connection lost after the open: peer sent EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewServer(Config{}, nil)
			r := newRaw(t, c)
			tc.setup(r)
			c.ReadFailed(tc.err)
			if e := c.Err(); e == nil || e.Condition != frame.CondFramingError || e.Description != tc.want {
				t.Fatalf("%v, want %q", e, tc.want)
			}
		})
	}
}

// bigAttaches are n attaches of sending links, each carrying about 2 KiB
// of link properties (kept by the engine with the attach).
func bigAttaches(n int) []byte {
	pad := make([]byte, 2000)
	var b []byte
	for i := 1; i <= n; i++ {
		name := "big" + strconv.Itoa(i)
		b = perf(b, 0, func(b []byte) []byte {
			return frame.AppendAttach(b, frame.Attach{Name: []byte(name), Handle: uint32(i), Role: frame.RoleSender,
				Source: frame.Some(frame.Source{Address: pad}), Target: frame.Some(frame.Target{Address: []byte("q")}),
				InitialDeliveryCount: frame.Some[uint32](0)})
		})
	}
	return b
}

// The memory budget (Config.MaxMemory) bounds what a hostile peer makes
// a connection hold, at two sizes of budget: past it the connection is
// closed with amqp:resource-limit-exceeded. What is held, and what is
// allocated, follows the budget and not the input.
func TestMemoryBudget(t *testing.T) {
	var allocs [2]uint64
	for i, budget := range []int{256 << 10, 512 << 10} {
		cfg := Config{HandleMax: 10000, MaxMemory: budget}
		input := bigAttaches(2 * budget / 2000) // twice what fits
		a, _, c := cost(cfg, input)
		now, peak := c.Held()
		e := c.Err()
		if e == nil || e.Condition != frame.CondResourceLimitExceeded || !strings.Contains(e.Description, "memory budget") {
			t.Fatalf("budget %d: err %v", budget, e)
		}
		if peak > budget {
			t.Fatalf("budget %d: peak %d held", budget, peak)
		}
		if now != 0 {
			t.Fatalf("budget %d: %d still held after the close", budget, now)
		}
		// Allocated: the attaches kept (about the budget), and what each
		// attach costs to parse; well under 4x the budget.
		if a > uint64(4*budget) {
			t.Fatalf("budget %d: %d bytes allocated", budget, a)
		}
		t.Logf("budget %d: peak held %d, %d bytes allocated for %d input bytes", budget, peak, a, len(input))
		allocs[i] = a
		// Twice the input at the same budget costs no more.
		a2, _, _ := cost(cfg, bigAttaches(4*budget/2000))
		if a2 > a+64<<10 {
			t.Fatalf("budget %d: %d bytes allocated for twice the input, %d for once", budget, a2, a)
		}
	}
	linear(t, "bytes allocated against the budget", allocs[0], allocs[1])
}

// Feed parses frames where they lie and keeps only a frame cut between
// two calls: fed in pieces of any size, a conversation raises the same
// events and writes the same bytes as fed whole.
func TestFeedInPieces(t *testing.T) {
	cli := recordedClient(t)
	run := func(step int) ([]string, []byte) {
		h := &recorder{}
		c := NewServer(Config{Credit: 10, MaxFrameSize: 1024}, h)
		r := newRaw(t, c)
		for b := cli; len(b) > 0; {
			n := min(step, len(b))
			r.feed(b[:n])
			b = b[n:]
		}
		return h.log, r.in
	}
	wantLog, wantOut := run(len(cli))
	if len(wantLog) < 8 {
		t.Fatal(wantLog)
	}
	for _, step := range []int{1, 2, 3, 7, 8, 9, 100, 1023, 1024, 1025} {
		log, out := run(step)
		if strings.Join(log, "\n") != strings.Join(wantLog, "\n") || string(out) != string(wantOut) {
			t.Fatalf("in pieces of %d: %v\nwhole: %v", step, log, wantLog)
		}
	}
}

// A fault in a frame cut between two calls is reported at the frame's
// offset in the stream.
func TestFeedFaultOffset(t *testing.T) {
	c := NewServer(Config{MaxFrameSize: 4096}, nil)
	r := newRaw(t, c)
	hs := handshake()
	r.feed(hs)
	bad := []byte{0, 1, 0, 0, 2, 0, 0, 0} // a frame of 65,536 bytes, above max-frame-size
	r.feed(bad[:3])
	r.feed(bad[3:])
	e := c.Err()
	if e == nil || e.Condition != frame.CondFramingError || !strings.Contains(e.Description, "65536 bytes above max-frame-size 4096 at offset "+strconv.Itoa(len(hs))) {
		t.Fatal(e)
	}
}

// The ring finds a delivery by position when ids are consecutive and by
// binary search when some were never kept (settled during OnDelivery).
func TestRingFind(t *testing.T) {
	var r ring
	var l Link
	ids := []uint32{0xFFFF_FFFE, 0xFFFF_FFFF, 1, 2, 5, 6, 7, 100} // wraps, with gaps
	for _, id := range ids {
		r.push(id, &l)
	}
	for i, id := range ids {
		if got := r.find(id); got != i {
			t.Fatalf("find(%d) = %d, want %d", id, got, i)
		}
	}
	for _, id := range []uint32{0, 3, 4, 8, 99, 101, 0xFFFF_FFFD} {
		if got := r.find(id); got != -1 {
			t.Fatalf("find(%d) = %d, want -1", id, got)
		}
	}
	r.at(2).free = true
	if got := r.find(1); got != -1 {
		t.Fatal("found a settled delivery")
	}
}

// A receiver that settles in OnDelivery keeps nothing in the ring; one
// that gives a state without settling, or settles later, finds its
// deliveries there.
func TestSettleInOrLaterThanOnDelivery(t *testing.T) {
	for _, mode := range []string{"in", "state-then-later", "later"} {
		t.Run(mode, func(t *testing.T) {
			var held []Delivery
			h := &recorder{}
			h.onDel = func(l *Link, d Delivery) {
				switch {
				case mode == "in":
					d.Accept()
				case mode == "state-then-later" && d.DeliveryID%2 == 0:
					l.Dispose(d.DeliveryID, frame.DeliveryState{Type: frame.StateReceived}, false)
					held = append(held, d)
				default:
					held = append(held, d)
				}
			}
			c := NewServer(Config{Credit: 100}, h)
			r := newRaw(t, c)
			r.feed(handshake())
			var b []byte
			for id := uint32(0); id < 10; id++ {
				b = perf(b, 0, func(b []byte) []byte {
					b = frame.AppendTransfer(b, frame.Transfer{Handle: 0, DeliveryID: frame.Some(id), DeliveryTag: []byte{byte(id)},
						MessageFormat: frame.Some[uint32](0)})
					return append(b, 'm')
				})
			}
			r.feed(b)
			s := c.byLocal[0]
			want := 10
			if mode == "in" {
				want = 0
			}
			if s.incoming.n != want {
				t.Fatalf("%d in the ring, want %d", s.incoming.n, want)
			}
			for i := len(held) - 1; i >= 0; i-- { // out of order
				held[i].Accept()
			}
			r.feed(nil)
			if s.incoming.n != 0 {
				t.Fatalf("%d left in the ring", s.incoming.n)
			}
		})
	}
}

// partials attaches n sending links and starts on each a delivery whose
// first transfer carries size bytes and says more is to come.
func partials(n, size int) []byte {
	pad := make([]byte, size)
	var b []byte
	for i := 1; i <= n; i++ {
		h := uint32(i)
		b = perf(b, 0, attachSender(h, "p"+strconv.Itoa(i)))
		b = perf(b, 0, func(b []byte) []byte {
			b = frame.AppendTransfer(b, frame.Transfer{Handle: h, DeliveryID: frame.Some(uint32(i)), DeliveryTag: []byte{1},
				MessageFormat: frame.Some[uint32](0), More: true})
			return append(b, pad...)
		})
	}
	return b
}

// The budget counts deliveries being joined, kept on their links: a peer
// that starts many large deliveries and finishes none is cut off at the
// budget, at two sizes of it.
func TestMemoryBudgetJoins(t *testing.T) {
	var allocs [2]uint64
	for i, budget := range []int{1 << 20, 2 << 20} {
		cfg := Config{HandleMax: 10000, MaxMemory: budget, Credit: 10, MaxFrameSize: 64 << 10}
		a, _, c := cost(cfg, partials(2*budget/30000, 30000))
		_, peak := c.Held()
		if e := c.Err(); e == nil || e.Condition != frame.CondResourceLimitExceeded {
			t.Fatalf("budget %d: err %v", budget, e)
		}
		if peak > budget {
			t.Fatalf("budget %d: peak %d", budget, peak)
		}
		if a > uint64(3*budget) {
			t.Fatalf("budget %d: %d bytes allocated", budget, a)
		}
		t.Logf("budget %d: peak held %d, %d bytes allocated", budget, peak, a)
		allocs[i] = a
	}
	linear(t, "bytes allocated against the budget", allocs[0], allocs[1])
}

// A disposition's range may begin before the oldest delivery kept and
// end inside the ring, cover all of it, or start inside it.
func TestDispositionRangeEdges(t *testing.T) {
	for _, tc := range []struct {
		first, last uint32
		want        []uint32
	}{
		{0, 2, []uint32{0, 1, 2}},
		{0xFFFF_FFF0, 1, []uint32{0, 1}}, // from before the oldest, across the wrap
		{3, 100, []uint32{3, 4, 5}},
		{2, 2, []uint32{2}},
		{6, 9, nil},
	} {
		var got []uint32
		srv := &recorder{}
		p, cli, l := openPair(t, Config{}, Config{Credit: 10}, LinkOptions{Unsettled: true}, srv)
		_ = cli
		for range 6 {
			if _, err := l.Send(nil, []byte{0x00, 0x53, 0x77, 0x40}, false); err != nil {
				t.Fatal(err)
			}
		}
		p.run()
		cli.onDisp = func(l *Link, d DeliveryUpdate) { got = append(got, d.ID) }
		sl := p.s.byLocal[0].byLocal[0]
		sl.s.c.addDisp(sl.s.local, frame.RoleReceiver, tc.first, true, Accepted)
		sl.s.c.disp.last = tc.last
		p.run()
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Fatalf("range %d-%d: reported %v, want %v", tc.first, tc.last, got, tc.want)
		}
	}
}
