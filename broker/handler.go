package broker

import (
	"slices"
	"unicode/utf8"

	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// This file is the broker's engine.Handler: a connection's state
// (conn) and its service, the events of its links — an attach makes a
// producer (producer.go) or consumer (consumer.go) of a node, a
// delivery is routed (broker.go) and stored (node.go), an outcome
// settles or requeues a message, a detach forgets the link. Each
// connection's events run one at a time (on whichever of its Driver's
// goroutines holds it: "the connection's goroutine" below means that);
// the nodes are under the broker's lock, never held while a Driver is
// asked to run something (kick, with Waker.Wake, which runs nothing on
// the caller's goroutine: never WakeNow, whose run here could take the
// broker's lock again).

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
	batch [64]msg
	ids   [64]uint32
	made  *made // the nodes it made that are there (under the broker's lock)
	// held is its attaches of durable links taken over from another
	// connection whose state is there: answered by its service
	// (answerHeld, durable.go). Under the broker's lock.
	held    []*engine.Link
	txnHeld int // bytes its open transactions hold (txn.go)
	ext     connExt
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
		cn.wake = d.NewWaker(func(*engine.Conn) {
			cn.b.answerHeld(cn) // durable.go
			cn.b.service(cn)
		})
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
		b.takeOver(cn, l, key) // durable.go: held while another connection lets go of it
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
			filt: filt}
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
	final := d.Settled || d.State.Type.Terminal()
	var m msg
	if final && !c.browse && d.TxnID == nil { // most: looked up and taken at once
		if m, ok = c.unacked.take(d.ID); !ok {
			return
		}
	} else {
		if m, ok = c.unacked.get(d.ID); !ok {
			return
		}
		if c.browse { // the message is the queue's still: only the reference goes
			if final {
				c.unacked.take(d.ID)
				b.mu.Lock()
				b.pool.put(m.buf)
				b.mu.Unlock()
			}
			return
		}
		if d.TxnID != nil && b.txnDisposition(c, &d) {
			return // txn.go: applied at the commit
		}
		if !final {
			return
		}
		c.unacked.take(d.ID)
	}
	var wb [8]*conn
	wake := wb[:0]
	b.mu.Lock()
	wake = b.settleLocked(c, m, &d.State, wake)
	b.mu.Unlock()
	b.wake(c.conn, wake)
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
		acquired := x.unacked.all() // in the order of their ids
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
			x.unacked = sent{}
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
