package engine

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testCoordinator is a Coordinator that numbers its transactions and
// records what it was asked.
type testCoordinator struct {
	n        int
	prefix   string
	log      []string
	declErr  *Error
	commitOK bool // Discharge of a commit fails with amqp:transaction:rollback unless set
}

func (tc *testCoordinator) Declare(l *Link) ([]byte, *Error) {
	if tc.declErr != nil {
		tc.log = append(tc.log, "declare refused")
		return nil, tc.declErr
	}
	tc.n++
	id := tc.prefix + strconv.Itoa(tc.n)
	tc.log = append(tc.log, "declare "+id)
	return []byte(id), nil
}

func (tc *testCoordinator) Discharge(l *Link, id []byte, fail bool) *Error {
	tc.log = append(tc.log, "discharge "+string(id)+" fail="+strconv.FormatBool(fail))
	if !fail && !tc.commitOK {
		return NewError(frame.CondTransactionRollback, "commit failed")
	}
	return nil
}

// txnSide is a Handler that records deliveries and dispositions with
// their txn-ids.
type txnSide struct {
	NopHandler
	log      []string
	links    map[string]*Link
	attached func(l *Link)
	declared []byte
	quiet    bool // record nothing (an allocation test runs)
}

func (h *txnSide) OnLinkAttach(l *Link) {
	if h.links == nil {
		h.links = map[string]*Link{}
	}
	h.links[string(l.Name())] = l
	h.log = append(h.log, "attach "+string(l.Name()))
	if h.attached != nil {
		h.attached(l)
	}
}

func (h *txnSide) OnLinkDetach(l *Link, e *Error) {
	h.log = append(h.log, "detach "+string(l.Name())+" "+errName(e))
}

func errName(e *Error) string {
	if e == nil {
		return "nil"
	}
	return e.Name()
}

func (h *txnSide) OnDelivery(l *Link, d Delivery) {
	if h.quiet {
		return
	}
	h.log = append(h.log, "delivery "+string(l.Name())+" "+string(d.Payload)+" txn="+string(d.TxnID()))
}

func (h *txnSide) OnDisposition(l *Link, d DeliveryUpdate) {
	if h.quiet {
		return
	}
	s := "disposition " + string(l.Name()) + " " + strconv.Itoa(int(d.ID)) + " " + d.State.Type.String()
	if d.State.Descriptor == amqpsax.DescriptorDeclared {
		s += " declared"
		h.declared = append([]byte(nil), d.TxnID...)
	}
	if d.State.Type == frame.StateRejected {
		s += " " + string(d.State.Error.Condition)
	}
	h.log = append(h.log, s+" txn="+string(d.TxnID))
}

func (h *txnSide) take() []string { l := h.log; h.log = nil; return l }

// txnPair is a client and a server with a coordinator: the client has a
// coordinator link, a sender to "q" and a receiver from "out", all
// attached with credit.
func txnPair(t *testing.T, tc *testCoordinator) (p *pipe, ch, sh *txnSide) {
	return txnPairCredit(t, tc, 10)
}

func txnPairCredit(t *testing.T, tc *testCoordinator, credit uint32) (p *pipe, ch, sh *txnSide) {
	ch, sh = &txnSide{}, &txnSide{}
	var opened bool
	p = newPipe(t, Config{}, Config{Credit: credit, Coordinator: tc}, &openHook{txnSide: ch, open: func(s *Session) {
		_, err := s.AttachCoordinator(LinkOptions{Name: "ctrl"})
		require.NoError(t, err)
		_, err = s.AttachSender(LinkOptions{Name: "q-in", Address: "q"})
		require.NoError(t, err)
		r, err := s.AttachReceiver(LinkOptions{Name: "q-out", Address: "out", Credit: 10})
		require.NoError(t, err)
		_ = r
		opened = true
	}}, sh)
	p.run()
	require.True(t, opened)
	require.NotNil(t, ch.links["ctrl"])
	require.True(t, ch.links["ctrl"].IsCoordinator())
	require.NotZero(t, ch.links["ctrl"].Credit(), "the engine grants the coordinator link credit")
	assert.NotContains(t, sh.links, "ctrl", "the server's handler never sees the coordinator link")
	ch.take()
	sh.take()
	return p, ch, sh
}

// openHook begins a session when the connection opens and calls open
// with it once it has begun (the peer's handle-max known).
type openHook struct {
	*txnSide
	open func(s *Session)
}

func (h *openHook) OnConnectionOpen(c *Conn)  { c.Begin() }
func (h *openHook) OnSessionBegin(s *Session) { h.open(s) }

// TestTxnDeclareDischarge: a controller declares, sends under the
// transaction, accepts under it and commits; the coordinator is asked
// each time and the handlers see the txn-id on each piece of work; a
// discharge of a transaction no longer open is rejected with
// amqp:transaction:unknown-id; a commit the coordinator cannot do, with
// amqp:transaction:rollback.
func TestTxnDeclareDischarge(t *testing.T) {
	tc := &testCoordinator{prefix: "t", commitOK: true}
	p, ch, sh := txnPair(t, tc)
	ctrl, snd, rcv := ch.links["ctrl"], ch.links["q-in"], ch.links["q-out"]

	_, err := ctrl.Declare()
	require.NoError(t, err)
	p.run()
	assert.Equal(t, []string{"disposition ctrl 0 other declared txn=t1"}, ch.take())
	txn := ch.declared
	assert.Equal(t, []string{"declare t1"}, tc.log)

	_, err = snd.SendTxn(txn, nil, []byte("m1"), false)
	require.NoError(t, err)
	_, err = snd.SendTxn(txn, nil, bytes.Repeat([]byte("x"), 3*DefaultMaxFrameSize), false) // several frames
	require.NoError(t, err)
	p.run()
	log := sh.take()
	require.Len(t, log, 2)
	assert.Equal(t, "delivery q-in m1 txn=t1", log[0])
	assert.Contains(t, log[1], " txn=t1")

	// The server sends on q-out; the client accepts it under the transaction.
	out := sh.links["q-out"]
	require.NotNil(t, out)
	id, err := out.Send(nil, []byte("r1"), false)
	require.NoError(t, err)
	rcv.Context = nil
	p.run()
	assert.Equal(t, []string{"delivery q-out r1 txn="}, ch.take())
	require.NoError(t, rcv.DisposeTxn(0, txn, Accepted, true))
	p.run()
	assert.Equal(t, []string{"disposition q-out " + strconv.Itoa(int(id)) + " accepted txn=t1"}, sh.take())

	did, err := ctrl.Discharge(txn, false)
	require.NoError(t, err)
	p.run()
	assert.Equal(t, []string{"declare t1", "discharge t1 fail=false"}, tc.log)
	assert.Equal(t, []string{"disposition ctrl " + strconv.Itoa(int(did)) + " accepted txn="}, ch.take())

	did, err = ctrl.Discharge(txn, true)
	require.NoError(t, err)
	p.run()
	assert.Equal(t, []string{"disposition ctrl " + strconv.Itoa(int(did)) + " rejected amqp:transaction:unknown-id txn="}, ch.take())

	tc.commitOK = false
	_, err = ctrl.Declare()
	require.NoError(t, err)
	p.run()
	ch.take()
	did, err = ctrl.Discharge(ch.declared, false)
	require.NoError(t, err)
	p.run()
	assert.Equal(t, []string{"disposition ctrl " + strconv.Itoa(int(did)) + " rejected amqp:transaction:rollback txn="}, ch.take())
	assert.Equal(t, "discharge t2 fail=false", tc.log[len(tc.log)-1])
	assert.Nil(t, p.serr)
	assert.Nil(t, p.cerr)
}

// TestTxnCoordinatorCredit: the engine grants a coordinator link its
// own credit, whatever Config.Credit says (a broker grants none by
// itself).
func TestTxnCoordinatorCredit(t *testing.T) {
	_, ch, _ := txnPairCredit(t, &testCoordinator{}, 0)
	assert.Equal(t, uint32(txnCredit), ch.links["ctrl"].Credit())
	assert.Zero(t, ch.links["q-in"].Credit())
}

// TestTxnRollbackOnDetach: the transactions a coordinator link declared
// are rolled back when it detaches; so are those of a connection that
// ends.
func TestTxnRollbackOnDetach(t *testing.T) {
	tc := &testCoordinator{prefix: "t", commitOK: true}
	p, ch, _ := txnPair(t, tc)
	ctrl := ch.links["ctrl"]
	for range 2 {
		_, err := ctrl.Declare()
		require.NoError(t, err)
	}
	p.run()
	require.NoError(t, ctrl.Detach(nil))
	p.run()
	assert.ElementsMatch(t, []string{"declare t1", "declare t2", "discharge t1 fail=true", "discharge t2 fail=true"}, tc.log)
	held, _ := p.s.Held()

	// A second coordinator link; the connection closes under it.
	s := ctrl.Session()
	ctrl2, err := s.AttachCoordinator(LinkOptions{Name: "ctrl2"})
	require.NoError(t, err)
	p.run()
	_, err = ctrl2.Declare()
	require.NoError(t, err)
	p.run()
	held2, _ := p.s.Held()
	assert.Greater(t, held2, held, "an open transaction counts in the budget")
	tc.log = nil
	require.NoError(t, p.c.Close(nil))
	p.run()
	assert.Equal(t, []string{"discharge t3 fail=true"}, tc.log)
}

// TestTxnUnknownTransfer: a transfer in a transaction the coordinator
// did not declare detaches its link with amqp:transaction:unknown-id.
func TestTxnUnknownTransfer(t *testing.T) {
	p, ch, _ := txnPair(t, &testCoordinator{prefix: "t"})
	_, err := ch.links["q-in"].SendTxn([]byte("bogus"), nil, []byte("m"), false)
	require.NoError(t, err)
	p.run()
	assert.Equal(t, []string{"detach q-in amqp:transaction:unknown-id"}, ch.take())
}

// TestTxnRefused: without a Coordinator a coordinator link is refused
// with amqp:not-implemented; a Coordinator's refusal of a declare is the
// declare's rejected outcome; a declare of a distributed transaction
// (global-id) is rejected with amqp:not-implemented; a message that is
// no declare or discharge, with amqp:decode-error. Declare and
// Discharge need a coordinator link.
func TestTxnRefused(t *testing.T) {
	ch := &txnSide{}
	p := newPipe(t, Config{}, Config{}, &openHook{txnSide: ch, open: func(s *Session) {
		_, _ = s.AttachCoordinator(LinkOptions{Name: "ctrl"})
	}}, &NopHandler{})
	p.run()
	assert.Equal(t, []string{"attach ctrl", "detach ctrl amqp:not-implemented"}, ch.take())

	tc := &testCoordinator{declErr: NewError(frame.CondResourceLimitExceeded, "too many")}
	p, ch, _ = txnPair(t, tc)
	ctrl := ch.links["ctrl"]
	_, err := ctrl.Declare()
	require.NoError(t, err)
	p.run()
	assert.Equal(t, []string{"disposition ctrl 0 rejected amqp:resource-limit-exceeded txn="}, ch.take())

	for _, body := range [][]byte{
		frame.AppendControl(nil, frame.AppendDeclare(nil, frame.Declare{GlobalID: []byte{0xa0, 1, 'g'}})),
		frame.AppendControl(nil, []byte{0xa1, 1, 'x'}),
		frame.AppendControl(nil, frame.AppendDischarge(frame.AppendControl(nil, nil)[:0], frame.Discharge{})[:3]),
	} {
		_, err := ctrl.Send(nil, body, false)
		require.NoError(t, err)
	}
	p.run()
	assert.Equal(t, []string{
		"disposition ctrl 1 rejected amqp:not-implemented txn=",
		"disposition ctrl 2 rejected amqp:decode-error txn=",
		"disposition ctrl 3 rejected amqp:decode-error txn=",
	}, ch.take())

	_, err = ch.links["q-in"].Declare()
	assert.ErrorIs(t, err, ErrState)
	_, err = ch.links["q-in"].Discharge([]byte("t"), true)
	assert.ErrorIs(t, err, ErrState)
}

// TestTxnProtonController feeds a server the bytes Qpid Proton's
// controller wrote in testdata/txn (gen.py: coordinator link, declare,
// two transactional transfers, a transactional accept, a commit, a
// discharge of an unknown transaction) and checks what the engine made
// of them and answered.
func TestTxnProtonController(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("..", "testdata", "txn", "client.bin"))
	require.NoError(t, err)
	tc := &testCoordinator{prefix: "txn-", commitOK: true} // declares "txn-1", as Proton's server did
	sh := &txnSide{}
	sh.attached = func(l *Link) {
		if l.IsSender() && string(l.Name()) == "q-out" {
			l.Context = "out"
		}
	}
	s := NewServer(Config{Credit: 10, Coordinator: tc}, sh)
	now := time.Unix(1_700_000_000, 0)
	var out []byte
	// The server's one message on q-out goes when Proton's flow gives credit.
	sent := false
	for off := 0; off < len(in); off += 64 {
		require.NoError(t, s.Feed(in[off:min(off+64, len(in))], now))
		if l := sh.links["q-out"]; l != nil && l.Credit() > 0 && !sent {
			_, err := l.Send([]byte("r0"), []byte("for the client"), false)
			require.NoError(t, err)
			sent = true
		}
		out = append(out, s.Output()...)
		s.Written(len(s.Output()))
	}
	assert.Equal(t, []string{"declare txn-1", "discharge txn-1 fail=false"}, tc.log)
	var deliveries, txnDisps int
	for _, e := range sh.log {
		if bytes.HasPrefix([]byte(e), []byte("delivery q-in")) {
			assert.Contains(t, e, "txn=txn-1")
			deliveries++
		}
		if bytes.HasPrefix([]byte(e), []byte("disposition q-out")) {
			assert.Equal(t, "disposition q-out 0 accepted txn=txn-1", e)
			txnDisps++
		}
	}
	assert.Equal(t, 2, deliveries, "%q", sh.log)
	assert.Equal(t, 1, txnDisps, "%q", sh.log)

	// What the engine answered: declared txn-1, accepted, rejected unknown-id.
	r := frame.NewReader(bytes.NewReader(out))
	var answers []string
	for {
		f, err := r.Next()
		if err != nil {
			break
		}
		if d, _ := frame.Performative(f.Body); d != amqpsax.DescriptorDisposition {
			continue
		}
		d, err := frame.ParseDisposition(f.Body)
		require.NoError(t, err)
		if d.Role != frame.RoleReceiver {
			continue
		}
		switch {
		case d.State.Descriptor == amqpsax.DescriptorDeclared:
			dc, err := frame.ParseDeclared(d.State.Raw)
			require.NoError(t, err)
			answers = append(answers, "declared "+string(dc.TxnID))
		case d.State.Type == frame.StateRejected:
			answers = append(answers, "rejected "+string(d.State.Error.Condition))
		case d.State.Type == frame.StateAccepted && d.Settled:
			answers = append(answers, "accepted")
		}
	}
	assert.Contains(t, answers, "declared txn-1")
	assert.Contains(t, answers, "rejected amqp:transaction:unknown-id")
}

// TestTxnAllocs: transactional sends and receives, and transactional
// acceptance, allocate nothing per message once warm, on either side.
func TestTxnAllocs(t *testing.T) {
	tc := &testCoordinator{prefix: "t", commitOK: true}
	ch, sh := &txnSide{}, &countTxn{}
	p := newPipe(t, Config{}, Config{Credit: 1 << 30, Window: 1 << 30, Coordinator: tc}, &openHook{txnSide: ch, open: func(s *Session) {
		s.AttachCoordinator(LinkOptions{Name: "ctrl"})
		s.AttachSender(LinkOptions{Name: "q-in", Address: "q", Unsettled: true})
	}}, sh)
	p.run()
	_, err := ch.links["ctrl"].Declare()
	require.NoError(t, err)
	p.run()
	txn := ch.declared
	require.Equal(t, "t1", string(txn))
	ch.log = nil
	snd := ch.links["q-in"]
	payload := make([]byte, 100)
	var cbuf, sbuf []byte
	round := func() {
		for range 100 {
			if _, err := snd.SendTxn(txn, nil, payload, false); err != nil {
				t.Fatal(err)
			}
		}
		cbuf = append(cbuf[:0], p.c.Output()...)
		p.c.Written(len(cbuf))
		p.s.Feed(cbuf, p.now)
		sbuf = append(sbuf[:0], p.s.Output()...)
		p.s.Written(len(sbuf))
		p.c.Feed(sbuf, p.now)
	}
	ch.quiet = true
	round()
	allocs := testing.AllocsPerRun(100, round)
	assert.Zero(t, allocs, "allocs per 100 transactional messages")
	assert.Equal(t, 102*100, sh.n, "AllocsPerRun's warm-up run, its 100 and ours")
	assert.Zero(t, sh.bad, "deliveries without their txn-id")
	assert.Zero(t, snd.Session().Unsettled(), "each settled on its transactional outcome")
}

// countTxn accepts each delivery under its transaction, and counts.
type countTxn struct {
	NopHandler
	n, bad int
}

func (h *countTxn) OnDelivery(l *Link, d Delivery) {
	h.n++
	if string(d.TxnID()) != "t1" {
		h.bad++
	}
	d.AcceptTxn(d.TxnID())
}
