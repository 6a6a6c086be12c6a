package client_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/require"
)

// A peer that breaks the protocol and then falls silent: the engine ends
// the link or session and reports it when its detach or end is written,
// so a blocked Receive returns the engine's error at once instead of
// waiting for an answer that never comes.

// faultyServer runs an engine server over one accepted connection by
// hand, so that it can write a frame past its engine: at the attach of
// its attaches-th link, bad gives the frame (on that link); fire writes
// it after what the engine wrote, and from then on the server writes
// nothing and feeds its engine nothing (it reads and drops what the
// client sends). stop cuts the connection (before the client's Close,
// which would otherwise wait CloseWait for a close the server never
// answers).
func faultyServer(t *testing.T, attaches int, bad func(l *engine.Link) []byte) (addr string, fire, stop func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var nc net.Conn
	h := &faultyHandler{attaches: attaches, bad: bad}
	silent := false
	stop = func() {
		ln.Close()
		mu.Lock()
		if nc != nil {
			nc.Close()
		}
		mu.Unlock()
	}
	t.Cleanup(stop)
	fire = func() {
		mu.Lock()
		defer mu.Unlock()
		require.NotNil(t, h.inject, "fired before the attach")
		nc.Write(h.inject)
		silent = true
	}
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		mu.Lock()
		nc = conn
		mu.Unlock()
		c := engine.NewServer(engine.Config{Credit: 10}, h)
		buf := make([]byte, 64<<10)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			mu.Lock()
			if !silent {
				c.Feed(buf[:n], time.Now())
				if out := c.Output(); len(out) > 0 {
					conn.Write(out)
					c.Written(len(out))
				}
			}
			mu.Unlock()
		}
	}()
	return ln.Addr().String(), fire, stop
}

type faultyHandler struct {
	engine.NopHandler
	attaches int
	bad      func(l *engine.Link) []byte
	inject   []byte
}

func (h *faultyHandler) OnLinkAttach(l *engine.Link) {
	if h.attaches--; h.attaches == 0 {
		h.inject = h.bad(l)
	}
}

// rawFrame is an AMQP frame on ch whose body appendBody writes.
func rawFrame(ch uint16, appendBody func([]byte) []byte) []byte {
	b := frame.BeginFrame(nil, frame.TypeAMQP, ch)
	b = appendBody(b)
	return frame.EndFrame(b, 0)
}

// receiveErr runs Receive with no deadline of its own, has the server
// misbehave, and returns Receive's error; the test's generous guard only
// turns a hang into a failure.
func receiveErr(t *testing.T, rcv *client.Receiver, fire func()) error {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := rcv.Receive(context.Background(), nil)
		errc <- err
	}()
	fire()
	select {
	case err := <-errc:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Receive still blocked: the engine's detach was never reported")
		return nil
	}
}

// A transfer beyond credit: the receiver's link is detached with
// amqp:link:transfer-limit-exceeded, and Receive returns that error
// though the peer never answers the detach.
func TestReceiveTransferBeyondCredit(t *testing.T) {
	addr, fire, stop := faultyServer(t, 1, func(l *engine.Link) []byte {
		return rawFrame(l.Session().Channel(), func(b []byte) []byte {
			b = frame.AppendTransfer(b, frame.Transfer{Handle: l.Handle(), DeliveryID: frame.Some[uint32](0),
				DeliveryTag: []byte{0}, MessageFormat: frame.Some[uint32](0), Settled: true})
			return append(b, 0x00, 0x53, 0x77, 0x40)
		})
	})
	c, err := client.Dial(testCtx(t), addr, nil)
	require.NoError(t, err)
	defer c.Close()
	defer stop()
	s, err := c.NewSession(testCtx(t), nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(testCtx(t), "q", &client.ReceiverOptions{Credit: -1}) // no credit granted
	require.NoError(t, err)
	err = receiveErr(t, rcv, fire)
	var e *client.Error
	require.ErrorAs(t, err, &e, "%v", err)
	require.Equal(t, "amqp:link:transfer-limit-exceeded", e.Condition)
	require.Equal(t, client.ScopeLink, e.Scope)
	require.Contains(t, err.Error(), "transfer without link credit")
	require.Equal(t, err, rcv.Err())
}

// A session fault (a flow for a handle not attached): every link of the
// session ends with amqp:session:unattached-handle at once, the receiver
// and the sender alike.
func TestSessionFaultEndsItsLinks(t *testing.T) {
	addr, fire, stop := faultyServer(t, 2, func(l *engine.Link) []byte {
		return rawFrame(l.Session().Channel(), func(b []byte) []byte {
			return frame.AppendFlow(b, frame.Flow{NextIncomingID: frame.Some[uint32](0), IncomingWindow: 100, OutgoingWindow: 100,
				Handle: frame.Some[uint32](77), DeliveryCount: frame.Some[uint32](0), LinkCredit: frame.Some[uint32](1)})
		})
	})
	c, err := client.Dial(testCtx(t), addr, nil)
	require.NoError(t, err)
	defer c.Close()
	defer stop()
	s, err := c.NewSession(testCtx(t), nil)
	require.NoError(t, err)
	snd, err := s.NewSender(testCtx(t), "q", nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(testCtx(t), "q", &client.ReceiverOptions{Credit: -1})
	require.NoError(t, err)
	err = receiveErr(t, rcv, fire)
	var e *client.Error
	require.ErrorAs(t, err, &e, "%v", err)
	require.Equal(t, "amqp:session:unattached-handle", e.Condition)
	require.Equal(t, err, rcv.Err())
	// The sender of the session has ended with it: Send fails at once.
	err = snd.Send(testCtx(t), dataMsg("m"), nil) // the deadline only guards against a hang
	require.Error(t, err)
	require.True(t, errors.As(err, &e) && e.Condition == "amqp:session:unattached-handle", "%v", err)
}
