package dump

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/frame"
)

// Conn is the state the two Streams of one connection share: the
// sessions and links known from begin and attach (so that a filter can
// name a link and a disposition be matched to the deliveries it settles),
// the time of the last frame printed, and what a summary counts. A Stream
// made without one has its own.
//
// Sessions are paired across the directions by begin's remote-channel,
// links by name; a disposition from one end settles the deliveries the
// other end sent on the same session.
type Conn struct {
	// Sides name the two directions in a summary ("client", "server").
	Sides [2]string

	frames   [2]int
	bytes    [2]int64
	sessions []*session
	chans    [2]map[uint16]*session // by the channel each direction sends on

	last    time.Time // of the last frame printed
	hasLast bool
	begun   time.Time // of the first frame
	ended   time.Time // of the last frame
	hasTime bool
}

// NewConn returns the state of a new connection.
func NewConn() *Conn {
	return &Conn{Sides: [2]string{"client", "server"}}
}

// session is one session: a begin and, usually, the other end's begin.
type session struct {
	chans      [2]int // the channel each direction sends it on; -1: none
	frames     int
	bytes      int64
	deliveries int
	links      []*linkState
	byName     map[string]*linkState
	handles    [2]map[uint32]*linkState
	// unsettled holds the deliveries sent in each direction that have not
	// been settled, by delivery id (at most maxUnsettled).
	unsettled [2]map[uint32]*delivery
}

// maxUnsettled bounds the deliveries a session remembers per direction
// while they wait for their disposition: beyond it, new ones are not
// followed (so memory does not grow with a capture whose receiver never
// settles).
const maxUnsettled = 4096

// maxSamples bounds the transfer-to-disposition times a link keeps for
// its median: past it, each new time replaces one kept, in turn.
const maxSamples = 1 << 16

// linkState is one link: its two attaches, by name.
type linkState struct {
	name    string
	sess    *session
	handles [2]int64 // by direction; -1: not attached from that side
	sender  int      // the direction of the sender; -1: not known
	snd     frame.SenderSettleMode
	rcv     frame.ReceiverSettleMode
	hasSnd  bool
	hasRcv  bool

	frames, transfers, deliveries int
	presettled, aborted           int
	bytes                         int64
	outcomes                      [frame.StateOther + 1]int

	cur    int64 // the delivery id of the delivery being sent; -1: none
	curDel *delivery

	// Credit, as the sender sees it: the receiver's last flow granted
	// credit up to delivery count limit.
	sent       uint32 // the sender's delivery-count
	limit      uint32
	hasLimit   bool
	stalled    bool
	stalls     int
	stallStart time.Time
	stalledFor time.Duration

	t2d       []time.Duration
	t2dN      int
	t2dMax    time.Duration
	hasT2DMax bool
}

// delivery is a delivery waiting for its disposition.
type delivery struct {
	l        *linkState
	at       time.Time // of its last transfer
	hasAt    bool
	answered bool // a disposition gave its state
}

// facts is what a frame is about, for a filter.
type facts struct {
	header   bool
	perf     amqpsax.Descriptor // 0 for a heartbeat
	channel  uint16
	handle   int64 // -1: none
	link     *linkState
	links    []*linkState // a disposition's: the links of the deliveries it covers
	id       int64        // a transfer's delivery id; -1: none
	first    uint32       // a disposition's range
	last     uint32
	hasRange bool
}

// observe follows frame f, sent in direction dir at time t, whose
// performative is d: it updates the sessions and links and returns what
// the frame is about.
func (c *Conn) observe(dir int, f frame.Frame, d amqpsax.Descriptor, t time.Time, hasT bool, p *perf) facts {
	fa := facts{perf: d, channel: f.Channel, handle: -1, id: -1}
	c.frames[dir]++
	c.bytes[dir] += int64(f.Size)
	if hasT {
		if !c.hasTime {
			c.begun, c.hasTime = t, true
		}
		c.ended = t
	}
	if len(f.Body) == 0 || f.Type != frame.TypeAMQP {
		return fa
	}
	if c.chans[dir] == nil {
		c.chans[dir] = map[uint16]*session{}
	}
	s := c.chans[dir][f.Channel]
	ok := p.err == nil && p.d == d
	if ok && d == amqpsax.DescriptorBegin {
		if rc, has := remoteChannel(&p.begin); has && c.chans[1-dir] != nil && c.chans[1-dir][rc] != nil {
			s = c.chans[1-dir][rc]
		} else {
			s = &session{chans: [2]int{-1, -1}, byName: map[string]*linkState{}}
			c.sessions = append(c.sessions, s)
		}
		s.chans[dir] = int(f.Channel)
		c.chans[dir][f.Channel] = s
	}
	if s == nil {
		return fa
	}
	s.frames++
	s.bytes += int64(f.Size)
	if !ok {
		return fa
	}
	if s.handles[dir] == nil {
		s.handles[dir] = map[uint32]*linkState{}
	}
	switch d {
	case amqpsax.DescriptorAttach:
		a := &p.attach
		l := s.byName[string(a.Name)]
		if l == nil {
			l = &linkState{name: string(a.Name), sess: s, handles: [2]int64{-1, -1}, sender: -1, cur: -1}
			s.byName[l.name] = l
			s.links = append(s.links, l)
		}
		l.handles[dir] = int64(a.Handle)
		s.handles[dir][a.Handle] = l
		if a.Role == frame.RoleSender {
			l.sender, l.snd, l.hasSnd = dir, sndSettleMode(a), true
			if n, has := initialDeliveryCount(a); has {
				l.sent = n
			}
		} else {
			l.rcv, l.hasRcv = a.RcvSettleMode, true
		}
		fa.handle, fa.link = int64(a.Handle), l
		l.frames++
	case amqpsax.DescriptorDetach:
		fa.handle = int64(p.detach.Handle)
		if l := s.handles[dir][p.detach.Handle]; l != nil {
			fa.link = l
			l.frames++
			delete(s.handles[dir], p.detach.Handle)
		}
	case amqpsax.DescriptorFlow:
		h, count, hasCount, credit, isLink := flowLink(&p.flow)
		if !isLink {
			break
		}
		fa.handle = int64(h)
		l := s.handles[dir][h]
		if l == nil {
			break
		}
		fa.link = l
		l.frames++
		if l.sender == 1-dir {
			// The receiver's flow: credit up to count+credit (the
			// sender's initial count when the receiver has not seen it).
			base := l.sent
			if hasCount {
				base = count
			}
			l.limit, l.hasLimit = base+credit, true
			if l.stalled && int32(l.limit-l.sent) > 0 {
				l.stalled = false
				l.stalls++
				if hasT {
					l.stalledFor += t.Sub(l.stallStart)
				}
			}
		}
	case amqpsax.DescriptorTransfer:
		tr := &p.transfer
		fa.handle = int64(tr.Handle)
		l := s.handles[dir][tr.Handle]
		if l == nil {
			break
		}
		fa.link = l
		l.frames++
		l.transfers++
		l.bytes += int64(len(p.payload))
		id, hasID := deliveryID(tr)
		if l.cur < 0 || hasID && int64(id) != l.cur {
			// A new delivery.
			if !hasID {
				break
			}
			l.cur, l.curDel = int64(id), nil
			l.deliveries++
			s.deliveries++
			l.sent++
			if l.hasLimit && !l.stalled && int32(l.limit-l.sent) <= 0 {
				l.stalled, l.stallStart = true, t
			}
			if tr.Settled {
				l.presettled++
			} else if len(s.unsettledOf(dir)) < maxUnsettled {
				l.curDel = &delivery{l: l}
				s.unsettled[dir][id] = l.curDel
			}
		}
		fa.id = l.cur
		if tr.State.Type != frame.StateNone && l.curDel != nil && !l.curDel.answered {
			l.outcomes[tr.State.Type]++
			l.curDel.answered = true
		}
		if tr.Settled && l.curDel != nil {
			delete(s.unsettled[dir], uint32(l.cur))
			l.curDel = nil
		}
		if tr.Aborted {
			l.aborted++
			if l.curDel != nil {
				delete(s.unsettled[dir], uint32(l.cur))
				l.curDel = nil
			}
		}
		if !tr.More || tr.Aborted {
			if l.curDel != nil {
				l.curDel.at, l.curDel.hasAt = t, hasT
			}
			l.cur, l.curDel = -1, nil
		}
	case amqpsax.DescriptorDisposition:
		dp := &p.disposition
		first, last := dispositionRange(dp)
		fa.first, fa.last, fa.hasRange = first, last, true
		// The deliveries it covers were sent the other way.
		m := s.unsettled[1-dir]
		visit := func(id uint32, dl *delivery) {
			l := dl.l
			if !slices.Contains(fa.links, l) && len(fa.links) < 8 {
				fa.links = append(fa.links, l)
			}
			if !dl.answered && dp.State.Type != frame.StateNone {
				l.outcomes[dp.State.Type]++
				dl.answered = true
				if hasT && dl.hasAt {
					l.addT2D(t.Sub(dl.at))
				}
			} else if !dl.answered && dp.Settled && hasT && dl.hasAt {
				l.addT2D(t.Sub(dl.at))
				dl.answered = true
			}
			if dp.Settled {
				delete(m, id)
			}
		}
		if uint64(last-first) < uint64(len(m)) {
			for id := first; ; id++ {
				if dl := m[id]; dl != nil {
					visit(id, dl)
				}
				if id == last {
					break
				}
			}
		} else {
			for id, dl := range m {
				if id-first <= last-first {
					visit(id, dl)
				}
			}
		}
		for _, l := range fa.links {
			l.frames++
		}
		if len(fa.links) > 0 {
			fa.link = fa.links[0]
		}
	}
	return fa
}

// unsettledOf returns the map of the unsettled deliveries sent in
// direction dir, made when needed.
func (s *session) unsettledOf(dir int) map[uint32]*delivery {
	if s.unsettled[dir] == nil {
		s.unsettled[dir] = map[uint32]*delivery{}
	}
	return s.unsettled[dir]
}

// addT2D adds a transfer-to-disposition time.
func (l *linkState) addT2D(d time.Duration) {
	if len(l.t2d) < maxSamples {
		l.t2d = append(l.t2d, d)
	} else {
		l.t2d[l.t2dN%maxSamples] = d
	}
	l.t2dN++
	if !l.hasT2DMax || d > l.t2dMax {
		l.t2dMax, l.hasT2DMax = d, true
	}
}

// median returns the median of the kept transfer-to-disposition times.
func (l *linkState) median() time.Duration {
	s := slices.Clone(l.t2d)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Filter selects the frames printed; the others are still read, for the
// state of the connection (links known from attach, deliveries joined).
// A frame is printed when it matches every criterion set.
type Filter struct {
	// Only lists the performatives printed by name ("transfer"), and
	// "header" (protocol headers) and "heartbeat" (empty frames); nil
	// means all.
	Only []string
	// Channel, when HasChannel, selects the frames on that channel.
	Channel    uint16
	HasChannel bool
	// Handle, when HasHandle, selects the frames of links with that
	// handle (attach, flow, transfer, detach; a disposition of one of
	// their deliveries).
	Handle    uint32
	HasHandle bool
	// Link selects the frames of the links with that name, as above.
	Link    string
	HasLink bool
	// Delivery, when HasDelivery, selects the transfers of that delivery
	// and the dispositions whose range holds it.
	Delivery    uint32
	HasDelivery bool
}

// ParseOnly parses a list of names for Filter.Only: performatives, by
// their short names, "header" and "heartbeat", separated by commas.
func ParseOnly(list string) ([]string, error) {
	var out []string
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		if name == "header" || name == "heartbeat" {
			out = append(out, name)
			continue
		}
		if _, ok := performatives[name]; !ok {
			return nil, &usageError{"-only: " + strconv.Quote(name) + " is not a performative (open, begin, attach, flow, transfer, disposition, detach, end, close, sasl-mechanisms, sasl-init, sasl-challenge, sasl-response, sasl-outcome), header or heartbeat"}
		}
		out = append(out, name)
	}
	return out, nil
}

type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// match reports whether a frame about fa is printed.
func (f *Filter) match(fa *facts) bool {
	if f == nil {
		return true
	}
	if f.Only != nil {
		want := "heartbeat"
		switch {
		case fa.header:
			want = "header"
		case fa.perf != 0:
			want = fa.perf.TypeName()
		}
		if !slices.Contains(f.Only, want) {
			return false
		}
	}
	if fa.header && (f.HasChannel || f.HasHandle || f.HasLink || f.HasDelivery) {
		return false
	}
	if f.HasChannel && fa.channel != f.Channel {
		return false
	}
	if f.HasHandle && fa.handle != int64(f.Handle) && !fa.anyLink(func(l *linkState) bool {
		return l.handles[0] == int64(f.Handle) || l.handles[1] == int64(f.Handle)
	}) {
		return false
	}
	if f.HasLink && !fa.anyLink(func(l *linkState) bool { return l.name == f.Link }) {
		return false
	}
	if f.HasDelivery {
		switch {
		case fa.id >= 0:
			if fa.id != int64(f.Delivery) {
				return false
			}
		case fa.hasRange:
			if f.Delivery-fa.first > fa.last-fa.first {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// anyLink reports whether the frame is about a link for which ok holds.
func (fa *facts) anyLink(ok func(*linkState) bool) bool {
	if fa.link != nil && ok(fa.link) {
		return true
	}
	return slices.ContainsFunc(fa.links, ok)
}
