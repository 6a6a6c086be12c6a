package broker_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/require"
)

func timeAfter() <-chan time.Time { return time.After(wait) }

// routedMessage encodes a message with application property to=queue
// and a data section.
func routedMessage(queue, body string) []byte {
	m := encode.AppendString(encode.AppendString(nil, "to"), queue)
	b := []byte{0x00, 0x53, 0x74, 0xc1, byte(1 + len(m)), 2}
	b = append(b, m...)
	return append(b, data(body)...)
}

// dialErr dials and returns how the connection ended before it opened
// (nil when it opened).
func dialErr(t *testing.T, addr string, cfg engine.Config) error {
	c := &tclient{t: t, open: make(chan struct{}), closed: make(chan *engine.Error, 1), links: map[*engine.Link]*tlink{}}
	d, err := driver.Dial(context.Background(), "tcp", addr, cfg, nil, c)
	require.NoError(t, err)
	defer func() { d.Close(); d.Wait() }()
	select {
	case <-c.open:
		return nil
	case <-d.Done():
		if err := d.Wait(); err != nil {
			return err
		}
		return engine.ErrAuth
	case <-timeAfter():
		t.Fatal("neither open nor closed")
	}
	return nil
}

func TestSASL(t *testing.T) {
	addr, _ := start(t, broker.Options{Users: map[string]string{"alice": "secret"}})
	require.NoError(t, dialErr(t, addr, engine.Config{Username: "alice", Password: "secret"}))
	require.Error(t, dialErr(t, addr, engine.Config{Username: "alice", Password: "wrong"}))
	require.Error(t, dialErr(t, addr, engine.Config{Username: "bob", Password: "secret"}))
	require.Error(t, dialErr(t, addr, engine.Config{}), "ANONYMOUS refused unless asked for")

	addr2, _ := start(t, broker.Options{Users: map[string]string{"alice": "secret"}, Anonymous: true})
	require.NoError(t, dialErr(t, addr2, engine.Config{}))
	require.NoError(t, dialErr(t, addr2, engine.Config{Username: "alice", Password: "secret"}))
}

// selfSigned returns a server certificate for 127.0.0.1 and a pool that
// trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "amqpsax test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, pool
}

// A client certificate the broker asks for without verifying it
// (tls.RequireAnyClientCert) is no identity: a self-signed one does not
// get SASL EXTERNAL, whether the broker does the handshake or its
// listener did.
func TestTLSExternalUnverified(t *testing.T) {
	srvCert, pool := selfSigned(t)
	forged, _ := selfSigned(t)
	stls := &tls.Config{Certificates: []tls.Certificate{srvCert}, ClientAuth: tls.RequireAnyClientCert}
	ctls := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", Certificates: []tls.Certificate{forged}}
	addr, _ := start(t, broker.Options{TLSConfig: stls})
	// The listener's handshake: the broker takes the *tls.Conn as it is.
	ln, err := tls.Listen("tcp", "127.0.0.1:0", stls)
	require.NoError(t, err)
	b := broker.New(broker.Options{TLSConfig: stls})
	go b.Serve(ln)
	t.Cleanup(func() { b.Close() })
	for _, addr := range []string{addr, ln.Addr().String()} {
		c := &tclient{t: t, open: make(chan struct{}), closed: make(chan *engine.Error, 1), links: map[*engine.Link]*tlink{}}
		d, err := driver.Dial(context.Background(), "tcp", addr, engine.Config{Mechanism: "EXTERNAL"}, ctls, c)
		require.NoError(t, err)
		select {
		case <-c.open:
			t.Fatal("a self-signed certificate logged in with EXTERNAL")
		case <-d.Done():
		case <-timeAfter():
			d.Close()
			t.Fatal("neither open nor closed")
		}
		require.Error(t, d.Wait())
	}
}

func TestTLS(t *testing.T) {
	cert, pool := selfSigned(t)
	addr, _ := start(t, broker.Options{TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
		Users: map[string]string{"u": "p"}})
	c := dial(t, addr, engine.Config{Username: "u", Password: "p"}, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	snd := c.sender("tls")
	snd.send(data("over tls"))
	require.Equal(t, frame.StateAccepted, snd.outcome().Type)
	// a dynamic source over TLS: the attach is read after decryption
	rcv := c.attach(false, engine.LinkOptions{Source: &frame.Source{Dynamic: true}})
	var a string
	c.do(func() { a = string(rcv.l.RemoteSource().Address) })
	require.NotEmpty(t, a)
}
