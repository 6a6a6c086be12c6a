package client_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/amqpsax/amqpsax/amqptest"
	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/require"
)

// responder is a request/response node on an engine server: each
// request is answered, on the server's link to the client's reply
// receiver, with its body and "-reply", correlated to its message-id.
// The reply link is found by the request's reply-to: the target address
// of the client's receiver, or, for "$me", the receiver paired with the
// request's link by name (RabbitMQ's /management).
type responder struct {
	engine.NopHandler
	mu     sync.Mutex
	byAddr map[string]*engine.Link
	byName map[string]*engine.Link
	paired map[string]bool           // link name → attach properties had paired: true
	pairAt map[string]string         // link name → the client's address of a paired link: its sender's source, its receiver's target
	queued map[*engine.Link][][]byte // replies waiting for credit
	// answer, when set, makes the reply (its correlation-id is set
	// here); else the request's body and "-reply" is.
	answer func(req *message.Message) *message.Message
}

// flush sends the replies queued for l while it has credit.
func (h *responder) flush(l *engine.Link) {
	q := h.queued[l]
	for len(q) > 0 && l.Credit() > 0 {
		if _, err := l.Send(nil, q[0], true); err != nil {
			break
		}
		q = q[1:]
	}
	h.queued[l] = q
}

func (h *responder) OnFlow(l *engine.Link) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.flush(l)
}

func (h *responder) OnLinkAttach(l *engine.Link) {
	a := l.RemoteAttach()
	name := string(a.Name)
	h.mu.Lock()
	defer h.mu.Unlock()
	if m, err := anyMap(a.Properties); err == nil && m["paired"] == true {
		h.paired[name] = true
		// As RabbitMQ's /management: the two halves of a pair name one
		// address at the client's end, else the second is refused.
		var at string
		if src, ok := a.Source.Get(); ok && !l.IsSender() {
			at = string(src.Address)
		} else if tgt, ok := a.Target.Get(); ok && l.IsSender() {
			at = string(tgt.Address)
		}
		if first, ok := h.pairAt[name]; ok && first != at {
			l.Detach(engine.NewError(frame.CondPreconditionFailed, "the halves of a link pair name "+first+" and "+at))
			return
		}
		h.pairAt[name] = at
	}
	if !l.IsSender() {
		l.KeepCredit(500)
		return
	}
	if t, ok := a.Target.Get(); ok {
		h.byAddr[string(t.Address)] = l
	}
	h.byName[name] = l
}

func (h *responder) OnDelivery(l *engine.Link, d engine.Delivery) {
	var m message.Message
	if err := m.Decode(d.Payload); err != nil {
		d.Reject(engine.NewError(frame.CondDecodeError, err.Error()))
		return
	}
	if !d.Settled {
		d.Accept()
	}
	h.mu.Lock()
	out := h.byAddr[string(m.Properties.ReplyTo)]
	if string(m.Properties.ReplyTo) == "$me" {
		out = h.byName[string(l.RemoteAttach().Name)]
	}
	defer h.mu.Unlock()
	if out == nil {
		return // nowhere to reply
	}
	var reply *message.Message
	if h.answer != nil {
		reply = h.answer(&m)
		if reply.Properties == nil {
			reply.Properties = &message.Properties{}
		}
		reply.Properties.CorrelationID = m.Properties.MessageID
	} else {
		reply = &message.Message{Properties: &message.Properties{CorrelationID: m.Properties.MessageID},
			Body: message.Body{Kind: message.BodyData, Data: [][]byte{append(append([]byte(nil), m.Body.Data[0]...), "-reply"...)}}}
	}
	b, err := reply.Append(nil)
	if err != nil {
		panic(err)
	}
	h.queued[out] = append(h.queued[out], b)
	h.flush(out)
}

func newResponder() *responder {
	return &responder{byAddr: map[string]*engine.Link{}, byName: map[string]*engine.Link{}, paired: map[string]bool{},
		pairAt: map[string]string{}, queued: map[*engine.Link][][]byte{}}
}

// Requests in flight at once on one Requester each get their own reply,
// matched by correlation-id, with a reply address (Azure's $cbs way) and
// with paired links, settled requests and reply-to "$me" (RabbitMQ 4's
// /management way).
func TestRequester(t *testing.T) {
	ctx := testCtx(t)
	h := newResponder()
	url := serveEngine(t, engine.Config{}, h)
	c, err := client.Dial(ctx, url, nil)
	require.NoError(t, err)
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		opts *client.RequesterOptions
	}{
		{"reply address", nil},
		{"paired", &client.RequesterOptions{Name: "management-link-pair", Paired: true, Settled: true, ReplyTo: "$me"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := s.NewRequester(ctx, "$management", tc.opts)
			require.NoError(t, err)
			const n = 200
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					req := dataMsg(fmt.Sprint("req-", i))
					req.Properties.Subject = []byte("GET")
					reply, err := r.Request(ctx, req)
					if err != nil {
						t.Error(err)
						return
					}
					if got, want := string(reply.Body.Data[0]), fmt.Sprint("req-", i, "-reply"); got != want {
						t.Errorf("reply %q to request %d", got, i)
					}
					if string(req.Properties.MessageID.Bytes) != fmt.Sprint("req-", i) || req.Properties.ReplyTo != nil {
						t.Errorf("the request was changed")
					}
				}()
			}
			wg.Wait()
			if tc.opts != nil {
				h.mu.Lock()
				require.True(t, h.paired["management-link-pair"])
				h.mu.Unlock()
			}
			require.NoError(t, r.Close(ctx))
			_, err = r.Request(ctx, dataMsg("after close"))
			require.ErrorIs(t, err, client.ErrClosed)
		})
	}
}

// A Request whose reply does not come returns at ctx's end, and the
// Requester goes on.
func TestRequesterNoReply(t *testing.T) {
	ctx := testCtx(t)
	h := newResponder()
	url := serveEngine(t, engine.Config{}, h)
	c, err := client.Dial(ctx, url, nil)
	require.NoError(t, err)
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	r, err := s.NewRequester(ctx, "node", &client.RequesterOptions{ReplyTo: "nowhere"})
	require.NoError(t, err)
	_, err = r.Request(short(t), dataMsg("lost"))
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// Through package broker: replies come on a dynamic node (a temporary
// queue) that the responder sends to by the request's reply-to.
func TestRequesterBroker(t *testing.T) {
	ctx := testCtx(t)
	srv := amqptest.NewServer(t, nil)
	c, err := client.Dial(ctx, srv.URL, nil)
	require.NoError(t, err)
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	r, err := s.NewRequester(ctx, "requests", &client.RequesterOptions{DynamicReply: true})
	require.NoError(t, err)
	require.NotEmpty(t, r.ReplyTo())

	in, err := s.NewReceiver(ctx, "requests", &client.ReceiverOptions{Credit: 10})
	require.NoError(t, err)
	out, err := s.NewSender(ctx, r.ReplyTo(), nil)
	require.NoError(t, err)
	go func() {
		for {
			d, err := in.Receive(ctx, nil)
			if err != nil {
				return
			}
			d.Accept(ctx)
			reply := dataMsg(string(d.Message.Body.Data[0]) + "-reply")
			reply.Properties.CorrelationID = d.Message.Properties.MessageID
			require.Equal(t, r.ReplyTo(), string(d.Message.Properties.ReplyTo))
			if out.Send(ctx, reply, nil) != nil {
				return
			}
		}
	}()
	for i := range 20 {
		reply, err := r.Request(ctx, dataMsg(fmt.Sprint("q", i)))
		require.NoError(t, err)
		require.Equal(t, fmt.Sprint("q", i, "-reply"), string(reply.Body.Data[0]))
	}
	require.NoError(t, in.Close(ctx))
}
