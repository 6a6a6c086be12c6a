package frame

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJoin: the zero Join joins a delivery of several transfers, reports
// it in progress until the last, holds its buffer for the next, and
// hands back a delivery in one transfer as a view.
func TestJoin(t *testing.T) {
	var j Join
	assert.False(t, j.InProgress())
	assert.Zero(t, j.Held())
	msg := routedMessage("eu", 3000)
	ts, ps := transferFrames(3, 9, msg, 1000, 2)
	for i := range ts {
		d, done, err := j.Add(&ts[i], ps[i], 0)
		require.NoError(t, err)
		if i < len(ts)-1 {
			assert.False(t, done)
			assert.True(t, j.InProgress())
			continue
		}
		assert.True(t, done)
		assert.False(t, j.InProgress())
		assert.Equal(t, msg, d.Payload)
		assert.Equal(t, uint32(3), d.Handle)
		assert.Equal(t, uint32(9), d.DeliveryID)
		assert.Zero(t, d.Channel)
		assert.True(t, d.Settled, "settled on the third transfer")
		assert.Equal(t, len(ts), d.Frames)
	}
	held := j.Held()
	assert.GreaterOrEqual(t, held, len(msg))

	one := Transfer{Handle: 3, DeliveryID: Some[uint32](10), DeliveryTag: []byte("t")}
	payload := []byte("whole")
	d, done, err := j.Add(&one, payload, 0)
	require.NoError(t, err)
	assert.True(t, done)
	assert.Same(t, &payload[0], &d.Payload[0], "a view")
	assert.Equal(t, held, j.Held(), "the buffer is kept")

	// 0 allocations once warm.
	assert.Zero(t, testing.AllocsPerRun(20, func() {
		for i := range ts {
			if _, _, err := j.Add(&ts[i], ps[i], 0); err != nil {
				panic(err)
			}
		}
	}))

	// Reset drops a delivery in progress; the next transfer starts anew.
	_, _, err = j.Add(&ts[0], ps[0], 0)
	require.NoError(t, err)
	j.Reset()
	assert.False(t, j.InProgress())
	d, done, err = j.Add(&one, payload, 0)
	require.NoError(t, err)
	assert.True(t, done)
	assert.Equal(t, uint32(10), d.DeliveryID)
}

// TestJoinFaults: a delivery past maxSize is refused before the copy
// and the rest of it ignored; another delivery-id, or none on a first
// transfer, is refused; an aborted delivery is dropped.
func TestJoinFaults(t *testing.T) {
	var j Join
	msg := bytes.Repeat([]byte{1}, 3000)
	ts, ps := transferFrames(1, 4, msg, 1000, -1)
	_, _, err := j.Add(&ts[0], ps[0], 1500)
	require.NoError(t, err)
	_, _, err = j.Add(&ts[1], ps[1], 1500)
	var de *DeliveryError
	require.ErrorAs(t, err, &de)
	assert.ErrorIs(t, err, ErrMessageTooLarge)
	assert.Equal(t, DeliveryError{Handle: 1, DeliveryID: 4, Err: ErrMessageTooLarge}, *de)
	assert.True(t, j.InProgress(), "its last transfer is still to come")
	d, done, err := j.Add(&ts[2], ps[2], 1500)
	require.NoError(t, err)
	assert.False(t, done)
	assert.Equal(t, Delivery{}, d, "ignored")
	assert.False(t, j.InProgress())

	_, _, err = j.Add(&Transfer{Handle: 1}, nil, 0)
	assert.ErrorIs(t, err, ErrNoDeliveryID)
	_, _, err = j.Add(&ts[0], ps[0], 0)
	require.NoError(t, err)
	other := ts[1]
	other.DeliveryID = Some[uint32](5)
	_, _, err = j.Add(&other, ps[1], 0)
	assert.ErrorIs(t, err, ErrDeliveryID)
	j.Reset()

	_, _, err = j.Add(&ts[0], ps[0], 0)
	require.NoError(t, err)
	d, done, err = j.Add(&Transfer{Handle: 1, Aborted: true}, nil, 0)
	require.NoError(t, err)
	assert.False(t, done)
	assert.True(t, d.Aborted)
	assert.Equal(t, uint32(4), d.DeliveryID)
	assert.False(t, j.InProgress())
}

// TestJoinAssembler: Joins kept by the caller, one per link, give what
// the Assembler gives, on every recorded connection of testdata/.
func TestJoinAssembler(t *testing.T) {
	for name, data := range peerStreams(t) {
		var a Assembler
		joins := map[uint64]*Join{}
		for b := data; len(b) > 0; {
			f, n, err := Split(b, 1<<31-1)
			require.NoError(t, err, name)
			b = b[n:]
			tr, payload, err := ParseTransfer(f.Body)
			if f.IsHeader || err != nil {
				continue
			}
			j := joins[linkKey(f.Channel, tr.Handle)]
			if j == nil {
				j = new(Join)
				joins[linkKey(f.Channel, tr.Handle)] = j
			}
			jd, jdone, jerr := j.Add(&tr, payload, 0)
			jd.Channel = f.Channel
			ad, adone, aerr := a.Add(f.Channel, tr, payload)
			require.Equal(t, aerr == nil, jerr == nil, name)
			require.Equal(t, adone, jdone, name)
			if !jdone && !jd.Aborted {
				jd = Delivery{}
			}
			assert.Equal(t, ad, jd, name)
		}
	}
}
