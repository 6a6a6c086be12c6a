package broker

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"regexp"
	"unicode/utf8"

	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
)

// This file is what the broker checks of clients it need not trust:
// addresses (UTF-8, bounded), who may do what to which node
// (Options.Permissions, at attach), dynamic nodes (unguessable, their
// connection's alone), and what one connection or account may make
// (nodes, durable links).

// Op is what a link does to a node, as RabbitMQ's permissions name
// them: Configure makes it, Write sends to it, Read consumes from it.
type Op uint8

const (
	Configure Op = 1 << iota // make a node (the first link to its address)
	Write                    // send to a node (a producer's link, or a message routed to it)
	Read                     // consume from a node (a consumer's link)
)

func (o Op) String() string {
	switch o {
	case Configure:
		return "configure"
	case Write:
		return "write"
	case Read:
		return "read"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// MaxAddressLength bounds the bytes of an address a link or a message's
// route names: a longer one is refused with amqp:invalid-field (RabbitMQ
// bounds queue names at 255 bytes).
const MaxAddressLength = 1024

// Defaults of the zero Options, for clients that are not all trusted.
const (
	DefaultMaxQueuesPerConnection    = 1_000 // nodes the links of one connection may make
	DefaultMaxQueuesPerAccount       = 5_000 // nodes one account's connections may make
	DefaultMaxDurableLinksPerAccount = 1_000 // durable links one account may have kept
	DefaultMaxDurableLinksPerConn    = 256   // durable links one connection may make
)

// Errors of the checks, as the link's detach (or a message's rejection)
// carries them.
var (
	errNotUTF8        = engine.NewError(frame.CondInvalidField, "an address must be UTF-8 (an AMQP string)")
	errTooLong        = engine.NewError(frame.CondInvalidField, fmt.Sprintf("an address is at most %d bytes", MaxAddressLength))
	errNameNotUTF8    = engine.NewError(frame.CondInvalidField, "a link's name must be UTF-8 (an AMQP string)")
	errExclusive      = engine.NewError(frame.CondUnauthorizedAccess, "a dynamic node is consumed only by the connection that made it")
	errConnQueues     = engine.NewError(frame.CondResourceLimitExceeded, "this connection made as many nodes as it may")
	errAccountQueues  = engine.NewError(frame.CondResourceLimitExceeded, "this account made as many nodes as it may")
	errAccountDurable = engine.NewError(frame.CondResourceLimitExceeded, "this account keeps as many durable links as it may")
	errConnDurable    = engine.NewError(frame.CondResourceLimitExceeded, "this connection has made as many durable links as it may")
)

// checkAddress returns the error for an address a node may not have:
// not UTF-8, or longer than MaxAddressLength. It allocates nothing.
func checkAddress(addr []byte) *engine.Error {
	if len(addr) > MaxAddressLength {
		return errTooLong
	}
	if !utf8.Valid(addr) {
		return errNotUTF8
	}
	return nil
}

// denied returns the error for an account that may not op the node at
// addr.
func denied(identity string, addr []byte, op Op) *engine.Error {
	return engine.NewError(frame.CondUnauthorizedAccess, fmt.Sprintf("%q may not %v %q", identity, op, addr))
}

// allowed reports that identity may op the node at addr: always, with
// no Options.Permissions.
func (b *Broker) allowed(identity string, addr []byte, op Op) bool {
	return b.opts.Permissions == nil || b.opts.Permissions(identity, string(addr), op)
}

// made counts the nodes a connection made that are there, in a struct
// of its own: a node outlives its connection, and should not keep the
// connection's state in memory with it.
type made struct {
	nodes    int // nodes it made that are there
	durables int // durable link states it made (Options.MaxDurableLinksPerConnection)
}

// account is what one identity's connections have made, under the
// broker's lock.
type account struct {
	name     string
	nodes    int // nodes it made that are there
	durables int // durable links whose state the broker keeps for it
}

// accountLocked returns the account of identity, made when there is
// none.
func (b *Broker) accountLocked(identity string) *account {
	a := b.accounts[identity]
	if a == nil {
		a = &account{name: identity}
		b.accounts[identity] = a
	}
	return a
}

// dropAccountLocked forgets a once it holds nothing.
func (b *Broker) dropAccountLocked(a *account) {
	if a != nil && a.nodes == 0 && a.durables == 0 && b.accounts[a.name] == a {
		delete(b.accounts, a.name)
	}
}

// openLocked returns the node at addr for a link or message of cn:
// made when there is none and the checks allow (configure: the account
// may make it), fan-out when its address or the link asks.
func (b *Broker) openLocked(cn *conn, addr []byte, wantFanout, configure bool) (*node, *engine.Error) {
	if n := b.nodes[string(addr)]; n != nil {
		return n, nil
	}
	if e := checkAddress(addr); e != nil {
		return nil, e
	}
	if b.opts.MaxQueues > 0 && len(b.nodes) >= b.opts.MaxQueues {
		return nil, errTooManyQueues
	}
	if !configure {
		return nil, denied(cn.identity, addr, Configure)
	}
	if b.opts.MaxQueuesPerConnection > 0 && cn.made.nodes >= b.opts.MaxQueuesPerConnection {
		return nil, errConnQueues
	}
	a := b.accountLocked(cn.identity)
	if b.opts.MaxQueuesPerAccount > 0 && a.nodes >= b.opts.MaxQueuesPerAccount {
		b.dropAccountLocked(a)
		return nil, errAccountQueues
	}
	n := b.nodeLocked(addr, wantFanout)
	n.maker, n.account = cn.made, a
	cn.made.nodes++
	a.nodes++
	return n, nil
}

// unchargeLocked gives back what making n took of its connection's and
// account's quotas, when it is removed.
func (b *Broker) unchargeLocked(n *node) {
	if n.maker != nil {
		n.maker.nodes--
		n.maker = nil
	}
	if a := n.account; a != nil {
		a.nodes--
		n.account = nil
		b.dropAccountLocked(a)
	}
}

// mayRouteLocked checks a message of cn routed to addr: its address,
// Write, and Configure when the node is not there.
func (b *Broker) mayRouteLocked(cn *conn, addr []byte) *engine.Error {
	if e := checkAddress(addr); e != nil {
		return e
	}
	if !b.allowed(cn.identity, addr, Write) {
		return denied(cn.identity, addr, Write)
	}
	if b.nodes[string(addr)] == nil && !b.allowed(cn.identity, addr, Configure) {
		return denied(cn.identity, addr, Configure)
	}
	return nil
}

// newDynamicAddress returns a fresh address for a dynamic node: 128
// random bits, so that no client can guess another's.
func newDynamicAddress() []byte {
	var r [16]byte
	rand.Read(r[:])
	const prefix = "amqpsax.dynamic."
	out := make([]byte, len(prefix)+base64.RawURLEncoding.EncodedLen(len(r)))
	copy(out, prefix)
	base64.RawURLEncoding.Encode(out[len(prefix):], r[:])
	return out
}

// Grant is one account's permissions, as RabbitMQ's: three regular
// expressions (RE2 syntax, package regexp), each matched against the
// whole address. Configure names the nodes the account may make, Write
// those it may send to, Read those it may consume from. An empty
// expression allows nothing; ".*" allows everything.
type Grant struct {
	Configure, Write, Read string
}

// Permissions are accounts' Grants, compiled; their Allow is an
// Options.Permissions. An identity with no Grant may do nothing.
type Permissions struct {
	m map[string]*[3]*regexp.Regexp
}

// NewPermissions compiles grants, by identity (the name SASL
// authenticated; "anonymous" for SASL ANONYMOUS, "" for a client that
// skipped SASL).
func NewPermissions(grants map[string]Grant) (*Permissions, error) {
	p := &Permissions{m: make(map[string]*[3]*regexp.Regexp, len(grants))}
	for id, g := range grants {
		var res [3]*regexp.Regexp
		for i, e := range [3]string{g.Configure, g.Write, g.Read} {
			if e == "" {
				continue
			}
			re, err := regexp.Compile(`^(?:` + e + `)$`)
			if err != nil {
				return nil, fmt.Errorf("broker: permissions of %q: %w", id, err)
			}
			res[i] = re
		}
		p.m[id] = &res
	}
	return p, nil
}

// Allow reports that identity may op the node at address.
func (p *Permissions) Allow(identity, address string, op Op) bool {
	res := p.m[identity]
	if res == nil {
		return false
	}
	var re *regexp.Regexp
	switch op {
	case Configure:
		re = res[0]
	case Write:
		re = res[1]
	case Read:
		re = res[2]
	}
	return re != nil && re.MatchString(address)
}
