// Package composite reads and writes the list of a composite type of the
// AMQP 1.0 spec (part 1 §1.4: a described list of fields) against a table
// that describes the type as the spec's XML does: each field's name, the
// kind it has on the wire, whether it is mandatory or multiple, and its
// default. Package frame reads and writes its performatives, terminus and
// delivery states with it: one table, one [Reader], one [Writer]. Package
// message takes its header and properties sections' fields and defaults
// from it, and reads and writes them with the wire primitives, a fraction
// of the work; its tests hold both to the Reader and the Writer.
//
// The table of each of frame's types lives in frame (spec.go); the
// message sections', [Header] and [Properties], here, where message,
// which frame imports, can use them. frame's tests check every row
// against the spec's XML.
package composite

import (
	"strconv"

	"github.com/amqpsax/amqpsax"
)

// Field describes one field of a composite type.
type Field struct {
	Name string
	// Kind is the kind the spec requires on the wire (KindDescribed for a
	// field holding a composite), or KindInvalid where the spec takes
	// values of several types (message-id): Also lists them.
	Kind amqpsax.Kind
	// Also has bit k set when a value of kind k is taken too: the kinds of
	// a field of several types, and the leniencies deployed peers need (a
	// symbol where the spec has a string).
	Also      uint32
	Want      string // the spec's type, for errors
	Mandatory bool
	Multiple  bool // an array of Kind is taken too
	// Default is the spec's default, as its XML gives it but with a
	// choice's value for its name ("2" for sender-settle-mode mixed):
	// "4", "false", "session-end"; "" where the spec gives none.
	Default string
	def     uint64 // Default as a number (false 0, true 1), 0 when none
	plain   uint32 // bit k: a value of kind k is taken as it is, nothing in it to check
}

// Takes reports whether a value of kind k is one the field takes: its
// kind, or one of Also. (An array of Kind for a multiple field, and a
// list of symbols, are the Reader's to check.)
func (f *Field) Takes(k amqpsax.Kind) bool { return k == f.Kind || f.Also&(1<<k) != 0 }

// Def returns f with the default d.
func (f Field) Def(d string) Field {
	f.Default = d
	return f
}

// Or returns f also taking values of kinds ks.
func (f Field) Or(ks ...amqpsax.Kind) Field {
	for _, k := range ks {
		f.Also |= 1 << k
	}
	return f
}

// Mand is a mandatory field of kind k.
func Mand(name string, k amqpsax.Kind) Field {
	return Field{Name: name, Kind: k, Want: k.String(), Mandatory: true}
}

// Opt is a field of kind k that may be absent.
func Opt(name string, k amqpsax.Kind) Field { return Field{Name: name, Kind: k, Want: k.String()} }

// Syms is a field holding a symbol or an array of symbols.
func Syms(name string) Field {
	return Field{Name: name, Kind: amqpsax.KindSymbol, Want: "symbol or array of symbols", Multiple: true}
}

// Comp is a field holding a composite value that provides requires.
func Comp(name, requires string) Field {
	return Field{Name: name, Kind: amqpsax.KindDescribed, Want: requires}
}

// Spec describes one composite type: its name, descriptor and fields.
type Spec struct {
	Name       string
	Descriptor amqpsax.Descriptor
	Fields     []Field
	mand       uint32 // bit i: field i is mandatory
}

// New returns the Spec of the composite type name with descriptor d.
func New(name string, d amqpsax.Descriptor, fields ...Field) *Spec {
	if d == 0 || d > 0xff {
		panic("composite: descriptor of " + name + " is not a smallulong") // Begin writes it as one
	}
	s := &Spec{Name: name, Descriptor: d, Fields: fields}
	for i := range fields {
		f := &fields[i]
		if f.Mandatory {
			s.mand |= 1 << i
		}
		switch f.Kind {
		case amqpsax.KindMap, amqpsax.KindArray, amqpsax.KindDescribed, amqpsax.KindList:
		default:
			if !f.Multiple {
				f.plain = 1<<f.Kind | f.Also
			}
		}
		switch f.Default {
		case "", "false":
		case "true":
			f.def = 1
		default:
			f.def, _ = strconv.ParseUint(f.Default, 10, 64) // a symbol's default: not a number
		}
	}
	return s
}

// DefaultUint returns the default of field i as a number: a boolean's as
// 0 or 1, and 0 where the spec gives none or a symbol.
func (s *Spec) DefaultUint(i int) uint64 { return s.Fields[i].def }

// Off reports whether v is off the default of field i, as DefaultUint
// gives it; OffBool likewise for a boolean.
func (s *Spec) Off(i int, v uint64) bool { return v != s.Fields[i].def }

func (s *Spec) OffBool(i int, v bool) bool {
	var u uint64
	if v {
		u = 1
	}
	return u != s.Fields[i].def
}

// The fields of the message's header section (part 3 §3.2.1).
const (
	HeaderDurable = iota
	HeaderPriority
	HeaderTTL
	HeaderFirstAcquirer
	HeaderDeliveryCount
	HeaderFields // how many: len(Header.Fields)
)

// The fields of the message's properties section (part 3 §3.2.4).
const (
	PropertiesMessageID = iota
	PropertiesUserID
	PropertiesTo
	PropertiesSubject
	PropertiesReplyTo
	PropertiesCorrelationID
	PropertiesContentType
	PropertiesContentEncoding
	PropertiesAbsoluteExpiryTime
	PropertiesCreationTime
	PropertiesGroupID
	PropertiesGroupSequence
	PropertiesReplyToGroupID
	PropertiesFields // how many: len(Properties.Fields)
)

// messageID is a message-id or correlation-id: a ulong, uuid, binary or
// string (the types that provide message-id).
var messageID = Field{Kind: amqpsax.KindInvalid, Want: "ulong, uuid, binary or string"}.
	Or(amqpsax.KindUlong, amqpsax.KindUUID, amqpsax.KindBinary, amqpsax.KindString)

func id(name string) Field {
	f := messageID
	f.Name = name
	return f
}

// str is a string field that takes a symbol too (peers write both), sym
// a symbol field that takes a string.
func str(name string) Field { return Opt(name, amqpsax.KindString).Or(amqpsax.KindSymbol) }
func sym(name string) Field { return Opt(name, amqpsax.KindSymbol).Or(amqpsax.KindString) }

// Header and Properties are the message's header and properties sections.
// The header's defaults are the published standard's (OASIS AMQP 1.0,
// part 3 §3.2.1): the working-group XML frame's tests read has none there.
var (
	Header = New("header", amqpsax.DescriptorHeader,
		Opt("durable", amqpsax.KindBool).Def("false"), Opt("priority", amqpsax.KindUbyte).Def("4"),
		Opt("ttl", amqpsax.KindUint), Opt("first-acquirer", amqpsax.KindBool).Def("false"),
		Opt("delivery-count", amqpsax.KindUint).Def("0"))
	Properties = New("properties", amqpsax.DescriptorProperties,
		id("message-id"), Opt("user-id", amqpsax.KindBinary), str("to"), str("subject"), str("reply-to"),
		id("correlation-id"), sym("content-type"), sym("content-encoding"),
		Opt("absolute-expiry-time", amqpsax.KindTimestamp), Opt("creation-time", amqpsax.KindTimestamp),
		str("group-id"), Opt("group-sequence", amqpsax.KindUint), str("reply-to-group-id"))
)
