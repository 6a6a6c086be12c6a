// Command amqpbroker is an in-memory AMQP 1.0 broker (package broker):
// queues bounded in messages and bytes that hold producers back with
// credit, competing consumers, outcomes and redelivery, fan-out and
// dynamic nodes, SASL PLAIN accounts, TLS, and Prometheus metrics.
//
//	go install github.com/amqpsax/amqpsax/cmd/amqpbroker@latest
//	amqpbroker -listen 127.0.0.1:5672 -metrics 127.0.0.1:9419
//
// Usage:
//
//	amqpbroker [-listen addr] [-max-queue N] [-max-bytes N] [-credit N] [-reject]
//	           [-route key] [-fanout prefix,...] [-auto-delete]
//	           [-user name:password]... [-users file] [-anonymous]
//	           [-tls-cert file -tls-key file [-tls-client-ca file]]
//	           [-idle d] [-max-frame N] [-metrics addr] [-v]
//
//	-listen addr      where to serve AMQP (default 127.0.0.1:5672; use
//	                  port 5671 for amqps by convention)
//	-max-queue N      messages a queue holds, waiting and unsettled, before
//	                  its producers wait for credit (default 100000; -1: no bound)
//	-max-bytes N      bytes a queue holds likewise (default 33554432; -1: no bound)
//	-credit N         the most credit a producer has at once (default 256)
//	-reject           reject messages to a full queue
//	                  (amqp:resource-limit-exceeded) instead of holding
//	                  producers back
//	-route key        route a message by the string application property
//	                  key to the queue it names
//	-fanout prefixes  comma-separated address prefixes of fan-out nodes
//	                  (every consumer gets a copy; default "topic/")
//	-auto-delete      remove queues once they have no consumers, producers
//	                  or messages
//	-user name:pass   an account for SASL PLAIN (repeat for more); with
//	                  accounts, clients must authenticate
//	-users file       accounts, one name:password a line (# comments)
//	-anonymous        allow SASL ANONYMOUS beside the accounts
//	-tls-cert, -tls-key  serve TLS with this certificate and key (PEM)
//	-tls-client-ca file  ask for client certificates signed by these CAs
//	                  (PEM) and allow SASL EXTERNAL for them
//	-idle d           the idle time-out announced (0: none)
//	-max-frame N      the max-frame-size announced (0: the engine's default)
//	-metrics addr     serve Prometheus metrics at http://addr/metrics
//	-v                log connections
//
// Metrics (per queue, label queue): amqpbroker_queue_depth,
// amqpbroker_queue_bytes, amqpbroker_queue_unsettled,
// amqpbroker_queue_consumers, amqpbroker_queue_producers,
// amqpbroker_queue_blocked_producers (gauges) and
// amqpbroker_queue_messages_total by event (enqueued, delivered,
// accepted, rejected, released, modified, redelivered, dropped,
// refused); amqpbroker_connections and
// amqpbroker_connections_accepted_total; and the Go runtime's and the
// process's.
//
// SIGINT or SIGTERM shuts it down: connections are closed (amqp:
// connection:forced) and given 5 s. Messages are in memory only.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "amqpbroker:", err)
		os.Exit(1)
	}
}

// accounts is the -user flag: name:password, repeated.
type accounts map[string]string

func (a accounts) String() string { return fmt.Sprint(len(a), " accounts") }

func (a accounts) Set(s string) error {
	name, pass, ok := strings.Cut(s, ":")
	if !ok || name == "" {
		return errors.New("want name:password")
	}
	a[name] = pass
	return nil
}

// readUsers adds the accounts of file (name:password a line) to a.
func readUsers(a accounts, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := a.Set(line); err != nil {
			return fmt.Errorf("%s:%d: %v", file, n, err)
		}
	}
	return sc.Err()
}

// run runs the broker until ctx is done; ready, when set, is told the
// addresses it serves on (AMQP, then metrics or "").
func run(ctx context.Context, args []string, stderr io.Writer, ready func(amqp, metrics string)) error {
	fs := flag.NewFlagSet("amqpbroker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:5672", "address to serve AMQP on")
	maxQueue := fs.Int("max-queue", broker.DefaultMaxMessages, "messages a queue holds before its producers wait (-1: no bound)")
	maxBytes := fs.Int64("max-bytes", broker.DefaultMaxBytes, "bytes a queue holds before its producers wait (-1: no bound)")
	credit := fs.Uint("credit", broker.DefaultCredit, "the most credit a producer has at once")
	reject := fs.Bool("reject", false, "reject messages to a full queue instead of holding producers back")
	route := fs.String("route", "", "application property routing a message to the queue it names")
	fanout := fs.String("fanout", "topic/", "comma-separated address prefixes of fan-out nodes")
	autoDelete := fs.Bool("auto-delete", false, "remove queues once unused")
	users := accounts{}
	fs.Var(users, "user", "an account name:password for SASL PLAIN (repeatable)")
	usersFile := fs.String("users", "", "file of accounts, name:password a line")
	anonymous := fs.Bool("anonymous", false, "allow SASL ANONYMOUS beside the accounts")
	cert := fs.String("tls-cert", "", "TLS certificate (PEM)")
	key := fs.String("tls-key", "", "TLS key (PEM)")
	clientCA := fs.String("tls-client-ca", "", "CAs of client certificates (PEM): SASL EXTERNAL")
	idle := fs.Duration("idle", 0, "idle time-out announced (0: none)")
	maxFrame := fs.Uint("max-frame", 0, "max-frame-size announced (0: engine default)")
	metrics := fs.String("metrics", "", "serve Prometheus metrics at http://ADDR/metrics")
	verbose := fs.Bool("v", false, "log connections")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *usersFile != "" {
		if err := readUsers(users, *usersFile); err != nil {
			return err
		}
	}
	o := broker.Options{MaxMessages: *maxQueue, MaxBytes: *maxBytes, Credit: uint32(*credit), RejectWhenFull: *reject,
		RouteKey: *route, AutoDelete: *autoDelete, Users: users, Anonymous: *anonymous,
		Engine: engine.Config{ContainerID: "amqpbroker", IdleTimeout: *idle, MaxFrameSize: uint32(*maxFrame)}}
	for p := range strings.SplitSeq(*fanout, ",") {
		if p != "" {
			o.FanoutPrefixes = append(o.FanoutPrefixes, p)
		}
	}
	if (*cert == "") != (*key == "") {
		return errors.New("-tls-cert and -tls-key go together")
	}
	if *cert != "" {
		kp, err := tls.LoadX509KeyPair(*cert, *key)
		if err != nil {
			return err
		}
		o.TLSConfig = &tls.Config{Certificates: []tls.Certificate{kp}, MinVersion: tls.VersionTLS12}
		if *clientCA != "" {
			pem, err := os.ReadFile(*clientCA)
			if err != nil {
				return err
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return fmt.Errorf("%s: no certificate", *clientCA)
			}
			o.TLSConfig.ClientCAs, o.TLSConfig.ClientAuth = pool, tls.VerifyClientCertIfGiven
		}
	} else if *clientCA != "" {
		return errors.New("-tls-client-ca needs -tls-cert and -tls-key")
	}
	logger := log.New(stderr, "amqpbroker: ", log.LstdFlags)
	if *verbose {
		o.Log = logger
	}
	b := broker.New(o)

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	var srv *http.Server
	metricsAddr := ""
	if *metrics != "" {
		mln, err := net.Listen("tcp", *metrics)
		if err != nil {
			ln.Close()
			return err
		}
		metricsAddr = mln.Addr().String()
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
			newCollector(b))
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(mln)
		logger.Printf("metrics at http://%s/metrics", metricsAddr)
	}
	scheme := "amqp"
	if o.TLSConfig != nil {
		scheme = "amqps"
	}
	logger.Printf("listening on %s://%s", scheme, ln.Addr())
	if ready != nil {
		ready(ln.Addr().String(), metricsAddr)
	}
	served := make(chan error, 1)
	go func() { served <- b.Serve(ln) }()
	select {
	case err := <-served:
		if srv != nil {
			srv.Close()
		}
		return err
	case <-ctx.Done():
	}
	logger.Printf("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b.Shutdown(sctx)
	if srv != nil {
		srv.Shutdown(sctx)
	}
	<-served
	return nil
}
