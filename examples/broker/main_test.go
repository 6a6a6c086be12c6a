package main

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// dataMessage encodes a message of one data section, with an
// application property route=to when to is set.
func dataMessage(body string, to string) []byte {
	var b []byte
	if to != "" {
		// application-properties: described 0x74, map of one pair
		m := encode.AppendString(encode.AppendString(nil, "route"), to)
		b = append(b, 0x00, 0x53, 0x74, 0xc1, byte(1+len(m)), 2)
		b = append(b, m...)
	}
	b = append(b, 0x00, 0x53, 0x75)
	return encode.AppendBinary(b, []byte(body))
}

func startBroker(t *testing.T) (string, *broker.Broker) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := broker.New(broker.Options{RouteKey: "route"})
	go b.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b.Shutdown(ctx)
	})
	return ln.Addr().String(), b
}

// producer sends msgs to addr unsettled and waits for every outcome.
type producerH struct {
	engine.NopHandler
	addr    string
	msgs    [][]byte
	sent    int
	outcome []frame.StateType
	done    chan struct{}
}

func (h *producerH) OnConnectionOpen(c *engine.Conn) {
	s, _ := c.Begin()
	s.AttachSender(engine.LinkOptions{Address: h.addr, Unsettled: true})
}

func (h *producerH) OnFlow(l *engine.Link) {
	for h.sent < len(h.msgs) {
		if _, err := l.Send(nil, h.msgs[h.sent], false); err != nil {
			return
		}
		h.sent++
	}
}

func (h *producerH) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	h.outcome = append(h.outcome, d.State.Type)
	if len(h.outcome) == len(h.msgs) {
		l.Conn().Close(nil)
	}
}

func (h *producerH) OnConnectionClose(*engine.Conn, *engine.Error) { close(h.done) }

func produce(t *testing.T, addr, queue string, msgs [][]byte) {
	h := &producerH{addr: queue, msgs: msgs, done: make(chan struct{})}
	d, err := driver.Dial(context.Background(), "tcp", addr, engine.Config{}, nil, h)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
		t.Fatal("producer: timeout")
	}
	d.Wait()
	for i, o := range h.outcome {
		if o != frame.StateAccepted {
			t.Fatalf("message %d: outcome %v", i, o)
		}
	}
}

// consumerH receives n messages from queue with credit 1, releasing the
// first delivery it sees once, accepting the rest.
type consumerH struct {
	engine.NopHandler
	queue    string
	n        int
	release  bool
	got      []string
	released int
	done     chan struct{}
}

func (h *consumerH) OnConnectionOpen(c *engine.Conn) {
	s, _ := c.Begin()
	s.AttachReceiver(engine.LinkOptions{Address: h.queue})
}

func (h *consumerH) OnLinkAttach(l *engine.Link) { l.Flow(1) }

func (h *consumerH) OnDelivery(l *engine.Link, d engine.Delivery) {
	if h.release && h.released == 0 {
		h.released++
		d.Release()
		l.Flow(1)
		return
	}
	h.got = append(h.got, string(d.Payload))
	d.Accept()
	if len(h.got) == h.n {
		l.Conn().Close(nil)
		return
	}
	l.Flow(1)
}

func (h *consumerH) OnConnectionClose(*engine.Conn, *engine.Error) { close(h.done) }

func consume(t *testing.T, addr, queue string, n int, release bool) []string {
	h := &consumerH{queue: queue, n: n, release: release, done: make(chan struct{})}
	d, err := driver.Dial(context.Background(), "tcp", addr, engine.Config{}, nil, h)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("consumer: timeout after %d", len(h.got))
	}
	d.Wait()
	return h.got
}

func TestBrokerQueueAndRedelivery(t *testing.T) {
	addr, _ := startBroker(t)
	var msgs [][]byte
	for i := range 50 {
		msgs = append(msgs, dataMessage(fmt.Sprint("m", i), ""))
	}
	produce(t, addr, "q1", msgs)
	got := consume(t, addr, "q1", 50, true)
	for i, g := range got {
		if g != string(msgs[i]) {
			t.Fatalf("message %d differs", i)
		}
	}
}

func TestBrokerRouting(t *testing.T) {
	addr, _ := startBroker(t)
	msgs := [][]byte{dataMessage("a", "qa"), dataMessage("b", "qb"), dataMessage("c", "")}
	produce(t, addr, "in", msgs)
	if got := consume(t, addr, "qa", 1, false); len(got) != 1 || got[0] != string(msgs[0]) {
		t.Fatalf("qa: %q", got)
	}
	if got := consume(t, addr, "qb", 1, false); len(got) != 1 || got[0] != string(msgs[1]) {
		t.Fatalf("qb: %q", got)
	}
	if got := consume(t, addr, "in", 1, false); len(got) != 1 || got[0] != string(msgs[2]) {
		t.Fatalf("in: %q", got)
	}
}

// TestBrokerConsumerFirst attaches the consumer before messages arrive:
// they reach it through its connection's goroutine (Driver.Do).
func TestBrokerConsumerFirst(t *testing.T) {
	addr, _ := startBroker(t)
	res := make(chan []string)
	go func() { res <- consume(t, addr, "late", 20, false) }()
	time.Sleep(50 * time.Millisecond) // let the consumer attach first; the result does not depend on it
	var msgs [][]byte
	for i := range 20 {
		msgs = append(msgs, dataMessage(fmt.Sprint("x", i), ""))
	}
	produce(t, addr, "late", msgs)
	got := <-res
	if len(got) != 20 {
		t.Fatalf("got %d", len(got))
	}
}

// countConsumer takes messages from queue with credit 10 until told to
// stop, accepting each.
type countConsumer struct {
	engine.NopHandler
	queue string
	mu    sync.Mutex
	got   map[string]int
	done  chan struct{}
}

func (h *countConsumer) OnConnectionOpen(c *engine.Conn) {
	s, _ := c.Begin()
	s.AttachReceiver(engine.LinkOptions{Address: h.queue, Credit: 10})
}

func (h *countConsumer) OnDelivery(l *engine.Link, d engine.Delivery) {
	h.mu.Lock()
	h.got[string(d.Payload)]++
	h.mu.Unlock()
	d.Accept()
}

func (h *countConsumer) OnConnectionClose(*engine.Conn, *engine.Error) { close(h.done) }

// Several producers and consumers on one queue at once: every message
// reaches exactly one consumer.
func TestBrokerConcurrent(t *testing.T) {
	addr, _ := startBroker(t)
	var consumers []*countConsumer
	var drivers []*driver.Driver
	for range 3 {
		h := &countConsumer{queue: "shared", got: map[string]int{}, done: make(chan struct{})}
		d, err := driver.Dial(context.Background(), "tcp", addr, engine.Config{}, nil, h)
		if err != nil {
			t.Fatal(err)
		}
		consumers, drivers = append(consumers, h), append(drivers, d)
	}
	var wg sync.WaitGroup
	for p := range 4 {
		var msgs [][]byte
		for i := range 300 {
			msgs = append(msgs, dataMessage(fmt.Sprint("p", p, "-", i), ""))
		}
		wg.Add(1)
		go func() { defer wg.Done(); produce(t, addr, "shared", msgs) }()
	}
	wg.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		total := 0
		for _, c := range consumers {
			c.mu.Lock()
			total += len(c.got)
			c.mu.Unlock()
		}
		if total == 1200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumers got %d of 1200", total)
		}
		time.Sleep(10 * time.Millisecond)
	}
	seen := map[string]int{}
	for i, c := range consumers {
		drivers[i].Close()
		<-c.done
		for k, n := range c.got {
			seen[k] += n
		}
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("%q delivered %d times", k, n)
		}
	}
}
