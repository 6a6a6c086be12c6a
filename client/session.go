package client

import (
	"context"
	"sync"

	"github.com/amqpsax/amqpsax/engine"
)

// SessionOptions sets up a session; nil or the zero value works.
type SessionOptions struct{}

// Session is a session of a connection (part 2 §2.5): links are attached
// on it. Every method is safe to call from any goroutine.
type Session struct {
	c    *Conn
	opts SessionOptions
	es   *engine.Session // the connection's goroutine only

	begun chan struct{} // closed by OnSessionBegin
	done  chan struct{} // closed when it has ended: err is set

	mu    sync.Mutex
	err   error
	links []linkEvents // copied on write: a copy taken under mu may be walked
	txc   *txnCtl      // txn.go: the coordinator link, attached at the first NewTransaction
}

// begin runs on the connection's goroutine.
func (s *Session) begin(ec *engine.Conn) error {
	es, err := ec.Begin()
	if err != nil {
		return s.c.engineErr(ec, err)
	}
	es.Context = s
	s.es = es
	return nil
}

// engineErr is the error of an engine action that failed: the
// connection's error when it has ended, else the engine's.
func (c *Conn) engineErr(ec *engine.Conn, err error) error {
	if ec.Closed() {
		if e := ec.Err(); e != nil {
			return fromEngine(e, ScopeConn)
		}
		return ErrClosed
	}
	return err
}

func (s *Session) waitBegun(ctx context.Context, g *gen) error {
	select {
	case <-s.begun:
	case <-s.done:
		return s.Err()
	case <-g.ended:
		return s.c.lostOr(g)
	case <-ctx.Done():
		s.abandon()
		return ctxErr(ctx)
	}
	// An end in the same read as the begin's answer refuses it.
	if _, err := s.c.call(ctx, g, func(*engine.Conn) error { return nil }); err != nil {
		s.abandon()
		return err
	}
	select {
	case <-s.done:
		return s.Err()
	default:
		return nil
	}
}

// beginOn begins the session again on g, a connection dialled again.
func (s *Session) beginOn(ctx context.Context, g *gen) error {
	s.begun = make(chan struct{})
	if _, err := s.c.call(ctx, g, s.begin); err != nil {
		return err
	}
	return s.waitBegun(ctx, g)
}

// endAll ends the session and its links with err, where no connection
// is up to report it.
func (s *Session) endAll(err error) {
	for _, x := range s.linksNow() {
		x.ended(err)
	}
	s.ended(err)
}

// abandon ends a session whose NewSession gave up.
func (s *Session) abandon() {
	s.c.do(func(*engine.Conn) {
		if s.es != nil {
			s.es.End(nil)
		}
	})
}

// ended runs on the connection's goroutine when the session has ended.
func (s *Session) ended(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	s.c.removeSession(s) // not to be begun again on a connection dialled again
	select {
	case <-s.done:
	default:
		close(s.done)
	}
}

// Err returns why the session ended (ErrClosed for a clean end), or nil
// while it is up.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close ends the session and waits for the peer's end within ctx. Its
// links are detached with it: their blocked calls return ErrClosed. It
// returns nil after a clean end, else the session's error.
func (s *Session) Close(ctx context.Context) error {
	gone := false
	_, err := s.c.call(ctx, nil, func(ec *engine.Conn) error {
		if s.es == nil {
			gone = true // not begun on this connection: nothing to end
			return nil
		}
		s.es.End(nil) // ErrState: ending or ended already
		return nil
	})
	if err != nil && err != ErrClosed {
		return err
	}
	if gone {
		s.c.removeSession(s)
		s.endAll(ErrClosed)
	}
	select {
	case <-s.done:
	case <-ctx.Done():
		return ctxErr(ctx)
	case <-s.c.done:
		<-s.done
	}
	s.c.removeSession(s)
	if err := s.Err(); err != ErrClosed {
		return err
	}
	return nil
}

// linksNow returns the session's links.
func (s *Session) linksNow() []linkEvents {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.links
}

// remove takes a link that has ended off the session's links.
func (s *Session) remove(x linkEvents) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, y := range s.links {
		if y == x {
			s.links = append(s.links[:i:i], s.links[i+1:]...)
			return
		}
	}
}

// register adds a link attached on g to the session's links (which a
// connection dialled again attaches again), unless g is no longer up.
func (s *Session) register(g *gen, x linkEvents) error {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.g != g {
		return c.lostOr(g)
	}
	s.mu.Lock()
	s.links = append(s.links[:len(s.links):len(s.links)], x)
	s.mu.Unlock()
	return nil
}

// attachLink attaches a link of the session with attach (an
// engine.Session method) on the connection's goroutine; its errors are
// the session's when it has ended, else the connection's.
func (s *Session) attachLink(ec *engine.Conn, attach func(*engine.Session, engine.LinkOptions) (*engine.Link, error),
	lo engine.LinkOptions) (*engine.Link, error) {
	if s.es == nil {
		return nil, ErrClosed
	}
	l, err := attach(s.es, lo)
	if err != nil {
		if e := s.es.Err(); e != nil {
			return nil, fromEngine(e, ScopeSession)
		}
		return nil, s.c.engineErr(ec, err)
	}
	return l, nil
}
