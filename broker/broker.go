package broker

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"log"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/internal/accept"
	"github.com/amqpsax/amqpsax/message"
)

// Defaults of the zero Options.
const (
	DefaultMaxMessages = 100_000 // messages a queue holds
	DefaultCredit      = 256     // the most credit a producer is granted at once
	DefaultMaxQueues   = 10_000  // nodes the broker holds
	// DefaultMaxSessions is the sessions a connection may begin
	// (Engine.ChannelMax). RabbitMQ allows 64; Azure/go-amqp's own test
	// suite begins 100 at once, so the bound is the engine's channel-max
	// (each session counts in the connection's memory budget).
	DefaultMaxSessions = 256
	DefaultMaxMemory   = 256 << 20 // bytes of messages the broker holds, all queues together: a test's or a small service's traffic
)

// Options configure a Broker. The zero value works: queues bounded by the
// defaults above, producers that wait at the limit, no authentication
// (SASL ANONYMOUS, or none), plain TCP.
type Options struct {
	// MaxMessages and MaxBytes bound each queue, and each consumer's
	// subscription to a fan-out address: MaxMessages 0 means
	// DefaultMaxMessages, a negative value no bound; MaxBytes 0 (or
	// negative) means no bound of the queue's own, so that a queue takes
	// what the broker as a whole has room for (MaxMemory), as RabbitMQ's
	// memory watermark and Artemis' address-full policy do. A queue at a bound
	// withholds credit from its producers (or rejects, RejectWhenFull);
	// it may go past the bound by the credit it had granted before, at
	// most Credit messages a producer, which the credit it grants
	// shrinks towards as the queue fills.
	MaxMessages int
	MaxBytes    int64
	// MaxMemory bounds the bytes of the messages the broker holds, all
	// its queues together (a message a fan-out node copies counts
	// once): 0 means DefaultMaxMemory, a negative value no bound.
	// Producers are granted credit for the room left, shared among
	// them, and wait for credit at the bound; a message that would take
	// the broker past it by more than an eighth (credit a producer
	// outran by sending larger messages than it had) is rejected with
	// amqp:resource-limit-exceeded.
	MaxMemory int64
	// RejectWhenFull makes a full queue reject messages with
	// amqp:resource-limit-exceeded instead of withholding credit.
	RejectWhenFull bool
	// Credit is the most credit a producer is granted at once; 0 means
	// DefaultCredit.
	Credit uint32
	// MaxQueues bounds the nodes (queues and fan-out addresses) the
	// broker holds; 0 means DefaultMaxQueues, a negative value no bound.
	// A link to a new address past it is refused, and a message routed to
	// one rejected, with amqp:resource-limit-exceeded.
	MaxQueues int
	// RouteKey, when set, names an application property: a message
	// whose application-properties hold a string under it goes to the
	// node that string names, instead of its link's target. The body is
	// not decoded.
	RouteKey string
	// FanoutPrefixes are address prefixes of fan-out nodes, where every
	// consumer gets a copy of each message. A node is fan-out also when
	// the link that makes it asks for it: a source with
	// distribution-mode "copy", or capability "topic".
	FanoutPrefixes []string
	// AutoDelete removes a queue once it has no consumers, producers or
	// messages left. Dynamic nodes are always removed with the link that
	// made them.
	AutoDelete bool
	// Users are the accounts for SASL PLAIN, by user name. With none,
	// clients need not authenticate (ANONYMOUS, or no SASL).
	Users map[string]string
	// Anonymous allows SASL ANONYMOUS beside PLAIN when Users is set.
	Anonymous bool
	// TLSConfig, when set, makes every connection TLS (amqps); a client
	// certificate it verifies allows SASL EXTERNAL. A connection that is
	// TLS already (one with a ConnectionState method: a *tls.Conn, or a
	// wss:// WebSocket of the ws module) is taken as it is.
	TLSConfig *tls.Config
	// Engine is the base of each connection's configuration:
	// ContainerID ("amqpsax-broker" when empty), IdleTimeout,
	// MaxFrameSize, Window, MaxMessageSize, HandshakeTimeout, MaxMemory;
	// ChannelMax (DefaultMaxSessions-1 when 0) and HandleMax (255 when
	// 0: 256 links a session); Auth, when Users is empty (SCRAM, or
	// accounts kept elsewhere: the identity it returns is the one
	// Permissions is asked about). The broker sets Credit and AutoAccept
	// itself.
	Engine engine.Config
	// MaxDurableLinks bounds the detached links with a durable terminus
	// (unsettled-state) whose state the broker keeps for a later attach
	// (durable producers and subscriptions): 0 means
	// DefaultMaxDurableLinks, a negative value no bound. Past it, the one
	// detached longest expires at once, as its expiry policy would have
	// ended it later.
	MaxDurableLinks int
	// Permissions, when set, decides what each account may do to each
	// node (Op: make it, send to it, consume from it), asked when a link
	// attaches (never per message; a message routed by RouteKey to
	// another node is checked when its producer first routes to that
	// address): a link it refuses is detached with
	// amqp:unauthorized-access. identity is what SASL authenticated
	// (engine.Conn.Identity). Nil allows everything. A dynamic node
	// needs none: only the connection that made it may consume from it,
	// and any may send to it (Write on its address). It is called on
	// connections' goroutines, with the broker's lock held: it must not
	// call the Broker. [Permissions.Allow] is one, RabbitMQ-like.
	Permissions func(identity, address string, op Op) bool
	// MaxQueuesPerConnection and MaxQueuesPerAccount bound the nodes the
	// links (and routed messages) of one connection, and of all the
	// connections of one account, may make and have there at once: 0
	// means DefaultMaxQueuesPerConnection and
	// DefaultMaxQueuesPerAccount, a negative value no bound. Past them
	// a link to a new address is refused, and a message routed to one
	// rejected, with amqp:resource-limit-exceeded.
	MaxQueuesPerConnection int
	MaxQueuesPerAccount    int
	// MaxDurableLinksPerAccount bounds the durable links (attached, or
	// detached and kept) of one account: 0 means
	// DefaultMaxDurableLinksPerAccount, a negative value no bound. Past
	// it an attach of a new durable link is refused with
	// amqp:resource-limit-exceeded, so that one account cannot make the
	// broker expire everyone's (MaxDurableLinks).
	MaxDurableLinksPerAccount int
	// MaxDurableLinksPerConnection bounds the durable link states one
	// connection makes in its life (a durable link it attaches anew; one
	// it takes up again costs nothing): 0 means
	// DefaultMaxDurableLinksPerConn, a negative value no bound. Past it
	// such an attach is refused with amqp:resource-limit-exceeded, so that
	// one connection of an account many clients share (anonymous) cannot
	// take the account's whole MaxDurableLinksPerAccount.
	MaxDurableLinksPerConnection int
	// MaxConnections bounds the connections served at once: one
	// accepted past it is closed at once. 0 means no bound.
	MaxConnections int
	// Log, when set, logs connections and faults.
	Log *log.Logger
	// Responders are nodes served by Go code, by address: a message
	// sent to one is a request, answered by its Responder with a reply
	// stored on the node the request's reply-to names (see Nodes served
	// by Go code in the package documentation). The map must not change
	// after New.
	Responders map[string]Responder
	// MaxDeliveryCount, when positive, bounds the deliveries of a
	// message that fail: one given back with a modified outcome with
	// delivery-failed, or left unsettled by a consumer that went, whose
	// header's delivery-count reaches it is dead-lettered (reason
	// ReasonMaxDeliveryCount) instead of queued again: moved to
	// DeadLetterAddress, or dropped when there is none. 0: no bound.
	MaxDeliveryCount int
	// DeadLetterAddress, when set, is the node dead-lettered messages
	// are moved to (made when there is none, a queue), with message
	// annotations saying why (AnnotationDeadLetterReason,
	// AnnotationDeadLetterDescription, AnnotationOriginalAddress):
	// messages a consumer rejects and those past MaxDeliveryCount.
	// Without it, rejected messages are dropped.
	DeadLetterAddress string
	// DeadLetterAddresses are dead-letter addresses of single queues, by
	// the queue's address: they override DeadLetterAddress for it (an
	// empty one: none, its dead-lettered messages are dropped), as
	// Artemis' address settings and Service Bus's dead-letter queue of
	// each queue.
	DeadLetterAddresses map[string]string
	// ExpiryAddress, when set, is the node expired messages are moved
	// to, as dead-lettered ones (reason ReasonExpired), as ActiveMQ
	// Artemis' expiry address; without it they are dropped.
	ExpiryAddress string
	// Now, when set, is the broker's clock for messages' lifetimes
	// (time-to-live, scheduled delivery): for tests, with a fake clock.
	// The broker's timer for scheduled messages runs on the system's
	// clock towards the time Now gives; a message whose time has come by
	// Now is also made visible when any message is stored or sent, and
	// when statistics are read (Queue, Queues).
	Now func() time.Time
}

// Broker is an in-memory AMQP 1.0 broker on package engine. New makes
// one, Serve serves a listener, Shutdown or Close stop it; Queue and
// Queues read its statistics. Its methods are safe for concurrent use.
type Broker struct {
	opts   Options
	cfg    engine.Config
	credit uint32
	fanout []string

	mu       sync.Mutex
	nodes    map[string]*node
	pool     pool
	seq      uint64              // of the last message stored
	accounts map[string]*account // what each identity made (security.go)
	// dynamicAddress makes a dynamic node's address: newDynamicAddress
	// but in tests that replay a recorded conversation.
	dynamicAddress func() []byte
	live           atomic.Int64 // connections being served
	start          time.Time
	closed         bool
	lns            []net.Listener
	drivers        map[*driver.Driver]struct{}
	scratch        []byte // for header rewrites, under mu
	visited        uint64 // consumers wakeOneLocked looked at, for a test of its work
	// sent, in tests, is told of each message sent to a consumer
	// (FuzzBroker's check of permissions: breach).
	sent      func(c *consumer)
	breach    error
	producers int         // producer links attached, to share MaxMemory's room among
	memWait   []*producer // producers waiting for MaxMemory's room
	wg        sync.WaitGroup
	accepted  atomic.Uint64       // connections accepted
	connIDs   atomic.Uint64       // the last conn.id given
	shared    map[subKey]*node    // shared subscriptions (shared.go)
	durables  map[durKey]*durable // links with a durable terminus (durable.go)
	keptN     int                 // of them detached
	// The copies made for detached durable subscriptions, and their
	// bytes, bounded together (durable_sub.go).
	keptCopies int
	keptBytes  int64
	ext        ext // inspect.go, responder.go
	// Message lifetimes (lifetime.go): the addresses of
	// DeadLetterAddress and ExpiryAddress (nil when unset), the
	// scheduled messages (a heap, earliest first) and the timer for the
	// earliest, set for timerAt (0: not set); scratch for annotations.
	deadLetterAddr, expiryAddr []byte
	deadLetters                map[string][]byte // DeadLetterAddresses
	sched                      []sched
	timer                      *time.Timer
	timerAt                    int64
	dlVals                     []byte
	dlSet                      []message.Entry
}

// New returns a Broker with the options o.
func New(o Options) *Broker {
	b := &Broker{opts: o, nodes: make(map[string]*node),
		drivers: make(map[*driver.Driver]struct{}), start: time.Now(), durables: make(map[durKey]*durable),
		accounts: make(map[string]*account), dynamicAddress: newDynamicAddress}
	if b.opts.MaxMessages == 0 {
		b.opts.MaxMessages = DefaultMaxMessages
	}
	if b.opts.MaxBytes == 0 {
		b.opts.MaxBytes = -1 // none of its own: MaxMemory bounds all queues
	}
	if b.opts.MaxQueues == 0 {
		b.opts.MaxQueues = DefaultMaxQueues
	}
	if b.opts.MaxMemory == 0 {
		b.opts.MaxMemory = DefaultMaxMemory
	}
	if b.opts.MaxDurableLinks == 0 {
		b.opts.MaxDurableLinks = DefaultMaxDurableLinks
	}
	if b.opts.MaxQueuesPerConnection == 0 {
		b.opts.MaxQueuesPerConnection = DefaultMaxQueuesPerConnection
	}
	if b.opts.MaxQueuesPerAccount == 0 {
		b.opts.MaxQueuesPerAccount = DefaultMaxQueuesPerAccount
	}
	if b.opts.MaxDurableLinksPerAccount == 0 {
		b.opts.MaxDurableLinksPerAccount = DefaultMaxDurableLinksPerAccount
	}
	if o.DeadLetterAddress != "" {
		b.deadLetterAddr = []byte(o.DeadLetterAddress)
	}
	if o.ExpiryAddress != "" {
		b.expiryAddr = []byte(o.ExpiryAddress)
	}
	if len(o.DeadLetterAddresses) > 0 {
		b.deadLetters = make(map[string][]byte, len(o.DeadLetterAddresses))
		for q, a := range o.DeadLetterAddresses {
			if a != "" {
				b.deadLetters[q] = []byte(a)
			} else {
				b.deadLetters[q] = nil
			}
		}
	}
	if b.opts.MaxDurableLinksPerConnection == 0 {
		b.opts.MaxDurableLinksPerConnection = DefaultMaxDurableLinksPerConn
	}
	b.credit = o.Credit
	if b.credit == 0 {
		b.credit = DefaultCredit
	}
	b.fanout = append([]string(nil), o.FanoutPrefixes...)
	cfg := o.Engine
	if cfg.ContainerID == "" {
		cfg.ContainerID = "amqpsax-broker"
	}
	cfg.Credit, cfg.AutoAccept, cfg.ManualSettle = 0, false, false
	if cfg.ChannelMax == 0 {
		cfg.ChannelMax = DefaultMaxSessions - 1
	}
	if len(o.Users) > 0 {
		users := make(map[string]string, len(o.Users))
		for u, p := range o.Users {
			users[u] = p
		}
		cfg.Auth = engine.Plain(func(user, password string) bool {
			want, ok := users[user]
			return ok && subtle.ConstantTimeCompare([]byte(want), []byte(password)) == 1
		}, o.Anonymous)
	}
	if !cfg.OfferedCapabilities.Contains("ANONYMOUS-RELAY") {
		// Producers may attach with no target address (handler.go).
		syms := cfg.OfferedCapabilities.Append(nil)
		names := make([]string, 0, len(syms)+1)
		for _, sym := range syms {
			names = append(names, string(sym))
		}
		cfg.OfferedCapabilities = frame.Symbols(frame.AppendSymbols(nil, append(names, "ANONYMOUS-RELAY")...))
	}
	if cfg.Coordinator == nil {
		cfg.Coordinator = &coordinator{b: b} // txn.go
	}
	b.cfg = cfg
	return b
}

func (b *Broker) logf(f string, a ...any) {
	if b.opts.Log != nil {
		b.opts.Log.Printf(f, a...)
	}
}

// ErrClosed is what Serve returns after Shutdown or Close.
var ErrClosed = errors.New("broker: closed")

// Serve accepts connections from ln and serves each on its own goroutine
// until ln fails or the broker is shut down (then it returns ErrClosed).
// An accept error that passes (too many open files, a time-out) ends
// nothing: Serve logs it (Options.Log) and accepts again after a pause,
// 5 ms doubling to at most 1 s while the errors go on, as net/http's
// Server does.
func (b *Broker) Serve(ln net.Listener) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		ln.Close()
		return ErrClosed
	}
	b.lns = append(b.lns, ln)
	b.mu.Unlock()
	var pause time.Duration // after an accept error that passes
	for {
		nc, err := ln.Accept()
		if err != nil {
			b.mu.Lock()
			closed := b.closed
			b.mu.Unlock()
			if closed {
				return ErrClosed
			}
			if !accept.Passing(err) {
				return err
			}
			pause = accept.Pause(pause)
			b.logf("accept: %v; retrying in %v", err, pause)
			time.Sleep(pause)
			continue
		}
		pause = 0
		b.accepted.Add(1)
		b.wg.Add(1)
		go b.serveConn(nc)
	}
}

// ListenAndServe listens on the TCP address addr and serves it.
func (b *Broker) ListenAndServe(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return b.Serve(ln)
}

func (b *Broker) serveConn(nc net.Conn) {
	defer b.wg.Done()
	if live := b.live.Add(1); b.opts.MaxConnections > 0 && live > int64(b.opts.MaxConnections) {
		b.live.Add(-1)
		b.logf("connection from %s closed: %d connections served already (MaxConnections)", nc.RemoteAddr(), b.opts.MaxConnections)
		nc.Close()
		return
	}
	defer b.live.Add(-1)
	cfg := b.cfg
	if sc, ok := nc.(interface{ ConnectionState() tls.ConnectionState }); ok && b.opts.TLSConfig != nil {
		// TLS already (a *tls.Conn of the caller's listener, or a
		// WebSocket over wss:// from the ws module): not wrapped again.
		cfg.PeerCertificates = driver.VerifiedPeer(sc.ConnectionState())
	} else if b.opts.TLSConfig != nil {
		tc := tls.Server(nc, b.opts.TLSConfig)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			b.logf("tls handshake from %s: %q", nc.RemoteAddr(), err)
			nc.Close()
			return
		}
		cfg.PeerCertificates = driver.VerifiedPeer(tc.ConnectionState())
		nc = tc
	}
	d := driver.NewDriver(nc, engine.NewServer(cfg, handler{b}))
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		nc.Close()
		return
	}
	b.drivers[d] = struct{}{}
	b.mu.Unlock()
	err := d.Run(context.Background())
	if err != nil {
		b.logf("connection from %s: %q", nc.RemoteAddr(), err) // %q: the error may carry peer-chosen text (a SASL mechanism, a description)
	}
	b.mu.Lock()
	delete(b.drivers, d)
	b.mu.Unlock()
}

// Shutdown stops accepting, closes every connection (close with
// amqp:connection:forced) and waits for them to end, or for ctx; then it
// closes what is left. Messages still queued are dropped.
func (b *Broker) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	b.closed = true
	if b.timer != nil {
		b.timer.Stop()
	}
	for _, ln := range b.lns {
		ln.Close()
	}
	for d := range b.drivers {
		d.Close()
	}
	b.mu.Unlock()
	ended := make(chan struct{})
	go func() { b.wg.Wait(); close(ended) }()
	select {
	case <-ended:
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		for d := range b.drivers {
			d.NetConn().Close()
		}
		b.mu.Unlock()
		<-ended
		return ctx.Err()
	}
}

// Close closes the listeners and every connection at once.
func (b *Broker) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b.Shutdown(ctx)
	return nil
}

// QueueStats are a node's statistics: a queue's, or a fan-out address's,
// whose depth and bytes are the sum over its subscriptions.
type QueueStats struct {
	Name    string
	Fanout  bool // every consumer gets a copy
	Dynamic bool // made for a dynamic source or target; removed with its link
	// Depth is the messages waiting, Unsettled those sent to consumers
	// and not settled yet, Scheduled those held until their delivery
	// time (not in Depth), and Bytes the size of all three: what the
	// bounds count. Depth may count messages that have expired and not
	// yet been reached (expiry is checked at the front of the queue).
	Depth     int
	Scheduled int
	Bytes     int64
	Unsettled int
	Consumers int
	// Detached is the durable consumers detached whose subscription the
	// broker keeps (until their expiry policy ends it): their acquired
	// messages count in Unsettled, a fan-out node's copies kept for them
	// in Depth.
	Detached  int
	Producers int
	// Blocked is the number of producers waiting for credit.
	Blocked int
	// Totals since the node was made: messages stored, sent to
	// consumers, accepted, rejected, released, modified, sent again, and
	// dropped (to a fan-out address with no consumer, or left on a node
	// that was removed); Refused counts messages rejected because the
	// node was full (Options.RejectWhenFull). Expired counts messages
	// that expired before they were delivered, DeadLettered those moved
	// to Options.DeadLetterAddress or ExpiryAddress from this node.
	// Filtered counts the times a consumer's source filters passed a
	// message over: on a fan-out node a copy not made for its
	// subscription; on a queue a message a selective consumer looked at
	// and left for others (once a consumer while the queue keeps its
	// order: see the package documentation).
	Enqueued, Delivered, Accepted, Rejected, Released, Modified, Redelivered, Dropped, Refused uint64
	Expired, DeadLettered, Filtered                                                            uint64
	// EnqueueRate and DeliverRate are messages a second, over the
	// seconds before the last sample (taken when statistics are read, at
	// most once a second).
	EnqueueRate, DeliverRate float64
}

// Queue returns the statistics of the node at address name.
func (b *Broker) Queue(name string) (QueueStats, bool) {
	b.mu.Lock()
	wake := b.sweepAllLocked(b.nodes[name], nil)
	n := b.nodes[name]
	var s QueueStats
	if n != nil {
		s = b.statsLocked(n, time.Now())
	}
	b.mu.Unlock()
	b.wake(nil, wake)
	return s, n != nil
}

// sweepAllLocked makes visible the scheduled messages whose time has
// come and expires the messages at the front of n's queues that have
// expired, before statistics are read; it wakes the consumers that may
// take what came.
func (b *Broker) sweepAllLocked(n *node, wake []*conn) []*conn {
	wake = b.dueNowLocked(wake)
	if n == nil {
		return wake
	}
	if !n.fanout {
		return b.sweepLocked(n, &n.q, -1, wake)
	}
	for _, c := range n.consumers {
		wake = b.sweepLocked(n, c.q, -1, wake)
	}
	return wake
}

// Queues returns the statistics of every node, by name.
func (b *Broker) Queues() []QueueStats {
	b.mu.Lock()
	now := time.Now()
	wake := b.dueNowLocked(nil)
	for _, n := range b.nodes {
		wake = b.sweepAllLocked(n, wake)
	}
	out := make([]QueueStats, 0, len(b.nodes))
	for _, n := range b.nodes {
		out = append(out, b.statsLocked(n, now))
	}
	b.mu.Unlock()
	b.wake(nil, wake)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Connections returns the number of connections open and accepted in
// all.
func (b *Broker) Connections() (open int, accepted uint64) {
	b.mu.Lock()
	open = len(b.drivers)
	b.mu.Unlock()
	return open, b.accepted.Load()
}

func (b *Broker) statsLocked(n *node, now time.Time) QueueStats {
	s := QueueStats{Name: n.name, Fanout: n.fanout, Dynamic: n.dynamic, Producers: n.producers,
		Blocked: len(n.blocked), Consumers: len(n.consumers), Detached: len(n.detached), Refused: n.c.refused,
		Enqueued: n.c.enqueued, Delivered: n.c.delivered, Accepted: n.c.acked, Rejected: n.c.rejected,
		Released: n.c.released, Modified: n.c.modified, Redelivered: n.c.redelivered, Dropped: n.c.dropped,
		Expired: n.c.expired, DeadLettered: n.c.deadLettered, Scheduled: n.q.sched, Filtered: n.c.filtered}
	if n.fanout {
		for _, cs := range [2][]*consumer{n.consumers, n.detached} {
			for _, c := range cs {
				s.Depth += c.q.len()
				s.Bytes += c.q.bytes
				s.Unsettled += c.q.unsettled
			}
		}
		for _, sub := range n.subs {
			s.Depth += sub.q.len()
			s.Bytes += sub.q.bytes
			s.Unsettled += sub.q.unsettled
			s.Consumers += len(sub.consumers)
			s.Delivered += sub.c.delivered
			s.Accepted += sub.c.acked
			s.Rejected += sub.c.rejected
			s.Released += sub.c.released
			s.Modified += sub.c.modified
			s.Redelivered += sub.c.redelivered
			s.Filtered += sub.c.filtered
		}
	} else {
		s.Depth, s.Bytes, s.Unsettled = n.q.len(), n.q.bytes, n.q.unsettled
	}
	s.Bytes += n.q.schedBytes
	if now.Sub(n.s1.at) >= time.Second {
		n.s0, n.s1 = n.s1, sample{at: now, enqueued: n.c.enqueued, delivered: n.c.delivered}
	}
	if dt := now.Sub(n.s0.at).Seconds(); dt > 0 {
		s.EnqueueRate = float64(n.c.enqueued-n.s0.enqueued) / dt
		s.DeliverRate = float64(n.c.delivered-n.s0.delivered) / dt
	}
	return s
}

// node is a queue, or a fan-out address whose consumers each have a
// queue of their own (consumer.own). Under the broker's lock.
type node struct {
	name      string
	fanout    bool
	dynamic   bool
	owner     *consumer // the dynamic source's link, or nil
	ownerP    *producer // the dynamic target's link, or nil
	ownerC    *conn     // a dynamic node's connection: its only consumers'
	maker     *made     // the count of nodes of the connection that made it
	account   *account  // the account that made it, likewise
	deleted   bool
	q         queue
	consumers []*consumer
	detached  []*consumer // durable subscriptions kept while detached (durable_sub.go)
	// ready is a queue node's consumers that wait for messages (hungry),
	// in the order they came to wait: a message wakes the first, so a
	// queue with many consumers that have no credit is not searched for
	// one that has. An entry may be stale (its consumer took a message
	// since, or went): stale counts those of consumers gone, and the
	// ring is compacted when they are half of it.
	ready    cring
	stale    int
	browsing int // consumers that browse it (consumer.browse)
	// A fan-out node's shared subscriptions, and a shared
	// subscription's fan-out node, name, filters, and whether it stays
	// without receivers (shared.go).
	subs      []*node
	parent    *node
	subKey    subKey
	filt      *sourceFilter
	subConn   uint64 // the connection of the receiver that made it, for no-local
	keep      bool
	producers int
	blocked   []*producer // waiting for credit
	lastSize  int         // of the last message stored, to turn room in bytes into credit
	txnBytes  int64       // of the messages open transactions hold for it (txn.go)
	txnN      int
	// deadLetter is the address its dead-lettered messages go to, nil
	// for none (Options.DeadLetterAddress, DeadLetterAddresses).
	deadLetter []byte
	c          counters
	s0, s1     sample
}

// nodeLocked returns the node at addr, made when there is none: fan-out
// when its address or the link asks; nil when there is none and the
// broker holds MaxQueues.
func (b *Broker) nodeLocked(addr []byte, wantFanout bool) *node {
	if n := b.nodes[string(addr)]; n != nil {
		return n
	}
	if b.opts.MaxQueues > 0 && len(b.nodes) >= b.opts.MaxQueues {
		return nil
	}
	name := string(addr)
	n := &node{name: name, fanout: wantFanout, deadLetter: b.deadLetterAddr}
	if a, ok := b.deadLetters[name]; ok {
		n.deadLetter = a
	}
	for _, p := range b.fanout {
		if strings.HasPrefix(name, p) {
			n.fanout = true
		}
	}
	now := time.Now()
	n.s0.at, n.s1.at = now, now
	b.nodes[name] = n
	return n
}

// fullLocked reports that q is at a bound.
func (b *Broker) fullLocked(q *queue) bool {
	return (b.opts.MaxMessages > 0 && q.len()+q.unsettled+q.sched >= b.opts.MaxMessages) ||
		(b.opts.MaxBytes > 0 && q.bytes+q.schedBytes >= b.opts.MaxBytes)
}

// roomLocked returns the messages q has room for, by its bounds and the
// size of the last message stored, at most limit.
func (b *Broker) roomLocked(q *queue, size int, limit uint32) uint32 {
	room := int64(limit)
	if b.opts.MaxMessages > 0 {
		room = min(room, int64(b.opts.MaxMessages-q.len()-q.unsettled-q.sched))
	}
	if b.opts.MaxBytes > 0 {
		if size == 0 {
			size = 1024 // nothing stored yet: a guess
		}
		room = min(room, (b.opts.MaxBytes-q.bytes-q.schedBytes)/int64(max(size, 64)))
	}
	return uint32(max(room, 0))
}

// memCreditLocked returns the credit a producer is to have by
// MaxMemory: its share of the room left (divided among the producers
// attached), in messages of the node's last size (1 KiB before it has
// one), at least 1 while there is room; 0 at the bound.
func (b *Broker) memCreditLocked(n *node, limit uint32) uint32 {
	if b.opts.MaxMemory <= 0 {
		return limit
	}
	free := b.opts.MaxMemory - b.pool.live
	if free <= 0 {
		return 0
	}
	size := int64(max(n.lastSize, 64))
	if n.lastSize == 0 {
		size = 1024 // nothing stored yet: a guess, as roomLocked's
	}
	share := free / size / int64(max(b.producers, 1))
	return uint32(max(min(share, int64(limit)), 1))
}

// memFullLocked reports that a message of size bytes would take the
// broker past MaxMemory by more than an eighth: it is rejected.
func (b *Broker) memFullLocked(size int) bool {
	return b.opts.MaxMemory > 0 && b.pool.live+int64(size) > b.opts.MaxMemory+b.opts.MaxMemory/8
}

// memWaitLocked makes p wait for MaxMemory's room when the broker is at
// it (it waits on its node too: blockLocked).
func (b *Broker) memWaitLocked(p *producer) {
	if !p.memWaiting && b.opts.MaxMemory > 0 && b.pool.live >= b.opts.MaxMemory {
		p.memWaiting = true
		b.memWait = append(b.memWait, p)
	}
}

// memWakeLocked hands the producers waiting for MaxMemory's room to
// wake once the broker is below 7/8 of it, appending their connections
// to wake.
func (b *Broker) memWakeLocked(wake []*conn) []*conn {
	if len(b.memWait) == 0 || b.pool.live > b.opts.MaxMemory-b.opts.MaxMemory/8 {
		return wake
	}
	for i, p := range b.memWait {
		p.memWaiting = false
		p.resume.Store(true)
		wake = append(wake, p.conn)
		b.memWait[i] = nil
	}
	b.memWait = b.memWait[:0]
	return wake
}

// creditLocked returns the credit a producer to n is to have: what the
// fullest of its queues has room for, at most the broker's Credit; 0
// when one is full.
func (b *Broker) creditLocked(n *node) uint32 {
	if b.opts.RejectWhenFull {
		return b.credit
	}
	limit := b.memCreditLocked(n, b.credit)
	if limit == 0 {
		return 0
	}
	if !n.fanout {
		if b.fullLocked(&n.q) {
			return 0
		}
		return max(b.roomLocked(&n.q, n.lastSize, limit), 1)
	}
	credit := limit
	if n.q.sched > 0 { // scheduled for it, not yet copied to the subscriptions
		if b.fullLocked(&n.q) {
			return 0
		}
		credit = min(credit, max(b.roomLocked(&n.q, n.lastSize, limit), 1))
	}
	for _, c := range n.consumers {
		if b.fullLocked(c.q) {
			return 0
		}
		credit = min(credit, max(b.roomLocked(c.q, n.lastSize, limit), 1))
	}
	for _, s := range n.subs {
		if len(s.consumers) == 0 {
			continue // kept with no receiver: copies past its bound are dropped
		}
		if b.fullLocked(&s.q) {
			return 0
		}
		credit = min(credit, max(b.roomLocked(&s.q, n.lastSize, limit), 1))
	}
	return credit
}

// resumableLocked reports that n's producers may have credit again: its
// queues are below 7/8 of their bounds (so that a queue at its bound
// does not wake its producers for every message taken).
func (b *Broker) resumableLocked(n *node) bool {
	below := func(q *queue) bool {
		return (b.opts.MaxMessages <= 0 || q.len()+q.unsettled+q.sched <= b.opts.MaxMessages-max(b.opts.MaxMessages/8, 1)) &&
			(b.opts.MaxBytes <= 0 || q.bytes+q.schedBytes <= b.opts.MaxBytes-b.opts.MaxBytes/8)
	}
	if !n.fanout || !below(&n.q) {
		return below(&n.q)
	}
	for _, c := range n.consumers {
		if !below(c.q) {
			return false
		}
	}
	for _, s := range n.subs {
		if len(s.consumers) > 0 && !below(&s.q) {
			return false
		}
	}
	return true
}

// unblockLocked hands the producers waiting on n to wake when n has room
// again (or is gone), appending their connections to wake.
func (b *Broker) unblockLocked(n *node, wake []*conn) []*conn {
	if n.parent != nil { // a shared subscription's room is its fan-out node's
		n = n.parent
	}
	wake = b.memWakeLocked(wake)
	if len(n.blocked) == 0 || (!n.deleted && !b.resumableLocked(n)) {
		return wake
	}
	for i, p := range n.blocked {
		p.blocked = false
		p.resume.Store(true)
		wake = append(wake, p.conn)
		n.blocked[i] = nil
	}
	n.blocked = n.blocked[:0]
	return wake
}

// enqueueLocked stores a copy of message in (scanned), sent on the
// connection whose id is from, on n: on its queue, or on each
// consumer's whose filters take it for a fan-out node; held until its
// time when it is scheduled, expired at once when it came expired
// (lifetime.go). It appends the connections of consumers to wake.
func (b *Broker) enqueueLocked(n *node, in *incoming, from uint64, wake []*conn) []*conn {
	payload := in.payload
	n.lastSize = len(payload)
	if n.fanout && len(n.consumers) == 0 && len(n.detached) == 0 && len(n.subs) == 0 {
		n.c.dropped++
		return wake
	}
	wake = b.dueNowLocked(wake)
	m, ttl, delay := lifeOf(in)
	b.seq++
	m.buf, m.seq = b.pool.get(payload), b.seq
	m.buf.from = from
	n.c.enqueued++
	if ttl > 0 || delay > 0 || m.expiry != 0 || m.at != 0 { // the clock is read for these only
		now := b.nowMS()
		m.finish(ttl, delay, now)
		switch {
		case m.expired(now):
			n.q.bytes += int64(m.size()) // expireMsgLocked takes it off
			return b.expireMsgLocked(n, &n.q, m, wake)
		case m.at != 0:
			b.scheduleLocked(n, m)
			return wake
		}
	}
	if !n.fanout {
		// Messages that expired at the front go, two a message at most,
		// so that a queue nobody consumes does not keep them all.
		wake = b.sweepLocked(n, &n.q, 2, wake)
	}
	return b.placeLocked(n, m, in, wake)
}

// wakeOneLocked wakes the consumer of queue node n that has waited
// longest for messages and may take m (those that may not stay ready,
// behind it). Each consumer it looks at is either woken or taken off
// the ready ring, but for those m does not suit.
func (b *Broker) wakeOneLocked(n *node, m msg, wake []*conn) []*conn {
	for tries := n.ready.n; tries > 0; tries-- {
		c := n.ready.pop()
		b.visited++
		c.inReady = false
		if !c.hungry || c.gone || c.n != n {
			if c.gone {
				n.stale--
			}
			continue
		}
		if !c.mayTake(m) {
			c.inReady = true
			n.ready.push(c)
			continue
		}
		c.hungry = false
		return append(wake, c.conn)
	}
	return wake
}

// hungryLocked marks c as waiting for messages (or not): a consumer of
// a queue node goes to the back of its ready ring.
func (b *Broker) hungryLocked(c *consumer, hungry bool) {
	c.hungry = hungry
	if hungry && !c.inReady && c.own == nil {
		c.inReady = true
		c.n.ready.push(c)
	}
}

// unreadyLocked is a consumer's leaving of its node: its entry in the
// ready ring is stale, and the ring is compacted when half of it is.
func (b *Broker) unreadyLocked(c *consumer) {
	c.hungry = false
	n := c.n
	if !c.inReady {
		return
	}
	n.stale++
	if n.stale*2 <= n.ready.n {
		return
	}
	for range n.ready.n {
		x := n.ready.pop()
		if x.gone || x == c || x.n != n {
			x.inReady = false
			continue
		}
		n.ready.push(x)
	}
	n.stale = 0
}

// wakeAllLocked wakes every consumer of n that waits for messages.
func (b *Broker) wakeAllLocked(n *node, wake []*conn) []*conn {
	for _, c := range n.consumers {
		if c.hungry {
			c.hungry = false
			wake = append(wake, c.conn)
		}
	}
	return wake
}

// removeLocked removes node n: its messages are dropped, its consumers
// and producers on other connections are detached
// (amqp:resource-deleted) by their connections.
func (b *Broker) removeLocked(n *node, wake []*conn) []*conn {
	if n.deleted {
		return wake
	}
	n.deleted = true
	if b.nodes[n.name] == n {
		delete(b.nodes, n.name)
	}
	for len(n.subs) > 0 {
		wake = b.removeLocked(n.subs[0], wake)
	}
	b.unchargeLocked(n)
	b.dropLocked(n, &n.q)
	det := n.detached
	n.detached = nil
	for _, c := range det { // durable_sub.go
		b.unkeepLocked(c)
		if c.own != nil {
			b.dropLocked(n, c.own)
		}
		for _, m := range c.acquired {
			b.pool.put(m.buf)
			n.c.dropped++
		}
		c.acquired = nil
		if d := c.dur; d != nil {
			b.forgetLocked(d) // durable.go
			d.c, c.dur = nil, nil
		}
	}
	for _, c := range n.consumers {
		if c.own != nil {
			b.dropLocked(n, c.own)
		}
		c.kill = true
		wake = append(wake, c.conn)
	}
	if n.parent != nil {
		b.unlinkSharedLocked(n) // shared.go
	}
	return b.unblockLocked(n, wake)
}

func (b *Broker) dropLocked(n *node, q *queue) {
	for q.len() > 0 {
		m := q.r.remove(0)
		q.bytes -= int64(m.size())
		b.pool.put(m.buf)
		n.c.dropped++
	}
}

// autoDeleteLocked removes n when it is unused and the broker
// auto-deletes.
func (b *Broker) autoDeleteLocked(n *node, wake []*conn) []*conn {
	if b.opts.AutoDelete && !n.deleted && !n.dynamic && len(n.consumers) == 0 && len(n.detached) == 0 && n.producers == 0 &&
		n.q.len() == 0 && n.q.unsettled == 0 && n.q.sched == 0 {
		return b.removeLocked(n, wake)
	}
	return wake
}
