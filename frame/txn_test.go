package frame

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// txnFrame is one AMQP frame of testdata/txn's recording.
type txnFrame struct {
	dir  string
	d    amqpsax.Descriptor
	body []byte // a copy
}

func readTxn(t *testing.T, dir string) []txnFrame {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "txn", dir+".bin"))
	require.NoError(t, err)
	r := NewReader(bytes.NewReader(data))
	var out []txnFrame
	for {
		f, err := r.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		if f.IsHeader || len(f.Body) == 0 {
			continue
		}
		d, err := Performative(f.Body)
		require.NoError(t, err)
		out = append(out, txnFrame{dir: dir, d: d, body: append([]byte(nil), f.Body...)})
	}
}

// TestTxnProton reads the transaction Qpid Proton's engines exchanged
// (testdata/txn/gen.py): the coordinator's attach, the declare and the
// two discharges in the controller's messages, declared, the
// transactional-state of the transfers and of the dispositions both
// ways, the rejected discharge; each state and performative written back
// to Proton's bytes.
func TestTxnProton(t *testing.T) {
	var coordinators, declares, discharges, txnTransfers, declared, txnDisps, unknown int
	ctrlHandle := ^uint32(0)
	var txnID []byte
	for _, dir := range []string{"client", "server"} {
		for _, f := range readTxn(t, dir) {
			switch f.d {
			case amqpsax.DescriptorAttach:
				a, err := ParseAttach(f.body)
				require.NoError(t, err)
				assert.Equal(t, f.body, AppendAttach(nil, a), "attach written back")
				if tg, ok := a.Target.Get(); ok && tg.Coordinator {
					coordinators++
					assert.True(t, tg.Capabilities.Contains(TxnCapLocal))
					assert.Equal(t, "txn-ctrl", string(a.Name))
					if dir == "client" {
						ctrlHandle = a.Handle
					}
				}
			case amqpsax.DescriptorTransfer:
				tr, payload, err := ParseTransfer(f.body)
				require.NoError(t, err)
				perf := f.body[:len(f.body)-len(payload)]
				assert.Equal(t, perf, AppendTransfer(nil, tr), "transfer written back")
				if dir == "client" && tr.Handle == ctrlHandle {
					d, value, err := controlValue(payload)
					require.NoError(t, err)
					switch d {
					case amqpsax.DescriptorDeclare:
						dc, err := ParseDeclare(value)
						require.NoError(t, err)
						assert.False(t, dc.Has(DeclareGlobalID))
						assert.Equal(t, 1, dc.Elements(), "Proton writes [None]")
						// Proton's descriptor is symbolic; the list is the same.
						back := AppendDeclare(nil, dc)
						assert.Equal(t, value[len(value)-3:], back[len(back)-3:])
						declares++
					case amqpsax.DescriptorDischarge:
						dc, err := ParseDischarge(value)
						require.NoError(t, err)
						assert.True(t, dc.Has(DischargeFail))
						if discharges == 0 {
							assert.Equal(t, "txn-1", string(dc.TxnID))
							assert.False(t, dc.Fail)
						} else {
							assert.Equal(t, "nope", string(dc.TxnID))
							assert.True(t, dc.Fail)
						}
						back := AppendDischarge(nil, dc)
						list := value[len(value)-(len(back)-3):]
						assert.Equal(t, list, back[3:], "discharge's list written back")
						round, err := ParseDischarge(back)
						require.NoError(t, err)
						assert.Equal(t, dc, round)
						discharges++
					}
				}
				if tr.State.Descriptor == amqpsax.DescriptorTransactionalState {
					ts, err := ParseTransactionalState(tr.State.Raw)
					require.NoError(t, err)
					assert.Equal(t, "txn-1", string(ts.TxnID))
					assert.Equal(t, StateNone, ts.Outcome.Type)
					assert.Equal(t, tr.State.Raw, AppendTransactionalState(nil, ts))
					txnTransfers++
				}
			case amqpsax.DescriptorDisposition:
				d, err := ParseDisposition(f.body)
				require.NoError(t, err)
				assert.Equal(t, f.body, AppendDisposition(nil, d), "disposition written back")
				switch {
				case d.State.Descriptor == amqpsax.DescriptorDeclared:
					dc, err := ParseDeclared(d.State.Raw)
					require.NoError(t, err)
					txnID = dc.TxnID
					assert.Equal(t, d.State.Raw, AppendDeclared(nil, dc))
					declared++
				case d.State.Descriptor == amqpsax.DescriptorTransactionalState:
					ts, err := ParseTransactionalState(d.State.Raw)
					require.NoError(t, err)
					assert.Equal(t, "txn-1", string(ts.TxnID))
					assert.Equal(t, StateAccepted, ts.Outcome.Type)
					assert.Equal(t, d.State.Raw, AppendTransactionalState(nil, ts))
					txnDisps++
				case d.State.Type == StateRejected:
					assert.Equal(t, CondUnknownID, d.State.Error.Cond())
					unknown++
				}
			}
		}
	}
	assert.Equal(t, "txn-1", string(txnID))
	assert.Equal(t, 2, coordinators, "the controller's attach and the answer")
	assert.Equal(t, 1, declares)
	assert.Equal(t, 2, discharges)
	assert.Equal(t, 4, txnTransfers, "Proton puts the state on every transfer of a delivery: 1 + 3")
	assert.Equal(t, 1, declared)
	assert.GreaterOrEqual(t, txnDisps, 2, "the client's acceptance and the server's outcomes")
	assert.Equal(t, 1, unknown)
}

// TestDeclareGlobalID: no type of the spec provides global-tx-id, so a
// declare that carries a global-id (a distributed transaction) is
// refused, whatever the value; a null one is absence.
func TestDeclareGlobalID(t *testing.T) {
	for _, v := range [][]byte{encode.AppendBinary(nil, []byte("g")), encode.AppendUint(nil, 1)} {
		raw := AppendDeclare(nil, Declare{GlobalID: v})
		_, err := ParseDeclare(raw)
		assert.ErrorIs(t, err, ErrFieldType)
		var fe *FieldError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, "global-id", fe.Field)
	}
	d, err := ParseDeclare(encComposite(amqpsax.DescriptorDeclare, nil))
	require.NoError(t, err)
	assert.False(t, d.Has(DeclareGlobalID))
	_, err = ParseDeclare(append(AppendDeclare(nil, Declare{}), 0x40))
	assert.ErrorIs(t, err, amqpsax.ErrTrailing)
}

// TestTransactionalStateOutcome: the outcome of a transactional-state is
// an outcome: received is refused, and so is a transactional-state
// inside one; declared and the four of part 3 are taken.
func TestTransactionalStateOutcome(t *testing.T) {
	for _, st := range []DeliveryState{
		{Type: StateReceived, SectionNumber: 1},
		{Type: StateOther, Raw: AppendTransactionalState(nil, TransactionalState{TxnID: []byte("t")})},
	} {
		raw := AppendTransactionalState(nil, TransactionalState{TxnID: []byte("t"), Outcome: st})
		_, err := ParseTransactionalState(raw)
		assert.ErrorIs(t, err, ErrFieldValue, "%x", raw)
	}
	for _, st := range []DeliveryState{
		{Type: StateAccepted}, {Type: StateReleased}, {Type: StateModified, DeliveryFailed: true},
		{Type: StateRejected, Error: AMQPError{Condition: []byte("amqp:transaction:rollback")}},
		{Type: StateOther, Raw: AppendDeclared(nil, Declared{TxnID: []byte("t")})},
	} {
		raw := AppendTransactionalState(nil, TransactionalState{TxnID: []byte("t"), Outcome: st})
		ts, err := ParseTransactionalState(raw)
		require.NoError(t, err, "%x", raw)
		assert.Equal(t, st.Type, ts.Outcome.Type)
		assert.Equal(t, raw, AppendTransactionalState(nil, ts))
	}
	_, err := ParseTransactionalState(AppendDeclared(nil, Declared{TxnID: []byte("t")}))
	assert.ErrorIs(t, err, ErrPerformative, "a declared is no transactional-state")
}

// TestTxnAllocs: reading and writing a transactional-state allocate
// nothing (into a buffer that has grown): they are on the hot path of a
// transactional send and receive.
func TestTxnAllocs(t *testing.T) {
	raw := AppendTransactionalState(nil, TransactionalState{TxnID: []byte("txn-1"), Outcome: DeliveryState{Type: StateAccepted}})
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		ts, err := ParseTransactionalState(raw)
		if err != nil {
			t.Fatal(err)
		}
		buf = AppendTransactionalState(buf[:0], ts)
		buf = AppendControl(buf[:0], AppendDischarge(buf[len(buf):], Discharge{TxnID: []byte("txn-1")}))
	})
	assert.Zero(t, allocs)
}

// controlValue is the described value in the amqp-value body of a
// controller's message (the engine reads it so; here, to check Proton's).
func controlValue(payload []byte) (amqpsax.Descriptor, []byte, error) {
	secs, err := message.Scan(payload)
	if err != nil {
		return 0, nil, err
	}
	var c stream.Cursor
	c.Reset(secs.Body)
	c.Next()
	c.Enter()
	c.Next()
	c.Next()
	d, _, _ := c.Descriptor()
	return d, c.Raw(), c.Err()
}
