package broker

import (
	"encoding/binary"
	"math"
	"net"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/frame"
)

// The engine answers a peer's attach itself, mirroring its source and
// target, before OnLinkAttach: a dynamic node's address (part 3 §3.5.3,
// dynamic) cannot be put into the answer from the handler. Until the
// engine lets a handler fill in the terminus it answers with, dynConn
// does it on the way in: it reads the connection's frames as they pass,
// and gives an attach whose source (peer receives) or target (peer
// sends) is dynamic and has no address an address of a new node, so that
// the engine echoes that address. Every other byte passes through in
// place, with no copy, except where a read ends inside the first bytes
// of a frame.

// dynConn is a net.Conn whose reads carry attaches of dynamic termini
// with addresses filled in.
type dynConn struct {
	net.Conn
	b    *Broker
	max  int64  // the largest frame looked into (the engine refuses larger ones)
	skip int64  // bytes of the current frame (or header) still to pass on
	hold []byte // bytes read, from a frame's start, not decided yet
	out  []byte // decided bytes to hand out before reading more
	rerr error  // the read error, once hold and out are handed out
	dead bool   // a malformed frame header: pass everything on as it is
}

// Read reads from the connection, filling in dynamic addresses.
func (w *dynConn) Read(p []byte) (int, error) {
	for {
		if len(w.out) > 0 {
			n := copy(p, w.out)
			w.out = w.out[n:]
			return n, nil
		}
		if len(w.hold) > 0 {
			if w.rerr != nil {
				w.out = append(w.out[:0], w.hold...)
				w.hold = w.hold[:0]
				continue
			}
			if w.process() {
				continue
			}
			n, err := w.Conn.Read(p)
			w.hold = append(w.hold, p[:n]...)
			w.rerr = err
			continue
		}
		if w.rerr != nil {
			return 0, w.rerr
		}
		n, err := w.Conn.Read(p)
		k := w.scan(p[:n])
		if k < n {
			w.hold = append(w.hold[:0], p[k:n]...)
		}
		if err != nil {
			w.rerr = err
		}
		if k > 0 {
			return k, nil
		}
		if n == 0 && err == nil {
			return 0, nil
		}
	}
}

// scan passes frames in b, in place; it returns how much of b is
// decided (the rest starts a frame it cannot decide on yet, or one to
// rewrite).
func (w *dynConn) scan(b []byte) int {
	i := 0
	for i < len(b) {
		if w.skip > 0 {
			m := int(min(w.skip, int64(len(b)-i)))
			w.skip -= int64(m)
			i += m
			continue
		}
		size, rewrite, ok := w.decide(b[i:])
		if !ok || rewrite {
			return i
		}
		w.skip = size
	}
	return i
}

// process decides frames at the start of hold, moving them to out; it
// reports false when it needs more bytes and has moved none.
func (w *dynConn) process() bool {
	moved := false
	for len(w.hold) > 0 {
		if w.skip > 0 {
			m := int(min(w.skip, int64(len(w.hold))))
			w.out = append(w.out, w.hold[:m]...)
			w.hold = w.hold[m:]
			w.skip -= int64(m)
			moved = true
			continue
		}
		size, rewrite, ok := w.decide(w.hold)
		if !ok {
			break
		}
		if rewrite {
			if out, done := w.rewrite(w.out, w.hold[:size]); done {
				w.out = out
				w.hold = w.hold[size:]
				moved = true
				continue
			}
		}
		w.skip = size
	}
	return moved
}

// decide looks at the frame (or protocol header) at the start of b: its
// size, whether it is an attach to look into, or !ok when b holds too
// little to tell.
func (w *dynConn) decide(b []byte) (size int64, rewrite, ok bool) {
	if w.dead {
		return math.MaxInt64, false, true
	}
	if len(b) < 8 {
		return 0, false, false
	}
	if b[0] == 'A' && b[1] == 'M' && b[2] == 'Q' && b[3] == 'P' {
		return 8, false, true
	}
	size = int64(binary.BigEndian.Uint32(b))
	doff := int64(b[4]) * 4
	if size < 8 || doff < 8 || doff > size || size > w.max {
		// Not a frame the engine takes: it fails the connection.
		w.dead = true
		return math.MaxInt64, false, true
	}
	if b[5] != frame.TypeAMQP || size == doff {
		return size, false, true
	}
	// The descriptor: smallulong 0x12 takes 3 bytes, ulong 10, the
	// symbol "amqp:attach:list" 18.
	need := min(size, doff+18)
	if int64(len(b)) < need {
		return 0, false, false
	}
	d, err := frame.Performative(b[doff:need])
	if err != nil || d != amqpsax.DescriptorAttach {
		return size, false, true
	}
	if int64(len(b)) < size {
		return 0, false, false
	}
	return size, w.wantsAddress(b[doff:size]), true
}

// wantsAddress reports an attach with a dynamic terminus and no address.
func (w *dynConn) wantsAddress(body []byte) bool {
	a, err := frame.ParseAttach(body)
	if err != nil {
		return false
	}
	if a.Role == frame.RoleReceiver {
		src, ok := a.Source.Get()
		return ok && src.Dynamic && len(src.Address) == 0
	}
	tgt, ok := a.Target.Get()
	return ok && tgt.Dynamic && len(tgt.Address) == 0
}

// rewrite appends to dst the attach frame fr with a new node's address
// in its dynamic terminus.
func (w *dynConn) rewrite(dst, fr []byte) ([]byte, bool) {
	doff := int(fr[4]) * 4
	a, err := frame.ParseAttach(fr[doff:])
	if err != nil {
		return dst, false
	}
	addr := w.b.newDynamicAddress()
	if a.Role == frame.RoleReceiver {
		src, _ := a.Source.Get()
		src.Address = addr
		a.Source = frame.Some(src)
	} else {
		tgt, _ := a.Target.Get()
		tgt.Address = addr
		a.Target = frame.Some(tgt)
	}
	start := len(dst)
	dst = frame.BeginFrame(dst, frame.TypeAMQP, binary.BigEndian.Uint16(fr[6:]))
	dst = frame.AppendAttach(dst, a)
	return frame.EndFrame(dst, start), true
}
