// Package amqptest starts an in-memory AMQP 1.0 broker (package broker)
// for one test: no docker, no other process. It is to AMQP what
// net/http/httptest is to HTTP: the test points the code under test at
// srv.URL, stands in for the services that code talks to, and looks at
// what reached the broker.
//
//	func TestOrders(t *testing.T) {
//		srv := amqptest.NewServer(t, nil)
//		// point the code under test at srv.URL ("amqp://127.0.0.1:PORT")
//		...
//		m := srv.WaitMessage("orders") // the first message sent there
//	}
//
// The broker listens on a free port of 127.0.0.1 and is shut down at
// t.Cleanup (its connections closed with amqp:connection:forced). Its
// options are those of package broker; its log (Options.Log, unless the
// test sets one) goes to t.Log.
//
// # Services
//
// broker.Options.Responders serves nodes with Go functions: a $cbs
// that checks tokens as Azure's does, a RabbitMQ 4 /management that
// declares queues, any request/reply service (see the examples). The
// reply to a request goes to its reply-to, or to the receiver paired
// with its link, with its correlation-id set (broker.Responder).
//
// # Looking and touching
//
// The Server's helpers fail the test (t.Fatal) rather than return an
// error, and wait at most Timeout, on the broker's signal, never a
// polling loop: WaitDepth and WaitMessage wait for a queue's depth or
// first message, Wait for any condition on its statistics; Peek reads a
// queue's messages without taking them and Publish seeds one; Queue and
// Queues read statistics. Drop and DropAll cut connections as a network
// failure would (the client sees its connection lost, and reconnects if
// it does); RefuseNextAttach and HoldNextAttach refuse or hold back the
// answer to the next link attached. NewTLSServer serves amqps with a
// certificate made for the test, trusted by ClientTLS.
package amqptest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"log"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
)

// Timeout is the longest a Server's helper waits (WaitDepth,
// WaitMessage, Wait) before it fails the test: a bound on a hang, not
// a measure of speed.
var Timeout = 20 * time.Second

// Server is a broker serving one test.
type Server struct {
	// URL is the broker's URL: amqp://127.0.0.1:PORT, or amqps:// with
	// TLS.
	URL string
	// Addr is its host:port.
	Addr string
	// Broker is the broker itself.
	Broker *broker.Broker
	// Certificate is the certificate of a TLS server (NewTLSServer),
	// nil otherwise.
	Certificate *x509.Certificate

	t    testing.TB
	done chan struct{}
	log  *testLog

	mu   sync.Mutex
	next func(broker.AttachInfo) *engine.Error // for the next attach
}

// NewServer starts a broker with the options o (nil: the defaults) on a
// free loopback port, and shuts it down when the test ends. It fails
// the test when it cannot listen. Unless o sets Log, the broker logs to
// t.Log.
func NewServer(t testing.TB, o *broker.Options) *Server {
	t.Helper()
	var opts broker.Options
	if o != nil {
		opts = *o
	}
	return start(t, opts, nil)
}

// NewTLSServer is NewServer serving amqps, with a certificate for
// 127.0.0.1 and localhost made for the test (unless o sets TLSConfig);
// ClientTLS returns a client configuration that trusts it.
func NewTLSServer(t testing.TB, o *broker.Options) *Server {
	t.Helper()
	var opts broker.Options
	if o != nil {
		opts = *o
	}
	var cert *x509.Certificate
	if opts.TLSConfig == nil {
		var err error
		opts.TLSConfig, cert, err = selfSigned()
		if err != nil {
			t.Fatalf("amqptest: certificate: %v", err)
		}
	}
	return start(t, opts, cert)
}

func start(t testing.TB, opts broker.Options, cert *x509.Certificate) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("amqptest: listen: %v", err)
	}
	scheme := "amqp://"
	if opts.TLSConfig != nil {
		scheme = "amqps://"
	}
	s := &Server{URL: scheme + ln.Addr().String(), Addr: ln.Addr().String(), Certificate: cert, t: t,
		done: make(chan struct{})}
	if opts.Log == nil {
		s.log = &testLog{t: t}
		opts.Log = log.New(s.log, "amqptest: ", 0)
	}
	s.Broker = broker.New(opts)
	s.Broker.OnAttach(s.onAttach)
	go func() {
		defer close(s.done)
		s.Broker.Serve(ln)
	}()
	t.Cleanup(s.Close)
	return s
}

// testLog writes the broker's log lines to t.Log until the server is
// closed (a line after the test's end would panic).
type testLog struct {
	mu     sync.Mutex
	t      testing.TB
	closed bool
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.t.Log(string(p[:len(p)-min(len(p), 1)])) // log.Logger ends each line with a newline
	}
	return len(p), nil
}

// Close shuts the broker down, giving its connections 5 s to close; it
// is called at the test's cleanup, and may be called before.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.Broker.Shutdown(ctx)
	<-s.done
	if s.log != nil {
		s.log.mu.Lock()
		s.log.closed = true
		s.log.mu.Unlock()
	}
}

// ClientTLS returns a client TLS configuration that trusts the
// certificate of a TLS server (NewTLSServer), for amqps://127.0.0.1;
// nil for a server without one.
func (s *Server) ClientTLS() *tls.Config {
	if s.Certificate == nil {
		return nil
	}
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate)
	return &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

// Queue returns the statistics of the node at address name, false when
// there is none.
func (s *Server) Queue(name string) (broker.QueueStats, bool) { return s.Broker.Queue(name) }

// Queues returns the statistics of every node, by name.
func (s *Server) Queues() []broker.QueueStats { return s.Broker.Queues() }

// Wait waits until cond reports true of the statistics of the node at
// address (zero while there is none) and returns them; it fails the
// test after Timeout. cond is asked again after each change the broker
// makes to its queues (broker.Broker.Wait), not on a timer.
func (s *Server) Wait(address string, cond func(broker.QueueStats) bool) broker.QueueStats {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	q, err := s.Broker.Wait(ctx, address, cond)
	if err != nil {
		s.t.Fatalf("amqptest: waiting on %q: %v (depth %d, unsettled %d, consumers %d)", address, err,
			q.Depth, q.Unsettled, q.Consumers)
	}
	return q
}

// WaitDepth waits until depth messages wait on the queue at address
// (sent to no consumer), and returns its statistics.
func (s *Server) WaitDepth(address string, depth int) broker.QueueStats {
	s.t.Helper()
	return s.Wait(address, func(q broker.QueueStats) bool { return q.Name != "" && q.Depth == depth })
}

// WaitMessage waits for a message on the queue at address and returns
// a copy of the oldest, leaving it there.
func (s *Server) WaitMessage(address string) *message.Message {
	s.t.Helper()
	s.Wait(address, func(q broker.QueueStats) bool { return q.Depth > 0 })
	ms := s.Peek(address, 1)
	if len(ms) == 0 {
		s.t.Fatalf("amqptest: the message on %q was taken", address)
	}
	return ms[0]
}

// Peek returns copies of the oldest n messages waiting on the queue at
// address (n < 0: all), without taking them; it fails the test when
// there is no node there.
func (s *Server) Peek(address string, n int) []*message.Message {
	s.t.Helper()
	ms, err := s.Broker.Peek(address, n)
	if err != nil {
		s.t.Fatalf("amqptest: peek at %q: %v", address, err)
	}
	return ms
}

// Publish stores each message on the queue at address (made when there
// is none), as a producer would have sent them.
func (s *Server) Publish(address string, ms ...*message.Message) {
	s.t.Helper()
	for _, m := range ms {
		if err := s.Broker.Publish(address, m); err != nil {
			s.t.Fatalf("amqptest: publish to %q: %v", address, err)
		}
	}
}

// Peers returns the connections open, oldest first.
func (s *Server) Peers() []broker.Peer { return s.Broker.Peers() }

// Drop cuts the connection of the peer with the given ID (Peers) as a
// network failure would, and reports whether it was open.
func (s *Server) Drop(id uint64) bool { return id != 0 && s.Broker.Drop(id) }

// DropAll cuts every connection as a network failure would, and
// reports whether there was one.
func (s *Server) DropAll() bool { return s.Broker.Drop(0) }

// RefuseNextAttach makes the broker refuse the next link attached, on
// any connection, with e (nil: amqp:not-allowed); the ones after it
// are served.
func (s *Server) RefuseNextAttach(e *engine.Error) {
	if e == nil {
		e = engine.NewError(frame.CondNotAllowed, "amqptest: refused")
	}
	s.mu.Lock()
	s.next = func(broker.AttachInfo) *engine.Error { return e }
	s.mu.Unlock()
}

// HoldNextAttach holds back the broker's answer to the next link
// attached, on any connection, until release is called (at the latest
// when the server closes): a slow broker, for the code under test's
// time-outs. The connection of that link does nothing else meanwhile,
// its close included: release before closing the client.
// attached is closed when that link's attach has come. Calling release
// more than once does nothing more.
func (s *Server) HoldNextAttach() (attached <-chan struct{}, release func()) {
	came, free := make(chan struct{}), make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(free) }) }
	s.mu.Lock()
	s.next = func(broker.AttachInfo) *engine.Error {
		close(came)
		select {
		case <-free:
		case <-s.done:
		}
		return nil
	}
	s.mu.Unlock()
	s.t.Cleanup(release)
	return came, release
}

func (s *Server) onAttach(a broker.AttachInfo) *engine.Error {
	s.mu.Lock()
	f := s.next
	s.next = nil
	s.mu.Unlock()
	if f == nil {
		return nil
	}
	return f(a)
}

// selfSigned makes a certificate for 127.0.0.1 and localhost, valid
// for a day, and a server configuration with it.
func selfSigned() (*tls.Config, *x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "127.0.0.1", Organization: []string{"amqptest"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}},
		MinVersion: tls.VersionTLS12}
	return cfg, cert, nil
}
