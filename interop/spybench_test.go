package interop

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/amqpsax/amqpsax/frame"
)

// BenchmarkSpy measures what watching costs: go-amqp sending
// to a server directly, through a do-nothing TCP proxy (io.Copy both
// ways, a process of its own) and through amqpspy printing every frame to
// a file, in the same run, the three interleaved round after round:
//
//   - pipelined: a sender whose messages are settled on sending (go-amqp
//     writes them without waiting), pipeSenders of them at once, for
//     pipeMessages messages: messages a second;
//   - request-response: one sender whose every Send waits for the
//     server's disposition, rrMessages of them: the median round trip,
//     and the time each proxy adds to the direct one.
//
// The server is the RabbitMQ at AMQPSAX_BROKER when that is set (.ci/broker
// start), else sink, a minimal AMQP receiver in this process. It reports
// (b.ReportMetric) nop-msgs/s, spy-msgs/s (medians of the rounds),
// spy/nop-% (the median of each round's ratio; it should be at least
// 90), the median round trips direct-rtt-µs, nop-added-µs, spy-added-µs
// (of all rounds' round trips), spy/nop-added (the median of each round's
// ratio of the time added; at most 1.5) and spy/nop-added-pooled, and
// spy-unprinted-bytes: what amqpspy forwarded but did not print because
// its printer fell behind (it drops rather than slow the forwarding).
// Run it as
//
//	cd interop && go test -run '^$' -bench BenchmarkSpy -benchtime 3x
//
// (each iteration is one round of all three; amqpspy's printer is let
// catch up after each of its measurements, so that its lag does not slow
// the next one). Nothing is asserted: a timing depends on the machine.
func BenchmarkSpy(b *testing.B) {
	target := os.Getenv("AMQPSAX_BROKER")
	if target == "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer ln.Close()
		go serveSink(ln)
		target = ln.Addr().String()
	}
	dir := b.TempDir()
	nopAddr, stopNop := startNopProxy(b, dir, target)
	defer stopNop()
	spyOut := filepath.Join(dir, "spy.txt")
	spyAddr, stopSpy := startSpy(b, target, spyOut)
	defer stopSpy()

	addrs := map[string]string{"direct": target, "nop": nopAddr, "spy": spyAddr}
	order := []string{"direct", "nop", "spy"}
	rates := map[string][]float64{}          // by round
	rtts := map[string][]time.Duration{}     // every round trip
	roundRTT := map[string][]time.Duration{} // each round's median
	b.ResetTimer()
	for i := range b.N {
		for k := range order {
			name := order[(i+k)%len(order)]
			rate, err := pipelined(addrs[name])
			if err != nil {
				b.Fatalf("%s, pipelined: %v", name, err)
			}
			rates[name] = append(rates[name], rate)
			if name == "spy" {
				waitIdle(spyOut)
			}
			rtt, err := requestResponse(addrs[name])
			if err != nil {
				b.Fatalf("%s, request-response: %v", name, err)
			}
			rtts[name] = append(rtts[name], rtt...)
			roundRTT[name] = append(roundRTT[name], medianOf(rtt))
			if name == "spy" {
				waitIdle(spyOut)
			}
		}
	}
	b.StopTimer()
	stopSpy()

	rate := func(name string) float64 { return medianOf(rates[name]) }
	rtt := func(name string) float64 { return float64(medianOf(rtts[name])) / 1e3 }
	b.ReportMetric(rate("direct"), "direct-msgs/s")
	b.ReportMetric(rate("nop"), "nop-msgs/s")
	b.ReportMetric(rate("spy"), "spy-msgs/s")
	// The load of the machine changes from round to round far more than
	// between the three measurements of one round: the ratios are taken
	// round by round, and their median reported.
	var pipeRatio, addedRatio []float64
	for i := range b.N {
		pipeRatio = append(pipeRatio, rates["spy"][i]/rates["nop"][i])
		d := float64(roundRTT["direct"][i])
		addedRatio = append(addedRatio, (float64(roundRTT["spy"][i])-d)/(float64(roundRTT["nop"][i])-d))
	}
	b.ReportMetric(100*medianOf(pipeRatio), "spy/nop-%")
	b.ReportMetric(medianOf(addedRatio), "spy/nop-added")
	b.ReportMetric(rtt("direct"), "direct-rtt-µs")
	b.ReportMetric(rtt("nop")-rtt("direct"), "nop-added-µs")
	b.ReportMetric(rtt("spy")-rtt("direct"), "spy-added-µs")
	b.ReportMetric((rtt("spy")-rtt("direct"))/(rtt("nop")-rtt("direct")), "spy/nop-added-pooled")
	unprinted, printed := spyUnprinted(b, spyOut)
	b.ReportMetric(float64(unprinted), "spy-unprinted-bytes")
	b.ReportMetric(float64(printed), "spy-printed-bytes")
	b.Logf("%d rounds; pipelined msgs/s (median of rounds): direct %.0f, nop %.0f, spy %.0f; request-response median RTT: direct %.1f µs, nop %.1f µs, spy %.1f µs",
		b.N, rate("direct"), rate("nop"), rate("spy"), rtt("direct"), rtt("nop"), rtt("spy"))
	b.Logf("by round: pipelined msgs/s nop %.0f, spy %.0f; spy/nop %.2f; median RTT µs direct %v, nop %v, spy %v; spy/nop added %.2f",
		rates["nop"], rates["spy"], pipeRatio, roundRTT["direct"], roundRTT["nop"], roundRTT["spy"], addedRatio)
}

const (
	pipeMessages = 10000
	pipeSenders  = 4
	rrMessages   = 500
	messageBytes = 200
)

// waitIdle waits until amqpspy's printout has stopped growing: its
// printer, which may lag behind a burst, has caught up, so that it does
// not take the CPU from the next measurement (of another proxy).
func waitIdle(path string) {
	last, still := int64(-1), 0
	for still < 4 {
		time.Sleep(50 * time.Millisecond)
		fi, err := os.Stat(path)
		if err != nil {
			return
		}
		if fi.Size() == last {
			still++
		} else {
			last, still = fi.Size(), 0
		}
	}
}

// dialClient connects go-amqp to addr: SASL ANONYMOUS to a broker, no
// SASL to the sink.
func dialClient(ctx context.Context, addr string) (*amqp.Conn, *amqp.Session, error) {
	opts := &amqp.ConnOptions{ContainerID: "spybench"}
	if os.Getenv("AMQPSAX_BROKER") != "" {
		opts.SASLType = amqp.SASLTypeAnonymous()
	}
	conn, err := amqp.Dial(ctx, "amqp://"+addr, opts)
	if err != nil {
		return nil, nil, err
	}
	sess, err := conn.NewSession(ctx, nil)
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return conn, sess, nil
}

// pipelined sends pipeMessages settled messages from pipeSenders senders
// at once and returns the messages a second.
func pipelined(addr string) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, sess, err := dialClient(ctx, addr)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	var senders []*amqp.Sender
	for i := range pipeSenders {
		s, err := sess.NewSender(ctx, "/queues/spybench-"+strconv.Itoa(i), &amqp.SenderOptions{SettlementMode: amqp.SenderSettleModeSettled.Ptr()})
		if err != nil {
			return 0, err
		}
		senders = append(senders, s)
	}
	body := make([]byte, messageBytes)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, pipeSenders)
	for _, s := range senders {
		wg.Go(func() {
			for range pipeMessages / pipeSenders {
				if err := s.Send(ctx, amqp.NewMessage(body), nil); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	for _, s := range senders {
		s.Close(ctx)
	}
	return pipeMessages / elapsed.Seconds(), nil
}

// requestResponse sends rrMessages unsettled messages one at a time, each
// Send waiting for the server's disposition, and returns each one's time.
func requestResponse(addr string) ([]time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, sess, err := dialClient(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	s, err := sess.NewSender(ctx, "/queues/spybench-rr", &amqp.SenderOptions{SettlementMode: amqp.SenderSettleModeUnsettled.Ptr()})
	if err != nil {
		return nil, err
	}
	defer s.Close(ctx)
	body := make([]byte, messageBytes)
	out := make([]time.Duration, 0, rrMessages)
	for range rrMessages {
		t := time.Now()
		if err := s.Send(ctx, amqp.NewMessage(body), nil); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t))
	}
	return out, nil
}

func medianOf[T int64 | float64 | time.Duration](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// nopProxy is the do-nothing proxy: io.Copy both ways, nothing else.
const nopProxy = `package main

import (
	"fmt"
	"io"
	"net"
	"os"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Println(ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			s, err := net.Dial("tcp", os.Args[1])
			if err != nil {
				c.Close()
				return
			}
			go func() { io.Copy(s, c); s.(*net.TCPConn).CloseWrite() }()
			io.Copy(c, s)
			c.(*net.TCPConn).CloseWrite()
		}()
	}
}
`

// startNopProxy builds and starts the do-nothing proxy in front of
// target.
func startNopProxy(b *testing.B, dir, target string) (string, func()) {
	src := filepath.Join(dir, "nop")
	if err := os.MkdirAll(src, 0o755); err != nil {
		b.Fatal(err)
	}
	os.WriteFile(filepath.Join(src, "go.mod"), []byte("module nop\n\ngo 1.26\n"), 0o644)
	os.WriteFile(filepath.Join(src, "main.go"), []byte(nopProxy), 0o644)
	build := exec.Command("go", "build", "-o", "nop", ".")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building the do-nothing proxy: %v\n%s", err, out)
	}
	cmd := exec.Command(filepath.Join(src, "nop"), target)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		b.Fatal(err)
	}
	return strings.TrimSpace(line), func() { cmd.Process.Kill(); cmd.Wait() }
}

// startSpy starts amqpspy in front of target, printing to out.
func startSpy(b *testing.B, target, out string) (string, func()) {
	bin, err := buildSpy()
	if err != nil {
		b.Fatal(err)
	}
	args := []string{"-listen", "127.0.0.1:0", "-target", target, "-out", out}
	if extra := os.Getenv("SPYBENCH_ARGS"); extra != "" {
		// More flags for amqpspy (-json, -q, …): to see what each costs.
		args = append(args, strings.Fields(extra)...)
	}
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	r := bufio.NewReader(stderr)
	line, err := r.ReadString('\n')
	addr, ok := strings.CutPrefix(line, "amqpspy: listening on ")
	if err != nil || !ok {
		cmd.Process.Kill()
		b.Fatalf("amqpspy: %q %v", line, err)
	}
	addr, _, _ = strings.Cut(addr, ",")
	go io.Copy(io.Discard, r)
	var once sync.Once
	return addr, func() {
		once.Do(func() {
			time.Sleep(200 * time.Millisecond) // let the last connection's lines be written
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
		})
	}
}

var notPrinted = regexp.MustCompile(`the printer fell behind: (\d+) bytes from the client and (\d+) from the server`)

// spyUnprinted returns the bytes amqpspy said it forwarded without
// printing, and the size of what it printed.
func spyUnprinted(b *testing.B, path string) (unprinted, printed int64) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		printed += int64(len(sc.Bytes())) + 1
		if m := notPrinted.FindSubmatch(sc.Bytes()); m != nil {
			c, _ := strconv.ParseInt(string(m[1]), 10, 64)
			s, _ := strconv.ParseInt(string(m[2]), 10, 64)
			unprinted += c + s
		}
	}
	return unprinted, printed
}

// serveSink serves every connection ln accepts with sink.
func serveSink(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			sink(c)
		}()
	}
}

// spySinkCredit is the link credit the sink grants, topped up when half is
// used.
const spySinkCredit = 5000

// sink is a minimal AMQP 1.0 receiver, written with package frame: no
// SASL; it answers open, begin and attach, grants credit, settles every
// unsettled delivery with accepted as soon as its last transfer arrives,
// and answers detach, end and close. It keeps nothing.
func sink(c net.Conn) error {
	r := frame.NewReader(c)
	w := bufio.NewWriterSize(c, 64<<10)
	f, err := r.Next()
	if err != nil || !f.IsHeader || f.Header != frame.HeaderAMQP {
		return fmt.Errorf("want an AMQP header: %v", err)
	}
	w.Write(frame.AppendProtocolHeader(nil, frame.HeaderAMQP))
	type linkState struct {
		count  uint32 // the sender's delivery-count, as the sink has seen it
		credit uint32 // left
	}
	links := map[uint32]*linkState{}
	var next uint32 // the next incoming delivery id
	var b []byte
	send := func(channel uint16, body []byte) {
		b = frame.AppendFrame(b[:0], frame.Frame{Channel: channel, Body: body})
		w.Write(b)
	}
	flow := func(channel uint16, handle uint32, l *linkState) {
		l.credit = spySinkCredit
		send(channel, frame.AppendFlow(nil, frame.Flow{NextIncomingID: frame.Some(next), IncomingWindow: 1 << 30,
			NextOutgoingID: 0, OutgoingWindow: 1 << 30, Handle: frame.Some(handle),
			DeliveryCount: frame.Some(l.count), LinkCredit: frame.Some(l.credit)}))
	}
	for {
		if err := w.Flush(); err != nil {
			return err
		}
		f, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if f.IsHeartbeat() {
			continue
		}
		d, err := frame.Performative(f.Body)
		if err != nil {
			return err
		}
		switch d.TypeName() {
		case "open":
			send(0, frame.AppendOpen(nil, frame.Open{ContainerID: []byte("sink"), MaxFrameSize: frame.Some[uint32](1 << 20)}))
		case "begin":
			send(f.Channel, frame.AppendBegin(nil, frame.Begin{RemoteChannel: frame.Some(f.Channel), IncomingWindow: 1 << 30, OutgoingWindow: 1 << 30}))
		case "attach":
			a, err := frame.ParseAttach(f.Body)
			if err != nil {
				return err
			}
			l := &linkState{count: a.InitialDeliveryCount.Or(0)}
			links[a.Handle] = l
			send(f.Channel, frame.AppendAttach(nil, frame.Attach{Name: a.Name, Handle: a.Handle, Role: frame.RoleReceiver,
				SndSettleMode: a.SndSettleMode, RcvSettleMode: a.RcvSettleMode, Source: a.Source, Target: a.Target}))
			flow(f.Channel, a.Handle, l)
		case "transfer":
			t, _, err := frame.ParseTransfer(f.Body)
			if err != nil {
				return err
			}
			id, hasID := t.DeliveryID.Get()
			if hasID {
				next = id + 1
			}
			if t.More {
				continue
			}
			if l := links[t.Handle]; l != nil {
				l.count++
				if l.credit--; l.credit < spySinkCredit/2 {
					flow(f.Channel, t.Handle, l)
				}
			}
			if !t.Settled {
				send(f.Channel, frame.AppendDisposition(nil, frame.Disposition{Role: frame.RoleReceiver, First: next - 1,
					Settled: true, State: frame.DeliveryState{Type: frame.StateAccepted}}))
			}
		case "detach":
			dt, err := frame.ParseDetach(f.Body)
			if err != nil {
				return err
			}
			delete(links, dt.Handle)
			send(f.Channel, frame.AppendDetach(nil, frame.Detach{Handle: dt.Handle, Closed: dt.Closed}))
		case "end":
			send(f.Channel, frame.AppendEnd(nil, frame.End{}))
		case "close":
			send(0, frame.AppendClose(nil, frame.Close{}))
			return w.Flush()
		}
	}
}
