package bench

import (
	"bytes"
	"fmt"
	"time"

	"github.com/amqpsax/amqpsax/engine"
)

// amqpsax's engine as the receiver of a recorded stream (see driver.go),
// set up as driver_proton.go sets up Proton-C: a server Conn taking SASL
// ANONYMOUS (the zero Config's), a handler that grants the receiving link DriverMsgs credit when it
// attaches (Link.Flow; the engine answers the attach by itself) and, for
// each delivery, accepts and settles it (Delivery.Accept) when it came
// unsettled. The engine answers the peer's detach, end and close by
// itself. Input goes in as Proton's does: the setup first, then 64 KiB
// at a time; output is taken and dropped (Output, Written).
//
// The engine hands a delivery's message over as a view into the bytes
// fed (no copy); Proton's application must copy it out (pn_link_recv).

func init() {
	Receivers = append(Receivers, Receiver{Name: "engine", New: newEngineReceiver})
}

// driverChunk is the read size both receivers are fed at.
const driverChunk = 64 << 10

// engineRecv is the receiving application.
type engineRecv struct {
	engine.NopHandler
	credit uint32
	expect []byte // when set, every message is compared with it
	res    ReceiverResult
	err    error
}

func (h *engineRecv) OnLinkAttach(l *engine.Link) {
	if !l.IsSender() {
		if err := l.Flow(h.credit); err != nil && h.err == nil {
			h.err = err
		}
	}
}

func (h *engineRecv) OnDelivery(l *engine.Link, d engine.Delivery) {
	h.res.Delivered++
	h.res.Bytes += int64(len(d.Payload))
	if h.expect != nil && !bytes.Equal(d.Payload, h.expect) {
		h.res.Mismatched++
	}
	if !d.Settled {
		if err := d.Accept(); err != nil && h.err == nil {
			h.err = err
		}
	}
}

func (h *engineRecv) OnConnectionClose(c *engine.Conn, e *engine.Error) {
	if e != nil && h.err == nil {
		h.err = e
	}
}

func newEngineReceiver(s *DriverStream, check bool) (ReceiverRun, error) {
	h := &engineRecv{credit: uint32(s.Msgs)}
	if check {
		h.expect = s.Workload.AMQP
	}
	// A session window that takes the whole stream, as Proton's is set.
	cfg := engine.Config{ContainerID: "bench-receiver", Window: 1 << 15}
	now := time.Unix(1700000000, 0)
	conn := func(data []byte) {
		c := engine.NewServer(cfg, h)
		h.res.Conns++
		feed := func(p []byte) bool {
			if err := c.Feed(p, now); err != nil {
				if h.err == nil {
					h.err = err
				}
				return false
			}
			out := c.Output()
			h.res.Out += int64(len(out))
			c.Written(len(out))
			return true
		}
		if !feed(data[:s.Setup]) {
			return
		}
		for off := s.Setup; off < len(data) && h.err == nil; off += driverChunk {
			if !feed(data[off:min(off+driverChunk, len(data))]) {
				return
			}
		}
	}
	return ReceiverRun{
		Run: func(n int) (ReceiverResult, error) {
			h.res, h.err = ReceiverResult{}, nil
			for n > 0 && h.err == nil {
				if n >= s.Msgs {
					conn(s.Data)
					n -= s.Msgs
				} else {
					conn(s.Data[:s.Ends[n-1]])
					n = 0
				}
			}
			if h.err != nil {
				return h.res, fmt.Errorf("engine: %w", h.err)
			}
			return h.res, nil
		},
		Close: func() {},
	}, nil
}

// EngineReceiverAllocs feeds a server engine s's setup and then, one
// transfer frame per run, runs messages; it returns the allocations per
// message after the first warm messages (testing.AllocsPerRun).
func EngineReceiverAllocs(s *DriverStream, warm, runs int, allocsPerRun func(int, func()) float64) (float64, error) {
	if warm+runs+1 > s.Msgs {
		return 0, fmt.Errorf("%s has %d messages, not %d", s.Name, s.Msgs, warm+runs+1)
	}
	h := &engineRecv{credit: uint32(s.Msgs)}
	c := engine.NewServer(engine.Config{ContainerID: "bench-receiver", Window: 1 << 15}, h)
	now := time.Unix(1700000000, 0)
	feed := func(p []byte) {
		if err := c.Feed(p, now); err != nil && h.err == nil {
			h.err = err
		}
		c.Written(len(c.Output()))
	}
	feed(s.Data[:s.Setup])
	off := s.Setup
	next := func() {
		i := h.res.Delivered
		feed(s.Data[off:s.Ends[i]])
		off = s.Ends[i]
	}
	for range warm {
		next()
	}
	allocs := allocsPerRun(runs, next)
	if h.err != nil {
		return allocs, h.err
	}
	if h.res.Delivered != warm+runs+1 {
		return allocs, fmt.Errorf("%d messages delivered, want %d", h.res.Delivered, warm+runs+1)
	}
	return allocs, nil
}
