package engine

import (
	"fmt"
	"strings"
	"testing"
)

// recorder logs events as lines.
type recorder struct {
	NopHandler
	log    []string
	onOpen func(c *Conn)
	onAtt  func(l *Link)
	onFlow func(l *Link)
	onDel  func(l *Link, d Delivery)
	onDisp func(l *Link, d DeliveryUpdate)
	got    [][]byte
}

func (r *recorder) add(f string, a ...any) { r.log = append(r.log, fmt.Sprintf(f, a...)) }
func (r *recorder) OnConnectionOpen(c *Conn) {
	r.add("open")
	if r.onOpen != nil {
		r.onOpen(c)
	}
}
func (r *recorder) OnConnectionClose(c *Conn, e *Error) { r.add("close %v", e) }
func (r *recorder) OnSessionBegin(s *Session)           { r.add("begin %d", s.Channel()) }
func (r *recorder) OnSessionEnd(s *Session, e *Error)   { r.add("end %d %v", s.Channel(), e) }
func (r *recorder) OnLinkAttach(l *Link) {
	r.add("attach %s sender=%v", l.Name(), l.IsSender())
	if r.onAtt != nil {
		r.onAtt(l)
	}
}
func (r *recorder) OnLinkDetach(l *Link, e *Error) { r.add("detach %s %v", l.Name(), e) }
func (r *recorder) OnFlow(l *Link) {
	r.add("flow %s credit=%d", l.Name(), l.Credit())
	if r.onFlow != nil {
		r.onFlow(l)
	}
}
func (r *recorder) OnDelivery(l *Link, d Delivery) {
	r.add("delivery %d %q settled=%v", d.DeliveryID, d.Payload, d.Settled)
	r.got = append(r.got, append([]byte(nil), d.Payload...))
	if r.onDel != nil {
		r.onDel(l, d)
	}
}
func (r *recorder) OnDisposition(l *Link, d DeliveryUpdate) {
	r.add("disposition %d %v settled=%v", d.ID, d.State.Type, d.Settled)
	if r.onDisp != nil {
		r.onDisp(l, d)
	}
}

func TestMinimalPath(t *testing.T) {
	srv := &recorder{}
	cli := &recorder{}
	var snd *Link
	cli.onOpen = func(c *Conn) {
		s, err := c.Begin()
		if err != nil {
			t.Fatal(err)
		}
		snd, err = s.AttachSender(LinkOptions{Name: "l1", Address: "q1"})
		if err != nil {
			t.Fatal(err)
		}
	}
	cli.onFlow = func(l *Link) {
		for l.Credit() > 0 {
			if _, err := l.Send(nil, []byte(fmt.Sprintf("m%d", l.DeliveryCount())), false); err != nil {
				t.Fatal(err)
			}
		}
	}
	srv.onAtt = func(l *Link) {
		if string(l.Address()) != "q1" {
			t.Errorf("address %q", l.Address())
		}
		l.Flow(3)
	}
	p := newPipe(t, Config{}, Config{AutoAccept: true}, cli, srv)
	p.run()
	snd.Detach(nil)
	p.run()
	if p.c.Closing() || p.s.Closing() {
		t.Fatal("Closing before Close")
	}
	p.c.Close(nil)
	// The client's close is out, the server's to come.
	if !p.c.Closing() || p.c.Closed() || p.s.Closing() {
		t.Fatalf("after Close: client Closing %v Closed %v, server Closing %v", p.c.Closing(), p.c.Closed(), p.s.Closing())
	}
	p.run()
	if !p.c.Closed() || !p.s.Closing() || !p.s.Closed() {
		t.Fatalf("after the exchange: client Closed %v, server Closing %v Closed %v", p.c.Closed(), p.s.Closing(), p.s.Closed())
	}
	t.Log("server:\n" + strings.Join(srv.log, "\n"))
	t.Log("client:\n" + strings.Join(cli.log, "\n"))
	if len(srv.got) != 3 || !p.c.Done() || !p.s.Done() {
		t.Fatalf("got %d, done %v %v", len(srv.got), p.c.Done(), p.s.Done())
	}
}
