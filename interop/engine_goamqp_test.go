package interop

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/stretchr/testify/require"
)

// TestEngineGoAMQP runs Azure/go-amqp v1.7.0 against examples/broker (see
// engine_test.go), one case per subtest, each through its own amqpspy.
func TestEngineGoAMQP(t *testing.T) {
	tg := engineTargetFor(t)
	for _, c := range goamqpCases {
		t.Run(c.name, func(t *testing.T) {
			if why := c.skip(tg); why != "" {
				t.Skip(why)
			}
			spy := spyOn(t, tg.addr)
			g := &goamqpCase{t: t, tg: tg, addr: spy.Addr, q: tg.queue("engine-" + c.name + "-" + runID)}
			err := withTimeout(time.Minute, g.with(c.run))
			check := c.check
			check.rabbit = tg.rabbit
			spy.finish(check)
			require.NoError(t, err)
		})
	}
}

// goamqpCase is what a case works with.
type goamqpCase struct {
	t    *testing.T
	tg   *engineTarget
	addr string // amqpspy
	q    string // the case's queue
}

func (g *goamqpCase) with(run func(ctx context.Context, g *goamqpCase) error) func(ctx context.Context) error {
	return func(ctx context.Context) error { return run(ctx, g) }
}

// dial connects with SASL PLAIN and the target's account, opts adjusted
// by adjust.
func (g *goamqpCase) dial(ctx context.Context, adjust func(*amqp.ConnOptions)) (*amqp.Conn, error) {
	opts := &amqp.ConnOptions{ContainerID: "engine-interop", SASLType: amqp.SASLTypePlain(g.tg.user, g.tg.pass)}
	if adjust != nil {
		adjust(opts)
	}
	return amqp.Dial(ctx, "amqp://"+g.addr, opts)
}

// session dials and begins one session.
func (g *goamqpCase) session(ctx context.Context, adjust func(*amqp.ConnOptions)) (*amqp.Conn, *amqp.Session, error) {
	conn, err := g.dial(ctx, adjust)
	if err != nil {
		return nil, nil, err
	}
	s, err := conn.NewSession(ctx, nil)
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return conn, s, nil
}

// testMsg is message i of a case: properties with a message-id and a
// subject, an application property and a data section of size bytes,
// all derived from (seed, i) so a receiver can check every byte.
func testMsg(seed string, i, size int) *amqp.Message {
	return &amqp.Message{
		Properties:            &amqp.MessageProperties{MessageID: fmt.Sprintf("%s-%d", seed, i), Subject: ptrTo("engine-interop")},
		ApplicationProperties: map[string]any{"i": int64(i), "seed": seed},
		Data:                  [][]byte{payload(seed, i, size)},
	}
}

func ptrTo[T any](v T) *T { return &v }

// payload is size pseudo-random bytes determined by (seed, i).
func payload(seed string, i, size int) []byte {
	var h uint64 = 14695981039346656037
	for _, c := range []byte(seed) {
		h = (h ^ uint64(c)) * 1099511628211
	}
	r := rand.New(rand.NewPCG(h, uint64(i)))
	b := make([]byte, size)
	for j := 0; j < size; j += 8 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		copy(b[j:], w[:])
	}
	return b
}

// checkMsg compares a received message with message i of seed: id,
// application properties and every byte of the body.
func checkMsg(m *amqp.Message, seed string, size int) (int, error) {
	i, ok := m.ApplicationProperties["i"].(int64)
	if !ok || m.ApplicationProperties["seed"] != seed {
		return 0, fmt.Errorf("a message not of this case: %v", m.ApplicationProperties)
	}
	if m.Properties == nil || m.Properties.MessageID != fmt.Sprintf("%s-%d", seed, i) {
		return 0, fmt.Errorf("message %d: properties %+v", i, m.Properties)
	}
	if len(m.Data) != 1 || !bytes.Equal(m.Data[0], payload(seed, int(i), size)) {
		return 0, fmt.Errorf("message %d: body differs (%d sections)", i, len(m.Data))
	}
	return int(i), nil
}

// sent opens a session and sends n messages of size bytes (testMsg's,
// from seed) to the case's queue, unsettled, before anything receives
// them: how the cases that test the broker's delivery begin.
func (g *goamqpCase) sent(ctx context.Context, seed string, n, size int) (*amqp.Conn, *amqp.Session, error) {
	conn, s, err := g.session(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	snd, err := s.NewSender(ctx, g.q, nil)
	if err == nil {
		err = sendAll(ctx, snd, seed, n, size, false)
	}
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return conn, s, nil
}

// sendAll sends n messages of seed on snd; settled sends them
// pre-settled. go-amqp's Send waits for the outcome of an unsettled
// message, so up to eight goroutines send at once: that many deliveries
// in flight.
func sendAll(ctx context.Context, snd *amqp.Sender, seed string, n, size int, settled bool) error {
	workers := min(8, n)
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			for i := w; i < n; i += workers {
				if err := snd.Send(ctx, testMsg(seed, i, size), &amqp.SendOptions{Settled: settled}); err != nil {
					errs <- fmt.Errorf("send %d of %d: %w", i+1, n, err)
					return
				}
			}
			errs <- nil
		}()
	}
	var first error
	for range workers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// receiveAll receives n messages of seed on rcv, each checked and
// accepted (unless settled: the broker sent them settled), each index
// once and all of them.
func receiveAll(ctx context.Context, rcv *amqp.Receiver, seed string, n, size int, settled bool) error {
	seen := make([]bool, n)
	for k := range n {
		m, err := rcv.Receive(ctx, nil)
		if err != nil {
			return fmt.Errorf("receive %d of %d: %w", k+1, n, err)
		}
		i, err := checkMsg(m, seed, size)
		if err != nil {
			return err
		}
		if i >= n || seen[i] {
			return fmt.Errorf("message %d received twice or out of range", i)
		}
		seen[i] = true
		if !settled {
			if err := rcv.AcceptMessage(ctx, m); err != nil {
				return fmt.Errorf("accept %d: %w", i, err)
			}
		}
	}
	return nil
}

// sendReceive sends n messages on one link and receives them on another
// at the same time.
func (g *goamqpCase) sendReceive(ctx context.Context, s *amqp.Session, q, seed string, n, size int, so *amqp.SenderOptions, ro *amqp.ReceiverOptions) error {
	snd, err := s.NewSender(ctx, q, so)
	if err != nil {
		return fmt.Errorf("attach sender: %w", err)
	}
	rcv, err := s.NewReceiver(ctx, q, ro)
	if err != nil {
		return fmt.Errorf("attach receiver: %w", err)
	}
	settledIn := ro != nil && ro.RequestedSenderSettleMode != nil && *ro.RequestedSenderSettleMode == amqp.SenderSettleModeSettled
	settledOut := so != nil && so.SettlementMode != nil && *so.SettlementMode == amqp.SenderSettleModeSettled
	errs := make(chan error, 1)
	go func() { errs <- sendAll(ctx, snd, seed, n, size, settledOut) }()
	rerr := receiveAll(ctx, rcv, seed, n, size, settledIn)
	if err := <-errs; err != nil {
		return err
	}
	if rerr != nil {
		return rerr
	}
	if g.tg.rabbit {
		// RabbitMQ 3.10 answers a detach with closed=true by one without
		// it, and go-amqp's Close waits for the closed one: the links are
		// left to the connection's close.
		return nil
	}
	if err := snd.Close(ctx); err != nil {
		return fmt.Errorf("detach sender: %w", err)
	}
	if err := rcv.Close(ctx); err != nil {
		return fmt.Errorf("detach receiver: %w", err)
	}
	return nil
}

var goamqpCases = []struct {
	name  string
	check engineCheck
	skip  func(tg *engineTarget) string
	run   func(ctx context.Context, g *goamqpCase) error
}{
	{"10k-small", engineCheck{messages: true}, never, func(ctx context.Context, g *goamqpCase) error {
		conn, s, err := g.session(ctx, nil)
		if err != nil {
			return err
		}
		defer conn.Close()
		if err := g.sendReceive(ctx, s, g.q, "small", 10_000, 100, nil, &amqp.ReceiverOptions{Credit: 500}); err != nil {
			return err
		}
		return conn.Close()
	}},
	{"1MiB-16KiB-frames", engineCheck{messages: true}, never, func(ctx context.Context, g *goamqpCase) error {
		conn, s, err := g.session(ctx, func(o *amqp.ConnOptions) { o.MaxFrameSize = 16 << 10 })
		if err != nil {
			return err
		}
		defer conn.Close()
		if err := g.sendReceive(ctx, s, g.q, "large", 6, 1<<20, nil, &amqp.ReceiverOptions{Credit: 2}); err != nil {
			return err
		}
		return conn.Close()
	}},
	{"credit-1", engineCheck{messages: true}, never, func(ctx context.Context, g *goamqpCase) error {
		conn, s, err := g.session(ctx, nil)
		if err != nil {
			return err
		}
		defer conn.Close()
		if err := g.sendReceive(ctx, s, g.q, "credit1", 300, 200, nil, &amqp.ReceiverOptions{Credit: 1}); err != nil {
			return err
		}
		return conn.Close()
	}},
	{"sessions-and-links", engineCheck{messages: true}, never, func(ctx context.Context, g *goamqpCase) error {
		// One connection, four sessions, each with two queues, each
		// queue with a sender and a receiver: 16 links at once.
		conn, err := g.dial(ctx, nil)
		if err != nil {
			return err
		}
		defer conn.Close()
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for si := range 4 {
			s, err := conn.NewSession(ctx, nil)
			if err != nil {
				return fmt.Errorf("session %d: %w", si, err)
			}
			for qi := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					seed := fmt.Sprintf("s%d-q%d", si, qi)
					if err := g.sendReceive(ctx, s, fmt.Sprintf("%s-%s", g.q, seed), seed, 150, 300,
						&amqp.SenderOptions{Name: "snd-" + seed}, &amqp.ReceiverOptions{Name: "rcv-" + seed, Credit: 20}); err != nil {
						errs <- fmt.Errorf("%s: %w", seed, err)
					}
				}()
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			return err
		}
		return conn.Close()
	}},
	{"presettled-and-unsettled", engineCheck{messages: true}, never, func(ctx context.Context, g *goamqpCase) error {
		conn, s, err := g.session(ctx, nil)
		if err != nil {
			return err
		}
		defer conn.Close()
		settled := ptrTo(amqp.SenderSettleModeSettled)
		unsettled := ptrTo(amqp.SenderSettleModeUnsettled)
		// Pre-settled in, pre-settled out; unsettled in, unsettled out;
		// and each with the other.
		for _, m := range []struct {
			name    string
			in, out *amqp.SenderSettleMode
		}{{"ps-ps", settled, settled}, {"us-us", unsettled, unsettled}, {"ps-us", settled, unsettled}, {"us-ps", unsettled, settled}} {
			credit := int32(50)
			if g.tg.rabbit {
				// RabbitMQ 3.10 stalls a link whose credit go-amqp tops up
				// (seen: 125 of 200 delivered with credit 50).
				credit = 200
			}
			if err := g.sendReceive(ctx, s, g.q+"-"+m.name, m.name, 200, 150,
				&amqp.SenderOptions{SettlementMode: m.in},
				&amqp.ReceiverOptions{Credit: credit, RequestedSenderSettleMode: m.out}); err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
		}
		return conn.Close()
	}},
	{"rcv-settle-second", engineCheck{messages: true}, rabbitNoSecond, func(ctx context.Context, g *goamqpCase) error {
		conn, s, err := g.session(ctx, nil)
		if err != nil {
			return err
		}
		defer conn.Close()
		second := ptrTo(amqp.ReceiverSettleModeSecond)
		// The broker receives in mode second (it settles after the
		// sender does), and sends to a receiver in mode second (go-amqp
		// settles after the broker settles its accepted delivery).
		if err := g.sendReceive(ctx, s, g.q, "second", 200, 150,
			&amqp.SenderOptions{RequestedReceiverSettleMode: second},
			&amqp.ReceiverOptions{Credit: 20, SettlementMode: second}); err != nil {
			return err
		}
		return conn.Close()
	}},
	{"detach-with-error", engineCheck{messages: true}, never, func(ctx context.Context, g *goamqpCase) error {
		conn, s, err := g.session(ctx, nil)
		if err != nil {
			return err
		}
		defer conn.Close()
		// go-amqp returns the detach's error as an *amqp.Error when it
		// answers the attach (RabbitMQ), as a *LinkError's RemoteErr when
		// it follows the attach's answer (examples/broker): then Receive
		// returns it.
		rcv, err := s.NewReceiver(ctx, g.tg.refused, nil)
		if err == nil {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, err = rcv.Receive(rctx, nil)
			cancel()
		}
		remote, ok := errorsAs[*amqp.Error](err)
		if le, isLE := errorsAs[*amqp.LinkError](err); isLE {
			remote, ok = le.RemoteErr, le.RemoteErr != nil
		}
		if !ok || remote.Condition == "" {
			return fmt.Errorf("a receiver from %q: want a detach with an error, got %v", g.tg.refused, err)
		}
		g.t.Logf("the broker refused %q: %s: %s", g.tg.refused, remote.Condition, remote.Description)
		// The session and the connection go on. (RabbitMQ 3.10 ends the
		// session too, as AMQP 0-9-1 ends a channel on not-found: a
		// new session there.)
		if g.tg.rabbit {
			if s, err = conn.NewSession(ctx, nil); err != nil {
				return err
			}
		}
		if err := g.sendReceive(ctx, s, g.q, "after-detach", 20, 100, nil, &amqp.ReceiverOptions{Credit: 10}); err != nil {
			return fmt.Errorf("after the refused link: %w", err)
		}
		return conn.Close()
	}},
	{"idle-timeout-heartbeats", engineCheck{messages: true, heartbeats: 4, clientHeartbeats: 2}, rabbitNoHeartbeats, func(ctx context.Context, g *goamqpCase) error {
		// go-amqp asks for frames at least every second; the broker
		// announces its own idle-time-out (examples/broker: 2 s) that
		// go-amqp must keep. The connection idles three times as long
		// as the longer of the two, then works.
		const idle = time.Second
		conn, s, err := g.session(ctx, func(o *amqp.ConnOptions) { o.IdleTimeout = idle })
		if err != nil {
			return err
		}
		defer conn.Close()
		rcv, err := s.NewReceiver(ctx, g.q, &amqp.ReceiverOptions{Credit: 10})
		if err != nil {
			return err
		}
		wait := 3 * max(idle, g.tg.idle)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		snd, err := s.NewSender(ctx, g.q, nil)
		if err != nil {
			return fmt.Errorf("after %v idle: %w", wait, err)
		}
		if err := sendAll(ctx, snd, "idle", 5, 100, false); err != nil {
			return fmt.Errorf("after %v idle: %w", wait, err)
		}
		if err := receiveAll(ctx, rcv, "idle", 5, 100, false); err != nil {
			return fmt.Errorf("after %v idle: %w", wait, err)
		}
		return conn.Close()
	}},
	{"sasl-plain-wrong-password", engineCheck{messages: true}, never, func(ctx context.Context, g *goamqpCase) error {
		conn, err := g.dial(ctx, func(o *amqp.ConnOptions) { o.SASLType = amqp.SASLTypePlain(g.tg.user, g.tg.pass+"-wrong") })
		if err == nil {
			conn.Close()
			return fmt.Errorf("a wrong password was taken")
		}
		g.t.Logf("wrong password refused: %v", err)
		// The right one is taken.
		conn, s, err := g.session(ctx, nil)
		if err != nil {
			return fmt.Errorf("the right password: %w", err)
		}
		defer conn.Close()
		if err := g.sendReceive(ctx, s, g.q, "sasl", 3, 100, nil, &amqp.ReceiverOptions{Credit: 3}); err != nil {
			return err
		}
		return conn.Close()
	}},
	{"drain", engineCheck{messages: true}, never, func(ctx context.Context, g *goamqpCase) error {
		// A receiver that manages its credit: 10 granted for 3 queued
		// messages, then a drain the broker must answer with its flow
		// state (part 2 §2.6.7: "advance the delivery-count as much as
		// possible, consuming all link-credit, and send the flow state to
		// the receiver") — DrainCredit returns once it has. go-amqp's
		// drain flow carries link-credit 0: RabbitMQ answers it (drain,
		// credit 0); a sender must, whatever the credit left.
		conn, s, err := g.session(ctx, nil)
		if err != nil {
			return err
		}
		defer conn.Close()
		snd, err := s.NewSender(ctx, g.q, nil)
		if err != nil {
			return err
		}
		if err := sendAll(ctx, snd, "drain", 3, 100, false); err != nil {
			return err
		}
		rcv, err := s.NewReceiver(ctx, g.q, &amqp.ReceiverOptions{Credit: -1})
		if err != nil {
			return err
		}
		if err := rcv.IssueCredit(10); err != nil {
			return err
		}
		if err := receiveAll(ctx, rcv, "drain", 3, 100, false); err != nil {
			return err
		}
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := rcv.DrainCredit(dctx, nil); err != nil {
			return fmt.Errorf("drain: %w", err)
		}
		if g.tg.rabbit {
			// RabbitMQ 3.10 answers the drain, then drops the connection
			// when credit is granted again (seen: EOF).
			return conn.Close()
		}
		// Credit again, and a message that comes after the drain.
		if err := rcv.IssueCredit(1); err != nil {
			return err
		}
		if err := snd.Send(ctx, testMsg("drain-after", 0, 100), nil); err != nil {
			return err
		}
		m, err := rcv.Receive(ctx, nil)
		if err != nil {
			return fmt.Errorf("after the drain: %w", err)
		}
		if _, err := checkMsg(m, "drain-after", 100); err != nil {
			return err
		}
		if err := rcv.AcceptMessage(ctx, m); err != nil {
			return err
		}
		return conn.Close()
	}},
	{"outcomes-and-redelivery", engineCheck{messages: true, redelivered: 20}, never, func(ctx context.Context, g *goamqpCase) error {
		// Of 60 messages the receiver releases every 6th and modifies
		// (delivery-failed) every 10th when it first sees them — the
		// broker delivers those again — rejects every 7th and accepts
		// the rest; every message ends accepted or rejected, once.
		const n = 60
		conn, s, err := g.sent(ctx, "outcomes", n, 120)
		if err != nil {
			return err
		}
		defer conn.Close()
		rcv, err := s.NewReceiver(ctx, g.q, &amqp.ReceiverOptions{Credit: 10})
		if err != nil {
			return err
		}
		seen := make([]int, n)
		final := 0
		for final < n {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			m, err := rcv.Receive(rctx, nil)
			cancel()
			if err != nil {
				return fmt.Errorf("receive (%d of %d settled finally): %w", final, n, err)
			}
			i, err := checkMsg(m, "outcomes", 120)
			if err != nil {
				return err
			}
			seen[i]++
			switch {
			case seen[i] > 2:
				return fmt.Errorf("message %d delivered %d times", i, seen[i])
			case seen[i] == 1 && i%6 == 0:
				err = rcv.ReleaseMessage(ctx, m)
			case seen[i] == 1 && i%10 == 5 && g.tg.rabbit:
				// RabbitMQ 3.10 ends the session on the modified outcome.
				err = rcv.ReleaseMessage(ctx, m)
			case seen[i] == 1 && i%10 == 5:
				err = rcv.ModifyMessage(ctx, m, &amqp.ModifyMessageOptions{DeliveryFailed: true})
			case i%7 == 3:
				err, final = rcv.RejectMessage(ctx, m, &amqp.Error{Condition: "amqp:internal-error", Description: "rejected by the interop test"}), final+1
			default:
				err, final = rcv.AcceptMessage(ctx, m), final+1
			}
			if err != nil {
				return fmt.Errorf("settle %d: %w", i, err)
			}
		}
		for i, k := range seen {
			want := 1
			if i%6 == 0 || i%10 == 5 {
				want = 2
			}
			if k != want {
				return fmt.Errorf("message %d delivered %d times, want %d", i, k, want)
			}
		}
		return conn.Close()
	}},
	{"unsettled-requeued-on-detach", engineCheck{messages: true, redelivered: 10}, never, func(ctx context.Context, g *goamqpCase) error {
		// A receiver takes 10 messages without settling them and
		// detaches: the broker must deliver them again, to the next
		// receiver, with the 10 it never sent.
		const n = 20
		conn, s, err := g.sent(ctx, "requeue", n, 100)
		if err != nil {
			return err
		}
		defer conn.Close()
		first, err := s.NewReceiver(ctx, g.q, &amqp.ReceiverOptions{Credit: 10})
		if err != nil {
			return err
		}
		for k := range 10 {
			m, err := first.Receive(ctx, nil)
			if err != nil {
				return fmt.Errorf("receive %d: %w", k+1, err)
			}
			if _, err := checkMsg(m, "requeue", 100); err != nil {
				return err
			}
		}
		if !g.tg.rabbit {
			if err := first.Close(ctx); err != nil {
				return fmt.Errorf("detach with 10 unsettled: %w", err)
			}
		} else {
			// RabbitMQ 3.10 answers a detach with closed=true by one
			// without it (go-amqp's Close waits for it): end the session
			// instead, which returns the messages too.
			if err := s.Close(ctx); err != nil {
				return err
			}
			if s, err = conn.NewSession(ctx, nil); err != nil {
				return err
			}
		}
		second, err := s.NewReceiver(ctx, g.q, &amqp.ReceiverOptions{Credit: 10})
		if err != nil {
			return err
		}
		if err := receiveAll(ctx, second, "requeue", n, 100, false); err != nil {
			return fmt.Errorf("after the detach: %w", err)
		}
		return conn.Close()
	}},
	{"end-with-links-attached", engineCheck{messages: true}, never, func(ctx context.Context, g *goamqpCase) error {
		// A session ends with a sender and a receiver still attached:
		// the broker answers the end, the connection goes on.
		conn, s, err := g.session(ctx, nil)
		if err != nil {
			return err
		}
		defer conn.Close()
		snd, err := s.NewSender(ctx, g.q, nil)
		if err != nil {
			return err
		}
		rcv, err := s.NewReceiver(ctx, g.q, &amqp.ReceiverOptions{Credit: 5})
		if err != nil {
			return err
		}
		if err := sendAll(ctx, snd, "end", 5, 100, false); err != nil {
			return err
		}
		if err := receiveAll(ctx, rcv, "end", 5, 100, false); err != nil {
			return err
		}
		if err := s.Close(ctx); err != nil {
			return fmt.Errorf("end: %w", err)
		}
		s2, err := conn.NewSession(ctx, nil)
		if err != nil {
			return fmt.Errorf("a session after the end: %w", err)
		}
		if err := g.sendReceive(ctx, s2, g.q+"-2", "end-after", 5, 100, nil, &amqp.ReceiverOptions{Credit: 5}); err != nil {
			return err
		}
		return conn.Close()
	}},
	{"max-message-size", engineCheck{messages: true}, rabbitIgnoresMaxMessageSize, func(ctx context.Context, g *goamqpCase) error {
		// A receiver announces a max-message-size of 1000 bytes; the
		// queue holds a message of 5000 bytes, then one of 100. The
		// broker must not send the large one on that link (part 2
		// §2.7.3), and must not stall it either: the small one arrives.
		// A receiver without a limit then takes the large one.
		conn, s, err := g.session(ctx, nil)
		if err != nil {
			return err
		}
		defer conn.Close()
		snd, err := s.NewSender(ctx, g.q, nil)
		if err != nil {
			return err
		}
		if err := snd.Send(ctx, testMsg("big", 0, 5000), nil); err != nil {
			return err
		}
		if err := snd.Send(ctx, testMsg("small", 0, 100), nil); err != nil {
			return err
		}
		limited, err := s.NewReceiver(ctx, g.q, &amqp.ReceiverOptions{Credit: 5, MaxMessageSize: 1000})
		if err != nil {
			return err
		}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		m, err := limited.Receive(rctx, nil)
		cancel()
		if err != nil {
			return fmt.Errorf("the small message behind a large one, on a link of max-message-size 1000: %w", err)
		}
		if _, err := checkMsg(m, "small", 100); err != nil {
			return err
		}
		if err := limited.AcceptMessage(ctx, m); err != nil {
			return err
		}
		any, err := s.NewReceiver(ctx, g.q, &amqp.ReceiverOptions{Credit: 5})
		if err != nil {
			return err
		}
		if err := receiveAll(ctx, any, "big", 1, 5000, false); err != nil {
			return fmt.Errorf("the large message, on a link without a limit: %w", err)
		}
		return conn.Close()
	}},
}

func never(*engineTarget) string { return "" }

// rabbitIgnoresMaxMessageSize: RabbitMQ 3.10 sends a 5000-byte message on
// a link whose receiver announced a max-message-size of 1000 (seen).
func rabbitIgnoresMaxMessageSize(tg *engineTarget) string {
	if tg.rabbit {
		return "RabbitMQ 3.10 ignores a receiver's max-message-size"
	}
	return ""
}

// rabbitNoHeartbeats: RabbitMQ 3.10 (as configured by .ci/broker) sends
// no heartbeat within a client's idle-time-out of a second: go-amqp ends
// the connection (seen: "read tcp …: i/o timeout" after 3 s idle, no empty
// frame from the broker).
func rabbitNoHeartbeats(tg *engineTarget) string {
	if tg.rabbit {
		return "RabbitMQ 3.10 sends no heartbeats within a client's idle-time-out of 1 s"
	}
	return ""
}

// rabbitNoSecond: RabbitMQ 3.10 refuses rcv-settle-mode second (seen:
// amqp:not-implemented "rcv-settle-mode second not supported").
func rabbitNoSecond(tg *engineTarget) string {
	if tg.rabbit {
		return "RabbitMQ 3.10 refuses rcv-settle-mode second (amqp:not-implemented)"
	}
	return ""
}
