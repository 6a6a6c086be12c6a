package broker_test

import (
	"context"
	"fmt"
	"net"

	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/engine"
)

// echo sends one message to "greetings" and receives it back.
type echo struct {
	engine.NopHandler
	sent bool
	got  chan string
}

func (e *echo) OnConnectionOpen(c *engine.Conn) { c.Begin() }

func (e *echo) OnSessionBegin(s *engine.Session) {
	s.AttachSender(engine.LinkOptions{Address: "greetings", Unsettled: true})
	s.AttachReceiver(engine.LinkOptions{Address: "greetings", Credit: 10})
}

func (e *echo) OnFlow(l *engine.Link) {
	if l.IsSender() && !e.sent {
		l.Send(nil, encode.AppendBinary([]byte{0x00, 0x53, 0x75}, []byte("hello")), false)
		e.sent = true
	}
}

func (e *echo) OnDelivery(l *engine.Link, d engine.Delivery) {
	d.Accept()
	e.got <- string(d.Payload[5:]) // after the data section's descriptor and size
}

// A broker on a loopback port, and a client of package engine that
// sends a message to a queue and receives it back.
func Example() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	b := broker.New(broker.Options{MaxBytes: 1 << 20})
	go b.Serve(ln)
	defer b.Close()

	h := &echo{got: make(chan string, 1)}
	d, err := driver.Dial(context.Background(), "tcp", ln.Addr().String(), engine.Config{}, nil, h)
	if err != nil {
		panic(err)
	}
	fmt.Println(<-h.got)
	d.Close()
	d.Wait()
	q, _ := b.Queue("greetings")
	fmt.Println("enqueued", q.Enqueued, "delivered", q.Delivered)
	// Output:
	// hello
	// enqueued 1 delivered 1
}

// A broker in a program: bounded queues, one account, and its statistics.
// (Compiled, not run: it would listen on the AMQP port.)
func ExampleNew() {
	b := broker.New(broker.Options{MaxBytes: 16 << 20, Users: map[string]string{"app": "secret"}})
	go b.ListenAndServe("127.0.0.1:5672")
	defer b.Close()
	q, _ := b.Queue("orders") // q.Depth, q.Bytes, q.Consumers, q.Blocked, q.Accepted, q.EnqueueRate …
	fmt.Println(q.Name, q.Depth)
}
