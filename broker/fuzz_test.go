package broker

import (
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/require"
)

// This file is hostile bytes against the broker: FuzzBroker serves up to
// three connections one after the other, each the peer's bytes of one
// input, as the broker's serve path does (an engine server with the
// broker's handler: feedInput, in memory and in the caller's goroutine), so that what a connection leaves behind
// (durable producers and subscriptions detached, transactions rolled
// back at its end) meets the next. Its seeds are real conversations,
// recorded by running an engine client against the broker in the test;
// TestFuzzSeeds serves them through the broker's driver.Server too.

// memConn is a net.Conn in memory: reads return in, at most read bytes at
// a time, then io.EOF (or, while recording, (0, nil): nothing yet);
// writes are dropped.
type memConn struct {
	mu     sync.Mutex
	in     []byte
	read   int
	eof    bool // io.EOF when in is empty, else (0, nil)
	closed bool
}

type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "mem" }

func (m *memConn) Read(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return 0, net.ErrClosed
	}
	if len(m.in) == 0 {
		if m.eof {
			return 0, io.EOF
		}
		return 0, nil
	}
	if m.read > 0 && len(p) > m.read {
		p = p[:m.read]
	}
	n := copy(p, m.in)
	m.in = m.in[n:]
	return n, nil
}

func (m *memConn) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return 0, net.ErrClosed
	}
	return len(p), nil
}

func (m *memConn) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	return nil
}

func (*memConn) LocalAddr() net.Addr              { return memAddr{} }
func (*memConn) RemoteAddr() net.Addr             { return memAddr{} }
func (*memConn) SetDeadline(time.Time) error      { return nil }
func (*memConn) SetReadDeadline(time.Time) error  { return nil }
func (*memConn) SetWriteDeadline(time.Time) error { return nil }
func (m *memConn) feed(p []byte)                  { m.mu.Lock(); m.in = append(m.in, p...); m.mu.Unlock() }
func newMemConn(in []byte, read int, eof bool) *memConn {
	return &memConn{in: in, read: read, eof: eof}
}

// fuzzOptions are the broker's options under fuzzing: small bounds, so
// that flow control, full queues and the durable links' bound are
// reached by short inputs; flags turn on AutoDelete and RejectWhenFull,
// accounts and permissions (4), dead-lettering and expiry to "dlq"
// with a MaxDeliveryCount of 2 (8). (16 is FuzzBroker's: its
// connections at once.) The broker's clock (Now) moves
// 100 ms each time it is read, so that ttls and scheduled times of the
// inputs pass, always the same way.
func fuzzOptions(flags uint8) Options {
	o := Options{MaxMessages: 16, MaxBytes: 16 << 10, Credit: 8, MaxQueues: 8, MaxDurableLinks: 3,
		FanoutPrefixes: []string{"topic/"}, RouteKey: "to",
		AutoDelete: flags&1 != 0, RejectWhenFull: flags&2 != 0,
		Engine: engine.Config{MaxFrameSize: 4096, HandshakeTimeout: time.Minute}}
	var clock atomic.Int64
	clock.Store(1e12)
	o.Now = func() time.Time { return time.UnixMilli(clock.Add(100)) }
	if flags&8 != 0 {
		o.DeadLetterAddress, o.ExpiryAddress, o.MaxDeliveryCount = "dlq", "dlq", 2
	}
	if flags&4 != 0 {
		o.Users, o.Anonymous = map[string]string{"alice": "pw"}, true
		o.Permissions = fuzzPermissions.Allow
		o.MaxQueuesPerConnection, o.MaxDurableLinksPerAccount = 4, 2
	}
	return o
}

// fuzzPermissions are the accounts' of fuzzOptions with flags&4: alice
// does anything; anonymous makes and writes anything, and reads all
// but "secret…".
var fuzzPermissions = func() *Permissions {
	p, err := NewPermissions(map[string]Grant{
		"alice":     {Configure: ".*", Write: ".*", Read: ".*"},
		"anonymous": {Configure: ".*", Write: ".*", Read: `q.*|topic/.*|amqpsax\.dynamic\..*`},
	})
	if err != nil {
		panic(err)
	}
	return p
}()

// newFuzzBroker returns a broker with fuzzOptions(flags) whose dynamic
// addresses are numbered (amqpsax.dynamic.1, .2, …), so that a recorded
// conversation names the same ones when it is served again.
// Each message sent is checked against the invariant of permissions: no
// delivery to a link whose account lacks read on its address (but its
// own dynamic node's); a breach is in b.breach.
func newFuzzBroker(flags uint8) *Broker {
	b := New(fuzzOptions(flags))
	var n int
	b.dynamicAddress = func() []byte { n++; return fmt.Appendf(nil, "amqpsax.dynamic.%d", n) }
	b.sent = func(c *consumer) {
		if c.n.ownerC != c.conn && !b.allowed(c.conn.identity, []byte(c.n.name), Read) && b.breach == nil {
			b.breach = fmt.Errorf("a delivery from %q to %q, who may not read it", c.n.name, c.conn.identity)
		}
	}
	return b
}

// hang bounds the wait for a connection's end: not a timing anything
// depends on (an input is served in milliseconds), a hang's report.
const hang = time.Minute

// serveInput serves one connection whose peer sends in (read bytes at a
// time) and then ends its side, through the broker's driver.Server (a
// driver.Driver on its own goroutines), and waits for the connection to end.
func serveInput(t testing.TB, b *Broker, in []byte, read int) {
	t.Helper()
	nc := newMemConn(in, read, true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.srv.ServeConn(nc)
	}()
	select {
	case <-done:
	case <-time.After(hang):
		buf := make([]byte, 1<<20)
		t.Fatalf("the connection did not end:\n%s", buf[:runtime.Stack(buf, true)])
	}
}

// feedInput serves one connection as the driver.Server does (an engine server
// with the broker's handler, a Driver for the handler's wake-ups) but in
// the caller's goroutine, with no Driver loop: the bytes are fed to the
// engine read bytes at a time, the
// broker's service of the connection runs after each (as the Driver
// runs it when woken), the output is dropped, and at the end of in the
// engine is told its input ended. The connection must then be done.
// FuzzBroker's inputs run here, ten times faster than through the
// Driver's goroutines; TestFuzzSeeds runs the seeds both ways.
func feedInput(t testing.TB, b *Broker, in []byte, read int) {
	t.Helper()
	nc := newMemConn(in, read, true)
	c := engine.NewServer(b.cfg, handler{b})
	driver.NewDriver(nc, c) // never run
	now := time.Unix(1e9, 0)
	buf := make([]byte, 4096)
	for !c.Closed() {
		n, err := nc.Read(buf)
		if n > 0 {
			c.Feed(buf[:n], now)
			woken(b, c)
			c.Written(len(c.Output()))
		}
		if err != nil {
			c.ReadFailed(err)
		}
	}
	for out := c.Output(); len(out) > 0; out = c.Output() {
		c.Written(len(out))
	}
	if !c.Done() {
		t.Fatalf("the connection is not done at the end of its input")
	}
}

// woken runs what the Waker of c's connection runs (OnConnectionOpen):
// the held answers of attaches that took a durable link over, then the
// service.
func woken(b *Broker, c *engine.Conn) {
	if cn := connOf(c); cn != nil {
		b.answerHeld(cn)
		b.service(cn)
	}
}

// feedTogether serves the connections of ins at once, as feedInput
// serves one, in the caller's goroutine: read bytes of each input in
// turn, each connection woken (woken: as kicked) after each; a
// connection the broker closes (its durable link taken over by another)
// has its read fail. Once every input is fed, each connection still
// open is told in turn that its input ended. Then each must be done.
// After each wake-up, an attach that took a durable link over is held
// only while that link is attached (its detach hands the answer over,
// and the wake-up gives it): none is left waiting after the connection
// that had the link ended.
func feedTogether(t testing.TB, b *Broker, ins [][]byte, read int) {
	t.Helper()
	type fed struct {
		nc *memConn
		c  *engine.Conn
	}
	var cs []fed
	for _, in := range ins {
		if len(in) == 0 {
			continue
		}
		nc := newMemConn(in, read, false)
		c := engine.NewServer(b.cfg, handler{b})
		driver.NewDriver(nc, c) // never run
		cs = append(cs, fed{nc, c})
	}
	now := time.Unix(1e9, 0)
	buf := make([]byte, 4096)
	wakeAll := func() {
		for _, f := range cs {
			if !f.c.Done() {
				woken(b, f.c)
			}
			for out := f.c.Output(); len(out) > 0; out = f.c.Output() {
				f.c.Written(len(out))
			}
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		for k, d := range b.durables {
			if len(d.takers) != 0 && !d.attached {
				t.Fatalf("durable %q detached: %d attaches that took it over still wait", k.name, len(d.takers))
			}
		}
		for i, f := range cs {
			if cn := connOf(f.c); cn != nil && !f.c.Done() && len(cn.held) != 0 {
				t.Fatalf("connection %d woken with %d answers held", i+1, len(cn.held))
			}
		}
	}
	for more := true; more; {
		more = false
		for _, f := range cs {
			if f.c.Closed() {
				continue
			}
			n, err := f.nc.Read(buf)
			if n > 0 {
				f.c.Feed(buf[:n], now)
				more = true
			}
			if err != nil {
				f.c.ReadFailed(err)
				more = true
			}
			wakeAll()
		}
	}
	for _, f := range cs {
		if !f.c.Closed() {
			f.c.ReadFailed(io.EOF)
		}
		wakeAll()
	}
	for i, f := range cs {
		if !f.c.Done() {
			t.Fatalf("connection %d is not done at the end of the inputs", i+1)
		}
	}
}

// noGoroutines waits for the goroutines of the connections served to
// end (a Driver's reader and writer end after its Run returns; with
// feedInput there are none) and fails when more than base are left
// after hang.
func noGoroutines(t testing.TB, base int) {
	t.Helper()
	deadline := time.Now().Add(hang)
	for i := 0; runtime.NumGoroutine() > base; i++ {
		if i < 1000 {
			runtime.Gosched()
			continue
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines left, %d before:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond)
	}
}

// expireAll ends every durable link the broker keeps, as their expiry
// policies (or its bound) would: what a timer would do later, now.
func (b *Broker) expireAll() {
	var wake []*conn
	b.mu.Lock()
	for _, d := range b.durables {
		wake = b.expireLocked(d, wake)
	}
	b.mu.Unlock()
	b.wake(nil, wake)
}

// checkQuiet checks what must hold of a broker none of whose
// connections is open: it reports the first thing that does not.
// Durable links are all detached; no node has consumers, producers or
// producers waiting; each queue's (a queue node's, a detached durable
// subscription's to a fan-out node) unsettled messages are those its
// detached durable consumers hold acquired, its bytes those of its
// messages and of those; every buffer's references are the queues'
// messages that share it, and none of those is in the pool's free
// lists; the copies counted for detached subscriptions are theirs; a
// queue node's messages held are at most those it stored, each
// message was sent new at most once, and each delivery settled at most
// once.
func (b *Broker) checkQuiet() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n := b.live.Load(); n != 0 {
		return fmt.Errorf("%d connections open", n)
	}
	kept := 0
	for k, d := range b.durables {
		if d.key != k {
			return fmt.Errorf("durable %q under key %q", d.key.name, k.name)
		}
		if d.attached {
			return fmt.Errorf("durable %q attached with no connection open", k.name)
		}
		if len(d.takers) != 0 {
			return fmt.Errorf("durable %q: %d attaches wait for it with no connection open", k.name, len(d.takers))
		}
		kept++
		if d.c != nil && d.c.dur == d && !d.c.gone {
			return fmt.Errorf("durable %q: its consumer is not gone", k.name)
		}
	}
	if kept != b.keptN {
		return fmt.Errorf("keptN %d, %d detached", b.keptN, kept)
	}
	keptCopies, keptBytes := 0, int64(0)
	for _, n := range b.nodes {
		for _, c := range n.detached {
			keptCopies += c.keptN
			keptBytes += c.keptBytes
		}
	}
	if keptCopies != b.keptCopies || keptBytes != b.keptBytes {
		return fmt.Errorf("copies kept for detached subscriptions: %d (%d bytes), counted %d (%d bytes)",
			keptCopies, keptBytes, b.keptCopies, b.keptBytes)
	}
	refs := map[*buffer]int32{}
	count := func(m msg) error {
		if m.buf == nil {
			return fmt.Errorf("a message with no buffer")
		}
		refs[m.buf]++
		return nil
	}
	checkQueue := func(n *node, q *queue, holders []*consumer) error {
		var bytes int64
		if err := q.r.check(); err != nil {
			return fmt.Errorf("node %q: %v", n.name, err)
		}
		for i := range q.len() {
			m := *q.r.at(i)
			if err := count(m); err != nil {
				return err
			}
			if i > 0 && q.r.at(i-1).prio < m.prio {
				return fmt.Errorf("node %q: priority %d after %d", n.name, m.prio, q.r.at(i-1).prio)
			}
			bytes += int64(m.size())
		}
		acquired := 0
		for _, c := range holders {
			for _, m := range c.acquired {
				if err := count(m); err != nil {
					return err
				}
				bytes += int64(m.size())
			}
			acquired += len(c.acquired)
		}
		if q.unsettled != acquired {
			return fmt.Errorf("node %q: %d unsettled, %d acquired by detached consumers", n.name, q.unsettled, acquired)
		}
		if q.bytes != bytes {
			return fmt.Errorf("node %q: %d bytes counted, %d held", n.name, q.bytes, bytes)
		}
		return nil
	}
	sched := map[*node]int{}
	schedBytes := map[*node]int64{}
	for i := range b.sched {
		e := &b.sched[i]
		if err := count(e.m); err != nil {
			return err
		}
		if i > 0 && schedLess(e, &b.sched[(i-1)/2]) {
			return fmt.Errorf("scheduled messages: not a heap at %d", i)
		}
		sched[e.n]++
		schedBytes[e.n] += int64(e.m.size())
	}
	for n, k := range sched {
		if n.q.sched != k || n.q.schedBytes != schedBytes[n] {
			return fmt.Errorf("node %q: %d scheduled (%d bytes), counted %d (%d bytes)", n.name, k, schedBytes[n], n.q.sched, n.q.schedBytes)
		}
	}
	var deadLettered uint64
	for name, n := range b.nodes {
		if sched[n] != n.q.sched {
			return fmt.Errorf("node %q: %d scheduled counted, %d held", name, n.q.sched, sched[n])
		}
		if name != b.opts.DeadLetterAddress {
			deadLettered += n.c.deadLettered
		}
		if n.name != name || n.deleted {
			return fmt.Errorf("node %q listed as %q (deleted %v)", n.name, name, n.deleted)
		}
		if len(n.consumers) != 0 || n.producers != 0 || len(n.blocked) != 0 {
			return fmt.Errorf("node %q: %d consumers, %d producers, %d blocked with no connection open",
				name, len(n.consumers), n.producers, len(n.blocked))
		}
		for _, c := range n.detached {
			if !c.gone || c.dur == nil || b.durables[c.dur.key] != c.dur || c.dur.c != c || c.n != n {
				return fmt.Errorf("node %q: a detached consumer the broker does not keep", name)
			}
			if len(c.resume) != 0 || c.unacked.len() != 0 {
				return fmt.Errorf("node %q: a detached consumer with %d to resume, %d unacked", name, len(c.resume), c.unacked.len())
			}
		}
		if n.fanout {
			if n.q.len() != 0 || n.q.unsettled != 0 || n.q.bytes != 0 {
				return fmt.Errorf("fan-out node %q holds messages itself", name)
			}
			for _, c := range n.detached {
				if c.own == nil || c.q != c.own {
					return fmt.Errorf("fan-out node %q: a subscription with no queue of its own", name)
				}
				if err := checkQueue(n, c.own, []*consumer{c}); err != nil {
					return err
				}
			}
		} else {
			for _, c := range n.detached {
				if c.q != &n.q {
					return fmt.Errorf("queue node %q: a consumer of another queue", name)
				}
			}
			if err := checkQueue(n, &n.q, n.detached); err != nil {
				return err
			}
			if s := b.statsLocked(n, time.Now()); uint64(s.Depth+s.Unsettled+s.Scheduled)+s.Expired > s.Enqueued ||
				s.Delivered-s.Redelivered+s.Expired > s.Enqueued || s.Redelivered > s.Delivered {
				return fmt.Errorf("queue node %q: %d waiting, %d unsettled, %d scheduled and %d expired of %d stored, %d sent, %d of them again",
					name, s.Depth, s.Unsettled, s.Scheduled, s.Expired, s.Enqueued, s.Delivered, s.Redelivered)
			}
		}
		if c := n.c; c.acked+c.rejected+c.released+c.modified > c.delivered {
			return fmt.Errorf("node %q: %d outcomes of %d deliveries", name, c.acked+c.rejected+c.released+c.modified, c.delivered)
		}
		// A message is dead-lettered for its rejection, its expiry or a
		// failed delivery (a modified outcome, or a consumer gone).
		if c := n.c; c.deadLettered > c.rejected+c.expired+c.delivered {
			return fmt.Errorf("node %q: %d dead-lettered, %d rejected, %d expired, %d delivered", name, c.deadLettered, c.rejected, c.expired, c.delivered)
		}
		if b.opts.DeadLetterAddress == "" && b.opts.ExpiryAddress == "" && n.c.deadLettered != 0 {
			return fmt.Errorf("node %q: %d dead-lettered with no address", name, n.c.deadLettered)
		}
	}
	// Every message dead-lettered was stored on the dead-letter node
	// (while it stays: AutoDelete may remove it, and the nodes it came
	// from may have gone).
	if dl := b.nodes[b.opts.DeadLetterAddress]; dl != nil && !b.opts.AutoDelete && deadLettered > dl.c.enqueued {
		return fmt.Errorf("%d dead-lettered, %d stored on %q", deadLettered, dl.c.enqueued, dl.name)
	}
	for bf, k := range refs {
		if bf.refs != k {
			return fmt.Errorf("a buffer with %d references is held by %d messages", bf.refs, k)
		}
	}
	cached := 0
	free := map[*buffer]bool{}
	for _, fl := range b.pool.free {
		for _, bf := range fl {
			if free[bf] || refs[bf] > 0 || bf.refs != 0 {
				return fmt.Errorf("a free buffer held (twice free %v, by %d messages, %d references)", free[bf], refs[bf], bf.refs)
			}
			free[bf] = true
			cached += cap(bf.b)
		}
	}
	if cached != b.pool.cached {
		return fmt.Errorf("pool: %d bytes cached, %d counted", cached, b.pool.cached)
	}
	return nil
}

// heldBytes returns what the broker holds for its nodes and durable
// links, beside the pool's free lists (a constant bound, maxCached):
// each distinct message buffer, each queue's ring, the scheduled
// messages' heap, each durable link's
// state (a detached consumer's whole struct, its acquired messages, a
// producer's tags).
func (b *Broker) heldBytes() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	const msgSize = int64(unsafe.Sizeof(msg{})) // buffer pointer, seq, lifetime, flag
	seen := map[*buffer]bool{}
	var held int64
	buf := func(m msg) {
		if !seen[m.buf] {
			seen[m.buf] = true
			held += int64(cap(m.buf.b))
		}
	}
	ring := func(q *queue) {
		held += int64(q.r.slots()) * msgSize
		for i := range q.len() {
			buf(*q.r.at(i))
		}
	}
	for _, n := range b.nodes {
		held += int64(len(n.name))
		ring(&n.q)
		for _, c := range n.detached {
			held += int64(unsafe.Sizeof(*c)) + int64(unsafe.Sizeof(*c.dur))
			if c.own != nil {
				held += int64(unsafe.Sizeof(*c.own))
				ring(c.own)
			}
			held += int64(cap(c.acquired)) * msgSize
			for _, m := range c.acquired {
				buf(m)
			}
		}
	}
	held += int64(cap(b.sched)) * int64(unsafe.Sizeof(sched{}))
	for _, e := range b.sched {
		buf(e.m)
	}
	for k, d := range b.durables {
		held += int64(len(k.container)+len(k.name)) + int64(unsafe.Sizeof(*d))
		for _, u := range d.stored {
			held += int64(len(u.Tag) + len(u.State.Raw))
		}
	}
	return held
}

// FuzzBroker serves up to three connections, one after the other, each
// sending one of c1, c2, c3 (read bytes at a time, then ending its
// side: feedInput), to one broker (fuzzOptions(flags)); with flags&16,
// all at once (feedTogether), so that one may take over a durable link
// another still has attached. Nothing panics; every connection is done
// at the end of its input and nothing leaves a goroutine; after each
// (all), and after every durable link it kept is expired, checkQuiet
// holds (and then nothing is left acquired).
func FuzzBroker(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s.conns[0], s.conns[1], s.conns[2], s.read, s.flags)
	}
	f.Fuzz(func(t *testing.T, c1, c2, c3 []byte, read uint16, flags uint8) {
		base := runtime.NumGoroutine()
		b := newFuzzBroker(flags)
		if flags&16 != 0 {
			feedTogether(t, b, [][]byte{c1, c2, c3}, int(read%4096)+1)
			c1, c2, c3 = nil, nil, nil
			if err := b.checkQuiet(); err != nil {
				t.Fatalf("after the connections: %v", err)
			}
			if b.breach != nil {
				t.Fatal(b.breach)
			}
		}
		for i, in := range [][]byte{c1, c2, c3} {
			if len(in) == 0 {
				continue
			}
			feedInput(t, b, in, int(read%4096)+1)
			if err := b.checkQuiet(); err != nil {
				t.Fatalf("after connection %d: %v", i+1, err)
			}
			if b.breach != nil {
				t.Fatal(b.breach)
			}
		}
		b.expireAll()
		if err := b.checkQuiet(); err != nil {
			t.Fatalf("after expiry: %v", err)
		}
		if _, kept := b.DurableLinks(); kept != 0 {
			t.Fatalf("%d durable links kept after expiry", kept)
		}
		for _, s := range b.Queues() {
			if s.Unsettled != 0 || s.Detached != 0 {
				t.Fatalf("after expiry, node %q: %d unsettled, %d detached", s.Name, s.Unsettled, s.Detached)
			}
		}
		b.Close()
		noGoroutines(t, base)
	})
}

// ---- seeds: conversations of an engine client with the broker ----

// seed is a FuzzBroker input.
type seed struct {
	name  string
	conns [3][]byte
	read  uint16
	flags uint8
}

// seedClient is the client's Handler while recording: it keeps the links
// by name, what they received, the transactions declared.
type seedClient struct {
	engine.NopHandler
	s        *engine.Session
	links    map[string]*engine.Link
	got      map[string][]engine.Delivery
	declared [][]byte
}

func (h *seedClient) OnConnectionOpen(c *engine.Conn) { h.s, _ = c.Begin() }

func (h *seedClient) OnLinkAttach(l *engine.Link) { h.links[string(l.Name())] = l }

func (h *seedClient) OnDelivery(l *engine.Link, d engine.Delivery) {
	d.Payload = nil // a view, valid only here
	h.got[string(l.Name())] = append(h.got[string(l.Name())], d)
}

func (h *seedClient) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	if d.State.Descriptor == amqpsax.DescriptorDeclared {
		h.declared = append(h.declared, append([]byte(nil), d.TxnID...))
	}
}

// recording is one connection of an engine client to the broker, both
// ends in memory: the broker's end is an engine server with the broker's
// handler and a Driver that is not run, the client's an engine client;
// step moves
// bytes until neither end has more, recording the client's.
type recording struct {
	t   testing.TB
	b   *Broker
	h   *seedClient
	cli *engine.Conn
	srv *engine.Conn
	raw *memConn // the broker's network side: what the client wrote
	rec []byte
	now time.Time
}

func record(t testing.TB, b *Broker, container string, manualSettle bool) *recording {
	return recordAs(t, b, engine.Config{ContainerID: container, ManualSettle: manualSettle, NoSASL: true})
}

// recordAs records a client of configuration cfg (SASL, when it asks).
func recordAs(t testing.TB, b *Broker, cfg engine.Config) *recording {
	r := &recording{t: t, b: b, h: &seedClient{links: map[string]*engine.Link{}, got: map[string][]engine.Delivery{}},
		now: time.Unix(1e9, 0)}
	r.raw = newMemConn(nil, 0, false)
	r.srv = engine.NewServer(b.cfg, handler{b})
	driver.NewDriver(r.raw, r.srv) // for the handler's Driver; never run
	cfg.MaxFrameSize = 4096
	r.cli = engine.NewClient(cfg, r.h)
	r.step()
	return r
}

// step moves bytes between the two ends until both are quiet, servicing
// the broker's connection as its Driver's wake-ups would (woken); when
// the broker closed the connection (a durable link taken over), its
// read fails.
func (r *recording) step() {
	buf := make([]byte, 8192)
	for range 1000 {
		moved := false
		if out := r.cli.Output(); len(out) > 0 {
			r.rec = append(r.rec, out...)
			r.raw.feed(out)
			r.cli.Written(len(out))
			moved = true
		}
		for {
			n, err := r.raw.Read(buf)
			if err != nil { // closed by the broker: a durable link taken over
				require.ErrorIs(r.t, err, net.ErrClosed)
				if !r.srv.Closed() {
					r.srv.ReadFailed(err)
				}
				break
			}
			if n == 0 {
				break
			}
			r.srv.Feed(buf[:n], r.now)
		}
		if !r.srv.Done() {
			woken(r.b, r.srv)
		}
		if out := r.srv.Output(); len(out) > 0 {
			b := append([]byte(nil), out...)
			r.srv.Written(len(out))
			r.cli.Feed(b, r.now)
			moved = true
		}
		if !moved {
			return
		}
	}
	r.t.Fatal("the recorded conversation does not settle")
}

func (r *recording) link(name string) *engine.Link {
	l := r.h.links[name]
	require.NotNil(r.t, l, "link %q", name)
	return l
}

func (r *recording) attach(sender bool, o engine.LinkOptions) *engine.Link {
	var err error
	if sender {
		_, err = r.h.s.AttachSender(o)
	} else {
		_, err = r.h.s.AttachReceiver(o)
	}
	require.NoError(r.t, err)
	r.step()
	return r.link(o.Name)
}

func (r *recording) send(l *engine.Link, to string, n int, prefix string) {
	for i := range n {
		_, err := l.Send([]byte(fmt.Sprintf("%s%d", prefix, i)), routed(to, 8+i), l.SndSettleMode() == frame.SndSettled)
		require.NoError(r.t, err)
	}
	r.step()
}

// close closes the connection (or, when lost, leaves it to the end of
// the recording: the broker sees the bytes end) and returns what the
// client wrote; the broker's end is told its input ended.
func (r *recording) close(lost bool) []byte {
	if !lost {
		r.cli.Close(nil)
		r.step()
	}
	r.srv.ReadFailed(io.EOF)
	r.step()
	return r.rec
}

// fuzzSeeds records the conversations FuzzBroker starts from, each on a
// broker of its own with the fuzz target's options.
func fuzzSeeds(t testing.TB) []seed {
	var out []seed
	add := func(name string, read uint16, flags uint8, run func(b *Broker) [3][]byte) {
		b := newFuzzBroker(flags)
		out = append(out, seed{name: name, conns: run(b), read: read, flags: flags})
	}
	add("queue", 4095, 0, func(b *Broker) [3][]byte {
		r := record(t, b, "queue", false)
		p := r.attach(true, engine.LinkOptions{Name: "p", Address: "q", Unsettled: true})
		c := r.attach(false, engine.LinkOptions{Name: "c", Address: "q", Credit: 10})
		r.send(p, "q", 5, "m")
		for i, d := range r.h.got["c"] {
			switch i % 5 {
			case 0, 1:
				d.Accept()
			case 2:
				d.Reject(nil)
			case 3:
				d.Release()
			case 4:
				d.Modify(true, false)
			}
		}
		r.step()
		c.Detach(nil)
		p.Detach(nil)
		r.step()
		return [3][]byte{r.close(false)}
	})
	add("fanout", 7, 1, func(b *Broker) [3][]byte {
		r := record(t, b, "fanout", false)
		r.attach(false, engine.LinkOptions{Name: "s1", Address: "topic/t", Credit: 5, AutoAccept: true})
		r.attach(false, engine.LinkOptions{Name: "s2", Address: "topic/t", Credit: 5, AutoAccept: true})
		r.attach(false, engine.LinkOptions{Name: "s3", Source: &frame.Source{Address: []byte("news"),
			DistributionMode: []byte("copy")}, Credit: 2})
		p := r.attach(true, engine.LinkOptions{Name: "p", Address: "topic/t"})
		r.send(p, "topic/t", 4, "t")
		n := r.attach(true, engine.LinkOptions{Name: "pn", Address: "news", Presettled: true})
		r.send(n, "news", 3, "n")
		for _, d := range r.h.got["s3"] {
			d.Modify(true, true)
		}
		r.step()
		return [3][]byte{r.close(false)}
	})
	add("dynamic", 100, 0, func(b *Broker) [3][]byte {
		r := record(t, b, "dynamic", false)
		reply := r.attach(false, engine.LinkOptions{Name: "reply", Source: &frame.Source{Dynamic: true}, Credit: 5})
		addr := string(reply.RemoteSource().Address)
		require.NotEmpty(t, addr, "a dynamic address")
		p := r.attach(true, engine.LinkOptions{Name: "p", Address: addr})
		r.send(p, addr, 3, "r")
		for _, d := range r.h.got["reply"] {
			d.Accept()
		}
		dt := r.attach(true, engine.LinkOptions{Name: "dt", Target: &frame.Target{Dynamic: true}})
		r.send(dt, "elsewhere", 1, "d")
		reply.Detach(nil)
		r.step()
		return [3][]byte{r.close(false)}
	})
	add("txn", 64, 0, func(b *Broker) [3][]byte {
		r := record(t, b, "txn", false)
		_, err := r.h.s.AttachCoordinator(engine.LinkOptions{Name: "ctrl"})
		require.NoError(t, err)
		r.step()
		ctrl := r.link("ctrl")
		p := r.attach(true, engine.LinkOptions{Name: "p", Address: "tq", Unsettled: true})
		declare := func() []byte {
			_, err := ctrl.Declare()
			require.NoError(t, err)
			r.step()
			require.NotEmpty(t, r.h.declared)
			return r.h.declared[len(r.h.declared)-1]
		}
		for _, fail := range []bool{false, true} {
			id := declare()
			for i := range 3 {
				_, err := p.SendTxn(id, nil, routed("tq", 8+i), false)
				require.NoError(t, err)
			}
			r.step()
			ctrl.Discharge(id, fail)
			r.step()
		}
		c := r.attach(false, engine.LinkOptions{Name: "c", Address: "tq", Credit: 10})
		for _, fail := range []bool{true, false} {
			id := declare()
			for i, d := range r.h.got["c"] {
				if i%2 == 0 {
					d.AcceptTxn(id)
				} else {
					c.DisposeTxn(d.DeliveryID, id, engine.Released, false)
				}
			}
			r.h.got["c"] = nil
			r.step()
			ctrl.Discharge(id, fail)
			r.step()
		}
		declare() // left open: rolled back at the end
		return [3][]byte{r.close(false)}
	})
	add("filters", 4095, 0, func(b *Broker) [3][]byte {
		r := record(t, b, "filters", false)
		var sel, nl, bad frame.SymbolMap
		sel.Selector("k = 'v' AND to LIKE 'q%'").Described("xq", 0x0000468C00000099, encode.AppendString(nil, "//a"))
		nl.Described("nl", 0x0000468C00000003, encode.AppendCodeList0(nil))
		bad.Selector("k = ")
		r.attach(false, engine.LinkOptions{Name: "sel", Source: &frame.Source{Address: []byte("q"), Filter: sel.Map()}, Credit: 3})
		r.attach(false, engine.LinkOptions{Name: "bad", Source: &frame.Source{Address: []byte("q"), Filter: bad.Map()}, Credit: 3})
		r.attach(false, engine.LinkOptions{Name: "nl", Source: &frame.Source{Address: []byte("topic/f"), Filter: nl.Map()}, Credit: 3})
		p := r.attach(true, engine.LinkOptions{Name: "p", Address: "q", Unsettled: true})
		r.send(p, "q", 4, "f")
		r.attach(false, engine.LinkOptions{Name: "browse", Source: &frame.Source{Address: []byte("q"), DistributionMode: []byte("copy")}, Credit: 10})
		caps := frame.Symbols(frame.AppendSymbols(nil, "shared", "global"))
		r.attach(false, engine.LinkOptions{Name: "sub", Source: &frame.Source{Address: []byte("topic/f"), Capabilities: caps}, Credit: 2})
		r.attach(false, engine.LinkOptions{Name: "sub|2", Source: &frame.Source{Address: []byte("topic/f"), Capabilities: caps}, Credit: 2})
		pub := r.attach(true, engine.LinkOptions{Name: "pt", Address: "topic/f"})
		r.send(pub, "topic/f", 3, "s")
		for _, d := range r.h.got["browse"] {
			d.Accept()
		}
		for _, d := range r.h.got["sub"] {
			d.Release()
		}
		r.step()
		return [3][]byte{r.close(false)}
	})
	add("relay", 4095, 4, func(b *Broker) [3][]byte {
		r := recordAs(t, b, engine.Config{ContainerID: "relay", Username: "alice", Password: "pw"})
		relay := r.attach(true, engine.LinkOptions{Name: "relay", Unsettled: true})
		for i, to := range []string{"q1", "q2", "", "q1", "secret"} {
			var m []byte
			if to != "" {
				m, _ = message.AppendProperties(nil, message.Properties{To: []byte(to)})
			}
			m = encode.AppendBinary(append(m, 0x00, 0x53, 0x75), []byte("relayed"))
			_, err := relay.Send([]byte(fmt.Sprint("r", i)), m, false)
			require.NoError(t, err)
		}
		r.step()
		relay.Detach(nil)
		r.step()
		return [3][]byte{r.close(false)}
	})
	durTarget := &frame.Target{Address: []byte("dq"), Durable: frame.DurabilityUnsettledState, ExpiryPolicy: frame.ExpiryNever}
	add("durable producer", 4095, 0, func(b *Broker) [3][]byte {
		var conns [3][]byte
		r := record(t, b, "dp", true)
		p := r.attach(true, engine.LinkOptions{Name: "dp", Target: durTarget, Unsettled: true, RcvSecond: true})
		r.send(p, "dq", 4, "d")
		p.DetachOnly(nil)
		r.step()
		resume := p.Unsettled()
		conns[0] = r.close(false)
		r = record(t, b, "dp", true)
		p = r.attach(true, engine.LinkOptions{Name: "dp", Target: durTarget, Unsettled: true, RcvSecond: true,
			Resume: resume})
		for _, u := range resume {
			if st, ok := p.RemoteUnsettled(u.Tag); ok && st.Type != frame.StateNone {
				p.SendResume(u.Tag, nil, true)
			} else if ok {
				p.SendResume(u.Tag, routed("dq", 20), false)
			} else {
				p.Send(u.Tag, routed("dq", 21), false)
			}
		}
		r.send(p, "dq", 2, "e")
		conns[1] = r.close(true) // lost: kept again
		r = record(t, b, "dp", false)
		p = r.attach(true, engine.LinkOptions{Name: "dp", Target: durTarget, Unsettled: true, RcvSecond: true})
		p.Detach(nil) // closed: the state goes
		r.step()
		conns[2] = r.close(false)
		return conns
	})
	durSource := func(addr string, d frame.TerminusDurability, p frame.ExpiryPolicy) *frame.Source {
		return &frame.Source{Address: []byte(addr), Durable: d, ExpiryPolicy: p}
	}
	add("durable subscription", 4095, 0, func(b *Broker) [3][]byte {
		var conns [3][]byte
		src := durSource("topic/d", frame.DurabilityUnsettledState, frame.ExpiryNever)
		r := record(t, b, "ds", false)
		sub := r.attach(false, engine.LinkOptions{Name: "sub", Source: src, Credit: 10})
		p := r.attach(true, engine.LinkOptions{Name: "p", Address: "topic/d"})
		r.send(p, "topic/d", 6, "s")
		for i, d := range r.h.got["sub"] {
			switch i {
			case 0, 1:
				d.Accept()
			case 2:
				sub.Dispose(d.DeliveryID, engine.Accepted, false) // an outcome, unsettled
			}
		}
		r.step()
		sub.DetachOnly(nil)
		r.step()
		resume := sub.Unsettled()
		r.send(p, "topic/d", 4, "k") // kept for the subscription
		conns[0] = r.close(false)
		r = record(t, b, "ds", false)
		sub = r.attach(false, engine.LinkOptions{Name: "sub", Source: src, Credit: 20, Resume: resume})
		r.step()
		for _, d := range r.h.got["sub"] {
			if !d.Settled {
				d.Accept()
			}
		}
		r.step()
		sub.DetachOnly(nil)
		r.step()
		conns[1] = r.close(true)
		r = record(t, b, "ds", false)
		qs := r.attach(false, engine.LinkOptions{Name: "qsub", Source: durSource("dq2", frame.DurabilityConfiguration,
			frame.ExpiryLinkDetach), Credit: 3})
		qp := r.attach(true, engine.LinkOptions{Name: "qp", Address: "dq2"})
		r.send(qp, "dq2", 3, "c")
		qs.DetachOnly(nil)
		r.step()
		r.attach(false, engine.LinkOptions{Name: "sub", Source: src, Credit: 20, Resume: resume})
		conns[2] = r.close(true)
		return conns
	})
	add("durable takeover", 4095, 16, func(b *Broker) [3][]byte {
		src := durSource("topic/o", frame.DurabilityUnsettledState, frame.ExpiryNever)
		old := record(t, b, "takeover", false)
		sub := old.attach(false, engine.LinkOptions{Name: "sub", Source: src, Credit: 10})
		p := old.attach(true, engine.LinkOptions{Name: "p", Address: "topic/o"})
		old.send(p, "topic/o", 4, "o")
		for _, d := range old.h.got["sub"][:2] {
			d.Accept()
		}
		old.step()
		resume := sub.Unsettled() // 2 left unsettled, the link still attached
		// The same container again, on a new connection, while the old
		// one has not ended: the broker closes the old one and holds the
		// answer; the new connection goes on meanwhile.
		r := record(t, b, "takeover", false)
		_, err := r.h.s.AttachReceiver(engine.LinkOptions{Name: "sub", Source: src, Credit: 10, Resume: resume})
		require.NoError(t, err)
		r.step()
		require.Nil(t, r.h.links["sub"], "answered while the old link is attached")
		q := r.attach(true, engine.LinkOptions{Name: "q", Address: "oq", Unsettled: true})
		r.send(q, "oq", 2, "q")
		require.True(t, old.raw.closed, "the old connection closed by the broker")
		old.step() // its read fails: it ends, its link's state goes to the held attach
		r.step()
		l := r.link("sub")
		require.Equal(t, 2, l.RemoteAttach().Unsettled.Len(), "the state the old link left")
		for _, d := range r.h.got["sub"] {
			if !d.Settled {
				d.Accept()
			}
		}
		r.step()
		return [3][]byte{old.rec, r.close(true)} // lost: open until its input ends, after the old one
	})
	add("shared filters", 4095, 0, func(b *Broker) [3][]byte {
		r := record(t, b, "shared", false)
		var kv, to frame.SymbolMap
		kv.Selector("k = 'v'")
		to.Selector("to LIKE 'topic/%'")
		caps := frame.Symbols(frame.AppendSymbols(nil, "shared"))
		shared := func(name string, filter frame.Map, durable bool) *engine.Link {
			src := &frame.Source{Address: []byte("topic/s"), Capabilities: caps, Filter: filter}
			if durable {
				src.Durable, src.ExpiryPolicy = frame.DurabilityConfiguration, frame.ExpiryNever
			}
			return r.attach(false, engine.LinkOptions{Name: name, Source: src, Credit: 4})
		}
		shared("sub", kv.Map(), false)
		for _, l := range []*engine.Link{shared("sub|2", to.Map(), false), shared("sub|3", nil, false)} {
			require.NotNil(t, l.Err(), "other filters (or none): refused")
			require.Equal(t, frame.CondPreconditionFailed, l.Err().Condition)
		}
		shared("sub|4", kv.Map(), false)
		kept := shared("dsub", kv.Map(), true)
		kept.DetachOnly(nil)
		r.step()
		p := r.attach(true, engine.LinkOptions{Name: "p", Address: "topic/s"})
		r.send(p, "topic/s", 3, "s") // k = 'v': to both subscriptions, kept for dsub
		bare, _ := message.AppendProperties(nil, message.Properties{To: []byte("topic/s")})
		_, err := p.Send([]byte("bare"), encode.AppendBinary(append(bare, 0x00, 0x53, 0x75), []byte("no k")), false)
		require.NoError(t, err)
		r.step()
		shared("dsub|2", to.Map(), true) // replaces the kept one
		for _, n := range []string{"sub", "sub|4", "dsub|2"} {
			for _, d := range r.h.got[n] {
				d.Accept()
			}
		}
		r.step()
		return [3][]byte{r.close(false)}
	})
	add("limits", 512, 0, func(b *Broker) [3][]byte {
		var conns [3][]byte
		r := record(t, b, "limits", false)
		p := r.attach(true, engine.LinkOptions{Name: "p", Address: "full", Presettled: true})
		r.send(p, "full", int(p.Credit()), "f") // to the queue's bound: the producer waits
		r.send(p, "full", int(p.Credit()), "g")
		c := r.attach(false, engine.LinkOptions{Name: "c", Address: "full", Credit: 40, AutoAccept: true})
		r.step() // drained: the producer has credit again
		r.send(p, "full", int(p.Credit()), "h")
		c.Detach(nil)
		for i, policy := range []frame.ExpiryPolicy{frame.ExpiryLinkDetach, frame.ExpirySessionEnd, frame.ExpiryNever,
			frame.ExpiryConnectionClose} { // past MaxDurableLinks: the oldest goes
			l := r.attach(false, engine.LinkOptions{Name: fmt.Sprint("sub", i),
				Source: durSource("topic/l", frame.DurabilityUnsettledState, policy), Credit: 1})
			l.DetachOnly(nil)
			r.step()
		}
		s, err := r.cli.Begin() // a session of its own, ended with its durable link detached
		require.NoError(t, err)
		r.step()
		main := r.h.s
		r.h.s = s
		l := r.attach(false, engine.LinkOptions{Name: "sess", Source: durSource("topic/l", frame.DurabilityUnsettledState,
			frame.ExpirySessionEnd), Credit: 1})
		l.DetachOnly(nil)
		r.step()
		s.End(nil)
		r.step()
		r.h.s = main
		conns[0] = r.close(false)
		return conns
	})
	add("reject when full", 4095, 2, func(b *Broker) [3][]byte {
		r := record(t, b, "reject", false)
		p := r.attach(true, engine.LinkOptions{Name: "p", Address: "rq", Unsettled: true})
		for range 3 {
			r.send(p, "rq", int(p.Credit()), "x")
		}
		return [3][]byte{r.close(false)}
	})
	add("lifetime", 4095, 8, func(b *Broker) [3][]byte {
		r := record(t, b, "lifetime", false)
		p := r.attach(true, engine.LinkOptions{Name: "p", Address: "lq", Unsettled: true})
		for i, m := range lifetimeMessages("lq") {
			if p.Credit() == 0 {
				r.step()
			}
			_, err := p.Send([]byte{byte(i)}, m, false)
			require.NoError(t, err)
		}
		r.step()
		c := r.attach(false, engine.LinkOptions{Name: "c", Address: "lq", Credit: 16})
		for round := range 3 {
			for i, d := range r.h.got["c"] {
				switch i % 3 {
				case 0:
					d.Reject(engine.NewError(frame.CondNotAllowed, "no"))
				case 1:
					d.Modify(true, false)
				default:
					if round == 2 {
						d.Accept()
					} else {
						d.Modify(true, false)
					}
				}
			}
			r.h.got["c"] = nil
			r.step()
		}
		st, _ := b.Queue("lq")
		require.NotZero(t, st.Expired, "the short ttl expired")
		require.NotZero(t, st.DeadLettered)
		require.NotZero(t, st.Scheduled, "the far one is still held")
		c.Detach(nil)
		return [3][]byte{r.close(false)}
	})
	add("permissions", 4095, 4, func(b *Broker) [3][]byte {
		alice := recordAs(t, b, engine.Config{ContainerID: "alice", Username: "alice", Password: "pw"})
		p := alice.attach(true, engine.LinkOptions{Name: "p", Address: "secret", Unsettled: true})
		alice.send(p, "secret", 3, "s")
		c := alice.attach(false, engine.LinkOptions{Name: "c", Address: "secret", Credit: 1, AutoAccept: true})
		alice.attach(false, engine.LinkOptions{Name: "d", Source: &frame.Source{Address: []byte("secret"),
			Durable: frame.DurabilityConfiguration, ExpiryPolicy: frame.ExpiryNever}})
		require.Len(t, alice.h.got["c"], 3)
		c.Detach(nil)
		anon := recordAs(t, b, engine.Config{ContainerID: "alice"})
		spy := anon.attach(false, engine.LinkOptions{Name: "spy", Address: "secret", Credit: 10})
		require.Empty(t, spy.RemoteSource().Address, "refused")
		same := anon.attach(false, engine.LinkOptions{Name: "d", Source: &frame.Source{Address: []byte("secret"),
			Durable: frame.DurabilityConfiguration, ExpiryPolicy: frame.ExpiryNever}, Credit: 10})
		require.Empty(t, same.RemoteSource().Address, "alice's durable name is not anonymous's")
		q := anon.attach(true, engine.LinkOptions{Name: "q", Address: "q", Unsettled: true})
		anon.send(q, "secret", 2, "r") // routed: write is allowed
		require.Empty(t, anon.h.got["spy"])
		return [3][]byte{alice.close(false), anon.close(false)}
	})
	return out
}

// lifetimeMessages are messages to address to with a header (priority,
// a ttl of 0.1 s, 10 s or none) or message annotations (a delivery
// delay of 0.2 s or an hour, a delivery time, a scheduled-enqueue-time):
// for the seed of message lifetimes.
func lifetimeMessages(to string) [][]byte {
	var out [][]byte
	for i := range 12 {
		var m []byte
		h := message.Header{Priority: uint8(i * 3 % 11)}
		switch i % 3 {
		case 0:
			h.TTL, h.HasTTL = 100, true
		case 1:
			h.TTL, h.HasTTL = 10_000, true
		}
		m = message.AppendHeader(m, h)
		var ann []byte
		switch i % 4 {
		case 1:
			ann = encode.AppendLong(encode.AppendSymbol(ann, AnnotationDeliveryDelay), 200)
		case 2:
			ann = encode.AppendLong(encode.AppendSymbol(ann, AnnotationDeliveryDelay), 3_600_000)
		case 3:
			ann = encode.AppendTimestamp(encode.AppendSymbol(ann, AnnotationScheduledEnqueueTime), 1e12+300)
		}
		if ann != nil {
			m = append(m, 0x00, 0x53, 0x72, 0xc1, byte(1+len(ann)), 2)
			m = append(m, ann...)
		}
		out = append(out, append(m, routed(to, 8+i)...))
	}
	return out
}

// TestFuzzSeeds: the recorded conversations reach what they are for
// (messages stored, delivered, kept for durable links, committed), and
// each passes FuzzBroker's checks.
func TestFuzzSeeds(t *testing.T) {
	for _, s := range fuzzSeeds(t) {
		for _, viaDriver := range []bool{true, false} {
			if viaDriver && s.flags&16 != 0 {
				continue // connections at once: FuzzBroker's feedTogether only
			}
			t.Run(fmt.Sprintf("%s/driver=%v", strings.ReplaceAll(s.name, " ", "_"), viaDriver), func(t *testing.T) {
				seedRun(t, s, viaDriver)
			})
		}
	}
}

// seedRun serves seed s (through the driver.Server, or feedInput; with
// flags&16 all its connections at once, feedTogether) and checks what it
// is recorded for.
func seedRun(t *testing.T, s seed, viaDriver bool) {
	base := runtime.NumGoroutine()
	b := newFuzzBroker(s.flags)
	conns := s.conns
	if s.flags&16 != 0 {
		feedTogether(t, b, conns[:], int(s.read%4096)+1)
		require.NoError(t, b.checkQuiet(), "after the connections")
		conns = [3][]byte{}
	}
	for i, in := range conns {
		if len(in) == 0 {
			continue
		}
		if viaDriver {
			serveInput(t, b, in, int(s.read%4096)+1)
		} else {
			feedInput(t, b, in, int(s.read%4096)+1)
		}
		require.NoError(t, b.checkQuiet(), "after connection %d", i+1)
	}
	q := func(name string) QueueStats {
		st, ok := b.Queue(name)
		require.True(t, ok, "node %q", name)
		return st
	}
	type counts struct{ enq, del, acc, rej, rel, mod, redel uint64 }
	of := func(st QueueStats) counts {
		return counts{st.Enqueued, st.Delivered, st.Accepted, st.Rejected, st.Released, st.Modified, st.Redelivered}
	}
	switch s.name {
	case "queue":
		require.Equal(t, counts{5, 7, 2, 1, 1, 1, 2}, of(q("q")))
	case "fanout": // removed (AutoDelete): what is left is what was routed elsewhere
		require.Empty(t, b.Queues())
	case "dynamic": // the reply queue went with its link
		require.Equal(t, []string{"elsewhere"}, []string{b.Queues()[0].Name})
		require.Len(t, b.Queues(), 1)
	case "txn": // 3 committed (3 rolled back); received 3, 2 released at a rollback
		require.Equal(t, counts{3, 7, 2, 0, 4, 0, 4}, of(q("tq")))
	case "durable producer": // 4, then 2 more, each stored once; closed at last
		require.Equal(t, uint64(6), q("dq").Enqueued)
	case "durable subscription": // 10 sent: 6 delivered, 3 resumed and 4 kept, each accepted once
		st := q("topic/d")
		require.Equal(t, counts{10, 13, 10, 0, 0, 0, 3}, of(st))
		require.Equal(t, 1, st.Detached)
		require.Equal(t, uint64(3), q("dq2").Delivered)
	case "limits":
		st := q("full") // past the bound, by the credit given before it filled and again once drained
		require.Greater(t, st.Enqueued, uint64(16))
		require.Equal(t, st.Enqueued, st.Delivered)
		// sub0 (link-detach, timeout 0) went at once; sub1 (session-end)
		// at the fifth detached, past MaxDurableLinks; sess with its
		// session; sub3 (connection-close) with the connection: sub2
		// (never) is left.
		require.Equal(t, 1, q("topic/l").Detached)
	case "reject when full":
		st := q("rq")
		require.Equal(t, 16, st.Depth)
		require.Positive(t, st.Refused)
	case "lifetime": // the clock moves as the broker reads it: counts, not exact ones
		st := q("lq")
		require.Equal(t, uint64(12), st.Enqueued)
		require.Positive(t, st.Expired)
		require.Positive(t, st.DeadLettered)
		require.Positive(t, st.Scheduled, "the one an hour ahead")
		require.Equal(t, st.DeadLettered, q("dlq").Enqueued)
	case "permissions":
		st := q("secret")
		require.Equal(t, uint64(5), st.Enqueued, "3 sent, 2 routed")
		require.Equal(t, 1, st.Detached, "alice's durable subscription")
		require.NoError(t, b.breach)
	case "filters": // the selective consumer took 4 (its credit kept up), left at its close; the
		// shared subscription was sent 3, 2 released and sent again; no-local left 3
		require.Equal(t, counts{4, 4, 0, 0, 0, 0, 0}, of(q("q")))
		st := q("topic/f")
		require.Equal(t, counts{3, 5, 0, 0, 2, 0, 2}, of(st))
		require.Equal(t, uint64(3), st.Filtered)
	case "durable takeover": // the new connection's attach held while the old one was open (it
		// sent the 4, 2 accepted), then answered with the 2 left, sent
		// again; kept with them when it ended; its other link stored 2
		// meanwhile
		st := q("topic/o")
		require.Equal(t, counts{4, 6, 2, 0, 0, 0, 2}, of(st))
		require.Equal(t, 2, st.Unsettled)
		require.Equal(t, 1, st.Detached)
		require.Equal(t, uint64(2), q("oq").Enqueued)
	case "shared filters": // 3 with k = 'v' to the subscription of sub and sub|4 (the receivers with
		// other filters, or none, refused), and kept for dsub, dropped
		// when dsub|2 replaced it; the one without k filtered by both
		st := q("topic/s")
		require.Equal(t, counts{4, 3, 3, 0, 0, 0, 0}, of(st))
		require.Equal(t, uint64(3), st.Dropped)
		require.Equal(t, uint64(2), st.Filtered)
	case "relay": // by to, one without a to rejected
		require.Equal(t, []uint64{2, 1, 1}, []uint64{q("q1").Enqueued, q("q2").Enqueued, q("secret").Enqueued})
		require.Len(t, b.Queues(), 3)
	default:
		t.Fatalf("no expectation for seed %q", s.name)
	}
	b.expireAll()
	require.NoError(t, b.checkQuiet())
	b.Close()
	noGoroutines(t, base)
}

// budgetInput records a client that leaves n of something on the broker
// (opts) when its connection ends: what: "queue", n messages on a
// queue; "scheduled", n messages scheduled an hour ahead; "producer", n
// messages a durable producer stored and had not
// settled when it detached; "subscriptions", n durable subscriptions to
// a fan-out address detached, then n messages sent to it.
func budgetInput(t testing.TB, opts Options, what string, n int) []byte {
	b := New(opts)
	r := record(t, b, "budget", what == "producer")
	switch what {
	case "queue":
		p := r.attach(true, engine.LinkOptions{Name: "p", Address: "q"})
		for range n {
			_, err := p.Send(nil, routed("q", 8), p.SndSettleMode() == frame.SndSettled)
			require.NoError(t, err)
			r.step()
		}
	case "scheduled":
		ann := encode.AppendLong(encode.AppendSymbol(nil, AnnotationDeliveryDelay), 3_600_000)
		m := append([]byte{0x00, 0x53, 0x72, 0xc1, byte(1 + len(ann)), 2}, ann...)
		m = append(m, routed("q", 8)...)
		p := r.attach(true, engine.LinkOptions{Name: "p", Address: "q"})
		for range n {
			_, err := p.Send(nil, m, p.SndSettleMode() == frame.SndSettled)
			require.NoError(t, err)
			r.step()
		}
	case "producer":
		p := r.attach(true, engine.LinkOptions{Name: "dp", Target: &frame.Target{Address: []byte("dq"),
			Durable: frame.DurabilityUnsettledState, ExpiryPolicy: frame.ExpiryNever}, Unsettled: true, RcvSecond: true})
		for i := range n {
			_, err := p.Send(fmt.Appendf(nil, "t%d", i), routed("dq", 8), false)
			require.NoError(t, err)
			r.step()
		}
		p.DetachOnly(nil)
	case "subscriptions":
		for i := range n {
			l := r.attach(false, engine.LinkOptions{Name: fmt.Sprintf("s%d", i), Source: &frame.Source{
				Address: []byte("topic/b"), Durable: frame.DurabilityUnsettledState, ExpiryPolicy: frame.ExpiryNever}})
			l.DetachOnly(nil)
			r.step()
		}
		p := r.attach(true, engine.LinkOptions{Name: "p", Address: "topic/b"})
		for range n {
			_, err := p.Send(nil, routed("topic/b", 8), p.SndSettleMode() == frame.SndSettled)
			require.NoError(t, err)
			r.step()
		}
	}
	r.step()
	return r.close(true)
}

// TestMemoryBudget: what a connection leaves on the broker once it has
// ended (heldBytes: messages, queues, durable links' state) is at most a
// constant times the bytes it sent, and doubling what it sends at most
// doubles it (with some slack for rings' powers of two), for each
// adversarial input of budgetInput at two sizes. The constant is a
// detached durable consumer's struct (about 2 KB, its send batch
// included) against the 140 bytes of an attach and a detach. The copies
// a fan-out node makes for detached subscriptions are bounded all
// together (keptFullLocked): n subscriptions and n messages would
// otherwise keep n*n, quadratic in the input.
func TestMemoryBudget(t *testing.T) {
	opts := Options{FanoutPrefixes: []string{"topic/"}, MaxMessages: 1000, MaxBytes: 1 << 20}
	for _, what := range []string{"queue", "scheduled", "producer", "subscriptions"} {
		var held [2]int64
		var size [2]int
		for i, n := range []int{100, 200} {
			in := budgetInput(t, opts, what, n)
			b := New(opts)
			serveInput(t, b, in, 4096)
			require.NoError(t, b.checkQuiet())
			if what == "scheduled" {
				st, _ := b.Queue("q")
				require.Equal(t, n, st.Scheduled)
			}
			held[i], size[i] = b.heldBytes(), len(in)
			b.Close()
		}
		t.Logf("%s: %d bytes in, %d held; %d in, %d held", what, size[0], held[0], size[1], held[1])
		require.LessOrEqual(t, held[1], 24*int64(size[1]), "%s: held at most 24 times the input", what)
		require.LessOrEqual(t, held[1], 2*held[0]+2048, "%s: doubling the input at most doubles what is held", what)
	}
}
