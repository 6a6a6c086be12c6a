package client

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/amqpsax/amqpsax/driver"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// linkCore is the life of a link of the client, which Sender, Receiver,
// the coordinator link of transactions (txnCtl) and the Requester's
// links embed: one attach and one wait for the peer's answer, one place
// the engine's events on the link land (linkEvents, in the engine
// link's Context), one detach and close, one Err, and a Waker that runs
// the link's work on the connection's goroutine.
type linkCore struct {
	s        *Session
	ev       linkEvents // the link that embeds it
	lo       engine.LinkOptions
	attachFn func(*engine.Session, engine.LinkOptions) (*engine.Link, error)
	// again: attached again on a connection dialled again (the
	// coordinator link is not: a transaction does not survive a loss).
	again bool
	// reattach, when set, gives the options of an attach again (a
	// resumable link's unsettled map).
	reattach func() engine.LinkOptions

	l     *engine.Link // the connection's goroutine; under mu for others
	g     *gen         // the connection of the last attach
	waker atomic.Pointer[driver.Waker]

	attachedCh chan struct{}
	suspect    atomic.Bool   // the peer's answer named no address: a detach may follow
	done       chan struct{} // closed when the link has ended: err is set

	mu  sync.Mutex
	err error
	// the peer's answer (answered)
	dynAddr string     // the address of a dynamic node
	peer    peerFields // its properties and capabilities
}

// linkEvents is a link as the connection's goroutine sees it: the
// engine's events on it (each of the handler's methods is one call
// here) and the work its Waker runs.
type linkEvents interface {
	core() *linkCore
	// attached: the peer's answer came with a terminus.
	attached(l *engine.Link)
	// flowed: credit, the session window or output room may have
	// come (OnFlow, OnWritable).
	flowed()
	delivered(d engine.Delivery)
	disposed(d engine.DeliveryUpdate)
	// lost: the connection was lost and will be dialled again (only
	// for a link attached again); the link is no longer up.
	lost(err error)
	// ended: the link has ended; every call on it wakes with err. It
	// ends with c.endLink.
	ended(err error)
	// run is the Waker's function.
	run(ec *engine.Conn)
}

func (c *linkCore) init(s *Session, ev linkEvents, attach func(*engine.Session, engine.LinkOptions) (*engine.Link, error),
	lo engine.LinkOptions, role string) {
	c.s, c.ev, c.attachFn, c.lo, c.again = s, ev, attach, lo, true
	c.attachedCh, c.done = make(chan struct{}), make(chan struct{})
	if c.lo.Name == "" {
		// A name of its own, kept when it is attached again.
		c.lo.Name = linkName(s.c, role)
	}
}

func (c *linkCore) core() *linkCore { return c }

// The events a link does not take.
func (c *linkCore) delivered(engine.Delivery)      {}
func (c *linkCore) disposed(engine.DeliveryUpdate) {}
func (c *linkCore) lost(error)                     {}
func (c *linkCore) flowed()                        {}
func (c *linkCore) attached(*engine.Link)          {}
func (c *linkCore) run(*engine.Conn)               {}
func (c *linkCore) ended(err error)                { c.endLink(err) }

// attach attaches the link on the connection's goroutine.
func (c *linkCore) attach(ec *engine.Conn) error {
	if ec.Closed() {
		return errEnding
	}
	lo := c.lo
	if c.reattach != nil && c.s.es != nil {
		lo = c.reattach()
	}
	l, err := c.s.attachLink(ec, c.attachFn, lo)
	if err != nil {
		return err
	}
	l.Context = c.ev
	c.mu.Lock()
	c.l = l
	c.mu.Unlock()
	return nil
}

// on makes g the connection the link's work runs on.
func (c *linkCore) on(g *gen) {
	c.mu.Lock()
	c.g = g
	c.mu.Unlock()
	c.waker.Store(g.d.NewWaker(c.ev.run))
}

// open attaches the link and waits for the peer's answer (NewSender,
// NewReceiver), then adds it to its session's links.
func (c *linkCore) open(ctx context.Context) error {
	g, err := c.s.c.call(ctx, nil, c.attach)
	if err != nil {
		return err
	}
	c.on(g)
	if err := c.waitAttached(ctx, g); err != nil {
		return err
	}
	return c.s.register(g, c.ev)
}

// attachOn attaches the link again on g, a connection dialled again, and
// runs its work there (what was asked meanwhile).
func (c *linkCore) attachOn(ctx context.Context, g *gen) error {
	c.attachedCh = make(chan struct{})
	if _, err := c.s.c.call(ctx, g, c.attach); err != nil {
		return err
	}
	c.on(g)
	if err := c.waitAttached(ctx, g); err != nil {
		return err
	}
	c.kick()
	return nil
}

// refuseGrace is how long a link whose attach was answered with a
// terminus without an address waits for the detach that refuses it
// (Qpid Proton's python binding refuses so, its detach in a later
// write).
const refuseGrace = time.Second

// waitAttached waits for the link's attach on g, then for the connection
// to have handled what came with it (a detach in the same read refuses
// it), and, for an answer that named no address, for refuseGrace.
func (c *linkCore) waitAttached(ctx context.Context, g *gen) error {
	select {
	case <-c.attachedCh:
	case <-c.done:
		return c.Err()
	case <-g.ended:
		return c.s.c.lostOr(g)
	case <-ctx.Done():
		c.abandon()
		return ctxErr(ctx)
	}
	if _, err := c.s.c.call(ctx, g, func(*engine.Conn) error { return nil }); err != nil {
		c.abandon()
		return err
	}
	if c.suspect.Load() {
		t := time.NewTimer(refuseGrace)
		defer t.Stop()
		select {
		case <-c.done:
			return c.Err()
		case <-g.ended:
			return c.s.c.lostOr(g)
		case <-t.C:
		case <-ctx.Done():
			c.abandon()
			return ctxErr(ctx)
		}
	}
	select {
	case <-c.done:
		return c.Err()
	default:
		return nil
	}
}

// abandon detaches a link whose attach was given up.
func (c *linkCore) abandon() {
	c.mu.Lock()
	g := c.g
	c.mu.Unlock()
	if g != nil {
		g.d.Do(func(*engine.Conn) {
			if c.l != nil {
				c.l.Detach(nil)
			}
		})
	}
}

// kick runs the link's work on the connection's goroutine (coalesced:
// one run queued at a time). With no connection up (ended: its events
// ended the link; or being dialled again: attachOn runs it) it does
// nothing. It runs nothing on the caller's goroutine: events call it.
func (c *linkCore) kick() {
	if w := c.waker.Load(); w != nil {
		w.Wake()
	}
}

// kickNow is kick for a caller's goroutine that holds none of the
// client's locks and is about to wait for what the work brings (Send's
// outcome, a delivery the credit lets come, a settlement): when no
// goroutine holds the connection, the link's work runs and is written
// here (driver.Waker.WakeNow), sparing two goroutine hand-offs. Work
// nobody waits for (a disposition in receiver settle mode first) is
// kicked instead: queued, it is batched with the rest.
func (c *linkCore) kickNow() {
	if w := c.waker.Load(); w != nil {
		w.WakeNow()
	}
}

// onAttach is the peer's attach: a peer that refuses the link answers
// without a terminus, and detaches.
func (c *linkCore) onAttach(l *engine.Link) {
	a := l.RemoteAttach()
	var addr []byte
	var dynamic bool
	if l.IsSender() {
		t, ok := a.Target.Get()
		if !ok {
			return
		}
		addr, dynamic = t.Address, t.Dynamic
	} else {
		s, ok := a.Source.Get()
		if !ok {
			return
		}
		addr, dynamic = s.Address, s.Dynamic
	}
	c.suspect.Store(len(addr) == 0 && c.lo.Address != "" && !dynamic)
	c.ev.attached(l)
	close(c.attachedCh)
}

// onDetach is the link's end: lost with its connection, when that is
// dialled again, else ended.
func (c *linkCore) onDetach(l *engine.Link, e *engine.Error) {
	err := linkEndErr(e, l.Session(), ScopeLink)
	c.mu.Lock()
	current := c.l == l
	if current {
		c.l = nil
	}
	c.mu.Unlock()
	if c.again && l.Conn().Closed() && c.s.c.reconnecting() {
		if current {
			c.ev.lost(err)
		}
		return
	}
	c.ev.ended(err)
}

// endLink ends the link with err (unless it has ended) and returns the
// error it ended with; it is the last step of every link's ended.
func (c *linkCore) endLink(err error) error {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	err = c.err
	c.mu.Unlock()
	c.s.remove(c.ev)
	select {
	case <-c.done:
	default:
		close(c.done)
	}
	return err
}

// setErr records err as the link's end, unless it has one, and returns
// the one it has; with c.mu held.
func (c *linkCore) setErrLocked(err error) error {
	if c.err == nil {
		c.err = err
	}
	return c.err
}

// answered keeps what the peer's attach tells: the address of the node
// it made for a dynamic terminus. On the connection's goroutine.
func (c *linkCore) answered(l *engine.Link) {
	a := l.RemoteAttach()
	var addr []byte
	if t, ok := a.Target.Get(); ok && l.IsSender() && t.Dynamic {
		addr = t.Address
	} else if s, ok := a.Source.Get(); ok && !l.IsSender() && s.Dynamic {
		addr = s.Address
	}
	peer := peerOf(a.Properties, a.OfferedCapabilities, a.DesiredCapabilities)
	c.mu.Lock()
	if addr != nil {
		c.dynAddr = string(addr)
	}
	c.peer = peer
	c.mu.Unlock()
}

// peerFields is what the peer's attach said of itself.
func (c *linkCore) peerFields() peerFields {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peer
}

// address is the node's address: the one asked for, or the one the peer
// gave a dynamic node.
func (c *linkCore) address() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dynAddr != "" {
		return c.dynAddr
	}
	return c.lo.Address
}

// symbols encodes a field of symbols (nil for none).
func symbols(ss []string) frame.Symbols {
	if len(ss) == 0 {
		return nil
	}
	return frame.AppendSymbols(nil, ss...)
}

// Err returns why the link ended (ErrClosed after Close), or nil while it
// is attached.
func (c *linkCore) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// close detaches the link (closing it) and waits for it to end within
// ctx: nil after a clean detach, else the link's error.
func (c *linkCore) close(ctx context.Context) error {
	_, err := c.s.c.call(ctx, nil, func(*engine.Conn) error {
		if c.l != nil {
			c.l.Detach(nil)
		}
		return nil
	})
	if err != nil && err != ErrClosed {
		var e *Error
		if !errors.As(err, &e) {
			return err
		}
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return ctxErr(ctx)
	}
	if err := c.Err(); err != ErrClosed {
		return err
	}
	return nil
}

// linkEndErr is the error a link or session ended with: its own, else
// that of what ended under it — the session's, then the connection's,
// which the engine hands down (OnLinkDetach and OnSessionEnd carry the
// same *engine.Error, so the scope is told by identity) — else
// ErrClosed. A connection this end closed ended nothing in error.
func linkEndErr(e *engine.Error, es *engine.Session, scope Scope) error {
	ec := es.Conn()
	if ce := ec.Err(); ec.Closed() && ce != nil && (e == nil || e == ce) {
		if !ce.Remote && closingConn(es) {
			return ErrClosed
		}
		return fromEngine(ce, ScopeConn)
	}
	if se := es.Err(); scope == ScopeLink && se != nil && (e == nil || e == se) {
		return fromEngine(se, ScopeSession)
	}
	if e != nil {
		return fromEngine(e, scope)
	}
	return ErrClosed
}

// handler receives the engine's events on the connection's goroutine;
// a link's go to its linkEvents.
type handler struct {
	engine.NopHandler
	g *gen
}

func (h *handler) OnLinkAttach(l *engine.Link) {
	if x, ok := l.Context.(linkEvents); ok {
		x.core().onAttach(l)
		return
	}
	l.Detach(engine.NewError(frame.CondNotAllowed, "a client takes no links it did not attach"))
}

func (h *handler) OnLinkDetach(l *engine.Link, e *engine.Error) {
	if x, ok := l.Context.(linkEvents); ok {
		x.core().onDetach(l, e)
	}
}

func (h *handler) OnFlow(l *engine.Link) {
	if x, ok := l.Context.(linkEvents); ok {
		x.flowed()
	}
}

func (h *handler) OnDelivery(l *engine.Link, d engine.Delivery) {
	if x, ok := l.Context.(linkEvents); ok {
		x.delivered(d)
	}
}

func (h *handler) OnDisposition(l *engine.Link, d engine.DeliveryUpdate) {
	if x, ok := l.Context.(linkEvents); ok {
		x.disposed(d)
	}
}

// OnWritable resumes the links of the connection's sessions that wait
// for output room.
func (h *handler) OnWritable(ec *engine.Conn) {
	c := h.g.c
	c.mu.Lock()
	ss := c.sessions
	c.mu.Unlock()
	for _, s := range ss {
		s.mu.Lock()
		ls := s.links
		s.mu.Unlock()
		for _, x := range ls {
			if x.core().l != nil && x.core().l.Conn() == ec {
				x.flowed()
			}
		}
	}
}
