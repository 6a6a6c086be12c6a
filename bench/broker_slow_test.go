package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/engine"
)

// TestBrokerSlowConsumer: a consumer taking 1 message a second, a
// producer of 1 KiB messages as fast as credit allows, through
// examples/broker (package broker with its defaults but -max-memory
// 64MiB: queues have no bound of their own, the broker's memory bounds
// them together) run as a process of its own, whose resident memory is
// sampled from /proc. The broker must stay under 128 MiB and hold the
// producer back with credit: every
// message sent is accepted, none rejected, and the producer spends the
// run waiting for credit. It runs 3 s by default; AMQPSAX_BROKER_SLOW
// sets the time (the run is 60 s):
//
//	cd bench && AMQPSAX_BROKER_SLOW=60s go test -run TestBrokerSlowConsumer -v -count=1
func TestBrokerSlowConsumer(t *testing.T) {
	run := 3 * time.Second
	if s := os.Getenv("AMQPSAX_BROKER_SLOW"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("AMQPSAX_BROKER_SLOW: %v", err)
		}
		run = d
	} else if testing.Short() {
		t.Skip("-short")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to read the broker's resident memory")
	}
	addr, pid := startBrokerProcess(t, "-max-memory", "64MiB")

	ctx, cancel := context.WithTimeout(context.Background(), run)
	defer cancel()
	cons, err := DialConsumer(context.Background(), addr, "slow", engine.Config{}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	prod, err := DialProducer(context.Background(), addr, "slow", engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()

	var peak atomic.Int64
	sample := func() {
		if r := rss(pid); r > peak.Load() {
			peak.Store(r)
		}
	}
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			cons.Flow(1)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	body := bytes.Repeat([]byte{'k'}, 1024)
	msg := append([]byte{0x00, 0x53, 0x75, 0xb0, 0, 0, 4, 0}, body...) // data, vbin32 of 1024 bytes
	start := time.Now()
	err = prod.Send(ctx, 1<<30, 0, func(int) []byte { return msg })
	el := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the producer stopped before the run's end: %v", err)
	}
	sample()
	acc, rej, other := prod.Outcomes()
	waited := prod.Waited()
	t.Logf("%v: %d accepted (%d KiB), %d rejected, %d other; consumer took %d; producer waited for credit %v (%.0f%% of the run); broker peak RSS %.1f MiB",
		el.Round(time.Millisecond), acc, acc, rej, other, cons.Received(), waited.Round(time.Millisecond),
		100*waited.Seconds()/el.Seconds(), float64(peak.Load())/(1<<20))
	if rej != 0 || other != 0 {
		t.Errorf("%d rejected, %d other outcomes: the producer must wait, not be refused", rej, other)
	}
	if peak.Load() >= 128<<20 {
		t.Errorf("broker RSS peaked at %d bytes, over 128 MiB", peak.Load())
	}
	if prod.Credit() != 0 || waited == 0 {
		t.Errorf("the producer never waited for credit (credit %d, waited %v)", prod.Credit(), waited)
	}
}

// startBrokerProcess builds examples/broker and starts it on a free
// loopback port with the flags given; it is killed when the test ends.
func startBrokerProcess(t *testing.T, flags ...string) (addr string, pid int) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "broker")
	build := exec.Command("go", "build", "-o", bin, "./examples/broker")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building examples/broker: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, append([]string{"-listen", addr}, flags...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "listening") {
			go func() {
				for sc.Scan() {
				}
			}()
			return addr, cmd.Process.Pid
		}
	}
	t.Fatal("examples/broker did not start")
	return "", 0
}

// rss returns the resident set size of process pid, in bytes (0 when it
// cannot be read).
func rss(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}
