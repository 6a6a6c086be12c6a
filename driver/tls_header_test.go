package driver

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

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// echo is a server that sends every message it receives back on the
// connection's sending link (the peer's receiver), settled.
type echo struct {
	engine.NopHandler
	ids chan string
}

type echoConn struct {
	out     *engine.Link
	pending [][]byte
}

func (e *echo) OnConnectionOpen(c *engine.Conn) {
	c.Context = &echoConn{}
	if e.ids != nil {
		e.ids <- c.Identity()
	}
}

func (e *echo) OnLinkAttach(l *engine.Link) {
	if l.IsSender() {
		l.Conn().Context.(*echoConn).out = l
	}
}

func (e *echo) OnDelivery(l *engine.Link, d engine.Delivery) {
	ec := l.Conn().Context.(*echoConn)
	ec.pending = append(ec.pending, bytes.Clone(d.Payload))
	ec.pump()
}

func (e *echo) OnFlow(l *engine.Link)     { l.Conn().Context.(*echoConn).pump() }
func (e *echo) OnWritable(c *engine.Conn) { c.Context.(*echoConn).pump() }

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
	engine.NopHandler
	n, sent, got int
	bad          int
	done         chan error
}

func rtMessage(i int) []byte { return dataSection([]byte(fmt.Sprintf("message %d", i))) }

// dataSection is an AMQP message of one data section.
func dataSection(p []byte) []byte {
	return append([]byte{0x00, 0x53, 0x75, 0xa0, byte(len(p))}, p...)
}

func (r *roundTrip) OnConnectionOpen(c *engine.Conn) { c.Begin() }

// OnSessionBegin attaches the links once the peer's begin has said how
// many handles it takes.
func (r *roundTrip) OnSessionBegin(s *engine.Session) {
	s.AttachReceiver(engine.LinkOptions{Address: "echo", Credit: 100})
	s.AttachSender(engine.LinkOptions{Address: "echo"})
}

func (r *roundTrip) OnFlow(l *engine.Link) {
	for l.IsSender() && r.sent < r.n {
		if _, err := l.Send(nil, rtMessage(r.sent), true); err != nil {
			return
		}
		r.sent++
	}
}

func (r *roundTrip) OnDelivery(l *engine.Link, d engine.Delivery) {
	if !bytes.Equal(d.Payload, rtMessage(r.got)) {
		r.bad++
	}
	if r.got++; r.got == r.n {
		l.Conn().Close(nil)
	}
}

func (r *roundTrip) OnConnectionClose(c *engine.Conn, e *engine.Error) {
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
	listen := func(cfg engine.Config) (string, *echo) {
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
	header, hh := listen(engine.Config{TLSHeader: true})
	direct, _ := listen(engine.Config{})
	ctls := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	withCert := ctls.Clone()
	withCert.Certificates = []tls.Certificate{cliCert}
	cases := []struct {
		name string
		addr string
		cfg  engine.Config
		tls  *tls.Config
		id   string // the server's identity of the client, on header
		up   bool   // upgraded by the header
	}{
		{"tls header", header, engine.Config{TLSHeader: true}, ctls, "anonymous", true},
		{"tls header, EXTERNAL", header, engine.Config{TLSHeader: true, Mechanism: "EXTERNAL"}, withCert, "client-7", true},
		{"direct tls detected", header, engine.Config{}, ctls, "anonymous", false},
		{"clear beside", header, engine.Config{}, nil, "anonymous", false},
		{"direct tls", direct, engine.Config{}, ctls, "", false},
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
	d, err := Dial(context.Background(), "tcp", direct, engine.Config{TLSHeader: true}, ctls, rt)
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
	d, err := Dial(context.Background(), "tcp", ln.Addr().String(), engine.Config{TLSHeader: true, HandshakeTimeout: 200 * time.Millisecond}, ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Wait(); err == nil || !errors.Is(err, engine.NewError(frame.CondFramingError, "")) {
		t.Fatalf("after the handshake time-out: %v", err)
	}
	d, err = Dial(context.Background(), "tcp", ln.Addr().String(), engine.Config{TLSHeader: true, HandshakeTimeout: time.Hour}, ctls, nil)
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
