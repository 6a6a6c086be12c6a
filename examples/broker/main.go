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
	"errors"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
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
	maxBytes := flag.Int64("max-bytes", 0, "bytes of messages a queue holds before its producers wait (0: no bound of its own, -max-memory bounds all queues)")
	maxMemory := byteSize(broker.DefaultMaxMemory)
	flag.Var(&maxMemory, "max-memory", "bytes of messages the broker holds, all queues together, such as 64MiB (-1: no bound)")
	reject := flag.Bool("reject", false, "reject messages to a full queue instead of holding producers back")
	fanout := flag.String("fanout", "topic/", "address prefix of fan-out nodes (\"\": none)")
	verbose := flag.Bool("v", false, "log connections")
	flag.Parse()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	o := broker.Options{RouteKey: *route, MaxMessages: *maxQueue, MaxBytes: *maxBytes, MaxMemory: int64(maxMemory), RejectWhenFull: *reject,
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

// byteSize is a flag of bytes, written as a number with an optional
// unit: 1048576, 64MiB, 1GiB, 512KiB (-1: no bound).
type byteSize int64

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

func (b *byteSize) Set(s string) error {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		n      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = rest, u.n
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < -1 || n > (1<<62)/mult {
		return errors.New("a number of bytes, optionally with KiB, MiB or GiB, or -1")
	}
	*b = byteSize(n * mult)
	return nil
}
