package interop

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/require"
)

// TestRabbitMQ4Client runs package client alone against RabbitMQ 4.0
// (AMQPSAX_RABBITMQ4, as TestRabbitMQ4), with no other AMQP library in
// the test:
//
//   - management: Session.NewRequester on /management as RabbitMQ's own
//     clients pair it (one link name, paired, requests settled, reply-to
//     "$me") declares a queue (PUT /queues/NAME, a map body: 201, then
//     200 for the same declaration again) and reads it (GET);
//
//   - messages: 10,000 messages each way on /queues/NAME (clientRound);
//
//   - modified: a delivery settled with the modified outcome
//     (delivery-failed, message annotations "x-opt-" keys) comes again
//     with those annotations and its delivery-count raised, on a quorum
//     queue (RabbitMQ 4.0 applies a modified outcome's annotations on
//     quorum queues) and on the classic queue above (logged);
//
//   - stream: a stream queue (x-queue-type stream) of 100 messages, read
//     from offset 40 with the rabbitmq:stream-offset-spec filter
//     (ReceiverOptions.Filters): the first message read is the 41st
//     sent, and RabbitMQ names the filter in its answer
//     (LinkSourceFilterValue);
//
//   - the queues are deleted through /management (200), and a GET then
//     finds none (404).
//
//     bash .ci/rabbitmq4 start
//     cd interop && AMQPSAX_RABBITMQ4=127.0.0.1:5682 go test -v -run TestRabbitMQ4Client .
func TestRabbitMQ4Client(t *testing.T) {
	addr := os.Getenv("AMQPSAX_RABBITMQ4")
	if addr == "" {
		skip(t, "AMQPSAX_RABBITMQ4 is not set (start RabbitMQ 4.0 with `bash .ci/rabbitmq4 start`)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	u := "amqp://guest:guest@" + addr
	c, err := client.Dial(ctx, u, &client.ConnOptions{AllowInsecurePlain: true}) // a local peer
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	m, err := s.NewRequester(ctx, "/management", &client.RequesterOptions{
		Name: "amqpsax-client-management-" + runID, Paired: true, Settled: true,
		ReplyAddress: "/management", ReplyTo: "$me",
	})
	require.NoError(t, err)
	defer m.Close(ctx)

	classic := "amqpsax-rmq4-client-classic-" + runID
	quorum := "amqpsax-rmq4-client-quorum-" + runID
	streamq := "amqpsax-rmq4-client-stream-" + runID
	declare := func(t *testing.T, name, kind string) {
		t.Helper()
		path := "/queues/" + url.PathEscape(name)
		body := map[string]any{"durable": true, "exclusive": false, "auto_delete": false,
			"arguments": map[string]any{"x-queue-type": kind}}
		code, v := rmq4Request(ctx, t, m, "PUT", path, body)
		require.Equal(t, "201", code, "PUT %s: %v", path, v)
		info := stringMap(v)
		require.Equal(t, kind, info["type"], "PUT %s: %v", path, v)
		t.Logf("client's Requester on /management: PUT %s: %s, type %v, durable %v", path, code, info["type"], info["durable"])
		code, v = rmq4Request(ctx, t, m, "PUT", path, body)
		require.Equal(t, "200", code, "PUT %s again: %v", path, v)
	}
	deleted := func(t *testing.T, name string) {
		t.Helper()
		path := "/queues/" + url.PathEscape(name)
		code, v := rmq4Request(ctx, t, m, "DELETE", path, nil)
		require.Equal(t, "200", code, "DELETE %s: %v", path, v)
		code, v = rmq4Request(ctx, t, m, "GET", path, nil)
		require.Equal(t, "404", code, "GET %s after its DELETE: %v", path, v)
	}

	t.Run("management", func(t *testing.T) {
		declare(t, classic, "classic")
		declare(t, quorum, "quorum")
		declare(t, streamq, "stream")
		code, v := rmq4Request(ctx, t, m, "GET", "/queues/"+url.PathEscape(classic), nil)
		require.Equal(t, "200", code, "GET: %v", v)
		info := stringMap(v)
		require.Equal(t, classic, info["name"], "GET: %v", v)
		require.EqualValues(t, 0, info["message_count"], "GET: %v", v)
		// A request the node refuses: its status, not an error.
		code, v = rmq4Request(ctx, t, m, "GET", "/queues/amqpsax-rmq4-client-none-"+runID, nil)
		require.Equal(t, "404", code, "GET a queue that is not there: %v", v)
	})

	t.Run("messages", func(t *testing.T) {
		const n = 10000
		start := time.Now()
		clientRound(ctx, t, u, "/queues/"+url.PathEscape(classic), n)
		t.Logf("client: %d messages each way on /queues/%s in %v", n, classic, time.Since(start).Round(time.Millisecond))
		code, v := rmq4Request(ctx, t, m, "GET", "/queues/"+url.PathEscape(classic), nil)
		require.Equal(t, "200", code, "GET: %v", v)
		info := stringMap(v)
		require.EqualValues(t, 0, info["message_count"], "GET: every message taken: %v", v)
	})

	t.Run("modified", func(t *testing.T) {
		for _, q := range []struct {
			name    string
			applies bool // RabbitMQ 4.0 applies the annotations
		}{{quorum, true}, {classic, false}} {
			got := rmq4Modify(ctx, t, s, "/queues/"+url.PathEscape(q.name))
			t.Logf("modified on /queues/%s: redelivered with delivery-count %d, x-opt-amqpsax-reason %v, x-opt-amqpsax-try %v",
				q.name, got.count, got.reason, got.try)
			if q.applies {
				require.Equal(t, "retry", got.reason, "the annotation the modified outcome carried")
				require.Equal(t, int64(2), got.try, "the annotation the modified outcome carried")
				require.Equal(t, uint32(1), got.count, "delivery-failed raises the delivery-count")
			}
		}
	})

	t.Run("stream", func(t *testing.T) {
		const n, from = 100, 40
		address := "/queues/" + url.PathEscape(streamq)
		snd, err := s.NewSender(ctx, address, nil)
		require.NoError(t, err)
		for i := range n {
			require.NoError(t, snd.Send(ctx, clientMsg(i), nil), "message %d", i)
		}
		require.NoError(t, snd.Close(ctx))
		const spec = "rabbitmq:stream-offset-spec"
		rcv, err := s.NewReceiver(ctx, address, &client.ReceiverOptions{
			Credit:  50,
			Filters: []client.LinkFilter{client.NewLinkFilter(spec, 0, int64(from))},
		})
		require.NoError(t, err)
		t.Logf("stream: RabbitMQ's answer names %s = %v", spec, rcv.LinkSourceFilterValue(spec))
		require.EqualValues(t, from, rcv.LinkSourceFilterValue(spec), "the filter RabbitMQ answers with")
		for i := from; i < n; i++ {
			d, err := rcv.Receive(ctx, nil)
			require.NoError(t, err, "message %d", i)
			require.NotNil(t, d.Message.Properties, "message %d", i)
			require.Equal(t, uint64(i), d.Message.Properties.MessageID.Any(), "message %d: from offset %d, in order", i, from)
			require.Equal(t, clientMsg(i).Body.Data, d.Message.Body.Data, "message %d: body", i)
			require.Equal(t, int64(i), anyInt(d.Message.MessageAnnotations.Get("x-stream-offset").Any()), "message %d: its offset", i)
			require.NoError(t, d.Accept(ctx))
		}
		t.Logf("stream: %d messages sent, %d read from offset %d, each with its x-stream-offset", n, n-from, from)
		require.NoError(t, rcv.Close(ctx))
	})

	t.Run("delete", func(t *testing.T) {
		for _, q := range []string{classic, quorum, streamq} {
			deleted(t, q)
		}
	})
}

// rmq4Request sends an HTTP-over-AMQP request to RabbitMQ's /management
// node with the client's Requester: method as subject, path as to, body
// (nil: null) as an amqp-value. It returns the reply's status (its
// subject) and body.
func rmq4Request(ctx context.Context, t *testing.T, r *client.Requester, method, path string, body any) (string, any) {
	t.Helper()
	var vs message.Values
	v, err := vs.Any(body)
	require.NoError(t, err)
	reply, err := r.Request(ctx, &message.Message{
		Properties: &message.Properties{To: []byte(path), Subject: []byte(method)},
		Body:       message.Body{Kind: message.BodyValue, Value: v},
	})
	require.NoError(t, err, "%s %s", method, path)
	require.NotNil(t, reply.Properties, "%s %s: a reply without properties", method, path)
	var out any
	if reply.Body.Kind == message.BodyValue {
		out, err = reply.Body.Value.Any()
		require.NoError(t, err, "%s %s: the reply's body", method, path)
	}
	return string(reply.Properties.Subject), out
}

// stringMap is a decoded AMQP map of string keys as a map[string]any
// (nil for any other value).
func stringMap(v any) map[string]any {
	m, ok := v.(map[any]any)
	if !ok {
		sm, _ := v.(map[string]any)
		return sm
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		if s, ok := k.(string); ok {
			out[s] = x
		}
	}
	return out
}

// modifiedSeen is what a redelivery after a modified outcome carried.
type modifiedSeen struct {
	count  uint32 // header delivery-count
	reason any    // message annotation x-opt-amqpsax-reason
	try    any    // message annotation x-opt-amqpsax-try
}

// rmq4Modify sends one message to address, receives it, settles it as
// modified (delivery-failed, two annotations), receives it again,
// accepts it, and returns what the redelivery carried.
func rmq4Modify(ctx context.Context, t *testing.T, s *client.Session, address string) modifiedSeen {
	t.Helper()
	snd, err := s.NewSender(ctx, address, nil)
	require.NoError(t, err)
	defer snd.Close(ctx)
	msg := clientMsg(7)
	require.NoError(t, snd.Send(ctx, msg, nil))
	rcv, err := s.NewReceiver(ctx, address, &client.ReceiverOptions{Credit: 10})
	require.NoError(t, err)
	defer rcv.Close(ctx)
	d, err := rcv.Receive(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, msg.Body.Data, d.Message.Body.Data)
	require.NoError(t, d.Modify(ctx, client.ModifyOptions{DeliveryFailed: true,
		Annotations: map[string]any{"x-opt-amqpsax-reason": "retry", "x-opt-amqpsax-try": int64(2)}}))
	again, err := rcv.Receive(ctx, nil)
	require.NoError(t, err, "the modified message again")
	require.Equal(t, msg.Body.Data, again.Message.Body.Data)
	var got modifiedSeen
	if h := again.Message.Header; h != nil {
		got.count = h.DeliveryCount
	}
	got.reason, _ = again.Message.MessageAnnotations.Get("x-opt-amqpsax-reason").Any()
	if v := again.Message.MessageAnnotations.Get("x-opt-amqpsax-try"); v.Kind() != 0 {
		got.try = anyInt(v.Any())
	}
	require.NoError(t, again.Accept(ctx))
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err = rcv.Receive(short, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		require.Fail(t, fmt.Sprintf("%s: a message beyond the one sent: %v", address, err))
	}
	return got
}
