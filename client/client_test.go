package client_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/require"
)

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dataMsg(body string) *message.Message {
	return &message.Message{
		Properties: &message.Properties{MessageID: message.StringID(body)},
		Body:       message.Body{Kind: message.BodyData, Data: [][]byte{[]byte(body)}},
	}
}

func dial(t testing.TB, b *testBroker) *client.Conn {
	c, err := client.Dial(testCtx(t), b.url(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestSendReceive(t *testing.T) {
	b := startBroker(t)
	ctx := testCtx(t)
	c := dial(t, b)
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, "q/1", nil)
	require.NoError(t, err)
	const n = 300
	for i := range n {
		require.NoError(t, snd.Send(ctx, dataMsg(fmt.Sprint("m", i)), nil))
	}
	rcv, err := s.NewReceiver(ctx, "q/1", &client.ReceiverOptions{Credit: 50})
	require.NoError(t, err)
	for i := range n {
		d, err := rcv.Receive(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprint("m", i), string(d.Message.Body.Data[0]))
		require.NoError(t, d.Accept(ctx))
	}
	require.NoError(t, rcv.Close(ctx))
	require.NoError(t, snd.Close(ctx))
	require.NoError(t, s.Close(ctx))
	require.NoError(t, c.Close())
}
