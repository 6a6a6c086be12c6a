package speed

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
)

// senders is BenchmarkSend64's number of goroutines sending at once.
const senders = 64

// credit is BenchmarkReceiveAccept's Receiver's credit.
const credit = 256

// messages are the messages each benchmark sends, by name: "data", a
// 1 KiB body alone, as amqp.NewMessage makes it; "full", a message as an
// Azure Service Bus or Event Hubs client sends one: a header, message
// annotations, properties, application properties and the same body.
var messages = []struct {
	name string
	make func() *amqp.Message
}{
	{"data", func() *amqp.Message { return amqp.NewMessage(make([]byte, 1024)) }},
	{"full", func() *amqp.Message {
		created := time.UnixMilli(1_700_000_000_000)
		contentType := "application/json"
		return &amqp.Message{
			Header:                &amqp.MessageHeader{Durable: true},
			Annotations:           amqp.Annotations{"x-opt-partition-key": "p1"},
			Properties:            &amqp.MessageProperties{MessageID: "id-123", ContentType: &contentType, CreationTime: &created},
			ApplicationProperties: map[string]any{"tenant": "t1"},
			Data:                  [][]byte{make([]byte, 1024)},
		}
	}},
}

// eachMessage runs f as a sub-benchmark msg=NAME for each of messages.
func eachMessage(b *testing.B, f func(b *testing.B, newMessage func() *amqp.Message)) {
	for _, m := range messages {
		b.Run("msg="+m.name, func(b *testing.B) { f(b, m.make) })
	}
}

// broker is the URL of the broker the benchmarks run against.
func broker(b *testing.B) string {
	addr := os.Getenv("SPEED_BROKER")
	if addr == "" {
		b.Skip("SPEED_BROKER is not set (amqp://HOST:PORT of examples/broker; run.sh sets it)")
	}
	return addr
}

// session dials the broker and begins a session, both closed at the
// benchmark's end.
func session(b *testing.B, ctx context.Context) *amqp.Session {
	c, err := amqp.Dial(ctx, broker(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// size is the encoded size of m, for b.SetBytes.
func size(b *testing.B, m *amqp.Message) int64 {
	data, err := m.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	return int64(len(data))
}

// reportRate reports messages per second of the timed part.
func reportRate(b *testing.B) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "msgs/s")
	}
}

// BenchmarkSend64: 64 goroutines each doing the blocking Send (waiting
// for the message's outcome) on one shared Sender, to a fan-out address
// with no consumer (the broker accepts each message and drops it).
// b.N is the number of messages, all goroutines together.
func BenchmarkSend64(b *testing.B) { eachMessage(b, send64) }

func send64(b *testing.B, newMessage func() *amqp.Message) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	snd, err := session(b, ctx).NewSender(ctx, "topic/speed-send", nil)
	if err != nil {
		b.Fatal(err)
	}
	msgs := make([]*amqp.Message, senders)
	for i := range msgs {
		msgs[i] = newMessage()
	}
	b.SetBytes(size(b, msgs[0]))
	b.ReportAllocs()
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		failOnce sync.Once
		failure  error
	)
	b.ResetTimer()
	measureBegin()
	for _, m := range msgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if err := snd.Send(ctx, m, nil); err != nil {
					failOnce.Do(func() { failure = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	measureEnd(b)
	if failure != nil {
		b.Fatal(failure)
	}
	reportRate(b)
}

// run counts BenchmarkReceiveAccept's runs, for a queue of each run's own.
var run atomic.Int64

// BenchmarkReceiveAccept: one Receiver with credit, Receive then
// AcceptMessage in a loop, over b.N messages put on a queue before the
// timer starts (by a Sender on another connection, 64 at a time).
func BenchmarkReceiveAccept(b *testing.B) { eachMessage(b, receiveAccept) }

func receiveAccept(b *testing.B, newMessage func() *amqp.Message) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	queue := fmt.Sprintf("speed-receive-%d-%d", os.Getpid(), run.Add(1))
	m := newMessage()
	preload(b, ctx, queue, m, b.N)
	rcv, err := session(b, ctx).NewReceiver(ctx, queue, &amqp.ReceiverOptions{Credit: credit})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size(b, m))
	b.ReportAllocs()
	b.ResetTimer()
	measureBegin()
	for range b.N {
		got, err := rcv.Receive(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := rcv.AcceptMessage(ctx, got); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	measureEnd(b)
	reportRate(b)
}

// preload puts n copies of m on queue and returns once the broker has
// accepted them all.
func preload(b *testing.B, ctx context.Context, queue string, m *amqp.Message, n int) {
	snd, err := session(b, ctx).NewSender(ctx, queue, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer snd.Close(ctx)
	const window = 64
	receipts := make([]amqp.SendReceipt, 0, window)
	wait := func() {
		for i := range receipts {
			if _, err := receipts[i].Wait(ctx); err != nil {
				b.Fatal(err)
			}
		}
		receipts = receipts[:0]
	}
	for range n {
		r, err := snd.SendWithReceipt(ctx, m, nil)
		if err != nil {
			b.Fatal(err)
		}
		if receipts = append(receipts, r); len(receipts) == window {
			wait()
		}
	}
	wait()
}
