package interop

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/amqpsax/amqpsax/amqptest"
	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/require"
)

// TestResponderManagementGoAMQP runs go-amqp v1.7.0 as RabbitMQ 4's Go
// client (rabbitmq-amqp-go-client's amqp_management.go) talks to its
// /management node, against package broker with a /management
// Responder that declares queues: a sender and a receiver of one name
// with properties {paired: true}, both naming /management (the
// receiver's target too), requests sent settled with reply-to "$me",
// the method in subject and the path in to; the reply's subject the
// status. Two connections do so at once, each getting its own replies.
func TestResponderManagementGoAMQP(t *testing.T) {
	var srv *amqptest.Server
	management := func(_ context.Context, req *message.Message, _ broker.Peer) (*message.Message, error) {
		status := "400"
		if p := req.Properties; p != nil && string(p.Subject) == "PUT" && strings.HasPrefix(string(p.To), "/queues/") {
			made, err := srv.Broker.Declare(strings.TrimPrefix(string(p.To), "/queues/"))
			if err != nil {
				return nil, err
			}
			status = "200"
			if made {
				status = "201"
			}
		}
		return &message.Message{Properties: &message.Properties{Subject: []byte(status)}}, nil
	}
	srv = amqptest.NewServer(t, &broker.Options{Responders: map[string]broker.Responder{"/management": management}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var wg sync.WaitGroup
	for c := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := amqp.Dial(ctx, srv.URL, &amqp.ConnOptions{SASLType: amqp.SASLTypeAnonymous()})
			if !assertNoErr(t, err) {
				return
			}
			defer conn.Close()
			s, err := conn.NewSession(ctx, nil)
			if !assertNoErr(t, err) {
				return
			}
			const pair = "management-link-pair"
			paired := map[string]any{"paired": true}
			snd, err := s.NewSender(ctx, "/management", &amqp.SenderOptions{Name: pair, Properties: paired,
				SourceAddress: "/management", SettlementMode: amqp.SenderSettleModeSettled.Ptr(),
				RequestedReceiverSettleMode: amqp.ReceiverSettleModeFirst.Ptr()})
			if !assertNoErr(t, err) {
				return
			}
			rcv, err := s.NewReceiver(ctx, "/management", &amqp.ReceiverOptions{Name: pair, Properties: paired,
				TargetAddress: "/management", RequestedSenderSettleMode: amqp.SenderSettleModeSettled.Ptr(),
				SettlementMode: amqp.ReceiverSettleModeFirst.Ptr(), Credit: 100})
			if !assertNoErr(t, err) {
				return
			}
			for i, want := range []string{"201", "200"} {
				id := fmt.Sprintf("req-%d-%d", c, i)
				to, subject, replyTo := fmt.Sprintf("/queues/q%d", c), "PUT", "$me"
				m := &amqp.Message{Properties: &amqp.MessageProperties{MessageID: id, To: &to, Subject: &subject,
					ReplyTo: &replyTo}, Value: map[string]any{"durable": true}}
				if !assertNoErr(t, snd.Send(ctx, m, &amqp.SendOptions{Settled: true})) {
					return
				}
				rep, err := rcv.Receive(ctx, nil)
				if !assertNoErr(t, err) {
					return
				}
				if rep.Properties.CorrelationID != id || rep.Properties.Subject == nil || *rep.Properties.Subject != want {
					t.Errorf("reply %v %v to %s, want %s", rep.Properties.CorrelationID, rep.Properties.Subject, id, want)
				}
			}
		}()
	}
	wg.Wait()
	for c := range 2 {
		_, ok := srv.Queue(fmt.Sprint("q", c))
		require.True(t, ok)
	}
	_, ok := srv.Queue("/management")
	require.False(t, ok, "no node at the responder's address")
}

func assertNoErr(t *testing.T, err error) bool {
	t.Helper()
	if err != nil {
		t.Error(err)
		return false
	}
	return true
}
