package broker

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/message"
)

// This file is what a program (or a test, through package amqptest)
// does to a broker from outside AMQP: store and peek at messages, wait
// for a queue to reach a state, list and drop connections, refuse or
// delay attaches.

// ext is the Broker's state for this file and responder.go.
type ext struct {
	mu       sync.Mutex
	conns    map[*conn]struct{} // open, under mu
	connSeq  atomic.Uint64
	watching atomic.Int32 // len(watchers): b.wake reads it, without the lock
	watchers map[chan struct{}]struct{}
	attach   atomic.Pointer[func(AttachInfo) *engine.Error]
}

// connExt is a conn's state for this file and responder.go, used on
// its goroutine.
type connExt struct {
	peer     Peer
	requests []*requestLink
	inflight int // requests being answered, all its links'
}

// opened registers cn (OnConnectionOpen).
func (b *Broker) opened(cn *conn) {
	cn.ext.peer = Peer{ID: b.ext.connSeq.Add(1), ContainerID: cn.c.RemoteContainerID(), Identity: cn.identity}
	if cn.drv != nil {
		if nc := cn.drv.NetConn(); nc != nil && nc.RemoteAddr() != nil {
			cn.ext.peer.RemoteAddr = nc.RemoteAddr().String()
		}
	}
	b.ext.mu.Lock()
	if b.ext.conns == nil {
		b.ext.conns = make(map[*conn]struct{})
	}
	b.ext.conns[cn] = struct{}{}
	b.ext.mu.Unlock()
}

// closed forgets cn and ends the requests its Responders answer
// (OnConnectionClose).
func (b *Broker) closedConn(cn *conn) {
	if cn == nil {
		return
	}
	for _, rl := range cn.ext.requests {
		rl.gone = true
		rl.cancel()
	}
	cn.ext.requests = nil
	b.ext.mu.Lock()
	delete(b.ext.conns, cn)
	b.ext.mu.Unlock()
}

// Peers returns the connections open (those whose open the broker has
// answered), by ID.
func (b *Broker) Peers() []Peer {
	b.ext.mu.Lock()
	out := make([]Peer, 0, len(b.ext.conns))
	for cn := range b.ext.conns {
		out = append(out, cn.ext.peer)
	}
	b.ext.mu.Unlock()
	slices.SortFunc(out, func(x, y Peer) int { return cmp.Compare(x.ID, y.ID) })
	return out
}

// Drop closes the network connection of the peer with the given ID at
// once, as a network failure would (no close frame: the peer sees its
// connection lost), and reports whether it was open. id 0 drops every
// connection.
func (b *Broker) Drop(id uint64) bool {
	b.ext.mu.Lock()
	var nets []interface{ Close() error }
	for cn := range b.ext.conns {
		if (id == 0 || cn.ext.peer.ID == id) && cn.drv != nil {
			nets = append(nets, cn.drv.NetConn())
		}
	}
	b.ext.mu.Unlock()
	for _, nc := range nets {
		nc.Close()
	}
	return len(nets) > 0
}

// AttachInfo is a link being attached, as an attach hook sees it
// (Broker.OnAttach).
type AttachInfo struct {
	Peer Peer // Link is the link's name
	// Address is the node the link names: its source's (Sender: the
	// broker sends, the peer receives) or its target's; empty for a
	// dynamic terminus.
	Address string
	Sender  bool
}

// OnAttach sets the hook asked about each link attached from now on
// (nil: none), before the broker's own checks: a link it returns an
// error for is refused with that error (answered without a terminus,
// then detached). It runs on the link's connection's goroutine, so a
// hook that waits delays that connection's attach answer, and all of
// its other work meanwhile; it must not call the Broker's methods that
// wait for that connection.
func (b *Broker) OnAttach(f func(AttachInfo) *engine.Error) {
	if f == nil {
		b.ext.attach.Store(nil)
		return
	}
	b.ext.attach.Store(&f)
}

// attachHook asks the hook set by OnAttach about l.
func (b *Broker) attachHook(cn *conn, l *engine.Link) *engine.Error {
	f := b.ext.attach.Load()
	if f == nil {
		return nil
	}
	a := AttachInfo{Peer: cn.ext.peer, Sender: l.IsSender()}
	a.Peer.Link = string(l.Name())
	if a.Sender {
		a.Address = string(l.RemoteSource().Address)
	} else {
		a.Address = string(l.RemoteTarget().Address)
	}
	return (*f)(a)
}

// ErrNoNode is what Peek returns for an address with no node.
var ErrNoNode = errors.New("broker: no node at that address")

// Publish stores m on the node at address, made (a queue, or fan-out
// by Options.FanoutPrefixes) when there is none, as if a producer had
// sent it: to seed a queue, or to feed consumers from Go code. It does
// not wait for room (a full queue takes it past its bound) and asks no
// Permissions; it fails when the broker holds MaxQueues nodes, or
// MaxMemory bytes of messages and its eighth.
func (b *Broker) Publish(address string, m *message.Message) error {
	payload, err := m.Append(nil)
	if err != nil {
		return err
	}
	return b.publish([]byte(address), payload, true)
}

// publish stores payload on the node at addr, made when create is set
// and there is none.
func (b *Broker) publish(addr, payload []byte, create bool) error {
	var wb [8]*conn
	wake := wb[:0]
	b.mu.Lock()
	n := b.nodes[string(addr)]
	if n == nil && create {
		n = b.nodeLocked(addr, false)
		if n == nil {
			b.mu.Unlock()
			return errTooManyQueues
		}
	}
	if n == nil {
		b.mu.Unlock()
		return ErrNoNode
	}
	if b.memFullLocked(len(payload)) {
		b.mu.Unlock()
		return errMemory
	}
	var in incoming
	in.scan(payload)
	wake = b.enqueueLocked(n, &in, 0, wake) // from no connection: no-local takes it
	b.mu.Unlock()
	b.wake(nil, wake)
	return nil
}

// Peek returns copies of the first (oldest) n messages waiting on the
// queue at address, decoded, without taking them (those sent to
// consumers and not settled are not waiting); fewer when it holds
// fewer, none for a fan-out node (its messages wait in each consumer's
// subscription). n < 0 means all of them.
func (b *Broker) Peek(address string, n int) ([]*message.Message, error) {
	b.mu.Lock()
	nd := b.nodes[address]
	if nd == nil {
		b.mu.Unlock()
		return nil, ErrNoNode
	}
	k := nd.q.len()
	if n >= 0 {
		k = min(k, n)
	}
	raw := make([][]byte, k)
	for i := range k {
		raw[i] = append([]byte(nil), nd.q.r.at(i).buf.b...)
	}
	b.mu.Unlock()
	out := make([]*message.Message, k)
	for i, p := range raw {
		out[i] = new(message.Message)
		if err := out[i].DecodeNoCopy(p); err != nil {
			return out[:i], err
		}
	}
	return out, nil
}

// Wait waits until cond reports true of the statistics of the node at
// address (a zero QueueStats while there is none), and returns them; or
// until ctx ends, with ctx's error and the last statistics. cond is
// asked at once and again after each change the broker makes to its
// queues (messages stored, sent, settled, put back; links attached and
// detached); it runs on the caller's goroutine, without the broker's
// lock. It waits on a signal, not a timer: a broker that does nothing
// costs the waiter nothing.
func (b *Broker) Wait(ctx context.Context, address string, cond func(QueueStats) bool) (QueueStats, error) {
	ch := make(chan struct{}, 1)
	b.ext.mu.Lock()
	if b.ext.watchers == nil {
		b.ext.watchers = make(map[chan struct{}]struct{})
	}
	b.ext.watchers[ch] = struct{}{}
	b.ext.watching.Add(1)
	b.ext.mu.Unlock()
	defer func() {
		b.ext.mu.Lock()
		delete(b.ext.watchers, ch)
		b.ext.watching.Add(-1)
		b.ext.mu.Unlock()
	}()
	for {
		s, _ := b.Queue(address)
		if cond(s) {
			return s, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return s, ctx.Err()
		}
	}
}

// notify tells the waiters of Wait that something changed; one load
// when none waits (b.wake calls it).
func (b *Broker) notify() {
	if b.ext.watching.Load() != 0 { // inlined: most brokers have no watcher
		b.notifyWatchers()
	}
}

// notifyWatchers signals each watcher (notify).
func (b *Broker) notifyWatchers() {
	b.ext.mu.Lock()
	for ch := range b.ext.watchers {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	b.ext.mu.Unlock()
}

// Declare makes a queue at address (fan-out by Options.FanoutPrefixes)
// unless there is a node there already, and reports whether it made
// one: for a Responder that declares queues, as RabbitMQ's /management
// does, or a test that wants a queue before its producers. It fails
// when the broker holds MaxQueues nodes. It asks no Permissions.
func (b *Broker) Declare(address string) (made bool, _ error) {
	if e := checkAddress([]byte(address)); e != nil {
		return false, e
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.nodes[address] != nil {
		return false, nil
	}
	if b.nodeLocked([]byte(address), false) == nil {
		return false, errTooManyQueues
	}
	return true, nil
}
