package engine

import (
	"bytes"
	"runtime"
	"strconv"
	"testing"
	"unsafe"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
)

// liveHeap returns the heap in use once garbage is collected.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// bigAttach returns an attach of a sending link with handle h whose
// field named by kind carries about size bytes: its name, properties, a
// filter, offered or desired capabilities, or its unsettled map. The
// frame's bytes are the peer's; i makes the name unique.
func bigAttach(b []byte, kind string, h uint32, i, size int) []byte {
	pad := bytes.Repeat([]byte{'x'}, size)
	name := []byte("l" + strconv.Itoa(i))
	a := frame.Attach{Name: name, Handle: h, Role: frame.RoleSender, InitialDeliveryCount: frame.Some[uint32](0)}
	src := frame.Source{Address: []byte("src")}
	switch kind {
	case "name":
		a.Name = append(name, pad...)
	case "properties":
		a.Properties = frame.Map(encode.EndMap(encode.AppendString(encode.AppendSymbol(encode.BeginMap(nil), "p"), string(pad)), 0, 1))
	case "filter":
		src.Filter = (&frame.SymbolMap{}).Selector(string(pad)).Map()
	case "offered":
		a.OfferedCapabilities = frame.Symbols(frame.AppendSymbols(nil, string(pad)))
	case "desired":
		a.DesiredCapabilities = frame.Symbols(frame.AppendSymbols(nil, string(pad[:size/2]), string(pad[size/2:])))
	case "unsettled":
		a.Unsettled = frame.Map(encode.EndMap(frame.AppendDeliveryState(encode.AppendBinary(encode.BeginMap(nil), pad), frame.DeliveryState{}), 0, 1))
	case "unsettled-index":
		// As many entries as fit, each a distinct two-byte tag and no
		// state (5 bytes): indexed, each costs far more than its bytes.
		m := encode.BeginMap(nil)
		n := size / 5
		for j := range n {
			m = encode.AppendNull(encode.AppendBinary(m, []byte{byte(j >> 8), byte(j)}))
		}
		a.Unsettled = frame.Map(encode.EndMap(m, 0, n))
	}
	a.Source, a.Target = frame.Some(src), frame.Some(frame.Target{Address: []byte("q")})
	return perf(b, 0, func(b []byte) []byte { return frame.AppendAttach(b, a) })
}

// bigHandshake: AMQP header, an open that takes frames of up to 1 MiB
// (the answer to a big attach echoes it), and a begin on channel 0.
func bigHandshake() []byte {
	b := frame.AppendProtocolHeader(nil, frame.HeaderAMQP)
	b = perf(b, 0, func(b []byte) []byte {
		return frame.AppendOpen(b, frame.Open{ContainerID: []byte("raw"), MaxFrameSize: frame.Some[uint32](1 << 20)})
	})
	return perf(b, 0, beginBody)
}

// indexing asks every link's peer for its unsettled map on attach
// (Link.RemoteUnsettled, as a broker resuming a durable subscription
// does), which builds the link's index of it.
type indexing struct{ NopHandler }

func (indexing) OnLinkAttach(l *Link) { l.RemoteUnsettled([]byte{0, 1}) }

// A peer that attaches link after link, each with about 60 kB of its own
// (a name, properties, a filter, capabilities, an unsettled map, one of
// 12,000 entries that the application has the engine index), is
// closed with amqp:resource-limit-exceeded at the budget, and until then
// the process's live heap follows the budget (within 1.5x), not the
// input: every byte kept for a link is counted, and kept once. Two sizes
// of budget in one test; without the budget the name attack took 200 kB
// of heap a link.
func TestMemoryBudgetBigAttaches(t *testing.T) {
	const size = 60_000
	for _, kind := range []string{"name", "properties", "filter", "offered", "desired", "unsettled", "unsettled-index"} {
		t.Run(kind, func(t *testing.T) {
			for _, budget := range []int{8 << 20, 16 << 20} {
				base := liveHeap()
				var h Handler
				if kind == "unsettled-index" {
					h = indexing{}
				}
				c := NewServer(Config{MaxMemory: budget, HandleMax: 100_000}, h)
				r := newRaw(t, c)
				r.feed(bigHandshake())
				r.frames()
				var peakHeap uint64
				var buf []byte
				links := 0
				step := linkCost + size // the most one attach took of the budget
				for i := 1; !c.Closed(); i++ {
					if i > 4*budget/size {
						t.Fatalf("budget %d: %d attaches of %d bytes taken", budget, i, size)
					}
					held, _ := c.Held()
					if held+2*step > budget {
						// Among the last attaches before the budget: how
						// much does the engine keep?
						peakHeap = max(peakHeap, liveHeap()-min(base, liveHeap()))
					}
					buf = bigAttach(buf[:0], kind, uint32(i), i, size)
					c.Feed(buf, r.now)
					c.Written(len(c.Output()))
					links = i
					if now, _ := c.Held(); !c.Closed() {
						step = max(step, now-held)
					}
				}
				runtime.KeepAlive(c)
				e := c.Err()
				if e == nil || e.Condition != frame.CondResourceLimitExceeded {
					t.Fatalf("budget %d: %v", budget, e)
				}
				_, peak := c.Held()
				if peak > budget || peak < budget-2*step {
					t.Fatalf("budget %d: peak held %d", budget, peak)
				}
				if peakHeap > uint64(budget)*3/2 || peakHeap < uint64(budget)/2 {
					t.Fatalf("budget %d: live heap %d with %d links", budget, peakHeap, links)
				}
				t.Logf("budget %d: closed at link %d (%d bytes held a link), peak held %d, live heap %d (%.2fx)", budget, links, step, peak, peakHeap, float64(peakHeap)/float64(budget))
			}
		})
	}
}

// The peer's open is kept (Conn.RemoteOpen) and counted: an open larger
// than the budget closes the connection with
// amqp:resource-limit-exceeded, keeping nothing; one within it leaves
// that much less for the links.
func TestMemoryBudgetOpen(t *testing.T) {
	const budget = 512 << 10
	open := func(props int) []byte {
		pad := bytes.Repeat([]byte{'x'}, props)
		b := frame.AppendProtocolHeader(nil, frame.HeaderAMQP)
		return perf(b, 0, func(b []byte) []byte {
			return frame.AppendOpen(b, frame.Open{ContainerID: []byte("raw"),
				Properties:          frame.Map(encode.EndMap(encode.AppendString(encode.AppendSymbol(encode.BeginMap(nil), "p"), string(pad)), 0, 1)),
				DesiredCapabilities: frame.Symbols(frame.AppendSymbols(nil, "a", "b"))})
		})
	}
	cfg := Config{MaxMemory: budget, MaxFrameSize: 1 << 20, HandleMax: 1000}

	c := NewServer(cfg, nil)
	newRaw(t, c).feed(open(budget + 1000))
	if e := c.Err(); e == nil || e.Condition != frame.CondResourceLimitExceeded {
		t.Fatalf("open above the budget: %v", e)
	}
	if now, _ := c.Held(); now != 0 || c.RemoteOpen().Properties != nil {
		t.Fatalf("open above the budget: %d held, properties kept", now)
	}

	// An open of 300 kB, then links of 60 kB names: about 3 fit beside it.
	c = NewServer(cfg, nil)
	r := newRaw(t, c)
	r.feed(open(300 << 10))
	if now, _ := c.Held(); now < 300<<10 || c.RemoteOpen().Properties.Len() != 1 || !c.RemoteOpen().DesiredCapabilities.Contains("b") {
		t.Fatalf("open within the budget: %d held", now)
	}
	r.feed(perf(nil, 0, beginBody))
	links := 0
	for i := 1; !c.Closed() && i < 100; i++ {
		r.feed(bigAttach(nil, "name", uint32(i), i, 60_000))
		links = i
	}
	if e := c.Err(); e == nil || e.Condition != frame.CondResourceLimitExceeded || links > 5 {
		t.Fatalf("after %d links: %v", links, e)
	}
	if now, _ := c.Held(); now != 0 {
		t.Fatalf("%d held after the close", now)
	}
}

// Tags a durable receiver keeps (part 2 §2.6.13) and a txn-id a link
// keeps are the peer's bytes too: the budget counts them, so a peer
// sending deliveries with long tags, or transfers in transactions with
// long ids, is cut off at the budget.
func TestMemoryBudgetTagsAndTxnIDs(t *testing.T) {
	const size = 30_000
	for _, kind := range []string{"tags", "txn-ids"} {
		t.Run(kind, func(t *testing.T) {
			for _, budget := range []int{1 << 20, 2 << 20} {
				c := NewServer(Config{MaxMemory: budget, Credit: 10_000, HandleMax: 10_000, Window: 10_000}, nil)
				r := newRaw(t, c)
				b := frame.AppendProtocolHeader(nil, frame.HeaderAMQP)
				b = perf(b, 0, openBody)
				b = perf(b, 0, func(b []byte) []byte {
					return frame.AppendBegin(b, frame.Begin{IncomingWindow: 10_000, OutgoingWindow: 10_000})
				})
				r.feed(b)
				pad := bytes.Repeat([]byte{'t'}, size)
				var held int
				for i := uint32(0); !c.Closed() && i < uint32(4*budget/size); i++ {
					h := uint32(0)
					if kind == "txn-ids" || i == 0 {
						if kind == "txn-ids" {
							h = i
						}
						// A sender whose source keeps unsettled state: this
						// end keeps each unsettled delivery's tag.
						r.feed(perf(nil, 0, func(b []byte) []byte {
							return frame.AppendAttach(b, frame.Attach{Name: []byte("s" + strconv.Itoa(int(i))), Handle: h, Role: frame.RoleSender,
								InitialDeliveryCount: frame.Some[uint32](0), Target: frame.Some(frame.Target{Address: []byte("q")}),
								Source: frame.Some(frame.Source{Address: []byte("s"), Durable: frame.DurabilityUnsettledState})})
						}))
					}
					r.feed(perf(nil, 0, func(b []byte) []byte {
						t := frame.Transfer{Handle: h, DeliveryID: frame.Some(i), DeliveryTag: append(strconv.AppendUint(nil, uint64(i), 10), pad...),
							MessageFormat: frame.Some[uint32](0)}
						if kind == "txn-ids" {
							t.DeliveryTag = []byte{1}
							t.State = frame.DeliveryState{Type: frame.StateOther, Descriptor: amqpsax.DescriptorTransactionalState,
								Raw: frame.AppendTransactionalState(nil, frame.TransactionalState{TxnID: append(strconv.AppendUint(nil, uint64(i), 10), pad...)})}
						}
						return append(frame.AppendTransfer(b, t), 0x00, 0x53, 0x77, 0x40)
					}))
					held, _ = c.Held()
				}
				e := c.Err()
				if e == nil || e.Condition != frame.CondResourceLimitExceeded {
					t.Fatalf("budget %d: %v (held %d)", budget, e, held)
				}
				if _, peak := c.Held(); peak > budget || peak < budget/2 {
					t.Fatalf("budget %d: peak %d", budget, peak)
				}
			}
		})
	}
}

// TestLinkCost: what the budget counts for a link covers the Link
// struct (the rest of linkCost is its places in the maps), on 64-bit and
// 32-bit alike.
func TestLinkCost(t *testing.T) {
	if size := int(unsafe.Sizeof(Link{})); size > linkCost-512 {
		t.Fatalf("a Link is %d bytes: raise linkCost (%d) to at least %d", size, linkCost, size+512)
	}
	if ptrSize != int(unsafe.Sizeof(uintptr(0))) {
		t.Fatalf("ptrSize %d", ptrSize)
	}
}
