package bench

import (
	"bytes"
	"testing"

	"github.com/amqpsax/amqpsax/frame"
)

// BenchmarkFrameRead reads every frame of a connection's stream (see
// FrameStreams): impl=reader is frame.Reader alone, impl=loop the receiving
// loop of a broker (Next, Performative, ParseTransfer, Assembler.Add).
// Each reports MB/s and frames/s. go-amqp has no counterpart that can be
// called from outside its module (see frame.go).
//
//	go test -run '^$' -bench FrameRead -benchmem
func BenchmarkFrameRead(b *testing.B) {
	streams, err := FrameStreams()
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range streams {
		b.Run("conn="+s.Name, func(b *testing.B) {
			src := bytes.NewReader(s.Data)
			r := frame.NewReader(src)
			var a frame.Assembler
			for _, impl := range []string{"reader", "loop"} {
				b.Run("impl="+impl, func(b *testing.B) {
					run := func() (int, error) {
						src.Reset(s.Data)
						r.Reset(src)
						if impl == "reader" {
							return ReadFrames(r)
						}
						n, _, err := LoopFrames(r, &a)
						return n, err
					}
					if _, err := run(); err != nil { // warm
						b.Fatal(err)
					}
					b.SetBytes(int64(len(s.Data)))
					b.ReportAllocs()
					for b.Loop() {
						if _, err := run(); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(s.Frames)*float64(b.N)/b.Elapsed().Seconds(), "frames/s")
				})
			}
		})
	}
}

// BenchmarkFrameTransfer decodes one transfer frame's body carrying each
// workload's message (see TransferImpls).
//
//	go test -run '^$' -bench FrameTransfer -benchmem
func BenchmarkFrameTransfer(b *testing.B) {
	for _, w := range Workloads() {
		b.Run("workload="+w.Name, func(b *testing.B) {
			for _, im := range TransferImpls {
				b.Run("impl="+im.Name, func(b *testing.B) {
					op := im.New(w)
					if err := op.Run(); err != nil {
						b.Fatal(err)
					}
					b.SetBytes(int64(len(TransferBody(w))))
					b.ReportAllocs()
					for b.Loop() {
						if err := op.Run(); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

// TestFrameBench runs the body of every frame benchmark once and checks
// its result: the streams read whole with the frames and deliveries they
// hold, every transfer implementation's answer against the workload.
func TestFrameBench(t *testing.T) {
	streams, err := FrameStreams()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range streams {
		n, err := ReadFrames(frame.NewReader(bytes.NewReader(s.Data)))
		if err != nil || n != s.Frames || n == 0 || s.Deliveries == 0 {
			t.Errorf("%s: %d frames (want %d), %d deliveries, %v", s.Name, n, s.Frames, s.Deliveries, err)
		}
	}
	for _, w := range Workloads() {
		for _, im := range TransferImpls {
			op := im.New(w)
			for range 2 {
				if err := op.Run(); err != nil {
					t.Fatalf("%s/%s: %v", w.Name, im.Name, err)
				}
				if err := op.Check(); err != nil {
					t.Fatalf("%s/%s: %v", w.Name, im.Name, err)
				}
			}
		}
	}
}
