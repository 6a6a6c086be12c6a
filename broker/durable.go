package broker

import (
	"slices"
	"time"
	"unicode/utf8"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// This file is link recovery on the broker's side (part 2 §2.6.13, part
// 3 §3.5.5–3.5.6): the state it keeps for a link whose terminus is
// durable with unsettled-state, across its attaches, keyed by the
// account that authenticated, the peer's container-id, the link's name
// and the broker's role, until the terminus's expiry policy ends it: no
// other account can attach it again, or take it over.
//
// A producer's (the broker receives; its target is durable): the
// delivery-tags of the messages the broker stored and the producer had
// not settled (receiver settle mode second), with the broker's outcome.
// A re-attach of the name gets them as its answer's unsettled map
// (engine.Recoverer), so the producer settles what the broker has and
// sends again what it never got whole: each message is stored once.
//
// A consumer's (the broker sends; its source is durable) is in
// durable_sub.go.

// DefaultMaxDurableLinks is the detached durable links whose state a
// broker keeps by default (Options.MaxDurableLinks).
const DefaultMaxDurableLinks = 10_000

// takeover is how long the answer to an attach waits for the state of a
// durable link of the same name still attached on another connection of
// the same container, once the broker has closed that connection: a
// bound on a hang, not a timing anything depends on. The connection of
// the attach goes on meanwhile (its answer is held: takeOver).
const takeover = 5 * time.Second

// durKey names a durable terminus (part 2 §2.6.1: a link's name is
// unique per pair of containers and direction), within the account
// that authenticated (a container-id is the peer's word, not proof).
type durKey struct {
	identity, container, name string
	sender                    bool // the broker's role: a consumer's link
}

// durable is the state the broker keeps for a link with a durable
// terminus, attached or not. Under the broker's lock.
type durable struct {
	key      durKey
	policy   frame.ExpiryPolicy
	timeout  uint32 // seconds after the policy's event
	attached bool
	cn       *conn           // the connection of its last attach
	sess     *engine.Session // and session, for expiry-policy session-end
	counting bool            // its expiry's event happened: the timer runs (or it is gone)
	timer    *time.Timer
	gen      uint64    // one up at each attach: a timer of an earlier detach does nothing
	at       time.Time // when it detached
	takers   []taker   // attaches that take it over, answered when it detaches (takeOver)

	// A producer's: what the broker stored and the producer had not
	// settled, the broker's state of each; pending, during an attach
	// that resumes them, those the producer has not resolved yet.
	stored  []engine.Unsettled
	pending map[string]struct{}

	// A consumer's (durable_sub.go): its subscription, and whether its
	// source keeps unsettled state (not configuration alone).
	c         *consumer
	unsettled bool

	// The account it counts in (Options.MaxDurableLinksPerAccount).
	acct *account
}

// durableKey returns the key of l when its terminus at the peer's side
// of the broker is durable: a producer's target with unsettled-state, a
// consumer's source with configuration or unsettled-state; its expiry
// policy and timeout.
func durableKey(l *engine.Link) (durKey, frame.ExpiryPolicy, uint32, bool) {
	var d frame.TerminusDurability
	var p frame.ExpiryPolicy
	var t uint32
	if l.IsSender() {
		s := l.RemoteSource()
		d, p, t = s.Durable, s.ExpiryPolicy, s.Timeout
	} else {
		g := l.RemoteTarget()
		d, p, t = g.Durable, g.ExpiryPolicy, g.Timeout
	}
	if d != frame.DurabilityUnsettledState && (d != frame.DurabilityConfiguration || !l.IsSender()) {
		return durKey{}, 0, 0, false
	}
	c := l.Conn()
	if !utf8.Valid(l.Name()) || !utf8.ValidString(c.RemoteContainerID()) {
		return durKey{}, 0, 0, false // refused (OnLinkAttach, OnConnectionOpen)
	}
	return durKey{identity: c.Identity(), container: c.RemoteContainerID(), name: string(l.Name()), sender: l.IsSender()},
		p, t, true
}

// taker is an attach of a durable link still attached on another
// connection, whose answer waits for that link's state (takeOver).
type taker struct {
	l  *engine.Link
	cn *conn
}

// takeOver is AnswerAttach's hook for the durable link l of cn, whose
// key is key: when the link of that name is still attached on another
// connection (the broker has not seen that connection fail yet), that
// connection is closed as lost and l's answer is held
// (engine.Link.AnswerLater) until the old link has detached and left
// its state (detachedLocked hands it over), at most takeover; l's
// connection goes on meanwhile. It reports whether it held the answer.
func (b *Broker) takeOver(cn *conn, l *engine.Link, key durKey) bool {
	b.mu.Lock()
	d := b.durables[key]
	if d == nil || !d.attached || d.cn == cn || l.AnswerLater() != nil {
		b.mu.Unlock()
		return false
	}
	d.takers = append(d.takers, taker{l, cn})
	old := d.cn.drv
	b.mu.Unlock()
	b.logf("durable link %q of %q attached again: closing its old connection", key.name, key.container)
	if old != nil {
		old.NetConn().Close()
	}
	time.AfterFunc(takeover, func() { b.handOver(d, l) })
	return true
}

// handOver answers the held attach l of a link that takes d over, now
// (d detached, or takeover passed): on l's connection's goroutine
// (answerHeld), where Recover finds d's state.
func (b *Broker) handOver(d *durable, l *engine.Link) {
	b.mu.Lock()
	var cn *conn
	for i, t := range d.takers {
		if t.l == l {
			cn = t.cn
			d.takers = slices.Delete(d.takers, i, i+1)
			cn.held = append(cn.held, l)
			break
		}
	}
	b.mu.Unlock()
	if cn != nil {
		b.kick(cn)
	}
}

// handOverLocked hands d's takers their answers, d detached: their
// connections are appended to wake (kicked: never d's own, the one that
// runs this, so their Wakers run answerHeld).
func (b *Broker) handOverLocked(d *durable, wake []*conn) []*conn {
	for _, t := range d.takers {
		t.cn.held = append(t.cn.held, t.l)
		wake = append(wake, t.cn)
	}
	d.takers = nil
	return wake
}

// answerHeld answers the attaches of cn that took a durable link over
// and whose state is there (handOver). It runs on cn's goroutine.
func (b *Broker) answerHeld(cn *conn) {
	b.mu.Lock()
	held := cn.held
	cn.held = nil
	b.mu.Unlock()
	for _, l := range held {
		l.Answer(nil) // ErrState when the link went meanwhile
	}
}

// Recover is the broker's engine.Recoverer: before the engine answers an
// attach of a durable link it returns what the broker kept for that
// name, the answer's unsettled map. A durable link of the name still
// attached on another connection was taken over (takeOver): the answer
// comes once that link detached, or, past takeover, with a new state.
func (h handler) Recover(l *engine.Link) []engine.Unsettled {
	b := h.b
	key, policy, timeout, ok := durableKey(l)
	cn := connOf(l.Conn())
	if !ok || cn == nil {
		return nil
	}
	b.mu.Lock()
	d := b.durables[key]
	var wb [8]*conn
	wake := wb[:0]
	if d != nil && !d.attached && d.c != nil && (d.c.n.deleted || d.c.n.name != string(l.RemoteSource().Address)) {
		// A subscription attached again to another address (or its node
		// gone): it ends, and a new one starts.
		wake = b.expireLocked(d, wake)
		d = nil
	}
	switch {
	case d == nil || d.attached:
		// New, or still held (on this connection no engine lets a name
		// attach twice; another's did not let go): a fresh state.
		if d != nil {
			wake = b.expireLocked(d, wake)
		}
		d = &durable{key: key, acct: b.accountLocked(key.identity)}
		d.acct.durables++
		b.durables[key] = d
	default:
		b.keptN--
	}
	d.policy, d.timeout = policy, timeout
	d.attached, d.cn, d.sess, d.counting = true, cn, l.Session(), false
	d.gen++
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	var out []engine.Unsettled
	if !key.sender {
		out = d.recoverProducer(l)
	} else {
		d.unsettled = l.RemoteSource().Durable == frame.DurabilityUnsettledState
		out = d.recoverConsumer() // durable_sub.go
	}
	b.mu.Unlock()
	b.wake(nil, wake) // kicked: this goroutine is in the engine's attach
	return out
}

// recoverProducer returns, of what a producer's durable link left
// stored and unsettled, what the producer's attach says it still holds
// (all when its map is incomplete: part 2 §2.6.13); the broker forgets
// the rest, which the producer settled. They are pending until the
// producer resumes them.
func (d *durable) recoverProducer(l *engine.Link) []engine.Unsettled {
	a := l.RemoteAttach()
	all := a.IncompleteUnsettled
	out := d.stored[:0]
	for _, u := range d.stored {
		if _, known := l.RemoteUnsettled(u.Tag); known || all {
			out = append(out, u)
		}
	}
	clear(d.stored[len(out):])
	d.stored = out
	if len(out) == 0 {
		d.stored, d.pending = nil, nil
		return nil
	}
	d.pending = make(map[string]struct{}, len(out))
	for _, u := range out {
		d.pending[string(u.Tag)] = struct{}{}
	}
	return slices.Clone(out)
}

// resumedDelivery is OnDelivery's hook for a delivery the producer of a
// durable link resumed (the engine passes only those its answer
// listed): the broker has it stored, so it is not stored again; one
// with a payload is given its outcome again (the producer settles it).
// It reports whether the delivery was one.
func (b *Broker) resumedDelivery(p *producer, d *engine.Delivery) bool {
	if p.dur == nil {
		return false
	}
	b.mu.Lock()
	delete(p.dur.pending, string(d.DeliveryTag))
	b.mu.Unlock()
	if !d.Settled {
		d.Accept()
	}
	return true
}

// detachProducerLocked is OnLinkDetach's hook for a producer of a durable
// link: detached without closing, the broker keeps what it stored and
// the producer had not settled; closed, the state goes.
func (b *Broker) detachProducerLocked(p *producer, l *engine.Link, closed bool, wake []*conn) []*conn {
	d := p.dur
	if d == nil || b.durables[d.key] != d {
		return wake
	}
	if closed {
		return b.expireLocked(d, wake)
	}
	var keep []engine.Unsettled
	for _, u := range d.stored {
		if _, ok := d.pending[string(u.Tag)]; ok {
			keep = append(keep, u) // resumed by no delivery yet
		}
	}
	for _, u := range l.Unsettled() {
		u.State = engine.Accepted
		if _, ok := p.rejected[string(u.Tag)]; ok {
			u.State = frame.DeliveryState{Type: frame.StateRejected}
		}
		keep = append(keep, u)
	}
	d.stored, d.pending = keep, nil
	return b.detachedLocked(d, wake)
}

// detachedLocked is the common part of a durable link's detach without
// closing: it is kept, within Options.MaxDurableLinks, and its expiry
// starts now (link-detach) or at its session's or connection's end.
func (b *Broker) detachedLocked(d *durable, wake []*conn) []*conn {
	d.attached, d.at = false, time.Now()
	b.keptN++
	wake = b.handOverLocked(d, wake)
	if b.opts.MaxDurableLinks > 0 && b.keptN > b.opts.MaxDurableLinks {
		var oldest *durable
		for _, o := range b.durables {
			if !o.attached && o != d && (oldest == nil || o.at.Before(oldest.at)) {
				oldest = o
			}
		}
		if oldest != nil {
			b.logf("durable link %q of %q expired early: the broker keeps at most %d", oldest.key.name,
				oldest.key.container, b.opts.MaxDurableLinks)
			wake = b.expireLocked(oldest, wake)
		}
	}
	switch d.policy {
	case frame.ExpiryLinkDetach:
		return b.countLocked(d, wake)
	case frame.ExpiryNever:
		return wake
	}
	d.cn.durWait = append(slices.DeleteFunc(d.cn.durWait, func(o *durable) bool {
		return o.attached || o.counting || o.cn != d.cn
	}), d)
	return wake
}

// countLocked starts d's expiry: its timeout, or at once when it is 0.
func (b *Broker) countLocked(d *durable, wake []*conn) []*conn {
	d.counting = true
	if d.timeout == 0 {
		return b.expireLocked(d, wake)
	}
	gen := d.gen
	d.timer = time.AfterFunc(time.Duration(d.timeout)*time.Second, func() {
		var wake []*conn
		b.mu.Lock()
		if d.gen == gen && !d.attached && b.durables[d.key] == d {
			wake = b.expireLocked(d, wake)
		}
		b.mu.Unlock()
		b.wake(nil, wake)
	})
	return wake
}

// ended starts the expiry of the durable links of cn waiting for the
// end of session s (s nil: of the connection, when every policy but
// never and link-detach has its event).
func (b *Broker) ended(cn *conn, s *engine.Session) {
	if cn == nil || len(cn.durWait) == 0 {
		return
	}
	var wake []*conn
	b.mu.Lock()
	for _, d := range cn.durWait {
		if d.attached || d.counting || d.cn != cn || b.durables[d.key] != d {
			continue
		}
		if s == nil || (d.policy == frame.ExpirySessionEnd && d.sess == s) {
			wake = b.countLocked(d, wake)
		}
	}
	cn.durWait = slices.DeleteFunc(cn.durWait, func(d *durable) bool { return d.counting || d.attached || s == nil })
	b.mu.Unlock()
	b.wake(nil, wake)
}

// expireLocked ends d: the broker forgets it, an attach that took it
// over (takeOver) is answered with a new state, and a subscription's
// messages go back (durable_sub.go).
func (b *Broker) expireLocked(d *durable, wake []*conn) []*conn {
	b.forgetLocked(d)
	wake = b.handOverLocked(d, wake) // its takers start anew at once
	return b.endSubLocked(d, wake)
}

// forgetLocked drops d from the broker's durable links. (It takes no
// wake list: removeLocked calls it, and a call back into removeLocked
// from here would make every wake list escape to the heap.)
func (b *Broker) forgetLocked(d *durable) {
	if b.durables[d.key] == d {
		delete(b.durables, d.key)
		if !d.attached {
			b.keptN--
		}
	}
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	d.counting = true
	d.stored, d.pending = nil, nil
	if a := d.acct; a != nil {
		a.durables--
		d.acct = nil
		b.dropAccountLocked(a)
	}
}

// overDurableQuota reports whether an attach of the durable link of key
// makes a new state (fresh), and whether that state would be past its
// account's bound (Options.MaxDurableLinksPerAccount): the one it has is
// kept.
func (b *Broker) overDurableQuota(key durKey) (fresh, over bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	a := b.accounts[key.identity]
	fresh = b.durables[key] == nil
	return fresh, fresh && b.opts.MaxDurableLinksPerAccount > 0 && a != nil &&
		a.durables >= b.opts.MaxDurableLinksPerAccount
}

// DurableLinks returns the number of links with a durable terminus
// whose state the broker keeps: attached, and detached (kept until
// their expiry policy ends them, at most Options.MaxDurableLinks).
func (b *Broker) DurableLinks() (attached, detached int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.durables) - b.keptN, b.keptN
}
