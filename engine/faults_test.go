package engine

import (
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/frame"
)

// Every protocol violation of the peer ends the link, session or
// connection with the spec's condition.
func TestViolations(t *testing.T) {
	big := make([]byte, 70000)
	cases := []struct {
		name  string
		scfg  Config
		after []byte // fed after the handshake (which includes an attach of handle 0)
		want  amqpsax.Descriptor
		cond  frame.Condition
	}{
		{"channel never begun", Config{}, perf(nil, 5, func(b []byte) []byte {
			return frame.AppendFlow(b, frame.Flow{IncomingWindow: 1, OutgoingWindow: 1})
		}), amqpsax.DescriptorClose, frame.CondNotAllowed},
		{"unknown handle", Config{}, perf(nil, 0, func(b []byte) []byte {
			return frame.AppendFlow(b, frame.Flow{NextIncomingID: frame.Some[uint32](0), IncomingWindow: 1, OutgoingWindow: 1,
				Handle: frame.Some[uint32](7), DeliveryCount: frame.Some[uint32](0), LinkCredit: frame.Some[uint32](1)})
		}), amqpsax.DescriptorEnd, frame.CondUnattachedHandle},
		{"transfer beyond credit", Config{}, perf(nil, 0, transferBody(0, 0, []byte("x"))),
			amqpsax.DescriptorDetach, frame.CondTransferLimitExceeded},
		{"transfer beyond window", Config{Window: 2, Credit: 100}, func() []byte {
			var b []byte
			for i := range 3 {
				b = perf(b, 0, transferBody(0, uint32(i), []byte("x")))
			}
			return b
		}(), amqpsax.DescriptorEnd, frame.CondWindowViolation},
		{"frame over max-frame-size", Config{}, perf(nil, 0, transferBody(0, 0, big)),
			amqpsax.DescriptorClose, frame.CondFramingError},
		{"malformed performative", Config{}, perf(nil, 0, func(b []byte) []byte {
			return append(b, 0x00, 0x53, 0x13, 0xc0, 0x10, 0x01, 0x43) // flow list claiming 16 bytes, holding 2
		}), amqpsax.DescriptorClose, frame.CondDecodeError},
		{"not a performative", Config{}, perf(nil, 0, func(b []byte) []byte { return append(b, 0xa1, 0x01, 'x') }),
			amqpsax.DescriptorClose, frame.CondDecodeError},
		{"mandatory field missing", Config{}, perf(nil, 0, func(b []byte) []byte {
			return append(b, 0x00, 0x53, 0x13, 0x45) // flow, empty list
		}), amqpsax.DescriptorClose, frame.CondDecodeError},
		{"begin above channel-max", Config{ChannelMax: 3}, perf(nil, 4, beginBody),
			amqpsax.DescriptorClose, frame.CondFramingError},
		{"begin on a begun channel", Config{}, perf(nil, 0, beginBody),
			amqpsax.DescriptorClose, frame.CondNotAllowed},
		{"attach above handle-max", Config{HandleMax: 3}, perf(nil, 0, attachSender(4, "l4")),
			amqpsax.DescriptorClose, frame.CondFramingError},
		{"handle in use", Config{}, perf(nil, 0, attachSender(0, "again")),
			amqpsax.DescriptorEnd, frame.CondHandleInUse},
		{"second open", Config{}, perf(nil, 0, openBody),
			amqpsax.DescriptorClose, frame.CondIllegalState},
		{"SASL frame on AMQP", Config{}, saslFrame(nil, func(b []byte) []byte {
			return frame.AppendSASLInit(b, frame.SASLInit{Mechanism: []byte("ANONYMOUS")})
		}), amqpsax.DescriptorClose, frame.CondFramingError},
		{"message above max-message-size", Config{MaxMessageSize: 100, Credit: 10},
			perf(nil, 0, transferBody(0, 0, make([]byte, 101))), amqpsax.DescriptorDetach, frame.CondMessageSizeExceeded},
		{"delivery-id changes within a delivery", Config{Credit: 10}, func() []byte {
			b := perf(nil, 0, func(b []byte) []byte {
				return frame.AppendTransfer(b, frame.Transfer{Handle: 0, DeliveryID: frame.Some[uint32](0), DeliveryTag: []byte{0}, More: true})
			})
			return perf(b, 0, func(b []byte) []byte {
				return frame.AppendTransfer(b, frame.Transfer{Handle: 0, DeliveryID: frame.Some[uint32](9)})
			})
		}(), amqpsax.DescriptorDetach, frame.CondInvalidField},
		{"disposition range backwards", Config{}, perf(nil, 0, func(b []byte) []byte {
			return frame.AppendDisposition(b, frame.Disposition{Role: frame.RoleReceiver, First: 10, Last: frame.Some[uint32](5)})
		}), amqpsax.DescriptorClose, frame.CondInvalidField},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &recorder{}
			c := NewServer(tc.scfg, h)
			r := newRaw(t, c)
			r.feed(handshake())
			if r.err != nil {
				t.Fatalf("handshake: %v", r.err)
			}
			r.frames()
			r.feed(tc.after)
			ps := r.performatives()
			var got *seen
			for i := range ps {
				if ps[i].desc == tc.want {
					got = &ps[i]
				}
			}
			if got == nil {
				t.Fatalf("no %v written; wrote %+v; events %v", tc.want, ps, h.log)
			}
			if got.cond != tc.cond.Symbol() || got.text == "" {
				t.Fatalf("condition %q (%q), want %q", got.cond, got.text, tc.cond.Symbol())
			}
			t.Logf("%s: %s", got.cond, got.text)
			if tc.want == amqpsax.DescriptorClose {
				if !c.Done() || c.Err() == nil || c.Err().Name() != tc.cond.Symbol() {
					t.Fatalf("done %v, err %v", c.Done(), c.Err())
				}
				if last := h.log[len(h.log)-1]; !strings.HasPrefix(last, "close ") {
					t.Fatalf("last event %q", last)
				}
				// Nothing more is read.
				r.feed(perf(nil, 0, openBody))
				if len(r.in) != 0 {
					t.Fatal("wrote after the close")
				}
			}
		})
	}
}

// A link or session ended for a fault keeps the rest consistent: frames
// on the detached link are ignored until the peer's detach, and the
// session carries on.
func TestViolationLinkRecovers(t *testing.T) {
	h := &recorder{}
	c := NewServer(Config{}, h)
	r := newRaw(t, c)
	r.feed(handshake())
	r.feed(perf(nil, 0, transferBody(0, 0, []byte("x")))) // no credit: detach
	r.feed(perf(nil, 0, transferBody(0, 1, []byte("y")))) // ignored
	ps := r.performatives()
	if len(ps) == 0 || ps[len(ps)-1].desc != amqpsax.DescriptorDetach {
		t.Fatalf("%+v", ps)
	}
	r.feed(perf(nil, 0, func(b []byte) []byte { return frame.AppendDetach(b, frame.Detach{Handle: 0, Closed: true}) }))
	// handle 0 is free again
	r.feed(perf(nil, 0, attachSender(0, "l0b")))
	ps = r.performatives()
	if len(ps) != 1 || ps[0].desc != amqpsax.DescriptorAttach || c.Err() != nil {
		t.Fatalf("%+v %v", ps, c.Err())
	}
	if !strings.Contains(strings.Join(h.log, "\n"), "detach l0 engine: amqp:link:transfer-limit-exceeded") {
		t.Fatal(h.log)
	}
}

func TestProtocolHeaders(t *testing.T) {
	cases := []struct {
		name   string
		cfg    Config
		in     string
		answer frame.ProtocolHeader
		cond   frame.Condition
	}{
		{"tls", Config{}, "AMQP\x02\x01\x00\x00", frame.HeaderAMQP, frame.CondNotAllowed},
		{"version", Config{}, "AMQP\x00\x02\x00\x00", frame.HeaderAMQP, frame.CondFramingError},
		{"garbage", Config{}, "GET / HTTP/1.1\r\n", frame.HeaderAMQP, frame.CondFramingError},
		{"sasl required", Config{Auth: Plain(nil, false)}, "AMQP\x00\x01\x00\x00", frame.HeaderSASL, frame.CondNotAllowed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewServer(tc.cfg, nil)
			r := newRaw(t, c)
			r.feed([]byte(tc.in))
			fs := r.frames()
			if len(fs) != 1 || !fs[0].IsHeader || fs[0].Header != tc.answer {
				t.Fatalf("%+v", fs)
			}
			if !c.Done() || c.Err() == nil || c.Err().Name() != tc.cond.Symbol() {
				t.Fatalf("done %v err %v", c.Done(), c.Err())
			}
		})
	}
}

func TestBadSASL(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		in   []byte
		want string
	}{
		{"unoffered mechanism", Config{}, saslFrame(nil, func(b []byte) []byte {
			return frame.AppendSASLInit(b, frame.SASLInit{Mechanism: []byte("CRAM-MD5")})
		}), "sasl:auth"},
		{"response without challenge", Config{}, saslFrame(nil, func(b []byte) []byte {
			return frame.AppendSASLResponse(b, frame.SASLResponse{Response: []byte("x")})
		}), "sasl:sys-perm"},
		{"malformed init", Config{}, saslFrame(nil, func(b []byte) []byte { return append(b, 0x00, 0x53, 0x41, 0x45) }), "sasl:sys-perm"},
		{"AMQP frame in SASL", Config{}, perf(nil, 0, openBody), "sasl:sys-perm"},
		{"wrong password", Config{Auth: Plain(func(u, p string) bool { return u == "u" && p == "p" }, false)},
			saslFrame(nil, func(b []byte) []byte {
				return frame.AppendSASLInit(b, frame.SASLInit{Mechanism: []byte("PLAIN"), InitialResponse: []byte("\x00u\x00bad")})
			}), "sasl:auth"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewServer(tc.cfg, nil)
			r := newRaw(t, c)
			r.feed(append(frame.AppendProtocolHeader(nil, frame.HeaderSASL), tc.in...))
			ps := r.performatives()
			if len(ps) != 2 || ps[0].desc != amqpsax.DescriptorSASLMechanisms || ps[1].cond != tc.want {
				t.Fatalf("%+v", ps)
			}
			if !c.Done() || c.Err() == nil {
				t.Fatalf("done %v err %v", c.Done(), c.Err())
			}
		})
	}
}

// TestFramesAfterDetachIgnored: a flow, transfer or detach for a handle
// whose detach exchange is over (frames the peer sent before it read the
// answer, as Azure/go-amqp's closing receiver sends a flow) is ignored,
// as Qpid Proton and RabbitMQ ignore it: the session and its other links
// carry on. A handle never attached still ends the session with
// amqp:session:unattached-handle, and the handle attached again is
// served as new.
func TestFramesAfterDetachIgnored(t *testing.T) {
	h := &recorder{}
	c := NewServer(Config{Credit: 10}, h)
	r := newRaw(t, c)
	r.feed(handshake())
	r.feed(perf(nil, 0, attachSender(1, "other")))
	r.frames()
	r.feed(perf(nil, 0, func(b []byte) []byte { return frame.AppendDetach(b, frame.Detach{Handle: 0, Closed: true}) }))
	if ps := r.performatives(); len(ps) != 1 || ps[0].desc != amqpsax.DescriptorDetach {
		t.Fatalf("the detach is answered: %+v", ps)
	}
	late := perf(nil, 0, func(b []byte) []byte {
		return frame.AppendFlow(b, frame.Flow{NextIncomingID: frame.Some[uint32](0), IncomingWindow: 100, OutgoingWindow: 100,
			Handle: frame.Some[uint32](0), DeliveryCount: frame.Some[uint32](0), LinkCredit: frame.Some[uint32](5)})
	})
	late = perf(late, 0, transferBody(0, 0, []byte("late")))
	late = perf(late, 0, func(b []byte) []byte { return frame.AppendDetach(b, frame.Detach{Handle: 0, Closed: true}) })
	r.feed(late)
	if ps := r.performatives(); len(ps) != 0 || c.Err() != nil {
		t.Fatalf("frames for the detached handle answered: %+v, %v", ps, c.Err())
	}
	// the other link still takes deliveries
	r.feed(perf(nil, 0, transferBody(1, 1, []byte("still"))))
	if !strings.Contains(strings.Join(h.log, "\n"), `delivery 1 "still"`) {
		t.Fatalf("the other link's delivery: %v", h.log)
	}
	// handle 0 attached again is a new link
	r.feed(perf(nil, 0, attachSender(0, "again")))
	if ps := r.performatives(); len(ps) == 0 || ps[0].desc != amqpsax.DescriptorAttach {
		t.Fatalf("%+v", ps)
	}
	// a handle never attached is still a fault of the session
	r.feed(perf(nil, 0, func(b []byte) []byte {
		return frame.AppendFlow(b, frame.Flow{NextIncomingID: frame.Some[uint32](0), IncomingWindow: 100, OutgoingWindow: 100,
			Handle: frame.Some[uint32](9), DeliveryCount: frame.Some[uint32](0), LinkCredit: frame.Some[uint32](5)})
	}))
	ps := r.performatives()
	if len(ps) == 0 || ps[len(ps)-1].desc != amqpsax.DescriptorEnd || ps[len(ps)-1].cond != frame.CondUnattachedHandle.Symbol() {
		t.Fatalf("%+v", ps)
	}
}
