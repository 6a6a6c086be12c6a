package broker_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/require"
)

// echoResponder answers a request with its body, and the application property
// "op" as the reply's subject.
func echoResponder(_ context.Context, req *message.Message, from broker.Peer) (*message.Message, error) {
	op := req.ApplicationProperties.Get("op")
	if string(op.Bytes()) == "fail" {
		return nil, errors.New("op fail failed")
	}
	return &message.Message{Properties: &message.Properties{Subject: []byte(string(op.Bytes()) + " from " + from.Link)},
		Body: req.Body}, nil
}

func session(t *testing.T, addr string) *client.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	c, err := client.Dial(ctx, "amqp://"+addr, nil)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	return s
}

func request(op, body string) *message.Message {
	var vs message.Values
	return &message.Message{
		ApplicationProperties: message.EntriesOf(message.Field{Key: vs.String("op"), Value: vs.String(op)}),
		Body:                  message.Body{Kind: message.BodyData, Data: [][]byte{[]byte(body)}}}
}

// TestResponder runs package client's Requester against a Responder in
// each way services take requests: Azure's (the reply address as the
// receiver's target), RabbitMQ 4's /management (paired links of one
// name, settled requests, reply-to "$me") and a dynamic reply node;
// many requests in flight at once, each reply correlated.
func TestResponder(t *testing.T) {
	addr, b := start(t, broker.Options{Responders: map[string]broker.Responder{"$svc": echoResponder}})
	for _, tc := range []struct {
		name string
		opts *client.RequesterOptions
	}{
		{"reply-address", nil},
		{"paired-me", &client.RequesterOptions{Name: "pair", Paired: true, Settled: true, ReplyTo: "$me"}},
		{"dynamic", &client.RequesterOptions{DynamicReply: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			r, err := session(t, addr).NewRequester(ctx, "$svc", tc.opts)
			require.NoError(t, err)
			var wg sync.WaitGroup
			for i := range 40 { // more than MaxRequestsInFlight
				wg.Add(1)
				go func() {
					defer wg.Done()
					body := fmt.Sprint("req ", i)
					rep, err := r.Request(ctx, request("put", body))
					if !assertNoError(t, err) {
						return
					}
					if string(rep.Body.Data[0]) != body || string(rep.Properties.Subject[:3]) != "put" {
						t.Errorf("reply %q %q to %q", rep.Body.Data, rep.Properties.Subject, body)
					}
				}()
			}
			wg.Wait()
			require.NoError(t, r.Close(ctx))
		})
	}
	_, ok := b.Queue("$svc")
	require.False(t, ok, "a responder's address is no queue")
}

func assertNoError(t *testing.T, err error) bool {
	t.Helper()
	if err != nil {
		t.Error(err)
		return false
	}
	return true
}

// TestResponderError: an error of the Responder rejects the request with
// amqp:internal-error, and the link goes on serving.
func TestResponderError(t *testing.T) {
	addr, _ := start(t, broker.Options{Responders: map[string]broker.Responder{"$svc": echoResponder}})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	r, err := session(t, addr).NewRequester(ctx, "$svc", nil)
	require.NoError(t, err)
	_, err = r.Request(ctx, request("fail", "x"))
	var oe *client.OutcomeError
	require.ErrorAs(t, err, &oe)
	require.Equal(t, "amqp:internal-error", oe.Err.Condition)
	require.Contains(t, oe.Err.Description, "op fail failed")
	rep, err := r.Request(ctx, request("get", "y"))
	require.NoError(t, err)
	require.Equal(t, "y", string(rep.Body.Data[0]))
}

// TestResponderSlow: a Responder that does not return holds nothing
// else back, on its connection or another, and its ctx ends with its
// link.
func TestResponderSlow(t *testing.T) {
	running := make(chan struct{})
	ended := make(chan error, 1)
	addr, _ := start(t, broker.Options{Responders: map[string]broker.Responder{
		"$svc": echoResponder,
		"$slow": func(ctx context.Context, _ *message.Message, _ broker.Peer) (*message.Message, error) {
			close(running)
			<-ctx.Done()
			ended <- ctx.Err()
			return nil, ctx.Err()
		},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	s := session(t, addr)
	slow, err := s.NewSender(ctx, "$slow", nil)
	require.NoError(t, err)
	go slow.Send(ctx, request("x", "y"), nil)
	<-running
	r, err := s.NewRequester(ctx, "$svc", nil)
	require.NoError(t, err)
	_, err = r.Request(ctx, request("get", "z"))
	require.NoError(t, err)
	require.NoError(t, slow.Close(ctx))
	require.ErrorIs(t, <-ended, context.Canceled)
}

// TestResponderReplyIDs reads the correlation-ids of replies sent to a
// queue.
func TestResponderReplyIDs(t *testing.T) {
	addr, b := start(t, broker.Options{Responders: map[string]broker.Responder{"$svc": echoResponder}})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	s := session(t, addr)
	require.NoError(t, b.Publish("replies", request("seed", "seed"))) // makes the queue
	snd, err := s.NewSender(ctx, "$svc", nil)
	require.NoError(t, err)
	for _, p := range []message.Properties{
		{MessageID: message.StringID("m1"), ReplyTo: []byte("replies")},
		{MessageID: message.StringID("m2"), CorrelationID: message.StringID("c2"), ReplyTo: []byte("replies")},
	} {
		m := request("x", "y")
		m.Properties = &p
		require.NoError(t, snd.Send(ctx, m, nil))
	}
	_, err = b.Wait(ctx, "replies", func(s broker.QueueStats) bool { return s.Depth == 3 })
	require.NoError(t, err)
	ms, err := b.Peek("replies", -1)
	require.NoError(t, err)
	require.Len(t, ms, 3)
	for i, want := range []string{"m1", "c2"} {
		id := ms[i+1].Properties.CorrelationID
		require.Equal(t, amqpsax.KindString, id.Kind)
		require.Equal(t, want, string(id.Bytes))
		require.Equal(t, "replies", string(ms[i+1].Properties.To))
	}
}

// TestResponderDurableLink: a link of requests with a durable target is
// served, and the broker keeps no state of it.
func TestResponderDurableLink(t *testing.T) {
	addr, b := start(t, broker.Options{Responders: map[string]broker.Responder{"$svc": echoResponder}})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	s := session(t, addr)
	snd, err := s.NewSender(ctx, "$svc", &client.SenderOptions{Durable: true})
	require.NoError(t, err)
	require.NoError(t, snd.Send(ctx, request("x", "y"), nil))
	attached, detached := b.DurableLinks()
	require.Equal(t, [2]int{0, 0}, [2]int{attached, detached})
}

// TestResponderConnBound: a connection has at most
// MaxConnRequestsInFlight requests being answered, all its links
// together; past it a request is rejected with
// amqp:resource-limit-exceeded, and the rest are answered.
func TestResponderConnBound(t *testing.T) {
	started, release := make(chan struct{}, broker.MaxConnRequestsInFlight), make(chan struct{})
	addr, _ := start(t, broker.Options{Responders: map[string]broker.Responder{
		"$svc": func(ctx context.Context, _ *message.Message, _ broker.Peer) (*message.Message, error) {
			started <- struct{}{}
			<-release
			return nil, nil
		},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	s := session(t, addr)
	const links = broker.MaxConnRequestsInFlight/broker.MaxRequestsInFlight + 1
	done := make(chan error, links*broker.MaxRequestsInFlight)
	for range links {
		snd, err := s.NewSender(ctx, "$svc", nil)
		require.NoError(t, err)
		for range broker.MaxRequestsInFlight {
			p, err := snd.SendAsync(ctx, request("x", "y"), nil)
			require.NoError(t, err)
			go func() { done <- p.Wait(ctx) }()
		}
	}
	for range broker.MaxConnRequestsInFlight {
		<-started
	}
	// None is answered before release: what ends first is refused.
	for range links*broker.MaxRequestsInFlight - broker.MaxConnRequestsInFlight {
		var oe *client.OutcomeError
		require.ErrorAs(t, <-done, &oe)
		require.Equal(t, "amqp:resource-limit-exceeded", oe.Err.Condition)
	}
	close(release)
	for range broker.MaxConnRequestsInFlight {
		require.NoError(t, <-done)
	}
}

// TestResponderBadRequest: a request that is not a well-formed message
// is rejected with amqp:decode-error, its Responder not called; the
// link goes on.
func TestResponderBadRequest(t *testing.T) {
	called := make(chan struct{}, 2)
	addr, _ := start(t, broker.Options{Responders: map[string]broker.Responder{
		"$svc": func(context.Context, *message.Message, broker.Peer) (*message.Message, error) {
			called <- struct{}{}
			return nil, nil
		},
	}})
	c := dial(t, addr, engine.Config{}, nil)
	snd := c.sender("$svc")
	snd.send([]byte{0x00, 0x53, 0x75, 0xb0, 0xff}) // a data section whose size runs past the end
	o := snd.outcome()
	require.Equal(t, frame.StateRejected, o.Type)
	require.Equal(t, frame.CondDecodeError, o.Error.Cond())
	snd.send(data("fine"))
	require.Equal(t, frame.StateAccepted, snd.outcome().Type)
	require.Len(t, called, 1)
}

// TestResponderReplyPermission: a reply to a node the requester may not
// write to is dropped, not stored there for it.
func TestResponderReplyPermission(t *testing.T) {
	addr, b := start(t, broker.Options{
		Responders: map[string]broker.Responder{"$svc": echoResponder},
		Permissions: func(_, address string, op broker.Op) bool {
			return address != "secret" || op != broker.Write
		},
	})
	_, err := b.Declare("secret")
	require.NoError(t, err)
	_, err = b.Declare("open")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	snd, err := session(t, addr).NewSender(ctx, "$svc", nil)
	require.NoError(t, err)
	for _, to := range []string{"secret", "open"} {
		m := request("x", "y")
		m.Properties = &message.Properties{MessageID: message.StringID(to), ReplyTo: []byte(to)}
		require.NoError(t, snd.Send(ctx, m, nil)) // accepted once answered
	}
	q, _ := b.Queue("secret")
	require.Equal(t, 0, q.Depth)
	q, _ = b.Queue("open")
	require.Equal(t, 1, q.Depth)
}
