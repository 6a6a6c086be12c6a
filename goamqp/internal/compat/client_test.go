package compat

import (
	"context"
	"testing"
	"time"

	goamqp "github.com/Azure/go-amqp"
	"github.com/amqpsax/amqpsax/amqptest"
	ours "github.com/amqpsax/amqpsax/goamqp"
)

// TestReceiveFromGoAMQP: what go-amqp sends, ours receives as go-amqp
// receives it, through the in-memory broker — messages of the corpus,
// and one whose message-id is a long (go-amqp sends it; the spec allows
// ulong, uuid, binary and string, and package client's decoding refuses
// it).
func TestReceiveFromGoAMQP(t *testing.T) {
	srv := amqptest.NewServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gc, err := goamqp.Dial(ctx, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	gs, err := gc.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	snd, err := gs.NewSender(ctx, "q", nil)
	if err != nil {
		t.Fatal(err)
	}
	oc, err := ours.Dial(ctx, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close()
	osess, err := oc.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	rcv, err := osess.NewReceiver(ctx, "q", &ours.ReceiverOptions{Credit: 10})
	if err != nil {
		t.Fatal(err)
	}
	msgs := map[string]*goamqp.Message{
		"long message-id": {Properties: &goamqp.MessageProperties{MessageID: int64(5)}, Value: "x"},
	}
	for name, m := range corpus() {
		if len(name) > 6 && name[:6] == "value/" {
			msgs[name] = m
		}
	}
	for name, m := range msgs {
		if b, err := m.MarshalBinary(); err != nil || len(b) == 0 {
			continue // (an empty message: package broker does not answer one)
		}
		if err := snd.Send(ctx, m, nil); err != nil {
			t.Fatalf("%s: go-amqp's Send: %v", name, err)
		}
		got, err := rcv.Receive(ctx, nil)
		if err != nil {
			t.Fatalf("%s: Receive: %v", name, err)
		}
		if err := rcv.AcceptMessage(ctx, got); err != nil {
			t.Fatal(err)
		}
		// As go-amqp reads the bytes it sent (the broker adds nothing
		// to these messages).
		b, _ := m.MarshalBinary()
		var want goamqp.Message
		if err := want.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		got.DeliveryTag, want.DeliveryTag = nil, nil
		got.Format = 0
		if a, b := dump(*got), dump(want); a != b {
			t.Errorf("%s: received\n ours    %s\n go-amqp %s", name, a, b)
		}
	}
}
