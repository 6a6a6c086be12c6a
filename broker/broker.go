package broker

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
)

// This file is the Broker: its options, the connections it serves, the
// nodes it registers (made by a link or a routed message, removed when
// deleted or unused) and the routing of each message that comes in to
// its node. A node's policy is node.go's, the storage of its messages
// queue.go's, its consumers' and producers' state consumer.go's and
// producer.go's, accounts and permissions security.go's.

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
	srv            *driver.Server // accepts and serves the connections
	scratch        []byte         // for header rewrites, under mu
	visited        uint64         // consumers wakeOneLocked looked at, for a test of its work
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
		start: time.Now(), durables: make(map[durKey]*durable),
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
	b.srv = b.newServer()
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
// Server does. Serve may be called with several listeners.
func (b *Broker) Serve(ln net.Listener) error {
	if err := b.srv.Serve(ln); err != driver.ErrServerClosed {
		return err
	}
	ln.Close() // served after Shutdown: closed too
	return ErrClosed
}

// ListenAndServe listens on the TCP address addr and serves it.
func (b *Broker) ListenAndServe(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return b.Serve(ln)
}

// newServer returns the driver.Server that serves b's connections: each
// one past Options.MaxConnections is closed at once, each one's end
// logged with its error.
func (b *Broker) newServer() *driver.Server {
	srv := &driver.Server{Config: b.cfg, Handler: handler{b}, TLSConfig: b.opts.TLSConfig, ErrorLog: b.opts.Log}
	if srv.ErrorLog == nil {
		srv.ErrorLog = log.New(io.Discard, "", 0) // the driver's default is the standard logger
	}
	srv.ConnStart = func(nc net.Conn) bool {
		b.accepted.Add(1)
		if live := b.live.Add(1); b.opts.MaxConnections > 0 && live > int64(b.opts.MaxConnections) {
			b.live.Add(-1)
			b.logf("connection from %s closed: %d connections served already (MaxConnections)", nc.RemoteAddr(), b.opts.MaxConnections)
			return false
		}
		return true
	}
	srv.ConnEnd = func(nc net.Conn, err error) {
		b.live.Add(-1)
		if err != nil && err != driver.ErrServerClosed {
			b.logf("connection from %s: %q", nc.RemoteAddr(), err) // %q: the error may carry peer-chosen text (a SASL mechanism, a description)
		}
	}
	return srv
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
	b.mu.Unlock()
	err := b.srv.Shutdown(ctx)
	b.wg.Wait() // the Responders' goroutines, which the connections' ends end
	return err
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
	return int(b.live.Load()), b.accepted.Load()
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

// autoDeleteLocked removes n when it is unused and the broker
// auto-deletes.
func (b *Broker) autoDeleteLocked(n *node, wake []*conn) []*conn {
	if b.opts.AutoDelete && !n.deleted && !n.dynamic && len(n.consumers) == 0 && len(n.detached) == 0 && n.producers == 0 &&
		n.q.len() == 0 && n.q.unsettled == 0 && n.q.sched == 0 {
		return b.removeLocked(n, wake)
	}
	return wake
}

// Route returns the node a message goes to by its application property
// key: the string value of that property, or false when the message has
// none (or is not well formed). It reads only the sections before the
// body, and allocates nothing.
func Route(payload []byte, key string) ([]byte, bool) {
	if key == "" {
		return nil, false
	}
	var in incoming
	in.scan(payload)
	return in.route(key)
}

// incoming is a message on its way in, as the broker reads it: its
// payload and its sections, scanned once (scan) for all that reads
// them before it is stored — its route (Options.RouteKey, an anonymous
// relay's to: routeLocked), its lifetime (lifeOf) and a fan-out node's
// filters (placeLocked) — instead of once each. It lives on the stack
// of the delivery's handling; its sections are views into payload.
//
// A message that begins with its body (no header, annotations or
// properties: the most common message there is) has nothing its route
// or lifetime reads, so its scan waits until something reads the body's
// sections or needs to know the message is well formed (a filter, the
// relay): sections does it then.
type incoming struct {
	payload []byte
	secs    message.Sections
	err     error // Scan's: the message does not scan, secs is zero
	later   bool  // the body comes first and is not scanned yet
}

// scan reads payload's sections, or notes that it begins with its body.
// in is a new incoming (zero): one that begins with its body keeps its
// zero sections, not written again.
func (in *incoming) scan(payload []byte) {
	in.payload = payload
	if in.later = bodyFirst(payload); !in.later {
		in.scanNow()
	}
}

// scanNow reads in's sections.
func (in *incoming) scanNow() { in.secs, in.err = message.Scan(in.payload) }

// sections returns payload's sections and Scan's error, scanning a
// message whose body comes first now.
func (in *incoming) sections() (*message.Sections, error) {
	if in.later {
		in.scanNow()
		in.later = false
	}
	return &in.secs, in.err
}

// bodyFirst reports whether payload's first section is a body (data,
// amqp-sequence or amqp-value by their small-ulong descriptors), so that
// it has no section before the body.
func bodyFirst(p []byte) bool {
	return len(p) >= 3 && p[0] == 0x00 && p[1] == 0x53 && p[2]-0x75 <= 0x77-0x75
}

// route is Route of a scanned message.
func (in *incoming) route(key string) ([]byte, bool) {
	if key == "" || in.err != nil || in.secs.ApplicationProperties == nil {
		return nil, false
	}
	v, err := message.Lookup(in.secs.ApplicationProperties, key)
	if err != nil || v.Kind() != amqpsax.KindString {
		return nil, false
	}
	return v.Bytes(), true
}

// admitLocked returns the node a message p sends is to be stored on
// (its link's, or the one its route key names: routeLocked), or the
// error to reject it with (counted as refused): the route's, or a full
// node's with RejectWhenFull. A message in a transaction takes this
// path too.
func (b *Broker) admitLocked(p *producer, in *incoming) (*node, *engine.Error) {
	n, e := p.n, (*engine.Error)(nil)
	if n == nil || b.opts.RouteKey != "" { // else routeLocked returns p.n
		n, e = b.routeLocked(p, in)
	}
	if e != nil {
		if p.n != nil {
			p.n.c.refused++
		}
		return nil, e
	}
	if b.opts.RejectWhenFull && b.fullLocked(b.fullestLocked(n)) {
		n.c.refused++
		return nil, engine.NewError(frame.CondResourceLimitExceeded, "queue "+n.name+" is full")
	}
	if b.memFullLocked(len(in.payload)) {
		n.c.refused++
		return nil, errMemory
	}
	return n, nil
}

// routeLocked returns the node a message p sends goes to: its link's
// (an anonymous relay's: the one its properties' to names), or the one
// its route key names, checked as a link to it would be (its address,
// Write, and Configure when it is new) and refused with the error to
// reject the message with. The permission of the last address routed
// to is remembered, so that a producer that routes to one address is
// checked once (an anonymous relay remembers up to maxRelayOK); with
// nothing to check it allocates nothing.
func (b *Broker) routeLocked(p *producer, in *incoming) (*node, *engine.Error) {
	n := p.n
	if n == nil {
		to, e := in.relayTo()
		if e != nil {
			return nil, e
		}
		if n, e = b.relayLocked(p, to); e != nil {
			return nil, e
		}
	}
	if b.opts.RouteKey == "" {
		return n, nil
	}
	routed, byKey := in.route(b.opts.RouteKey)
	if !byKey || string(routed) == n.name {
		return n, nil
	}
	cn := p.conn
	if b.opts.Permissions != nil && string(routed) != string(p.routeOK) {
		if e := b.mayRouteLocked(cn, routed); e != nil {
			return nil, e
		}
		p.routeOK = append(p.routeOK[:0], routed...)
	}
	return b.openLocked(cn, routed, false, true)
}

// maxRelayOK bounds the addresses an anonymous relay remembers
// Options.Permissions allowed: past it they are forgotten, and checked
// again at their next message.
const maxRelayOK = 256

var errNoTo = engine.NewError(frame.CondNotFound, "a message sent to the anonymous relay (a link with no target address) needs the to of its properties")

// relayTo returns the address a message sent to the anonymous relay
// names: its properties' to, which it must have.
func (in *incoming) relayTo() ([]byte, *engine.Error) {
	if _, err := in.sections(); err != nil {
		return nil, engine.NewError(frame.CondDecodeError, "message: "+err.Error())
	}
	if in.secs.Properties == nil {
		return nil, errNoTo
	}
	pr, err := message.ParseProperties(in.secs.Properties)
	if err != nil {
		return nil, engine.NewError(frame.CondDecodeError, "message properties: "+err.Error())
	}
	if len(pr.To) == 0 {
		return nil, errNoTo
	}
	return pr.To, nil
}

// relayLocked returns the node at to for anonymous relay p, checked
// (mayRouteLocked) the first time p sends to it.
func (b *Broker) relayLocked(p *producer, to []byte) (*node, *engine.Error) {
	cn := p.conn
	if b.opts.Permissions != nil {
		if _, ok := p.relayOK[string(to)]; !ok {
			if e := b.mayRouteLocked(cn, to); e != nil {
				return nil, e
			}
			if p.relayOK == nil || len(p.relayOK) >= maxRelayOK {
				p.relayOK = make(map[string]struct{})
			}
			p.relayOK[string(to)] = struct{}{}
		}
	}
	return b.openLocked(cn, to, false, true)
}
