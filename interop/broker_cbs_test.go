package interop

import (
	"context"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/amqpsax/amqpsax/amqptest"
	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/require"
)

// TestResponderCBSGoAMQP runs go-amqp v1.7.0 as Azure's SDKs do
// claims-based security (azservicebus's internal cbs.go over its rpc
// link) against package broker with a $cbs Responder, started through
// amqptest: a sender to $cbs, a receiver from $cbs whose target address
// is the client's reply address, put-token requests with application
// properties operation, type, name and expiration and the token as the
// body's amqp-value, matched to their replies by correlation-id; the
// reply's status-code 202 for a token the node takes, 401 for another.
func TestResponderCBSGoAMQP(t *testing.T) {
	type seen struct{ typ, name, token string }
	got := make(chan seen, 8)
	cbs := func(_ context.Context, req *message.Message, _ broker.Peer) (*message.Message, error) {
		ap := req.ApplicationProperties
		s := seen{string(ap.Get("type").Bytes()), string(ap.Get("name").Bytes()), string(req.Body.Value.Bytes())}
		got <- s
		var vs message.Values
		status, desc := int32(202), "Accepted"
		if string(ap.Get("operation").Bytes()) != "put-token" || s.token != "SharedAccessSignature sr=ok" {
			status, desc = 401, "Unauthorized"
		}
		return &message.Message{ApplicationProperties: message.EntriesOf(
			message.Field{Key: vs.String("status-code"), Value: vs.Int(status)},
			message.Field{Key: vs.String("status-description"), Value: vs.String(desc)})}, nil
	}
	srv := amqptest.NewServer(t, &broker.Options{Responders: map[string]broker.Responder{"$cbs": cbs}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := amqp.Dial(ctx, srv.URL, &amqp.ConnOptions{SASLType: amqp.SASLTypeAnonymous()})
	require.NoError(t, err)
	defer conn.Close()
	s, err := conn.NewSession(ctx, nil)
	require.NoError(t, err)

	// rpc.go's link pair: the reply address is "$cbs" without its "$",
	// "-reply-to-" and an id.
	const reply = "cbs-reply-to-5f1e2d3c"
	snd, err := s.NewSender(ctx, "$cbs", nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "$cbs", &amqp.ReceiverOptions{TargetAddress: reply, Credit: 1000})
	require.NoError(t, err)
	require.Equal(t, "$cbs", rcv.Address())

	putToken := func(id, token string) *amqp.Message {
		replyTo := reply
		return &amqp.Message{
			Properties: &amqp.MessageProperties{MessageID: id, ReplyTo: &replyTo},
			ApplicationProperties: map[string]any{
				"operation":  "put-token",
				"type":       "servicebus.windows.net:sastoken",
				"name":       "amqp://ns.servicebus.windows.net/queue",
				"expiration": time.Now().Add(time.Hour).Unix(),
			},
			Value: token,
		}
	}
	want := map[string]int32{"put-1": 202, "put-2": 401}
	require.NoError(t, snd.Send(ctx, putToken("put-1", "SharedAccessSignature sr=ok"), nil))
	require.NoError(t, snd.Send(ctx, putToken("put-2", "SharedAccessSignature sr=bad"), nil))
	for range len(want) {
		m, err := rcv.Receive(ctx, nil)
		require.NoError(t, err)
		require.NoError(t, rcv.AcceptMessage(ctx, m))
		id, ok := m.Properties.CorrelationID.(string)
		require.True(t, ok, "correlation-id %v", m.Properties.CorrelationID)
		code, ok := m.ApplicationProperties["status-code"].(int32)
		require.True(t, ok, "status-code %#v", m.ApplicationProperties["status-code"])
		require.Equal(t, want[id], code, id)
		delete(want, id)
	}
	require.Empty(t, want)
	tokens := map[string]bool{}
	for range 2 { // the Responder runs each request on a goroutine of its own: in any order
		s := <-got
		require.Equal(t, "servicebus.windows.net:sastoken", s.typ)
		require.Equal(t, "amqp://ns.servicebus.windows.net/queue", s.name)
		tokens[s.token] = true
	}
	require.Equal(t, map[string]bool{"SharedAccessSignature sr=ok": true, "SharedAccessSignature sr=bad": true}, tokens)

	// The reply node goes with its receiver.
	require.NoError(t, rcv.Close(ctx))
	srv.Wait(reply, func(q broker.QueueStats) bool { return q.Name == "" })
}
