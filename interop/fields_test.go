package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"sync"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fields of the open and attach that services read (properties,
// offered and desired capabilities, a source's filter and address, a
// target's reply address, dynamic-node properties, max-message-size),
// between package engine and real peers, both ways: Qpid Proton's python
// binding as a client of the engine and as its server, and
// Azure/go-amqp v1.7.0 as a client of the engine. Each connection runs
// through a Recorder, and what the engine hands out (Conn.RemoteOpen,
// Link.RemoteAttach) is checked byte for byte against the frames the
// peer wrote, then as values against what the peer was told to send;
// what the peer read of the engine's is checked as values.

// The engine's fields, as a server and as a client.
var (
	engineProps = (&frame.SymbolMap{}).String("product", "amqpsax-fields").Symbol("x-kind", "engine").Long("x-n", 11).Map()
	engineOffer = frame.Symbols(frame.AppendSymbols(nil, "ANONYMOUS-RELAY", "x-engine-offer"))
	engineWant  = frame.Symbols(frame.AppendSymbols(nil, "x-engine-want"))
	selector    = (&frame.SymbolMap{}).Selector("color = 'red'").Map()
)

// answerProps are the properties of the engine server's answer to the
// link named name.
func answerProps(name string) frame.Map {
	return (&frame.SymbolMap{}).String("answer", "engine-"+name).Map()
}

// seenOpen and seenAttach are copies of what the engine read of the peer.
type seenOpen struct {
	props, offered, desired []byte
}

type seenAttach struct {
	props, offered, desired []byte
	src                     frame.Source // its byte slices copied
	tgt                     frame.Target
	maxMessage              uint64
}

func copyOpen(o *frame.Open) seenOpen {
	return seenOpen{bytes.Clone(o.Properties), bytes.Clone(o.OfferedCapabilities), bytes.Clone(o.DesiredCapabilities)}
}

func copyAttach(l *engine.Link) seenAttach {
	a := l.RemoteAttach()
	src, tgt := *l.RemoteSource(), *l.RemoteTarget()
	src.Address, src.Filter, src.DynamicNodeProperties, src.Capabilities = bytes.Clone(src.Address), bytes.Clone(src.Filter),
		bytes.Clone(src.DynamicNodeProperties), bytes.Clone(src.Capabilities)
	tgt.Address, tgt.DynamicNodeProperties = bytes.Clone(tgt.Address), bytes.Clone(tgt.DynamicNodeProperties)
	return seenAttach{bytes.Clone(a.Properties), bytes.Clone(a.OfferedCapabilities), bytes.Clone(a.DesiredCapabilities),
		src, tgt, l.RemoteMaxMessageSize()}
}

// fieldsServer is the engine server's handler: it keeps copies of what
// the peer's open and attaches carried, answers a dynamic source with an
// address and every attach with properties of its own.
type fieldsServer struct {
	engine.NopHandler
	mu      sync.Mutex
	open    seenOpen
	attach  map[string]seenAttach
	setErrs []error
}

func (h *fieldsServer) OnConnectionOpen(c *engine.Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.open = copyOpen(c.RemoteOpen())
}

func (h *fieldsServer) AnswerAttach(l *engine.Link, src *frame.Source, _ *frame.Target) *engine.Error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.attach == nil {
		h.attach = map[string]seenAttach{}
	}
	h.attach[string(l.Name())] = copyAttach(l)
	if src != nil && src.Dynamic {
		src.Address = []byte("dyn-" + string(l.Name()))
	}
	if err := l.SetAnswerFields(answerProps(string(l.Name())), nil, nil); err != nil {
		h.setErrs = append(h.setErrs, err)
	}
	return nil
}

// serveFields starts an engine server with the engine's fields behind a
// Recorder, and returns the recorder's address.
func serveFields(t *testing.T, h *fieldsServer) *Recorder {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &driver.Server{Config: engine.Config{ContainerID: "engine-fields-server", Properties: engineProps,
		OfferedCapabilities: engineOffer, DesiredCapabilities: engineWant, MaxMessageSize: 1 << 20}, Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	rec, err := NewRecorder(ln.Addr().String())
	require.NoError(t, err)
	return rec
}

// recordedPerformatives returns the opens and attaches (by name) of one
// direction of a recorded connection, parsed from its bytes.
func recordedPerformatives(t *testing.T, b []byte) (opens []frame.Open, attaches map[string]frame.Attach) {
	t.Helper()
	attaches = map[string]frame.Attach{}
	for len(b) > 0 {
		f, n, err := frame.Split(b, 1<<24)
		require.NoError(t, err)
		require.Positive(t, n, "a frame cut short")
		b = b[n:]
		if f.IsHeader || f.Type != frame.TypeAMQP || len(f.Body) == 0 {
			continue
		}
		switch d, _ := frame.Performative(f.Body); d {
		case amqpsax.DescriptorOpen:
			o, err := frame.ParseOpen(f.Body)
			require.NoError(t, err)
			opens = append(opens, o)
		case amqpsax.DescriptorAttach:
			a, err := frame.ParseAttach(f.Body)
			require.NoError(t, err)
			attaches[string(a.Name)] = a
		}
	}
	return opens, attaches
}

// value decodes an encoded value as Go values (stream.Cursor.Any).
func value(t *testing.T, b []byte) any {
	t.Helper()
	if b == nil {
		return nil
	}
	var c stream.Cursor
	c.Reset(b)
	require.True(t, c.Next(), "% x", b)
	v, err := c.Any()
	require.NoError(t, err)
	return v
}

func symbolNames(s []byte) []string {
	var out []string
	for sym := range frame.Symbols(s).All() {
		out = append(out, string(sym))
	}
	return out
}

type anyMap = map[any]any
type asym = stream.Symbol

// checkSeenAttach checks what the engine read of an attach against the
// recorded frame, byte for byte.
func checkSeenAttach(t *testing.T, name string, got seenAttach, wire frame.Attach) {
	t.Helper()
	assert.Equal(t, []byte(wire.Properties), got.props, "%s: properties", name)
	assert.Equal(t, []byte(wire.OfferedCapabilities), got.offered, "%s: offered capabilities", name)
	assert.Equal(t, []byte(wire.DesiredCapabilities), got.desired, "%s: desired capabilities", name)
	src, tgt := wire.Source.Or(frame.Source{}), wire.Target.Or(frame.Target{})
	assert.Equal(t, src.Address, got.src.Address, "%s: source address", name)
	assert.Equal(t, []byte(src.Filter), []byte(got.src.Filter), "%s: filter", name)
	assert.Equal(t, []byte(src.DynamicNodeProperties), []byte(got.src.DynamicNodeProperties), "%s: dynamic-node-properties", name)
	assert.Equal(t, []byte(src.Capabilities), []byte(got.src.Capabilities), "%s: source capabilities", name)
	assert.Equal(t, tgt.Address, got.tgt.Address, "%s: target address", name)
}

func needProton(t *testing.T) {
	if err := exec.Command(python, "-c", "import proton").Run(); err != nil {
		skip(t, "Debian's python3-qpid-proton is not installed for %s", python)
	}
}

// TestFieldsProtonClient: Qpid Proton's python client
// (proton/fields_client.py) opens with properties and capabilities, and
// attaches a receiver with a selector, link properties, source
// capabilities and a reply address, a sender with link properties and a
// source address, and a dynamic receiver with node properties; the
// engine as the server reads each byte for byte as Proton wrote it, and
// Proton reads the engine's open, its answers' properties, the filter
// echoed and the dynamic address.
func TestFieldsProtonClient(t *testing.T) {
	needProton(t)
	h := &fieldsServer{}
	rec := serveFields(t, h)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "proton/fields_client.py")
	cmd.Env = append(cmd.Environ(), "AMQP_ADDR="+rec.Addr())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "proton/fields_client.py: %s", stderr.String())
	require.NoError(t, rec.Close())
	conns := rec.Conns()
	require.Len(t, conns, 1)

	// What the engine read is what Proton wrote, byte for byte.
	opens, attaches := recordedPerformatives(t, conns[0].Client)
	require.Len(t, opens, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	require.Empty(t, h.setErrs)
	assert.Equal(t, []byte(opens[0].Properties), h.open.props)
	assert.Equal(t, []byte(opens[0].OfferedCapabilities), h.open.offered)
	assert.Equal(t, []byte(opens[0].DesiredCapabilities), h.open.desired)
	for _, name := range []string{"proton-rcv", "proton-snd", "proton-dyn"} {
		require.Contains(t, h.attach, name)
		require.Contains(t, attaches, name)
		checkSeenAttach(t, name, h.attach[name], attaches[name])
	}

	// And it is what Proton was told to send.
	assert.Equal(t, anyMap{asym("product"): "proton-fields", asym("x-opt-kind"): asym("interop"), asym("x-opt-n"): int64(7)}, value(t, h.open.props))
	assert.Equal(t, []string{"proton-offer"}, symbolNames(h.open.offered))
	assert.Equal(t, []string{"DELAYED_DELIVERY", "proton-want"}, symbolNames(h.open.desired))
	rcv := h.attach["proton-rcv"]
	assert.Equal(t, anyMap{asym("rcv-prop"): "r", asym("x-epoch"): int64(3)}, value(t, rcv.props))
	assert.Equal(t, anyMap{asym("selector"): stream.Described{Descriptor: asym("apache.org:selector-filter:string"), Value: "color = 'red'"}},
		value(t, rcv.src.Filter))
	assert.Equal(t, "fields/q", string(rcv.src.Address))
	assert.Equal(t, "proton-reply-1", string(rcv.tgt.Address), "the receiver's reply address")
	assert.Equal(t, []string{"queue", "shared"}, symbolNames(rcv.src.Capabilities))
	snd := h.attach["proton-snd"]
	assert.Equal(t, anyMap{asym("snd-prop"): asym("s")}, value(t, snd.props))
	assert.Equal(t, "proton-src", string(snd.src.Address), "the sender's source address")
	assert.Equal(t, "fields/q", string(snd.tgt.Address))
	dyn := h.attach["proton-dyn"]
	assert.True(t, dyn.src.Dynamic)
	assert.Equal(t, anyMap{asym("x-opt-dnp"): "v"}, value(t, dyn.src.DynamicNodeProperties))

	// What Proton read of the engine's.
	var got struct {
		Properties map[string]string
		Offered    []string
		Desired    []string
		Links      map[string]struct {
			Properties map[string]string
			Source     *string
			Filter     any
		}
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	assert.Equal(t, map[string]string{"sym:product": "str:amqpsax-fields", "sym:x-kind": "sym:engine", "sym:x-n": "long:11"}, got.Properties)
	assert.Equal(t, []string{"sym:ANONYMOUS-RELAY", "sym:x-engine-offer"}, got.Offered)
	assert.Equal(t, []string{"sym:x-engine-want"}, got.Desired)
	for _, name := range []string{"proton-rcv", "proton-snd", "proton-dyn"} {
		assert.Equal(t, map[string]string{"sym:answer": "str:engine-" + name}, got.Links[name].Properties, name)
	}
	assert.Equal(t, map[string]any{"sym:selector": map[string]any{"descriptor": "sym:apache.org:selector-filter:string", "value": "str:color = 'red'"}},
		got.Links["proton-rcv"].Filter, "the filter echoed")
	require.NotNil(t, got.Links["proton-dyn"].Source)
	assert.Equal(t, "dyn-proton-dyn", *got.Links["proton-dyn"].Source, "the dynamic address answered")
}

// fieldsClient is the engine client's handler: it attaches a receiver
// and a sender with every field set, keeps copies of what it read of the
// peer's open and answers, then closes.
type fieldsClient struct {
	engine.NopHandler
	mu       sync.Mutex
	open     seenOpen
	attach   map[string]seenAttach
	attached int
	errs     []error
	done     chan *engine.Error
}

func (h *fieldsClient) OnConnectionOpen(c *engine.Conn) {
	h.mu.Lock()
	h.open = copyOpen(c.RemoteOpen())
	h.mu.Unlock()
	s, err := c.Begin()
	if err != nil {
		h.errs = append(h.errs, err)
		return
	}
	_, err = s.AttachReceiver(engine.LinkOptions{Name: "engine-rcv",
		Source:     &frame.Source{Address: []byte("fields/q"), Filter: selector},
		Target:     &frame.Target{Address: []byte("engine-reply-1")},
		Properties: (&frame.SymbolMap{}).String("rcv-prop", "r").Long("x-epoch", 3).Map(), DesiredCapabilities: engineWant})
	if err != nil {
		h.errs = append(h.errs, err)
	}
	_, err = s.AttachSender(engine.LinkOptions{Name: "engine-snd",
		Source:     &frame.Source{Address: []byte("engine-src")},
		Target:     &frame.Target{Address: []byte("fields/q")},
		Properties: (&frame.SymbolMap{}).Symbol("snd-prop", "s").Map(), OfferedCapabilities: engineOffer})
	if err != nil {
		h.errs = append(h.errs, err)
	}
}

func (h *fieldsClient) OnLinkAttach(l *engine.Link) {
	h.mu.Lock()
	if h.attach == nil {
		h.attach = map[string]seenAttach{}
	}
	h.attach[string(l.Name())] = copyAttach(l)
	h.attached++
	n := h.attached
	h.mu.Unlock()
	if n == 2 {
		l.Conn().Close(nil)
	}
}

func (h *fieldsClient) OnConnectionClose(_ *engine.Conn, e *engine.Error) { h.done <- e }

// TestFieldsProtonServer: the engine as a client opens with properties
// and capabilities and attaches a receiver (a selector, link properties,
// desired capabilities, a reply address) and a sender (link properties,
// offered capabilities, a source address) to a Qpid Proton server
// (proton/fields_server.py), which prints what it read: the values the
// engine set. The engine reads the server's open and answers' properties
// and the filter echoed byte for byte as Proton wrote them. (Proton's
// python API reads no link capabilities: they are checked against
// go-amqp and between engines.)
func TestFieldsProtonServer(t *testing.T) {
	needProton(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	port := freePort(t)
	cmd := exec.CommandContext(ctx, python, "proton/fields_server.py", fmt.Sprint(port))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		cmd.Wait()
		t.Fatalf("proton/fields_server.py did not start: %s", stderr.String())
	}
	require.Equal(t, fmt.Sprintf("listening on 127.0.0.1:%d", port), lines.Text())

	rec, err := NewRecorder(fmt.Sprintf("127.0.0.1:%d", port))
	require.NoError(t, err)
	h := &fieldsClient{done: make(chan *engine.Error, 1)}
	d, err := driver.Dial(ctx, "tcp", rec.Addr(), engine.Config{ContainerID: "engine-fields-client", Properties: engineProps,
		OfferedCapabilities: engineOffer, DesiredCapabilities: engineWant}, nil, h)
	require.NoError(t, err)
	defer d.Close()
	select {
	case e := <-h.done:
		require.Nil(t, e)
	case <-ctx.Done():
		t.Fatal("the connection did not close")
	}
	var printed []map[string]map[string]any
	for lines.Scan() {
		var m map[string]map[string]any
		require.NoError(t, json.Unmarshal(lines.Bytes(), &m), lines.Text())
		printed = append(printed, m)
	}
	require.NoError(t, cmd.Wait(), "proton/fields_server.py: %s", stderr.String())
	require.NoError(t, rec.Close())

	// What Proton read is what the engine set.
	require.Len(t, printed, 3, "one open, two attaches")
	open := printed[0]["open"]
	assert.Equal(t, map[string]any{"sym:product": "str:amqpsax-fields", "sym:x-kind": "sym:engine", "sym:x-n": "long:11"}, open["properties"])
	assert.Equal(t, []any{"sym:ANONYMOUS-RELAY", "sym:x-engine-offer"}, open["offered"])
	assert.Equal(t, []any{"sym:x-engine-want"}, open["desired"])
	links := map[string]map[string]any{}
	for _, p := range printed[1:] {
		links[p["attach"]["name"].(string)] = p["attach"]
	}
	rcv, snd := links["engine-rcv"], links["engine-snd"]
	require.NotNil(t, rcv)
	require.NotNil(t, snd)
	assert.Equal(t, map[string]any{"sym:rcv-prop": "str:r", "sym:x-epoch": "long:3"}, rcv["properties"])
	assert.Equal(t, map[string]any{"sym:apache.org:selector-filter:string": map[string]any{"descriptor": "ulong:77567109365764", "value": "str:color = 'red'"}},
		rcv["filter"])
	assert.Equal(t, "fields/q", rcv["source"])
	assert.Equal(t, "engine-reply-1", rcv["target"], "the receiver's reply address")
	assert.Equal(t, map[string]any{"sym:snd-prop": "sym:s"}, snd["properties"])
	assert.Equal(t, "engine-src", snd["source"], "the sender's source address")
	assert.Equal(t, "fields/q", snd["target"])

	// What the engine read is what Proton wrote, byte for byte, and what
	// it was told to.
	conns := rec.Conns()
	require.Len(t, conns, 1)
	opens, attaches := recordedPerformatives(t, conns[0].Server)
	require.Len(t, opens, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	require.Empty(t, h.errs)
	assert.Equal(t, []byte(opens[0].Properties), h.open.props)
	assert.Equal(t, []byte(opens[0].OfferedCapabilities), h.open.offered)
	assert.Equal(t, anyMap{asym("product"): "proton-server", asym("x-opt-n"): int64(9)}, value(t, h.open.props))
	assert.Equal(t, []string{"ANONYMOUS-RELAY"}, symbolNames(h.open.offered))
	for _, name := range []string{"engine-rcv", "engine-snd"} {
		require.Contains(t, h.attach, name)
		require.Contains(t, attaches, name)
		checkSeenAttach(t, name, h.attach[name], attaches[name])
		assert.Equal(t, anyMap{asym("answer"): "proton-" + name}, value(t, h.attach[name].props), name)
	}
	// Proton echoes the filter re-encoded (a map32): the same value.
	assert.Equal(t, value(t, selector), value(t, h.attach["engine-rcv"].src.Filter), "the filter echoed")
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestFieldsGoAMQP: Azure/go-amqp v1.7.0 as a client of the engine, as
// Azure's SDKs use it: ConnOptions.Properties, a sender with
// SenderOptions.Properties, DesiredCapabilities and a SourceAddress, a
// receiver with ReceiverOptions.Properties, DesiredCapabilities, a
// selector (NewSelectorFilter) and a TargetAddress (the reply link of
// $cbs), and a receiver from a dynamic source. The engine reads each byte
// for byte as go-amqp wrote it; go-amqp reads the engine's open
// (Conn.Properties), its answers' properties, the filter echoed
// (LinkSourceFilterValue), the dynamic address and the max-message-size.
func TestFieldsGoAMQP(t *testing.T) {
	h := &fieldsServer{}
	rec := serveFields(t, h)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := amqp.Dial(ctx, "amqp://"+rec.Addr(), &amqp.ConnOptions{ContainerID: "goamqp-fields", SASLType: amqp.SASLTypeAnonymous(),
		Properties: map[string]any{"product": "go-amqp-fields", "x-n": int64(5)}})
	require.NoError(t, err)
	sess, err := conn.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := sess.NewSender(ctx, "fields/q", &amqp.SenderOptions{Name: "goamqp-snd", SourceAddress: "goamqp-src",
		Properties: map[string]any{"snd-prop": "s"}, DesiredCapabilities: []string{"x-snd-want"}})
	require.NoError(t, err)
	rcv, err := sess.NewReceiver(ctx, "fields/q", &amqp.ReceiverOptions{Name: "goamqp-rcv", TargetAddress: "goamqp-reply",
		Properties:          map[string]any{"rcv-prop": "r", "com.microsoft:epoch": int64(3)},
		DesiredCapabilities: []string{"com.microsoft:session-filter"},
		Filters:             []amqp.LinkFilter{amqp.NewSelectorFilter("color = 'red'")}})
	require.NoError(t, err)
	dyn, err := sess.NewReceiver(ctx, "", &amqp.ReceiverOptions{Name: "goamqp-dyn", DynamicAddress: true})
	require.NoError(t, err)

	// What go-amqp read of the engine's.
	// (go-amqp reads a symbol value as a string: Proton tells them apart.)
	assert.Equal(t, map[string]any{"product": "amqpsax-fields", "x-kind": "engine", "x-n": int64(11)}, conn.Properties())
	assert.Equal(t, map[string]any{"answer": "engine-goamqp-snd"}, snd.Properties())
	assert.Equal(t, map[string]any{"answer": "engine-goamqp-rcv"}, rcv.Properties())
	assert.Equal(t, "color = 'red'", rcv.LinkSourceFilterValue(frame.SelectorFilterKey), "the filter echoed")
	assert.Equal(t, "dyn-goamqp-dyn", dyn.Address(), "the dynamic address answered")
	assert.Equal(t, uint64(1<<20), snd.MaxMessageSize())
	require.NoError(t, conn.Close())
	require.NoError(t, rec.Close())

	// What the engine read is what go-amqp wrote, byte for byte.
	conns := rec.Conns()
	require.Len(t, conns, 1)
	opens, attaches := recordedPerformatives(t, conns[0].Client)
	require.Len(t, opens, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	require.Empty(t, h.setErrs)
	assert.Equal(t, []byte(opens[0].Properties), h.open.props)
	for _, name := range []string{"goamqp-snd", "goamqp-rcv", "goamqp-dyn"} {
		require.Contains(t, h.attach, name)
		require.Contains(t, attaches, name)
		checkSeenAttach(t, name, h.attach[name], attaches[name])
	}

	// And it is what go-amqp was told to send.
	assert.Equal(t, anyMap{asym("product"): "go-amqp-fields", asym("x-n"): int64(5)}, value(t, h.open.props))
	s, r := h.attach["goamqp-snd"], h.attach["goamqp-rcv"]
	assert.Equal(t, anyMap{asym("snd-prop"): "s"}, value(t, s.props))
	assert.Equal(t, []string{"x-snd-want"}, symbolNames(s.desired))
	assert.Equal(t, "goamqp-src", string(s.src.Address), "the sender's source address")
	assert.Equal(t, "fields/q", string(s.tgt.Address))
	assert.Equal(t, anyMap{asym("rcv-prop"): "r", asym("com.microsoft:epoch"): int64(3)}, value(t, r.props))
	assert.Equal(t, []string{"com.microsoft:session-filter"}, symbolNames(r.desired))
	assert.Equal(t, anyMap{asym(frame.SelectorFilterKey): stream.Described{Descriptor: uint64(frame.SelectorFilterCode), Value: "color = 'red'"}},
		value(t, r.src.Filter))
	assert.Equal(t, "goamqp-reply", string(r.tgt.Address), "the receiver's reply address")
	assert.Equal(t, "fields/q", string(r.src.Address))
	assert.True(t, h.attach["goamqp-dyn"].src.Dynamic)
}
