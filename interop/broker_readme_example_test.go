package interop

// The README's example of a test written with amqptest ("A broker in your
// tests"), runnable: the code under test is a go-amqp program that
// publishes orders; its test starts the broker for itself, with no docker
// and no other process, and checks what reached the queue.

import (
	"context"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/amqpsax/amqpsax/amqptest"
)

// PublishOrder is the code under test: it sends an order to "orders".
func PublishOrder(ctx context.Context, url, id string) error {
	conn, err := amqp.Dial(ctx, url, nil)
	if err != nil {
		return err
	}
	defer conn.Close()
	s, err := conn.NewSession(ctx, nil)
	if err != nil {
		return err
	}
	snd, err := s.NewSender(ctx, "orders", nil)
	if err != nil {
		return err
	}
	m := amqp.NewMessage([]byte("order " + id))
	m.Properties = &amqp.MessageProperties{MessageID: id}
	return snd.Send(ctx, m, nil) // waits for the broker's outcome
}

func TestPublishOrder(t *testing.T) {
	srv := amqptest.NewServer(t, nil) // a broker on 127.0.0.1, closed when the test ends
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	if err := PublishOrder(ctx, srv.URL, "42"); err != nil { // the code under test, on go-amqp
		t.Fatal(err)
	}
	if q, _ := srv.Queue("orders"); q.Depth != 1 {
		t.Fatalf("orders holds %d messages, want 1", q.Depth)
	}
}

// TestPublishOrderReceived goes on to read the order back, as its
// consumer would.
func TestPublishOrderReceived(t *testing.T) {
	srv := amqptest.NewServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := PublishOrder(ctx, srv.URL, "42"); err != nil {
		t.Fatal(err)
	}
	conn, err := amqp.Dial(ctx, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s, err := conn.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	rcv, err := s.NewReceiver(ctx, "orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := rcv.Receive(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(m.GetData()); got != "order 42" || m.Properties.MessageID != "42" {
		t.Fatalf("got %q (id %v)", got, m.Properties.MessageID)
	}
	if err := rcv.AcceptMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	for q, _ := srv.Queue("orders"); q.Accepted != 1; q, _ = srv.Queue("orders") {
		if ctx.Err() != nil {
			t.Fatalf("the broker has not seen the accept: orders %+v", q)
		}
		time.Sleep(time.Millisecond) // the outcome is on its way
	}
}
