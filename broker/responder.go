package broker

import (
	"context"
	"errors"
	"slices"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
)

// This file is the nodes served by Go code (Options.Responders): a
// producer to a responder's address sends requests, the Responder runs
// on a goroutine of its own for each, and its reply is stored on the
// node the request's reply-to names (or the paired receiver's, for
// "$me"), as any message.

// Responder answers a request sent to a node served by Go code
// (Options.Responders): it returns the reply, or nil for none, or an
// error. req is the request, decoded, the Responder's to keep; from is
// who sent it. ctx ends when the request's link or connection does, or
// the broker shuts down. It runs on a goroutine of its own, never the
// connection's: a slow Responder holds back only the requests of its
// link beyond the credit the broker grants it (MaxRequestsInFlight).
//
// The broker sets the reply's correlation-id, unless the Responder
// did, to the request's correlation-id, or its message-id when it has
// none (the AMQP request/response convention, as AMQP management and
// Azure's $cbs use it), and its to, unless set, to the reply address;
// the rest is the Responder's: a service's status (AMQP management's
// application property "statusCode", RabbitMQ 4's subject "201") goes
// into the reply it returns.
type Responder func(ctx context.Context, req *message.Message, from Peer) (*message.Message, error)

// MaxRequestsInFlight is the credit the broker grants a link that sends
// requests to a Responder: the requests of one link being answered at
// once, topped up as they are. One connection has at most
// MaxConnRequestsInFlight requests being answered, all its links
// together: a request past it is rejected with
// amqp:resource-limit-exceeded.
const (
	MaxRequestsInFlight     = 16
	MaxConnRequestsInFlight = 256
)

var errConnRequests = engine.NewError(frame.CondResourceLimitExceeded,
	"the connection has as many requests being answered as it may")

// Peer is a connection the broker serves: its number (unique in the
// broker, for Broker.Drop), the peer's container-id, the identity SASL
// authenticated and the remote network address; in a Responder's
// request, Link is the name of the link the request came on.
type Peer struct {
	ID          uint64
	ContainerID string
	Identity    string
	RemoteAddr  string
	Link        string
}

// requestLink is a link the peer sends requests on to a Responder's
// address (l.Context). Its fields but ctx and cancel are the
// connection's goroutine's.
type requestLink struct {
	link     *engine.Link
	conn     *conn
	addr     string
	r        Responder
	from     Peer
	ctx      context.Context
	cancel   context.CancelFunc
	inflight uint32
	gone     bool
}

// responderOf returns the Responder serving addr, nil when none does.
func (b *Broker) responderOf(addr []byte) Responder {
	if len(b.opts.Responders) == 0 {
		return nil
	}
	return b.opts.Responders[string(addr)]
}

// replyNode returns the address of the node a receiver from a
// Responder's address takes replies from: its target's address (the
// reply address Azure's $cbs clients choose), else one of its own, as
// a dynamic node's, when it has none, or "$me", or the responder's
// address (as RabbitMQ 4's clients attach their /management receiver);
// made reports a new node, which goes with the link.
func (b *Broker) replyNode(l *engine.Link) (addr []byte, made bool) {
	if a := l.RemoteTarget().Address; len(a) > 0 && string(a) != "$me" && b.responderOf(a) == nil {
		b.mu.Lock()
		n := b.nodes[string(a)]
		b.mu.Unlock()
		return a, n == nil
	}
	return b.dynamicAddress(), true
}

// attachRequests makes l, whose target is addr served by r, a link of
// requests, and grants it credit.
func (b *Broker) attachRequests(cn *conn, l *engine.Link, addr []byte, r Responder) {
	rl := &requestLink{link: l, conn: cn, addr: string(addr), r: r, from: cn.ext.peer}
	rl.from.Link = string(l.Name())
	rl.ctx, rl.cancel = context.WithCancel(context.Background())
	if key, _, _, ok := durableKey(l); ok {
		// A link of requests keeps no state across attaches (its
		// requests are answered, not stored): what Recover made for a
		// durable one is forgotten, as a dynamic node's link's is.
		b.mu.Lock()
		if d := b.durables[key]; d != nil && d.attached && d.cn == cn {
			b.forgetLocked(d)
		}
		b.mu.Unlock()
	}
	l.Context = rl
	cn.ext.requests = append(cn.ext.requests, rl)
	l.Flow(MaxRequestsInFlight)
}

// detachRequests ends a link of requests: the Responders still running
// for it see their ctx end.
func (b *Broker) detachRequests(rl *requestLink) {
	rl.gone = true
	rl.cancel()
	cn := rl.conn
	if i := slices.Index(cn.ext.requests, rl); i >= 0 {
		cn.ext.requests = slices.Delete(cn.ext.requests, i, i+1)
	}
}

var errRequestDecode = engine.NewError(frame.CondDecodeError, "the request is not a well-formed message")

// request hands a request to its Responder, on a goroutine of its own.
// The reply's address is found here, on the connection's goroutine:
// the request's reply-to; "$me", or none, is the receiver paired with
// the request's link (a receiver attached to the same address with the
// same name, on the same connection).
func (b *Broker) request(rl *requestLink, d *engine.Delivery) {
	if rl.gone {
		return
	}
	req := new(message.Message)
	if err := req.Decode(d.Payload); err != nil {
		if !d.Settled {
			d.Reject(errRequestDecode)
		}
		b.topUpRequests(rl)
		return
	}
	var replyTo []byte
	if p := req.Properties; p != nil && len(p.ReplyTo) > 0 && string(p.ReplyTo) != "$me" {
		replyTo = append([]byte(nil), p.ReplyTo...) // req is the Responder's: it may change it
		if b.opts.Permissions != nil && !b.allowed(rl.conn.identity, replyTo, Write) {
			b.logf("responder %q: reply-to %q not allowed to %q: no reply", rl.addr, replyTo, rl.conn.identity)
			replyTo = nil
		}
	} else {
		for _, c := range rl.conn.consumers {
			if !c.gone && string(c.link.Name()) == rl.from.Link && string(c.link.RemoteSource().Address) == rl.addr {
				replyTo = []byte(c.n.name)
				break
			}
		}
	}
	if rl.conn.ext.inflight >= MaxConnRequestsInFlight {
		if !d.Settled {
			d.Reject(errConnRequests)
		}
		b.logf("responder %q: %d requests of %q being answered: one refused", rl.addr, MaxConnRequestsInFlight, rl.conn.ext.peer.ContainerID)
		b.topUpRequests(rl)
		return
	}
	var corr message.ID // the reply's correlation-id, taken before the Responder has req
	if p := req.Properties; p != nil {
		corr = p.CorrelationID
		if !hasID(corr) {
			corr = p.MessageID
		}
		corr.Bytes = append([]byte(nil), corr.Bytes...)
	}
	rl.inflight++
	rl.conn.ext.inflight++
	id, settled, l, drv := d.DeliveryID, d.Settled, d.Link, rl.conn.drv
	b.wg.Add(1) // the connection is being served: Shutdown waits for this too
	go func() {
		defer b.wg.Done()
		var e *engine.Error
		rep, err := b.respond(rl, req)
		switch {
		case err != nil:
			b.logf("responder %q: %q", rl.addr, err)
			e = engine.NewError(frame.CondInternalError, err.Error())
		case rep != nil && replyTo != nil:
			if err := b.reply(rep, corr, replyTo); err != nil {
				b.logf("responder %q: reply to %q: %q", rl.addr, replyTo, err)
			}
		case rep != nil:
			b.logf("responder %q: a request with no reply-to and no paired receiver: reply dropped", rl.addr)
		}
		if drv == nil {
			return
		}
		drv.Do(func(*engine.Conn) {
			rl.inflight--
			rl.conn.ext.inflight--
			if rl.gone {
				return
			}
			if !settled {
				if e != nil {
					dd := engine.Delivery{Link: l}
					dd.DeliveryID = id
					dd.Reject(e)
				} else {
					l.Dispose(id, engine.Accepted, true)
				}
			}
			b.topUpRequests(rl)
		})
	}()
}

// respond runs the Responder; one that panics returns an error, and the
// broker goes on.
func (b *Broker) respond(rl *requestLink, req *message.Message) (rep *message.Message, err error) {
	defer func() {
		if p := recover(); p != nil {
			rep, err = nil, errResponderPanic
		}
	}()
	return rl.r(rl.ctx, req, rl.from)
}

var errResponderPanic = errors.New("broker: the responder panicked")

// topUpRequests grants a link of requests the credit for those it may
// have in flight.
func (b *Broker) topUpRequests(rl *requestLink) {
	if rl.gone {
		return
	}
	if have := rl.link.Credit() + rl.inflight; have <= MaxRequestsInFlight/2 {
		rl.link.Flow(MaxRequestsInFlight - rl.inflight)
	}
}

// reply stores rep, with its correlation-id set to corr unless it has
// one, on the node at addr.
func (b *Broker) reply(rep *message.Message, corr message.ID, addr []byte) error {
	out := *rep
	var p message.Properties
	if rep.Properties != nil {
		p = *rep.Properties
	}
	if !hasID(p.CorrelationID) {
		p.CorrelationID = corr
	}
	if len(p.To) == 0 {
		p.To = addr
	}
	out.Properties = &p
	payload, err := out.Append(nil)
	if err != nil {
		return err
	}
	return b.publish(addr, payload, false)
}

func hasID(id message.ID) bool { return id.Kind != amqpsax.KindInvalid && id.Kind != amqpsax.KindNull }
