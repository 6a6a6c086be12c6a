package bench

import (
	"testing"
)

// TestReceivers runs every receiver on every recorded stream: whole
// connections and a prefix, every message compared byte for byte.
func TestReceivers(t *testing.T) {
	streams, err := DriverStreams()
	if err != nil {
		t.Fatal(err)
	}
	if len(Receivers) == 0 {
		t.Skip("no receiver in this build (the engine's and, with -tags proton, Proton-C's)")
	}
	for _, s := range streams {
		for _, rc := range Receivers {
			t.Run(s.Name+"/"+rc.Name, func(t *testing.T) {
				run, err := rc.New(s, true)
				if err != nil {
					t.Fatal(err)
				}
				defer run.Close()
				for _, n := range []int{s.Msgs, 1, s.Msgs + 7, 2 * s.Msgs} {
					r, err := run.Run(n)
					if err != nil {
						t.Fatalf("%d messages: %v", n, err)
					}
					if err := r.Check(s, n); err != nil {
						t.Fatalf("%d messages: %v", n, err)
					}
					t.Logf("%d messages: %d connections, receiver wrote %d bytes", n, r.Conns, r.Out)
					if want := (n + s.Msgs - 1) / s.Msgs; r.Conns != want {
						t.Fatalf("%d messages: %d connections, want %d", n, r.Conns, want)
					}
				}
			})
		}
	}
}

// BenchmarkReceive feeds a receiver, in memory, a client's recorded
// stream of pipelined transfers (see DriverStream); one op is one message
// received and settled, so ns/op is ns per message, and msgs/s is per
// core (the loop runs on one goroutine). Proton-C's connection driver
// needs -tags proton.
//
//	go test -tags proton -run '^$' -bench Receive -benchmem -count 8 | tee receive.txt
//	go run golang.org/x/perf/cmd/benchstat -col /impl receive.txt
func BenchmarkReceive(b *testing.B) {
	streams, err := DriverStreams()
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range streams {
		b.Run("stream="+s.Name, func(b *testing.B) {
			for _, rc := range Receivers {
				b.Run("impl="+rc.Name, func(b *testing.B) {
					run, err := rc.New(s, false)
					if err != nil {
						b.Fatal(err)
					}
					defer run.Close()
					if _, err := run.Run(s.Msgs); err != nil { // warm
						b.Fatal(err)
					}
					b.SetBytes(s.PerMessage())
					b.ReportAllocs()
					b.ResetTimer()
					r, err := run.Run(b.N)
					b.StopTimer()
					if err != nil {
						b.Fatal(err)
					}
					if err := r.Check(s, b.N); err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
				})
			}
		})
	}
}

// TestEngineReceiverAllocs: once warm, the engine receives, accepts and
// settles a message without allocating.
func TestEngineReceiverAllocs(t *testing.T) {
	streams, err := DriverStreams()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range streams {
		allocs, err := EngineReceiverAllocs(s, 100, 1000, testing.AllocsPerRun)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if allocs != 0 {
			t.Errorf("%s: %v allocations per message", s.Name, allocs)
		}
	}
}
