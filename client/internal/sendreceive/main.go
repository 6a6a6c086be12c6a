// Command sendreceive sends 100,000 small messages unsettled through a
// broker, waits for every accept, then receives them all back and checks
// them byte for byte: a typical go-amqp program, ported, shown whole in README.md
// ("From go-amqp"), where TestReadmeProgram holds it equal to this file.
//
//	go run ./client/internal/sendreceive amqp://127.0.0.1:5672
package main

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/message"
)

const n = 100_000

// body is message i's 100-byte body.
func body(i int) []byte { return fmt.Appendf(bytes.Repeat([]byte{'x'}, 90), "%010d", i) }

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.Dial(ctx, os.Args[1], nil) // amqp://127.0.0.1:5672
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	snd, err := s.NewSender(ctx, "orders", nil)
	if err != nil {
		log.Fatal(err)
	}
	start := time.Now()
	pending := make([]client.Pending, n)
	var msg message.Message // encoded by SendAsync: reused
	for i := range n {
		msg.Properties = &message.Properties{MessageID: message.UlongID(uint64(i)), Subject: []byte("order")}
		msg.Body = message.Body{Kind: message.BodyData, Data: [][]byte{body(i)}}
		if pending[i], err = snd.SendAsync(ctx, &msg, nil); err != nil {
			log.Fatal(err)
		}
	}
	for i, p := range pending {
		if err := p.Wait(ctx); err != nil { // accepted, or why not
			log.Fatalf("message %d: %v", i, err)
		}
	}
	rcv, err := s.NewReceiver(ctx, "orders", &client.ReceiverOptions{Credit: 500})
	if err != nil {
		log.Fatal(err)
	}
	var d client.Delivery // received into again and again
	for i := range n {
		if err := rcv.ReceiveInto(ctx, &d, nil); err != nil {
			log.Fatal(err)
		}
		p := d.Message.Properties
		if p == nil || p.MessageID.Any() != uint64(i) || !bytes.Equal(d.Message.Body.Data[0], body(i)) {
			log.Fatalf("message %d differs", i)
		}
		if err := d.Accept(ctx); err != nil {
			log.Fatal(err)
		}
	}
	el := time.Since(start)
	fmt.Printf("%d messages sent, accepted, received and checked in %v: %.0f msgs/s\n", n, el.Round(time.Millisecond), n/el.Seconds())
}
