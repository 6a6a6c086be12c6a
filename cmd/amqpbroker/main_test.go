package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/require"
)

// start runs the broker with args (plus loopback ports) until the test
// ends and returns its AMQP and metrics addresses.
func start(t *testing.T, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	type addrs struct{ amqp, metrics string }
	ready := make(chan addrs, 1)
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() {
		done <- run(ctx, append([]string{"-listen", "127.0.0.1:0", "-metrics", "127.0.0.1:0"}, args...), &out,
			func(a, m string) { ready <- addrs{a, m} })
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	select {
	case a := <-ready:
		return a.amqp, a.metrics
	case err := <-done:
		t.Fatalf("run: %v\n%s", err, out.String())
	case <-time.After(20 * time.Second):
		t.Fatal("not ready")
	}
	return "", ""
}

func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

func TestBrokerWithGoAMQP(t *testing.T) {
	addr, metrics := start(t, "-user", "alice:secret", "-max-queue", "1000", "-queue-metrics")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	_, err := amqp.Dial(ctx, "amqp://"+addr, &amqp.ConnOptions{SASLType: amqp.SASLTypePlain("alice", "wrong")})
	require.Error(t, err, "a wrong password is refused")

	conn, err := amqp.Dial(ctx, "amqp://"+addr, &amqp.ConnOptions{SASLType: amqp.SASLTypePlain("alice", "secret")})
	require.NoError(t, err)
	defer conn.Close()
	s, err := conn.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, "orders", nil)
	require.NoError(t, err)
	for range 3 {
		require.NoError(t, snd.Send(ctx, amqp.NewMessage([]byte("order")), nil))
	}
	m := scrape(t, metrics)
	require.Contains(t, m, `amqpbroker_queue_depth{queue="orders"} 3`)
	require.Contains(t, m, `amqpbroker_queue_messages_total{event="enqueued",queue="orders"} 3`)
	require.Contains(t, m, `amqpbroker_queue_messages_total{event="filtered",queue="orders"} 0`)
	require.Contains(t, m, `amqpbroker_queue_producers{queue="orders"} 1`)
	require.Contains(t, m, `amqpbroker_queue_detached_consumers{queue="orders"} 0`)
	require.Contains(t, m, `amqpbroker_durable_links{state="detached"} 0`)
	require.Contains(t, m, "amqpbroker_connections 1")
	require.Contains(t, m, "go_goroutines")

	rcv, err := s.NewReceiver(ctx, "orders", &amqp.ReceiverOptions{Credit: 10})
	require.NoError(t, err)
	for range 3 {
		msg, err := rcv.Receive(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, "order", string(msg.GetData()))
		require.NoError(t, rcv.AcceptMessage(ctx, msg))
	}
	require.Eventually(t, func() bool {
		return strings.Contains(scrape(t, metrics), `amqpbroker_queue_messages_total{event="accepted",queue="orders"} 3`)
	}, 10*time.Second, 10*time.Millisecond)
	require.Contains(t, scrape(t, metrics), `amqpbroker_queue_depth{queue="orders"} 0`)

	// a dynamic reply queue
	reply, err := s.NewReceiver(ctx, "", &amqp.ReceiverOptions{DynamicAddress: true, Credit: 1})
	require.NoError(t, err)
	require.NotEmpty(t, reply.Address())
	rs, err := s.NewSender(ctx, reply.Address(), nil)
	require.NoError(t, err)
	require.NoError(t, rs.Send(ctx, amqp.NewMessage([]byte("reply")), nil))
	msg, err := reply.Receive(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, "reply", string(msg.GetData()))
}

// writeCert writes a self-signed certificate for 127.0.0.1 and its key
// to dir, returning their paths and a pool that trusts it.
func writeCert(t *testing.T, dir string) (string, string, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "amqpbroker test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestTLSAndUsersFile(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := writeCert(t, dir)
	users := filepath.Join(dir, "users")
	require.NoError(t, os.WriteFile(users, []byte("# accounts\nbob:pw\n"), 0o600))
	addr, _ := start(t, "-tls-cert", certFile, "-tls-key", keyFile, "-users", users)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := amqp.Dial(ctx, "amqps://"+addr, &amqp.ConnOptions{SASLType: amqp.SASLTypePlain("bob", "pw"),
		TLSConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}})
	require.NoError(t, err)
	defer conn.Close()
	s, err := conn.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, "secure", nil)
	require.NoError(t, err)
	require.NoError(t, snd.Send(ctx, amqp.NewMessage([]byte("x")), nil))
}

func badFile(t *testing.T, content string) string {
	f := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(f, []byte(content), 0o600))
	return f
}

func TestFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-tls-cert", "c.pem"},
		{"-user", "nocolon"},
		{"-tls-client-ca", "ca.pem"},
		{"stray"},
		{"-users", filepath.Join(t.TempDir(), "missing")},
		{"-users", badFile(t, "bob:SCRAM-SHA-256$1:c2FsdA==$AA==:AA==\n")},
		{"-permissions", badFile(t, "bob .* .*\n")},
		{"-permissions", badFile(t, "bob ( - -\n")},
	} {
		err := run(context.Background(), append([]string{"-listen", "127.0.0.1:0"}, args...), io.Discard, nil)
		require.Error(t, err, "%q", args)
	}
}

// TestMetricsHostile: an attach to an address that is not UTF-8 is
// refused and a scrape after it works (its label value made the
// collector panic, and the process exit); by default the metrics are
// summed over the queues, per queue only with -queue-metrics, whose
// label values are valid UTF-8 whatever the name.
func TestMetricsHostile(t *testing.T) {
	for _, perQueue := range []bool{false, true} {
		args := []string{}
		if perQueue {
			args = append(args, "-queue-metrics")
		}
		addr, metrics := start(t, args...)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// go-amqp will not send it: package engine does
		h := &badAttach{detached: make(chan *engine.Error, 1)}
		d, err := driver.Dial(ctx, "tcp", addr, engine.Config{}, nil, h)
		require.NoError(t, err)
		select {
		case e := <-h.detached:
			require.NotNil(t, e)
			require.Equal(t, frame.CondInvalidField, e.Condition, "an address that is not UTF-8 is refused")
		case <-ctx.Done():
			t.Fatal("not refused")
		}
		d.Close()
		conn, err := amqp.Dial(ctx, "amqp://"+addr, nil)
		require.NoError(t, err)
		defer conn.Close()
		s, err := conn.NewSession(ctx, nil)
		require.NoError(t, err)
		snd, err := s.NewSender(ctx, "orders", nil)
		require.NoError(t, err)
		require.NoError(t, snd.Send(ctx, amqp.NewMessage([]byte("order")), nil))
		m := scrape(t, metrics)
		if perQueue {
			require.Contains(t, m, `amqpbroker_queue_depth{queue="orders"} 1`)
		} else {
			require.Contains(t, m, "amqpbroker_queue_depth 1\n")
			require.Contains(t, m, "amqpbroker_queues 1\n")
			require.Contains(t, m, `amqpbroker_queue_messages_total{event="enqueued"} 1`)
			require.NotContains(t, m, "orders")
		}
	}
}

// TestCollectorLabels: whatever name a queue has, a scrape does not
// panic.
func TestCollectorLabels(t *testing.T) {
	require.Equal(t, "q\uFFFD", label("q\xff"))
	require.Equal(t, "orders", label("orders"))
}

// badAttach attaches a receiver to "q\xff", not UTF-8, and reports its
// detach.
type badAttach struct {
	engine.NopHandler
	detached chan *engine.Error
}

func (h *badAttach) OnConnectionOpen(c *engine.Conn) { c.Begin() }

func (h *badAttach) OnSessionBegin(s *engine.Session) {
	s.AttachReceiver(engine.LinkOptions{Address: "q\xff"})
}

func (h *badAttach) OnLinkDetach(_ *engine.Link, err *engine.Error) { h.detached <- err }

// TestUsersAndPermissionsFiles: accounts from a file (a password, or
// SCRAM credentials), permissions from another: bob may send to orders
// and not consume from it.
func TestUsersAndPermissionsFiles(t *testing.T) {
	dir := t.TempDir()
	cred, err := engine.NewSCRAMCredentials("bobpw", []byte("salt-salt"), 4096)
	require.NoError(t, err)
	b64 := base64.StdEncoding.EncodeToString
	users := filepath.Join(dir, "users")
	require.NoError(t, os.WriteFile(users, []byte("# accounts\nalice:apw\nbob:SCRAM-SHA-256$4096:"+b64(cred.Salt)+"$"+
		b64(cred.StoredKey)+":"+b64(cred.ServerKey)+"\n"), 0o600))
	perms := filepath.Join(dir, "perms")
	require.NoError(t, os.WriteFile(perms, []byte("alice .* .* .*\nbob - orders -\n"), 0o600))
	addr, _ := start(t, "-users", users, "-permissions", perms)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	session := func(user, pw string) *amqp.Session {
		conn, err := amqp.Dial(ctx, "amqp://"+addr, &amqp.ConnOptions{SASLType: amqp.SASLTypePlain(user, pw)})
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close() })
		s, err := conn.NewSession(ctx, nil)
		require.NoError(t, err)
		return s
	}
	_, err = amqp.Dial(ctx, "amqp://"+addr, &amqp.ConnOptions{SASLType: amqp.SASLTypePlain("bob", "wrong")})
	require.Error(t, err)
	a := session("alice", "apw")
	_, err = a.NewReceiver(ctx, "orders", nil)
	require.NoError(t, err)
	bob := session("bob", "bobpw")
	snd, err := bob.NewSender(ctx, "orders", nil)
	require.NoError(t, err)
	require.NoError(t, snd.Send(ctx, amqp.NewMessage([]byte("o")), nil))
	_, err = bob.NewReceiver(ctx, "orders", nil)
	require.ErrorContains(t, err, "unauthorized-access")
}

// TestDeadLetterFlags: -dead-letter-address and -max-delivery-count,
// with go-amqp: a rejected message and one modified past the bound go
// to the dead-letter queue with their reasons, counted in the metrics.
func TestDeadLetterFlags(t *testing.T) {
	addr, metrics := start(t, "-dead-letter-address", "dlq", "-max-delivery-count", "1", "-queue-metrics")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := amqp.Dial(ctx, "amqp://"+addr, nil)
	require.NoError(t, err)
	defer conn.Close()
	s, err := conn.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := s.NewSender(ctx, "jobs", nil)
	require.NoError(t, err)
	for _, body := range []string{"bad", "flaky"} {
		require.NoError(t, snd.Send(ctx, amqp.NewMessage([]byte(body)), nil))
	}
	rcv, err := s.NewReceiver(ctx, "jobs", &amqp.ReceiverOptions{Credit: 10})
	require.NoError(t, err)
	m, err := rcv.Receive(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, rcv.RejectMessage(ctx, m, &amqp.Error{Condition: "app:invalid", Description: "no"}))
	m, err = rcv.Receive(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, rcv.ModifyMessage(ctx, m, &amqp.ModifyMessageOptions{DeliveryFailed: true}))

	dlq, err := s.NewReceiver(ctx, "dlq", &amqp.ReceiverOptions{Credit: 10})
	require.NoError(t, err)
	for _, want := range []struct{ body, reason string }{{"bad", "app:invalid"}, {"flaky", broker.ReasonMaxDeliveryCount}} {
		m, err := dlq.Receive(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, want.body, string(m.GetData()))
		require.Equal(t, want.reason, m.Annotations[broker.AnnotationDeadLetterReason])
		require.Equal(t, "jobs", m.Annotations[broker.AnnotationOriginalAddress])
		require.NoError(t, dlq.AcceptMessage(ctx, m))
	}
	require.Contains(t, scrape(t, metrics), `amqpbroker_queue_messages_total{event="dead_lettered",queue="jobs"} 2`)
	require.Contains(t, scrape(t, metrics), `amqpbroker_queue_messages_total{event="expired",queue="jobs"} 0`)
	require.Contains(t, scrape(t, metrics), `amqpbroker_queue_scheduled{queue="jobs"} 0`)
}
