package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/require"
)

// TestEngineAsClient runs package engine as a client, through amqpspy,
// against examples/broker and, when AMQPSAX_BROKER is set, RabbitMQ: an
// unsettled sender (every outcome awaited), a pre-settled one, a 200 KB
// message over 4 KiB frames, then a receiver with credit 10 that accepts
// each message, every one compared byte for byte with what was sent (the
// bare message: RabbitMQ adds a header), then detach, end and close.
func TestEngineAsClient(t *testing.T) {
	targets := []*engineTarget{engineTargetFor(t)}
	if broker := os.Getenv("AMQPSAX_BROKER"); broker != "" && !targets[0].rabbit {
		targets = append(targets, &engineTarget{name: "rabbitmq", addr: broker, rabbit: true, user: "guest", pass: "guest", prefix: "/queue/"})
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			spy := spyOn(t, tg.addr)
			err := runEngineClient(t, spy.Addr, tg)
			spy.finish(engineCheck{messages: true, rabbit: tg.rabbit})
			require.NoError(t, err)
		})
	}
}

// clientApp is the engine client's handler: it reports events on
// channels to the test goroutine, and sends what it is given as credit
// and back-pressure allow.
type clientApp struct {
	engine.NopHandler
	events     chan string // "open", "attach", "detach", "end"
	closed     chan *engine.Error
	outcomes   chan frame.StateType
	deliveries chan []byte // copies: the engine's payload is a view
	link       *engine.Link
	queue      [][]byte // to send on link
	settled    bool
	sendErr    error
}

func newClientApp() *clientApp {
	return &clientApp{events: make(chan string, 16), closed: make(chan *engine.Error, 1),
		outcomes: make(chan frame.StateType, 4096), deliveries: make(chan []byte, 4096)}
}

func (a *clientApp) OnConnectionOpen(*engine.Conn) { a.events <- "open" }
func (a *clientApp) OnConnectionClose(_ *engine.Conn, e *engine.Error) {
	a.closed <- e
}
func (a *clientApp) OnSessionEnd(*engine.Session, *engine.Error) { a.events <- "end" }
func (a *clientApp) OnLinkAttach(*engine.Link)                   { a.events <- "attach" }
func (a *clientApp) OnLinkDetach(_ *engine.Link, e *engine.Error) {
	if e != nil {
		a.events <- "detach: " + e.Error()
		return
	}
	a.events <- "detach"
}
func (a *clientApp) OnFlow(*engine.Link)     { a.pump() }
func (a *clientApp) OnWritable(*engine.Conn) { a.pump() }
func (a *clientApp) OnDisposition(_ *engine.Link, d engine.DeliveryUpdate) {
	a.outcomes <- d.State.Type
}
func (a *clientApp) OnDelivery(_ *engine.Link, d engine.Delivery) {
	a.deliveries <- bytes.Clone(d.Payload)
	if !d.Settled {
		if err := d.Accept(); err != nil && a.sendErr == nil {
			a.sendErr = err
		}
	}
}

// pump sends queued messages while the link takes them.
func (a *clientApp) pump() {
	for len(a.queue) > 0 && a.link != nil {
		if _, err := a.link.Send(nil, a.queue[0], a.settled); err != nil {
			if !errors.Is(err, engine.ErrNoCredit) && !errors.Is(err, engine.ErrNoWindow) &&
				!errors.Is(err, engine.ErrOutputFull) && !errors.Is(err, engine.ErrBusy) && a.sendErr == nil {
				a.sendErr = err
			}
			return
		}
		a.queue = a.queue[1:]
	}
}

func runEngineClient(t *testing.T, addr string, tg *engineTarget) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	app := newClientApp()
	d, err := driver.Dial(ctx, "tcp", addr, engine.Config{ContainerID: "engine-interop-client",
		Username: tg.user, Password: tg.pass, MaxFrameSize: 4096, IdleTimeout: 30 * time.Second}, nil, app)
	if err != nil {
		return err
	}
	defer d.Close()
	wait := func(what string) error {
		select {
		case ev := <-app.events:
			if ev != what {
				return fmt.Errorf("waiting for %s: %s", what, ev)
			}
			return nil
		case e := <-app.closed:
			return fmt.Errorf("waiting for %s: connection closed: %v", what, e)
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
	}
	do := func(f func(c *engine.Conn) error) error {
		errc := make(chan error, 1)
		if !d.Do(func(c *engine.Conn) { errc <- f(c) }) {
			return errors.New("the connection has ended")
		}
		return <-errc
	}
	if err := wait("open"); err != nil {
		return err
	}
	q := tg.queue("engine-client-" + runID)
	var sess *engine.Session
	if err := do(func(c *engine.Conn) (err error) { sess, err = c.Begin(); return err }); err != nil {
		return err
	}
	const n = 300
	sent := make([][]byte, 0, 2*n+1)
	for i := range 2*n + 1 {
		size := 64 + i%500
		if i == 2*n {
			size = 200 << 10
		}
		b, err := testMsg("engine", i, size).MarshalBinary()
		if err != nil {
			return err
		}
		sent = append(sent, b)
	}
	// send attaches a sender and sends msgs on it; unsettled, it waits
	// for every outcome: accepted.
	send := func(name string, msgs [][]byte, settled bool) error {
		if err := do(func(c *engine.Conn) (err error) {
			app.link, err = sess.AttachSender(engine.LinkOptions{Name: name, Address: q, Presettled: settled, Unsettled: !settled})
			app.queue, app.settled = msgs, settled
			return err
		}); err != nil {
			return err
		}
		if err := wait("attach"); err != nil {
			return err
		}
		if !settled {
			for range msgs {
				select {
				case st := <-app.outcomes:
					if st != frame.StateAccepted {
						return fmt.Errorf("%s: outcome %v", name, st)
					}
				case e := <-app.closed:
					return fmt.Errorf("%s: connection closed: %v", name, e)
				case <-ctx.Done():
					return fmt.Errorf("%s: waiting for outcomes: %w", name, ctx.Err())
				}
			}
		}
		for {
			var left int
			var err error
			do(func(*engine.Conn) error { left, err = len(app.queue), app.sendErr; return nil })
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if left == 0 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		link := app.link
		if err := do(func(*engine.Conn) error { return link.Detach(nil) }); err != nil {
			return err
		}
		return wait("detach")
	}
	if err := send("unsettled", sent[:n], false); err != nil {
		return err
	}
	if err := send("presettled", sent[n:2*n], true); err != nil {
		return err
	}
	if err := send("large", sent[2*n:], false); err != nil {
		return err
	}
	var rcv *engine.Link
	if err := do(func(c *engine.Conn) (err error) {
		rcv, err = sess.AttachReceiver(engine.LinkOptions{Name: "receiver", Address: q, Credit: 10})
		return err
	}); err != nil {
		return err
	}
	if err := wait("attach"); err != nil {
		return err
	}
	want := map[string]int{}
	for _, b := range sent {
		want[string(bareMessage(b))]++
	}
	for k := range sent {
		select {
		case b := <-app.deliveries:
			key := string(bareMessage(b))
			if tg.rabbit && want[key] == 0 {
				key = string(rabbitBare(bareMessage(b)))
			}
			if want[key] == 0 {
				return fmt.Errorf("message %d received is none sent (or a repeat): %x", k+1, b)
			}
			want[key]--
		case e := <-app.closed:
			return fmt.Errorf("receiving message %d: connection closed: %v", k+1, e)
		case <-ctx.Done():
			return fmt.Errorf("receiving message %d of %d: %w", k+1, len(sent), ctx.Err())
		}
	}
	if err := do(func(*engine.Conn) error { return app.sendErr }); err != nil {
		return fmt.Errorf("accepting: %w", err)
	}
	if tg.rabbit {
		// RabbitMQ 3.10 answers a detach with closed=true by one without
		// it: the link is left to the close.
	} else {
		if err := do(func(*engine.Conn) error { return rcv.Detach(nil) }); err != nil {
			return err
		}
		if err := wait("detach"); err != nil {
			return err
		}
		if err := do(func(*engine.Conn) error { return sess.End(nil) }); err != nil {
			return err
		}
		if err := wait("end"); err != nil {
			return err
		}
	}
	if err := do(func(c *engine.Conn) error { return c.Close(nil) }); err != nil {
		return err
	}
	if err := d.Wait(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	t.Logf("%s: the engine sent %d unsettled, %d pre-settled and one of 200 KB over 4 KiB frames, and received all %d back byte for byte",
		tg.name, n, n, len(sent))
	return nil
}
