package client_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/amqptest"
	"github.com/amqpsax/amqpsax/client"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/stream"
	"github.com/stretchr/testify/require"
)

// seenAttach is what a server read in a client's attach.
type seenAttach struct {
	name, source, target       string
	sourceCaps, targetCaps     []string
	sourceExpiry               frame.ExpiryPolicy
	sourceTimeout              uint32
	rcvSecond, sourceDynamic   bool
	properties, desired, offer []byte
	filter                     []byte
}

// recorder is an engine server's handler that records the attaches and
// the message-formats of the deliveries it gets (accepting them), and
// sends one message to each receiving link.
type recorder struct {
	engine.NopHandler
	mu      sync.Mutex
	attach  map[string]seenAttach
	formats []uint32
	states  []frame.DeliveryState // the dispositions of its deliveries, maps copied
	perFlow int                   // messages sent at the first flow (0: 1)
}

func (h *recorder) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	st := d.State
	st.Raw = nil
	st.MessageAnnotations = append(frame.Map(nil), st.MessageAnnotations...)
	st.Error.Info = append(frame.Map(nil), st.Error.Info...)
	st.Error.Condition = append([]byte(nil), st.Error.Condition...)
	h.mu.Lock()
	h.states = append(h.states, st)
	h.mu.Unlock()
}

func syms(s frame.Symbols) []string {
	var out []string
	for b := range s.All() {
		out = append(out, string(b))
	}
	return out
}

func (h *recorder) OnLinkAttach(l *engine.Link) {
	a := l.RemoteAttach()
	var sa seenAttach
	sa.name = string(a.Name)
	if s, ok := a.Source.Get(); ok {
		sa.source, sa.sourceCaps, sa.sourceExpiry, sa.sourceTimeout, sa.sourceDynamic =
			string(s.Address), syms(s.Capabilities), s.ExpiryPolicy, s.Timeout, s.Dynamic
		sa.filter = append([]byte(nil), s.Filter...)
	}
	if t, ok := a.Target.Get(); ok {
		sa.target, sa.targetCaps = string(t.Address), syms(t.Capabilities)
	}
	sa.rcvSecond = a.RcvSettleMode == frame.RcvSecond
	sa.properties = append([]byte(nil), a.Properties...)
	sa.desired = append([]byte(nil), a.DesiredCapabilities...)
	sa.offer = append([]byte(nil), a.OfferedCapabilities...)
	h.mu.Lock()
	h.attach[sa.name] = sa
	h.mu.Unlock()
}

func (h *recorder) OnFlow(l *engine.Link) {
	for i := 0; i < max(h.perFlow, 1) && l.IsSender() && l.Credit() > 0 && l.DeliveryCount() < uint32(max(h.perFlow, 1)); i++ {
		l.Send(nil, dataMsgBytes("hello"), false)
	}
}

func (h *recorder) OnDelivery(l *engine.Link, d engine.Delivery) {
	h.mu.Lock()
	h.formats = append(h.formats, d.MessageFormat)
	h.mu.Unlock()
}

func (h *recorder) seen(name string) seenAttach {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.attach[name]
}

func dataMsgBytes(body string) []byte {
	b, err := dataMsg(body).Append(nil)
	if err != nil {
		panic(err)
	}
	return b
}

// The terminus options reach the peer's attach as go-amqp's do.
func TestLinkOptions(t *testing.T) {
	ctx := testCtx(t)
	h := &recorder{attach: map[string]seenAttach{}}
	url := serveEngine(t, engine.Config{Credit: 100, AutoAccept: true}, h)
	c, err := client.Dial(ctx, url, nil)
	require.NoError(t, err)
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)

	rcv, err := s.NewReceiver(ctx, "src", &client.ReceiverOptions{Name: "r1", TargetAddress: "replies",
		SourceCapabilities: []string{"queue"}, SourceExpiryPolicy: client.ExpiryPolicyLinkDetach, SourceExpiryTimeout: 30})
	require.NoError(t, err)
	require.Equal(t, "r1", rcv.LinkName())
	require.Equal(t, "src", rcv.Address())
	got := h.seen("r1")
	require.Equal(t, "src", got.source)
	require.Equal(t, "replies", got.target)
	require.Equal(t, []string{"queue"}, got.sourceCaps)
	require.Equal(t, client.ExpiryPolicyLinkDetach, got.sourceExpiry)
	require.Equal(t, uint32(30), got.sourceTimeout)
	d, err := rcv.Receive(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, 0, rcv.Prefetched())
	require.NoError(t, d.Accept(ctx))

	snd, err := s.NewSender(ctx, "dst", &client.SenderOptions{SourceAddress: "me", TargetCapabilities: []string{"topic"},
		RequestedReceiverSettleMode: client.ReceiverSettleModeSecond})
	require.NoError(t, err)
	require.NotEmpty(t, snd.LinkName())
	got = h.seen(snd.LinkName())
	require.Equal(t, "me", got.source)
	require.Equal(t, "dst", got.target)
	require.Equal(t, []string{"topic"}, got.targetCaps)
	require.True(t, got.rcvSecond)
	require.NoError(t, snd.Send(ctx, dataMsg("x"), &client.SendOptions{MessageFormat: 0x80013700}))
	require.NoError(t, snd.Send(ctx, dataMsg("y"), nil))
	h.mu.Lock()
	require.Equal(t, []uint32{0x80013700, 0}, h.formats)
	h.mu.Unlock()

	_, err = s.NewReceiver(ctx, "named", &client.ReceiverOptions{DynamicAddress: true})
	require.Error(t, err, "a dynamic source has no address")
}

// A dynamic receiver gets the address of the node the peer made for it
// (package broker's temporary queue), and messages sent there.
func TestDynamicReceiver(t *testing.T) {
	ctx := testCtx(t)
	srv := amqptest.NewServer(t, nil)
	c, err := client.Dial(ctx, srv.URL, nil)
	require.NoError(t, err)
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "", &client.ReceiverOptions{DynamicAddress: true})
	require.NoError(t, err)
	require.NotEmpty(t, rcv.Address())
	snd, err := s.NewSender(ctx, rcv.Address(), nil)
	require.NoError(t, err)
	require.NoError(t, snd.Send(ctx, dataMsg("to the temporary queue"), nil))
	d, err := rcv.Receive(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, "to the temporary queue", string(d.Message.Body.Data[0]))
}

// Reject sends its error's info map, Modify its annotations (a
// dead-letter reason; Service Bus's abandon with properties).
func TestOutcomeFields(t *testing.T) {
	ctx := testCtx(t)
	h := &recorder{attach: map[string]seenAttach{}, perFlow: 2}
	url := serveEngine(t, engine.Config{}, h)
	c, err := client.Dial(ctx, url, nil)
	require.NoError(t, err)
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "src", &client.ReceiverOptions{Credit: 2})
	require.NoError(t, err)
	d1, err := rcv.Receive(ctx, nil)
	require.NoError(t, err)
	d2, err := rcv.Receive(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, d1.Reject(ctx, &client.Error{Condition: "com.microsoft:dead-letter", Description: "poison",
		Info: map[string]any{"DeadLetterReason": "poison", "tries": int64(3)}}))
	require.NoError(t, d2.Modify(ctx, client.ModifyOptions{DeliveryFailed: true, Annotations: map[string]any{"x-opt-note": "later"}}))
	require.NoError(t, rcv.Close(ctx)) // the dispositions went before the detach
	h.mu.Lock()
	defer h.mu.Unlock()
	require.Len(t, h.states, 2)
	require.Equal(t, frame.StateRejected, h.states[0].Type)
	require.Equal(t, "com.microsoft:dead-letter", string(h.states[0].Error.Condition))
	info, err := anyMap(h.states[0].Error.Info)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"DeadLetterReason": "poison", "tries": int64(3)}, info)
	require.Equal(t, frame.StateModified, h.states[1].Type)
	require.True(t, h.states[1].DeliveryFailed)
	ann, err := anyMap(h.states[1].MessageAnnotations)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"x-opt-note": "later"}, ann)
}

// anyMap decodes an encoded map as a message-annotations section.
func anyMap(m frame.Map) (map[string]any, error) {
	return message.AnyMap(append([]byte{0x00, 0x53, 0x72}, m...))
}

// Filters go in the source's filter-set as described values; the
// filters of the peer's answer are read back by LinkSourceFilterValue
// (the engine echoes the source it takes).
func TestFilters(t *testing.T) {
	ctx := testCtx(t)
	h := &recorder{attach: map[string]seenAttach{}}
	url := serveEngine(t, engine.Config{}, h)
	c, err := client.Dial(ctx, url, nil)
	require.NoError(t, err)
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "events", &client.ReceiverOptions{Name: "f", Filters: []client.LinkFilter{
		client.NewSelectorFilter("color = 'red'"),
		client.NewLinkFilter("com.example:epoch", 0x77, int64(7)),
		client.NewLinkFilter("rabbitmq:stream-offset-spec", 0, int64(40)),
	}})
	require.NoError(t, err)
	require.Equal(t, "color = 'red'", rcv.LinkSourceFilterValue("apache.org:selector-filter:string"))
	require.Equal(t, int64(7), rcv.LinkSourceFilterValue("com.example:epoch"))
	require.Nil(t, rcv.LinkSourceFilterValue("none"))
	got := h.seen("f")
	m, err := anyMap(got.filter)
	require.NoError(t, err)
	require.Len(t, m, 3)
	// A code of 0: described by its name, a symbol (go-amqp's way, the
	// one RabbitMQ 4's stream filters are read in).
	require.Equal(t, stream.Described{Descriptor: stream.Symbol("rabbitmq:stream-offset-spec"), Value: int64(40)},
		m["rabbitmq:stream-offset-spec"])
	require.Equal(t, int64(40), rcv.LinkSourceFilterValue("rabbitmq:stream-offset-spec"))
	sel := m["apache.org:selector-filter:string"].(stream.Described)
	require.Equal(t, uint64(0x0000468C00000004), sel.Descriptor)
	require.Equal(t, "color = 'red'", sel.Value)
	_, err = s.NewReceiver(ctx, "events", &client.ReceiverOptions{Filters: []client.LinkFilter{
		client.NewLinkFilter("bad", 1, struct{}{})}})
	require.Error(t, err, "a value of no AMQP type")
}

// settler sends three messages and, as the sender of receiver settle
// mode second, settles each outcome the receiver sends, except those it
// is told to hold.
type settler struct {
	engine.NopHandler
	hold atomic.Bool
	got  chan uint32 // the delivery-ids of outcomes held
}

func (h *settler) OnLinkAttach(l *engine.Link) {
	if l.IsSender() && l.RcvSettleMode() != frame.RcvSecond {
		l.Detach(engine.NewError(frame.CondPreconditionFailed, "receiver settle mode second wanted"))
	}
}

func (h *settler) OnFlow(l *engine.Link) {
	for l.IsSender() && l.Credit() > 0 && l.DeliveryCount() < 3 {
		l.Send(nil, dataMsgBytes("m"), false)
	}
}

func (h *settler) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	if d.Settled || d.State.Type != frame.StateAccepted {
		return
	}
	if h.hold.Load() {
		h.got <- d.ID
		return
	}
	l.Settle(d.ID)
}

// In receiver settle mode second, Accept returns once the sender has
// settled; a lost connection before that is its error.
func TestReceiverSettleModeSecond(t *testing.T) {
	ctx := testCtx(t)
	h := &settler{got: make(chan uint32, 3)}
	url := serveEngine(t, engine.Config{ManualSettle: true}, h)
	c, err := client.Dial(ctx, url, nil)
	require.NoError(t, err)
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "q", &client.ReceiverOptions{Credit: 3, SettlementMode: client.ReceiverSettleModeSecond})
	require.NoError(t, err)
	var ds [3]*client.Delivery
	for i := range ds {
		ds[i], err = rcv.Receive(ctx, nil)
		require.NoError(t, err)
	}
	require.NoError(t, ds[0].Accept(ctx))
	h.hold.Store(true)
	require.ErrorIs(t, ds[1].Accept(short(t)), context.DeadlineExceeded, "not settled by the sender")
	<-h.got
	woke := make(chan error, 1)
	go func() { woke <- ds[2].Accept(ctx) }()
	<-h.got // the outcome is at the sender, which holds it
	require.NoError(t, c.Close())
	err = <-woke
	require.Error(t, err)
}

// AnswerAttach answers every attach with properties {"answered": true}.
func (h *recorder) AnswerAttach(l *engine.Link, src *frame.Source, tgt *frame.Target) *engine.Error {
	var m frame.SymbolMap
	l.SetAnswerFields(m.Bool("answered", true).Map(), frame.AppendSymbols(nil, "answer-offered"), frame.AppendSymbols(nil, "answer-desired", "two"))
	return nil
}

// Properties and capabilities of the open and of attaches go out as
// maps of symbol keys and symbol arrays; the peer's come back through
// Conn.Properties, Sender.Properties and Receiver.Properties, and their
// capabilities through OfferedCapabilities and DesiredCapabilities.
func TestPropertiesAndCapabilities(t *testing.T) {
	ctx := testCtx(t)
	h := &recorder{attach: map[string]seenAttach{}}
	var peer frame.SymbolMap
	var seenOpen struct {
		sync.Mutex
		props, offered, desired []byte
		channelMax              uint16
	}
	url := serveEngine(t, engine.Config{Properties: peer.String("product", "test-server").Map(),
		OfferedCapabilities: frame.AppendSymbols(nil, "ANONYMOUS-RELAY", "SHARED-SUBS")}, &openRecorder{recorder: h, open: func(o *frame.Open) {
		seenOpen.Lock()
		seenOpen.props = append([]byte(nil), o.Properties...)
		seenOpen.offered = append([]byte(nil), o.OfferedCapabilities...)
		seenOpen.desired = append([]byte(nil), o.DesiredCapabilities...)
		seenOpen.channelMax = o.ChannelMax.Or(65535)
		seenOpen.Unlock()
	}})
	c, err := client.Dial(ctx, url, &client.ConnOptions{Properties: map[string]any{"connection_name": "orders", "n": int32(1)},
		OfferedCapabilities: []string{"ANONYMOUS-RELAY"}, DesiredCapabilities: []string{"DELAYED_DELIVERY"}, MaxSessions: 10})
	require.NoError(t, err)
	defer c.Close()
	require.Equal(t, map[string]any{"product": "test-server"}, c.Properties())
	require.Equal(t, []string{"ANONYMOUS-RELAY", "SHARED-SUBS"}, c.OfferedCapabilities())
	require.Nil(t, c.DesiredCapabilities())
	seenOpen.Lock()
	props, err := anyMap(seenOpen.props)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"connection_name": "orders", "n": int32(1)}, props)
	require.Equal(t, []string{"ANONYMOUS-RELAY"}, syms(seenOpen.offered))
	require.Equal(t, []string{"DELAYED_DELIVERY"}, syms(seenOpen.desired))
	require.Equal(t, uint16(9), seenOpen.channelMax)
	seenOpen.Unlock()

	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "q", &client.ReceiverOptions{Name: "pr", Properties: map[string]any{"com.microsoft:epoch": int64(3)},
		DesiredCapabilities: []string{"com.microsoft:session-filter"}})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"answered": true}, rcv.Properties())
	require.Equal(t, []string{"answer-offered"}, rcv.OfferedCapabilities())
	require.Equal(t, []string{"answer-desired", "two"}, rcv.DesiredCapabilities())
	got := h.seen("pr")
	m, err := anyMap(got.properties)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"com.microsoft:epoch": int64(3)}, m)
	require.Equal(t, []string{"com.microsoft:session-filter"}, syms(got.desired))
	snd, err := s.NewSender(ctx, "q", &client.SenderOptions{Name: "ps", Properties: map[string]any{"paired": true}})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"answered": true}, snd.Properties())
	require.Equal(t, []string{"answer-offered"}, snd.OfferedCapabilities())
	require.Equal(t, []string{"answer-desired", "two"}, snd.DesiredCapabilities())
	m, err = anyMap(h.seen("ps").properties)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"paired": true}, m)
}

// openRecorder is a recorder that also hands the client's open to open.
type openRecorder struct {
	*recorder
	open func(*frame.Open)
}

func (h *openRecorder) OnConnectionOpen(c *engine.Conn) { h.open(c.RemoteOpen()) }

// timeouter sends a message, settles it on its own as released (as a
// consumer time-out does), then sends a second.
type timeouter struct{ engine.NopHandler }

func (h *timeouter) OnFlow(l *engine.Link) {
	if !l.IsSender() || l.DeliveryCount() > 0 || l.Credit() < 2 {
		return
	}
	id, err := l.Send(nil, dataMsgBytes("held too long"), false)
	if err != nil {
		return
	}
	l.Dispose(id, frame.DeliveryState{Type: frame.StateReleased}, true)
	l.Send(nil, dataMsgBytes("next"), false)
}

// A delivery the sender settles on its own (RabbitMQ 4's consumer
// time-out) is surfaced: settling it returns *PeerSettledError with the
// sender's state, and sends nothing.
func TestPeerSettled(t *testing.T) {
	ctx := testCtx(t)
	url := serveEngine(t, engine.Config{}, &timeouter{})
	c, err := client.Dial(ctx, url, nil)
	require.NoError(t, err)
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "q", &client.ReceiverOptions{Credit: 2})
	require.NoError(t, err)
	d1, err := rcv.Receive(ctx, nil)
	require.NoError(t, err)
	d2, err := rcv.Receive(ctx, nil) // after the sender's disposition of d1
	require.NoError(t, err)
	var pe *client.PeerSettledError
	require.ErrorAs(t, d1.Accept(ctx), &pe)
	require.Equal(t, frame.StateReleased, pe.State)
	require.NoError(t, d2.Accept(ctx))
}

// flowPropsServer answers a receiver's attach with a flow carrying
// link-state properties, as RabbitMQ 4.3 tells a single-active consumer
// that it is active.
type flowPropsServer struct{ engine.NopHandler }

func (flowPropsServer) OnLinkAttach(l *engine.Link) {
	if l.IsSender() {
		var m frame.SymbolMap
		l.SetFlowProperties(m.Bool("rabbitmq:active", true).Map())
		l.SetAvailable(0, true)
	}
}

// The properties of a flow from the sender reach Receiver.FlowProperties
// (engine: SetFlowProperties at one end, FlowProperties during OnFlow at
// the other).
func TestFlowProperties(t *testing.T) {
	ctx := testCtx(t)
	url := serveEngine(t, engine.Config{}, flowPropsServer{})
	c, err := client.Dial(ctx, url, nil)
	require.NoError(t, err)
	defer c.Close()
	s, err := c.NewSession(ctx, nil)
	require.NoError(t, err)
	rcv, err := s.NewReceiver(ctx, "q", &client.ReceiverOptions{Credit: -1})
	require.NoError(t, err)
	deadline := time.Now().Add(10 * time.Second)
	for rcv.FlowProperties() == nil && time.Now().Before(deadline) {
		// the flow follows the attach's answer in the same write: one
		// round trip on the connection makes sure it has been read
		require.NoError(t, rcv.IssueCredit(1))
	}
	require.Equal(t, map[string]any{"rabbitmq:active": true}, rcv.FlowProperties())
}
