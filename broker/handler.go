package broker

import (
	"slices"
	"sync/atomic"
	"unicode/utf8"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
)

// This file is the broker's engine.Handler: links become producers and
// consumers of nodes, deliveries are stored and sent on, outcomes settle
// or requeue them. Each connection's events run on its own goroutine;
// the nodes are under the broker's lock, never held while a Driver is
// asked to run something (kick).

// linkStateCost is what the broker keeps for a link (its consumer or
// producer, a consumer's map of unsettled messages when empty), charged
// to the connection's memory budget (engine.Link.Charge) at its attach,
// given back with the link. TestLinkStateCost checks it against the
// structs.
const linkStateCost = 512

var errLinkBudget = engine.NewError(frame.CondResourceLimitExceeded,
	"the connection's memory budget has no room for another link")

// errTooManyQueues refuses a link or message to a new node past
// Options.MaxQueues.
var errTooManyQueues = engine.NewError(frame.CondResourceLimitExceeded, "the broker holds as many queues as it may")

// handler is the engine.Handler of every connection of a Broker.
type handler struct{ b *Broker }

var _ engine.Handler = handler{}

// conn is the broker's state of one connection, in engine.Conn.Context.
// Its lists are used only on the connection's goroutine.
type conn struct {
	b         *Broker
	c         *engine.Conn
	drv       *driver.Driver
	wake      *driver.Waker // runs the service on the connection's goroutine, queued at most once
	consumers []*consumer
	producers []*producer
	txns      map[string]*txn         // open transactions (txn.go)
	durWait   []*durable              // durable links detached from it whose expiry waits for its end (durable.go)
	dynamic   map[*engine.Link][]byte // addresses AnswerAttach made for dynamic termini, until OnLinkAttach
	identity  string                  // what SASL authenticated
	id        uint64                  // the broker's number for it: a message's origin (buffer.from)
	// What dispatch sends at once, one consumer's at a time (it is
	// empty between calls): the connection's, not each consumer's.
	batch   [64]msg
	ids     [64]uint32
	made    *made // the nodes it made that are there (under the broker's lock)
	txnHeld int   // bytes its open transactions hold (txn.go)
	ext     connExt
}

// consumer is a link the broker sends on: the peer receives from a node.
type consumer struct {
	link    *engine.Link
	conn    *conn
	n       *node
	q       *queue // &n.q, or own
	own     *queue // its subscription to a fan-out node
	settled bool   // snd-settle-mode settled: at most once
	maxSize uint64 // the peer's max-message-size, 0 for none
	gone    bool   // detached (the connection's goroutine)
	// filt is its source's filters (filter.go), nil for none; browse:
	// its source's distribution-mode is copy on a queue node, whose
	// messages it is sent and never takes.
	filt   *sourceFilter
	browse bool
	// Under the broker's lock, for a selective consumer or a browser of
	// a queue node: every message of the queue whose seq is at most
	// seen has been looked at (and left, or sent to a browser), as of
	// the queue's epoch (takeLocked, browseLocked).
	seen, epoch uint64

	// Under the broker's lock:
	hungry   bool                // credit left and nothing to send: wake it for a new message
	inReady  bool                // in its node's ready ring (hungryLocked)
	kill     bool                // its node was removed: detach it
	excluded map[uint64]struct{} // messages it called undeliverable-here

	// The connection's goroutine's:
	unacked map[uint32]msg // sent unsettled, by delivery-id

	// A durable subscription's (durable_sub.go): its state, what it had
	// acquired when it detached (under the broker's lock while it is
	// detached), what its re-attach is to resume, and the tag being
	// sent.
	dur      *durable
	acquired []msg
	resume   []msg
	tag      [8]byte
	// The copies made for it while detached (in own), counted in the
	// broker's bound of them all (under the broker's lock).
	keptN     int
	keptBytes int64
}

// producer is a link the broker receives on: the peer sends to a node.
type producer struct {
	link    *engine.Link
	conn    *conn
	n       *node
	on      *node // the node it waits on for credit (blocked)
	blocked bool  // under the broker's lock
	resume  atomic.Bool
	gone    bool
	// Its target is durable (durable.go): the state the broker keeps,
	// and the tags of the messages it rejected and the producer has not
	// settled (receiver settle mode second), for that state.
	dur      *durable
	rejected map[string]struct{}
	// routeOK is the last address its messages were routed to that
	// Options.Permissions allowed (security.go); relayOK, an anonymous
	// relay's (n is nil: each message goes to its properties' to), the
	// addresses it allowed, at most maxRelayOK.
	routeOK []byte
	relayOK map[string]struct{}
	// memWaiting: it is in the broker's memWait (under its lock).
	memWaiting bool
}

// reject rejects d (unsettled) with e, remembering its tag for a
// durable link's state.
func (p *producer) reject(d *engine.Delivery, e *engine.Error) {
	if d.Settled {
		return
	}
	if p.dur != nil && d.Link.RcvSettleMode() == frame.RcvSecond {
		if p.rejected == nil {
			p.rejected = make(map[string]struct{})
		}
		p.rejected[string(d.DeliveryTag)] = struct{}{}
	}
	d.Reject(e)
}

// kick runs the service of cn on its connection's goroutine, queued at
// most once at a time (driver.Waker coalesces: memory is one Waker per
// connection, however many messages arrive), from any goroutine, never
// blocking. It is the one place the broker crosses connections.
func (b *Broker) kick(cn *conn) {
	if cn.wake != nil {
		cn.wake.Wake()
	}
}

// wake services the connections in wake: cur's at once (this is its
// goroutine), the others through kick.
func (b *Broker) wake(cur *conn, wake []*conn) {
	b.notify() // inspect.go: Wait
	for i, cn := range wake {
		if i > 0 && wake[i-1] == cn {
			continue
		}
		if cn == cur {
			b.service(cn)
		} else {
			b.kick(cn)
		}
	}
}

// service sends what each consumer of cn can take, detaches those whose
// node was removed, and grants credit to its producers that may resume.
func (b *Broker) service(cn *conn) {
	// A consumer that waits in its queue's ready ring is left to it: a
	// message for it wakes it by name (wakeOneLocked), so the consumers
	// of one connection that compete for a queue (or share a
	// subscription) take turns, not the first of them every message.
	for _, c := range cn.consumers {
		b.mu.Lock()
		waits := c.hungry && c.inReady && !c.kill
		b.mu.Unlock()
		if !waits {
			b.dispatch(c)
		}
	}
	for _, p := range cn.producers {
		if p.resume.Swap(false) && !p.gone {
			b.grant(p)
		}
	}
}

func connOf(c *engine.Conn) *conn {
	cn, _ := c.Context.(*conn)
	return cn
}

func (h handler) OnConnectionOpen(c *engine.Conn) {
	if !utf8.ValidString(c.RemoteContainerID()) {
		c.Close(engine.NewError(frame.CondInvalidField, "a container-id must be UTF-8 (an AMQP string)"))
		return
	}
	cn := &conn{b: h.b, c: c, drv: driver.Of(c), identity: c.Identity(), made: &made{}, id: h.b.connIDs.Add(1)}
	if d := cn.drv; d != nil {
		cn.wake = d.NewWaker(func(*engine.Conn) { cn.b.service(cn) })
	}
	c.Context = cn
	h.b.opened(cn)
	h.b.logf("open %q (%q)", c.RemoteContainerID(), c.Identity()) // %q: peer-chosen text, a newline in it must not forge a line
}

func (h handler) OnConnectionClose(c *engine.Conn, err *engine.Error) {
	h.b.logf("close %q: %q", c.RemoteContainerID(), err)
	h.b.ended(connOf(c), nil) // durable.go: expiry-policy connection-close
	h.b.closedConn(connOf(c)) // inspect.go
}

func (handler) OnSessionBegin(*engine.Session) {}

// OnSessionEnd starts the expiry of durable links detached from the
// session whose policy is session-end.
func (h handler) OnSessionEnd(s *engine.Session, _ *engine.Error) { h.b.ended(connOf(s.Conn()), s) }

// AnswerAttach gives a dynamic source (the peer receives) or target (the
// peer sends) without an address a new node's address (part 3 §3.5.3,
// dynamic), which the engine puts into its answer; OnLinkAttach makes
// the node. The address is the link's alone: a peer that sends it with
// dynamic set on another link gets the node as any address, never its
// ownership. Any other link is checked here, so that a refusal is the
// answer itself (no terminus, then the detach: part 2 §2.6.3): its
// name and address (UTF-8), a dynamic node's exclusivity,
// Options.Permissions, and its account's bound of durable links.
func (h handler) AnswerAttach(l *engine.Link, src *frame.Source, tgt *frame.Target) *engine.Error {
	b := h.b
	cn := connOf(l.Conn())
	if cn == nil {
		return nil // OnLinkAttach refuses it
	}
	if !utf8.Valid(l.Name()) {
		return errNameNotUTF8
	}
	if e := b.attachHook(cn, l); e != nil { // inspect.go
		return e
	}
	if !l.Charge(linkStateCost) {
		return errLinkBudget
	}
	if l.IsSender() && src != nil && len(src.Filter) > 0 {
		// The answer's filter set holds the filters the broker applies,
		// and no other (part 3 §3.5.8).
		f, answer, e := parseFilters(src.Filter, l.RemoteAttach().DesiredCapabilities)
		if e != nil {
			return e
		}
		src.Filter = answer
		if f.any() {
			l.Context = &f // until OnLinkAttach
		}
	}
	var addr []byte
	op := Write
	switch {
	case l.IsSender() && src != nil && src.Dynamic && len(src.Address) == 0:
		src.Address = cn.makeDynamic(l)
		return nil
	case !l.IsSender() && tgt != nil && tgt.Dynamic && len(tgt.Address) == 0:
		tgt.Address = cn.makeDynamic(l)
		return nil
	case l.IsSender():
		addr, op = l.RemoteSource().Address, Read
	default:
		addr = l.RemoteTarget().Address
	}
	if len(addr) == 0 {
		return nil // OnLinkAttach refuses a consumer; a producer is an anonymous relay
	}
	if _, e := b.mayAttach(cn, addr, false, op); e != nil {
		return e
	}
	if key, _, _, ok := durableKey(l); ok {
		fresh, over := b.overDurableQuota(key)
		switch {
		case over:
			return errAccountDurable
		case fresh && b.opts.MaxDurableLinksPerConnection > 0 && cn.made.durables >= b.opts.MaxDurableLinksPerConnection:
			return errConnDurable
		case fresh:
			cn.made.durables++ // counted at the answer: an attach that fails later still counts
		}
	}
	return nil
}

// makeDynamic makes an address for l's dynamic terminus.
func (cn *conn) makeDynamic(l *engine.Link) []byte {
	addr := cn.b.dynamicAddress()
	if cn.dynamic == nil {
		cn.dynamic = make(map[*engine.Link][]byte)
	}
	cn.dynamic[l] = addr
	return addr
}

// takeDynamic returns the address of l's node: the one AnswerAttach made
// for it (made), else addr, the peer's.
func (cn *conn) takeDynamic(l *engine.Link, addr []byte) (_ []byte, made bool) {
	if a, ok := cn.dynamic[l]; ok {
		delete(cn.dynamic, l)
		return a, true
	}
	return addr, false
}

// OnLinkAttach makes a consumer (the peer receives: the source names the
// node) or a producer (the peer sends: the target names it), once the
// checks allow it (mayAttach).
func (h handler) OnLinkAttach(l *engine.Link) {
	b := h.b
	cn := connOf(l.Conn())
	if cn == nil {
		l.Detach(engine.NewError(frame.CondInternalError, "link before the connection opened"))
		return
	}
	if !utf8.Valid(l.Name()) {
		l.Detach(errNameNotUTF8)
		return
	}
	key, _, _, durable := durableKey(l)
	if l.IsSender() {
		filt, _ := l.Context.(*sourceFilter) // AnswerAttach's
		l.Context = nil
		src := l.RemoteSource()
		// A shared subscription's state is the broker's (shared.go), not
		// the link's: its durable terminus keeps it, not its link state.
		shared := src.Capabilities.Contains("shared")
		if shared && durable {
			durable = false
			b.mu.Lock()
			if d := b.durables[key]; d != nil && d.attached && d.cn == cn {
				b.forgetLocked(d) // made by Recover (durable.go)
			}
			b.mu.Unlock()
		}
		addr, made := cn.takeDynamic(l, src.Address)
		if !made && b.responderOf(addr) != nil {
			addr, made = b.replyNode(l) // responder.go: it takes replies
		}
		if len(addr) == 0 {
			l.Detach(engine.NewError(frame.CondInvalidField, "no address: give one, or ask for a dynamic source"))
			return
		}
		configure, e := b.mayAttach(cn, addr, made, Read)
		if e != nil {
			l.Detach(e)
			return
		}
		fan := string(src.DistributionMode) == "copy" || src.Capabilities.Contains("topic")
		if durable {
			if c := b.reattachConsumer(l, cn, key, addr); c != nil { // durable_sub.go
				b.mu.Lock()
				c.filt = filt
				b.mu.Unlock()
				l.Context = c
				cn.consumers = append(cn.consumers, c)
				return
			}
		}
		c := &consumer{link: l, conn: cn, settled: l.SndSettleMode() == frame.SndSettled,
			unacked: make(map[uint32]msg), filt: filt}
		if m, ok := l.RemoteAttach().MaxMessageSize.Get(); ok {
			c.maxSize = m
		}
		b.mu.Lock()
		n, e := b.openLocked(cn, addr, fan, configure)
		if e == nil && n.ownerC != nil && n.ownerC != cn {
			e = errExclusive
		}
		if e != nil {
			b.mu.Unlock()
			l.Detach(e)
			return
		}
		if made && n.owner == nil && n.ownerP == nil {
			n.dynamic, n.owner, n.ownerC = true, c, cn
		}
		// A source with distribution-mode copy on a queue browses it (as
		// ActiveMQ Artemis does); on a new address it makes a fan-out
		// node (fan).
		c.browse = string(src.DistributionMode) == "copy" && !n.fanout
		if d := b.durables[key]; durable && d != nil && d.attached && d.cn == cn {
			if n.owner == c || c.browse {
				b.forgetLocked(d) // a dynamic node goes with its link, a browser takes nothing: nothing to keep
			} else {
				c.dur, d.c = d, c // made by Recover (durable.go)
			}
		}
		c.n = n
		var wake []*conn
		switch {
		case n.fanout && shared:
			if wake, e = b.joinSharedLocked(c, n, src, wake); e != nil { // shared.go
				b.mu.Unlock()
				b.wake(cn, wake)
				l.Detach(e)
				return
			}
		case n.fanout:
			c.own = &queue{}
			c.q = c.own
		default:
			c.q = &n.q
		}
		if c.browse {
			n.browsing++
		}
		if c.n == n {
			n.consumers = append(n.consumers, c)
		}
		b.mu.Unlock()
		l.Context = c
		cn.consumers = append(cn.consumers, c)
		b.wake(cn, wake) // and notify: it sends once the peer grants credit (OnFlow)
		return
	}
	tgt := l.RemoteTarget()
	addr, made := cn.takeDynamic(l, tgt.Address)
	if len(addr) == 0 {
		// An anonymous relay (the connection offers ANONYMOUS-RELAY):
		// each message goes to its properties' to (routeLocked).
		p := &producer{link: l, conn: cn}
		b.mu.Lock()
		b.producers++
		b.mu.Unlock()
		l.Context = p
		cn.producers = append(cn.producers, p)
		b.grant(p)
		return
	}
	configure, e := b.mayAttach(cn, addr, made, Write)
	if e != nil {
		l.Detach(e)
		return
	}
	if r := b.responderOf(addr); r != nil && !made {
		b.attachRequests(cn, l, addr, r) // responder.go
		return
	}
	p := &producer{link: l, conn: cn}
	b.mu.Lock()
	n, e := b.openLocked(cn, addr, tgt.Capabilities.Contains("topic"), configure)
	if e != nil {
		b.mu.Unlock()
		l.Detach(e)
		return
	}
	if made && n.owner == nil && n.ownerP == nil {
		n.dynamic, n.ownerP, n.ownerC = true, p, cn
	}
	p.n = n
	n.producers++
	b.producers++
	if durable {
		p.dur = b.durables[key] // made by Recover (durable.go)
	}
	b.mu.Unlock()
	l.Context = p
	cn.producers = append(cn.producers, p)
	b.grant(p)
	b.notify()
}

// mayAttach checks a link of cn to the node at addr that does op (Read:
// the peer consumes; Write: it sends): its address, the exclusivity of a
// dynamic node, and Options.Permissions (op, and Configure when the node
// is not there yet: configure reports that it may make it). A dynamic
// node the link itself made (made) needs none. It returns the error to
// detach the link with.
func (b *Broker) mayAttach(cn *conn, addr []byte, made bool, op Op) (configure bool, _ *engine.Error) {
	if made {
		return true, nil
	}
	if e := checkAddress(addr); e != nil {
		return false, e
	}
	b.mu.Lock()
	n := b.nodes[string(addr)]
	exclusive := n != nil && op == Read && n.ownerC != nil && n.ownerC != cn
	b.mu.Unlock()
	if exclusive {
		return false, errExclusive
	}
	if b.opts.Permissions == nil {
		return true, nil
	}
	if !b.allowed(cn.identity, addr, op) {
		return false, denied(cn.identity, addr, op)
	}
	return n != nil || b.allowed(cn.identity, addr, Configure), nil
}

// grant gives producer p the credit its node has room for, or makes it
// wait on the node when it has none.
func (b *Broker) grant(p *producer) {
	on := p.on
	if on == nil {
		on = p.n
	}
	b.mu.Lock()
	if on != nil && on.deleted && on != p.n {
		on = p.n
	}
	if on == nil { // an anonymous relay, not waiting on a node
		var none node
		credit := b.memCreditLocked(&none, b.credit)
		if credit == 0 {
			b.memWaitLocked(p)
		}
		b.mu.Unlock()
		if credit > p.link.Credit() {
			p.link.Flow(credit)
		}
		return
	}
	if p.n.deleted {
		b.mu.Unlock()
		p.link.Detach(engine.NewError(frame.CondResourceDeleted, "node "+p.n.name+" was removed"))
		return
	}
	credit := b.creditLocked(on)
	if credit == 0 {
		b.blockLocked(p, on)
		b.memWaitLocked(p)
	}
	b.mu.Unlock()
	if credit > p.link.Credit() {
		p.link.Flow(credit)
	}
}

func (b *Broker) blockLocked(p *producer, n *node) {
	if !p.blocked {
		p.blocked, p.on = true, n
		n.blocked = append(n.blocked, p)
	}
}

func (b *Broker) unblockOneLocked(p *producer) {
	if !p.blocked {
		return
	}
	p.blocked = false
	n := p.on
	if i := slices.Index(n.blocked, p); i >= 0 {
		n.blocked = slices.Delete(n.blocked, i, i+1)
	}
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
type incoming struct {
	payload []byte
	secs    message.Sections
	err     error // Scan's: the message does not scan, secs is zero
}

// scan reads payload's sections.
func (in *incoming) scan(payload []byte) {
	in.payload = payload
	in.secs, in.err = message.Scan(payload)
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

// OnDelivery stores a message on its node and accepts it; a full node
// keeps the producer's credit back, or rejects (Options.RejectWhenFull).
func (h handler) OnDelivery(l *engine.Link, d engine.Delivery) {
	b := h.b
	p, ok := l.Context.(*producer)
	if !ok || d.Aborted || p.gone {
		if rl, ok := l.Context.(*requestLink); ok && !d.Aborted {
			b.request(rl, &d) // responder.go
		}
		return
	}
	if id := d.TxnID(); id != nil {
		b.txnDelivery(p, l, &d, id) // txn.go: held until the commit
		return
	}
	if d.Resumed() && b.resumedDelivery(p, &d) { // durable.go: stored before
		b.topUp(p, l)
		return
	}
	var wb [8]*conn
	wake := wb[:0]
	b.mu.Lock()
	if p.n != nil && p.n.deleted {
		b.mu.Unlock()
		if !d.Settled {
			d.Release()
		}
		l.Detach(engine.NewError(frame.CondResourceDeleted, "node "+p.n.name+" was removed"))
		return
	}
	var in incoming
	in.scan(d.Payload)
	n, e := b.admitLocked(p, &in)
	if e != nil {
		waiting := false
		if e == errMemory {
			b.memWaitLocked(p) // its credit is not topped up: it waits for room
			waiting = p.memWaiting
		}
		b.mu.Unlock()
		p.reject(&d, e)
		if !waiting {
			b.topUp(p, l)
		}
		return
	}
	wake = b.enqueueLocked(n, &in, p.conn.id, wake)
	var credit uint32
	if cur := l.Credit(); cur <= b.credit/2 {
		credit = b.creditLocked(n)
		switch {
		case credit == 0 && cur == 0:
			b.blockLocked(p, n)
			b.memWaitLocked(p)
		case credit <= cur:
			credit = 0
		}
	}
	if n != p.n {
		wake = b.autoDeleteLocked(n, wake)
	}
	b.mu.Unlock()
	if !d.Settled {
		d.Accept()
	}
	if credit > 0 {
		l.Flow(credit)
	}
	b.wake(p.conn, wake)
}

// admitLocked returns the node a message p sends is to be stored on
// (its link's, or the one its route key names: routeLocked), or the
// error to reject it with (counted as refused): the route's, or a full
// node's with RejectWhenFull. A message in a transaction takes this
// path too.
func (b *Broker) admitLocked(p *producer, in *incoming) (*node, *engine.Error) {
	n, e := b.routeLocked(p, in)
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

var errMemory = engine.NewError(frame.CondResourceLimitExceeded, "the broker holds as many bytes of messages as it may")

// topUp keeps a producer that is refused, not held back, in credit.
func (b *Broker) topUp(p *producer, l *engine.Link) {
	if l.Credit() <= b.credit/2 {
		l.Flow(b.credit)
	}
}

// fullestLocked returns the queue of n nearest its bound: n's own, or a
// subscription's.
func (b *Broker) fullestLocked(n *node) *queue {
	q := &n.q
	for _, c := range n.consumers {
		if c.own != nil && (c.own.bytes > q.bytes || c.own.len()+c.own.unsettled > q.len()+q.unsettled) {
			q = c.own
		}
	}
	for _, s := range n.subs {
		if s.q.bytes > q.bytes || s.q.len()+s.q.unsettled > q.len()+q.unsettled {
			q = &s.q
		}
	}
	return q
}

// OnFlow sends what a consumer's new credit allows.
func (h handler) OnFlow(l *engine.Link) {
	if c, ok := l.Context.(*consumer); ok {
		h.b.dispatch(c)
	}
}

// OnWritable resumes the consumers of a connection whose output was full.
func (h handler) OnWritable(c *engine.Conn) {
	if cn := connOf(c); cn != nil {
		h.b.service(cn)
	}
}

// dispatch sends c the messages its credit allows, a batch at a time. It
// runs on c's connection's goroutine.
func (b *Broker) dispatch(c *consumer) {
	l := c.link
	batch, ids := &c.conn.batch, &c.conn.ids
	if c.browse {
		b.browse(c)
		return
	}
	if len(c.resume) > 0 && !b.resumeSome(c) { // durable_sub.go: its re-attach's first
		return
	}
	for !c.gone {
		credit := l.Credit()
		want := min(int(credit), len(batch))
		var wb [8]*conn
		wake := wb[:0]
		b.mu.Lock()
		if c.kill {
			c.gone = true
			b.mu.Unlock()
			l.Detach(engine.NewError(frame.CondResourceDeleted, "node "+c.n.name+" was removed"))
			return
		}
		if want == 0 {
			// No credit (or none left after a drain): a wake meant for
			// it goes to another consumer that waits.
			c.hungry = false
			if c.own == nil && c.q.len() > 0 {
				wake = b.wakeOneLocked(c.n, *c.q.r.at(0), wake)
			}
			b.mu.Unlock()
			b.wake(c.conn, wake)
			return
		}
		wake = b.dueNowLocked(wake)
		k, wake := b.takeLocked(c, batch[:want], wake)
		b.hungryLocked(c, k < want)
		if k > 0 || len(wake) > 0 {
			wake = b.unblockLocked(c.n, wake)
		}
		b.mu.Unlock()
		sent := 0
		for sent < k {
			var tag []byte
			if c.dur != nil {
				tag = c.tagOf(batch[sent]) // durable_sub.go
			}
			id, err := l.Send(tag, batch[sent].buf.b, c.settled)
			if err != nil {
				break // ErrOutputFull: OnWritable; ErrNoWindow, ErrBusy: OnFlow
			}
			ids[sent] = id
			sent++
			if b.sent != nil {
				b.sent(c)
			}
		}
		b.mu.Lock()
		n := c.n
		for i := range sent {
			m := batch[i]
			n.c.delivered++
			if m.redelivered {
				n.c.redelivered++
			}
			if c.settled {
				b.doneLocked(c, m)
			} else {
				c.unacked[ids[i]] = m
			}
		}
		for i := k - 1; i >= sent; i-- {
			c.q.putBack(batch[i])
			c.q.unsettled--
		}
		if sent < k {
			c.hungry = false
		}
		clear(batch[:k])
		b.mu.Unlock()
		b.wake(c.conn, wake)
		if sent < k || k < want {
			return
		}
	}
}

// takeLocked moves up to len(out) messages c may take from its queue to
// out: the highest priority first, the oldest first within one,
// skipping those above its max-message-size, those it called
// undeliverable-here, and those its filters leave for other consumers
// (counted as filtered). Those it finds expired are taken out of the
// queue and expired (lifetime.go): each message is looked at for expiry
// once it is at the front, never by a scan of the queue; the broker's
// clock is read once, and only for a message that has an expiry.
//
// A selective consumer of a queue node does not look at a message
// twice while the queue keeps its order (one priority, nothing put
// back before an older message): it resumes after the last one it
// looked at (seen, found by a binary search), so a queue deep in
// messages it does not take costs it O(log n) a dispatch, plus the new
// messages. A message put back at the queue's front (released,
// modified, left by a consumer that went, or not sent for a full
// output) makes each selective consumer look at the queue from its
// front once more, at its next dispatch; a queue of several priorities
// is looked at from its front at each.
func (b *Broker) takeLocked(c *consumer, out []msg, wake []*conn) (int, []*conn) {
	q := c.q
	k := 0
	now := int64(-1)
	if c.maxSize == 0 && len(c.excluded) == 0 && c.filt == nil {
		for k < len(out) && q.len() > 0 {
			m := q.r.remove(0)
			if m.expiry != 0 && now < 0 {
				now = b.nowMS()
			}
			if m.expired(now) {
				wake = b.expireMsgLocked(c.n, q, m, wake)
				continue
			}
			out[k] = m
			k++
		}
		q.unsettled += k
		return k, wake
	}
	selective := c.filt != nil && c.own == nil
	ordered := q.ordered()
	i := 0
	if selective && c.epoch == q.r.epoch && ordered {
		i = q.after(c.seen)
	} else if selective {
		c.seen = 0
	}
	for k < len(out) && i < q.len() {
		if q.r.at(i).expiry != 0 && now < 0 {
			now = b.nowMS()
		}
		if q.r.at(i).expired(now) {
			wake = b.expireMsgLocked(c.n, q, q.r.remove(i), wake)
			continue
		}
		m := *q.r.at(i)
		if selective && ordered {
			c.seen = m.seq
		}
		if !c.fits(m) {
			i++
			continue
		}
		if selective && !c.passes(m) {
			c.n.c.filtered++
			i++
			continue
		}
		out[k] = q.r.remove(i)
		k++
	}
	c.epoch = q.r.epoch
	q.unsettled += k
	return k, wake
}

// mayTake reports that c may be sent m: not above its max-message-size,
// not called undeliverable-here by it, not left by its filters. Under
// the broker's lock.
func (c *consumer) mayTake(m msg) bool {
	return c.fits(m) && (c.own != nil || c.passes(m))
}

// fits reports that m is not above c's max-message-size and not called
// undeliverable-here by c.
func (c *consumer) fits(m msg) bool {
	if c.maxSize > 0 && uint64(m.size()) > c.maxSize {
		return false
	}
	if len(c.excluded) > 0 {
		if _, ex := c.excluded[m.seq]; ex {
			return false
		}
	}
	return true
}

// passes reports that c's filters take m (a message that does not scan
// passes none).
func (c *consumer) passes(m msg) bool {
	if c.filt == nil {
		return true
	}
	secs, err := message.Scan(m.buf.b)
	return err == nil && c.filt.match(&secs, m.buf.from, c.conn.id)
}

// browse sends browser c the messages of its queue node it has not been
// sent, oldest first, while it has credit, taking none (part 3 §3.5.3,
// distribution-mode copy): each is sent from the queue's own buffer,
// which its delivery holds a reference to until the browser settles it
// or goes; its outcome changes nothing, and its header (delivery-count)
// is as it is. It runs on c's connection's goroutine.
func (b *Broker) browse(c *consumer) {
	l := c.link
	batch, ids := &c.conn.batch, &c.conn.ids
	for !c.gone {
		want := min(int(l.Credit()), len(batch))
		b.mu.Lock()
		if c.kill {
			b.mu.Unlock()
			c.gone = true
			l.Detach(engine.NewError(frame.CondResourceDeleted, "node "+c.n.name+" was removed"))
			return
		}
		if want == 0 {
			c.hungry = false
			b.mu.Unlock()
			return
		}
		k := b.browseLocked(c, batch[:want])
		c.hungry = k < want
		b.mu.Unlock()
		sent := 0
		for sent < k {
			id, err := l.Send(nil, batch[sent].buf.b, c.settled)
			if err != nil {
				break
			}
			ids[sent] = id
			sent++
			if b.sent != nil {
				b.sent(c)
			}
		}
		b.mu.Lock()
		for i := range sent {
			if c.settled {
				b.pool.put(batch[i].buf)
			} else {
				c.unacked[ids[i]] = batch[i]
			}
		}
		if sent < k {
			c.hungry = false
			c.seen = batch[sent].seq - 1 // sent again at its next dispatch
			for i := sent; i < k; i++ {
				b.pool.put(batch[i].buf)
			}
		}
		clear(batch[:k])
		b.mu.Unlock()
		if sent < k || k < want {
			return
		}
	}
}

// browseLocked copies to out up to len(out) messages of browser c's
// queue it has not been sent (seq above seen), in the order of seq,
// each with one more reference to its buffer. While the queue is
// ordered that is a binary search and the messages after; else (several
// priorities, a message put back before an older one) a scan of the
// queue for each.
func (b *Broker) browseLocked(c *consumer, out []msg) int {
	q := c.q
	k := 0
	take := func(m msg) {
		c.seen = m.seq
		if c.mayTake(m) {
			m.buf.refs++
			out[k] = m
			k++
		}
	}
	if q.ordered() {
		for i := q.after(c.seen); k < len(out) && i < q.len(); i++ {
			take(*q.r.at(i))
		}
		return k
	}
	for k < len(out) {
		best := -1
		for i := range q.len() {
			if s := q.r.at(i).seq; s > c.seen && (best < 0 || s < q.r.at(best).seq) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		take(*q.r.at(best))
	}
	return k
}

// doneLocked forgets a message sent to c: settled, accepted or rejected.
func (b *Broker) doneLocked(c *consumer, m msg) {
	c.q.unsettled--
	c.q.bytes -= int64(m.size())
	b.pool.put(m.buf)
}

// requeueLocked puts m back at the front of c's queue, to be sent again:
// with its header's delivery-count one up when failed, never to c again
// when undeliverable.
func (b *Broker) requeueLocked(c *consumer, m msg, failed, undeliverable bool, wake []*conn) []*conn {
	return b.modifyLocked(c, m, failed, undeliverable, nil, wake)
}

// modifyLocked is requeueLocked with the message annotations ann (a
// modified outcome's, part 3 §3.4.5) merged into m's: its entries
// replace those of the same key, or are added. A failed delivery that
// takes its delivery-count to Options.MaxDeliveryCount dead-letters it
// instead (lifetime.go).
func (b *Broker) modifyLocked(c *consumer, m msg, failed, undeliverable bool, ann frame.Map, wake []*conn) []*conn {
	q := c.q
	q.unsettled--
	if c.n.deleted || (undeliverable && c.own != nil) {
		q.bytes -= int64(m.size())
		b.pool.put(m.buf)
		c.n.c.dropped++
		return wake
	}
	if failed || len(ann) > 0 {
		before := m.size()
		b.rewriteLocked(&m, failed, ann)
		q.bytes += int64(m.size() - before)
	}
	if failed && b.opts.MaxDeliveryCount > 0 && int64(m.count) >= int64(b.opts.MaxDeliveryCount) {
		q.bytes -= int64(m.size())
		if c.n.deadLetter != nil {
			wake = b.deadLetterLocked(c.n, m, c.n.deadLetter, reasonMaxDeliveryCount, nil, wake)
		} else {
			c.n.c.dropped++
		}
		b.pool.put(m.buf)
		return b.unblockLocked(c.n, wake)
	}
	if undeliverable {
		if c.excluded == nil {
			c.excluded = make(map[uint64]struct{})
		}
		c.excluded[m.seq] = struct{}{}
	}
	m.redelivered = true
	q.putBack(m)
	if c.own != nil {
		return wake
	}
	return b.wakeOneLocked(c.n, m, wake)
}

// OnDisposition settles or requeues a message by the consumer's outcome
// (part 3 §3.4): accepted and rejected settle it; released puts it back
// as it was; modified puts it back with delivery-failed counted in its
// header and, when undeliverable-here, for other consumers only.
func (h handler) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	b := h.b
	c, ok := l.Context.(*consumer)
	if !ok {
		if p, ok := l.Context.(*producer); ok && len(p.rejected) > 0 && d.Settled {
			delete(p.rejected, string(d.Tag)) // the producer settled a message it rejected
		}
		return
	}
	m, ok := c.unacked[d.ID]
	if !ok {
		return
	}
	if c.browse { // the message is the queue's still: only the reference goes
		if d.Settled || d.State.Type.Terminal() {
			delete(c.unacked, d.ID)
			b.mu.Lock()
			b.pool.put(m.buf)
			b.mu.Unlock()
		}
		return
	}
	if d.TxnID != nil && b.txnDisposition(c, &d) {
		return // txn.go: applied at the commit
	}
	if !d.Settled && !d.State.Type.Terminal() {
		return
	}
	delete(c.unacked, d.ID)
	var wb [8]*conn
	wake := wb[:0]
	b.mu.Lock()
	wake = b.settleLocked(c, m, d.State, wake)
	b.mu.Unlock()
	b.wake(c.conn, wake)
}

// settleLocked applies the outcome st a consumer gave m (part 3 §3.4):
// accepted and rejected settle it; released puts it back as it was;
// modified puts it back with delivery-failed counted in its header and,
// when undeliverable-here, for other consumers only; none (settled with
// no outcome) is the source's default outcome, which the broker takes
// as accepted.
func (b *Broker) settleLocked(c *consumer, m msg, st frame.DeliveryState, wake []*conn) []*conn {
	switch st.Type {
	case frame.StateRejected:
		c.n.c.rejected++
		if c.n.deadLetter != nil {
			reason := st.Error.Condition
			if len(reason) == 0 {
				reason = reasonRejected
			}
			wake = b.deadLetterLocked(c.n, m, c.n.deadLetter, reason, st.Error.Description, wake)
		}
	case frame.StateReleased:
		c.n.c.released++
		wake = b.requeueLocked(c, m, false, false, wake)
		return append(wake, c.conn) // it may take another message
	case frame.StateModified:
		c.n.c.modified++
		wake = b.modifyLocked(c, m, st.DeliveryFailed, st.UndeliverableHere, st.MessageAnnotations, wake)
		return append(wake, c.conn)
	default:
		c.n.c.acked++
	}
	b.doneLocked(c, m)
	return b.unblockLocked(c.n, wake)
}

// OnLinkDetach forgets a producer or consumer. A consumer's unsettled
// messages go back to the front of its queue, in the order they were
// sent, with delivery-count one up (they may have been seen); a fan-out
// subscription goes with its messages; a dynamic node goes with the link
// that made it.
func (h handler) OnLinkDetach(l *engine.Link, _ *engine.Error) {
	b := h.b
	cn := connOf(l.Conn())
	var wake []*conn
	switch x := l.Context.(type) {
	case *consumer:
		if cn != nil {
			if i := slices.Index(cn.consumers, x); i >= 0 {
				cn.consumers = slices.Delete(cn.consumers, i, i+1)
			}
		}
		ids := make([]uint32, 0, len(x.unacked))
		for id := range x.unacked {
			ids = append(ids, id)
		}
		slices.SortFunc(ids, func(a, b uint32) int { return int(int32(a - b)) }) // RFC 1982 order
		acquired := make([]msg, len(ids))
		for i, id := range ids {
			acquired[i] = x.unacked[id]
		}
		b.mu.Lock()
		x.gone = true // under the lock: other connections' wakeOneLocked reads it
		n := x.n
		if i := slices.Index(n.consumers, x); i >= 0 {
			n.consumers = slices.Delete(n.consumers, i, i+1)
		}
		if x.inReady {
			b.unreadyLocked(x)
		}
		if x.browse {
			n.browsing--
			for _, m := range acquired {
				b.pool.put(m.buf)
			}
			x.unacked = nil
			wake = b.autoDeleteLocked(n, wake)
		} else if d := x.dur; d != nil && b.durables[d.key] == d && !l.RemoteClosed() && !n.deleted {
			wake = b.detachSubLocked(x, acquired, wake) // durable_sub.go: kept
		} else {
			if d != nil && b.durables[d.key] == d {
				wake = b.expireLocked(d, wake)
			}
			acquired = append(acquired, x.resume...)
			x.resume = nil
			wake = b.releaseLocked(x, acquired, wake)
			if n.parent != nil {
				wake = b.leaveSharedLocked(n, l.RemoteClosed(), wake) // shared.go
			}
		}
		b.mu.Unlock()
	case *producer:
		x.gone = true
		if cn != nil {
			if i := slices.Index(cn.producers, x); i >= 0 {
				cn.producers = slices.Delete(cn.producers, i, i+1)
			}
		}
		b.mu.Lock()
		b.unblockOneLocked(x)
		if x.memWaiting {
			x.memWaiting = false
			b.memWait = slices.DeleteFunc(b.memWait, func(p *producer) bool { return p == x })
		}
		b.producers--
		if n := x.n; n != nil { // else an anonymous relay
			n.producers--
			wake = b.detachProducerLocked(x, l, l.RemoteClosed() || n.deleted, wake) // durable.go
			if n.ownerP == x {
				wake = b.removeLocked(n, wake)
			} else {
				wake = b.autoDeleteLocked(n, wake)
			}
		}
		b.mu.Unlock()
	case *requestLink:
		b.detachRequests(x) // responder.go
	default:
		// Refused before it was made: a durable state Recover gave it
		// goes, as the link was closed.
		if key, _, _, ok := durableKey(l); ok {
			b.mu.Lock()
			if d := b.durables[key]; d != nil && d.attached && d.cn == cn {
				wake = b.expireLocked(d, wake)
			}
			b.mu.Unlock()
		}
	}
	b.wake(cn, wake)
}
