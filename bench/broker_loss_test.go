package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/amqptest"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/message"
)

// TestBrokerLoss: 8 producers send 20,000 unsettled messages each to 4
// queues of package broker (served by amqptest) while their consumers
// are killed mid-stream, twice: in this process by closing the socket
// under the consumer, and as a process of its own (this test binary run
// again) with SIGKILL. Replacements attach each time. Every message
// must arrive (0 lost), and a message may arrive twice only when a
// consumer that was killed had it first: the only duplicates are the
// killed consumers' unsettled deliveries. -short sends 2,000 a producer.
func TestBrokerLoss(t *testing.T) {
	if os.Getenv("AMQPSAX_LOSS_CHILD") != "" {
		t.Skip("the child's own run")
	}
	const producers, queues = 8, 4
	perProducer := 20_000
	if testing.Short() {
		perProducer = 2_000
	}
	total := producers * perProducer
	srv := amqptest.NewServer(t, nil)

	var mu sync.Mutex
	receipts := map[string][]int{} // message → the consumers that got it, in order
	killed := map[int]bool{}
	got := 0
	record := func(consumer int, id string) {
		mu.Lock()
		if len(receipts[id]) == 0 {
			got++
		}
		receipts[id] = append(receipts[id], consumer)
		mu.Unlock()
	}
	progress := func() int { mu.Lock(); defer mu.Unlock(); return got }

	type victim struct {
		id    int
		inner *BrokerConsumer // in this process: its socket is closed
		child *exec.Cmd       // a process: killed
		read  chan struct{}   // the child's output read to its end
	}
	next := 0
	startInner := func(q int) victim {
		next++
		id := next
		c, err := DialConsumer(context.Background(), srv.Addr, "loss-"+strconv.Itoa(q), engine.Config{}, 50,
			func(p []byte) { record(id, string(lossID(p))) })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return victim{id: id, inner: c}
	}
	startChild := func(q int) victim {
		next++
		id := next
		cmd := exec.Command(os.Args[0], "-test.run=^TestBrokerLossChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "AMQPSAX_LOSS_CHILD="+srv.Addr+",loss-"+strconv.Itoa(q))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		read := make(chan struct{})
		go func() {
			defer close(read)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if m, ok := strings.CutPrefix(sc.Text(), "M "); ok {
					record(id, m)
				}
			}
		}()
		t.Cleanup(func() { cmd.Process.Kill(); <-read; cmd.Wait() })
		return victim{id: id, child: cmd, read: read}
	}
	var live []victim
	for q := range queues {
		live = append(live, startInner(q), startChild(q))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	errs := make(chan error, producers)
	for p := range producers {
		go func() {
			prod, err := DialProducer(ctx, srv.Addr, "loss-"+strconv.Itoa(p%queues), engine.Config{})
			if err != nil {
				errs <- err
				return
			}
			defer prod.Close()
			err = prod.Send(ctx, perProducer, 0, func(i int) []byte {
				id := fmt.Sprintf("p%d-%d", p, i)
				return append([]byte{0x00, 0x53, 0x75, 0xa0, byte(len(id))}, id...) // a data section
			})
			if acc, _, _ := prod.Outcomes(); err == nil && acc != int64(perProducer) {
				err = fmt.Errorf("producer %d: %d of %d accepted", p, acc, perProducer)
			}
			errs <- err
		}()
	}
	// Kill every consumer twice, at a quarter and at three fifths of the
	// way, each replaced by one of its kind on the same queue.
	for _, at := range []int{total / 4, total * 3 / 5} {
		stall := time.Now().Add(2 * time.Minute)
		for progress() < at {
			if time.Now().After(stall) {
				t.Fatalf("%d of %d messages arrived before the kill at %d", progress(), total, at)
			}
			time.Sleep(time.Millisecond)
		}
		var repl []victim
		for i, v := range live {
			mu.Lock()
			killed[v.id] = true
			mu.Unlock()
			q := i / 2
			if v.inner != nil {
				v.inner.Driver().NetConn().Close()
				repl = append(repl, startInner(q))
			} else {
				v.child.Process.Kill()
				<-v.read
				repl = append(repl, startChild(q))
			}
		}
		live = repl
	}
	for range producers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		drained := progress() == total
		for q := range queues {
			st, _ := srv.Queue("loss-" + strconv.Itoa(q))
			drained = drained && st.Depth == 0 && st.Unsettled == 0
		}
		if drained {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d messages arrived; queues %+v", progress(), total, srv.Queues())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, v := range live {
		if v.child != nil {
			v.child.Process.Kill()
			<-v.read
		}
	}
	mu.Lock()
	defer mu.Unlock()
	dups := 0
	for id, by := range receipts {
		for i, c := range by[:len(by)-1] {
			dups++
			if !killed[c] {
				t.Errorf("message %s: delivered to consumer %d, which was not killed, then again (receipt %d of %v)", id, c, i, by)
			}
		}
	}
	if len(receipts) != total {
		t.Fatalf("%d distinct messages arrived, %d sent: %d lost", len(receipts), total, total-len(receipts))
	}
	t.Logf("%d producers x %d messages to %d queues, consumers killed twice (%d killed: sockets closed and processes killed): 0 lost, %d duplicates, all of them the killed consumers' unsettled deliveries",
		producers, perProducer, queues, len(killed), dups)
}

// lossID returns a message's id: its data section's bytes (after a
// header the broker added to count a redelivery).
func lossID(p []byte) []byte {
	s, err := message.Scan(p)
	if err != nil || len(s.Body) < 5 {
		return []byte("malformed " + fmt.Sprintf("%x", p))
	}
	return s.Body[5:]
}

// TestBrokerLossChild is TestBrokerLoss's consumer process: it prints
// each message it receives ("M id") before it accepts it, until it is
// killed.
func TestBrokerLossChild(t *testing.T) {
	env := os.Getenv("AMQPSAX_LOSS_CHILD")
	if env == "" {
		t.Skip("run by TestBrokerLoss")
	}
	addr, queue, _ := strings.Cut(env, ",")
	w := bufio.NewWriter(os.Stdout)
	c, err := DialConsumer(context.Background(), addr, queue, engine.Config{}, 50, func(p []byte) {
		w.WriteString("M ")
		w.Write(lossID(p))
		w.WriteByte('\n')
		w.Flush() // before the accept: what the parent has not read was not accepted
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.Sleep(5 * time.Minute)
}
