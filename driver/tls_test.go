package driver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/engine"
)

// cert makes a certificate for cn signed by parent (self-signed when
// parent is nil).
func cert(t *testing.T, cn string, parent *tls.Certificate, ca bool) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: ca, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	signer, signKey := tmpl, any(key)
	if parent != nil {
		signer, signKey = parent.Leaf, parent.PrivateKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

type idHandler struct {
	engine.NopHandler
	ids chan string
}

func (h *idHandler) OnConnectionOpen(c *engine.Conn) { h.ids <- c.Identity() }

// TLS by wrapping the connection, and SASL EXTERNAL naming the client by
// its certificate.
func TestTLSExternal(t *testing.T) {
	serveExternal(t, func(ln net.Listener, _ *tls.Config) net.Listener { return ln })
}

// serveExternal serves with a server certificate and a client one
// required and verified, over ln as wrap makes it, dials with client-7's
// certificate and SASL EXTERNAL, and checks that the server names the
// client by it.
func serveExternal(t *testing.T, wrap func(ln net.Listener, cfg *tls.Config) net.Listener) {
	ca := cert(t, "ca", nil, true)
	srvCert := cert(t, "server", &ca, false)
	cliCert := cert(t, "client-7", &ca, false)
	pool := x509.NewCertPool()
	pool.AddCert(ca.Leaf)
	tcfg := &tls.Config{Certificates: []tls.Certificate{srvCert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &idHandler{ids: make(chan string, 1)}
	srv := &Server{Handler: h, TLSConfig: tcfg}
	go srv.Serve(wrap(ln, tcfg))
	defer srv.Close()
	d, err := Dial(context.Background(), "tcp", ln.Addr().String(), engine.Config{Mechanism: "EXTERNAL"},
		&tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cliCert}, ServerName: "127.0.0.1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-h.ids:
		if id != "client-7" {
			t.Fatalf("identity %q", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("timeout")
	}
	d.Close()
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
}

type closeSeen struct {
	engine.NopHandler
	err chan *engine.Error
}

func (h *closeSeen) OnConnectionClose(c *engine.Conn, e *engine.Error) { h.err <- e }

// Shutdown closes live connections with amqp:connection:forced and waits.
func TestServerShutdown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opened := &idHandler{ids: make(chan string, 1)}
	srv := &Server{Handler: opened}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	h := &closeSeen{err: make(chan *engine.Error, 1)}
	d, err := Dial(context.Background(), "tcp", ln.Addr().String(), engine.Config{}, nil, h)
	if err != nil {
		t.Fatal(err)
	}
	<-opened.ids
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if e := <-h.err; e == nil || !e.Remote || e.Name() != "amqp:connection:forced" {
		t.Fatalf("client saw %v", e)
	}
	d.Wait()
	if err := <-served; err != ErrServerClosed {
		t.Fatal(err)
	}
}

// A client certificate the server asks for without verifying it
// (tls.RequireAnyClientCert, tls.RequestClientCert) is no identity: SASL
// EXTERNAL is not offered for a self-signed certificate, whatever name it
// carries, over direct TLS, TLS by protocol header, or direct TLS on a
// TLS-header server. Only a verified chain counts (VerifiedPeer).
func TestTLSExternalUnverified(t *testing.T) {
	ca := cert(t, "ca", nil, true)
	srvCert := cert(t, "server", &ca, false)
	forged := cert(t, "admin", nil, false) // self-signed
	pool := x509.NewCertPool()
	pool.AddCert(ca.Leaf)
	cases := []struct {
		name     string
		srv, cli engine.Config
	}{
		{"direct tls", engine.Config{}, engine.Config{Mechanism: "EXTERNAL"}},
		{"tls header", engine.Config{TLSHeader: true}, engine.Config{TLSHeader: true, Mechanism: "EXTERNAL"}},
		{"direct tls detected", engine.Config{TLSHeader: true}, engine.Config{Mechanism: "EXTERNAL"}},
	}
	for _, auth := range []tls.ClientAuthType{tls.RequireAnyClientCert, tls.RequestClientCert} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%v/%s", auth, tc.name), func(t *testing.T) {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				h := &idHandler{ids: make(chan string, 1)}
				srv := &Server{Handler: h, Config: tc.srv,
					TLSConfig: &tls.Config{Certificates: []tls.Certificate{srvCert}, ClientAuth: auth}}
				go srv.Serve(ln)
				defer srv.Close()
				d, err := Dial(context.Background(), "tcp", ln.Addr().String(), tc.cli,
					&tls.Config{RootCAs: pool, Certificates: []tls.Certificate{forged}, ServerName: "127.0.0.1"}, nil)
				if err != nil {
					t.Fatal(err)
				}
				select {
				case id := <-h.ids:
					t.Fatalf("a self-signed certificate logged in as %q", id)
				case <-d.Done():
				case <-time.After(20 * time.Second):
					d.Close()
					t.Fatal("the client neither logged in nor ended")
				}
				if err := d.Wait(); err == nil {
					t.Fatal("EXTERNAL with an unverified certificate: no error")
				} else {
					t.Log(err)
				}
			})
		}
	}
}

// A connection that is TLS already (a tls.Listener's) is served as it
// is, not wrapped again: its handshake runs first, and its verified
// client certificate is the SASL EXTERNAL identity.
func TestServerTLSListener(t *testing.T) {
	serveExternal(t, func(ln net.Listener, cfg *tls.Config) net.Listener { return tls.NewListener(ln, cfg) })
}
