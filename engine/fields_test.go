package engine

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
)

// fieldsServer is a server Handler that answers attaches through
// answer (when set) and keeps the link it answered.
type fieldsServer struct {
	recorder
	answer func(l *Link, src *frame.Source, tgt *frame.Target)
	link   *Link
}

func (h *fieldsServer) AnswerAttach(l *Link, src *frame.Source, tgt *frame.Target) *Error {
	h.link = l
	if h.answer != nil {
		h.answer(l, src, tgt)
	}
	return nil
}

// The values the table sends: properties with a symbol value (it must
// stay a symbol), one written in a form no encoder of ours picks (a
// map32 of sym32 keys), capabilities as an array, as one symbol and as
// an array32, a selector filter and node properties.
var (
	fProps = (&frame.SymbolMap{}).String("product", "amqpsax").
		Symbol("com.microsoft:entity-type", "com.microsoft:queue").Long("com.microsoft:epoch", -3).Map()
	fProps32 = frame.Map(encode.EndMap32(encode.AppendString(encode.AppendCodeSym32(encode.BeginMap(nil), "k"), "v"), 0, 1))
	fCaps    = frame.Symbols(frame.AppendSymbols(nil, "ANONYMOUS-RELAY", "DELAYED_DELIVERY"))
	fCap1    = frame.Symbols(encode.AppendSymbol(nil, "com.microsoft:session-filter"))
	fCaps32  = frame.Symbols(frame.AppendSymbols(nil, "rabbitmq:stream-offset-spec", string(bytes.Repeat([]byte("x"), 300))))
	fFilter  = (&frame.SymbolMap{}).Selector("color = 'red' AND n > 3").Map()
	fDNP     = (&frame.SymbolMap{}).Described("lifetime-policy", 0x2b, encode.AppendCodeList0(nil)).Map()
	fDNP2    = (&frame.SymbolMap{}).Symbol("supported-dist-modes", "move").Map()
)

// TestFields: every field of the open and attach that real services
// send, set at one end of an engine pair, is what the other end reads,
// byte for byte — the client's open and attach read by the server, and
// the server's open and answer read by the client.
func TestFields(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ccfg   Config
		scfg   Config
		sender bool // the client's link
		opts   LinkOptions
		answer func(l *Link, src *frame.Source, tgt *frame.Target)
		read   func(p *pipe, cli, srv *Link) []byte
		want   []byte
	}{
		// The open (part 2 §2.7.1), both ways.
		{name: "open properties, client to server", ccfg: Config{Properties: fProps},
			read: func(p *pipe, _, _ *Link) []byte { return p.s.RemoteOpen().Properties }, want: fProps},
		{name: "open properties as a map32, client to server", ccfg: Config{Properties: fProps32},
			read: func(p *pipe, _, _ *Link) []byte { return p.s.RemoteOpen().Properties }, want: fProps32},
		{name: "open properties, server to client", scfg: Config{Properties: fProps},
			read: func(p *pipe, _, _ *Link) []byte { return p.c.RemoteOpen().Properties }, want: fProps},
		{name: "open offered capabilities, client to server", ccfg: Config{OfferedCapabilities: fCaps},
			read: func(p *pipe, _, _ *Link) []byte { return p.s.RemoteOpen().OfferedCapabilities }, want: fCaps},
		{name: "open offered capabilities, server to client", scfg: Config{OfferedCapabilities: fCap1},
			read: func(p *pipe, _, _ *Link) []byte { return p.c.RemoteOpen().OfferedCapabilities }, want: fCap1},
		{name: "open desired capabilities, client to server", ccfg: Config{DesiredCapabilities: fCap1},
			read: func(p *pipe, _, _ *Link) []byte { return p.s.RemoteOpen().DesiredCapabilities }, want: fCap1},
		{name: "open desired capabilities, server to client", scfg: Config{DesiredCapabilities: fCaps32},
			read: func(p *pipe, _, _ *Link) []byte { return p.c.RemoteOpen().DesiredCapabilities }, want: fCaps32},
		{name: "open without fields", read: func(p *pipe, _, _ *Link) []byte {
			o := p.s.RemoteOpen()
			return append(append(append([]byte(nil), o.Properties...), o.OfferedCapabilities...), o.DesiredCapabilities...)
		}, want: nil},

		// The attach (part 2 §2.7.3): the client's, sender and receiver.
		{name: "attach properties, sender to server", sender: true, opts: LinkOptions{Properties: fProps},
			read: func(_ *pipe, _, srv *Link) []byte { return srv.RemoteAttach().Properties }, want: fProps},
		{name: "attach properties, receiver to server", opts: LinkOptions{Properties: fProps32},
			read: func(_ *pipe, _, srv *Link) []byte { return srv.RemoteAttach().Properties }, want: fProps32},
		{name: "attach offered capabilities, sender to server", sender: true, opts: LinkOptions{OfferedCapabilities: fCaps},
			read: func(_ *pipe, _, srv *Link) []byte { return srv.RemoteAttach().OfferedCapabilities }, want: fCaps},
		{name: "attach offered capabilities, receiver to server", opts: LinkOptions{OfferedCapabilities: fCaps32},
			read: func(_ *pipe, _, srv *Link) []byte { return srv.RemoteAttach().OfferedCapabilities }, want: fCaps32},
		{name: "attach desired capabilities, sender to server", sender: true, opts: LinkOptions{DesiredCapabilities: fCap1},
			read: func(_ *pipe, _, srv *Link) []byte { return srv.RemoteAttach().DesiredCapabilities }, want: fCap1},
		{name: "attach desired capabilities, receiver to server", opts: LinkOptions{DesiredCapabilities: fCaps},
			read: func(_ *pipe, _, srv *Link) []byte { return srv.RemoteAttach().DesiredCapabilities }, want: fCaps},

		// The server's answer (Link.SetAnswerFields), to a receiver and
		// a sender.
		{name: "answer properties, server to receiver", answer: func(l *Link, _ *frame.Source, _ *frame.Target) {
			l.SetAnswerFields(fProps, nil, nil)
		}, read: func(_ *pipe, cli, _ *Link) []byte { return cli.RemoteAttach().Properties }, want: fProps},
		{name: "answer properties, server to sender", sender: true, answer: func(l *Link, _ *frame.Source, _ *frame.Target) {
			l.SetAnswerFields(fProps32, nil, nil)
		}, read: func(_ *pipe, cli, _ *Link) []byte { return cli.RemoteAttach().Properties }, want: fProps32},
		{name: "answer offered capabilities", sender: true, answer: func(l *Link, _ *frame.Source, _ *frame.Target) {
			l.SetAnswerFields(nil, fCaps, nil)
		}, read: func(_ *pipe, cli, _ *Link) []byte { return cli.RemoteAttach().OfferedCapabilities }, want: fCaps},
		{name: "answer desired capabilities", answer: func(l *Link, _ *frame.Source, _ *frame.Target) {
			l.SetAnswerFields(nil, nil, fCap1)
		}, read: func(_ *pipe, cli, _ *Link) []byte { return cli.RemoteAttach().DesiredCapabilities }, want: fCap1},
		{name: "answer without fields: the peer's are not echoed", opts: LinkOptions{Properties: fProps, DesiredCapabilities: fCaps},
			read: func(_ *pipe, cli, _ *Link) []byte {
				a := cli.RemoteAttach()
				return append(append(append([]byte(nil), a.Properties...), a.OfferedCapabilities...), a.DesiredCapabilities...)
			}, want: nil},

		// Termini (part 3 §3.5.3, §3.5.4) through LinkOptions.Source and
		// Target.
		{name: "receiver's filter", opts: LinkOptions{Source: &frame.Source{Address: []byte("q"), Filter: fFilter}},
			read: func(_ *pipe, _, srv *Link) []byte { return srv.RemoteSource().Filter }, want: fFilter},
		{name: "receiver's filter echoed in the answer", opts: LinkOptions{Source: &frame.Source{Address: []byte("q"), Filter: fFilter}},
			read: func(_ *pipe, cli, _ *Link) []byte { return cli.RemoteSource().Filter }, want: fFilter},
		{name: "receiver's target address (a reply address)", opts: LinkOptions{Source: &frame.Source{Address: []byte("$cbs")},
			Target: &frame.Target{Address: []byte("cbs-reply-7")}},
			read: func(_ *pipe, _, srv *Link) []byte { return srv.RemoteTarget().Address }, want: []byte("cbs-reply-7")},
		{name: "sender's source address", sender: true, opts: LinkOptions{Source: &frame.Source{Address: []byte("client-node")},
			Target: &frame.Target{Address: []byte("$cbs")}},
			read: func(_ *pipe, _, srv *Link) []byte { return srv.RemoteSource().Address }, want: []byte("client-node")},
		{name: "dynamic source's node properties", opts: LinkOptions{Source: &frame.Source{Dynamic: true, DynamicNodeProperties: fDNP}},
			read: func(_ *pipe, _, srv *Link) []byte { return srv.RemoteSource().DynamicNodeProperties }, want: fDNP},
		{name: "dynamic target's node properties", sender: true, opts: LinkOptions{Target: &frame.Target{Dynamic: true, DynamicNodeProperties: fDNP}},
			read: func(_ *pipe, _, srv *Link) []byte { return srv.RemoteTarget().DynamicNodeProperties }, want: fDNP},
		{name: "dynamic source answered with an address", opts: LinkOptions{Source: &frame.Source{Dynamic: true, DynamicNodeProperties: fDNP}},
			answer: func(l *Link, src *frame.Source, _ *frame.Target) { src.Address = []byte("tmp-1") },
			read:   func(_ *pipe, cli, _ *Link) []byte { return cli.RemoteSource().Address }, want: []byte("tmp-1")},
		{name: "dynamic source answered with node properties", opts: LinkOptions{Source: &frame.Source{Dynamic: true, DynamicNodeProperties: fDNP}},
			answer: func(l *Link, src *frame.Source, _ *frame.Target) {
				src.Address, src.DynamicNodeProperties = []byte("tmp-2"), fDNP2
			},
			read: func(_ *pipe, cli, _ *Link) []byte { return cli.RemoteSource().DynamicNodeProperties }, want: fDNP2},

		// max-message-size (part 2 §2.7.3): a receiver's, read by the
		// sender; a sender's attach has none.
		{name: "client receiver's max-message-size", ccfg: Config{MaxMessageSize: 12345},
			read: func(_ *pipe, _, srv *Link) []byte { return strconv.AppendUint(nil, srv.RemoteMaxMessageSize(), 10) }, want: []byte("12345")},
		{name: "server receiver's max-message-size", sender: true, scfg: Config{MaxMessageSize: 777},
			read: func(_ *pipe, cli, _ *Link) []byte { return strconv.AppendUint(nil, cli.RemoteMaxMessageSize(), 10) }, want: []byte("777")},
		{name: "a sender announces none", sender: true,
			read: func(_ *pipe, _, srv *Link) []byte { return strconv.AppendUint(nil, srv.RemoteMaxMessageSize(), 10) }, want: []byte("0")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &fieldsServer{answer: tc.answer}
			cli := &recorder{}
			var l *Link
			cli.onOpen = func(c *Conn) {
				s, err := c.Begin()
				if err != nil {
					t.Fatal(err)
				}
				o := tc.opts
				if o.Source == nil && o.Target == nil {
					o.Address = "q"
				}
				if tc.sender {
					l, err = s.AttachSender(o)
				} else {
					l, err = s.AttachReceiver(o)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			p := newPipe(t, tc.ccfg, tc.scfg, cli, srv)
			p.run()
			if l == nil || !l.attached() || srv.link == nil {
				t.Fatalf("not attached: %v / %v", cli.log, srv.log)
			}
			if got := tc.read(p, l, srv.link); !bytes.Equal(got, tc.want) {
				t.Fatalf("read % x\nwant % x", got, tc.want)
			}
		})
	}
}

// SetAnswerFields is for the answer alone: on a link this end attached,
// or once the answer is written, it is ErrState, and the link holds none
// of the caller's bytes after the answer.
func TestSetAnswerFieldsState(t *testing.T) {
	srv := &fieldsServer{}
	var during error
	srv.answer = func(l *Link, _ *frame.Source, _ *frame.Target) { during = l.SetAnswerFields(fProps, nil, nil) }
	cli := &recorder{}
	var cl *Link
	cli.onOpen = func(c *Conn) {
		s, _ := c.Begin()
		cl, _ = s.AttachSender(LinkOptions{Address: "q", Properties: fProps})
	}
	p := newPipe(t, Config{}, Config{}, cli, srv)
	p.run()
	if during != nil || srv.link == nil || cl == nil || !cl.attached() {
		t.Fatalf("during AnswerAttach: %v", during)
	}
	if err := cl.SetAnswerFields(fProps, nil, nil); err != ErrState {
		t.Fatalf("on the client's own link: %v", err)
	}
	if err := srv.link.SetAnswerFields(fProps, nil, nil); err != ErrState {
		t.Fatalf("after the answer: %v", err)
	}
	if srv.link.mine.properties != nil || cl.mine.properties != nil {
		t.Fatal("a link holds its attach's properties after writing it")
	}
}
