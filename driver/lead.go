package driver

import (
	"context"
	"errors"
	"os"
	"time"
)

// This file is ReadUntil: the read side lent by the reader goroutine to
// a caller that waits for the peer's answer, so that the answer wakes
// the caller from the network, not through the reader.

// aLongTimeAgo is a read deadline in the past: it makes a Read return
// at once (net/http's persistConn interrupts its reader the same way).
var aLongTimeAgo = time.Unix(1, 0)

// ReadUntil is for a caller that has made a request (DoNow, WakeNow)
// and now waits for the peer's answer: over a TCP or Unix socket, while
// the Conn wants to read and no other caller reads, it takes the read
// side from the reader goroutine (interrupting its Read with a read
// deadline in the past), reads the network connection on the calling
// goroutine and feeds the Conn there, holding it as the reader does,
// until done reports true, ctx ends, or its time is up (1 to 2 ms: a
// deadline set by the caller before it is kept while it is 1 ms away
// or more); then it hands the read side back. It reports done(). Given
// back with the answer in, the read side rests for 1 ms (from the
// last caller's giving back) before the reader reads again: a
// caller's next ReadUntil meanwhile takes it as it is, with no Read to
// interrupt and no goroutine to wake. Input that comes while it rests
// waits that long at most.
//
// It is for one caller waiting on an idle connection: a caller that
// finds the Conn held reads nothing, one that finds another reading
// reads nothing, and then for 1 ms no caller takes the read side and
// none leaves it resting: callers that wait at once are served by the
// reader goroutine, as without ReadUntil.
//
// So the answer of a fast round trip wakes the caller from the network
// directly, without the reader goroutine's hand-off to it. A slow
// answer is left to the reader goroutine, and so is every read the
// Conn does not want yet (engine.Conn.WantRead): those go to the loop,
// in order, as the reader's do. ctx's end is seen within 2 ms.
// Over any other net.Conn, or when it cannot have the read side, it
// reads nothing and reports done() at once.
//
// done is called with the Conn held or not, from the calling goroutine,
// and must be cheap and take no lock that events of the Conn take: the
// usual done looks whether an event has handed the caller its answer
// (a value in a buffered channel). Events and functions of this Conn
// run on the calling goroutine: DoNow's rule of use is ReadUntil's. It
// allocates nothing itself; a Read it interrupts returns package net's
// error value (one allocation), which a run of requests, each taking
// the read side as it rests, does not pay.
func (d *Driver) ReadUntil(ctx context.Context, done func() bool) bool {
	if done() {
		return true
	}
	ctxDone := ctx.Done()
	select {
	case <-ctxDone:
		return done()
	default:
	}
	if !d.emu.TryLock() {
		return done() // the Conn is busy: the connection is not idle
	}
	now := time.Now()
	if d.leadWant || d.leading {
		// Callers wait at once: the reader serves them all, with no
		// lending, until none has found another reading for a while.
		d.crowdUntil = now.Add(crowdFor)
		d.emu.Unlock()
		return done()
	}
	if d.raw == nil || !d.inline() || !d.reading || d.handed > 0 || now.Before(d.crowdUntil) || !d.c.WantRead() {
		d.emu.Unlock()
		return done()
	}
	// The read deadline a caller before this one set is kept while it
	// is at least leadFor/2 away: see rdl.
	end := d.rdl
	if end.Sub(now) < d.leadFor/2 {
		end = now.Add(d.leadFor)
	}
	if dl, ok := ctx.Deadline(); ok && dl.Before(end) {
		end = dl
	}
	var buf []byte
	if d.returned {
		// Handed back by the last caller, the reader not yet reading
		// again: taken as it is, with no Read to interrupt.
		d.returned, d.leading = false, true
		buf, d.leadBuf = d.leadBuf, nil
		d.stats.retaken++ // a wake-up of the reader to come finds it taken
	} else {
		d.leadWant = true
		d.setReadDeadline(aLongTimeAgo) // the reader's Read returns: see reader
		d.emu.Unlock()
		t := d.leadWait
		t.Reset(d.leadFor)
		select {
		case <-d.lead:
			t.Stop()
		case <-t.C:
			d.unlend()
			return done()
		case <-ctxDone:
			t.Stop()
			d.unlend()
			return done()
		case <-d.done:
			t.Stop()
			d.unlend()
			return done()
		}
		// The read side is the caller's.
		d.emu.Lock()
		buf, d.leadBuf = d.leadBuf, nil
	}
	if buf == nil || !d.live || done() {
		d.emu.Unlock()
		d.giveBack(buf, buf != nil)
		return done()
	}
	d.setReadDeadline(end) // with the Conn held: after any interrupt (see turn)
	d.emu.Unlock()
	for {
		n, err := d.readNet(buf)
		timeout := err != nil && errors.Is(err, os.ErrDeadlineExceeded)
		if timeout {
			err = nil
		}
		if n > 0 || err != nil {
			r := readResult{buf, n, err}
			d.emu.Lock()
			if !d.live {
				d.emu.Unlock()
				break
			}
			if d.handoff || d.handed > 0 || !d.reading || !d.c.WantRead() {
				// The loop feeds it, in order, as it does the reader's.
				d.handed++
				d.emu.Unlock()
				select {
				case d.reads <- r:
				case <-d.done:
				}
				buf = nil
				break
			}
			d.stats.leadFeeds++
			if n > 0 {
				d.c.Feed(buf[:n], time.Now())
			}
			if err != nil {
				d.reading = false
				d.readEnded(err)
			}
			d.leaderIn = true
			d.release()
			if err != nil {
				break
			}
		}
		if done() {
			d.giveBack(buf, true)
			return true
		}
		select {
		case <-ctxDone:
			d.giveBack(buf, false)
			return done()
		default:
		}
		if timeout {
			if !time.Now().Before(end) {
				break
			}
			// Interrupted (see turn): look again, with the Conn held,
			// where another goroutine hands the answer over.
			d.emu.Lock()
			if done() {
				d.emu.Unlock()
				break
			}
			d.setReadDeadline(end)
			d.emu.Unlock()
		}
	}
	d.giveBack(buf, false)
	return done()
}

// unlend ends a caller's wait for the read side: when the reader has
// handed it over meanwhile, it is handed back at once.
func (d *Driver) unlend() {
	d.emu.Lock()
	if !d.leading {
		d.leadWant = false // the reader clears the deadline (lend)
		d.emu.Unlock()
		return
	}
	d.emu.Unlock()
	<-d.lead
	d.emu.Lock()
	buf := d.leadBuf
	d.leadBuf = nil
	d.emu.Unlock()
	d.giveBack(buf, false)
}

// giveBack hands the read side back to the reader goroutine, with buf
// (nil: it takes a free one). Until the reader reads again it rests,
// and a caller may take it as it is (ReadUntil), with no Read to
// interrupt: the reader is woken at once, or, with rest, after
// restFor, so that the caller's next request, made at once, takes it
// without waking the reader at all.
func (d *Driver) giveBack(buf []byte, rest bool) {
	d.emu.Lock()
	d.leading, d.leaderIn = false, false
	d.returned, d.leadBuf = true, buf
	var now time.Time
	if rest {
		now = time.Now()
		rest = !now.Before(d.crowdUntil) // else others wait too: the reader reads for them
	}
	if rest {
		d.restUntil = now.Add(d.restFor)
		if !d.restArmed {
			d.restArmed = true
			d.stats.restArms++
			d.rest.Reset(d.restFor)
		}
		d.emu.Unlock()
		return
	}
	d.emu.Unlock()
	select {
	case d.back <- struct{}{}:
	default: // the reader has a wake-up to come: it looks then
	}
}
