// Package goamqp is the Azure/go-amqp client of the interop corpus: it
// sends messages of every body kind with every section go-amqp writes
// through a broker and receives them back, settling them in every way the
// broker supports. See interop/README.md for the session it runs.
package goamqp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	amqp "github.com/Azure/go-amqp"
)

// MaxFrameSize is the frame size the client offers; RabbitMQ takes it for
// both directions, so every message over ~450 bytes is split over several
// transfer frames.
const MaxFrameSize = 512

func ptr[T any](v T) *T { return &v }

// Named is one message of the plan.
type Named struct {
	Name string
	Msg  *amqp.Message
}

func props(i int) *amqp.MessageProperties {
	var id any
	switch i % 4 {
	case 0:
		id = uint64(1000 + i)
	case 1:
		id = amqp.UUID{0x12, 0x34, 0x56, 0x78, 0x12, 0x34, 0x56, 0x78, 0x12, 0x34, 0x56, 0x78, 0x12, 0x34, 0x56, byte(i)}
	case 2:
		id = []byte(fmt.Sprintf("id-%d", i))
	default:
		id = fmt.Sprintf("id-%d", i)
	}
	var corr any = fmt.Sprintf("corr-%d", i)
	if i%2 == 0 {
		corr = uint64(i)
	}
	return &amqp.MessageProperties{
		MessageID:          id,
		UserID:             []byte("guest"),
		To:                 ptr("/queue/somewhere"),
		Subject:            ptr(fmt.Sprintf("subject-%d", i)),
		ReplyTo:            ptr("/queue/reply"),
		CorrelationID:      corr,
		ContentType:        ptr("application/octet-stream"),
		ContentEncoding:    ptr("identity"),
		AbsoluteExpiryTime: ptr(time.UnixMilli(1893456000000).UTC()),
		CreationTime:       ptr(time.UnixMilli(1700000000000 + int64(i)).UTC()),
		GroupID:            ptr("group-1"),
		GroupSequence:      ptr(uint32(i)),
		ReplyToGroupID:     ptr("reply-group"),
	}
}

var appProps = map[string]any{
	"string": "value", "long": int64(123456789012), "int": int32(-7), "short": int16(300),
	"byte": int8(-3), "ubyte": uint8(200), "ushort": uint16(60000), "uint": uint32(4000000000),
	"ulong": uint64(math.MaxInt64) + 6, "bool": true, "double": 2.5, "float": float32(0.5),
	"null": nil, "uuid": amqp.UUID{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0, 0xc0, 0x4f, 0xd4, 0x30, 0xc8},
	"timestamp": time.UnixMilli(1700000000000).UTC(), "binary": []byte{0, 1, 2}, "symbol": amqp.Symbol("sym"),
}

func pattern(n, mod int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % mod)
	}
	return b
}

// PlanA is what goes to queue A on the unsettled sender.
func PlanA() []Named {
	var out []Named
	big := strings.Repeat("abcdefghijklmnopqrstuvwxyz", 231)[:6000]
	values := []struct {
		name string
		v    any
	}{
		{"value-string", "hello from go-amqp"},
		{"value-empty-string", ""},
		{"value-long", int64(1234567890123)},
		{"value-int", int32(-42)},
		{"value-short", int16(-300)},
		{"value-byte", int8(-128)},
		{"value-ubyte", uint8(255)},
		{"value-ushort", uint16(65535)},
		{"value-uint", uint32(7)},
		{"value-ulong", uint64(math.MaxUint64)},
		{"value-double", math.Pi},
		{"value-float", float32(1.5)},
		{"value-bool", false},
		{"value-null", nil},
		{"value-binary", []byte{0xde, 0xad, 0xbe, 0xef}},
		{"value-symbol", amqp.Symbol("a-symbol")},
		{"value-uuid", amqp.UUID{0x12, 0x34, 0x56, 0x78, 0x12, 0x34, 0x56, 0x78, 0x12, 0x34, 0x56, 0x78, 0x12, 0x34, 0x56, 0x78}},
		{"value-timestamp", time.UnixMilli(1700000000123).UTC()},
		// RabbitMQ 3.10 ends the connection on an amqp-value list of more
		// than one element (see Refused); one element gets through.
		{"value-list-1", []any{[]any{int64(1), "two", 3.0, nil, true}}},
		{"value-map-string-keys", map[string]any{"a": int64(1), "b": "two"}},
		{"value-map-any-keys", map[any]any{"a": int64(1), int64(2): "two", amqp.Symbol("s"): nil}},
		// An array of ints that all fit in a byte is written with the
		// smallint constructor (0x54), which RabbitMQ 3.10 refuses (see
		// Refused): one large element makes go-amqp use int (0x71).
		{"value-array-int", []int32{1, 2, 100000, -4}},
		{"value-array-long", []int64{1, -2, 1 << 40}},
		{"value-array-ulong", []uint64{0, 1, math.MaxUint64}},
		{"value-array-bool", []bool{true, false, true}},
		// RabbitMQ 3.10 refuses arrays of double (0x82) and binary (0xb0)
		// too: interop/proton/probe_arrays.py lists what it takes.
		{"value-array-string", []string{"x", "yy", "zzz"}},
		{"value-array-symbol", []amqp.Symbol{"p", "q"}},
		{"value-large-string", big},
	}
	for _, v := range values {
		out = append(out, Named{v.name, &amqp.Message{Value: v.v, ApplicationProperties: map[string]any{"case": v.name}}})
	}
	out = append(out,
		Named{"data-small", &amqp.Message{Data: [][]byte{[]byte("data body")}}},
		Named{"data-empty", &amqp.Message{Data: [][]byte{{}}}},
		Named{"data-1500", &amqp.Message{Data: [][]byte{pattern(1500, 251)}}},
		Named{"data-9000", &amqp.Message{Data: [][]byte{pattern(9000, 253)}}},
		Named{"data-x3", &amqp.Message{Data: [][]byte{[]byte("first"), []byte("second"), []byte("third")}}},
		Named{"sequence-1", &amqp.Message{Sequence: [][]any{{int64(1), "a", []byte("b"), nil}}}},
		Named{"sequence-x2", &amqp.Message{Sequence: [][]any{{int64(1)}, {"b", true}}}},
	)
	for i := 0; i < 4; i++ {
		m := &amqp.Message{
			Header: &amqp.MessageHeader{Durable: i%2 == 1, Priority: uint8(i * 3), TTL: time.Duration(60+i) * time.Second,
				FirstAcquirer: i%2 == 1, DeliveryCount: uint32(i)},
			Annotations:           amqp.Annotations{"x-opt-ma": "ma", "x-opt-i": int64(i), int64(0x1234): "integer key"},
			Properties:            props(i),
			ApplicationProperties: appProps,
		}
		if i < 2 {
			m.Value = fmt.Sprintf("full body %d", i)
		} else {
			m.Data = [][]byte{[]byte(fmt.Sprintf("full data %d", i))}
		}
		if i%2 == 1 {
			m.Footer = amqp.Annotations{"x-opt-footer": fmt.Sprintf("f%d", i)}
		}
		out = append(out, Named{fmt.Sprintf("full-%d", i), m})
	}
	out = append(out,
		Named{"header-only-fields", &amqp.Message{Header: &amqp.MessageHeader{Durable: true, Priority: 9, TTL: time.Second}, Value: "h"}},
		Named{"header-defaults", &amqp.Message{Header: &amqp.MessageHeader{Priority: 4}, Value: "default header"}},
		Named{"footer-only", &amqp.Message{Value: "with footer", Footer: amqp.Annotations{"x-opt-hash": []byte{1, 2}}}},
		Named{"properties-all-large", &amqp.Message{Data: [][]byte{make([]byte, 3000)}, Properties: props(7)}},
	)
	return out
}

// PlanPresettled goes to queue A on a sender whose deliveries are settled
// before the broker sees them.
func PlanPresettled() []Named {
	var out []Named
	for i := 0; i < 10; i++ {
		m := &amqp.Message{ApplicationProperties: map[string]any{"i": int64(i)}}
		if i%2 == 1 {
			m.Value = fmt.Sprintf("presettled %d", i)
		} else {
			m.Data = [][]byte{[]byte(fmt.Sprintf("ps %d", i))}
		}
		out = append(out, Named{fmt.Sprintf("presettled-%d", i), m})
	}
	return out
}

// PlanB goes through queue B to a receiver the broker sends settled.
func PlanB() []Named {
	var out []Named
	for i := 0; i < 8; i++ {
		m := &amqp.Message{Properties: &amqp.MessageProperties{Subject: ptr("b")}, Annotations: amqp.Annotations{"x-opt-b": int64(i)}}
		if i%2 == 1 {
			m.Sequence = [][]any{{"b", int64(i)}}
		} else {
			m.Value = fmt.Sprintf("b %d", i)
		}
		out = append(out, Named{fmt.Sprintf("b-%d", i), m})
	}
	return out
}

// Run connects to addr (host:port), runs the session described in
// interop/README.md and then each case the broker refuses (Refused), each
// on a connection of its own. Progress goes to log.
func Run(ctx context.Context, addr string, log io.Writer) error {
	run := os.Getenv("AMQPSAX_RUN")
	if run == "" {
		var b [4]byte
		rand.Read(b[:])
		run = hex.EncodeToString(b[:])
	}
	qa, qb := "/queue/amqpsax-goamqp-a-"+run, "/queue/amqpsax-goamqp-b-"+run
	if err := runMain(ctx, addr, qa, qb, log); err != nil {
		return err
	}
	return Refused(ctx, addr, run, log)
}

func dial(ctx context.Context, addr, container string) (*amqp.Conn, *amqp.Session, error) {
	conn, err := amqp.Dial(ctx, "amqp://"+addr, &amqp.ConnOptions{
		ContainerID:  container,
		MaxFrameSize: MaxFrameSize,
		SASLType:     amqp.SASLTypePlain("guest", "guest"),
		Properties:   map[string]any{"product": "amqpsax-interop"},
	})
	if err != nil {
		return nil, nil, err
	}
	sess, err := conn.NewSession(ctx, nil)
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return conn, sess, nil
}

func runMain(ctx context.Context, addr, qa, qb string, log io.Writer) error {
	conn, sess, err := dial(ctx, addr, "amqpsax-goamqp")
	if err != nil {
		return err
	}
	defer conn.Close()
	snd, err := sess.NewSender(ctx, qa, &amqp.SenderOptions{Name: "a-unsettled"})
	if err != nil {
		return err
	}
	sent := 0
	for _, m := range PlanA() {
		if err := snd.Send(ctx, m.Msg, nil); err != nil {
			return fmt.Errorf("send %s: %w", m.Name, err)
		}
		sent++
	}
	ps, err := sess.NewSender(ctx, qa, &amqp.SenderOptions{Name: "a-presettled", SettlementMode: ptr(amqp.SenderSettleModeSettled)})
	if err != nil {
		return err
	}
	for _, m := range PlanPresettled() {
		if err := ps.Send(ctx, m.Msg, &amqp.SendOptions{Settled: true}); err != nil {
			return fmt.Errorf("send %s: %w", m.Name, err)
		}
		sent++
	}

	// Queue A: accept most, reject some, release some (those come back).
	// Credit for everything at once: with a smaller credit, go-amqp's
	// top-ups (flow frames sent while transfers are in flight) and
	// RabbitMQ 3.10's credit accounting stall the link with credit left
	// on both sides (seen with Credit: 10).
	rcv, err := sess.NewReceiver(ctx, qa, &amqp.ReceiverOptions{Name: "a-receiver", Credit: 200})
	if err != nil {
		return err
	}
	seen := map[string]int{}
	expected, got := sent, 0
	for got < expected {
		rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		m, err := rcv.Receive(rctx, nil)
		cancel()
		if err != nil {
			return fmt.Errorf("receive %d of %d: %w", got+1, expected, err)
		}
		got++
		key := fmt.Sprintf("%v|%v|%v|%q", m.Value, m.Data, m.Sequence, m.ApplicationProperties)
		seen[key]++
		switch {
		case seen[key] > 1:
			err = rcv.AcceptMessage(ctx, m)
		case got%13 == 5:
			err = rcv.RejectMessage(ctx, m, &amqp.Error{Condition: "amqp:internal-error", Description: "rejected by amqpsax interop"})
		case got%13 == 8:
			err = rcv.ReleaseMessage(ctx, m)
			expected++
		default:
			err = rcv.AcceptMessage(ctx, m)
		}
		if err != nil {
			return fmt.Errorf("settle: %w", err)
		}
	}

	// Queue B: the broker settles before sending.
	sb, err := sess.NewSender(ctx, qb, &amqp.SenderOptions{Name: "b-sender"})
	if err != nil {
		return err
	}
	for _, m := range PlanB() {
		if err := sb.Send(ctx, m.Msg, nil); err != nil {
			return fmt.Errorf("send %s: %w", m.Name, err)
		}
	}
	rb, err := sess.NewReceiver(ctx, qb, &amqp.ReceiverOptions{Name: "b-receiver", Credit: 8,
		RequestedSenderSettleMode: ptr(amqp.SenderSettleModeSettled)})
	if err != nil {
		return err
	}
	for range PlanB() {
		rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		_, err := rb.Receive(rctx, nil)
		cancel()
		if err != nil {
			return fmt.Errorf("receive from B: %w", err)
		}
	}
	fmt.Fprintf(log, "go-amqp: sent %d to A, received %d from A (with redeliveries), %d through B\n", sent, got, len(PlanB()))
	// RabbitMQ 3.10 answers a detach with closed=true by a detach without
	// it; go-amqp's Close would wait for the closed one, so the links are
	// left to the connection's close.
	return conn.Close()
}

// Refused runs what RabbitMQ 3.10's AMQP 1.0 plugin cannot take, each on a
// connection of its own that the broker ends (or whose session it ends):
// an amqp-value list of two elements, an array whose element constructor
// is smallint (0x54), a message with delivery-annotations, and the
// modified outcome. It fails if the broker
// takes any of them.
func Refused(ctx context.Context, addr, run string, log io.Writer) error {
	cases := []struct {
		name string
		do   func(ctx context.Context, sess *amqp.Session, q string) error
	}{
		{"value-list-2", func(ctx context.Context, sess *amqp.Session, q string) error {
			return sendOne(ctx, sess, q, &amqp.Message{Value: []any{int64(1), "two"}})
		}},
		{"array-smallint", func(ctx context.Context, sess *amqp.Session, q string) error {
			return sendOne(ctx, sess, q, &amqp.Message{Value: []int32{1, 2, 3, -4}})
		}},
		{"delivery-annotations", func(ctx context.Context, sess *amqp.Session, q string) error {
			return sendOne(ctx, sess, q, &amqp.Message{Value: "with delivery annotations",
				DeliveryAnnotations: amqp.Annotations{"x-opt-da": "da", int64(7): "integer key"}})
		}},
		{"modified", func(ctx context.Context, sess *amqp.Session, q string) error {
			if err := sendOne(ctx, sess, q, &amqp.Message{Value: "to be modified"}); err != nil {
				return fmt.Errorf("setting up: %w", err)
			}
			r, err := sess.NewReceiver(ctx, q, &amqp.ReceiverOptions{Name: "refused-r", Credit: 1})
			if err != nil {
				return fmt.Errorf("setting up: %w", err)
			}
			m, err := r.Receive(ctx, nil)
			if err != nil {
				return fmt.Errorf("setting up: %w", err)
			}
			if err := r.ModifyMessage(ctx, m, &amqp.ModifyMessageOptions{DeliveryFailed: true,
				Annotations: amqp.Annotations{"x-opt-modified": "yes"}}); err != nil {
				return err
			}
			s, err := sess.NewSender(ctx, q, &amqp.SenderOptions{Name: "after-modified"})
			if err != nil {
				return err
			}
			return s.Send(ctx, &amqp.Message{Value: "after"}, nil)
		}},
	}
	for _, c := range cases {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		conn, sess, err := dial(cctx, addr, "amqpsax-goamqp-"+c.name)
		if err != nil {
			cancel()
			return err
		}
		err = c.do(cctx, sess, fmt.Sprintf("/queue/amqpsax-goamqp-%s-%s", c.name, run))
		conn.Close()
		cancel()
		if err == nil {
			return fmt.Errorf("go-amqp: RabbitMQ accepted %s; update Refused and doc/peers.md", c.name)
		}
		if strings.HasPrefix(err.Error(), "setting up") {
			return fmt.Errorf("go-amqp: %s: %w", c.name, err)
		}
		var ce *amqp.ConnError
		var se *amqp.SessionError
		var le *amqp.LinkError
		fmt.Fprintf(log, "go-amqp: %s: refused by the broker as expected (conn %v session %v link %v deadline %v)\n", c.name,
			errors.As(err, &ce), errors.As(err, &se), errors.As(err, &le), errors.Is(err, context.DeadlineExceeded))
	}
	return nil
}

func sendOne(ctx context.Context, sess *amqp.Session, q string, m *amqp.Message) error {
	s, err := sess.NewSender(ctx, q, &amqp.SenderOptions{Name: "refused"})
	if err != nil {
		return fmt.Errorf("setting up: %w", err)
	}
	return s.Send(ctx, m, nil)
}
