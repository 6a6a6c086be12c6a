package bench

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/amqptest"
	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/stream"
)

// Package broker beside RabbitMQ 4.0 with package client on every end
// (runClientPairs): LoopbackMessage's 100 bytes sent unsettled with
// SendAsync (up to 1,000 outcomes awaited at once per producer),
// received with ReceiveInto and a prefetch of 1,000, each accepted; one
// producer to one consumer over one queue (pairs=1), and 8 producers to
// 8 consumers over 8 queues, producer i to queue i to consumer i
// (pairs=8), every client on a connection of its own. The peers:
//
//   - amqpsax: package broker, served in this process by amqptest;
//   - rabbitmq4: RabbitMQ 4.0 (AMQPSAX_RABBITMQ4, as .ci/rabbitmq4
//     starts it), classic queues (its default queue type), declared
//     through its /management node and used at /queues/NAME;
//   - rabbitmq4-quorum: the same with quorum queues (replicated by
//     Raft, written to disk: on one node, the price of that log).
//
// bench/rabbitmq4-pair.sh starts RabbitMQ 4, runs interleaved passes of
// BenchmarkBrokerRabbitMQ4 and prints benchstat's table and the ratios of
// the medians.

// rabbitMQ4Pairs is the number of producer-queue-consumer triples of
// each workload.
var rabbitMQ4Pairs = []int{1, 8}

// rabbitMQ4Peers is package broker in this process and, when
// AMQPSAX_RABBITMQ4 names RabbitMQ 4, RabbitMQ 4 with classic queues and
// with quorum queues; each peer's queue i of a workload of k pairs is
// rabbitMQ4Queues(p, k)[i]. Those on RabbitMQ are declared and purged
// here, and deleted at tb's cleanup.
func rabbitMQ4Peers(tb testing.TB) []pairPeer {
	srv := amqptest.NewServer(tb, nil)
	peers := []pairPeer{{name: "amqpsax", addr: srv.Addr, queue: "pair"}}
	addr := os.Getenv("AMQPSAX_RABBITMQ4")
	if addr == "" {
		return peers
	}
	guest := engine.Config{Username: "guest", Password: "guest"}
	for _, kind := range []string{"classic", "quorum"} {
		p := pairPeer{name: "rabbitmq4", addr: addr, queue: "amqpsax-pair-" + kind, cfg: guest}
		if kind != "classic" {
			p.name += "-" + kind
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := rabbitMQ4Manage(ctx, p, kind, false)
		cancel()
		if err != nil {
			tb.Fatalf("%s: %v", p.name, err)
		}
		tb.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := rabbitMQ4Manage(ctx, p, kind, true); err != nil {
				tb.Errorf("%s: %v", p.name, err)
			}
		})
		p.queue = "/queues/" + p.queue
		peers = append(peers, p)
	}
	return peers
}

// rabbitMQ4Queues is the addresses of the queues of a workload of k
// pairs on p.
func rabbitMQ4Queues(p pairPeer, k int) []string {
	qs := make([]string, k)
	for i := range qs {
		qs[i] = p.queue + "-" + strconv.Itoa(k) + "-" + strconv.Itoa(i)
	}
	return qs
}

// rabbitMQ4Manage declares the queues of every workload on RabbitMQ 4
// (p.queue is their names' stem) with x-queue-type kind, through its
// /management node as interop's TestRabbitMQ4Client does, and purges
// them (a run cut short leaves nothing for the next); with del, it
// deletes them instead.
func rabbitMQ4Manage(ctx context.Context, p pairPeer, kind string, del bool) error {
	c, err := client.Dial(ctx, clientURL(p), &client.ConnOptions{AllowInsecurePlain: true}) // a local peer
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		return err
	}
	m, err := s.NewRequester(ctx, "/management", &client.RequesterOptions{
		Name: "amqpsax-bench-management", Paired: true, Settled: true,
		ReplyAddress: "/management", ReplyTo: "$me",
	})
	if err != nil {
		return err
	}
	var vs message.Values
	body, err := vs.Any(map[string]any{"durable": true, "exclusive": false, "auto_delete": false,
		"arguments": map[string]any{"x-queue-type": kind}})
	if err != nil {
		return err
	}
	request := func(method, path string, body stream.Value, want ...string) error {
		reply, err := m.Request(ctx, &message.Message{
			Properties: &message.Properties{To: []byte(path), Subject: []byte(method)},
			Body:       message.Body{Kind: message.BodyValue, Value: body},
		})
		if err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		var status string
		if reply.Properties != nil {
			status = string(reply.Properties.Subject)
		}
		for _, w := range want {
			if status == w {
				return nil
			}
		}
		return fmt.Errorf("%s %s: status %q", method, path, status)
	}
	for _, k := range rabbitMQ4Pairs {
		for _, q := range rabbitMQ4Queues(p, k) {
			path := "/queues/" + url.PathEscape(q)
			if del {
				if err := request("DELETE", path, vs.Null(), "200"); err != nil {
					return err
				}
				continue
			}
			if err := request("PUT", path, body, "200", "201"); err != nil {
				return err
			}
			if err := request("DELETE", path+"/messages", vs.Null(), "200"); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestBrokerRabbitMQ4Pairs runs each workload's body once per peer,
// small (through RabbitMQ 4 when AMQPSAX_RABBITMQ4 is set).
func TestBrokerRabbitMQ4Pairs(t *testing.T) {
	for _, p := range rabbitMQ4Peers(t) {
		for _, k := range rabbitMQ4Pairs {
			t.Run(fmt.Sprintf("pairs=%d/peer=%s", k, p.name), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if _, err := runClientPairs(ctx, p, rabbitMQ4Queues(p, k), 3000); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// BenchmarkBrokerRabbitMQ4: msgs/s of each workload through each peer,
// b.N messages in all (one op is one message, from the first send to
// the last accept). bench/rabbitmq4-pair.sh runs it in interleaved
// passes; by hand, with RabbitMQ 4 started by .ci/rabbitmq4:
//
//	cd bench && AMQPSAX_RABBITMQ4=127.0.0.1:5682 go test -run '^$' -bench BrokerRabbitMQ4 -benchtime 100000x -count 5
func BenchmarkBrokerRabbitMQ4(b *testing.B) {
	peers := rabbitMQ4Peers(b)
	for _, k := range rabbitMQ4Pairs {
		for _, p := range peers {
			b.Run(fmt.Sprintf("pairs=%d/peer=%s", k, p.name), func(b *testing.B) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				el, err := runClientPairs(ctx, p, rabbitMQ4Queues(p, k), b.N)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(b.N)/el.Seconds(), "msgs/s")
				b.ReportMetric(float64(el.Nanoseconds())/float64(b.N), "ns/op")
			})
		}
	}
}
