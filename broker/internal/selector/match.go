package selector

import (
	"bytes"
	"math"
	"unicode/utf8"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/message"
)

// Match reports whether the encoded message msg is selected: the
// selector is true for it. A message whose sections do not scan is an
// error; one whose header or properties do not parse, when the selector
// names a JMS field, too.
func (s *Selector) Match(msg []byte) (bool, error) {
	secs, err := message.Scan(msg)
	if err != nil {
		return false, err
	}
	return s.MatchSections(&secs)
}

// MatchSections is Match of a message already scanned.
func (s *Selector) MatchSections(secs *message.Sections) (bool, error) {
	m := msg{app: secs.ApplicationProperties}
	if s.header {
		h, err := message.ParseHeader(secs.Header)
		if err != nil {
			return false, err
		}
		m.h = h
	}
	if s.props {
		p, err := message.ParseProperties(secs.Properties)
		if err != nil {
			return false, err
		}
		m.p = p
	}
	v := s.eval(s.root, &m)
	return v.k == kBool && v.b, nil
}

// msg is what the evaluation reads of one message.
type msg struct {
	app []byte
	h   message.Header
	p   message.Properties
}

var (
	unknown = val{}
	vFalse  = val{k: kBool}
	vTrue   = val{k: kBool, b: true}
)

func boolVal(b bool) val {
	if b {
		return vTrue
	}
	return vFalse
}

// eval evaluates node i; recursion is bounded by the parser's MaxDepth
// for nesting, and by the selector's length for chains of operators.
func (s *Selector) eval(i int32, m *msg) val {
	n := &s.nodes[i]
	switch n.op {
	case opLit:
		return n.lit
	case opProp:
		return property(m.app, n.key)
	case opJMS:
		return jmsValue(n.jms, m)
	case opOr:
		l := s.eval(n.l, m)
		if l.k == kBool && l.b {
			return vTrue
		}
		r := s.eval(n.r, m)
		switch {
		case r.k == kBool && r.b:
			return vTrue
		case l.k == kBool && r.k == kBool:
			return vFalse
		}
		return unknown
	case opAnd:
		l := s.eval(n.l, m)
		if l.k == kBool && !l.b {
			return vFalse
		}
		r := s.eval(n.r, m)
		switch {
		case r.k == kBool && !r.b:
			return vFalse
		case l.k == kBool && r.k == kBool:
			return vTrue
		}
		return unknown
	case opNot:
		x := s.eval(n.x, m)
		if x.k != kBool {
			return unknown
		}
		return boolVal(!x.b)
	case opEq, opNe, opLt, opLe, opGt, opGe:
		return compare(n.op, s.eval(n.l, m), s.eval(n.r, m))
	case opAdd, opSub, opMul, opDiv:
		return arith(n.op, s.eval(n.l, m), s.eval(n.r, m))
	case opNeg:
		x := s.eval(n.x, m)
		switch x.k {
		case kLong:
			return val{k: kLong, i: -x.i}
		case kDouble:
			return val{k: kDouble, f: -x.f}
		}
		return unknown
	case opBetween:
		x := s.eval(n.x, m)
		r := and3(compare(opGe, x, s.eval(n.l, m)), compare(opLe, x, s.eval(n.r, m)))
		return not3(r, n.neg)
	case opLike:
		x := s.eval(n.x, m)
		switch x.k {
		case kNull:
			return unknown
		case kString:
			return not3(boolVal(matchLike(n.like, x.s)), n.neg)
		}
		return vFalse
	case opIn:
		x := s.eval(n.x, m)
		switch x.k {
		case kNull:
			return unknown
		case kString:
			found := false
			for _, e := range n.in {
				if string(x.s) == e {
					found = true
					break
				}
			}
			return not3(boolVal(found), n.neg)
		}
		return vFalse
	case opIsNull:
		return boolVal((s.eval(n.x, m).k == kNull) != n.neg)
	}
	return unknown
}

func and3(l, r val) val {
	switch {
	case l.k == kBool && !l.b, r.k == kBool && !r.b:
		return vFalse
	case l.k == kBool && r.k == kBool:
		return vTrue
	}
	return unknown
}

// not3 negates x when neg is set, unknown staying unknown.
func not3(x val, neg bool) val {
	if !neg || x.k != kBool {
		return x
	}
	return boolVal(!x.b)
}

// compare applies a comparison: unknown with NULL, false across types,
// = and <> only for strings and booleans, numbers by value.
func compare(o op, l, r val) val {
	if l.k == kNull || r.k == kNull {
		return unknown
	}
	ln, rn := l.k == kLong || l.k == kDouble, r.k == kLong || r.k == kDouble
	switch {
	case ln && rn:
		var c int
		if l.k == kLong && r.k == kLong {
			c = cmpInt(l.i, r.i)
		} else {
			lf, rf := l.num(), r.num()
			if math.IsNaN(lf) || math.IsNaN(rf) {
				return boolVal(o == opNe)
			}
			c = cmpFloat(lf, rf)
		}
		switch o {
		case opEq:
			return boolVal(c == 0)
		case opNe:
			return boolVal(c != 0)
		case opLt:
			return boolVal(c < 0)
		case opLe:
			return boolVal(c <= 0)
		case opGt:
			return boolVal(c > 0)
		}
		return boolVal(c >= 0)
	case l.k != r.k:
		return vFalse
	}
	var eq bool
	switch l.k {
	case kString:
		eq = bytes.Equal(l.s, r.s)
	default: // kBool
		eq = l.b == r.b
	}
	switch o {
	case opEq:
		return boolVal(eq)
	case opNe:
		return boolVal(!eq)
	}
	return unknown
}

func (v val) num() float64 {
	if v.k == kLong {
		return float64(v.i)
	}
	return v.f
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// arith applies + - * /: NULL for NULL or a non-number, exact while
// both are exact (division by zero NULL), approximate otherwise.
func arith(o op, l, r val) val {
	ln, rn := l.k == kLong || l.k == kDouble, r.k == kLong || r.k == kDouble
	if !ln || !rn {
		return unknown
	}
	if l.k == kLong && r.k == kLong {
		switch o {
		case opAdd:
			return val{k: kLong, i: l.i + r.i}
		case opSub:
			return val{k: kLong, i: l.i - r.i}
		case opMul:
			return val{k: kLong, i: l.i * r.i}
		}
		if r.i == 0 || l.i == math.MinInt64 && r.i == -1 {
			return unknown
		}
		return val{k: kLong, i: l.i / r.i}
	}
	a, b := l.num(), r.num()
	switch o {
	case opAdd:
		return val{k: kDouble, f: a + b}
	case opSub:
		return val{k: kDouble, f: a - b}
	case opMul:
		return val{k: kDouble, f: a * b}
	}
	return val{k: kDouble, f: a / b}
}

// property is the application property key of the section app, or NULL.
func property(app []byte, key string) val {
	if app == nil {
		return unknown
	}
	v, err := message.Lookup(app, key)
	if err != nil {
		return unknown
	}
	switch v.Kind() {
	case amqpsax.KindString, amqpsax.KindSymbol:
		return val{k: kString, s: v.Bytes()}
	case amqpsax.KindBool:
		return boolVal(v.Bool())
	case amqpsax.KindByte, amqpsax.KindShort, amqpsax.KindInt, amqpsax.KindLong:
		return val{k: kLong, i: v.Int()}
	case amqpsax.KindUbyte, amqpsax.KindUshort, amqpsax.KindUint:
		return val{k: kLong, i: int64(v.Uint())}
	case amqpsax.KindUlong:
		if u := v.Uint(); u > math.MaxInt64 {
			return val{k: kDouble, f: float64(u)}
		} else {
			return val{k: kLong, i: int64(u)}
		}
	case amqpsax.KindFloat:
		return val{k: kDouble, f: float64(v.Float())}
	case amqpsax.KindDouble:
		return val{k: kDouble, f: v.Double()}
	case amqpsax.KindTimestamp:
		return val{k: kLong, i: v.Timestamp()}
	}
	return unknown
}

var (
	persistent    = []byte("PERSISTENT")
	nonPersistent = []byte("NON_PERSISTENT")
)

// jmsValue is a JMS header field, read from the AMQP message as Qpid JMS
// and Artemis map it.
func jmsValue(f jmsField, m *msg) val {
	p := &m.p
	switch f {
	case jmsDeliveryMode:
		if m.h.Durable {
			return val{k: kString, s: persistent}
		}
		return val{k: kString, s: nonPersistent}
	case jmsPriority:
		return val{k: kLong, i: int64(m.h.Priority)}
	case jmsDeliveryCount:
		return val{k: kLong, i: int64(m.h.DeliveryCount) + 1}
	case jmsMessageID:
		return idVal(p.MessageID)
	case jmsCorrelationID:
		return idVal(p.CorrelationID)
	case jmsTimestamp:
		if p.HasCreationTime {
			return val{k: kLong, i: p.CreationTime}
		}
	case jmsExpiration:
		if p.HasAbsoluteExpiryTime {
			return val{k: kLong, i: p.AbsoluteExpiryTime}
		}
	case jmsType:
		return bytesVal(p.Subject)
	case jmsUserID:
		return bytesVal(p.UserID)
	case jmsGroupID:
		return bytesVal(p.GroupID)
	case jmsGroupSeq:
		if p.HasGroupSequence {
			return val{k: kLong, i: int64(p.GroupSequence)}
		}
	}
	return unknown
}

func idVal(id message.ID) val {
	if id.Kind == amqpsax.KindString {
		return val{k: kString, s: id.Bytes}
	}
	return unknown
}

func bytesVal(b []byte) val {
	if b == nil || !utf8.Valid(b) {
		return unknown
	}
	return val{k: kString, s: b}
}
