package interop

import (
	"fmt"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/engine"
)

// TestEngineDrainAnswered reproduces, with package engine alone (a client
// and a server Conn fed each other's output in memory), what go-amqp's
// DrainCredit meets in TestEngineGoAMQP/drain: a receiver's flow with drain
// set must be answered by the sender with its flow state (part 2 §2.6.7:
// "advance the delivery-count as much as possible, consuming all
// link-credit, and send the flow state to the receiver"), whatever credit
// is left — go-amqp's drain flow carries link-credit 0, and RabbitMQ
// answers it.
func TestEngineDrainAnswered(t *testing.T) {
	for _, credit := range []uint32{5, 0} {
		t.Run(fmt.Sprintf("credit=%d", credit), func(t *testing.T) {
			cli := &drainClient{credit: credit}
			c := engine.NewClient(engine.Config{}, cli)
			s := engine.NewServer(engine.Config{}, engine.NopHandler{})
			now := time.Unix(1700000000, 0)
			move := func(from, to *engine.Conn) {
				out := from.Output()
				if len(out) == 0 {
					return
				}
				if err := to.Feed(out, now); err != nil {
					t.Fatal(err)
				}
				from.Written(len(out))
			}
			for range 20 {
				move(c, s)
				move(s, c)
			}
			if cli.err != nil {
				t.Fatal(cli.err)
			}
			if !cli.drained {
				t.Fatal("the receiver never got to drain (attach not answered?)")
			}
			if cli.answers == 0 {
				t.Errorf("the sender did not answer a drain with link-credit %d: no flow came back", credit)
			}
		})
	}
}

// drainClient attaches a receiver, grants credit (or none), and drains.
type drainClient struct {
	engine.NopHandler
	credit  uint32
	drained bool
	answers int // flows from the sender after the drain
	err     error
}

func (h *drainClient) OnConnectionOpen(c *engine.Conn) {
	s, err := c.Begin()
	if err == nil {
		_, err = s.AttachReceiver(engine.LinkOptions{Name: "drainer", Address: "q"})
	}
	h.err = err
}

func (h *drainClient) OnLinkAttach(l *engine.Link) {
	if h.credit > 0 {
		if h.err = l.Flow(h.credit); h.err != nil {
			return
		}
	}
	h.err = l.DrainCredit()
	h.drained = h.err == nil
}

func (h *drainClient) OnFlow(l *engine.Link) {
	if h.drained {
		h.answers++
	}
}
