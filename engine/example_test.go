package engine_test

import (
	"fmt"
	"time"

	"github.com/amqpsax/amqpsax/engine"
)

// server prints what arrives and accepts it (Config.AutoAccept would do
// the accepting by itself).
type server struct{ engine.NopHandler }

func (server) OnLinkAttach(l *engine.Link) {
	fmt.Printf("server: link %q to %q attached\n", l.Name(), l.Address())
	l.Flow(10) // credit for 10 deliveries
}

func (server) OnDelivery(l *engine.Link, d engine.Delivery) {
	fmt.Printf("server: delivery %d: %q\n", d.DeliveryID, d.Payload)
	d.Accept()
}

func (server) OnConnectionClose(c *engine.Conn, err *engine.Error) {
	fmt.Println("server: closed, error:", err)
}

// client sends two messages when it gets credit, and closes once both
// are settled.
type client struct {
	engine.NopHandler
	settled int
}

func (client) OnConnectionOpen(c *engine.Conn) {
	s, _ := c.Begin()
	s.AttachSender(engine.LinkOptions{Name: "greetings", Address: "queue"})
}

func (client) OnFlow(l *engine.Link) {
	fmt.Println("client: credit", l.Credit())
	for _, m := range []string{"hello", "world"} {
		l.Send(nil, []byte(m), false) // a real message holds AMQP sections
	}
}

func (h *client) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	fmt.Printf("client: delivery %d %v\n", d.ID, d.State.Type)
	if h.settled++; h.settled == 2 {
		l.Conn().Close(nil)
	}
}

// Example runs a client and a server engine against each other in
// memory: each one's output is the other's input. A Driver does the same
// over a net.Conn.
func Example() {
	now := time.Now()
	srv := engine.NewServer(engine.Config{}, server{})
	cli := engine.NewClient(engine.Config{}, &client{})
	for !srv.Done() || !cli.Done() {
		out := cli.Output()
		srv.Feed(out, now)
		cli.Written(len(out))
		out = srv.Output()
		cli.Feed(out, now)
		srv.Written(len(out))
	}
	// Output:
	// server: link "greetings" to "queue" attached
	// client: credit 10
	// server: delivery 0: "hello"
	// server: delivery 1: "world"
	// client: delivery 0 accepted
	// client: delivery 1 accepted
	// server: closed, error: <nil>
}
