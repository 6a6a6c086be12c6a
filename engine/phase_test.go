package engine

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"testing"

	"github.com/amqpsax/amqpsax/frame"
)

// Phase follows the exchange a server reads, step by step, and once the
// connection is over names the stage it ended in.
func TestPhase(t *testing.T) {
	srv := NewServer(Config{Auth: Mechanisms(AnonymousServer())}, nil)
	r := newRaw(t, srv)
	steps := []struct {
		in   []byte
		want Phase
	}{
		{nil, PhaseHeader},
		{frame.AppendProtocolHeader(nil, frame.HeaderSASL), PhaseSASL},
		{saslFrame(nil, func(b []byte) []byte {
			return frame.AppendSASLInit(b, frame.SASLInit{Mechanism: []byte("ANONYMOUS")})
		}), PhaseHeaderAMQP},
		{frame.AppendProtocolHeader(nil, frame.HeaderAMQP), PhaseOpen},
		{perf(nil, 0, openBody), PhaseOpened},
	}
	for i, st := range steps {
		if len(st.in) > 0 {
			r.feed(st.in)
		}
		if got := srv.Phase(); got != st.want {
			t.Fatalf("step %d: phase %v, want %v (err %v)", i, got, st.want, srv.Err())
		}
	}
	srv.CloseRead()
	if !srv.Closed() || srv.Phase() != PhaseOpened {
		t.Fatalf("after the end: closed %v, phase %v", srv.Closed(), srv.Phase())
	}
	// Lost during SASL: the phase stays SASL, and the error says so.
	srv = NewServer(Config{Auth: Mechanisms(AnonymousServer())}, nil)
	newRaw(t, srv).feed(frame.AppendProtocolHeader(nil, frame.HeaderSASL))
	srv.CloseRead()
	if !srv.Closed() || srv.Phase() != PhaseSASL || !errors.Is(srv.Err(), NewError(frame.CondFramingError, "")) {
		t.Fatalf("lost during SASL: closed %v, phase %v, err %v", srv.Closed(), srv.Phase(), srv.Err())
	}
	// A client that asks for TLS by header waits for the server's.
	cli := NewClient(Config{TLSHeader: true}, nil)
	cli.Feed(frame.AppendProtocolHeader(nil, frame.HeaderTLS), r.now)
	if cli.Phase() != PhaseTLS {
		t.Fatalf("client after the TLS header: %v", cli.Phase())
	}
	names := map[Phase]string{PhaseHeader: "header", PhaseTLS: "tls", PhaseSASL: "sasl", PhaseHeaderAMQP: "amqp-header",
		PhaseOpen: "open", PhaseOpened: "opened", phDone: "Phase(6)"}
	for p, want := range names {
		if p.String() != want {
			t.Errorf("%d.String() = %q, want %q", uint8(p), p.String(), want)
		}
	}
}

// DirectTLS turns a TLS-header server into one without, with the peer's
// certificates for EXTERNAL, before anything is fed; later it does
// nothing.
func TestDirectTLS(t *testing.T) {
	peer := []*x509.Certificate{{Subject: pkix.Name{CommonName: "cn"}}}
	srv := NewServer(Config{TLSHeader: true}, nil)
	srv.DirectTLS(peer)
	r := newRaw(t, srv)
	r.feed(saslFrame(frame.AppendProtocolHeader(nil, frame.HeaderSASL), func(b []byte) []byte {
		return frame.AppendSASLInit(b, frame.SASLInit{Mechanism: []byte("EXTERNAL")})
	}))
	if srv.Identity() != "cn" || srv.TLS() || srv.Config().TLSHeader {
		t.Fatalf("identity %q, TLS %v, TLSHeader %v", srv.Identity(), srv.TLS(), srv.Config().TLSHeader)
	}
	// Inside direct TLS, a TLS header is refused.
	srv = NewServer(Config{TLSHeader: true}, nil)
	srv.DirectTLS(nil)
	newRaw(t, srv).feed(frame.AppendProtocolHeader(nil, frame.HeaderTLS))
	if !srv.Closed() || !errors.Is(srv.Err(), NewError(frame.CondNotAllowed, "")) {
		t.Fatalf("TLS header inside direct TLS: %v", srv.Err())
	}
	// Once the TLS header is in, it is too late.
	srv = NewServer(Config{TLSHeader: true}, nil)
	newRaw(t, srv).feed(frame.AppendProtocolHeader(nil, frame.HeaderTLS))
	srv.DirectTLS(peer)
	if srv.Phase() != PhaseTLS || !srv.Config().TLSHeader || srv.Config().PeerCertificates != nil {
		t.Fatalf("DirectTLS after the TLS header: phase %v, config %+v", srv.Phase(), srv.Config())
	}
}
