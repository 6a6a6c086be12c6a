package engine

import (
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestControlBody: controlBody finds the declare or discharge in the
// amqp-value of a controller's message, and refuses any other message.
func TestControlBody(t *testing.T) {
	dis := frame.AppendDischarge(nil, frame.Discharge{TxnID: []byte("t1"), Fail: true})
	msg := frame.AppendControl(nil, dis)
	d, v, err := controlBody(msg)
	require.NoError(t, err)
	assert.Equal(t, amqpsax.DescriptorDischarge, d)
	assert.Equal(t, dis, v)

	data := encode.AppendUlong(encode.AppendDescribed(nil), uint64(amqpsax.DescriptorData))
	data = encode.AppendBinary(data, dis)
	for name, m := range map[string][]byte{
		"data body":         data,
		"amqp-value string": frame.AppendControl(nil, encode.AppendString(nil, "declare")),
		"amqp-value open":   frame.AppendControl(nil, frame.AppendOpen(nil, frame.Open{ContainerID: []byte("c")})),
		"no body":           nil,
	} {
		_, _, err := controlBody(m)
		assert.ErrorIs(t, err, errNotControl, name)
	}
	_, _, err = controlBody([]byte{0x00, 0x53})
	assert.Error(t, err, "a cut message")
}

// TestControlBodyAllocs: finding a discharge allocates nothing, on the
// hot path of a transactional server.
func TestControlBodyAllocs(t *testing.T) {
	buf, dis := make([]byte, 0, 64), make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		dis = frame.AppendDischarge(dis[:0], frame.Discharge{TxnID: []byte("txn-1")})
		buf = frame.AppendControl(buf[:0], dis)
		if _, _, err := controlBody(buf); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}
