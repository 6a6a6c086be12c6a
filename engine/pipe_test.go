package engine

import (
	"testing"
	"time"
)

// pipe joins a client and a server Conn in memory: each one's output is
// fed to the other, with a fake clock.
type pipe struct {
	t      testing.TB
	c, s   *Conn
	now    time.Time
	cerr   error
	serr   error
	bytesC int // bytes client → server
	bytesS int
}

func newPipe(t testing.TB, ccfg, scfg Config, ch, sh Handler) *pipe {
	p := &pipe{t: t, now: time.Unix(1_700_000_000, 0)}
	p.s = NewServer(scfg, sh)
	p.c = NewClient(ccfg, ch)
	return p
}

// run shuttles bytes until neither side has output.
func (p *pipe) run() {
	for i := 0; i < 10000; i++ {
		co := p.c.Output()
		so := p.s.Output()
		if len(co) == 0 && len(so) == 0 {
			return
		}
		if len(co) > 0 {
			b := append([]byte(nil), co...)
			p.c.Written(len(co))
			p.bytesC += len(b)
			if err := p.s.Feed(b, p.now); err != nil {
				p.serr = err
			}
		}
		if len(so) > 0 {
			b := append([]byte(nil), so...)
			p.s.Written(len(so))
			p.bytesS += len(b)
			if err := p.c.Feed(b, p.now); err != nil {
				p.cerr = err
			}
		}
	}
	p.t.Fatal("pipe: no quiescence after 10000 rounds")
}

func (p *pipe) advance(d time.Duration) {
	p.now = p.now.Add(d)
	p.c.Tick(p.now)
	p.s.Tick(p.now)
}
