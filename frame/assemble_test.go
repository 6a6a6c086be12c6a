package frame

import (
	"bytes"
	"io"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// delivered is a Delivery with its payload copied, for comparison.
type delivered struct {
	Delivery
	payload string
}

// deliveryKey names a delivery: channel, handle, delivery-id.
type deliveryKey struct {
	ch     uint16
	handle uint32
	id     uint32
}

// assembleStream reads data and joins its transfers, returning every
// delivery and the payloads of each delivery's transfers as read.
func assembleStream(t *testing.T, data []byte, a *Assembler) (out []delivered, parts map[deliveryKey][]string) {
	parts = map[deliveryKey][]string{}
	ids := map[uint64]uint32{} // the delivery in progress per link
	r := NewReader(bytes.NewReader(data))
	for {
		f, err := r.Next()
		if err == io.EOF {
			return out, parts
		}
		require.NoError(t, err)
		if d, _ := Performative(f.Body); d != amqpsax.DescriptorTransfer {
			continue
		}
		tr, payload, err := ParseTransfer(f.Body)
		require.NoError(t, err)
		if tr.Has(TransferDeliveryID) {
			ids[linkKey(f.Channel, tr.Handle)], _ = tr.DeliveryID.Get()
		}
		k := deliveryKey{f.Channel, tr.Handle, ids[linkKey(f.Channel, tr.Handle)]}
		parts[k] = append(parts[k], string(payload))
		d, done, err := a.Add(f.Channel, tr, payload)
		require.NoError(t, err)
		if done {
			if len(parts[k]) == 1 && len(payload) > 0 {
				assert.Same(t, &payload[0], &d.Payload[0], "a delivery in one frame is a view of it")
			}
			out = append(out, delivered{d, string(d.Payload)})
		}
	}
}

// TestAssembleProton joins the deliveries of both Proton streams: each
// one's payload is its transfers' payloads end to end, and a message
// (message.Scan reads it); the large one took four frames.
func TestAssembleProton(t *testing.T) {
	for name, data := range streams(t) {
		var a Assembler
		out, parts := assembleStream(t, data, &a)
		require.NotEmpty(t, out, name)
		frames := 0
		for _, d := range out {
			k := deliveryKey{d.Channel, d.Handle, d.DeliveryID}
			var whole string
			for _, p := range parts[k] {
				whole += p
			}
			assert.Equal(t, whole, d.payload, "%s delivery %+v", name, k)
			assert.Equal(t, len(parts[k]), d.Frames)
			s, err := message.Scan([]byte(d.payload))
			require.NoError(t, err, "%s delivery %d", name, d.DeliveryID)
			assert.NotNil(t, s.Body)
			frames = max(frames, d.Frames)
		}
		if name == "client" {
			assert.Equal(t, 4, frames, "the large message")
		}
	}
}

// transferFrames builds the transfers of one delivery of payload split
// into parts of n bytes, on channel 1, link handle h.
func transferFrames(h, id uint32, payload []byte, n int, settledAt int) (ts []Transfer, ps [][]byte) {
	for i := 0; i == 0 || len(payload) > 0; i++ {
		p := payload[:min(n, len(payload))]
		payload = payload[len(p):]
		tr := Transfer{Handle: h, DeliveryID: Some(id), More: len(payload) > 0, Settled: i == settledAt}
		if i == 0 {
			tr.DeliveryTag = []byte{byte(id)}
		}
		ts, ps = append(ts, tr), append(ps, p)
	}
	return ts, ps
}

func TestAssemble(t *testing.T) {
	msg := bytes.Repeat([]byte("0123456789"), 100)

	t.Run("interleaved links", func(t *testing.T) {
		var a Assembler
		ta, pa := transferFrames(1, 10, msg, 64, 3)
		tb, pb := transferFrames(2, 20, msg[:300], 64, -1)
		var got []Delivery
		for i := range max(len(ta), len(tb)) {
			for _, x := range []struct {
				ts []Transfer
				ps [][]byte
			}{{ta, pa}, {tb, pb}} {
				if i < len(x.ts) {
					d, done, err := a.Add(1, x.ts[i], x.ps[i])
					require.NoError(t, err)
					if done {
						d.Payload = bytes.Clone(d.Payload)
						got = append(got, d)
					} else {
						assert.Equal(t, x.ps[0], pending(&a, 1, x.ts[i].Handle)[:len(x.ps[0])])
					}
				}
			}
		}
		require.Len(t, got, 2)
		assert.Equal(t, msg[:300], got[0].Payload)
		assert.Equal(t, uint32(20), got[0].DeliveryID)
		assert.False(t, got[0].Settled)
		assert.Equal(t, msg, got[1].Payload)
		assert.Equal(t, []byte{10}, got[1].DeliveryTag)
		assert.True(t, got[1].Settled, "settled on the fourth frame")
		assert.Equal(t, len(ta), got[1].Frames)
		assert.Nil(t, pending(&a, 1, 1))
	})

	t.Run("aborted", func(t *testing.T) {
		var a Assembler
		ts, ps := transferFrames(1, 1, msg, 100, -1)
		for i := range 3 {
			_, done, err := a.Add(0, ts[i], ps[i])
			require.NoError(t, err)
			assert.False(t, done)
		}
		abort := Transfer{Handle: 1, Aborted: true}
		d, done, err := a.Add(0, abort, nil)
		require.NoError(t, err)
		assert.False(t, done)
		assert.True(t, d.Aborted)
		assert.Equal(t, uint32(1), d.DeliveryID)
		assert.Nil(t, pending(&a, 0, 1))
		// An aborted first frame.
		first := ts[0]
		first.Aborted = true
		d, done, err = a.Add(0, first, ps[0])
		require.NoError(t, err)
		assert.False(t, done)
		assert.True(t, d.Aborted)
		// The link goes on.
		ts, ps = transferFrames(1, 2, msg[:10], 100, -1)
		d, done, err = a.Add(0, ts[0], ps[0])
		require.NoError(t, err)
		assert.True(t, done)
		assert.Equal(t, msg[:10], d.Payload)
	})

	t.Run("too large", func(t *testing.T) {
		a := Assembler{MaxMessageSize: 250}
		ts, ps := transferFrames(1, 1, msg, 100, -1)
		for i := range 2 {
			_, _, err := a.Add(0, ts[i], ps[i])
			require.NoError(t, err)
		}
		_, done, err := a.Add(0, ts[2], ps[2])
		assert.False(t, done)
		require.ErrorIs(t, err, ErrMessageTooLarge)
		var de *DeliveryError
		require.ErrorAs(t, err, &de)
		assert.Equal(t, uint32(1), de.DeliveryID)
		assert.Equal(t, "frame: message larger than the maximum message size (channel 0, handle 1, delivery 1)", err.Error())
		assert.LessOrEqual(t, cap(a.links[linkKey(0, 1)].buf), 250, "never grown past the limit")
		for i := 3; i < len(ts); i++ {
			d, done, err := a.Add(0, ts[i], ps[i])
			require.NoError(t, err, "the rest of the delivery is dropped")
			assert.False(t, done)
			assert.Nil(t, d.Payload)
		}
		// A single frame over the limit, then a delivery that fits.
		big := Transfer{Handle: 1, DeliveryID: Some[uint32](2)}
		_, _, err = a.Add(0, big, msg[:251])
		require.ErrorIs(t, err, ErrMessageTooLarge)
		ts, ps = transferFrames(1, 3, msg[:250], 100, -1)
		for i := range ts {
			d, done, err := a.Add(0, ts[i], ps[i])
			require.NoError(t, err)
			assert.Equal(t, i == len(ts)-1, done)
			if done {
				assert.Equal(t, msg[:250], d.Payload)
			}
		}
	})

	t.Run("delivery ids", func(t *testing.T) {
		var a Assembler
		tr := Transfer{Handle: 1, More: true}
		_, _, err := a.Add(0, tr, msg[:10])
		require.ErrorIs(t, err, ErrNoDeliveryID)
		tr.More = false
		_, _, err = a.Add(0, tr, msg[:10])
		require.NoError(t, err, "the rest of the dropped delivery")

		ts, ps := transferFrames(1, 5, msg, 100, -1)
		_, _, err = a.Add(0, ts[0], ps[0])
		require.NoError(t, err)
		// A continuation without delivery-id is fine; with another, not.
		ts[1].DeliveryID = Opt[uint32]{}
		_, _, err = a.Add(0, ts[1], ps[1])
		require.NoError(t, err)
		ts[2].DeliveryID = Some[uint32](6)
		_, _, err = a.Add(0, ts[2], ps[2])
		require.ErrorIs(t, err, ErrDeliveryID)
	})

	t.Run("pending limit and forget", func(t *testing.T) {
		a := Assembler{MaxPending: 2}
		for h := range uint32(3) {
			ts, ps := transferFrames(h, h, msg, 100, -1)
			_, _, err := a.Add(0, ts[0], ps[0])
			if h < 2 {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrTooManyPending)
			}
		}
		a.Forget(0, 0)
		assert.Nil(t, pending(&a, 0, 0))
		assert.NotNil(t, pending(&a, 0, 1))
		ts, ps := transferFrames(5, 5, msg, 100, -1)
		_, _, err := a.Add(7, ts[0], ps[0])
		require.NoError(t, err)
		a.ForgetChannel(0)
		assert.Nil(t, pending(&a, 0, 1))
		assert.NotNil(t, pending(&a, 7, 5))
		a.Reset()
		assert.Nil(t, pending(&a, 7, 5))
		assert.Empty(t, a.links)
	})
}

// pending returns the payload joined so far of the delivery in progress
// on channel and handle: nil when none is, or when it was dropped.
func pending(a *Assembler, channel uint16, handle uint32) []byte {
	j := a.links[linkKey(channel, handle)]
	if j == nil || j.skipping {
		return nil
	}
	return j.buf
}

// TestAssembleSections: the sections of a message's first frames can be
// read before the rest arrives: message.Scan on the prefix joined so far
// returns the complete sections and an error wrapping
// io.ErrUnexpectedEOF.
func TestAssembleSections(t *testing.T) {
	msg := routedMessage("eu", 2000)
	s, err := message.Scan(msg)
	require.NoError(t, err)
	require.NotNil(t, s.ApplicationProperties)
	propsEnd := bytes.Index(msg, s.ApplicationProperties) + len(s.ApplicationProperties)
	var a Assembler
	ts, ps := transferFrames(0, 0, msg, propsEnd+1, -1)
	require.Greater(t, len(ts), 1)
	_, _, err = a.Add(0, ts[0], ps[0])
	require.NoError(t, err)
	got, err := message.Scan(pending(&a, 0, 0))
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Equal(t, s.ApplicationProperties, got.ApplicationProperties)
	assert.Equal(t, s.Properties, got.Properties)
	assert.Nil(t, got.Body)
	var e *amqpsax.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, s.Offsets.Body, e.Offset) // the body is where the part ends
}

// routedMessage returns a message with properties, application
// properties ("region" and "tenant") and a data body of n bytes.
func routedMessage(region string, n int) []byte {
	b := encode.AppendDescribed(nil)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorProperties))
	start := len(b)
	b = encode.BeginList(b)
	b = encode.AppendString(b, "id-1")
	b = encode.EndList(b, start, 1)
	b = encode.AppendDescribed(b)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorApplicationProperties))
	start = len(b)
	b = encode.BeginMap(b)
	b = encode.AppendString(b, "tenant")
	b = encode.AppendString(b, "acme")
	b = encode.AppendString(b, "region")
	b = encode.AppendString(b, region)
	b = encode.EndMap(b, start, 2)
	b = encode.AppendDescribed(b)
	b = encode.AppendUlong(b, uint64(amqpsax.DescriptorData))
	return encode.AppendBinary(b, bytes.Repeat([]byte{'x'}, n))
}

// TestFrameLoopAllocs is the allocation gate of the hot path: once warm,
// reading a connection's frames with Next, parsing each transfer and
// joining its delivery allocates nothing, for single-frame deliveries (a
// view of the frame) and multi-frame ones (the Assembler's reused
// buffers) alike.
func TestFrameLoopAllocs(t *testing.T) {
	for name, data := range streams(t) {
		src := bytes.NewReader(data)
		r := NewReader(src)
		var a Assembler
		deliveries := 0
		loop := func() {
			src.Reset(data)
			r.Reset(src)
			for {
				f, err := r.Next()
				if err == io.EOF {
					return
				}
				if err != nil {
					panic(err)
				}
				if d, _ := Performative(f.Body); d != amqpsax.DescriptorTransfer {
					continue
				}
				tr, payload, err := ParseTransfer(f.Body)
				if err != nil {
					panic(err)
				}
				if _, done, err := a.Add(f.Channel, tr, payload); err != nil {
					panic(err)
				} else if done {
					deliveries++
				}
			}
		}
		loop()
		require.NotZero(t, deliveries, name)
		assert.Zero(t, testing.AllocsPerRun(100, loop), name)
	}
}
