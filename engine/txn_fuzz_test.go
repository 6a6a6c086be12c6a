package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
)

// fuzzCoordinator declares transactions "t1", "t2", … and commits what
// it is asked to, failing every third commit.
type fuzzCoordinator struct{ n int }

func (fc *fuzzCoordinator) Declare(*Link) ([]byte, *Error) {
	fc.n++
	if fc.n%5 == 0 {
		return nil, NewError(frame.CondResourceLimitExceeded, "busy")
	}
	return []byte{'t', byte(fc.n)}, nil
}

func (fc *fuzzCoordinator) Discharge(_ *Link, id []byte, fail bool) *Error {
	if !fail && len(id) > 1 && id[1]%3 == 0 {
		return NewError(frame.CondTransactionRollback, "no")
	}
	return nil
}

// txnBusy is busy with transactions too: deliveries in a transaction are
// accepted in it.
type txnBusy struct{ busy }

func (h txnBusy) OnDelivery(l *Link, d Delivery) {
	if d.TxnID() != nil && d.DeliveryID%2 == 0 {
		d.AcceptTxn(d.TxnID())
		return
	}
	h.busy.OnDelivery(l, d)
}

// txnClientStream is what an engine controller sends through a
// transaction: coordinator link, declare, transactional sends, commit,
// and a discharge of a transaction no longer open.
func txnClientStream(t testing.TB) []byte {
	ch := &txnSide{}
	p := newPipe(t, Config{MaxFrameSize: 1024}, Config{Credit: 10, MaxFrameSize: 1024, Coordinator: &fuzzCoordinator{}},
		&openHook{txnSide: ch, open: func(s *Session) {
			s.AttachCoordinator(LinkOptions{Name: "ctrl"})
			s.AttachSender(LinkOptions{Name: "q-in", Address: "q"})
		}}, &NopHandler{})
	var rec []byte
	step := func() {
		for range 100 {
			co, so := p.c.Output(), p.s.Output()
			if len(co) == 0 && len(so) == 0 {
				return
			}
			rec = append(rec, co...)
			b := append([]byte(nil), co...)
			p.c.Written(len(co))
			p.s.Feed(b, p.now)
			b = append([]byte(nil), so...)
			p.s.Written(len(so))
			p.c.Feed(b, p.now)
		}
	}
	step()
	if l := ch.links["ctrl"]; l != nil {
		l.Declare()
	}
	step()
	if l := ch.links["q-in"]; l != nil && ch.declared != nil {
		l.SendTxn(ch.declared, nil, []byte("one"), false)
		l.SendTxn(ch.declared, nil, make([]byte, 2500), false)
	}
	step()
	if l := ch.links["ctrl"]; l != nil {
		l.Discharge(ch.declared, false)
		l.Discharge(ch.declared, true)
	}
	step()
	p.c.Close(nil)
	step()
	return rec
}

// resumeFrames is a peer that attaches a link again with an unsettled
// map (part 2 §2.6.13) and resumes a delivery (resume set, then one
// aborted), after the handshake.
func resumeFrames() []byte {
	m := encode.BeginMap(nil)
	m = encode.AppendBinary(m, []byte{0})
	m = frame.AppendTransactionalState(m, frame.TransactionalState{TxnID: []byte("t1")})
	m = encode.AppendBinary(m, []byte{1})
	m = encode.AppendNull(m)
	m = encode.EndMap(m, 0, 2)
	b := perf(nil, 0, func(b []byte) []byte {
		return frame.AppendAttach(b, frame.Attach{Name: []byte("durable"), Handle: 0, Role: frame.RoleSender,
			Source:    frame.Some(frame.Source{Address: []byte("src"), Durable: frame.DurabilityUnsettledState, ExpiryPolicy: frame.ExpiryNever}),
			Target:    frame.Some(frame.Target{Address: []byte("q"), Durable: frame.DurabilityUnsettledState}),
			Unsettled: frame.Map(m), IncompleteUnsettled: true, InitialDeliveryCount: frame.Some[uint32](0)})
	})
	b = perf(b, 0, func(b []byte) []byte {
		return frame.AppendTransfer(b, frame.Transfer{Handle: 0, DeliveryID: frame.Some[uint32](0), DeliveryTag: []byte{0},
			MessageFormat: frame.Some[uint32](0), Resume: true, More: true,
			State: frame.DeliveryState{Type: frame.StateOther, Raw: frame.AppendTransactionalState(nil, frame.TransactionalState{TxnID: []byte("t1")})}})
	})
	b = perf(b, 0, func(b []byte) []byte {
		return frame.AppendTransfer(b, frame.Transfer{Handle: 0, Aborted: true})
	})
	b = perf(b, 0, func(b []byte) []byte {
		return frame.AppendDetach(b, frame.Detach{Handle: 0})
	})
	return b
}

// FuzzServerTxn is FuzzServer for a server with a Coordinator, seeded
// with transactions (an engine controller's stream and Qpid Proton's,
// testdata/txn) and with a link's recovery (an attach carrying an
// unsettled map, a resumed and an aborted transfer, a detach that does
// not close): nothing panics, output stays within a constant times the
// input, nothing is written once done, and CloseRead ends it.
func FuzzServerTxn(f *testing.F) {
	f.Add(txnClientStream(f), false, uint16(100))
	f.Add(txnClientStream(f), false, uint16(7))
	if proton, err := os.ReadFile(filepath.Join("..", "testdata", "txn", "client.bin")); err == nil {
		f.Add(proton, false, uint16(64))
	} else {
		f.Fatal(err)
	}
	f.Add(resumeFrames(), true, uint16(50))
	f.Fuzz(func(t *testing.T, data []byte, afterHandshake bool, read uint16) {
		c := NewServer(Config{Credit: 5, AutoAccept: true, MaxFrameSize: 2048, ChannelMax: 3, HandleMax: 3, Window: 8,
			Coordinator: &fuzzCoordinator{}}, txnBusy{})
		r := newRaw(t, c)
		in := 0
		if afterHandshake {
			hs := handshake()
			in += len(hs)
			r.feed(hs)
		}
		fuzzFeed(t, r, data, read, in, nil)
		c.CloseRead()
		if !c.Closed() {
			t.Fatal("not closed after CloseRead")
		}
	})
}
