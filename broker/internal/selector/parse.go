// Package selector compiles and evaluates message selectors: the SQL-92
// subset of the JMS message selector grammar (JMS 2.0 §3.8.1) that Apache
// ActiveMQ Artemis and ActiveMQ take in an AMQP source's
// apache.org:selector-filter:string, as Qpid JMS, Qpid Proton's Selector
// and Azure/go-amqp's NewSelectorFilter send it.
//
// # Grammar
//
//	or      = and { OR and }
//	and     = not { AND not }
//	not     = NOT not | cmp
//	cmp     = sum [ ( = | <> | < | <= | > | >= ) sum
//	              | [NOT] BETWEEN sum AND sum
//	              | [NOT] LIKE string [ESCAPE string]
//	              | [NOT] IN ( string { , string } )
//	              | IS [NOT] NULL ]
//	sum     = product { ( + | - ) product }
//	product = unary { ( * | / ) unary }
//	unary   = ( + | - ) unary | primary
//	primary = ( or ) | identifier | string | number | TRUE | FALSE
//
// Keywords are case-insensitive, identifiers case-sensitive. A string is
// quoted with ' (two of them stand for one). A number is exact (decimal,
// 0x hexadecimal or 0 octal, an optional L) or approximate (a decimal
// point or an exponent: 7., .5, 57.9E2, an optional F or D).
//
// # Values and logic
//
// An identifier names an application property, or one of the JMS header
// fields as Qpid JMS and Artemis map them onto an AMQP message:
// JMSDeliveryMode ('PERSISTENT' when the header is durable, else
// 'NON_PERSISTENT'), JMSPriority (the header's priority, 4 by default),
// JMSMessageID and JMSCorrelationID (the properties' ids when they are
// strings), JMSTimestamp (creation-time), JMSExpiration
// (absolute-expiry-time), JMSType (subject), JMSXUserID (user-id),
// JMSXGroupID (group-id), JMSXGroupSeq (group-sequence) and
// JMSXDeliveryCount (the header's delivery-count plus one). A property of
// a type the grammar has no values for (binary, uuid, a list …), or one
// that is absent, is NULL. Strings and symbols are strings; booleans;
// integers of every width are exact numbers (a ulong above the largest
// long, approximate), floats and doubles approximate, timestamps exact.
//
// Logic is SQL's, with three values: a comparison with NULL is unknown,
// NOT unknown is unknown, false AND unknown is false, true OR unknown is
// true, and a message is selected only when the selector is true.
// Comparing values of different types (a string with a number) is false;
// strings and booleans compare with = and <> only (an ordering of them is
// unknown); exact and approximate numbers compare by value. Arithmetic on
// a non-number or NULL, and an exact division by zero, is NULL.
//
// # Cost
//
// Parse does the work once per link: a selector is at most MaxLength
// bytes and nests at most MaxDepth deep. Match reads a message's encoded
// sections where they lie (the body is never read), parses the header
// and properties only when the selector names a JMS field, and allocates
// nothing.
package selector

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of what Parse takes.
const (
	// MaxLength is the longest selector, in bytes.
	MaxLength = 16 << 10
	// MaxDepth bounds how deep expressions nest (parentheses, NOT,
	// unary signs), so that neither parsing nor matching can exhaust the
	// stack.
	MaxDepth = 128
)

// Error is a selector that does not parse: what is wrong, and where.
type Error struct {
	// Column is the 1-based byte column of the fault in the selector.
	Column int
	Msg    string
}

func (e *Error) Error() string {
	return "selector: column " + strconv.Itoa(e.Column) + ": " + e.Msg
}

// Selector is a compiled selector; Match is safe for concurrent use.
type Selector struct {
	src   string
	nodes []node
	root  int32
	// what Match must parse of a message for the JMS fields named
	header, props bool
}

// String returns the selector as given to Parse.
func (s *Selector) String() string { return s.src }

type op uint8

const (
	opLit op = iota
	opProp
	opJMS
	opOr
	opAnd
	opNot
	opEq
	opNe
	opLt
	opLe
	opGt
	opGe
	opAdd
	opSub
	opMul
	opDiv
	opNeg
	opBetween // x, lo = l, hi = r
	opLike
	opIn
	opIsNull
)

// node is one operation; its operands are nodes by index.
type node struct {
	op      op
	neg     bool // NOT BETWEEN, NOT LIKE, NOT IN, IS NOT NULL
	x, l, r int32
	lit     val
	key     string // an application property's name
	jms     jmsField
	like    []likeTok
	in      []string
}

// kind is the type of a value at run time.
type kind uint8

const (
	kNull kind = iota
	kBool
	kLong
	kDouble
	kString
)

// val is a value: a literal, a property's, or an operation's result.
// Unknown, in the logic, is kNull.
type val struct {
	k kind
	b bool
	i int64
	f float64
	s []byte
}

type jmsField uint8

const (
	jmsNone jmsField = iota
	jmsDeliveryMode
	jmsPriority
	jmsMessageID
	jmsCorrelationID
	jmsTimestamp
	jmsExpiration
	jmsType
	jmsUserID
	jmsGroupID
	jmsGroupSeq
	jmsDeliveryCount
)

var jmsFields = map[string]jmsField{
	"JMSDeliveryMode":   jmsDeliveryMode,
	"JMSPriority":       jmsPriority,
	"JMSMessageID":      jmsMessageID,
	"JMSCorrelationID":  jmsCorrelationID,
	"JMSTimestamp":      jmsTimestamp,
	"JMSExpiration":     jmsExpiration,
	"JMSType":           jmsType,
	"JMSXUserID":        jmsUserID,
	"JMSXGroupID":       jmsGroupID,
	"JMSXGroupSeq":      jmsGroupSeq,
	"JMSXDeliveryCount": jmsDeliveryCount,
}

// Parse compiles a selector. An empty selector (or blanks only) is an
// error: a link that wants every message sends no selector.
func Parse(src string) (*Selector, error) {
	if len(src) > MaxLength {
		return nil, &Error{1, "selector of " + strconv.Itoa(len(src)) + " bytes, longer than " + strconv.Itoa(MaxLength)}
	}
	p := &parser{src: src, sel: &Selector{src: src}}
	p.next()
	root := p.or()
	if p.err == nil && p.tok.t != tEOF {
		p.fail(p.tok.pos, "unexpected "+p.tok.describe())
	}
	if p.err != nil {
		return nil, p.err
	}
	if p.sel.nodes[root].isValue() {
		// a lone value: TRUE and FALSE select or not; anything else
		// is not a condition (Artemis refuses it too)
		if n := p.sel.nodes[root]; !(n.op == opLit && n.lit.k == kBool) && n.op != opProp && n.op != opJMS {
			return nil, &Error{1, "the selector is a value, not a condition"}
		}
	}
	p.sel.root = root
	return p.sel, nil
}

func (n *node) isValue() bool {
	switch n.op {
	case opLit, opProp, opJMS, opAdd, opSub, opMul, opDiv, opNeg:
		return true
	}
	return false
}

type tokType uint8

const (
	tEOF tokType = iota
	tIdent
	tString
	tLong
	tDouble
	tOp // = <> < <= > >= + - * / ( ) ,
	tKeyword
)

type token struct {
	t   tokType
	pos int    // byte offset
	s   string // identifier, keyword (upper case), operator, string value
	i   int64
	f   float64
}

func (t token) describe() string {
	switch t.t {
	case tEOF:
		return "end of selector"
	case tString:
		return "string " + strconv.Quote(t.s)
	case tLong, tDouble:
		return "number"
	case tKeyword:
		return t.s
	}
	return strconv.Quote(t.s)
}

var keywords = map[string]bool{
	"AND": true, "OR": true, "NOT": true, "BETWEEN": true, "LIKE": true, "IN": true,
	"IS": true, "NULL": true, "ESCAPE": true, "TRUE": true, "FALSE": true,
}

type parser struct {
	src   string
	pos   int
	tok   token
	sel   *Selector
	err   *Error
	depth int
}

func (p *parser) fail(pos int, msg string) {
	if p.err == nil {
		p.err = &Error{pos + 1, msg}
	}
	p.tok = token{t: tEOF, pos: len(p.src)}
	p.pos = len(p.src)
}

func (p *parser) add(n node) int32 {
	p.sel.nodes = append(p.sel.nodes, n)
	return int32(len(p.sel.nodes) - 1)
}

// next reads the next token into p.tok.
func (p *parser) next() {
	if p.err != nil {
		return
	}
	s := p.src
	for p.pos < len(s) && (s[p.pos] == ' ' || s[p.pos] == '\t' || s[p.pos] == '\n' || s[p.pos] == '\r' || s[p.pos] == '\f') {
		p.pos++
	}
	start := p.pos
	if start == len(s) {
		p.tok = token{t: tEOF, pos: start}
		return
	}
	c := s[start]
	switch {
	case c == '\'':
		var b strings.Builder
		i := start + 1
		for {
			if i >= len(s) {
				p.fail(start, "string not closed")
				return
			}
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					b.WriteByte('\'')
					i += 2
					continue
				}
				break
			}
			b.WriteByte(s[i])
			i++
		}
		if !utf8.ValidString(b.String()) {
			p.fail(start, "string is not UTF-8")
			return
		}
		p.pos = i + 1
		p.tok = token{t: tString, pos: start, s: b.String()}
	case c >= '0' && c <= '9' || c == '.' && start+1 < len(s) && s[start+1] >= '0' && s[start+1] <= '9':
		p.number(start)
	case c == '<' || c == '>':
		p.pos++
		o := s[start:p.pos]
		if p.pos < len(s) && (s[p.pos] == '=' || c == '<' && s[p.pos] == '>') {
			p.pos++
			o = s[start:p.pos]
		}
		p.tok = token{t: tOp, pos: start, s: o}
	case strings.IndexByte("=+-*/(),", c) >= 0:
		p.pos++
		p.tok = token{t: tOp, pos: start, s: s[start:p.pos]}
	default:
		r, n := utf8.DecodeRuneInString(s[start:])
		if !identStart(r) {
			p.fail(start, "unexpected character "+strconv.QuoteRune(r))
			return
		}
		i := start + n
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if !identPart(r) {
				break
			}
			i += n
		}
		p.pos = i
		word := s[start:i]
		if up := asciiUpper(word); keywords[up] {
			p.tok = token{t: tKeyword, pos: start, s: up}
			return
		}
		p.tok = token{t: tIdent, pos: start, s: word}
	}
}

// asciiUpper is word in upper case when it is ASCII, else "": keywords
// are ASCII, and no other letter folds into one.
func asciiUpper(word string) string {
	b := []byte(word)
	for i, c := range b {
		switch {
		case c >= utf8.RuneSelf:
			return ""
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// identStart and identPart are Java's identifier rules, as JMS has them.
func identStart(r rune) bool {
	return r == '_' || r == '$' || unicode.IsLetter(r)
}

func identPart(r rune) bool {
	return identStart(r) || unicode.IsDigit(r)
}

// number reads an exact or approximate numeric literal at start.
func (p *parser) number(start int) {
	s := p.src
	i := start
	if s[i] == '0' && i+1 < len(s) && (s[i+1] == 'x' || s[i+1] == 'X') {
		i += 2
		for i < len(s) && isHex(s[i]) {
			i++
		}
		v, err := strconv.ParseUint(s[start+2:i], 16, 64)
		if err != nil || i == start+2 {
			p.fail(start, "bad hexadecimal number")
			return
		}
		if i < len(s) && (s[i] == 'l' || s[i] == 'L') {
			i++
		}
		p.pos = i
		p.tok = token{t: tLong, pos: start, i: int64(v)}
		return
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	approx := false
	if i < len(s) && s[i] == '.' {
		approx = true
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			approx = true
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			i = j
		}
	}
	text := s[start:i]
	switch {
	case i < len(s) && (s[i] == 'f' || s[i] == 'F' || s[i] == 'd' || s[i] == 'D'):
		approx = true
		i++
	case !approx && i < len(s) && (s[i] == 'l' || s[i] == 'L'):
		i++
	}
	if i < len(s) {
		if r, _ := utf8.DecodeRuneInString(s[i:]); identPart(r) || r == '.' {
			p.fail(start, "bad number")
			return
		}
	}
	p.pos = i
	if approx {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			p.fail(start, "bad number")
			return
		}
		p.tok = token{t: tDouble, pos: start, f: f}
		return
	}
	base := 10
	digits := text
	if len(text) > 1 && text[0] == '0' {
		base, digits = 8, text[1:]
	}
	v, err := strconv.ParseInt(digits, base, 64)
	if err != nil {
		p.fail(start, "number out of range or malformed")
		return
	}
	p.tok = token{t: tLong, pos: start, i: v}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func (p *parser) isOp(o string) bool  { return p.tok.t == tOp && p.tok.s == o }
func (p *parser) isKey(k string) bool { return p.tok.t == tKeyword && p.tok.s == k }
func (p *parser) expectKey(k string) bool {
	if !p.isKey(k) {
		p.fail(p.tok.pos, k+" expected, found "+p.tok.describe())
		return false
	}
	p.next()
	return true
}

// enter and leave bound the nesting depth.
func (p *parser) enter() bool {
	p.depth++
	if p.depth > MaxDepth {
		p.fail(p.tok.pos, "nested more than "+strconv.Itoa(MaxDepth)+" deep")
		return false
	}
	return true
}

func (p *parser) leave() { p.depth-- }

func (p *parser) or() int32 {
	l := p.and()
	for p.err == nil && p.isKey("OR") {
		pos := p.tok.pos
		p.next()
		r := p.and()
		l = p.logic(opOr, l, r, pos)
	}
	return l
}

func (p *parser) and() int32 {
	l := p.not()
	for p.err == nil && p.isKey("AND") {
		pos := p.tok.pos
		p.next()
		r := p.not()
		l = p.logic(opAnd, l, r, pos)
	}
	return l
}

// logic makes an AND or OR of two conditions.
func (p *parser) logic(o op, l, r int32, pos int) int32 {
	if p.err != nil {
		return 0
	}
	if !p.condition(l) || !p.condition(r) {
		p.fail(pos, strings.ToUpper(map[op]string{opAnd: "and", opOr: "or"}[o])+" of a value that is not a condition")
		return 0
	}
	return p.add(node{op: o, l: l, r: r})
}

// condition reports an operand that may be a condition: a boolean result,
// or an identifier or literal that may hold a boolean.
func (p *parser) condition(i int32) bool {
	n := &p.sel.nodes[i]
	switch n.op {
	case opLit:
		return n.lit.k == kBool
	case opAdd, opSub, opMul, opDiv, opNeg:
		return false
	}
	return true
}

func (p *parser) not() int32 {
	if p.isKey("NOT") {
		pos := p.tok.pos
		if !p.enter() {
			return 0
		}
		p.next()
		x := p.not()
		p.leave()
		if p.err != nil {
			return 0
		}
		if !p.condition(x) {
			p.fail(pos, "NOT of a value that is not a condition")
			return 0
		}
		return p.add(node{op: opNot, x: x})
	}
	return p.cmp()
}

var cmpOps = map[string]op{"=": opEq, "<>": opNe, "<": opLt, "<=": opLe, ">": opGt, ">=": opGe}

func (p *parser) cmp() int32 {
	x := p.sum()
	if p.err != nil {
		return 0
	}
	if p.tok.t == tOp {
		if o, ok := cmpOps[p.tok.s]; ok {
			p.next()
			y := p.sum()
			if p.err != nil {
				return 0
			}
			return p.add(node{op: o, l: x, r: y})
		}
		return x
	}
	if p.isKey("IS") {
		p.next()
		neg := false
		if p.isKey("NOT") {
			neg = true
			p.next()
		}
		if !p.expectKey("NULL") {
			return 0
		}
		return p.add(node{op: opIsNull, neg: neg, x: x})
	}
	neg := false
	if p.isKey("NOT") {
		neg = true
		p.next()
		if !p.isKey("BETWEEN") && !p.isKey("LIKE") && !p.isKey("IN") {
			p.fail(p.tok.pos, "BETWEEN, LIKE or IN expected after NOT, found "+p.tok.describe())
			return 0
		}
	}
	switch {
	case p.isKey("BETWEEN"):
		p.next()
		lo := p.sum()
		if p.err != nil || !p.expectKey("AND") {
			return 0
		}
		hi := p.sum()
		if p.err != nil {
			return 0
		}
		return p.add(node{op: opBetween, neg: neg, x: x, l: lo, r: hi})
	case p.isKey("LIKE"):
		p.next()
		if p.tok.t != tString {
			p.fail(p.tok.pos, "a string pattern expected after LIKE, found "+p.tok.describe())
			return 0
		}
		pat, pos := p.tok.s, p.tok.pos
		p.next()
		esc := rune(-1)
		if p.isKey("ESCAPE") {
			p.next()
			if p.tok.t != tString || utf8.RuneCountInString(p.tok.s) != 1 {
				p.fail(p.tok.pos, "ESCAPE takes a string of one character")
				return 0
			}
			esc, _ = utf8.DecodeRuneInString(p.tok.s)
			p.next()
		}
		like, ok := compileLike(pat, esc)
		if !ok {
			p.fail(pos, "the pattern ends with its escape character")
			return 0
		}
		return p.add(node{op: opLike, neg: neg, x: x, like: like})
	case p.isKey("IN"):
		p.next()
		if !p.isOp("(") {
			p.fail(p.tok.pos, "( expected after IN, found "+p.tok.describe())
			return 0
		}
		p.next()
		var list []string
		for {
			if p.tok.t != tString {
				p.fail(p.tok.pos, "a string expected in IN's list, found "+p.tok.describe())
				return 0
			}
			list = append(list, p.tok.s)
			p.next()
			if p.isOp(",") {
				p.next()
				continue
			}
			if !p.isOp(")") {
				p.fail(p.tok.pos, ", or ) expected in IN's list, found "+p.tok.describe())
				return 0
			}
			p.next()
			break
		}
		return p.add(node{op: opIn, neg: neg, x: x, in: list})
	}
	return x
}

func (p *parser) sum() int32 {
	l := p.product()
	for p.err == nil && (p.isOp("+") || p.isOp("-")) {
		o := opAdd
		if p.tok.s == "-" {
			o = opSub
		}
		p.next()
		r := p.product()
		l = p.add(node{op: o, l: l, r: r})
	}
	return l
}

func (p *parser) product() int32 {
	l := p.unary()
	for p.err == nil && (p.isOp("*") || p.isOp("/")) {
		o := opMul
		if p.tok.s == "/" {
			o = opDiv
		}
		p.next()
		r := p.unary()
		l = p.add(node{op: o, l: l, r: r})
	}
	return l
}

func (p *parser) unary() int32 {
	if p.isOp("+") || p.isOp("-") {
		minus := p.tok.s == "-"
		if !p.enter() {
			return 0
		}
		p.next()
		x := p.unary()
		p.leave()
		if p.err != nil {
			return 0
		}
		if !minus {
			return x
		}
		// fold a negative literal into the literal
		if n := &p.sel.nodes[x]; n.op == opLit && (n.lit.k == kLong || n.lit.k == kDouble) {
			n.lit.i, n.lit.f = -n.lit.i, -n.lit.f
			return x
		}
		return p.add(node{op: opNeg, x: x})
	}
	return p.primary()
}

func (p *parser) primary() int32 {
	t := p.tok
	switch {
	case p.isOp("("):
		if !p.enter() {
			return 0
		}
		p.next()
		x := p.or()
		p.leave()
		if p.err != nil {
			return 0
		}
		if !p.isOp(")") {
			p.fail(p.tok.pos, ") expected, found "+p.tok.describe())
			return 0
		}
		p.next()
		return x
	case t.t == tIdent:
		p.next()
		if f, ok := jmsFields[t.s]; ok {
			switch f {
			case jmsDeliveryMode, jmsPriority, jmsDeliveryCount:
				p.sel.header = true
			default:
				p.sel.props = true
			}
			return p.add(node{op: opJMS, jms: f})
		}
		return p.add(node{op: opProp, key: t.s})
	case t.t == tString:
		p.next()
		return p.add(node{op: opLit, lit: val{k: kString, s: []byte(t.s)}})
	case t.t == tLong:
		p.next()
		return p.add(node{op: opLit, lit: val{k: kLong, i: t.i}})
	case t.t == tDouble:
		p.next()
		return p.add(node{op: opLit, lit: val{k: kDouble, f: t.f}})
	case p.isKey("TRUE"), p.isKey("FALSE"):
		p.next()
		return p.add(node{op: opLit, lit: val{k: kBool, b: t.s == "TRUE"}})
	case p.isKey("NULL"):
		p.fail(t.pos, "NULL is no value: use IS NULL")
		return 0
	}
	p.fail(t.pos, "a value expected, found "+t.describe())
	return 0
}
