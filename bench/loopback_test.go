package bench

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/engine"
)

// loopbackPeer is where the loopback benchmark sends.
type loopbackPeer struct {
	name, addr, address string
	cfg                 engine.Config
	sink                *LoopbackSink // the engine's; nil for RabbitMQ
}

// loopbackPeers: an engine sink, and RabbitMQ when AMQPSAX_BROKER names
// one (messages go to an exchange no queue is bound to: RabbitMQ routes
// and drops them, a sink as the engine's is).
func loopbackPeers(tb testing.TB) []loopbackPeer {
	sink, err := StartLoopbackSink()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { sink.Close() })
	peers := []loopbackPeer{{name: "engine", addr: sink.Addr, address: "bench", sink: sink}}
	if broker := os.Getenv("AMQPSAX_BROKER"); broker != "" {
		peers = append(peers, loopbackPeer{name: "rabbitmq", addr: broker, address: "/exchange/amq.fanout",
			cfg: engine.Config{Username: "guest", Password: "guest"}})
	}
	return peers
}

// TestLoopback sends a few thousand messages to each peer, both ways.
func TestLoopback(t *testing.T) {
	for _, p := range loopbackPeers(t) {
		for _, presettled := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/presettled=%v", p.name, presettled), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				s, err := DialLoopback(ctx, p.addr, p.address, p.cfg, presettled)
				if err != nil {
					t.Fatal(err)
				}
				var before int64
				if p.sink != nil {
					before = p.sink.Delivered.Load()
				}
				const n = 5000
				for range 2 {
					if err := s.Send(ctx, n); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				if p.sink != nil {
					want := int64(2 * n)
					if presettled {
						want += 2 // the fences
					}
					// Every message was taken before its outcome (or the
					// fence's) came back.
					if got := p.sink.Delivered.Load() - before; got != want {
						t.Fatalf("the sink took %d messages, want %d", got, want)
					}
				}
			})
		}
	}
}

// BenchmarkLoopback: one op is one 100-byte message sent by the engine
// over one loopback TCP connection and taken by the peer; msgs/s beside
// ns/op. peer=rabbitmq needs AMQPSAX_BROKER (RabbitMQ from .ci/broker).
//
//	AMQPSAX_BROKER=127.0.0.1:5672 go test -run '^$' -bench Loopback -benchmem -count 6
func BenchmarkLoopback(b *testing.B) {
	for _, p := range loopbackPeers(b) {
		for _, mode := range []string{"presettled", "unsettled"} {
			b.Run("peer="+p.name+"/mode="+mode, func(b *testing.B) {
				ctx, cancel := context.WithTimeout(context.Background(), loopbackTimeout)
				defer cancel()
				s, err := DialLoopback(ctx, p.addr, p.address, p.cfg, mode == "presettled")
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				if err := s.Send(ctx, 1000); err != nil { // warm
					b.Fatal(err)
				}
				b.SetBytes(int64(len(LoopbackMessage)))
				b.ReportAllocs()
				b.ResetTimer()
				if err := s.Send(ctx, b.N); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			})
		}
	}
}
