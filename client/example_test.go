package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/stream"
)

// exampleURL starts package broker (what examples/broker runs: queues
// by address) on a loopback port: the examples run against it.
func exampleURL() (string, func()) { return exampleBroker(broker.Options{}) }

// exampleBroker starts package broker with o on a loopback port.
func exampleBroker(o broker.Options) (string, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	b := broker.New(o)
	go b.Serve(ln)
	return "amqp://" + ln.Addr().String(), func() { b.Close() }
}

// Send a message and receive it back: the whole program.
func Example() {
	url, stop := exampleURL()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	c, err := client.Dial(ctx, url, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	snd, err := s.NewSender(ctx, "orders", nil)
	if err != nil {
		log.Fatal(err)
	}
	msg := message.Message{Body: message.Body{Kind: message.BodyData, Data: [][]byte{[]byte("order 1")}}}
	if err := snd.Send(ctx, &msg, nil); err != nil { // waits for the outcome
		log.Fatal(err)
	}
	rcv, err := s.NewReceiver(ctx, "orders", &client.ReceiverOptions{Credit: 100})
	if err != nil {
		log.Fatal(err)
	}
	d, err := rcv.Receive(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", d.Message.Body.Data[0])
	if err := d.Accept(ctx); err != nil {
		log.Fatal(err)
	}
	// Output: order 1
}

// Dial takes amqp:// and amqps:// URLs (user:password for SASL PLAIN) or
// host:port, and returns once the peer has opened; its errors name the
// stage that failed.
func ExampleDial() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := client.Dial(ctx, "amqp://user:secret@127.0.0.1:1", nil) // nothing listens on port 1
	var de *client.DialError
	if errors.As(err, &de) {
		fmt.Println("failed at", de.Stage)
		fmt.Println(de.Addr) // a password is never in an error
	}
	// Output:
	// failed at tcp
	// amqp://user:xxxxx@127.0.0.1:1
}

// Sessions carry links; Close ends one and waits for the peer's answer.
func ExampleConn_NewSession() {
	url, stop := exampleURL()
	defer stop()
	ctx := context.Background()
	c, err := client.Dial(ctx, url, nil)
	if err != nil {
		log.Fatal(err)
	}
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Close(ctx), c.Close())
	// Output: <nil> <nil>
}

// A link the peer refuses returns its condition.
func ExampleSession_NewSender() {
	url, stop := exampleBroker(broker.Options{MaxQueues: 1}) // a broker that holds one queue
	defer stop()
	ctx := context.Background()
	c, err := client.Dial(ctx, url, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := s.NewSender(ctx, "orders", nil); err != nil {
		log.Fatal(err)
	}
	_, err = s.NewSender(ctx, "invoices", nil) // a second queue: refused
	var e *client.Error
	if errors.As(err, &e) {
		fmt.Println(e.Condition, e.Remote, e.Scope)
	}
	// Output: amqp:resource-limit-exceeded true link
}

// Send returns the outcome: released, rejected and modified are errors.
func ExampleSender_Send() {
	// A broker whose queues hold one message, and reject past it.
	url, stop := exampleBroker(broker.Options{MaxMessages: 1, RejectWhenFull: true})
	defer stop()
	ctx := context.Background()
	c, err := client.Dial(ctx, url, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	snd, err := s.NewSender(ctx, "orders", nil)
	if err != nil {
		log.Fatal(err)
	}
	msg := message.Message{Body: message.Body{Kind: message.BodyData, Data: [][]byte{[]byte("order 1")}}}
	fmt.Println(snd.Send(ctx, &msg, nil)) // accepted
	err = snd.Send(ctx, &msg, nil)        // the queue is full
	var oe *client.OutcomeError
	if errors.As(err, &oe) && errors.Is(err, client.ErrRejected) {
		fmt.Println("rejected:", oe.Err.Condition)
	}
	// Output:
	// <nil>
	// rejected: amqp:resource-limit-exceeded
}

// SendAsync pipelines: many messages in flight on one link, one goroutine,
// each outcome waited for later.
func ExampleSender_SendAsync() {
	url, stop := exampleURL()
	defer stop()
	ctx := context.Background()
	c, err := client.Dial(ctx, url, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	snd, err := s.NewSender(ctx, "orders", nil)
	if err != nil {
		log.Fatal(err)
	}
	var pending []client.Pending
	var msg message.Message
	for i := range 1000 {
		msg.Body = message.Body{Kind: message.BodyData, Data: [][]byte{fmt.Appendf(nil, "order %d", i)}}
		p, err := snd.SendAsync(ctx, &msg, nil) // msg is encoded: reuse it
		if err != nil {
			log.Fatal(err)
		}
		pending = append(pending, p)
	}
	accepted := 0
	for _, p := range pending {
		if p.Wait(ctx) == nil {
			accepted++
		}
	}
	fmt.Println(accepted, "accepted")
	// Output: 1000 accepted
}

// Receive returns deliveries to keep; settle each.
func ExampleReceiver_Receive() {
	url, stop := exampleURL()
	defer stop()
	ctx := context.Background()
	c, err := client.Dial(ctx, url, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	snd, err := s.NewSender(ctx, "orders", nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, body := range []string{"a", "b", "c"} {
		msg := message.Message{Body: message.Body{Kind: message.BodyData, Data: [][]byte{[]byte(body)}}}
		if err := snd.Send(ctx, &msg, nil); err != nil {
			log.Fatal(err)
		}
	}
	rcv, err := s.NewReceiver(ctx, "orders", &client.ReceiverOptions{Credit: 10})
	if err != nil {
		log.Fatal(err)
	}
	var kept []*client.Delivery
	for range 3 {
		d, err := rcv.Receive(ctx, nil)
		if err != nil {
			log.Fatal(err)
		}
		kept = append(kept, d)
	}
	kept[0].Accept(ctx)
	kept[1].Release(ctx) // given back to the broker
	kept[2].Reject(ctx, &client.Error{Condition: "amqp:precondition-failed", Description: "bad order"})
	for _, d := range kept {
		fmt.Printf("%s ", d.Message.Body.Data[0])
	}
	fmt.Println()
	// Output: a b c
}

// ReceiveInto decodes into the caller's Delivery again and again:
// nothing is allocated once it is warm.
func ExampleReceiver_ReceiveInto() {
	url, stop := exampleURL()
	defer stop()
	ctx := context.Background()
	c, err := client.Dial(ctx, url, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	snd, err := s.NewSender(ctx, "orders", nil)
	if err != nil {
		log.Fatal(err)
	}
	for i := range 3 {
		msg := message.Message{Properties: &message.Properties{MessageID: message.UlongID(uint64(i))},
			Body: message.Body{Kind: message.BodyData, Data: [][]byte{[]byte("x")}}}
		if err := snd.Send(ctx, &msg, nil); err != nil {
			log.Fatal(err)
		}
	}
	rcv, err := s.NewReceiver(ctx, "orders", &client.ReceiverOptions{Credit: 100})
	if err != nil {
		log.Fatal(err)
	}
	var d client.Delivery // reused
	for range 3 {
		if err := rcv.ReceiveInto(ctx, &d, nil); err != nil {
			log.Fatal(err)
		}
		fmt.Print(d.Message.Properties.MessageID.Any(), " ")
		d.Accept(ctx)
	}
	fmt.Println()
	// Output: 0 1 2
}

// With manual credit the application grants each batch, and drains what
// is left.
func ExampleReceiver_IssueCredit() {
	url, stop := exampleURL()
	defer stop()
	ctx := context.Background()
	c, err := client.Dial(ctx, url, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	snd, err := s.NewSender(ctx, "orders", nil)
	if err != nil {
		log.Fatal(err)
	}
	for range 5 {
		msg := message.Message{Body: message.Body{Kind: message.BodyData, Data: [][]byte{[]byte("x")}}}
		if err := snd.Send(ctx, &msg, nil); err != nil {
			log.Fatal(err)
		}
	}
	rcv, err := s.NewReceiver(ctx, "orders", &client.ReceiverOptions{Credit: -1})
	if err != nil {
		log.Fatal(err)
	}
	rcv.IssueCredit(2)
	for range 2 {
		d, err := rcv.Receive(ctx, nil)
		if err != nil {
			log.Fatal(err)
		}
		d.Accept(ctx)
	}
	// No credit is left; a drain confirms it.
	fmt.Println(rcv.DrainCredit(ctx))
	// Output: <nil>
}

// Close waits for the peer's close; every call still blocked returns
// ErrClosed.
func ExampleConn_Close() {
	url, stop := exampleURL()
	defer stop()
	ctx := context.Background()
	c, err := client.Dial(ctx, url, nil)
	if err != nil {
		log.Fatal(err)
	}
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	rcv, err := s.NewReceiver(ctx, "empty", nil)
	if err != nil {
		log.Fatal(err)
	}
	done := make(chan error)
	go func() { _, err := rcv.Receive(ctx, nil); done <- err }()
	fmt.Println(c.Close(), <-done)
	// Output: <nil> client: closed
}

// NewConn runs a client over a connection the caller made (a proxy, a
// custom dialer, TLS set up by hand).
func ExampleNewConn() {
	url, stop := exampleURL()
	defer stop()
	ctx := context.Background()
	nc, err := net.Dial("tcp", strings.TrimPrefix(url, "amqp://"))
	if err != nil {
		log.Fatal(err)
	}
	c, err := client.NewConn(ctx, nc, &client.ConnOptions{ContainerID: "my-client"})
	if err != nil {
		log.Fatal(err)
	}
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	rcv, err := s.NewReceiver(ctx, "orders", &client.ReceiverOptions{Credit: 100})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rcv.Address(), c.Close())
	// Output: orders <nil>
}

// With Reconnect, a lost connection is dialled again and its links
// attached again: the same sender goes on.
func ExampleReconnectOptions() {
	b, err := newBroker()
	if err != nil {
		log.Fatal(err)
	}
	defer b.close()
	ctx := context.Background()
	c, err := client.Dial(ctx, b.url(), &client.ConnOptions{
		Reconnect: &client.ReconnectOptions{Backoff: 10 * time.Millisecond, MaxAttempts: 10},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	snd, err := s.NewSender(ctx, "orders", nil)
	if err != nil {
		log.Fatal(err)
	}
	msg := message.Message{Body: message.Body{Kind: message.BodyData, Data: [][]byte{[]byte("order")}}}
	fmt.Println("before:", snd.Send(ctx, &msg, nil))
	b.vanish() // every connection of the broker cut
	err = snd.Send(ctx, &msg, nil)
	if err != nil {
		// It went out as the connection was lost: its fate is
		// unknown, so send it again.
		err = snd.Send(ctx, &msg, nil)
	}
	fmt.Println("after:", err)
	// Output:
	// before: <nil>
	// after: <nil>
}

// A resumable sender (Durable) under Reconnect: the connection is cut in
// the middle of 1,000 unsettled messages, and each still gets its real
// outcome, the server (a durable receiver) each message once.
func ExampleSenderOptions_durable() {
	b, err := newDurable(0)
	if err != nil {
		log.Fatal(err)
	}
	defer b.srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cut := &cutDialer{after: 40_001} // the first connection: cut after 40,001 bytes
	c, err := client.Dial(ctx, b.addr, &client.ConnOptions{
		Dialer:    cut.dial,
		Reconnect: &client.ReconnectOptions{Backoff: 10 * time.Millisecond},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	snd, err := s.NewSender(ctx, "orders", &client.SenderOptions{Durable: true})
	if err != nil {
		log.Fatal(err)
	}
	var ps []client.Pending
	for i := range 1000 {
		msg := message.Message{Body: message.Body{Kind: message.BodyData, Data: [][]byte{fmt.Appendf(nil, "order %d", i)}}}
		p, err := snd.SendAsync(ctx, &msg, nil)
		if err != nil {
			log.Fatal(err)
		}
		ps = append(ps, p)
	}
	accepted := 0
	for _, p := range ps {
		if p.Wait(ctx) == nil {
			accepted++
		}
	}
	b.mu.Lock()
	stored := len(b.bodies)
	b.mu.Unlock()
	fmt.Println("connections:", cut.dials.Load(), "accepted:", accepted, "stored:", stored)
	// Output: connections: 2 accepted: 1000 stored: 1000
}

// exampleResponder starts an engine server whose every node answers
// requests with answer (a stand-in for a service's $cbs or
// $management, or RabbitMQ's /management).
func exampleResponder(answer func(req *message.Message) *message.Message) (string, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	h := newResponder()
	h.answer = answer
	srv := &driver.Server{Handler: h}
	go srv.Serve(ln)
	return "amqp://" + ln.Addr().String(), func() { srv.Close() }
}

// Service Bus and Event Hubs authorize links by claims: a token put on
// the $cbs node before attaching them (a request with operation
// put-token, answered with status-code 202). Here an in-process server
// stands in for Service Bus.
func ExampleRequester_cbs() {
	url, stop := exampleResponder(func(req *message.Message) *message.Message {
		var vs message.Values
		status := int32(401)
		if string(req.ApplicationProperties.Get("operation").Bytes()) == "put-token" &&
			strings.HasPrefix(string(req.Body.Value.Bytes()), "SharedAccessSignature ") {
			status = 202
		}
		props, _ := vs.PropertiesOf(map[string]any{"status-code": status})
		return &message.Message{ApplicationProperties: props}
	})
	defer stop()
	ctx := context.Background()
	c, err := client.Dial(ctx, url, nil) // amqps://NAMESPACE.servicebus.windows.net with SASL ANONYMOUS
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	cbs, err := s.NewRequester(ctx, "$cbs", &client.RequesterOptions{ReplyAddress: "cbs-replies"})
	if err != nil {
		log.Fatal(err)
	}
	var vs message.Values
	props, err := vs.PropertiesOf(map[string]any{"operation": "put-token", "type": "servicebus.windows.net:sastoken",
		"name": "amqp://NAMESPACE.servicebus.windows.net/orders", "expiration": time.Now().Add(time.Hour)})
	if err != nil {
		log.Fatal(err)
	}
	reply, err := cbs.Request(ctx, &message.Message{ApplicationProperties: props,
		Body: message.Body{Kind: message.BodyValue, Value: vs.String("SharedAccessSignature sr=…&sig=…&se=…&skn=RootManageSharedAccessKey")}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status-code:", reply.ApplicationProperties.Get("status-code").Int())
	// Output: status-code: 202
}

// RabbitMQ 4 declares queues through its HTTP-over-AMQP /management
// node: a pair of links of one name with properties {paired: true},
// requests sent settled with reply-to "$me", the path in To and the
// method in Subject; the reply's Subject is the status. Here an
// in-process server stands in for RabbitMQ.
func ExampleRequester_rabbitMQManagement() {
	url, stop := exampleResponder(func(req *message.Message) *message.Message {
		status := "400"
		if string(req.Properties.Subject) == "PUT" && strings.HasPrefix(string(req.Properties.To), "/queues/") {
			status = "201"
		}
		return &message.Message{Properties: &message.Properties{Subject: []byte(status)}}
	})
	defer stop()
	ctx := context.Background()
	c, err := client.Dial(ctx, url, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	mgmt, err := s.NewRequester(ctx, "/management", &client.RequesterOptions{
		Name: "management-link-pair", Paired: true, Settled: true, ReplyTo: "$me"})
	if err != nil {
		log.Fatal(err)
	}
	var vs message.Values
	body, err := vs.Any(map[string]any{"durable": true, "arguments": map[string]any{"x-queue-type": "quorum"}})
	if err != nil {
		log.Fatal(err)
	}
	reply, err := mgmt.Request(ctx, &message.Message{
		Properties: &message.Properties{To: []byte("/queues/orders"), Subject: []byte("PUT")},
		Body:       message.Body{Kind: message.BodyValue, Value: body}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status:", string(reply.Properties.Subject))
	// Output: status: 201
}

// Service Bus's PeekLock: a message is locked by its delivery, then
// completed (Accept), abandoned (Modify: delivered again), deferred
// (Modify, undeliverable here) or dead-lettered (Reject, the reason in
// the error's info). Here against package broker, which delivers an
// abandoned message again.
func ExampleModifyOptions_peekLock() {
	url, stop := exampleURL()
	defer stop()
	ctx := context.Background()
	c, err := client.Dial(ctx, url, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	snd, err := s.NewSender(ctx, "orders", nil)
	if err != nil {
		log.Fatal(err)
	}
	msg := message.Message{Body: message.Body{Kind: message.BodyData, Data: [][]byte{[]byte("order 1")}}}
	if err := snd.Send(ctx, &msg, nil); err != nil {
		log.Fatal(err)
	}
	rcv, err := s.NewReceiver(ctx, "orders", &client.ReceiverOptions{Credit: 1})
	if err != nil {
		log.Fatal(err)
	}
	d, err := rcv.Receive(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	// Abandon: the lock is given up, the delivery counted as failed.
	err = d.Modify(ctx, client.ModifyOptions{DeliveryFailed: true, Annotations: map[string]any{"x-opt-reason": "busy"}})
	if err != nil {
		log.Fatal(err)
	}
	d, err = rcv.Receive(ctx, nil) // delivered again
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s, delivered again: %v\n", d.Message.Body.Data[0], d.Message.Header != nil && d.Message.Header.DeliveryCount > 0)
	// Dead-letter it, with a reason Service Bus keeps with the message.
	err = d.Reject(ctx, &client.Error{Condition: "com.microsoft:dead-letter",
		Info: map[string]any{"DeadLetterReason": "bad order", "DeadLetterErrorDescription": "no customer"}})
	fmt.Println("dead-lettered:", err)
	// Output:
	// order 1, delivered again: true
	// dead-lettered: <nil>
}

// partition stands in for an Event Hubs partition: it takes a consumer
// whose attach has an epoch property, keeps the selector filter it is
// given (echoed in its answer), and sends two events after offset 100.
type partition struct {
	engine.NopHandler
	sent bool
}

func (p *partition) AnswerAttach(l *engine.Link, src *frame.Source, tgt *frame.Target) *engine.Error {
	var c stream.Cursor
	c.Reset(l.RemoteAttach().Properties)
	if !c.Next() || !c.Enter() || !c.SeekKey("com.microsoft:epoch") {
		return engine.NewError(frame.CondPreconditionFailed, "an epoch receiver is wanted")
	}
	return nil
}

func (p *partition) OnFlow(l *engine.Link) {
	for i := 101; i <= 102 && l.IsSender() && !p.sent; i++ {
		var vs message.Values
		ann, _ := vs.AnnotationsOf(map[string]any{"x-opt-offset": strconv.Itoa(i), "x-opt-sequence-number": int64(i)})
		m := message.Message{MessageAnnotations: ann, Body: message.Body{Kind: message.BodyData, Data: [][]byte{fmt.Appendf(nil, "event %d", i)}}}
		b, _ := m.Append(nil)
		l.Send(nil, b, true)
	}
	p.sent = true
}

// An Event Hubs consumer reads a partition from an offset (a selector
// filter on the x-opt-offset annotation) and, as the epoch (exclusive)
// receiver of its consumer group, with the epoch in its attach's
// properties. Here an in-process server stands in for the partition.
func ExampleReceiverOptions_eventHubs() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := &driver.Server{Handler: &partition{}}
	go srv.Serve(ln)
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Dial(ctx, "amqp://"+ln.Addr().String(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	rcv, err := s.NewReceiver(ctx, "myhub/ConsumerGroups/$Default/Partitions/0", &client.ReceiverOptions{
		Credit:     100,
		Filters:    []client.LinkFilter{client.NewSelectorFilter("amqp.annotation.x-opt-offset > '100'")},
		Properties: map[string]any{"com.microsoft:epoch": int64(1)},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("filter:", rcv.LinkSourceFilterValue("apache.org:selector-filter:string"))
	for range 2 {
		d, err := rcv.Receive(ctx, nil)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s at offset %s\n", d.Message.Body.Data[0], d.Message.MessageAnnotations.Get("x-opt-offset").Bytes())
	}
	// Output:
	// filter: amqp.annotation.x-opt-offset > '100'
	// event 101 at offset 101
	// event 102 at offset 102
}
