// Command broker is a small in-memory AMQP 1.0 broker on package engine:
// queues named by the target address producers send to, consumers by the
// source address they receive from, credit-based delivery, accept,
// release, reject and redelivery, and routing on an application property
// without decoding bodies.
//
//	go run ./examples/broker -listen 127.0.0.1:5672
//
// Flags: -listen ADDR; -route KEY (the application property that routes
// a message to the queue it names, "route" by default); -user and
// -password (SASL PLAIN, ANONYMOUS still allowed); -idle (this end's idle
// time-out); -max-frame; -max-queue; -v (log connections).
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"time"

	"github.com/amqpsax/amqpsax/engine"
)

func main() {
	addr := flag.String("listen", "127.0.0.1:5672", "address to listen on")
	route := flag.String("route", "route", "application property naming the queue a message goes to (\"\": off)")
	user := flag.String("user", "", "SASL PLAIN user (with -password); ANONYMOUS stays allowed")
	pass := flag.String("password", "", "SASL PLAIN password")
	idle := flag.Duration("idle", 0, "idle time-out announced (0: none)")
	maxFrame := flag.Uint("max-frame", 0, "max-frame-size announced (0: engine default)")
	maxQueue := flag.Int("max-queue", 1_000_000, "messages a queue holds before it rejects more")
	verbose := flag.Bool("v", false, "log connections")
	flag.Parse()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	b := &Broker{RouteKey: *route, MaxQueue: *maxQueue}
	if *verbose {
		b.Log = log.New(os.Stderr, "broker: ", log.LstdFlags)
	}
	cfg := engine.Config{ContainerID: "amqpsax-broker", Credit: 0, IdleTimeout: *idle, MaxFrameSize: uint32(*maxFrame)}
	if *user != "" {
		u, p := *user, *pass
		cfg.Auth = engine.Plain(func(user, password string) bool { return user == u && password == p }, true)
	}
	srv := &engine.Server{Config: cfg, Handler: b}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt)
		<-sig
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}()
	log.Printf("broker listening on %s", ln.Addr())
	if err := srv.Serve(ln); err != nil && err != engine.ErrServerClosed {
		log.Fatal(err)
	}
}
