// Command sink is the smallest AMQP 1.0 server that takes messages: it
// grants credit, accepts and settles every delivery, answers detach, end
// and close, and counts what it received.
//
//	go run ./examples/sink -listen 127.0.0.1:5672
package main

import (
	"flag"
	"log"
	"net"
	"sync/atomic"

	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
)

type sink struct {
	engine.NopHandler
	n atomic.Int64
}

func (s *sink) OnDelivery(l *engine.Link, d engine.Delivery) { s.n.Add(1) }

func (s *sink) OnConnectionClose(c *engine.Conn, err *engine.Error) {
	log.Printf("%s: %d messages so far (%v)", c.RemoteContainerID(), s.n.Load(), err)
}

func main() {
	addr := flag.String("listen", "127.0.0.1:5672", "address to listen on")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(driver.Serve(ln, engine.Config{Credit: 100, AutoAccept: true}, &sink{}))
}
