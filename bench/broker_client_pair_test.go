package bench

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/message"
)

// The broker pair with the project's client on both ends (package client):
// one producer sends LoopbackMessage's 100 bytes unsettled, pipelined with
// SendAsync (up to 1,000 outcomes awaited at once), one consumer receives
// with a prefetch of 1,000 and accepts each, through package broker and
// through RabbitMQ, as runPair does with the engine's clients.

// clientURL is the amqp:// URL of a pair's peer, with its user.
func clientURL(p pairPeer) string {
	u := url.URL{Scheme: "amqp", Host: p.addr}
	if p.cfg.Username != "" {
		u.User = url.UserPassword(p.cfg.Username, p.cfg.Password)
	}
	return u.String()
}

// runClientPair sends n messages through the peer with package client on
// both ends and returns the time from the first send to the last
// accept.
func runClientPair(ctx context.Context, p pairPeer, n int) (time.Duration, error) {
	var msg message.Message
	if err := msg.Decode(LoopbackMessage); err != nil {
		return 0, err
	}
	rc, err := client.Dial(ctx, clientURL(p), &client.ConnOptions{AllowInsecurePlain: true}) // local peers
	if err != nil {
		return 0, fmt.Errorf("consumer: %w", err)
	}
	defer rc.Close()
	rs, err := rc.NewSession(ctx, nil)
	if err != nil {
		return 0, err
	}
	rcv, err := rs.NewReceiver(ctx, p.queue, &client.ReceiverOptions{Credit: 1000})
	if err != nil {
		return 0, err
	}
	sc, err := client.Dial(ctx, clientURL(p), &client.ConnOptions{AllowInsecurePlain: true}) // local peers
	if err != nil {
		return 0, fmt.Errorf("producer: %w", err)
	}
	defer sc.Close()
	ss, err := sc.NewSession(ctx, nil)
	if err != nil {
		return 0, err
	}
	snd, err := ss.NewSender(ctx, p.queue, nil)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	sent := make(chan error, 1)
	go func() {
		const window = 1000
		var inflight [window]client.Pending
		for i := range n {
			if i >= window {
				if err := inflight[i%window].Wait(ctx); err != nil {
					sent <- err
					return
				}
			}
			pd, err := snd.SendAsync(ctx, &msg, nil)
			if err != nil {
				sent <- err
				return
			}
			inflight[i%window] = pd
		}
		for i := max(0, n-window); i < n; i++ {
			if err := inflight[i%window].Wait(ctx); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	var d client.Delivery
	for got := 0; got < n; got++ {
		if err := rcv.ReceiveInto(ctx, &d, nil); err != nil {
			return 0, fmt.Errorf("the consumer got %d of %d: %w", got, n, err)
		}
		if err := d.Accept(ctx); err != nil {
			return 0, err
		}
	}
	el := time.Since(start)
	if err := <-sent; err != nil {
		return 0, fmt.Errorf("producer: %w", err)
	}
	return el, nil
}

// TestBrokerClientPair runs the client pair's body once per peer, small.
func TestBrokerClientPair(t *testing.T) { pairOnce(t, runClientPair) }

// TestBrokerSpeedClient is TestBrokerSpeed with package client on both
// ends: msgs/s through package broker and RabbitMQ side by side, printed
// (best of AMQPSAX_BROKER_SPEED_RUNS runs, 3), not asserted:
//
//	cd bench && AMQPSAX_BROKER=127.0.0.1:5672 AMQPSAX_BROKER_SPEED=100000 go test -run TestBrokerSpeedClient -v -count=1
func TestBrokerSpeedClient(t *testing.T) { brokerSpeed(t, "package client", runClientPair) }
