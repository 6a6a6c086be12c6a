// Command amqpbroker is an in-memory AMQP 1.0 broker (package broker):
// queues bounded in messages and bytes that hold producers back with
// credit, competing consumers, outcomes and redelivery, fan-out and
// dynamic nodes, priorities, time-to-live, scheduled delivery and
// dead-lettering, SASL PLAIN accounts, TLS, and Prometheus metrics.
//
//	go install github.com/amqpsax/amqpsax/cmd/amqpbroker@latest
//	amqpbroker -listen 127.0.0.1:5672 -metrics 127.0.0.1:9419
//
// Usage:
//
//	amqpbroker [-listen addr] [-max-queue N] [-max-bytes N] [-max-memory N] [-credit N] [-max-queues N] [-reject]
//	           [-route key] [-fanout prefix,...] [-auto-delete]
//	           [-max-delivery-count N] [-dead-letter-address addr] [-expiry-address addr]
//	           [-users file] [-permissions file] [-anonymous] [-user name:password]...
//	           [-max-connections N] [-max-queues-per-connection N] [-max-queues-per-account N]
//	           [-max-durable-links-per-account N] [-max-durable-links-per-connection N]
//	           [-tls-cert file -tls-key file [-tls-client-ca file]]
//	           [-idle-timeout d] [-max-frame N] [-metrics addr [-queue-metrics]] [-v]
//
//	-listen addr      where to serve AMQP (default 127.0.0.1:5672; use
//	                  port 5671 for amqps by convention)
//	-max-queue N      messages a queue holds, waiting and unsettled, before
//	                  its producers wait for credit (default 100000; -1: no bound)
//	-max-bytes N      bytes a queue holds likewise (default 33554432; -1: no bound)
//	-max-memory N     bytes of messages the broker holds, all queues
//	                  together: producers share the room left as credit
//	                  and wait at the bound (default 1073741824; -1: no bound)
//	-credit N         the most credit a producer has at once (default 256)
//	-max-queues N     queues the broker holds; a link to a new address past
//	                  it is refused (default 10000; -1: no bound)
//	-reject           reject messages to a full queue
//	                  (amqp:resource-limit-exceeded) instead of holding
//	                  producers back
//	-route key        route a message by the string application property
//	                  key to the queue it names
//	-fanout prefixes  comma-separated address prefixes of fan-out nodes
//	                  (every consumer gets a copy; default "topic/")
//	-auto-delete      remove queues once they have no consumers, producers
//	                  or messages
//	-max-delivery-count N  failed deliveries (modified with delivery-failed,
//	                  or left unsettled by a consumer that went) after which
//	                  a message is dead-lettered (default 0: no bound)
//	-dead-letter-address addr  the queue rejected messages, and those past
//	                  -max-delivery-count, are moved to, annotated with why
//	                  (x-opt-deadletter-reason …); without it they are dropped
//	-expiry-address addr  the queue expired messages (the header's ttl, the
//	                  properties' absolute-expiry-time) are moved to;
//	                  without it they are dropped
//	-users file       accounts for SASL SCRAM-SHA-256 and PLAIN (format
//	                  below); with accounts, clients must authenticate
//	-permissions file what each account may do to which addresses (format
//	                  below); without it every client may do everything
//	-anonymous        allow SASL ANONYMOUS beside the accounts (identity
//	                  "anonymous")
//	-user name:pass   an account (repeat for more); deprecated: the
//	                  password shows in ps and the shell's history; use
//	                  -users
//	-max-connections N   connections served at once; one past it is
//	                  closed at once (default 0: no bound; set it below
//	                  the process's file-descriptor limit)
//	-max-queues-per-connection N, -max-queues-per-account N
//	                  nodes the links of one connection, and of one
//	                  account, may make (defaults 1000 and 5000; -1: no bound)
//	-max-durable-links-per-account N
//	                  durable links one account may have kept (default
//	                  1000; -1: no bound)
//	-max-durable-links-per-connection N
//	                  durable links one connection may make (default 256;
//	                  -1: no bound): anonymous clients share one account
//	-tls-cert, -tls-key  serve TLS with this certificate and key (PEM)
//	-tls-client-ca file  ask for client certificates signed by these CAs
//	                  (PEM) and allow SASL EXTERNAL for them
//	-idle-timeout d   the idle time-out announced: a client silent for
//	                  longer is closed (default 60s; 0: none); -idle is
//	                  its old name
//	-max-frame N      the max-frame-size announced (0: the engine's default)
//	-metrics addr     serve Prometheus metrics at http://addr/metrics
//	-queue-metrics    the metrics per queue (label queue), not summed
//	-v                log connections
//
// # Accounts file (-users)
//
// One account a line, name:secret; blank lines and lines starting with
// # are skipped. The secret is a password, or the account's SCRAM
// credentials in PostgreSQL's form, so that the file holds no password:
//
//	alice:s3cret
//	bob:SCRAM-SHA-256$4096:c2FsdHNhbHQ=$StoredKey-base64:ServerKey-base64
//
// (iterations, salt, StoredKey and ServerKey of RFC 5802 §3, standard
// base64). Both forms take SASL SCRAM-SHA-256 and PLAIN. Keep the file
// readable by the broker's user only.
//
// # Permissions file (-permissions)
//
// One account a line: its name, then three regular expressions (RE2,
// Go's regexp syntax, each matched against the whole address),
// separated by blanks, as RabbitMQ's set_permissions takes them:
// configure (the nodes its links may make), write (those it may send
// to), read (those it may consume from); "-" allows nothing. An account
// with no line may do nothing. Use "anonymous" for SASL ANONYMOUS.
//
//	# account  configure       write            read
//	alice      .*              .*               .*
//	bob        -               orders|events\..*  events\..*
//	monitor    -               -                stats
//
// A link past its account's permissions is refused at attach with
// amqp:unauthorized-access; a message routed (-route) to an address its
// producer may not write is rejected with it. A dynamic node (a reply
// queue) needs no permission to make: only its connection may consume
// from it.
//
// Metrics, summed over the queues (per queue with label queue under
// -queue-metrics, which RabbitMQ's Prometheus plugin also leaves off by
// default: one series per queue and event grows with what clients name):
// amqpbroker_queue_depth, amqpbroker_queue_bytes,
// amqpbroker_queue_unsettled, amqpbroker_queue_consumers,
// amqpbroker_queue_producers, amqpbroker_queue_blocked_producers,
// amqpbroker_queue_detached_consumers (gauges) and
// amqpbroker_queue_messages_total by event (enqueued, delivered,
// accepted, rejected, released, modified, redelivered, dropped,
// refused, filtered: passed over by a consumer's source filters);
// amqpbroker_queues; amqpbroker_durable_links by state;
// amqpbroker_connections and amqpbroker_connections_accepted_total; and
// the Go runtime's and the process's.
//
// SIGINT or SIGTERM shuts it down: connections are closed (amqp:
// connection:forced) and given 5 s. Messages are in memory only.
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/amqpsax/amqpsax/broker"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/ws"
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

// accounts are the -user and -users accounts: name, then a password or
// SCRAM credentials (scramPrefix…).
type accounts map[string]engine.SCRAMCredentials

func (a accounts) String() string { return fmt.Sprint(len(a), " accounts") }

// Set adds one account, name:secret.
func (a accounts) Set(s string) error {
	name, secret, ok := strings.Cut(s, ":")
	if !ok || name == "" {
		return errors.New("want name:password")
	}
	var cred engine.SCRAMCredentials
	var err error
	if rest, ok := strings.CutPrefix(secret, scramPrefix); ok {
		cred, err = parseSCRAM(rest)
	} else {
		cred, err = engine.NewSCRAMCredentials(secret, nil, 0)
	}
	if err != nil {
		return fmt.Errorf("account %q: %v", name, err)
	}
	a[name] = cred
	return nil
}

// scramPrefix starts SCRAM credentials in PostgreSQL's form.
const scramPrefix = "SCRAM-SHA-256$"

// parseSCRAM parses iterations:salt$StoredKey:ServerKey (base64).
func parseSCRAM(s string) (engine.SCRAMCredentials, error) {
	bad := errors.New("want SCRAM-SHA-256$iterations:salt$StoredKey:ServerKey")
	head, keys, ok := strings.Cut(s, "$")
	if !ok {
		return engine.SCRAMCredentials{}, bad
	}
	it, salt64, ok1 := strings.Cut(head, ":")
	stored64, server64, ok2 := strings.Cut(keys, ":")
	n, err := strconv.Atoi(it)
	if !ok1 || !ok2 || err != nil || n < 1 || n > 1<<24 {
		return engine.SCRAMCredentials{}, bad
	}
	var c engine.SCRAMCredentials
	c.Iterations = n
	for _, f := range []struct {
		dst *[]byte
		s   string
	}{{&c.Salt, salt64}, {&c.StoredKey, stored64}, {&c.ServerKey, server64}} {
		if *f.dst, err = base64.StdEncoding.DecodeString(f.s); err != nil || len(*f.dst) == 0 {
			return engine.SCRAMCredentials{}, bad
		}
	}
	if len(c.StoredKey) != sha256.Size || len(c.ServerKey) != sha256.Size {
		return engine.SCRAMCredentials{}, bad
	}
	return c, nil
}

// authenticator offers SCRAM-SHA-256 and PLAIN for a's accounts (and
// ANONYMOUS with anonymous). PLAIN derives the password's key with the
// account's salt and compares it with the one stored.
func (a accounts) authenticator(anonymous bool) engine.Authenticator {
	lookup := func(user string) (engine.SCRAMCredentials, bool) {
		c, ok := a[user]
		return c, ok
	}
	check := func(user, password string) bool {
		c, ok := a[user]
		if !ok {
			return false
		}
		d, err := engine.NewSCRAMCredentials(password, c.Salt, c.Iterations)
		return err == nil && subtle.ConstantTimeCompare(d.StoredKey, c.StoredKey) == 1
	}
	m := []engine.ServerMechanism{engine.SCRAMSHA256Server(lookup), engine.PlainServer(check)}
	if anonymous {
		m = append(m, engine.AnonymousServer())
	}
	return engine.Mechanisms(m...)
}

// readLines calls line with each line of file that is not blank or a #
// comment, naming file and line number in its error.
func readLines(file string, line func(string) error) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if err := line(l); err != nil {
			return fmt.Errorf("%s:%d: %v", file, n, err)
		}
	}
	return sc.Err()
}

// readUsers adds the accounts of file (name:secret a line) to a.
func readUsers(a accounts, file string) error { return readLines(file, a.Set) }

// readPermissions reads the grants of file (name configure write read a
// line, "-" for none).
func readPermissions(file string) (*broker.Permissions, error) {
	grants := map[string]broker.Grant{}
	err := readLines(file, func(l string) error {
		f := strings.Fields(l)
		if len(f) != 4 {
			return errors.New("want: account configure write read")
		}
		for i := 1; i < 4; i++ {
			if f[i] == "-" {
				f[i] = ""
			}
		}
		if _, dup := grants[f[0]]; dup {
			return fmt.Errorf("account %q twice", f[0])
		}
		grants[f[0]] = broker.Grant{Configure: f[1], Write: f[2], Read: f[3]}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return broker.NewPermissions(grants)
}

// run runs the broker until ctx is done; ready, when set, is told the
// addresses it serves on (AMQP, then metrics or "").
func run(ctx context.Context, args []string, stderr io.Writer, ready func(amqp, metrics string)) error {
	fs := flag.NewFlagSet("amqpbroker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:5672", "address to serve AMQP on")
	wsListen := fs.String("ws", "", "also serve AMQP over WebSockets on ADDR (ws://, wss:// with -tls-cert)")
	maxQueue := fs.Int("max-queue", broker.DefaultMaxMessages, "messages a queue holds before its producers wait (-1: no bound)")
	maxBytes := fs.Int64("max-bytes", 0, "bytes a queue holds before its producers wait (0: no bound of its own, -max-memory bounds all queues)")
	maxMemory := fs.Int64("max-memory", broker.DefaultMaxMemory, "bytes of messages the broker holds, all queues together (-1: no bound)")
	credit := fs.Uint("credit", broker.DefaultCredit, "the most credit a producer has at once")
	maxQueues := fs.Int("max-queues", broker.DefaultMaxQueues, "queues the broker holds (-1: no bound)")
	reject := fs.Bool("reject", false, "reject messages to a full queue instead of holding producers back")
	route := fs.String("route", "", "application property routing a message to the queue it names")
	fanout := fs.String("fanout", "topic/", "comma-separated address prefixes of fan-out nodes")
	autoDelete := fs.Bool("auto-delete", false, "remove queues once unused")
	maxDeliveries := fs.Int("max-delivery-count", 0, "failed deliveries after which a message is dead-lettered (0: no bound)")
	deadLetter := fs.String("dead-letter-address", "", "queue that rejected messages, and those past -max-delivery-count, are moved to (none: dropped)")
	expiry := fs.String("expiry-address", "", "queue that expired messages are moved to (none: dropped)")
	users := accounts{}
	fs.Var(users, "user", "deprecated (the password shows in ps): an account name:password (repeatable); use -users")
	usersFile := fs.String("users", "", "file of accounts, name:password or name:SCRAM-SHA-256$... a line")
	permsFile := fs.String("permissions", "", "file of permissions, account configure write read a line")
	anonymous := fs.Bool("anonymous", false, "allow SASL ANONYMOUS beside the accounts")
	maxConns := fs.Int("max-connections", 0, "connections served at once (0: no bound)")
	maxConnQueues := fs.Int("max-queues-per-connection", broker.DefaultMaxQueuesPerConnection,
		"nodes one connection may make (-1: no bound)")
	maxAcctQueues := fs.Int("max-queues-per-account", broker.DefaultMaxQueuesPerAccount,
		"nodes one account may make (-1: no bound)")
	maxAcctDurable := fs.Int("max-durable-links-per-account", broker.DefaultMaxDurableLinksPerAccount,
		"durable links one account may have kept (-1: no bound)")
	maxConnDurable := fs.Int("max-durable-links-per-connection", broker.DefaultMaxDurableLinksPerConn,
		"durable links one connection may make (-1: no bound)")
	queueMetrics := fs.Bool("queue-metrics", false, "metrics per queue (label queue), not summed")
	cert := fs.String("tls-cert", "", "TLS certificate (PEM)")
	key := fs.String("tls-key", "", "TLS key (PEM)")
	clientCA := fs.String("tls-client-ca", "", "CAs of client certificates (PEM): SASL EXTERNAL")
	var idle time.Duration
	fs.DurationVar(&idle, "idle-timeout", 60*time.Second, "idle time-out announced: a client silent for longer is closed (0: none)")
	fs.DurationVar(&idle, "idle", 60*time.Second, "the old name of -idle-timeout")
	maxFrame := fs.Uint("max-frame", 0, "max-frame-size announced (0: engine default)")
	metrics := fs.String("metrics", "", "serve Prometheus metrics at http://ADDR/metrics")
	verbose := fs.Bool("v", false, "log connections")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	logger := log.New(stderr, "amqpbroker: ", log.LstdFlags)
	if len(users) > 0 {
		logger.Printf("-user is deprecated: its password shows in ps; use -users FILE")
	}
	if *usersFile != "" {
		if err := readUsers(users, *usersFile); err != nil {
			return err
		}
	}
	o := broker.Options{MaxMessages: *maxQueue, MaxBytes: *maxBytes, MaxMemory: *maxMemory, Credit: uint32(*credit), MaxQueues: *maxQueues,
		RejectWhenFull: *reject, RouteKey: *route, AutoDelete: *autoDelete, MaxConnections: *maxConns,
		MaxQueuesPerConnection: *maxConnQueues, MaxQueuesPerAccount: *maxAcctQueues,
		MaxDurableLinksPerAccount:    *maxAcctDurable,
		MaxDurableLinksPerConnection: *maxConnDurable,
		MaxDeliveryCount:             *maxDeliveries, DeadLetterAddress: *deadLetter, ExpiryAddress: *expiry,
		Engine: engine.Config{ContainerID: "amqpbroker", IdleTimeout: idle, MaxFrameSize: uint32(*maxFrame)}}
	if len(users) > 0 {
		o.Engine.Auth = users.authenticator(*anonymous)
	}
	if *permsFile != "" {
		perms, err := readPermissions(*permsFile)
		if err != nil {
			return err
		}
		o.Permissions = perms.Allow
	}
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
			newCollector(b, *queueMetrics))
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
	if *wsListen != "" {
		wln, err := ws.Listen(*wsListen, o.TLSConfig)
		if err != nil {
			ln.Close()
			return err
		}
		wscheme := "ws"
		if o.TLSConfig != nil {
			wscheme = "wss"
		}
		logger.Printf("listening on %s://%s/", wscheme, wln.Addr())
		go b.Serve(wln) // ends with the broker's Shutdown
	}
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
