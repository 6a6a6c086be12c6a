// Command broker is a small in-memory AMQP 1.0 broker: a thin main over
// package broker (queues named by the target address producers send to
// and the source address consumers receive from, credit-based delivery
// with producers held back at a queue's bound, outcomes and redelivery,
// fan-out and dynamic nodes, routing on an application property without
// decoding bodies). cmd/amqpbroker is the installable one, with TLS and
// metrics.
//
//	go run ./examples/broker -listen 127.0.0.1:5672
//
// Flags: -listen ADDR; -route KEY (the application property that routes
// a message to the queue it names, "route" by default); -user and
// -password (SASL PLAIN, ANONYMOUS still allowed); -idle (this end's idle
// time-out); -max-frame; -max-queue and -max-bytes (each queue's bounds);
// -reject (refuse messages to a full queue instead of holding producers
// back); -fanout PREFIX (addresses of fan-out nodes); -v (log
// connections).
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"time"

	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/engine"
)

func main() {
	addr := flag.String("listen", "127.0.0.1:5672", "address to listen on")
	route := flag.String("route", "route", "application property naming the queue a message goes to (\"\": off)")
	user := flag.String("user", "", "SASL PLAIN user (with -password); ANONYMOUS stays allowed")
	pass := flag.String("password", "", "SASL PLAIN password")
	idle := flag.Duration("idle", 0, "idle time-out announced (0: none)")
	maxFrame := flag.Uint("max-frame", 0, "max-frame-size announced (0: engine default)")
	maxQueue := flag.Int("max-queue", broker.DefaultMaxMessages, "messages a queue holds before its producers wait (-1: no bound)")
	maxBytes := flag.Int64("max-bytes", broker.DefaultMaxBytes, "bytes of messages a queue holds before its producers wait (-1: no bound)")
	reject := flag.Bool("reject", false, "reject messages to a full queue instead of holding producers back")
	fanout := flag.String("fanout", "topic/", "address prefix of fan-out nodes (\"\": none)")
	verbose := flag.Bool("v", false, "log connections")
	flag.Parse()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	o := broker.Options{RouteKey: *route, MaxMessages: *maxQueue, MaxBytes: *maxBytes, RejectWhenFull: *reject,
		Engine: engine.Config{ContainerID: "amqpsax-broker", IdleTimeout: *idle, MaxFrameSize: uint32(*maxFrame)}}
	if *fanout != "" {
		o.FanoutPrefixes = []string{*fanout}
	}
	if *user != "" {
		o.Users, o.Anonymous = map[string]string{*user: *pass}, true
	}
	if *verbose {
		o.Log = log.New(os.Stderr, "broker: ", log.LstdFlags)
	}
	b := broker.New(o)
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt)
		<-sig
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b.Shutdown(ctx)
	}()
	log.Printf("broker listening on %s", ln.Addr())
	if err := b.Serve(ln); err != nil && err != broker.ErrClosed {
		log.Fatal(err)
	}
}
