package interop

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/amqpsax/amqpsax/client"
	"github.com/stretchr/testify/require"
)

// TestRabbitMQ4 runs go-amqp v1.7.0 and package client against RabbitMQ
// 4.0 (Debian 13's 4.0.5, where AMQP 1.0 is native), at the address
// `.ci/rabbitmq4 start` prints as AMQPSAX_RABBITMQ4:
//
//   - sasl: PLAIN guest/guest and ANONYMOUS open a connection with either
//     client, a wrong password does not; a client without SASL is refused
//     (RabbitMQ 4 requires SASL for AMQP 1.0);
//   - v1: each client sends 1,000 messages to /queue/NAME (the 3.x address
//     form, deprecated in 4.0, which declares the queue) and receives them
//     back, every byte checked;
//   - management: go-amqp declares a queue through RabbitMQ's HTTP over
//     AMQP management node (/management, a sender and a receiver paired
//     by name), and each client sends and receives 1,000 messages on its
//     v2 address (/queues/NAME); the node then shows the queue empty and
//     deletes it;
//   - addresses: which address forms RabbitMQ 4.0 attaches a sender and a
//     receiver to, and which it refuses with what condition (logged, and
//     held to what RabbitMQ 4.0 documents for the forms tests rely on).
//
// Every subtest prints what works and what does not as log lines.
//
//	bash .ci/rabbitmq4 start
//	cd interop && AMQPSAX_RABBITMQ4=127.0.0.1:5682 go test -v -run TestRabbitMQ4 .
func TestRabbitMQ4(t *testing.T) {
	addr := os.Getenv("AMQPSAX_RABBITMQ4")
	if addr == "" {
		skip(t, "AMQPSAX_RABBITMQ4 is not set (start RabbitMQ 4.0 with `bash .ci/rabbitmq4 start`)")
	}
	guest := amqp.SASLTypePlain("guest", "guest")
	const n = 1000

	t.Run("sasl", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, c := range []struct {
			name string
			sasl amqp.SASLType
			ok   bool
		}{
			{"PLAIN guest/guest", guest, true},
			{"ANONYMOUS", amqp.SASLTypeAnonymous(), true},
			{"PLAIN guest/wrong", amqp.SASLTypePlain("guest", "wrong"), false},
			{"no SASL layer", nil, false},
		} {
			conn, err := amqp.Dial(ctx, "amqp://"+addr, &amqp.ConnOptions{SASLType: c.sasl})
			if err == nil {
				t.Logf("go-amqp, %s: opens (%s %s)", c.name, conn.Properties()["product"], conn.Properties()["version"])
				conn.Close()
			} else {
				t.Logf("go-amqp, %s: refused: %v", c.name, err)
			}
			require.Equal(t, c.ok, err == nil, "go-amqp, %s: %v", c.name, err)
		}
		for _, c := range []struct {
			name, url string
			ok        bool
		}{
			{"PLAIN guest/guest", "amqp://guest:guest@" + addr, true},
			{"no user", "amqp://" + addr, true},
			{"PLAIN guest/wrong", "amqp://guest:wrong@" + addr, false},
		} {
			conn, err := client.Dial(ctx, c.url, &client.ConnOptions{AllowInsecurePlain: true}) // a local peer
			if err == nil {
				t.Logf("client, %s: opens", c.name)
				require.NoError(t, conn.Close())
			} else {
				t.Logf("client, %s: refused: %v", c.name, err)
			}
			require.Equal(t, c.ok, err == nil, "client, %s: %v", c.name, err)
		}
	})

	t.Run("v1", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		q := "amqpsax-rmq4-v1-goamqp-" + runID
		start := time.Now()
		rmq4GoAMQPRound(ctx, t, addr, "/queue/"+q, n)
		t.Logf("go-amqp: %d messages each way on /queue/%s in %v", n, q, time.Since(start).Round(time.Millisecond))
		qc := "amqpsax-rmq4-v1-client-" + runID
		start = time.Now()
		clientRound(ctx, t, "amqp://guest:guest@"+addr, "/queue/"+qc, n)
		t.Logf("client: %d messages each way on /queue/%s in %v", n, qc, time.Since(start).Round(time.Millisecond))
		// The queues /queue/ declared, deleted through the management
		// node by their names.
		m := dialManagement(ctx, t, addr)
		for _, name := range []string{q, qc} {
			code, _, err := m.request(ctx, "DELETE", "/queues/"+url.PathEscape(name), amqp.Null{})
			require.NoError(t, err)
			require.Equal(t, "200", code, "DELETE /queues/%s", name)
		}
	})

	t.Run("management", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		m := dialManagement(ctx, t, addr)
		for _, c := range []struct {
			who   string
			round func(ctx context.Context, t *testing.T, address string)
		}{
			{"go-amqp", func(ctx context.Context, t *testing.T, address string) { rmq4GoAMQPRound(ctx, t, addr, address, n) }},
			{"client", func(ctx context.Context, t *testing.T, address string) {
				clientRound(ctx, t, "amqp://guest:guest@"+addr, address, n)
			}},
		} {
			name := "amqpsax-rmq4-v2-" + c.who + "-" + runID
			path := "/queues/" + url.PathEscape(name)
			code, v, err := m.request(ctx, "PUT", path, map[string]any{
				"durable": true, "exclusive": false, "auto_delete": false, "arguments": map[string]any{},
			})
			require.NoError(t, err)
			require.Contains(t, []string{"200", "201"}, code, "PUT %s: %v", path, v)
			info, _ := v.(map[string]any)
			t.Logf("go-amqp through /management: PUT %s: %s, type %v, durable %v", path, code, info["type"], info["durable"])
			start := time.Now()
			c.round(ctx, t, path)
			t.Logf("%s: %d messages each way on %s in %v", c.who, n, path, time.Since(start).Round(time.Millisecond))
			code, v, err = m.request(ctx, "GET", path, amqp.Null{})
			require.NoError(t, err)
			require.Equal(t, "200", code, "GET %s: %v", path, v)
			info, _ = v.(map[string]any)
			require.EqualValues(t, 0, info["message_count"], "GET %s: every message taken", path)
			code, v, err = m.request(ctx, "DELETE", path, amqp.Null{})
			require.NoError(t, err)
			require.Equal(t, "200", code, "DELETE %s: %v", path, v)
		}
	})

	t.Run("addresses", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		m := dialManagement(ctx, t, addr)
		declared := "amqpsax-rmq4-addr-" + runID
		code, v, err := m.request(ctx, "PUT", "/queues/"+declared, map[string]any{
			"durable": true, "exclusive": false, "auto_delete": false, "arguments": map[string]any{},
		})
		require.NoError(t, err)
		require.Contains(t, []string{"200", "201"}, code, "%v", v)
		bare := "amqpsax-rmq4-bare-" + runID
		for _, c := range []struct {
			address string
			// sender and receiver: whether RabbitMQ 4.0 attaches, where a
			// test relies on it (nil: only logged).
			sender, receiver *bool
		}{
			{"/queue/amqpsax-rmq4-v1q-" + runID, ptrTo(true), ptrTo(true)},
			{"/queues/" + declared, ptrTo(true), ptrTo(true)},
			{"/queues/amqpsax-rmq4-undeclared-" + runID, ptrTo(false), ptrTo(false)},
			{"/amq/queue/" + declared, nil, nil},
			{"/exchange/amq.direct/" + declared, nil, nil},
			{"/exchanges/amq.direct/" + declared, ptrTo(true), ptrTo(false)},
			{"/topic/amqpsax-rmq4", nil, nil},
			{bare, nil, nil},
		} {
			for _, role := range []string{"sender", "receiver"} {
				want := c.sender
				if role == "receiver" {
					want = c.receiver
				}
				err := rmq4Attach(ctx, addr, role, c.address)
				if err == nil {
					t.Logf("%s on %q: attached", role, c.address)
				} else {
					t.Logf("%s on %q: refused: %v", role, c.address, err)
				}
				if want != nil {
					require.Equal(t, *want, err == nil, "%s on %q: %v", role, c.address, err)
				}
			}
		}
		for _, name := range []string{declared, "amqpsax-rmq4-v1q-" + runID, bare} {
			if code, _, err := m.request(ctx, "DELETE", "/queues/"+name, amqp.Null{}); err == nil && code == "200" {
				t.Logf("DELETE /queues/%s: 200 (the queue was there)", name)
			}
		}
	})
}

// rmq4GoAMQPRound sends n messages to address with go-amqp, unsettled,
// then receives them back, each checked and accepted, and nothing more.
func rmq4GoAMQPRound(ctx context.Context, t *testing.T, addr, address string, n int) {
	conn, err := amqp.Dial(ctx, "amqp://"+addr, &amqp.ConnOptions{SASLType: amqp.SASLTypePlain("guest", "guest")})
	require.NoError(t, err)
	defer conn.Close()
	s, err := conn.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, address, nil)
	require.NoError(t, err, "attach a sender to %s", address)
	seed := "rmq4-" + address
	require.NoError(t, sendAll(ctx, snd, seed, n, 200, false))
	require.NoError(t, snd.Close(ctx))
	rcv, err := s.NewReceiver(ctx, address, &amqp.ReceiverOptions{Credit: 200})
	require.NoError(t, err, "attach a receiver to %s", address)
	require.NoError(t, receiveAll(ctx, rcv, seed, n, 200, false))
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err = rcv.Receive(short, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded, "a message beyond the %d sent", n)
	require.NoError(t, rcv.Close(ctx))
}

// rmq4Attach attaches a go-amqp sender or receiver to address on a
// connection of its own and detaches it: nil when RabbitMQ attached it,
// else its refusal.
func rmq4Attach(ctx context.Context, addr, role, address string) error {
	conn, err := amqp.Dial(ctx, "amqp://"+addr, &amqp.ConnOptions{SASLType: amqp.SASLTypePlain("guest", "guest")})
	if err != nil {
		return err
	}
	defer conn.Close()
	s, err := conn.NewSession(ctx, nil)
	if err != nil {
		return err
	}
	if role == "sender" {
		snd, err := s.NewSender(ctx, address, nil)
		if err != nil {
			return err
		}
		return snd.Close(ctx)
	}
	rcv, err := s.NewReceiver(ctx, address, nil)
	if err != nil {
		return err
	}
	return rcv.Close(ctx)
}

// rmqManagement is a go-amqp client of RabbitMQ 4's management node: HTTP
// requests over AMQP 1.0. A sender and a receiver attached to /management
// with one link name, the link property paired=true and one address for
// their other ends (the sender's source, the receiver's target; RabbitMQ
// refuses the second attach of a pair whose addresses differ) make a pair; a
// request is a message with the method as subject, the path as to, $me as
// reply-to and the body as an amqp-value; the reply comes on the receiver
// with the request's message-id as its correlation-id and the status code
// as its subject.
type rmqManagement struct {
	snd  *amqp.Sender
	rcv  *amqp.Receiver
	next int
}

// dialManagement opens a connection and the management link pair; both
// end with t.
//
// go-amqp's receiver grants its credit from a goroutine of its own after
// the attach, and RabbitMQ ends the session when a reply finds no credit
// ("insufficient credit (0) for management link"), so a request right
// after the attach can overtake the credit. The receiver is attached
// first (the sender's attach round trip is then behind its flow), it
// grants credit for more replies than a test makes (no top-up to race
// afterwards), and a first request proves the pair; where it was
// overtaken all the same, a new session is tried, a bounded number of
// times.
func dialManagement(ctx context.Context, t *testing.T, addr string) *rmqManagement {
	t.Helper()
	conn, err := amqp.Dial(ctx, "amqp://"+addr, &amqp.ConnOptions{SASLType: amqp.SASLTypePlain("guest", "guest")})
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	paired := map[string]any{"paired": true}
	const name = "amqpsax-management-link-pair"
	for attempt := 1; ; attempt++ {
		s, err := conn.NewSession(ctx, nil)
		require.NoError(t, err)
		rcv, err := s.NewReceiver(ctx, "/management", &amqp.ReceiverOptions{
			Name:                      name,
			Properties:                paired,
			TargetAddress:             "/management",
			Credit:                    1000,
			SettlementMode:            amqp.ReceiverSettleModeFirst.Ptr(),
			RequestedSenderSettleMode: amqp.SenderSettleModeSettled.Ptr(),
			ExpiryPolicy:              amqp.ExpiryPolicyLinkDetach,
		})
		require.NoError(t, err, "attach a receiver to /management")
		snd, err := s.NewSender(ctx, "/management", &amqp.SenderOptions{
			Name:                        name,
			Properties:                  paired,
			SourceAddress:               "/management",
			SettlementMode:              amqp.SenderSettleModeSettled.Ptr(),
			RequestedReceiverSettleMode: amqp.ReceiverSettleModeFirst.Ptr(),
			ExpiryPolicy:                amqp.ExpiryPolicyLinkDetach,
		})
		require.NoError(t, err, "attach a sender to /management")
		m := &rmqManagement{snd: snd, rcv: rcv}
		code, _, err := m.request(ctx, "GET", "/queues/amqpsax-rmq4-none-"+runID, amqp.Null{})
		var ae *amqp.Error
		if err != nil && errors.As(err, &ae) && ae.Condition == amqp.ErrCondPreconditionFailed && attempt < 20 {
			t.Logf("management pair, attempt %d: the request overtook the receiver's credit (%v): again on a new session", attempt, err)
			s.Close(ctx)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, "404", code, "GET a queue that is not there")
		return m
	}
}

// request sends method path with body and returns the reply's status
// code and body.
func (m *rmqManagement) request(ctx context.Context, method, path string, body any) (string, any, error) {
	m.next++
	id := fmt.Sprintf("amqpsax-%d", m.next)
	err := m.snd.Send(ctx, &amqp.Message{
		Properties: &amqp.MessageProperties{MessageID: id, To: &path, Subject: &method, ReplyTo: ptrTo("$me")},
		Value:      body,
	}, &amqp.SendOptions{Settled: true})
	if err != nil {
		return "", nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	reply, err := m.rcv.Receive(ctx, nil)
	if err != nil {
		return "", nil, fmt.Errorf("%s %s: no reply: %w", method, path, err)
	}
	if reply.Properties == nil || reply.Properties.CorrelationID != id || reply.Properties.Subject == nil {
		return "", nil, errors.New(method + " " + path + ": a reply without the request's correlation-id or a status")
	}
	return *reply.Properties.Subject, reply.Value, nil
}
