package broker_test

import (
	"context"
	"fmt"
	"net"

	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// subscriber has a durable subscription to "news/today", which it
// detaches without closing as soon as it is attached, and publishes on
// the same session when asked.
type subscriber struct {
	engine.NopHandler
	s        *engine.Session
	attaches int
	away     chan struct{}
	outcomes chan string
	got      chan string
}

var news = &frame.Source{Address: []byte("news/today"), Durable: frame.DurabilityUnsettledState,
	ExpiryPolicy: frame.ExpiryNever}

func (h *subscriber) OnConnectionOpen(c *engine.Conn) { h.s, _ = c.Begin() }

func (h *subscriber) OnSessionBegin(s *engine.Session) {
	s.AttachReceiver(engine.LinkOptions{Name: "today", Source: news})
}

func (h *subscriber) OnLinkAttach(l *engine.Link) {
	if !l.IsSender() {
		if h.attaches++; h.attaches == 1 {
			l.DetachOnly(nil) // closed = false: the broker keeps the subscription
		}
	}
}

func (h *subscriber) OnLinkDetach(l *engine.Link, _ *engine.Error) {
	if !l.IsSender() && h.attaches == 1 {
		close(h.away)
	}
}

func (h *subscriber) OnFlow(l *engine.Link) {
	if l.IsSender() && l.DeliveryCount() == 0 {
		for _, m := range []string{"first", "second"} {
			l.Send(nil, encode.AppendBinary([]byte{0x00, 0x53, 0x75}, []byte(m)), false)
		}
	}
}

func (h *subscriber) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	h.outcomes <- d.State.Type.String()
}

func (h *subscriber) OnDelivery(l *engine.Link, d engine.Delivery) {
	d.Accept()
	h.got <- string(d.Payload[5:])
}

// A durable subscription to a fan-out address: detached without
// closing, the broker keeps it and what is published meanwhile, and an
// attach of the same name from the same container gets it.
func Example_durableSubscription() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	b := broker.New(broker.Options{FanoutPrefixes: []string{"news/"}})
	go b.Serve(ln)
	defer b.Close()

	h := &subscriber{away: make(chan struct{}), outcomes: make(chan string, 2), got: make(chan string, 2)}
	d, err := driver.Dial(context.Background(), "tcp", ln.Addr().String(), engine.Config{ContainerID: "reader"}, nil, h)
	if err != nil {
		panic(err)
	}
	<-h.away
	d.Do(func(*engine.Conn) { h.s.AttachSender(engine.LinkOptions{Address: "news/today", Unsettled: true}) })
	fmt.Println(<-h.outcomes, <-h.outcomes)
	q, _ := b.Queue("news/today")
	fmt.Println("detached", q.Detached, "kept", q.Depth)

	d.Do(func(*engine.Conn) { h.s.AttachReceiver(engine.LinkOptions{Name: "today", Source: news, Credit: 10}) })
	fmt.Println(<-h.got, <-h.got)
	d.Close()
	d.Wait()
	// Output:
	// accepted accepted
	// detached 1 kept 2
	// first second
}
