package compat

import (
	"context"
	"testing"
	"time"

	goamqp "github.com/Azure/go-amqp"
	"github.com/amqpsax/amqpsax/amqptest"
	ours "github.com/amqpsax/amqpsax/goamqp"
)

// benchMessage is a message as a service bus client sends one: a few
// properties and annotations, a 1 KiB body.
func benchMessage() *goamqp.Message {
	return &goamqp.Message{
		Header:                &goamqp.MessageHeader{Durable: true},
		Annotations:           goamqp.Annotations{"x-opt-partition-key": "p1"},
		Properties:            &goamqp.MessageProperties{MessageID: "id-123", ContentType: ptr("application/json"), CreationTime: ptr(when)},
		ApplicationProperties: map[string]any{"tenant": "t1"},
		Data:                  [][]byte{make([]byte, 1024)},
	}
}

func BenchmarkMarshalBinary(b *testing.B) {
	theirs := benchMessage()
	mine := conv(*theirs).(ours.Message)
	b.Run("go-amqp", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := theirs.MarshalBinary(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("goamqp", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := mine.MarshalBinary(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkUnmarshalBinary(b *testing.B) {
	data, err := benchMessage().MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("go-amqp", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var m goamqp.Message
			if err := m.UnmarshalBinary(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("goamqp", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var m ours.Message
			if err := m.UnmarshalBinary(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSendReceive: one message sent (waiting for its outcome),
// received and accepted, through the in-memory broker, by go-amqp and by
// ours through the same calls.
func BenchmarkSendReceive(b *testing.B) {
	srv := amqptest.NewServer(b, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b.Run("go-amqp", func(b *testing.B) {
		c, err := goamqp.Dial(ctx, srv.URL, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		s, err := c.NewSession(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		snd, err := s.NewSender(ctx, "bench-theirs", nil)
		if err != nil {
			b.Fatal(err)
		}
		rcv, err := s.NewReceiver(ctx, "bench-theirs", &goamqp.ReceiverOptions{Credit: 100})
		if err != nil {
			b.Fatal(err)
		}
		m := benchMessage()
		b.ReportAllocs()
		for b.Loop() {
			if err := snd.Send(ctx, m, nil); err != nil {
				b.Fatal(err)
			}
			got, err := rcv.Receive(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := rcv.AcceptMessage(ctx, got); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("goamqp", func(b *testing.B) {
		c, err := ours.Dial(ctx, srv.URL, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		s, err := c.NewSession(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		snd, err := s.NewSender(ctx, "bench-ours", nil)
		if err != nil {
			b.Fatal(err)
		}
		rcv, err := s.NewReceiver(ctx, "bench-ours", &ours.ReceiverOptions{Credit: 100})
		if err != nil {
			b.Fatal(err)
		}
		m := conv(*benchMessage()).(ours.Message)
		b.ReportAllocs()
		for b.Loop() {
			if err := snd.Send(ctx, &m, nil); err != nil {
				b.Fatal(err)
			}
			got, err := rcv.Receive(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := rcv.AcceptMessage(ctx, got); err != nil {
				b.Fatal(err)
			}
		}
	})
}
