package engine

import (
	"bytes"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// frameSizes returns the size of every frame in a stream of output, and
// the performatives.
func frameSizes(t *testing.T, out []byte) (sizes []int, perfs []amqpsax.Descriptor) {
	r := frame.NewReader(bytes.NewReader(out))
	r.MaxFrameSize = 1 << 24
	for {
		f, err := r.Next()
		if err != nil {
			return
		}
		if f.IsHeader || len(f.Body) == 0 {
			continue
		}
		sizes = append(sizes, int(f.Size))
		d, _ := frame.Performative(f.Body)
		perfs = append(perfs, d)
	}
}

// TestMaxFrameSizeEveryFrame: every frame this end writes is held to
// the peer's max-frame-size, not only transfers. An attach that cannot
// fit is refused by AttachSender (ErrFrameSize, nothing written, the
// name still free); any other frame that cannot fit (a disposition, a
// detach carrying a long error) is withdrawn, and the connection closes
// with amqp:frame-size-too-small, every frame written within the limit.
func TestMaxFrameSizeEveryFrame(t *testing.T) {
	srv := &recorder{}
	p, _, l := openPair(t, Config{}, Config{MaxFrameSize: 512, Credit: 10}, LinkOptions{Name: "a"}, srv)
	s := l.Session()
	before := len(p.c.Output())
	big := &frame.Target{Address: []byte(strings.Repeat("q", 600))}
	_, err := s.AttachSender(LinkOptions{Name: "big", Target: big})
	assert.ErrorIs(t, err, ErrFrameSize)
	assert.Equal(t, before, len(p.c.Output()), "nothing written")
	l2, err := s.AttachSender(LinkOptions{Name: "big", Address: "q"})
	require.NoError(t, err, "the name is free, the handle too")
	assert.Equal(t, uint32(1), l2.Handle())
	p.run()

	var out []byte
	out = append(out, p.c.Output()...)
	require.NoError(t, l.Detach(NewError(frame.CondInternalError, strings.Repeat("long ", 200))))
	out = append(out, p.c.Output()...)
	sizes, perfs := frameSizes(t, out)
	for _, n := range sizes {
		assert.LessOrEqual(t, n, 512)
	}
	assert.Equal(t, []amqpsax.Descriptor{amqpsax.DescriptorClose}, perfs, "the detach withdrawn, a close instead")
	require.NotNil(t, p.c.Err())
	assert.Equal(t, frame.CondFrameSizeTooSmall, p.c.Err().Condition)
	p.run()
	assert.Nil(t, p.serr)
}

// TestAbortMultiFrameWire: an outgoing delivery of several transfers cut
// off by Abort, read off the wire by frame.Join (the frame layer's rules,
// independent of the receiving engine): the first transfers carry the
// delivery-id and more, the last has aborted set and no payload, every
// frame fits the peer's max-frame-size, and the next delivery follows
// whole.
func TestAbortMultiFrameWire(t *testing.T) {
	srv := &recorder{}
	p, _, l := openPair(t, Config{}, Config{MaxFrameSize: 512, Window: 3, Credit: 10}, LinkOptions{Name: "a"}, srv)
	p.c.Written(len(p.c.Output()))
	id, err := l.Send([]byte("t"), make([]byte, 5000), false)
	require.NoError(t, err)
	require.NoError(t, l.Abort())
	var out []byte
	for i := 0; i < 20 && (l.pend.on || i == 0); i++ {
		o := p.c.Output()
		out = append(out, o...)
		p.c.Written(len(o))
		p.s.Feed(o, p.now)
		so := p.s.Output()
		p.s.Written(len(so))
		p.c.Feed(so, p.now)
	}
	_, err = l.Send([]byte("u"), []byte("after"), false)
	require.NoError(t, err)
	out = append(out, p.c.Output()...)

	sizes, _ := frameSizes(t, out)
	for _, n := range sizes {
		assert.LessOrEqual(t, n, 512)
	}
	var j frame.Join
	var got []frame.Delivery
	r := frame.NewReader(bytes.NewReader(out))
	var transfers []frame.Transfer
	for {
		f, err := r.Next()
		if err != nil {
			break
		}
		if d, _ := frame.Performative(f.Body); f.IsHeader || d != amqpsax.DescriptorTransfer {
			continue
		}
		tr, payload, err := frame.ParseTransfer(f.Body)
		require.NoError(t, err)
		transfers = append(transfers, tr)
		d, done, err := j.Add(&tr, payload, 0)
		require.NoError(t, err)
		if done || d.Aborted {
			got = append(got, d)
		}
	}
	require.Len(t, got, 2)
	assert.True(t, got[0].Aborted)
	assert.Equal(t, id, got[0].DeliveryID)
	assert.False(t, got[1].Aborted)
	assert.Equal(t, "after", string(got[1].Payload))
	require.Greater(t, len(transfers), 2)
	assert.True(t, transfers[0].More)
	assert.Equal(t, id, transfers[0].DeliveryID.Or(^uint32(0)))
	last := transfers[len(transfers)-2]
	assert.True(t, last.Aborted)
	p.run()
	require.Len(t, srv.got, 2)
	assert.Equal(t, "after", string(srv.got[len(srv.got)-1]))
}

// TestMessageFormat: SetMessageFormat sets the message-format of the
// deliveries sent after it; the receiver sees it.
func TestMessageFormat(t *testing.T) {
	srv := &recorder{}
	var formats []uint32
	srv.onDel = func(l *Link, d Delivery) { formats = append(formats, d.MessageFormat) }
	p, _, l := openPair(t, Config{}, Config{Credit: 10}, LinkOptions{Name: "a"}, srv)
	_, err := l.Send(nil, []byte("a"), true)
	require.NoError(t, err)
	l.SetMessageFormat(0x80013700) // Microsoft's batch format
	assert.Equal(t, uint32(0x80013700), l.MessageFormat())
	_, err = l.Send(nil, []byte("b"), true)
	require.NoError(t, err)
	_, err = l.Send(nil, make([]byte, 200_000), true) // several frames: the first carries it
	require.NoError(t, err)
	p.run()
	assert.Equal(t, []uint32{0, 0x80013700, 0x80013700}, formats)
}
