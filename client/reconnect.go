package client

import (
	"context"
	"time"
)

// dialAgain dials a lost connection again with back-off, until it is up
// with its sessions begun and links attached again, Close stops it, or
// ReconnectOptions.MaxAttempts run out (then the connection ends with the
// loss's error). It runs on a goroutine of its own, one per loss.
func (c *Conn) dialAgain() {
	defer c.redial.Done()
	rc := c.rc
	wait := rc.Backoff
	if wait <= 0 {
		wait = 100 * time.Millisecond
	}
	maxWait := rc.MaxBackoff
	if maxWait <= 0 {
		maxWait = 10 * time.Second
	}
	dialTimeout := rc.DialTimeout
	if dialTimeout <= 0 {
		dialTimeout = 30 * time.Second
	}
	stopped, cancelStop := context.WithCancel(context.Background())
	defer cancelStop()
	go func() {
		select {
		case <-c.stop:
			cancelStop()
		case <-stopped.Done():
		}
	}()
	for attempt := 1; ; attempt++ {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-stopped.Done():
			t.Stop()
			return // Close ends the connection
		}
		ctx, cancel := context.WithTimeout(stopped, dialTimeout)
		g, err := c.dialPending(ctx)
		if err == nil {
			err = c.reattach(ctx, g)
		}
		cancel()
		if err == nil && c.install(g) {
			return
		}
		if g != nil {
			g.nc.Close() // lost while attaching again: the next attempt
			<-g.ended
		}
		if stopped.Err() != nil {
			return
		}
		if rc.MaxAttempts > 0 && attempt >= rc.MaxAttempts {
			c.mu.Lock()
			err := c.lostErr
			c.mu.Unlock()
			c.finish(err)
			return
		}
		wait = min(2*wait, maxWait)
	}
}

// dialPending dials the next connection and keeps it pending: calls
// wait until its sessions and links are up again.
func (c *Conn) dialPending(ctx context.Context) (*gen, error) {
	c.mu.Lock()
	c.wantPending = true
	c.mu.Unlock()
	err := c.dial(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wantPending = false
	g := c.pending
	if err != nil {
		c.pending = nil
		return nil, err
	}
	return g, nil
}

// reattach begins the sessions again on g and attaches their links.
// A session or link the peer now refuses ends with the peer's error;
// a loss of g stops it with g's error.
func (c *Conn) reattach(ctx context.Context, g *gen) error {
	c.mu.Lock()
	ss := append([]*Session(nil), c.sessions...)
	c.mu.Unlock()
	for _, s := range ss {
		if s.Err() != nil {
			continue // ended meanwhile
		}
		if err := s.beginOn(ctx, g); err != nil {
			if g.lost() {
				return err
			}
			c.removeSession(s)
			s.endAll(err)
			continue
		}
		for _, x := range s.linksNow() {
			if !x.core().again {
				continue
			}
			if err := x.core().attachOn(ctx, g); err != nil {
				if g.lost() {
					return err
				}
				x.ended(err)
			}
		}
	}
	return nil
}

// install makes g the connection up: calls waiting for it go on, every
// sender sends what was queued meanwhile, and every receiver gives the
// dispositions and credit asked for meanwhile. It returns false when g
// was lost after its links were attached again, before this: its
// OnConnectionClose found it pending, not up, so no dial again follows
// it, and the caller's must try once more.
func (c *Conn) install(g *gen) bool {
	c.mu.Lock()
	if c.pending == g {
		c.pending = nil
	}
	if c.closing || c.err != nil {
		c.mu.Unlock()
		g.nc.Close()
		return true
	}
	if g.endErr != nil { // set by OnConnectionClose under c.mu
		c.mu.Unlock()
		return false
	}
	c.g, c.last = g, g.peer
	up := c.up
	c.up = nil
	ss := append([]*Session(nil), c.sessions...)
	c.mu.Unlock()
	if up != nil {
		close(up)
	}
	// A kick while g was pending ran on g before its links were up:
	// messages queued, dispositions given (on deliveries of the new link,
	// or a resumable receiver's resumed ones) and credit asked for
	// meanwhile go now.
	for _, s := range ss {
		for _, x := range s.linksNow() {
			x.core().kick()
		}
	}
	return true
}

// lost reports that g has ended.
func (g *gen) lost() bool {
	select {
	case <-g.ended:
		return true
	default:
		return false
	}
}

func (c *Conn) removeSession(s *Session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.sessions {
		if x == s {
			c.sessions = append(c.sessions[:i], c.sessions[i+1:]...)
			return
		}
	}
}
