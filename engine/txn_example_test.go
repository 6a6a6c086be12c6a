package engine_test

import (
	"fmt"
	"time"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/engine"
)

// coordinator holds each transaction's messages back until it commits.
type coordinator struct {
	held      map[string][]string
	committed []string
}

func (c *coordinator) Declare(*engine.Link) ([]byte, *engine.Error) {
	c.held["txn-1"] = nil
	return []byte("txn-1"), nil
}

func (c *coordinator) Discharge(_ *engine.Link, id []byte, fail bool) *engine.Error {
	if !fail {
		c.committed = append(c.committed, c.held[string(id)]...)
	}
	fmt.Printf("server: discharge %s, fail %v\n", id, fail)
	delete(c.held, string(id))
	return nil
}

// txnServer takes transactional messages into the coordinator's hold.
type txnServer struct {
	engine.NopHandler
	co *coordinator
}

func (h txnServer) OnDelivery(l *engine.Link, d engine.Delivery) {
	fmt.Printf("server: %q in transaction %s\n", d.Payload, d.TxnID())
	h.co.held[string(d.TxnID())] = append(h.co.held[string(d.TxnID())], string(d.Payload))
	d.Accept()
}

// controller declares a transaction, sends two messages in it, and
// commits.
type controller struct {
	engine.NopHandler
	ctrl, snd *engine.Link
	txn       []byte
}

func (h *controller) OnConnectionOpen(c *engine.Conn) { c.Begin() }

func (h *controller) OnSessionBegin(s *engine.Session) {
	h.ctrl, _ = s.AttachCoordinator(engine.LinkOptions{})
	h.snd, _ = s.AttachSender(engine.LinkOptions{Address: "orders"})
}

func (h *controller) OnFlow(l *engine.Link) {
	if l == h.ctrl && h.txn == nil {
		l.Declare()
	}
}

func (h *controller) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	switch {
	case l == h.ctrl && d.State.Descriptor == amqpsax.DescriptorDeclared:
		h.txn = append([]byte(nil), d.TxnID...)
		fmt.Printf("client: declared %s\n", h.txn)
		h.snd.SendTxn(h.txn, nil, []byte("one"), false)
		h.snd.SendTxn(h.txn, nil, []byte("two"), false)
	case l == h.snd && string(d.TxnID) == "" && d.ID == 2:
		h.ctrl.Discharge(h.txn, false)
	case l == h.ctrl:
		fmt.Printf("client: discharge %v\n", d.State.Type)
		l.Conn().Close(nil)
	}
}

// Example_transaction runs a controller against a server with a
// Coordinator: declare, two sends in the transaction, commit.
func Example_transaction() {
	co := &coordinator{held: map[string][]string{}}
	srv := engine.NewServer(engine.Config{Credit: 10, Coordinator: co}, txnServer{co: co})
	cli := engine.NewClient(engine.Config{}, &controller{})
	now := time.Now()
	for !srv.Done() || !cli.Done() {
		out := cli.Output()
		srv.Feed(out, now)
		cli.Written(len(out))
		out = srv.Output()
		cli.Feed(out, now)
		srv.Written(len(out))
	}
	fmt.Println("committed:", co.committed)
	// Output:
	// client: declared txn-1
	// server: "one" in transaction txn-1
	// server: "two" in transaction txn-1
	// server: discharge txn-1, fail false
	// client: discharge accepted
	// committed: [one two]
}
