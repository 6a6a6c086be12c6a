package engine

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/frame"
)

// The engine's side of TLS by protocol header (part 5 §5.2), sans-IO: a
// server answers the TLS header, keeps what follows it for the driver's
// handshake, and starts over after TLSEstablished; a client sends it
// first.
func TestTLSHeaderEngine(t *testing.T) {
	srv := NewServer(Config{TLSHeader: true}, nil)
	r := newRaw(t, srv)
	hello := []byte("\x16\x03\x01 client hello")
	r.feed(append(frame.AppendProtocolHeader(nil, frame.HeaderTLS), hello[:5]...))
	r.feed(hello[5:])
	due, early := srv.UpgradeTLS()
	if !due || !bytes.Equal(early, hello) || !bytes.Equal(r.in, frame.AppendProtocolHeader(nil, frame.HeaderTLS)) {
		t.Fatalf("due %v early %q output %q", due, early, r.in)
	}
	r.in = r.in[:0]
	cn := []*x509.Certificate{{}}
	cn[0].Subject.CommonName = "cn"
	srv.TLSEstablished(cn)
	if due, _ := srv.UpgradeTLS(); due || !srv.TLS() {
		t.Fatal("still due after TLSEstablished")
	}
	// Over TLS: SASL, with EXTERNAL for the certificate.
	r.feed(saslFrame(frame.AppendProtocolHeader(nil, frame.HeaderSASL), func(b []byte) []byte {
		return frame.AppendSASLInit(b, frame.SASLInit{Mechanism: []byte("EXTERNAL")})
	}))
	if srv.Identity() != "cn" {
		t.Fatalf("identity %q, output %q", srv.Identity(), r.in)
	}
	// A second TLS header, or one the server does not accept, is refused.
	for _, cfg := range []Config{{}, {TLSHeader: true}} {
		c := NewServer(cfg, nil)
		r := newRaw(t, c)
		hdr := frame.AppendProtocolHeader(nil, frame.HeaderTLS)
		if cfg.TLSHeader {
			r.feed(hdr)
			c.TLSEstablished(nil)
			r.in = r.in[:0]
		}
		r.feed(hdr)
		if !c.Done() || !errors.Is(c.Err(), NewError(frame.CondNotAllowed, "")) || !bytes.Equal(r.in, frame.AppendProtocolHeader(nil, frame.HeaderAMQP)) {
			t.Fatalf("%+v: done %v err %v output %q", cfg, c.Done(), c.Err(), r.in)
		}
	}
	// The client: the TLS header first, then SASL's after the upgrade.
	cli := NewClient(Config{TLSHeader: true}, nil)
	if out := cli.Output(); !bytes.Equal(out, frame.AppendProtocolHeader(nil, frame.HeaderTLS)) {
		t.Fatalf("%q", out)
	}
	cli.Written(8)
	cli.Feed(frame.AppendProtocolHeader(nil, frame.HeaderTLS), time.Now())
	if due, _ := cli.UpgradeTLS(); !due || len(cli.Output()) != 0 {
		t.Fatal("client: upgrade not due")
	}
	cli.TLSEstablished(nil)
	if out := cli.Output(); !bytes.Equal(out, frame.AppendProtocolHeader(nil, frame.HeaderSASL)) {
		t.Fatalf("%q", out)
	}
	// A server that answers the TLS header with another is left.
	cli = NewClient(Config{TLSHeader: true}, nil)
	cli.Feed(frame.AppendProtocolHeader(nil, frame.HeaderAMQP), time.Now())
	if !cli.Closed() || cli.Err() == nil {
		t.Fatal(cli.Err())
	}
	// The handshake time-out runs through the upgrade.
	srv = NewServer(Config{TLSHeader: true, HandshakeTimeout: time.Second}, nil)
	now := time.Unix(1_700_000_000, 0)
	srv.Feed(frame.AppendProtocolHeader(nil, frame.HeaderTLS), now)
	srv.Tick(now.Add(time.Second))
	if !srv.Closed() || !errors.Is(srv.Err(), NewError(frame.CondResourceLimitExceeded, "")) {
		t.Fatal(srv.Err())
	}
}

// echo is a server that sends every message it receives back on the
// connection's sending link (the peer's receiver), settled.
type echo struct {
	NopHandler
	ids chan string
}

type echoConn struct {
	out     *Link
	pending [][]byte
}

func (e *echo) OnConnectionOpen(c *Conn) {
	c.Context = &echoConn{}
	if e.ids != nil {
		e.ids <- c.Identity()
	}
}

func (e *echo) OnLinkAttach(l *Link) {
	if l.IsSender() {
		l.Conn().Context.(*echoConn).out = l
	}
}

func (e *echo) OnDelivery(l *Link, d Delivery) {
	ec := l.Conn().Context.(*echoConn)
	ec.pending = append(ec.pending, bytes.Clone(d.Payload))
	ec.pump()
}

func (e *echo) OnFlow(l *Link)     { l.Conn().Context.(*echoConn).pump() }
func (e *echo) OnWritable(c *Conn) { c.Context.(*echoConn).pump() }

func (ec *echoConn) pump() {
	for ec.out != nil && len(ec.pending) > 0 {
		if _, err := ec.out.Send(nil, ec.pending[0], true); err != nil {
			return
		}
		ec.pending = ec.pending[1:]
	}
}

// roundTrip is a client that sends n messages to "echo" and takes n
// back, then closes.
type roundTrip struct {
	NopHandler
	n, sent, got int
	bad          int
	done         chan error
}

func rtMessage(i int) []byte { return dataSection([]byte(fmt.Sprintf("message %d", i))) }

// dataSection is an AMQP message of one data section.
func dataSection(p []byte) []byte {
	return append([]byte{0x00, 0x53, 0x75, 0xa0, byte(len(p))}, p...)
}

func (r *roundTrip) OnConnectionOpen(c *Conn) { c.Begin() }

// OnSessionBegin attaches the links once the peer's begin has said how
// many handles it takes.
func (r *roundTrip) OnSessionBegin(s *Session) {
	s.AttachReceiver(LinkOptions{Address: "echo", Credit: 100})
	s.AttachSender(LinkOptions{Address: "echo"})
}

func (r *roundTrip) OnFlow(l *Link) {
	for l.IsSender() && r.sent < r.n {
		if _, err := l.Send(nil, rtMessage(r.sent), true); err != nil {
			return
		}
		r.sent++
	}
}

func (r *roundTrip) OnDelivery(l *Link, d Delivery) {
	if !bytes.Equal(d.Payload, rtMessage(r.got)) {
		r.bad++
	}
	if r.got++; r.got == r.n {
		l.Conn().Close(nil)
	}
}

func (r *roundTrip) OnConnectionClose(c *Conn, e *Error) {
	var err error
	switch {
	case e != nil:
		err = e
	case r.got != r.n || r.bad != 0:
		err = fmt.Errorf("got %d of %d, %d wrong", r.got, r.n, r.bad)
	}
	r.done <- err
}

// TestTLSHeaderDriver: the Driver's TLS upgrade by protocol header, in
// both roles, beside direct TLS and the clear on the same listener, each
// round-tripping 1,000 messages.
func TestTLSHeaderDriver(t *testing.T) {
	ca := cert(t, "ca", nil, true)
	srvCert := cert(t, "server", &ca, false)
	cliCert := cert(t, "client-7", &ca, false)
	pool := x509.NewCertPool()
	pool.AddCert(ca.Leaf)
	stls := &tls.Config{Certificates: []tls.Certificate{srvCert}, ClientCAs: pool, ClientAuth: tls.VerifyClientCertIfGiven}
	listen := func(cfg Config) (string, *echo) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		h := &echo{ids: make(chan string, 10)}
		cfg.Credit, cfg.AutoAccept = 100, true
		srv := &Server{Handler: h, TLSConfig: stls, Config: cfg}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
		return ln.Addr().String(), h
	}
	header, hh := listen(Config{TLSHeader: true})
	direct, _ := listen(Config{})
	ctls := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	withCert := ctls.Clone()
	withCert.Certificates = []tls.Certificate{cliCert}
	cases := []struct {
		name string
		addr string
		cfg  Config
		tls  *tls.Config
		id   string // the server's identity of the client, on header
		up   bool   // upgraded by the header
	}{
		{"tls header", header, Config{TLSHeader: true}, ctls, "anonymous", true},
		{"tls header, EXTERNAL", header, Config{TLSHeader: true, Mechanism: "EXTERNAL"}, withCert, "client-7", true},
		{"direct tls detected", header, Config{}, ctls, "anonymous", false},
		{"clear beside", header, Config{}, nil, "anonymous", false},
		{"direct tls", direct, Config{}, ctls, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rt := &roundTrip{n: 1000, done: make(chan error, 1)}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			d, err := Dial(ctx, "tcp", tc.addr, tc.cfg, tc.tls, rt)
			if err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-rt.done:
				if err != nil {
					t.Fatal(err)
				}
			case <-ctx.Done():
				d.Close()
				t.Fatal("time-out")
			}
			if err := d.Wait(); err != nil {
				t.Fatal(err)
			}
			if d.Conn().TLS() != tc.up {
				t.Fatalf("TLS() %v", d.Conn().TLS())
			}
			if _, isTLS := d.NetConn().(*tls.Conn); isTLS != (tc.tls != nil) {
				t.Fatalf("network connection %T", d.NetConn())
			}
			if tc.addr == header {
				if id := <-hh.ids; id != tc.id {
					t.Fatalf("identity %q", id)
				}
			}
			t.Logf("%d messages round-tripped", rt.got)
		})
	}
	// The TLS header to a server that does not take it: refused.
	rt := &roundTrip{n: 1, done: make(chan error, 1)}
	d, err := Dial(context.Background(), "tcp", direct, Config{TLSHeader: true}, ctls, rt)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Wait(); err == nil {
		t.Fatal("TLS header against a direct-TLS server: no error")
	}
}

// TestTLSHeaderSilentPeer: a server that never answers the TLS header
// holds the Driver's upgrade only until the handshake time-out, and
// Close cuts it short before that.
func TestTLSHeaderSilentPeer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // read nothing, answer nothing
		}
	}()
	ctls := &tls.Config{ServerName: "127.0.0.1"}
	d, err := Dial(context.Background(), "tcp", ln.Addr().String(), Config{TLSHeader: true, HandshakeTimeout: 200 * time.Millisecond}, ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Wait(); err == nil || !errors.Is(err, NewError(frame.CondFramingError, "")) {
		t.Fatalf("after the handshake time-out: %v", err)
	}
	d, err = Dial(context.Background(), "tcp", ln.Addr().String(), Config{TLSHeader: true, HandshakeTimeout: time.Hour}, ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if err := d.Wait(); err == nil {
		t.Fatal("Close during the upgrade: no error")
	} else {
		t.Log(err)
	}
}
