package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/amqptest"
	"github.com/amqpsax/amqpsax/engine"
)

// The broker pair: one producer sends 100-byte messages unsettled (every
// outcome awaited, as many in flight as credit allows) to a queue, one
// consumer takes them with credit 1000 and accepts each, through package
// broker (served in this process by amqptest) and through RabbitMQ
// (AMQPSAX_BROKER, started by .ci/broker), with the same two clients of
// package engine. One op is one message from the producer's first send
// to the consumer's last receipt.

type pairPeer struct {
	name, addr, queue string
	cfg               engine.Config
}

func pairPeers(tb testing.TB) []pairPeer {
	srv := amqptest.NewServer(tb, nil)
	peers := []pairPeer{{name: "amqpsax", addr: srv.Addr, queue: "pair"}}
	if rabbit := os.Getenv("AMQPSAX_BROKER"); rabbit != "" {
		peers = append(peers, pairPeer{name: "rabbitmq", addr: rabbit,
			queue: "/queue/amqpsax-broker-pair", // drained by every run
			cfg:   engine.Config{Username: "guest", Password: "guest"}})
	}
	return peers
}

// runPair sends n messages from a producer to a consumer through the
// peer and returns the time from the first send to the last receipt.
func runPair(ctx context.Context, p pairPeer, n int) (time.Duration, error) {
	queue := p.queue
	var got atomic.Int64
	done := make(chan struct{})
	cons, err := DialConsumer(ctx, p.addr, queue, p.cfg, 1000, func([]byte) {
		if got.Add(1) == int64(n) {
			close(done)
		}
	})
	if err != nil {
		return 0, fmt.Errorf("consumer: %w", err)
	}
	defer cons.Close()
	prod, err := DialProducer(ctx, p.addr, queue, p.cfg)
	if err != nil {
		return 0, fmt.Errorf("producer: %w", err)
	}
	defer prod.Close()
	start := time.Now()
	if err := prod.Send(ctx, n, 0, func(int) []byte { return LoopbackMessage }); err != nil {
		return 0, err
	}
	select {
	case <-done:
	case <-ctx.Done():
		return 0, fmt.Errorf("the consumer got %d of %d: %w", got.Load(), n, ctx.Err())
	}
	el := time.Since(start)
	if acc, rej, other := prod.Outcomes(); acc != int64(n) || rej != 0 || other != 0 {
		return 0, fmt.Errorf("outcomes: %d accepted, %d rejected, %d other", acc, rej, other)
	}
	return el, nil
}

// TestBrokerPair runs the pair's body once per peer, small.
func TestBrokerPair(t *testing.T) { pairOnce(t, runPair) }

// pairOnce runs a pair's clients once through each peer, small.
func pairOnce(t *testing.T, run func(context.Context, pairPeer, int) (time.Duration, error)) {
	for _, p := range pairPeers(t) {
		t.Run(p.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := run(ctx, p, 3000); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// BenchmarkBrokerPair: msgs/s of the pair through each peer.
//
//	cd bench && AMQPSAX_BROKER=127.0.0.1:5672 go test -run '^$' -bench BrokerPair -benchtime 100000x -count 5
func BenchmarkBrokerPair(b *testing.B) {
	for _, p := range pairPeers(b) {
		b.Run("peer="+p.name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			el, err := runPair(ctx, p, b.N)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/el.Seconds(), "msgs/s")
			b.ReportMetric(float64(el.Nanoseconds())/float64(b.N), "ns/op")
		})
	}
}

// TestBrokerSpeed prints the pair's msgs/s through package broker and
// RabbitMQ side by side, and their ratio (printed, not asserted: a
// shared machine's timings are noisy). It runs when AMQPSAX_BROKER_SPEED
// gives the messages per run (and AMQPSAX_BROKER names RabbitMQ); it
// keeps the best of AMQPSAX_BROKER_SPEED_RUNS runs (3):
//
//	bash .ci/broker start
//	cd bench && AMQPSAX_BROKER=127.0.0.1:5672 AMQPSAX_BROKER_SPEED=200000 go test -run TestBrokerSpeed -v -count=1
func TestBrokerSpeed(t *testing.T) { brokerSpeed(t, "engine clients", runPair) }

// brokerSpeed times run (a pair's clients) through each peer and prints
// the msgs/s side by side with their ratio, for TestBrokerSpeed and
// TestBrokerSpeedClient.
func brokerSpeed(t *testing.T, what string, run func(context.Context, pairPeer, int) (time.Duration, error)) {
	n, _ := strconv.Atoi(os.Getenv("AMQPSAX_BROKER_SPEED"))
	if n <= 0 {
		t.Skip("set AMQPSAX_BROKER_SPEED to the messages per run")
	}
	runs, _ := strconv.Atoi(os.Getenv("AMQPSAX_BROKER_SPEED_RUNS"))
	if runs <= 0 {
		runs = 3
	}
	rates := map[string]float64{}
	for _, p := range pairPeers(t) {
		for range runs {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			el, err := run(ctx, p, n)
			cancel()
			if err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			r := float64(n) / el.Seconds()
			t.Logf("%-8s %d messages in %v: %.0f msgs/s", p.name, n, el.Round(time.Millisecond), r)
			rates[p.name] = max(rates[p.name], r)
		}
	}
	if r, ok := rates["rabbitmq"]; ok {
		t.Logf("%s, best of %d: amqpsax %.0f msgs/s, rabbitmq %.0f msgs/s: %.1fx", what, runs, rates["amqpsax"], r, rates["amqpsax"]/r)
	}
}
