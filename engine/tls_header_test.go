package engine

import (
	"bytes"
	"crypto/x509"
	"errors"
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

// TestRequireTLS: a server with RequireTLS refuses a SASL or AMQP header
// in the clear (answering with the TLS header, amqp:not-allowed) and
// takes TLS by header or direct TLS; without TLSHeader it changes
// nothing.
func TestRequireTLS(t *testing.T) {
	tlsHdr := frame.AppendProtocolHeader(nil, frame.HeaderTLS)
	for _, h := range []frame.ProtocolHeader{frame.HeaderSASL, frame.HeaderAMQP} {
		c := NewServer(Config{TLSHeader: true, RequireTLS: true}, nil)
		r := newRaw(t, c)
		r.feed(frame.AppendProtocolHeader(nil, h))
		if !c.Done() || !errors.Is(c.Err(), NewError(frame.CondNotAllowed, "")) || !bytes.Equal(r.in, tlsHdr) {
			t.Fatalf("%v in the clear: done %v err %v output %q", h, c.Done(), c.Err(), r.in)
		}
	}
	// by header: the TLS header, the handshake, then SASL over TLS
	c := NewServer(Config{TLSHeader: true, RequireTLS: true}, nil)
	r := newRaw(t, c)
	r.feed(tlsHdr)
	if due, _ := c.UpgradeTLS(); !due {
		t.Fatal("the TLS header is taken")
	}
	c.TLSEstablished(nil)
	r.in = r.in[:0]
	r.feed(frame.AppendProtocolHeader(nil, frame.HeaderSASL))
	if c.Done() || !bytes.HasPrefix(r.in, frame.AppendProtocolHeader(nil, frame.HeaderSASL)) {
		t.Fatalf("SASL over TLS: done %v err %v output %q", c.Done(), c.Err(), r.in)
	}
	// direct TLS
	c = NewServer(Config{TLSHeader: true, RequireTLS: true}, nil)
	c.DirectTLS(nil)
	r = newRaw(t, c)
	r.feed(frame.AppendProtocolHeader(nil, frame.HeaderSASL))
	if c.Done() || !bytes.HasPrefix(r.in, frame.AppendProtocolHeader(nil, frame.HeaderSASL)) {
		t.Fatalf("SASL over direct TLS: done %v err %v output %q", c.Done(), c.Err(), r.in)
	}
	// without TLSHeader, nothing changes
	c = NewServer(Config{RequireTLS: true}, nil)
	r = newRaw(t, c)
	r.feed(frame.AppendProtocolHeader(nil, frame.HeaderAMQP))
	if c.Done() || !bytes.HasPrefix(r.in, frame.AppendProtocolHeader(nil, frame.HeaderAMQP)) {
		t.Fatalf("no TLSHeader: done %v err %v output %q", c.Done(), c.Err(), r.in)
	}
}
