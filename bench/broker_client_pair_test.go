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
// accept (and the last outcome).
func runClientPair(ctx context.Context, p pairPeer, n int) (time.Duration, error) {
	return runClientPairs(ctx, p, []string{p.queue}, n)
}

// runClientPairs sends n messages in all through the peer over the
// queues, producer i to queues[i] to consumer i (n/len(queues) each,
// the rest one more), every producer and every consumer on a
// connection of its own, and returns the time from the first send to
// the last message received and accepted and the last outcome in.
// Connecting and attaching are not timed.
func runClientPairs(ctx context.Context, p pairPeer, queues []string, n int) (time.Duration, error) {
	var conns []*client.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	// Canceled before the closes: what still waits after an error ends.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	dial := func() (*client.Session, error) {
		c, err := client.Dial(ctx, clientURL(p), &client.ConnOptions{AllowInsecurePlain: true}) // local peers
		if err != nil {
			return nil, err
		}
		conns = append(conns, c)
		return c.NewSession(ctx, nil)
	}
	rcvs := make([]*client.Receiver, len(queues))
	snds := make([]*client.Sender, len(queues))
	for i, q := range queues {
		rs, err := dial()
		if err != nil {
			return 0, fmt.Errorf("consumer %d: %w", i, err)
		}
		if rcvs[i], err = rs.NewReceiver(ctx, q, &client.ReceiverOptions{Credit: 1000}); err != nil {
			return 0, fmt.Errorf("consumer %d: %w", i, err)
		}
	}
	for i, q := range queues {
		ss, err := dial()
		if err != nil {
			return 0, fmt.Errorf("producer %d: %w", i, err)
		}
		if snds[i], err = ss.NewSender(ctx, q, nil); err != nil {
			return 0, fmt.Errorf("producer %d: %w", i, err)
		}
	}
	errs := make(chan error, 2*len(queues))
	start := time.Now()
	for i := range queues {
		count := n / len(queues)
		if i < n%len(queues) {
			count++
		}
		go func() {
			var msg message.Message
			err := msg.Decode(LoopbackMessage)
			if err == nil {
				err = sendPipelined(ctx, snds[i], &msg, count)
			}
			if err != nil {
				err = fmt.Errorf("producer %d: %w", i, err)
			}
			errs <- err
		}()
		go func() {
			var d client.Delivery
			for got := 0; got < count; got++ {
				if err := rcvs[i].ReceiveInto(ctx, &d, nil); err != nil {
					errs <- fmt.Errorf("consumer %d got %d of %d: %w", i, got, count, err)
					return
				}
				if err := d.Accept(ctx); err != nil {
					errs <- fmt.Errorf("consumer %d: %w", i, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 2 * len(queues) {
		if err := <-errs; err != nil {
			return 0, err // (the others end with ctx)
		}
	}
	return time.Since(start), nil
}

// sendPipelined sends msg n times with SendAsync, up to 1,000 outcomes
// awaited at once, and returns once every outcome is in.
func sendPipelined(ctx context.Context, snd *client.Sender, msg *message.Message, n int) error {
	const window = 1000
	var inflight [window]client.Pending
	for i := range n {
		if i >= window {
			if err := inflight[i%window].Wait(ctx); err != nil {
				return err
			}
		}
		pd, err := snd.SendAsync(ctx, msg, nil)
		if err != nil {
			return err
		}
		inflight[i%window] = pd
	}
	for i := max(0, n-window); i < n; i++ {
		if err := inflight[i%window].Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

// TestBrokerClientPair runs the client pair's body once per peer, small.
func TestBrokerClientPair(t *testing.T) { pairOnce(t, runClientPair) }

// TestBrokerSpeedClient is TestBrokerSpeed with package client on both
// ends: msgs/s through package broker and RabbitMQ side by side, printed
// (best of AMQPSAX_BROKER_SPEED_RUNS runs, 3), not asserted:
//
//	cd bench && AMQPSAX_BROKER=127.0.0.1:5672 AMQPSAX_BROKER_SPEED=100000 go test -run TestBrokerSpeedClient -v -count=1
func TestBrokerSpeedClient(t *testing.T) { brokerSpeed(t, "package client", runClientPair) }
