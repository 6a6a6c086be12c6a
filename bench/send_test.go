package bench

import (
	"bytes"
	"testing"
)

// TestSenders runs every sender on every recorded server stream, whole
// connections and short ones, and parses what it wrote (CheckSent): every
// message sent once, in order, byte for byte.
func TestSenders(t *testing.T) {
	streams, err := SendStreams()
	if err != nil {
		t.Fatal(err)
	}
	if len(Senders) == 0 {
		t.Skip("no sender in this build (the engine's and, with -tags proton, Proton-C's)")
	}
	for _, s := range streams {
		for _, sc := range Senders {
			t.Run(s.Name+"/"+sc.Name, func(t *testing.T) {
				run, err := sc.New(s, true)
				if err != nil {
					t.Fatal(err)
				}
				defer run.Close()
				for _, n := range []int{s.Msgs, 1, SendBatch, SendBatch + 1, s.Msgs + 7, 2 * s.Msgs} {
					r, err := run.Run(n)
					if err != nil {
						t.Fatalf("%d messages: %v", n, err)
					}
					if err := r.Check(s, n); err != nil {
						t.Fatalf("%d messages: %v", n, err)
					}
					if r.Out != int64(len(r.Written)) {
						t.Fatalf("%d messages: wrote %d bytes, kept %d", n, r.Out, len(r.Written))
					}
					if err := CheckSent(s, n, r.Written); err != nil {
						t.Fatalf("%d messages: %v", n, err)
					}
					t.Logf("%d messages: %d connections, sender wrote %d bytes", n, r.Conns, r.Out)
				}
			})
		}
	}
}

// TestCheckSentRefuses: CheckSent is no rubber stamp. A stream with a
// message missing, one changed, or one settled otherwise is refused.
func TestCheckSentRefuses(t *testing.T) {
	streams, err := SendStreams()
	if err != nil {
		t.Fatal(err)
	}
	s := streams[0]
	run, err := newEngineSender(s, true)
	if err != nil {
		t.Fatal(err)
	}
	r, err := run.Run(3)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSent(s, 3, r.Written); err != nil {
		t.Fatal(err)
	}
	if err := CheckSent(s, 4, r.Written); err == nil {
		t.Error("took 3 transfers for 4")
	}
	changed := append([]byte(nil), r.Written...)
	at := bytes.LastIndex(changed, s.Workload.AMQP)
	if at < 0 {
		t.Fatal("the message is not in the output")
	}
	changed[at+len(s.Workload.AMQP)/2] ^= 1
	if err := CheckSent(s, 3, changed); err == nil {
		t.Error("took a changed message")
	}
	other := *s
	other.Settled = !s.Settled
	if err := CheckSent(&other, 3, r.Written); err == nil {
		t.Error("took transfers settled otherwise")
	}
}

// BenchmarkSend has a sender send, in memory, the messages of a recorded
// server stream (see SenderStream): SendBatch at a time, output taken and
// dropped, unsettled ones accepted by the stream's dispositions. One op
// is one message sent (and, unsettled, settled on its outcome), so ns/op
// is ns per message and msgs/s is per core. Proton-C's connection driver
// needs -tags proton.
//
//	go test -tags proton -run '^$' -bench '^BenchmarkSend$' -benchmem -count 8 | tee send.txt
//	go run golang.org/x/perf/cmd/benchstat -col /impl send.txt
func BenchmarkSend(b *testing.B) {
	streams, err := SendStreams()
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range streams {
		b.Run("stream="+s.Name, func(b *testing.B) {
			for _, sc := range Senders {
				b.Run("impl="+sc.Name, func(b *testing.B) {
					run, err := sc.New(s, false)
					if err != nil {
						b.Fatal(err)
					}
					defer run.Close()
					if _, err := run.Run(s.Msgs); err != nil { // warm
						b.Fatal(err)
					}
					b.SetBytes(int64(len(s.Workload.AMQP)))
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

// TestEngineSenderAllocs: once warm, the engine sends a message, and
// settles it on its outcome, without allocating.
func TestEngineSenderAllocs(t *testing.T) {
	streams, err := SendStreams()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range streams {
		allocs, err := EngineSenderAllocs(s, 3, 30, testing.AllocsPerRun)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if allocs != 0 {
			t.Errorf("%s: %v allocations per batch of %d messages", s.Name, allocs, SendBatch)
		}
	}
}
