package engine

import (
	"strconv"

	"github.com/amqpsax/amqpsax/frame"
)

// The per-connection memory budget (Config.MaxMemory): the bytes the
// engine holds for what the peer can make it keep — its open (with its
// properties and capabilities), sessions, links with their attach (name,
// terminus, filter, properties, capabilities, unsettled map: one copy,
// the rest views of it, and the index of that map) and the table of its
// handles, the ring of unsettled incoming deliveries with the tags a
// durable receiver keeps, a transfer's txn-id kept, deliveries being
// joined — are counted as they are taken and given back as they go, at
// the size allocated. A peer that would take the connection past its
// budget gets the connection closed with amqp:resource-limit-exceeded.
// What this end's own application creates (its sessions, links and
// sends) is counted the same way, so the figure is the connection's
// whole holding.

// DefaultMaxMemory is the budget of a connection whose Config.MaxMemory is
// 0: room for one message of the default MaxMessageSize being joined and
// the sessions and links of a busy client beside it.
const DefaultMaxMemory = 96 << 20

// What the budget counts for each object, beyond the bytes it keeps: the
// engine's own structures, rounded up.
const (
	sessionCost = 1024 // a Session with its slices of links
	// a Link (about 1.5 KiB with the peer's attach parsed: TestLinkCost
	// holds it under 2,048 bytes) and its places in the maps; its name is
	// in the attach it keeps, counted apart
	linkCost     = 2560
	deliveryCost = 48 // one place in a ring of unsettled deliveries
	// one entry of the index of a peer's unsettled map (Link.RemoteUnsettled
	// builds it when first asked; its keys are copies, counted apart):
	// counted with the attach, whether or not it is built
	unsettledEntryCost = 96
)

// ptrSize is what one place in a table of links by the peer's handle
// (Session.byRemote) costs.
const ptrSize = 4 << (^uintptr(0) >> 63)

// charge takes n bytes of the budget, or returns the connection error
// amqp:resource-limit-exceeded when the budget has not that much left.
func (c *Conn) charge(n int) error {
	if c.held+n > c.cfg.MaxMemory {
		return &connError{frame.CondResourceLimitExceeded, "memory budget of " + strconv.Itoa(c.cfg.MaxMemory) +
			" bytes exceeded (Config.MaxMemory): " + strconv.Itoa(c.held) + " held, " + strconv.Itoa(n) + " more asked"}
	}
	c.held += n
	c.peak = max(c.peak, c.held)
	return nil
}

// release gives n bytes back to the budget.
func (c *Conn) release(n int) { c.held -= n }

// Held returns the bytes of the connection's memory budget in use now,
// and the most it has used (Config.MaxMemory bounds both).
func (c *Conn) Held() (now, peak int) { return c.held, c.peak }

// Charge takes n bytes of the connection's memory budget (Config.MaxMemory)
// for what the application holds on the peer's behalf beside the engine
// (a broker's messages of an open transaction), and reports whether the
// budget had them: false takes nothing, and leaves the connection open
// (the application refuses what would have held them). Refund gives
// them back; Held counts them. Call both on the connection's goroutine.
func (c *Conn) Charge(n int) bool {
	if n < 0 || c.held+n > c.cfg.MaxMemory {
		return false
	}
	c.held += n
	c.peak = max(c.peak, c.held)
	return true
}

// Refund gives back n bytes that Charge took.
func (c *Conn) Refund(n int) { c.held -= n }

// Charge takes n bytes of the connection's memory budget for what the
// application keeps for the link (a broker's state of a consumer or
// producer), as Conn.Charge does; they are given back when the link is
// freed (its detach, or the connection's end).
func (l *Link) Charge(n int) bool {
	if !l.s.c.Charge(n) {
		return false
	}
	l.held += n
	return true
}
