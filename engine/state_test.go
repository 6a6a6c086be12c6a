package engine

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax/frame"
)

// The state × action table (STYLE 27; h11 tests its state machine on its
// own): every public action of Conn, Session and Link, tried in every
// state of the connection, the session and the link, with the error it
// returns and the performatives it writes. An action this end may no
// longer take (after its own close, end or detach, or before it has
// opened) returns ErrState and writes nothing.

// world is a client end in a given state, with its session and two
// links: a sender and a receiver. The server grants the sender credit.
type world struct {
	p        *pipe
	c        *Conn
	s        *Session
	snd, rcv *Link
}

// stateSetups puts a world in each state; the name says whose state it
// is. The setup of a link or session state also applies to the objects
// below it (the links of a session that is ending).
var stateSetups = []struct {
	name  string
	setup func(t *testing.T) *world
}{
	{"conn opening", step(0)},
	{"conn open", step(1)},
	{"session beginning", step(2)},
	{"session begun", step(3)},
	{"link attaching", step(4)},
	{"link attached", step(5)},
	{"link detaching", then(false, func(w *world) { w.snd.Detach(nil); w.rcv.Detach(nil) })},
	{"link detached", then(true, func(w *world) { w.snd.Detach(nil); w.rcv.Detach(nil) })},
	{"link detached by the peer", then(true, func(w *world) {
		for _, l := range w.p.s.byLocal[0].byLocal {
			l.Detach(NewError(frame.CondNotFound, "gone"))
		}
	})},
	{"link detached by the engine, peer silent", then(false, func(w *world) {
		w.snd.fail(frame.CondTransferLimitExceeded, "test")
		w.rcv.fail(frame.CondTransferLimitExceeded, "test")
	})},
	{"session ending", then(false, func(w *world) { w.s.End(nil) })},
	{"session ended", then(true, func(w *world) { w.s.End(nil) })},
	{"session ended by the peer", then(true, func(w *world) { w.p.s.byLocal[0].End(NewError(frame.CondNotFound, "gone")) })},
	{"session ended by the engine, peer silent", then(false, func(w *world) { w.s.fail(frame.CondWindowViolation, "test") })},
	{"conn closing", then(false, func(w *world) { w.c.Close(nil) })},
	{"conn closed", then(true, func(w *world) { w.c.Close(nil) })},
	{"conn lost", then(false, func(w *world) { w.c.CloseRead() })},
}

// step is the setup of newWorld's step n.
func step(n int) func(*testing.T) *world {
	return func(t *testing.T) *world { return newWorld(t, n) }
}

// then is the setup of a world attached (step 5) on which act ran: with
// answered, the peer has answered what act wrote; without, what act
// wrote is written out and the peer has not seen it.
func then(answered bool, act func(*world)) func(*testing.T) *world {
	return func(t *testing.T) *world {
		w := newWorld(t, 5)
		act(w)
		if answered {
			w.p.run()
		} else {
			w.c.Written(len(w.c.Output()))
		}
		return w
	}
}

// newWorld builds a world up to a step: 0 the client's open written,
// 1 open, 2 begin written, 3 begun, 4 attaches written, 5 attached.
func newWorld(t *testing.T, step int) *world {
	w := &world{}
	w.p = newPipe(t, Config{NoSASL: true}, Config{Credit: 10}, nil, nil)
	w.c = w.p.c
	if step == 0 {
		w.c.Written(len(w.c.Output()))
		return w
	}
	w.p.run()
	if step == 1 {
		return w
	}
	var err error
	if w.s, err = w.c.Begin(); err != nil {
		t.Fatal(err)
	}
	if step == 2 {
		w.c.Written(len(w.c.Output()))
		return w
	}
	w.p.run()
	if step == 3 {
		return w
	}
	if w.snd, err = w.s.AttachSender(LinkOptions{Name: "snd", Address: "q"}); err != nil {
		t.Fatal(err)
	}
	if w.rcv, err = w.s.AttachReceiver(LinkOptions{Name: "rcv", Address: "q"}); err != nil {
		t.Fatal(err)
	}
	if step == 4 {
		w.c.Written(len(w.c.Output()))
		return w
	}
	w.p.run()
	return w
}

// actions are every public action, each on the object it acts on; an
// action whose object the state has not made yet is "-".
var actions = []struct {
	name string
	do   func(w *world) error
}{
	{"Conn.Begin", func(w *world) error { _, err := w.c.Begin(); return err }},
	{"Conn.Close", func(w *world) error { return w.c.Close(nil) }},
	{"Session.AttachSender", func(w *world) error { _, err := w.s.AttachSender(LinkOptions{Name: "x"}); return err }},
	{"Session.AttachReceiver", func(w *world) error { _, err := w.s.AttachReceiver(LinkOptions{Name: "y"}); return err }},
	{"Session.End", func(w *world) error { return w.s.End(nil) }},
	{"Link.Flow", func(w *world) error { return w.rcv.Flow(5) }},
	{"Link.KeepCredit", func(w *world) error { return w.rcv.KeepCredit(50) }},
	{"Link.DrainCredit", func(w *world) error { return w.rcv.DrainCredit() }},
	{"Link.SetAvailable", func(w *world) error { return w.snd.SetAvailable(3, true) }},
	{"Link.SetFlowProperties", func(w *world) error {
		var m frame.SymbolMap
		return w.snd.SetFlowProperties(m.Bool("rabbitmq:active", true).Map())
	}},
	{"Link.Send", func(w *world) error { _, err := w.snd.Send(nil, []byte{0x00, 0x53, 0x77, 0x40}, false); return err }},
	{"Link.SendWith", func(w *world) error {
		_, err := w.snd.SendWith(nil, []byte{0x00, 0x53, 0x77, 0x40}, false, w)
		return err
	}},
	{"Link.SetDeliveryContext", func(w *world) error {
		// on a delivery the sender holds, when it could send one
		id, err := w.snd.SendWith(nil, []byte{0x00, 0x53, 0x77, 0x40}, false, nil)
		if err != nil {
			return w.snd.SetDeliveryContext(0, w)
		}
		return w.snd.SetDeliveryContext(id, w)
	}},
	{"Link.SetCreditor", func(w *world) error { return w.rcv.SetCreditor(Creditor{Credit: 50, WhenDrained: true}) }},
	{"Link.Dispose", func(w *world) error { return w.rcv.Dispose(0, Accepted, true) }},
	{"Link.DisposeTxn", func(w *world) error { return w.rcv.DisposeTxn(0, []byte("t1"), Accepted, true) }},
	// only for the answer to a peer's attach (TestSetAnswerFieldsState):
	// on a link this end attached, never
	{"Link.SetAnswerFields", func(w *world) error { return w.rcv.SetAnswerFields(nil, nil, nil) }},
	// the same for holding that answer and giving it later
	// (TestAnswerLater): on a link this end attached, never
	{"Link.AnswerLater", func(w *world) error { return w.rcv.AnswerLater() }},
	{"Link.Answer", func(w *world) error { return w.snd.Answer(nil) }},
	{"Link.Settle", func(w *world) error { return w.snd.Settle(0) }},
	{"Link.Abort", func(w *world) error { return w.snd.Abort() }},
	{"Session.AttachCoordinator", func(w *world) error { _, err := w.s.AttachCoordinator(LinkOptions{Name: "txn"}); return err }},
	{"Link.SendTxn", func(w *world) error {
		_, err := w.snd.SendTxn([]byte("t1"), nil, []byte{0x00, 0x53, 0x77, 0x40}, false)
		return err
	}},
	{"Link.SendResume", func(w *world) error {
		_, err := w.snd.SendResume([]byte{1}, []byte{0x00, 0x53, 0x77, 0x40}, false)
		return err
	}},
	{"Link.Declare", func(w *world) error { _, err := w.snd.Declare(); return err }},
	{"Link.Discharge", func(w *world) error { _, err := w.snd.Discharge([]byte("t1"), false); return err }},
	{"Link.Detach", func(w *world) error { return w.snd.Detach(nil) }},
	{"Link.DetachOnly", func(w *world) error { return w.rcv.DetachOnly(nil) }},
}

// try runs one action in a fresh world and says what came of it: the
// error's name (ok for nil) and the performatives written.
func try(t *testing.T, setup func(*testing.T) *world, act func(*world) error, name string) string {
	w := setup(t)
	if w.s == nil && (strings.HasPrefix(name, "Session.") || strings.HasPrefix(name, "Link.")) ||
		w.snd == nil && strings.HasPrefix(name, "Link.") {
		return "-"
	}
	before := len(w.c.Output())
	err := act(w)
	out := w.c.Output()[before:]
	res := "ok"
	switch {
	case err == nil:
	case errors.Is(err, ErrState):
		res = "ErrState"
	case errors.Is(err, ErrNoCredit):
		res = "ErrNoCredit"
	default:
		res = err.Error()
	}
	for _, f := range splitFrames(t, out) {
		res += " " + f
	}
	return res
}

// splitFrames names the performatives in b.
func splitFrames(t *testing.T, b []byte) []string {
	var names []string
	for len(b) >= 8 {
		size := int(b[0])<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3])
		doff := int(b[4]) * 4
		body := b[doff:size]
		b = b[size:]
		if len(body) == 0 {
			names = append(names, "heartbeat")
			continue
		}
		d, err := frame.Performative(body)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, d.TypeName())
	}
	return names
}

func TestStateActionTable(t *testing.T) {
	var got strings.Builder
	for _, st := range stateSetups {
		for _, a := range actions {
			if r := try(t, st.setup, a.do, a.name); r != "-" {
				fmt.Fprintf(&got, "%s | %s | %s\n", st.name, a.name, r)
			}
		}
	}
	if *updateTable {
		t.Log("\n" + got.String())
		return
	}
	want := strings.TrimLeft(stateTable, "\n")
	if got.String() != want {
		gl, wl := strings.Split(got.String(), "\n"), strings.Split(want, "\n")
		for i := range max(len(gl), len(wl)) {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Errorf("got  %s\nwant %s", g, w)
			}
		}
	}
}

var updateTable = flag.Bool("update-table", false, "print the state × action table instead of checking it")

// stateTable is what each action does in each state: the error, then the
// performatives written.
const stateTable = `
conn opening | Conn.Begin | ErrState
conn opening | Conn.Close | ok close
conn open | Conn.Begin | ok begin
conn open | Conn.Close | ok close
session beginning | Conn.Begin | ok begin
session beginning | Conn.Close | ok close
session beginning | Session.AttachSender | ok attach
session beginning | Session.AttachReceiver | ok attach
session beginning | Session.End | ok end
session beginning | Session.AttachCoordinator | ok attach
session begun | Conn.Begin | ok begin
session begun | Conn.Close | ok close
session begun | Session.AttachSender | ok attach
session begun | Session.AttachReceiver | ok attach
session begun | Session.End | ok end
session begun | Session.AttachCoordinator | ok attach
link attaching | Conn.Begin | ok begin
link attaching | Conn.Close | ok close
link attaching | Session.AttachSender | ok attach
link attaching | Session.AttachReceiver | ok attach
link attaching | Session.End | ok end
link attaching | Link.Flow | ok flow
link attaching | Link.KeepCredit | ok flow
link attaching | Link.DrainCredit | ok flow
link attaching | Link.SetAvailable | ok flow
link attaching | Link.SetFlowProperties | ok
link attaching | Link.Send | ErrState
link attaching | Link.SendWith | ErrState
link attaching | Link.SetDeliveryContext | ErrState
link attaching | Link.SetCreditor | ok flow
link attaching | Link.Dispose | ok disposition
link attaching | Link.DisposeTxn | ok disposition
link attaching | Link.SetAnswerFields | ErrState
link attaching | Link.AnswerLater | ErrState
link attaching | Link.Answer | ErrState
link attaching | Link.Settle | ok disposition
link attaching | Link.Abort | ErrState
link attaching | Session.AttachCoordinator | ok attach
link attaching | Link.SendTxn | ErrState
link attaching | Link.SendResume | ErrState
link attaching | Link.Declare | ErrState
link attaching | Link.Discharge | ErrState
link attaching | Link.Detach | ok detach
link attaching | Link.DetachOnly | ok detach
link attached | Conn.Begin | ok begin
link attached | Conn.Close | ok close
link attached | Session.AttachSender | ok attach
link attached | Session.AttachReceiver | ok attach
link attached | Session.End | ok end
link attached | Link.Flow | ok flow
link attached | Link.KeepCredit | ok flow
link attached | Link.DrainCredit | ok flow
link attached | Link.SetAvailable | ok flow
link attached | Link.SetFlowProperties | ok
link attached | Link.Send | ok transfer
link attached | Link.SendWith | ok transfer
link attached | Link.SetDeliveryContext | ok transfer
link attached | Link.SetCreditor | ok flow
link attached | Link.Dispose | ok disposition
link attached | Link.DisposeTxn | ok disposition
link attached | Link.SetAnswerFields | ErrState
link attached | Link.AnswerLater | ErrState
link attached | Link.Answer | ErrState
link attached | Link.Settle | ok disposition
link attached | Link.Abort | ErrState
link attached | Session.AttachCoordinator | ok attach
link attached | Link.SendTxn | ok transfer
link attached | Link.SendResume | ErrState
link attached | Link.Declare | ErrState
link attached | Link.Discharge | ErrState
link attached | Link.Detach | ok detach
link attached | Link.DetachOnly | ok detach
link detaching | Conn.Begin | ok begin
link detaching | Conn.Close | ok close
link detaching | Session.AttachSender | ok attach
link detaching | Session.AttachReceiver | ok attach
link detaching | Session.End | ok end
link detaching | Link.Flow | ErrState
link detaching | Link.KeepCredit | ErrState
link detaching | Link.DrainCredit | ErrState
link detaching | Link.SetAvailable | ErrState
link detaching | Link.SetFlowProperties | ErrState
link detaching | Link.Send | ErrState
link detaching | Link.SendWith | ErrState
link detaching | Link.SetDeliveryContext | ErrState
link detaching | Link.SetCreditor | ErrState
link detaching | Link.Dispose | ErrState
link detaching | Link.DisposeTxn | ErrState
link detaching | Link.SetAnswerFields | ErrState
link detaching | Link.AnswerLater | ErrState
link detaching | Link.Answer | ErrState
link detaching | Link.Settle | ErrState
link detaching | Link.Abort | ErrState
link detaching | Session.AttachCoordinator | ok attach
link detaching | Link.SendTxn | ErrState
link detaching | Link.SendResume | ErrState
link detaching | Link.Declare | ErrState
link detaching | Link.Discharge | ErrState
link detaching | Link.Detach | ErrState
link detaching | Link.DetachOnly | ErrState
link detached | Conn.Begin | ok begin
link detached | Conn.Close | ok close
link detached | Session.AttachSender | ok attach
link detached | Session.AttachReceiver | ok attach
link detached | Session.End | ok end
link detached | Link.Flow | ErrState
link detached | Link.KeepCredit | ErrState
link detached | Link.DrainCredit | ErrState
link detached | Link.SetAvailable | ErrState
link detached | Link.SetFlowProperties | ErrState
link detached | Link.Send | ErrState
link detached | Link.SendWith | ErrState
link detached | Link.SetDeliveryContext | ErrState
link detached | Link.SetCreditor | ErrState
link detached | Link.Dispose | ErrState
link detached | Link.DisposeTxn | ErrState
link detached | Link.SetAnswerFields | ErrState
link detached | Link.AnswerLater | ErrState
link detached | Link.Answer | ErrState
link detached | Link.Settle | ErrState
link detached | Link.Abort | ErrState
link detached | Session.AttachCoordinator | ok attach
link detached | Link.SendTxn | ErrState
link detached | Link.SendResume | ErrState
link detached | Link.Declare | ErrState
link detached | Link.Discharge | ErrState
link detached | Link.Detach | ErrState
link detached | Link.DetachOnly | ErrState
link detached by the peer | Conn.Begin | ok begin
link detached by the peer | Conn.Close | ok close
link detached by the peer | Session.AttachSender | ok attach
link detached by the peer | Session.AttachReceiver | ok attach
link detached by the peer | Session.End | ok end
link detached by the peer | Link.Flow | ErrState
link detached by the peer | Link.KeepCredit | ErrState
link detached by the peer | Link.DrainCredit | ErrState
link detached by the peer | Link.SetAvailable | ErrState
link detached by the peer | Link.SetFlowProperties | ErrState
link detached by the peer | Link.Send | ErrState
link detached by the peer | Link.SendWith | ErrState
link detached by the peer | Link.SetDeliveryContext | ErrState
link detached by the peer | Link.SetCreditor | ErrState
link detached by the peer | Link.Dispose | ErrState
link detached by the peer | Link.DisposeTxn | ErrState
link detached by the peer | Link.SetAnswerFields | ErrState
link detached by the peer | Link.AnswerLater | ErrState
link detached by the peer | Link.Answer | ErrState
link detached by the peer | Link.Settle | ErrState
link detached by the peer | Link.Abort | ErrState
link detached by the peer | Session.AttachCoordinator | ok attach
link detached by the peer | Link.SendTxn | ErrState
link detached by the peer | Link.SendResume | ErrState
link detached by the peer | Link.Declare | ErrState
link detached by the peer | Link.Discharge | ErrState
link detached by the peer | Link.Detach | ErrState
link detached by the peer | Link.DetachOnly | ErrState
link detached by the engine, peer silent | Conn.Begin | ok begin
link detached by the engine, peer silent | Conn.Close | ok close
link detached by the engine, peer silent | Session.AttachSender | ok attach
link detached by the engine, peer silent | Session.AttachReceiver | ok attach
link detached by the engine, peer silent | Session.End | ok end
link detached by the engine, peer silent | Link.Flow | ErrState
link detached by the engine, peer silent | Link.KeepCredit | ErrState
link detached by the engine, peer silent | Link.DrainCredit | ErrState
link detached by the engine, peer silent | Link.SetAvailable | ErrState
link detached by the engine, peer silent | Link.SetFlowProperties | ErrState
link detached by the engine, peer silent | Link.Send | ErrState
link detached by the engine, peer silent | Link.SendWith | ErrState
link detached by the engine, peer silent | Link.SetDeliveryContext | ErrState
link detached by the engine, peer silent | Link.SetCreditor | ErrState
link detached by the engine, peer silent | Link.Dispose | ErrState
link detached by the engine, peer silent | Link.DisposeTxn | ErrState
link detached by the engine, peer silent | Link.SetAnswerFields | ErrState
link detached by the engine, peer silent | Link.AnswerLater | ErrState
link detached by the engine, peer silent | Link.Answer | ErrState
link detached by the engine, peer silent | Link.Settle | ErrState
link detached by the engine, peer silent | Link.Abort | ErrState
link detached by the engine, peer silent | Session.AttachCoordinator | ok attach
link detached by the engine, peer silent | Link.SendTxn | ErrState
link detached by the engine, peer silent | Link.SendResume | ErrState
link detached by the engine, peer silent | Link.Declare | ErrState
link detached by the engine, peer silent | Link.Discharge | ErrState
link detached by the engine, peer silent | Link.Detach | ErrState
link detached by the engine, peer silent | Link.DetachOnly | ErrState
session ending | Conn.Begin | ok begin
session ending | Conn.Close | ok close
session ending | Session.AttachSender | ErrState
session ending | Session.AttachReceiver | ErrState
session ending | Session.End | ErrState
session ending | Link.Flow | ErrState
session ending | Link.KeepCredit | ErrState
session ending | Link.DrainCredit | ErrState
session ending | Link.SetAvailable | ErrState
session ending | Link.SetFlowProperties | ErrState
session ending | Link.Send | ErrState
session ending | Link.SendWith | ErrState
session ending | Link.SetDeliveryContext | ErrState
session ending | Link.SetCreditor | ErrState
session ending | Link.Dispose | ErrState
session ending | Link.DisposeTxn | ErrState
session ending | Link.SetAnswerFields | ErrState
session ending | Link.AnswerLater | ErrState
session ending | Link.Answer | ErrState
session ending | Link.Settle | ErrState
session ending | Link.Abort | ErrState
session ending | Session.AttachCoordinator | ErrState
session ending | Link.SendTxn | ErrState
session ending | Link.SendResume | ErrState
session ending | Link.Declare | ErrState
session ending | Link.Discharge | ErrState
session ending | Link.Detach | ErrState
session ending | Link.DetachOnly | ErrState
session ended | Conn.Begin | ok begin
session ended | Conn.Close | ok close
session ended | Session.AttachSender | ErrState
session ended | Session.AttachReceiver | ErrState
session ended | Session.End | ErrState
session ended | Link.Flow | ErrState
session ended | Link.KeepCredit | ErrState
session ended | Link.DrainCredit | ErrState
session ended | Link.SetAvailable | ErrState
session ended | Link.SetFlowProperties | ErrState
session ended | Link.Send | ErrState
session ended | Link.SendWith | ErrState
session ended | Link.SetDeliveryContext | ErrState
session ended | Link.SetCreditor | ErrState
session ended | Link.Dispose | ErrState
session ended | Link.DisposeTxn | ErrState
session ended | Link.SetAnswerFields | ErrState
session ended | Link.AnswerLater | ErrState
session ended | Link.Answer | ErrState
session ended | Link.Settle | ErrState
session ended | Link.Abort | ErrState
session ended | Session.AttachCoordinator | ErrState
session ended | Link.SendTxn | ErrState
session ended | Link.SendResume | ErrState
session ended | Link.Declare | ErrState
session ended | Link.Discharge | ErrState
session ended | Link.Detach | ErrState
session ended | Link.DetachOnly | ErrState
session ended by the peer | Conn.Begin | ok begin
session ended by the peer | Conn.Close | ok close
session ended by the peer | Session.AttachSender | ErrState
session ended by the peer | Session.AttachReceiver | ErrState
session ended by the peer | Session.End | ErrState
session ended by the peer | Link.Flow | ErrState
session ended by the peer | Link.KeepCredit | ErrState
session ended by the peer | Link.DrainCredit | ErrState
session ended by the peer | Link.SetAvailable | ErrState
session ended by the peer | Link.SetFlowProperties | ErrState
session ended by the peer | Link.Send | ErrState
session ended by the peer | Link.SendWith | ErrState
session ended by the peer | Link.SetDeliveryContext | ErrState
session ended by the peer | Link.SetCreditor | ErrState
session ended by the peer | Link.Dispose | ErrState
session ended by the peer | Link.DisposeTxn | ErrState
session ended by the peer | Link.SetAnswerFields | ErrState
session ended by the peer | Link.AnswerLater | ErrState
session ended by the peer | Link.Answer | ErrState
session ended by the peer | Link.Settle | ErrState
session ended by the peer | Link.Abort | ErrState
session ended by the peer | Session.AttachCoordinator | ErrState
session ended by the peer | Link.SendTxn | ErrState
session ended by the peer | Link.SendResume | ErrState
session ended by the peer | Link.Declare | ErrState
session ended by the peer | Link.Discharge | ErrState
session ended by the peer | Link.Detach | ErrState
session ended by the peer | Link.DetachOnly | ErrState
session ended by the engine, peer silent | Conn.Begin | ok begin
session ended by the engine, peer silent | Conn.Close | ok close
session ended by the engine, peer silent | Session.AttachSender | ErrState
session ended by the engine, peer silent | Session.AttachReceiver | ErrState
session ended by the engine, peer silent | Session.End | ErrState
session ended by the engine, peer silent | Link.Flow | ErrState
session ended by the engine, peer silent | Link.KeepCredit | ErrState
session ended by the engine, peer silent | Link.DrainCredit | ErrState
session ended by the engine, peer silent | Link.SetAvailable | ErrState
session ended by the engine, peer silent | Link.SetFlowProperties | ErrState
session ended by the engine, peer silent | Link.Send | ErrState
session ended by the engine, peer silent | Link.SendWith | ErrState
session ended by the engine, peer silent | Link.SetDeliveryContext | ErrState
session ended by the engine, peer silent | Link.SetCreditor | ErrState
session ended by the engine, peer silent | Link.Dispose | ErrState
session ended by the engine, peer silent | Link.DisposeTxn | ErrState
session ended by the engine, peer silent | Link.SetAnswerFields | ErrState
session ended by the engine, peer silent | Link.AnswerLater | ErrState
session ended by the engine, peer silent | Link.Answer | ErrState
session ended by the engine, peer silent | Link.Settle | ErrState
session ended by the engine, peer silent | Link.Abort | ErrState
session ended by the engine, peer silent | Session.AttachCoordinator | ErrState
session ended by the engine, peer silent | Link.SendTxn | ErrState
session ended by the engine, peer silent | Link.SendResume | ErrState
session ended by the engine, peer silent | Link.Declare | ErrState
session ended by the engine, peer silent | Link.Discharge | ErrState
session ended by the engine, peer silent | Link.Detach | ErrState
session ended by the engine, peer silent | Link.DetachOnly | ErrState
conn closing | Conn.Begin | ErrState
conn closing | Conn.Close | ErrState
conn closing | Session.AttachSender | ErrState
conn closing | Session.AttachReceiver | ErrState
conn closing | Session.End | ErrState
conn closing | Link.Flow | ErrState
conn closing | Link.KeepCredit | ErrState
conn closing | Link.DrainCredit | ErrState
conn closing | Link.SetAvailable | ErrState
conn closing | Link.SetFlowProperties | ErrState
conn closing | Link.Send | ErrState
conn closing | Link.SendWith | ErrState
conn closing | Link.SetDeliveryContext | ErrState
conn closing | Link.SetCreditor | ErrState
conn closing | Link.Dispose | ErrState
conn closing | Link.DisposeTxn | ErrState
conn closing | Link.SetAnswerFields | ErrState
conn closing | Link.AnswerLater | ErrState
conn closing | Link.Answer | ErrState
conn closing | Link.Settle | ErrState
conn closing | Link.Abort | ErrState
conn closing | Session.AttachCoordinator | ErrState
conn closing | Link.SendTxn | ErrState
conn closing | Link.SendResume | ErrState
conn closing | Link.Declare | ErrState
conn closing | Link.Discharge | ErrState
conn closing | Link.Detach | ErrState
conn closing | Link.DetachOnly | ErrState
conn closed | Conn.Begin | ErrState
conn closed | Conn.Close | ErrState
conn closed | Session.AttachSender | ErrState
conn closed | Session.AttachReceiver | ErrState
conn closed | Session.End | ErrState
conn closed | Link.Flow | ErrState
conn closed | Link.KeepCredit | ErrState
conn closed | Link.DrainCredit | ErrState
conn closed | Link.SetAvailable | ErrState
conn closed | Link.SetFlowProperties | ErrState
conn closed | Link.Send | ErrState
conn closed | Link.SendWith | ErrState
conn closed | Link.SetDeliveryContext | ErrState
conn closed | Link.SetCreditor | ErrState
conn closed | Link.Dispose | ErrState
conn closed | Link.DisposeTxn | ErrState
conn closed | Link.SetAnswerFields | ErrState
conn closed | Link.AnswerLater | ErrState
conn closed | Link.Answer | ErrState
conn closed | Link.Settle | ErrState
conn closed | Link.Abort | ErrState
conn closed | Session.AttachCoordinator | ErrState
conn closed | Link.SendTxn | ErrState
conn closed | Link.SendResume | ErrState
conn closed | Link.Declare | ErrState
conn closed | Link.Discharge | ErrState
conn closed | Link.Detach | ErrState
conn closed | Link.DetachOnly | ErrState
conn lost | Conn.Begin | ErrState
conn lost | Conn.Close | ErrState
conn lost | Session.AttachSender | ErrState
conn lost | Session.AttachReceiver | ErrState
conn lost | Session.End | ErrState
conn lost | Link.Flow | ErrState
conn lost | Link.KeepCredit | ErrState
conn lost | Link.DrainCredit | ErrState
conn lost | Link.SetAvailable | ErrState
conn lost | Link.SetFlowProperties | ErrState
conn lost | Link.Send | ErrState
conn lost | Link.SendWith | ErrState
conn lost | Link.SetDeliveryContext | ErrState
conn lost | Link.SetCreditor | ErrState
conn lost | Link.Dispose | ErrState
conn lost | Link.DisposeTxn | ErrState
conn lost | Link.SetAnswerFields | ErrState
conn lost | Link.AnswerLater | ErrState
conn lost | Link.Answer | ErrState
conn lost | Link.Settle | ErrState
conn lost | Link.Abort | ErrState
conn lost | Session.AttachCoordinator | ErrState
conn lost | Link.SendTxn | ErrState
conn lost | Link.SendResume | ErrState
conn lost | Link.Declare | ErrState
conn lost | Link.Discharge | ErrState
conn lost | Link.Detach | ErrState
conn lost | Link.DetachOnly | ErrState
`
