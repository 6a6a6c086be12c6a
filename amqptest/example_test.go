package amqptest_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax/amqptest"
	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
)

// exampleT stands for the test's *testing.T in the examples, which have
// none.
type exampleT struct {
	testing.TB
	cleanups []func()
}

func (*exampleT) Helper()                   {}
func (*exampleT) Log(...any)                {}
func (*exampleT) Logf(string, ...any)       {}
func (*exampleT) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
func (t *exampleT) Cleanup(f func())        { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) done() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

// A $cbs node that checks tokens as Azure Event Hubs' and Service Bus's
// does, for code under test that authenticates with claims-based
// security: put-token requests (application properties operation,
// type, name; the token as the body's amqp-value) answered with
// status-code 202, or 401 for a token it does not take.
func Example_cbs() {
	t := &exampleT{} // in a test: its *testing.T
	defer t.done()

	cbs := func(_ context.Context, req *message.Message, _ broker.Peer) (*message.Message, error) {
		var vs message.Values
		status, desc := int32(202), "Accepted"
		if string(req.ApplicationProperties.Get("operation").Bytes()) != "put-token" {
			status, desc = 400, "unknown operation"
		} else if string(req.Body.Value.Bytes()) != "SharedAccessSignature sr=good" {
			status, desc = 401, "Unauthorized"
		}
		return &message.Message{ApplicationProperties: message.EntriesOf(
			message.Field{Key: vs.String("status-code"), Value: vs.Int(status)},
			message.Field{Key: vs.String("status-description"), Value: vs.String(desc)})}, nil
	}
	srv := amqptest.NewServer(t, &broker.Options{Responders: map[string]broker.Responder{"$cbs": cbs}})

	// The code under test: a Requester on $cbs, as Azure's SDKs make one.
	ctx := context.Background()
	c, err := client.Dial(ctx, srv.URL, nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	s, _ := c.NewSession(ctx, nil)
	r, err := s.NewRequester(ctx, "$cbs", nil)
	if err != nil {
		panic(err)
	}
	for _, token := range []string{"SharedAccessSignature sr=good", "SharedAccessSignature sr=bad"} {
		var vs message.Values
		props, _ := vs.PropertiesOf(map[string]any{"operation": "put-token",
			"type": "servicebus.windows.net:sastoken", "name": "amqp://ns.example/hub"})
		req := &message.Message{ApplicationProperties: props,
			Body: message.Body{Kind: message.BodyValue, Value: vs.String(token)}}
		rep, err := r.Request(ctx, req)
		if err != nil {
			panic(err)
		}
		fmt.Println(rep.ApplicationProperties.Get("status-code").Int(),
			string(rep.ApplicationProperties.Get("status-description").Bytes()))
	}
	// Output:
	// 202 Accepted
	// 401 Unauthorized
}

// RabbitMQ 4's /management node, the HTTP-over-AMQP API its clients
// declare queues with: a request's subject is the method, its to the
// path, its body a map; the reply's subject is the status. This one
// declares queues on the broker (PUT /queues/NAME: 201 Created, 200 when
// it was there already).
func Example_management() {
	t := &exampleT{}
	defer t.done()

	var srv *amqptest.Server
	management := func(_ context.Context, req *message.Message, _ broker.Peer) (*message.Message, error) {
		status := "400"
		var vs message.Values
		reply := &message.Message{Properties: &message.Properties{}}
		if p := req.Properties; p != nil && string(p.Subject) == "PUT" && strings.HasPrefix(string(p.To), "/queues/") {
			name, err := url.PathUnescape(strings.TrimPrefix(string(p.To), "/queues/"))
			if err != nil {
				return nil, err
			}
			made, err := srv.Broker.Declare(name)
			if err != nil {
				return nil, err
			}
			status = "200"
			if made {
				status = "201"
			}
			body, _ := vs.Any(map[string]any{"name": name, "durable": true, "type": "classic"})
			reply.Body = message.Body{Kind: message.BodyValue, Value: body}
		}
		reply.Properties.Subject = []byte(status)
		return reply, nil
	}
	srv = amqptest.NewServer(t, &broker.Options{Responders: map[string]broker.Responder{"/management": management}})

	// The code under test: RabbitMQ 4's management link pair.
	ctx := context.Background()
	c, err := client.Dial(ctx, srv.URL, nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	s, _ := c.NewSession(ctx, nil)
	r, err := s.NewRequester(ctx, "/management", &client.RequesterOptions{Name: "management-link-pair",
		Paired: true, Settled: true, ReplyTo: "$me"})
	if err != nil {
		panic(err)
	}
	for range 2 {
		var vs message.Values
		body, _ := vs.Any(map[string]any{"durable": true, "arguments": map[string]any{}})
		req := &message.Message{Properties: &message.Properties{Subject: []byte("PUT"), To: []byte("/queues/orders")},
			Body: message.Body{Kind: message.BodyValue, Value: body}}
		rep, err := r.Request(ctx, req)
		if err != nil {
			panic(err)
		}
		fmt.Println(string(rep.Properties.Subject))
	}
	_, ok := srv.Queue("orders")
	fmt.Println("declared:", ok)
	// Output:
	// 201
	// 200
	// declared: true
}

// dialExample is the code under test's connection, in the examples.
func dialExample(srv *amqptest.Server) (*client.Conn, *client.Session) {
	ctx := context.Background()
	c, err := client.Dial(ctx, srv.URL, &client.ConnOptions{TLSConfig: srv.ClientTLS()})
	if err != nil {
		panic(err)
	}
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		panic(err)
	}
	return c, s
}

func text(s string) *message.Message {
	return &message.Message{Body: message.Body{Kind: message.BodyData, Data: [][]byte{[]byte(s)}}}
}

// WaitMessage waits for what the code under test sends, on the broker's
// signal (no polling), and leaves it on the queue.
func ExampleServer_WaitMessage() {
	t := &exampleT{}
	defer t.done()
	srv := amqptest.NewServer(t, nil)

	c, s := dialExample(srv)
	defer c.Close()
	go func() { // the code under test
		snd, err := s.NewSender(context.Background(), "orders", nil)
		if err == nil {
			snd.Send(context.Background(), text("order 42"), nil)
		}
	}()

	m := srv.WaitMessage("orders")
	fmt.Printf("%s\n", m.Body.Data[0])
	fmt.Println("depth:", srv.WaitDepth("orders", 1).Depth)
	// Output:
	// order 42
	// depth: 1
}

// Publish seeds a queue for the code under test to consume; Peek reads
// what waits there without taking it.
func ExampleServer_Publish() {
	t := &exampleT{}
	defer t.done()
	srv := amqptest.NewServer(t, nil)
	srv.Publish("jobs", text("job 1"), text("job 2"))

	c, s := dialExample(srv)
	defer c.Close()
	ctx := context.Background()
	rcv, err := s.NewReceiver(ctx, "jobs", &client.ReceiverOptions{Credit: -1})
	if err != nil {
		panic(err)
	}
	rcv.IssueCredit(1) // one message, no prefetch
	d, err := rcv.Receive(ctx, nil)
	if err != nil {
		panic(err)
	}
	d.Accept(ctx)
	fmt.Printf("took %s\n", d.Message.Body.Data[0])

	srv.Wait("jobs", func(q broker.QueueStats) bool { return q.Accepted == 1 && q.Depth == 1 })
	for _, m := range srv.Peek("jobs", -1) {
		fmt.Printf("left %s\n", m.Body.Data[0])
	}
	// Output:
	// took job 1
	// left job 2
}

// Drop cuts a connection as a network failure would: the code under
// test sees its connection lost.
func ExampleServer_Drop() {
	t := &exampleT{}
	defer t.done()
	srv := amqptest.NewServer(t, nil)

	c, s := dialExample(srv)
	defer c.Close()
	ctx := context.Background()
	rcv, err := s.NewReceiver(ctx, "events", nil)
	if err != nil {
		panic(err)
	}
	peers := srv.Peers()
	fmt.Println("connections:", len(peers))
	srv.Drop(peers[0].ID)
	_, err = rcv.Receive(ctx, nil)
	fmt.Println("lost:", err != nil)
	// Output:
	// connections: 1
	// lost: true
}

// RefuseNextAttach makes the broker refuse the next link, as a broker
// that denies access would.
func ExampleServer_RefuseNextAttach() {
	t := &exampleT{}
	defer t.done()
	srv := amqptest.NewServer(t, nil)
	srv.RefuseNextAttach(engine.NewError(frame.CondUnauthorizedAccess, "no access to orders"))

	c, s := dialExample(srv)
	defer c.Close()
	_, err := s.NewSender(context.Background(), "orders", nil)
	var e *client.Error
	if errors.As(err, &e) {
		fmt.Println(e.Condition, e.Description)
	}
	// Output: amqp:unauthorized-access no access to orders
}

// HoldNextAttach holds back the answer to the next link until release:
// a broker that does not answer, for the code under test's time-outs.
func ExampleServer_HoldNextAttach() {
	t := &exampleT{}
	defer t.done()
	srv := amqptest.NewServer(t, nil)
	c, s := dialExample(srv)
	defer c.Close()

	attached, release := srv.HoldNextAttach()
	defer release() // before c.Close: the held connection answers nothing, its close included
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-attached; cancel() }() // the code under test gives up once its attach is out
	_, err := s.NewSender(ctx, "orders", nil)
	fmt.Println(errors.Is(err, context.Canceled))
	// Output: true
}

// NewTLSServer serves amqps with a certificate made for the test;
// ClientTLS trusts it.
func ExampleNewTLSServer() {
	t := &exampleT{}
	defer t.done()
	srv := amqptest.NewTLSServer(t, nil)

	ctx := context.Background()
	c, err := client.Dial(ctx, srv.URL, &client.ConnOptions{TLSConfig: srv.ClientTLS()})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Println(strings.SplitN(srv.URL, ":", 2)[0], srv.Certificate.IPAddresses[0])
	// Output: amqps 127.0.0.1
}
