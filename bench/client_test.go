package bench

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/message"
)

// The client benchmark: package client beside Azure/go-amqp v1.7.0, the
// same calls over loopback TCP to examples/broker (built from the main
// module, a process of its own), and to RabbitMQ when AMQPSAX_BROKER
// names one. Each message is the issue-28 trial's: properties (a
// message-id, to, content-type) and a 100-byte data body.
//
//	go test -run '^$' -bench '^BenchmarkClient$' -count 6 . | tee c.txt
//	benchstat -row .name -col /impl c.txt
//
// op=send: one goroutine, Send unsettled, each outcome awaited; beside
// them impl=tcp-pingpong, the bare TCP round trip of the same bytes
// between two processes (client_pingpong_test.go), the floor of a
// blocking Send.
// op=pipelined: amqpsax's SendAsync from one goroutine with up to 1,000
// in flight; go-amqp's 64 goroutines each in Send (what a go-amqp program
// does for throughput, having no asynchronous send); amqpsax's 64
// goroutines in Send as well (impl=amqpsax-64), and go-amqp's own
// pipelining, SendWithReceipt from one goroutine with up to 1,000 in
// flight (impl=goamqp-receipt).
// op=receive: Receive then Accept, prefetch 500, the queue filled before
// the timer starts.

var (
	brokerBuild    sync.Once
	brokerBinary   string
	brokerBuildErr error
)

// startExampleBroker builds examples/broker (once per test binary) and
// starts it on a free loopback port until tb ends.
func startExampleBroker(tb testing.TB) string {
	brokerBuild.Do(func() {
		dir, err := os.MkdirTemp("", "amqpsax-bench-broker")
		if err != nil {
			brokerBuildErr = err
			return
		}
		brokerBinary = filepath.Join(dir, "broker")
		build := exec.Command("go", "build", "-o", brokerBinary, "./examples/broker")
		build.Dir = ".."
		if out, err := build.CombinedOutput(); err != nil {
			brokerBuildErr = fmt.Errorf("building examples/broker: %v\n%s", err, out)
		}
	})
	if brokerBuildErr != nil {
		tb.Fatal(brokerBuildErr)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(brokerBinary, "-listen", addr, "-max-queue", "100000000")
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	tb.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	for range 1000 {
		if nc, err := net.Dial("tcp", addr); err == nil {
			nc.Close()
			if err := warmBroker(addr); err != nil {
				tb.Fatalf("warming examples/broker up: %v", err)
			}
			return addr
		}
		select {
		case <-exited:
			tb.Fatalf("examples/broker exited before listening on %s", addr)
		case <-time.After(10 * time.Millisecond):
		}
	}
	tb.Fatalf("examples/broker does not listen on %s", addr)
	return ""
}

// warmBroker sends messages through a broker just started and takes
// them back, so that the first case measured does not pay alone for the
// broker process's start (its heap growing, its memory first touched):
// with -count 1 a process at a time, that is always impl=amqpsax.
func warmBroker(addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := clientPeer{name: "broker", addr: addr}
	a, err := dialAmqpsax(ctx, p, p.queue("warm"), false)
	if err != nil {
		return err
	}
	defer a.close()
	const n = 20000
	if err := a.pipelined(ctx, n); err != nil {
		return err
	}
	return a.receive(ctx, n, false)
}

// clientPeer is a broker the client benchmark runs against.
type clientPeer struct {
	name   string
	addr   string // host:port
	prefix string // before queue names
	user   string // SASL PLAIN, or anonymous
	pass   string
}

func clientPeers(tb testing.TB) []clientPeer {
	peers := []clientPeer{{name: "broker", addr: startExampleBroker(tb)}}
	if broker := os.Getenv("AMQPSAX_BROKER"); broker != "" {
		peers = append(peers, clientPeer{name: "rabbitmq", addr: broker, prefix: "/queue/", user: "guest", pass: "guest"})
	}
	return peers
}

func (p clientPeer) url() string {
	if p.user != "" {
		return "amqp://" + p.user + ":" + p.pass + "@" + p.addr
	}
	return "amqp://" + p.addr
}

var queueSeq atomic.Int64

func (p clientPeer) queue(op string) string {
	return fmt.Sprintf("%sbench-client-%s-%d-%d", p.prefix, op, os.Getpid(), queueSeq.Add(1))
}

// clientBody is the 100-byte body of every message.
var clientBody = func() []byte {
	b := make([]byte, 100)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b
}()

func amqpsaxMsg() *message.Message {
	return &message.Message{
		Properties: &message.Properties{MessageID: message.UlongID(1), To: []byte("orders"), ContentType: []byte("text/plain")},
		Body:       message.Body{Kind: message.BodyData, Data: [][]byte{clientBody}},
	}
}

func goamqpMsg() *amqp.Message {
	to, ct := "orders", "text/plain"
	return &amqp.Message{
		Properties: &amqp.MessageProperties{MessageID: uint64(1), To: &to, ContentType: &ct},
		Data:       [][]byte{clientBody},
	}
}

// clientImpl is one implementation's side of the benchmark.
type clientImpl interface {
	send(ctx context.Context, n int) error                // one goroutine, unsettled, each outcome awaited
	pipelined(ctx context.Context, n int) error           // as fast as the implementation pipelines
	fill(ctx context.Context, n int) error                // queue n messages for receive
	receive(ctx context.Context, n int, check bool) error // Receive and Accept n
	queueName() string
	close() error
}

func dialImpl(ctx context.Context, tb testing.TB, impl string, p clientPeer, queue string) (clientImpl, error) {
	switch impl {
	case "tcp-pingpong":
		return dialPingpong(tb)
	case "amqpsax", "amqpsax-64":
		return dialAmqpsax(ctx, p, queue, impl == "amqpsax-64")
	case "goamqp", "goamqp-receipt":
		g, err := dialGoamqp(ctx, p, queue)
		if g != nil {
			g.receipts = impl == "goamqp-receipt"
		}
		return g, err
	}
	return nil, fmt.Errorf("no impl %s", impl)
}

type amqpsaxImpl struct {
	c       *client.Conn
	s       *client.Session
	snd     *client.Sender
	queue   string
	senders int
}

func dialAmqpsax(ctx context.Context, p clientPeer, queue string, many bool) (*amqpsaxImpl, error) {
	c, err := client.Dial(ctx, p.url(), &client.ConnOptions{AllowInsecurePlain: true}) // local peers
	if err != nil {
		return nil, err
	}
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	snd, err := s.NewSender(ctx, queue, nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	a := &amqpsaxImpl{c: c, s: s, snd: snd, queue: queue}
	if many {
		a.senders = 64
	}
	return a, nil
}

func (a *amqpsaxImpl) send(ctx context.Context, n int) error {
	msg := amqpsaxMsg()
	for range n {
		if err := a.snd.Send(ctx, msg, nil); err != nil {
			return err
		}
	}
	return nil
}

func (a *amqpsaxImpl) pipelined(ctx context.Context, n int) error {
	if a.senders > 0 {
		return inGoroutines(n, a.senders, func(k int) error {
			msg := amqpsaxMsg()
			for range k {
				if err := a.snd.Send(ctx, msg, nil); err != nil {
					return err
				}
			}
			return nil
		})
	}
	const window = 1000
	msg := amqpsaxMsg()
	var ring [window]client.Pending
	for i := range n {
		if i >= window {
			if err := ring[i%window].Wait(ctx); err != nil {
				return err
			}
		}
		p, err := a.snd.SendAsync(ctx, msg, nil)
		if err != nil {
			return err
		}
		ring[i%window] = p
	}
	for i := max(0, n-window); i < n; i++ {
		if err := ring[i%window].Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (a *amqpsaxImpl) fill(ctx context.Context, n int) error { return a.pipelinedOne(ctx, n) }

func (a *amqpsaxImpl) pipelinedOne(ctx context.Context, n int) error {
	s := a.senders
	a.senders = 0
	defer func() { a.senders = s }()
	return a.pipelined(ctx, n)
}

func (a *amqpsaxImpl) receive(ctx context.Context, n int, check bool) error {
	rcv, err := a.s.NewReceiver(ctx, a.queue, &client.ReceiverOptions{Credit: 500})
	if err != nil {
		return err
	}
	var d client.Delivery
	for range n {
		if err := rcv.ReceiveInto(ctx, &d, nil); err != nil {
			return err
		}
		if check && string(d.Message.Body.Data[0]) != string(clientBody) {
			return fmt.Errorf("amqpsax received a different body")
		}
		if err := d.Accept(ctx); err != nil {
			return err
		}
	}
	return rcv.Close(ctx)
}

func (a *amqpsaxImpl) close() error { return a.c.Close() }

func (a *amqpsaxImpl) queueName() string { return a.queue }

type goamqpImpl struct {
	c        *amqp.Conn
	s        *amqp.Session
	snd      *amqp.Sender
	queue    string
	receipts bool
}

func dialGoamqp(ctx context.Context, p clientPeer, queue string) (*goamqpImpl, error) {
	opts := &amqp.ConnOptions{}
	if p.user != "" {
		opts.SASLType = amqp.SASLTypePlain(p.user, p.pass)
	}
	c, err := amqp.Dial(ctx, "amqp://"+p.addr, opts)
	if err != nil {
		return nil, err
	}
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	snd, err := s.NewSender(ctx, queue, nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	return &goamqpImpl{c: c, s: s, snd: snd, queue: queue}, nil
}

func (g *goamqpImpl) send(ctx context.Context, n int) error {
	msg := goamqpMsg()
	for range n {
		if err := g.snd.Send(ctx, msg, nil); err != nil {
			return err
		}
	}
	return nil
}

func (g *goamqpImpl) pipelined(ctx context.Context, n int) error {
	if g.receipts {
		const window = 1000
		var ring [window]amqp.SendReceipt
		wait := func(r amqp.SendReceipt) error {
			st, err := r.Wait(ctx)
			if err != nil {
				return err
			}
			if _, ok := st.(*amqp.StateAccepted); !ok {
				return fmt.Errorf("go-amqp: outcome %T", st)
			}
			return nil
		}
		for i := range n {
			if i >= window {
				if err := wait(ring[i%window]); err != nil {
					return err
				}
			}
			r, err := g.snd.SendWithReceipt(ctx, goamqpMsg(), nil)
			if err != nil {
				return err
			}
			ring[i%window] = r
		}
		for i := max(0, n-window); i < n; i++ {
			if err := wait(ring[i%window]); err != nil {
				return err
			}
		}
		return nil
	}
	return inGoroutines(n, 64, func(k int) error {
		for range k {
			if err := g.snd.Send(ctx, goamqpMsg(), nil); err != nil {
				return err
			}
		}
		return nil
	})
}

func (g *goamqpImpl) fill(ctx context.Context, n int) error { return g.pipelined(ctx, n) }

func (g *goamqpImpl) receive(ctx context.Context, n int, check bool) error {
	rcv, err := g.s.NewReceiver(ctx, g.queue, &amqp.ReceiverOptions{Credit: 500})
	if err != nil {
		return err
	}
	for range n {
		m, err := rcv.Receive(ctx, nil)
		if err != nil {
			return err
		}
		if check && string(m.GetData()) != string(clientBody) {
			return fmt.Errorf("go-amqp received a different body")
		}
		if err := rcv.AcceptMessage(ctx, m); err != nil {
			return err
		}
	}
	return rcv.Close(ctx)
}

func (g *goamqpImpl) close() error { return g.c.Close() }

func (g *goamqpImpl) queueName() string { return g.queue }

// inGoroutines splits n among k goroutines running f, and returns the
// first error.
func inGoroutines(n, k int, f func(n int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, k)
	for i := range k {
		share := n / k
		if i < n%k {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(share); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

var clientOps = []string{"send", "pipelined", "receive"}

func implsFor(op string) []string {
	if op == "send" {
		return []string{"amqpsax", "goamqp", "tcp-pingpong"}
	}
	if op == "pipelined" {
		return []string{"amqpsax", "amqpsax-64", "goamqp", "goamqp-receipt"}
	}
	return []string{"amqpsax", "goamqp"}
}

func runClientOp(ctx context.Context, ci clientImpl, op string, n int) error {
	switch op {
	case "send":
		return ci.send(ctx, n)
	case "pipelined":
		return ci.pipelined(ctx, n)
	}
	return ci.receive(ctx, n, false)
}

// stallAfter bounds one benchmark run: a run that takes longer has
// stalled.
const stallAfter = 10 * time.Second

// drainQueue receives n messages from queue with package client.
func drainQueue(ctx context.Context, p clientPeer, queue string, n int) error {
	a, err := dialAmqpsax(ctx, p, queue, false)
	if err != nil {
		return err
	}
	defer a.close()
	return a.receive(ctx, n, false)
}

func BenchmarkClient(b *testing.B) {
	for _, p := range clientPeers(b) {
		for _, op := range clientOps {
			for _, impl := range implsFor(op) {
				if impl == "tcp-pingpong" && p.name != "broker" {
					continue // the floor once, on loopback
				}
				b.Run(fmt.Sprintf("peer=%s/op=%s/impl=%s", p.name, op, impl), func(b *testing.B) {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
					defer cancel()
					ci, err := dialImpl(ctx, b, impl, p, p.queue(op))
					if err != nil {
						b.Fatal(err)
					}
					defer ci.close()
					if op == "receive" {
						if err := ci.fill(ctx, b.N); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportAllocs()
					b.SetBytes(int64(len(clientBody)))
					opCtx, opCancel := context.WithTimeout(ctx, stallAfter)
					defer opCancel()
					b.ResetTimer()
					start := time.Now()
					err = runClientOp(opCtx, ci, op, b.N)
					if err != nil && opCtx.Err() != nil && ctx.Err() == nil && strings.HasPrefix(impl, "goamqp") {
						// go-amqp stalls against RabbitMQ (doc/peers.md):
						// the run shows it (stalled 1, msgs/s 0) rather
						// than fail.
						b.Logf("go-amqp stalled: %d messages not done after %v: %v", b.N, stallAfter, err)
						b.ReportMetric(0, "msgs/s")
						b.ReportMetric(1, "stalled")
						return
					}
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
					b.StopTimer()
					if op != "receive" && impl != "tcp-pingpong" {
						// Leave the broker's queue empty for the next run.
						if err := drainQueue(ctx, p, ci.queueName(), b.N); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// TestClient runs each case of BenchmarkClient once with a few hundred
// messages and checks what comes back.
func TestClient(t *testing.T) {
	for _, p := range clientPeers(t) {
		for _, op := range clientOps {
			for _, impl := range implsFor(op) {
				if impl == "tcp-pingpong" {
					continue // TestPingpongSizes
				}
				t.Run(fmt.Sprintf("peer=%s/op=%s/impl=%s", p.name, op, impl), func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					ci, err := dialImpl(ctx, t, impl, p, p.queue(op))
					if err != nil {
						t.Fatal(err)
					}
					defer ci.close()
					const n = 300
					if op == "receive" {
						if err := ci.fill(ctx, n); err != nil {
							t.Fatal(err)
						}
					} else if err := runClientOp(ctx, ci, op, n); err != nil {
						t.Fatal(err)
					}
					if err := ci.receive(ctx, n, true); err != nil {
						t.Fatal(err)
					}
				})
			}
		}
	}
}
