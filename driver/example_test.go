package driver_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"sync/atomic"

	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
)

// sink counts the messages it takes; Config.Credit and AutoAccept do the
// rest.
type sink struct {
	engine.NopHandler
	n atomic.Int64
}

func (s *sink) OnDelivery(l *engine.Link, d engine.Delivery) { s.n.Add(1) }

// producer sends three messages to "orders" and closes once all three
// are accepted.
type producer struct {
	engine.NopHandler
	sent, accepted int
	done           chan struct{}
}

func (p *producer) OnConnectionOpen(c *engine.Conn) {
	s, _ := c.Begin()
	s.AttachSender(engine.LinkOptions{Address: "orders"})
}

func (p *producer) OnFlow(l *engine.Link) {
	for ; p.sent < 3 && l.Credit() > 0; p.sent++ {
		l.Send(nil, []byte("order"), false)
	}
}

func (p *producer) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	if p.accepted++; p.accepted == 3 {
		l.Conn().Close(nil)
	}
}

func (p *producer) OnConnectionClose(*engine.Conn, *engine.Error) { close(p.done) }

// ExampleServe serves a sink on a listener and sends it three messages
// with the engine as a client, over TCP.
func ExampleServe() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	s := &sink{}
	go driver.Serve(ln, engine.Config{Credit: 100, AutoAccept: true}, s)

	p := &producer{done: make(chan struct{})}
	d, err := driver.Dial(context.Background(), "tcp", ln.Addr().String(), engine.Config{}, nil, p)
	if err != nil {
		log.Fatal(err)
	}
	<-p.done
	d.Wait()
	fmt.Println("accepted", p.accepted, "received", s.n.Load())
	// Output: accepted 3 received 3
}
