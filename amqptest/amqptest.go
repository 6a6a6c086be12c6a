// Package amqptest starts an in-memory AMQP 1.0 broker (package broker)
// for one test: no docker, no other process.
//
//	func TestOrders(t *testing.T) {
//		srv := amqptest.NewServer(t, nil)
//		// point the code under test at srv.URL ("amqp://127.0.0.1:PORT")
//		...
//		if q, _ := srv.Queue("orders"); q.Depth != 0 { … }
//	}
//
// The broker listens on a free port of 127.0.0.1 and is shut down at
// t.Cleanup (its connections closed with amqp:connection:forced). Its
// options are those of package broker; the test reads queues' statistics
// through the Server for its assertions, or the Broker itself.
package amqptest

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/broker"
)

// Server is a broker serving one test.
type Server struct {
	// URL is the broker's URL: amqp://127.0.0.1:PORT, or amqps:// with
	// TLS.
	URL string
	// Addr is its host:port.
	Addr string
	// Broker is the broker itself.
	Broker *broker.Broker

	done chan struct{}
}

// NewServer starts a broker with the options o (nil: the defaults) on a
// free loopback port, and shuts it down when the test ends. It fails
// the test when it cannot listen.
func NewServer(t testing.TB, o *broker.Options) *Server {
	t.Helper()
	var opts broker.Options
	if o != nil {
		opts = *o
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("amqptest: listen: %v", err)
	}
	scheme := "amqp://"
	if opts.TLSConfig != nil {
		scheme = "amqps://"
	}
	s := &Server{URL: scheme + ln.Addr().String(), Addr: ln.Addr().String(), Broker: broker.New(opts),
		done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.Broker.Serve(ln)
	}()
	t.Cleanup(s.Close)
	return s
}

// Close shuts the broker down, giving its connections 5 s to close; it
// is called at the test's cleanup, and may be called before.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.Broker.Shutdown(ctx)
	<-s.done
}

// Queue returns the statistics of the node at address name, false when
// there is none.
func (s *Server) Queue(name string) (broker.QueueStats, bool) { return s.Broker.Queue(name) }

// Queues returns the statistics of every node, by name.
func (s *Server) Queues() []broker.QueueStats { return s.Broker.Queues() }
