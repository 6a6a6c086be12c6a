package selector

// A reference evaluator, written from the grammar in the package doc and
// JMS 2.0 §3.8.1 and sharing nothing with the production code: its own
// tokenizer (a regular expression), its own parser to Go closures over a
// map of Go values, LIKE by regexp. FuzzSelector holds the two to the same
// answers; where they part, one of them misreads the grammar.

import (
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// refProps are a message's application properties: nil, bool, int64,
// float64 or string values.
type refProps map[string]any

// refExpr is a compiled reference expression; its result is nil
// (unknown), bool, int64, float64 or string.
type refExpr func(refProps) any

var refTokenRE = regexp.MustCompile(`^(?:\s+|'(?:[^']|'')*'|0[xX][0-9a-fA-F]+[lL]?|(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?|[0-9]+[eE][+-]?[0-9]+[fFdD]?|[0-9]+[fFdDlL]?|<>|<=|>=|[=<>+\-*/(),]|[\p{L}_$][\p{L}\p{Nd}_$]*)`)

var (
	refGlued = regexp.MustCompile(`^[\p{L}\p{Nd}_$.]`)
	refIdent = regexp.MustCompile(`^[\p{L}_$]`)
)

type refParser struct {
	toks     []string
	i        int
	depth    int
	lastKind string // of the expression just parsed: cond, ident, bool, numlit or value
}

var errRef = errors.New("reference: does not parse")

func refParse(src string) (refExpr, error) {
	if len(src) > MaxLength {
		return nil, errRef
	}
	if !utf8.ValidString(src) {
		return nil, errRef
	}
	var toks []string
	for rest := src; rest != ""; {
		m := refTokenRE.FindString(rest)
		if m == "" {
			return nil, errRef
		}
		rest = rest[len(m):]
		// a number glued to a letter, a digit or a point (12abc, 1.5.3)
		// is one bad number, not two tokens
		if refIsNumber(m) && rest != "" && refGlued.MatchString(rest) {
			return nil, errRef
		}
		if strings.TrimSpace(m) != "" {
			toks = append(toks, m)
		}
	}
	p := &refParser{toks: toks}
	e, ok := p.or()
	if !ok || p.i != len(toks) || e == nil {
		return nil, errRef
	}
	if p.lastKind != "cond" && p.lastKind != "ident" && p.lastKind != "bool" {
		return nil, errRef
	}
	return e, nil
}

func refIsNumber(t string) bool { return t != "" && (t[0] >= '0' && t[0] <= '9' || t[0] == '.') }
func refIsIdent(t string) bool  { return refIdent.MatchString(t) }

func (p *refParser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func (p *refParser) key(k string) bool { return refASCIIFold(p.peek(), k) }

// refASCIIFold: keywords are ASCII, matched without case; no other
// letter (ſ, K) stands for one.
func refASCIIFold(t, k string) bool {
	for i := 0; i < len(t); i++ {
		if t[i] >= utf8.RuneSelf {
			return false
		}
	}
	return strings.EqualFold(t, k)
}

var refKeywords = []string{"AND", "OR", "NOT", "BETWEEN", "LIKE", "IN", "IS", "NULL", "ESCAPE", "TRUE", "FALSE"}

func refIsKeyword(t string) bool {
	for _, k := range refKeywords {
		if refASCIIFold(t, k) {
			return true
		}
	}
	return false
}

func (p *refParser) setKind(k string) { p.lastKind = k }

func (p *refParser) or() (refExpr, bool) {
	l, ok := p.and()
	for ok && p.key("OR") {
		if !p.isCond() {
			return nil, false
		}
		p.i++
		var r refExpr
		r, ok = p.and()
		if !ok || !p.isCond() {
			return nil, false
		}
		ll, rr := l, r
		l = func(m refProps) any {
			a, b := ll(m), rr(m)
			if a == true || b == true {
				return true
			}
			if a == false && b == false {
				return false
			}
			return nil
		}
		p.setKind("cond")
	}
	return l, ok
}

func (p *refParser) isCond() bool {
	return p.lastKind == "cond" || p.lastKind == "ident" || p.lastKind == "bool"
}

func (p *refParser) and() (refExpr, bool) {
	l, ok := p.not()
	for ok && p.key("AND") {
		if !p.isCond() {
			return nil, false
		}
		p.i++
		var r refExpr
		r, ok = p.not()
		if !ok || !p.isCond() {
			return nil, false
		}
		ll, rr := l, r
		l = func(m refProps) any {
			a, b := ll(m), rr(m)
			if a == false || b == false {
				return false
			}
			if a == true && b == true {
				return true
			}
			return nil
		}
		p.setKind("cond")
	}
	return l, ok
}

func (p *refParser) not() (refExpr, bool) {
	if p.key("NOT") {
		p.depth++
		if p.depth > MaxDepth {
			return nil, false
		}
		p.i++
		x, ok := p.not()
		p.depth--
		if !ok || !p.isCond() {
			return nil, false
		}
		p.setKind("cond")
		return func(m refProps) any {
			if b, ok := x(m).(bool); ok {
				return !b
			}
			return nil
		}, true
	}
	return p.cmp()
}

func (p *refParser) str() (string, bool) {
	t := p.peek()
	if len(t) < 2 || t[0] != '\'' {
		return "", false
	}
	p.i++
	return strings.ReplaceAll(t[1:len(t)-1], "''", "'"), true
}

func refNegate(x any, neg bool) any {
	if b, ok := x.(bool); ok && neg {
		return !b
	}
	return x
}

func (p *refParser) cmp() (refExpr, bool) {
	x, ok := p.sum()
	if !ok {
		return nil, false
	}
	switch t := p.peek(); t {
	case "=", "<>", "<", "<=", ">", ">=":
		p.i++
		y, ok := p.sum()
		if !ok {
			return nil, false
		}
		p.setKind("cond")
		return func(m refProps) any { return refCompare(t, x(m), y(m)) }, true
	}
	if p.key("IS") {
		p.i++
		neg := p.key("NOT")
		if neg {
			p.i++
		}
		if !p.key("NULL") {
			return nil, false
		}
		p.i++
		p.setKind("cond")
		return func(m refProps) any { return (x(m) == nil) != neg }, true
	}
	neg := p.key("NOT")
	if neg {
		p.i++
	}
	switch {
	case p.key("BETWEEN"):
		p.i++
		lo, ok := p.sum()
		if !ok || !p.key("AND") {
			return nil, false
		}
		p.i++
		hi, ok := p.sum()
		if !ok {
			return nil, false
		}
		p.setKind("cond")
		return func(m refProps) any {
			v := x(m)
			a, b := refCompare(">=", v, lo(m)), refCompare("<=", v, hi(m))
			var r any
			switch {
			case a == false || b == false:
				r = false
			case a == true && b == true:
				r = true
			}
			return refNegate(r, neg)
		}, true
	case p.key("LIKE"):
		p.i++
		pat, ok := p.str()
		if !ok {
			return nil, false
		}
		esc := ""
		if p.key("ESCAPE") {
			p.i++
			e, ok := p.str()
			if !ok || len([]rune(e)) != 1 {
				return nil, false
			}
			esc = e
		}
		re, ok := refLikeRE(pat, esc)
		if !ok {
			return nil, false
		}
		p.setKind("cond")
		return func(m refProps) any {
			switch v := x(m).(type) {
			case nil:
				return nil
			case string:
				return refNegate(re.MatchString(v), neg)
			}
			return false
		}, true
	case p.key("IN"):
		p.i++
		if p.peek() != "(" {
			return nil, false
		}
		p.i++
		var set []string
		for {
			s, ok := p.str()
			if !ok {
				return nil, false
			}
			set = append(set, s)
			if p.peek() == "," {
				p.i++
				continue
			}
			if p.peek() != ")" {
				return nil, false
			}
			p.i++
			break
		}
		p.setKind("cond")
		return func(m refProps) any {
			switch v := x(m).(type) {
			case nil:
				return nil
			case string:
				in := false
				for _, s := range set {
					in = in || s == v
				}
				return refNegate(in, neg)
			}
			return false
		}, true
	}
	if neg {
		return nil, false
	}
	return x, true
}

// refLikeRE turns a LIKE pattern into an anchored regular expression.
func refLikeRE(pat, esc string) (*regexp.Regexp, bool) {
	var b strings.Builder
	b.WriteString(`(?s)\A`)
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case esc != "" && string(r) == esc:
			if i+1 == len(rs) {
				return nil, false
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case r == '%':
			b.WriteString(`.*`)
		case r == '_':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`\z`)
	re, err := regexp.Compile(b.String())
	return re, err == nil
}

func refCompare(o string, a, b any) any {
	if a == nil || b == nil {
		return nil
	}
	af, aNum := refNum(a)
	bf, bNum := refNum(b)
	if aNum && bNum {
		ai, aInt := a.(int64)
		bi, bInt := b.(int64)
		var c int
		switch {
		case aInt && bInt:
			c = map[bool]int{true: -1, false: 0}[ai < bi] + map[bool]int{true: 1, false: 0}[ai > bi]
		case math.IsNaN(af) || math.IsNaN(bf):
			return o == "<>"
		default:
			c = map[bool]int{true: -1, false: 0}[af < bf] + map[bool]int{true: 1, false: 0}[af > bf]
		}
		switch o {
		case "=":
			return c == 0
		case "<>":
			return c != 0
		case "<":
			return c < 0
		case "<=":
			return c <= 0
		case ">":
			return c > 0
		}
		return c >= 0
	}
	switch av := a.(type) {
	case string:
		bv, ok := b.(string)
		if !ok {
			return false
		}
		return refEqOrUnknown(o, av == bv)
	case bool:
		bv, ok := b.(bool)
		if !ok {
			return false
		}
		return refEqOrUnknown(o, av == bv)
	}
	return false
}

func refEqOrUnknown(o string, eq bool) any {
	switch o {
	case "=":
		return eq
	case "<>":
		return !eq
	}
	return nil
}

func refNum(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func (p *refParser) sum() (refExpr, bool) {
	l, ok := p.product()
	for ok && (p.peek() == "+" || p.peek() == "-") {
		o := p.peek()
		p.i++
		var r refExpr
		r, ok = p.product()
		ll, rr := l, r
		l = func(m refProps) any { return refArith(o, ll(m), rr(m)) }
		p.setKind("value")
	}
	return l, ok
}

func (p *refParser) product() (refExpr, bool) {
	l, ok := p.unary()
	for ok && (p.peek() == "*" || p.peek() == "/") {
		o := p.peek()
		p.i++
		var r refExpr
		r, ok = p.unary()
		ll, rr := l, r
		l = func(m refProps) any { return refArith(o, ll(m), rr(m)) }
		p.setKind("value")
	}
	return l, ok
}

func refArith(o string, a, b any) any {
	af, aNum := refNum(a)
	bf, bNum := refNum(b)
	if !aNum || !bNum {
		return nil
	}
	ai, aInt := a.(int64)
	bi, bInt := b.(int64)
	if aInt && bInt {
		switch o {
		case "+":
			return ai + bi
		case "-":
			return ai - bi
		case "*":
			return ai * bi
		}
		if bi == 0 || ai == math.MinInt64 && bi == -1 {
			return nil
		}
		return ai / bi
	}
	switch o {
	case "+":
		return af + bf
	case "-":
		return af - bf
	case "*":
		return af * bf
	}
	return af / bf
}

func (p *refParser) unary() (refExpr, bool) {
	if t := p.peek(); t == "+" || t == "-" {
		p.depth++
		if p.depth > MaxDepth {
			return nil, false
		}
		p.i++
		x, ok := p.unary()
		p.depth--
		if !ok {
			return nil, false
		}
		if t == "+" {
			return x, true // a plus changes nothing, not even the kind
		}
		if p.lastKind != "numlit" {
			p.setKind("value")
		}
		return func(m refProps) any {
			switch v := x(m).(type) {
			case int64:
				return -v
			case float64:
				return -v
			}
			return nil
		}, true
	}
	return p.primary()
}

func (p *refParser) primary() (refExpr, bool) {
	t := p.peek()
	switch {
	case t == "":
		return nil, false
	case t == "(":
		p.depth++
		if p.depth > MaxDepth {
			return nil, false
		}
		p.i++
		x, ok := p.or()
		p.depth--
		if !ok || p.peek() != ")" {
			return nil, false
		}
		p.i++
		return x, true
	case t[0] == '\'':
		s, _ := p.str()
		p.setKind("value")
		return func(refProps) any { return s }, true
	case refIsNumber(t):
		p.i++
		v, ok := refNumber(t)
		if !ok {
			return nil, false
		}
		p.setKind("numlit")
		return func(refProps) any { return v }, true
	case refASCIIFold(t, "TRUE"), refASCIIFold(t, "FALSE"):
		p.i++
		b := refASCIIFold(t, "TRUE")
		p.setKind("bool")
		return func(refProps) any { return b }, true
	case refIsKeyword(t):
		return nil, false
	case refIsIdent(t):
		p.i++
		p.setKind("ident")
		return func(m refProps) any { return m[t] }, true
	}
	return nil, false
}

func refNumber(t string) (any, bool) {
	if len(t) > 2 && (t[1] == 'x' || t[1] == 'X') {
		u, err := strconv.ParseUint(strings.TrimRight(t[2:], "lL"), 16, 64)
		return int64(u), err == nil
	}
	approx := strings.ContainsAny(t, ".eE") || strings.ContainsAny(t[len(t)-1:], "fFdD")
	if approx {
		f, err := strconv.ParseFloat(strings.TrimRight(t, "fFdD"), 64)
		return f, err == nil
	}
	t = strings.TrimRight(t, "lL")
	if len(t) > 1 && t[0] == '0' {
		i, err := strconv.ParseInt(t[1:], 8, 64)
		return i, err == nil
	}
	i, err := strconv.ParseInt(t, 10, 64)
	return i, err == nil
}
