package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The sink: an AMQP 1.0 server written on frame's encoders alone
// (frame.Reader, frame.Append*, frame.Assembler), the way a new user
// writes one, for a go-amqp v1.7.0 sender. Every field whose zero means
// something is sent as zero where the protocol allows it: channel-max 0,
// remote-channel 0, handle 0, handle-max 0, delivery-count 0, link-credit
// 0 (then top-ups), delivery-id 0; go-amqp must read each as sent.

const (
	sinkMessages  = 1000
	sinkCredit    = 100  // link-credit per top-up
	sinkWindow    = 5000 // the sink's session incoming-window
	sinkFrameSize = 512  // the sink's max-frame-size: larger messages take several transfers
)

// sinkBody is the payload of message i: its number, then a filler of
// i%7 × 150 bytes, so that some take one transfer and some three.
func sinkBody(i int) []byte {
	return append([]byte(fmt.Sprintf("message %d ", i)), bytes.Repeat([]byte{'x'}, i%7*150)...)
}

// sinkConn is one connection of the sink. Its methods return an error for
// anything the peer does that the sink did not allow.
type sinkConn struct {
	nc  net.Conn
	r   *frame.Reader
	out []byte
	asm frame.Assembler

	channel     uint16 // the peer's channel for the session
	peerNextOut uint32 // the peer's next-outgoing-id from its begin
	frames      uint32 // transfer frames received: next-incoming-id is peerNextOut + frames
	received    uint32 // deliveries received: the link's delivery-count
	limit       uint32 // delivery-count + link-credit of the last flow
	flows       int
	zeroFlows   int
	bodies      map[string]bool
	detached    bool
	ended       bool
}

// write sends one frame whose body body appends.
func (c *sinkConn) write(typ uint8, channel uint16, body func([]byte) []byte) error {
	b := frame.BeginFrame(c.out[:0], typ, channel)
	b = frame.EndFrame(body(b), 0)
	c.out = b
	_, err := c.nc.Write(b)
	return err
}

// flow grants credit more deliveries beyond those received, on handle 0.
func (c *sinkConn) flow(credit uint32) error {
	c.limit = c.received + credit
	c.flows++
	if credit == 0 {
		c.zeroFlows++
	}
	return c.write(frame.TypeAMQP, 0, func(b []byte) []byte {
		return frame.AppendFlow(b, frame.Flow{
			NextIncomingID: frame.Some(c.peerNextOut + c.frames),
			IncomingWindow: sinkWindow,
			NextOutgoingID: 0,
			OutgoingWindow: sinkWindow,
			Handle:         frame.Some[uint32](0),
			DeliveryCount:  frame.Some(c.received),
			LinkCredit:     frame.Some(credit),
		})
	})
}

// serve runs the connection until the peer's close has been answered.
func (c *sinkConn) serve() error {
	for {
		f, err := c.r.Next()
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		if f.IsHeader {
			if err := c.header(f.Header); err != nil {
				return err
			}
			continue
		}
		if f.IsHeartbeat() {
			continue
		}
		done, err := c.frame(f)
		if err != nil {
			return fmt.Errorf("frame at offset %d: %w", f.Offset, err)
		}
		if done {
			return nil
		}
	}
}

func (c *sinkConn) header(h frame.ProtocolHeader) error {
	switch h {
	case frame.HeaderSASL:
		if _, err := c.nc.Write(frame.AppendProtocolHeader(nil, frame.HeaderSASL)); err != nil {
			return err
		}
		return c.write(frame.TypeSASL, 0, func(b []byte) []byte {
			return frame.AppendSASLMechanisms(b, frame.SASLMechanisms{Mechanisms: frame.AppendSymbols(nil, "ANONYMOUS")})
		})
	case frame.HeaderAMQP:
		_, err := c.nc.Write(frame.AppendProtocolHeader(nil, frame.HeaderAMQP))
		return err
	}
	return fmt.Errorf("protocol header %v", h)
}

// frame handles one frame; done reports the peer's close, answered.
func (c *sinkConn) frame(f frame.Frame) (done bool, err error) {
	d, err := frame.Performative(f.Body)
	if err != nil {
		return false, err
	}
	switch d {
	case amqpsax.DescriptorSASLInit:
		si, err := frame.ParseSASLInit(f.Body)
		if err != nil {
			return false, err
		}
		if string(si.Mechanism) != "ANONYMOUS" {
			return false, fmt.Errorf("sasl-init mechanism %q", si.Mechanism)
		}
		return false, c.write(frame.TypeSASL, 0, func(b []byte) []byte {
			return frame.AppendSASLOutcome(b, frame.SASLOutcome{Code: frame.SASLOk})
		})
	case amqpsax.DescriptorOpen:
		if _, err := frame.ParseOpen(f.Body); err != nil {
			return false, err
		}
		return false, c.write(frame.TypeAMQP, 0, func(b []byte) []byte {
			return frame.AppendOpen(b, frame.Open{ContainerID: []byte("amqpsax-sink"),
				MaxFrameSize: frame.Some[uint32](sinkFrameSize), ChannelMax: frame.Some[uint16](0)})
		})
	case amqpsax.DescriptorBegin:
		bg, err := frame.ParseBegin(f.Body)
		if err != nil {
			return false, err
		}
		if bg.RemoteChannel.Present() {
			return false, fmt.Errorf("begin with remote-channel %v from the initiating end", bg.RemoteChannel)
		}
		c.channel, c.peerNextOut = f.Channel, bg.NextOutgoingID
		return false, c.write(frame.TypeAMQP, 0, func(b []byte) []byte {
			return frame.AppendBegin(b, frame.Begin{RemoteChannel: frame.Some(f.Channel), NextOutgoingID: 0,
				IncomingWindow: sinkWindow, OutgoingWindow: sinkWindow, HandleMax: frame.Some[uint32](0)})
		})
	case amqpsax.DescriptorAttach:
		a, err := frame.ParseAttach(f.Body)
		if err != nil {
			return false, err
		}
		if a.Role != frame.RoleSender || a.Handle != 0 {
			return false, fmt.Errorf("attach of a %v on handle %d", a.Role, a.Handle)
		}
		if n, ok := a.InitialDeliveryCount.Get(); !ok || n != 0 {
			return false, fmt.Errorf("initial-delivery-count %v", a.InitialDeliveryCount)
		}
		err = c.write(frame.TypeAMQP, 0, func(b []byte) []byte {
			return frame.AppendAttach(b, frame.Attach{Name: a.Name, Handle: 0, Role: frame.RoleReceiver,
				SndSettleMode: a.SndSettleMode, RcvSettleMode: frame.RcvFirst, Source: a.Source, Target: a.Target})
		})
		if err != nil {
			return false, err
		}
		// No credit at first: the sender must wait for the top-up.
		if err := c.flow(0); err != nil {
			return false, err
		}
		time.Sleep(20 * time.Millisecond)
		return false, c.flow(sinkCredit)
	case amqpsax.DescriptorTransfer:
		return false, c.transfer(f)
	case amqpsax.DescriptorDetach:
		dt, err := frame.ParseDetach(f.Body)
		if err != nil {
			return false, err
		}
		if dt.Handle != 0 || !dt.Closed {
			return false, fmt.Errorf("detach of handle %d, closed %v", dt.Handle, dt.Closed)
		}
		c.detached = true
		return false, c.write(frame.TypeAMQP, 0, func(b []byte) []byte {
			return frame.AppendDetach(b, frame.Detach{Handle: 0, Closed: true})
		})
	case amqpsax.DescriptorEnd:
		if _, err := frame.ParseEnd(f.Body); err != nil {
			return false, err
		}
		c.ended = true
		return false, c.write(frame.TypeAMQP, 0, func(b []byte) []byte { return frame.AppendEnd(b, frame.End{}) })
	case amqpsax.DescriptorClose:
		if _, err := frame.ParseClose(f.Body); err != nil {
			return false, err
		}
		return true, c.write(frame.TypeAMQP, 0, func(b []byte) []byte { return frame.AppendClose(b, frame.Close{}) })
	case amqpsax.DescriptorFlow:
		_, err := frame.ParseFlow(f.Body)
		return false, err
	}
	return false, fmt.Errorf("unexpected %v", d)
}

// transfer joins the message of a delivery, checks it was within credit
// and the session window, settles it, and tops the credit up when it is
// used up (with a flow of credit 0 first halfway).
func (c *sinkConn) transfer(f frame.Frame) error {
	t, payload, err := frame.ParseTransfer(f.Body)
	if err != nil {
		return err
	}
	if f.Channel != c.channel || t.Handle != 0 {
		return fmt.Errorf("transfer on channel %d, handle %d", f.Channel, t.Handle)
	}
	if c.frames >= sinkWindow {
		return errors.New("transfer beyond the session's incoming-window")
	}
	c.frames++
	if id, ok := t.DeliveryID.Get(); ok {
		if c.received >= c.limit {
			return fmt.Errorf("delivery %d beyond the link-credit (delivery-count %d)", id, c.received)
		}
		if id != c.received {
			return fmt.Errorf("delivery-id %d, want %d", id, c.received)
		}
		if mf, ok := t.MessageFormat.Get(); ok && mf != 0 {
			return fmt.Errorf("message-format %d", mf)
		}
	}
	dl, done, err := c.asm.Add(f.Channel, t, payload)
	if err != nil || !done {
		return err
	}
	s, err := message.Scan(dl.Payload)
	if err != nil {
		return err
	}
	var body []byte
	for v, err := range message.BodyValues(s.Body) {
		if err != nil {
			return err
		}
		body = append(body, v.Bytes()...)
	}
	c.bodies[string(body)] = true
	id := dl.DeliveryID
	c.received++
	err = c.write(frame.TypeAMQP, 0, func(b []byte) []byte {
		d := frame.Disposition{Role: frame.RoleReceiver, First: id, Settled: true,
			State: frame.DeliveryState{Type: frame.StateAccepted}}
		if id%2 == 0 {
			d.Last = frame.Some(id) // a range of one, written out
		}
		return frame.AppendDisposition(b, d)
	})
	if err != nil || c.received != c.limit || c.received == sinkMessages {
		return err
	}
	if c.received == sinkMessages/2 {
		if err := c.flow(0); err != nil {
			return err
		}
	}
	return c.flow(sinkCredit)
}

// sink listens on 127.0.0.1 and serves each connection; results come on
// the returned channel, one per connection.
func startSink(t *testing.T) (addr string, results <-chan *sinkConn, errs <-chan error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	res, errc := make(chan *sinkConn, 4), make(chan error, 4)
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer nc.Close()
				_ = nc.SetDeadline(time.Now().Add(2 * time.Minute))
				c := &sinkConn{nc: nc, r: frame.NewReader(nc), bodies: map[string]bool{}}
				c.r.MaxFrameSize = sinkFrameSize
				err := c.serve()
				// After its close, the peer closes the socket.
				if err == nil {
					// (or resets it: go-amqp sometimes closes with
					// unread bytes in its buffer, which is a reset)
					if _, rerr := c.r.Next(); rerr != io.EOF && !errors.Is(rerr, net.ErrClosed) && !errors.Is(rerr, syscall.ECONNRESET) {
						err = fmt.Errorf("after close: %v", rerr)
					}
				}
				res <- c
				errc <- err
			}()
		}
	}()
	return ln.Addr().String(), res, errc
}

// TestSinkGoAMQP: a go-amqp v1.7.0 sender sends 1,000 messages, each
// awaiting its settlement, to the sink; then detaches, ends and closes.
// go-amqp reads every field the sink writes as written: the
// remote-channel 0 of its begin (else "nil RemoteChannel"), the handle 0,
// delivery-count 0 and next-incoming-id of its flows (else a session flow,
// a block, or a refused session), the link-credit 0 then the top-ups (no
// transfer beyond the credit), and channel-max 0: a second session is
// refused by go-amqp itself, naming channel max 0.
func TestSinkGoAMQP(t *testing.T) {
	addr, results, errs := startSink(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	conn, err := amqp.Dial(ctx, "amqp://"+addr, &amqp.ConnOptions{SASLType: amqp.SASLTypeAnonymous(), ContainerID: "go-amqp-sender"})
	require.NoError(t, err)
	sess, err := conn.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := sess.NewSender(ctx, "sink", nil)
	require.NoError(t, err)
	for i := range sinkMessages {
		require.NoError(t, snd.Send(ctx, amqp.NewMessage(sinkBody(i)), nil), "message %d", i)
	}
	require.NoError(t, snd.Close(ctx))
	require.NoError(t, sess.Close(ctx))
	require.NoError(t, conn.Close())

	c := <-results
	require.NoError(t, <-errs)
	assert.Equal(t, uint32(sinkMessages), c.received)
	assert.Len(t, c.bodies, sinkMessages)
	for i := range sinkMessages {
		if !c.bodies[string(sinkBody(i))] {
			t.Fatalf("message %d not received", i)
		}
	}
	assert.Greater(t, c.frames, uint32(sinkMessages), "some messages took several transfers")
	assert.Equal(t, 2, c.zeroFlows, "flows of link-credit 0")
	assert.Equal(t, sinkMessages/sinkCredit+2, c.flows)
	assert.True(t, c.detached && c.ended)
	t.Logf("go-amqp sent %d messages in %d transfers; the sink sent %d flows (%d of credit 0)",
		c.received, c.frames, c.flows, c.zeroFlows)

	// channel-max 0: go-amqp allows one session only, and says so.
	conn, err = amqp.Dial(ctx, "amqp://"+addr, &amqp.ConnOptions{SASLType: amqp.SASLTypeAnonymous()})
	require.NoError(t, err)
	_, err = conn.NewSession(ctx, nil)
	require.NoError(t, err)
	_, err = conn.NewSession(ctx, nil)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "channel max (0)"), "second session: %v", err)
	<-results
	require.NoError(t, <-errs)
}
