package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/ws"
	"github.com/stretchr/testify/require"
)

// TestWebSocket: with -ws the broker serves AMQP over WebSockets beside
// TCP; the client package dials its ws:// URL (ConnOptions.Dialer:
// ws.Dialer), with SASL PLAIN from the URL, and sends and receives 1,000
// messages through it.
func TestWebSocket(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	wsAddr := ln.Addr().String()
	ln.Close()
	start(t, "-user", "alice:secret", "-ws", wsAddr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var c *client.Conn
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		// -ws listens as the broker starts: wait for it.
		if c, err = client.Dial(ctx, "ws://alice:secret@"+wsAddr+"/", &client.ConnOptions{Dialer: ws.Dialer(nil), AllowInsecurePlain: true}); err == nil || time.Now().After(deadline) {
			break
		}
	}
	require.NoError(t, err)
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, "ws-queue", nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "ws-queue", &client.ReceiverOptions{Credit: 100})
	require.NoError(t, err)
	const n = 1000
	go func() {
		for i := range n {
			m := &message.Message{Body: message.Body{Kind: message.BodyData, Data: [][]byte{fmt.Appendf(nil, "ws %d", i)}}}
			if err := snd.Send(ctx, m, nil); err != nil {
				return
			}
		}
	}()
	for i := range n {
		d, err := rcv.Receive(ctx, nil)
		require.NoError(t, err)
		require.True(t, bytes.Contains(d.Payload(), fmt.Appendf(nil, "ws %d", i)), "message %d", i)
		require.NoError(t, d.Accept(ctx))
	}
	_, err = client.Dial(ctx, "ws://alice:wrong@"+wsAddr+"/", &client.ConnOptions{Dialer: ws.Dialer(nil), AllowInsecurePlain: true})
	require.Error(t, err, "a wrong password is refused over the WebSocket too")
	t.Logf("%d messages through amqpbroker -ws by the client over ws://", n)
}
