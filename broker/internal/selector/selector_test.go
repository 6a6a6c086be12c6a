package selector

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// encode makes a message with the application properties given (and a
// body the selector never reads).
func encode(t testing.TB, props map[string]any, h *message.Header, p *message.Properties) []byte {
	var vs message.Values
	m := message.Message{Header: h, Properties: p}
	if props != nil {
		e, err := vs.PropertiesOf(props)
		require.NoError(t, err)
		m.ApplicationProperties = e
	}
	body := vs.String(strings.Repeat("body ", 20))
	m.Body = message.Body{Kind: message.BodyValue, Value: body}
	b, err := m.Append(nil)
	require.NoError(t, err)
	return b
}

var cases = []struct {
	sel   string
	props map[string]any
	want  bool
}{
	{"color = 'red'", map[string]any{"color": "red"}, true},
	{"color = 'red'", map[string]any{"color": "blue"}, false},
	{"color = 'red'", nil, false},
	{"color <> 'red'", nil, false}, // unknown
	{"NOT color = 'red'", nil, false},
	{"color = 'red' AND weight > 2", map[string]any{"color": "red", "weight": int64(3)}, true},
	{"color = 'red' AND weight > 2", map[string]any{"color": "red", "weight": int32(2)}, false},
	{"color = 'red' AND weight > 2", map[string]any{"color": "red", "weight": 2.5}, true},
	{"color = 'red' OR weight > 2", map[string]any{"weight": uint8(9)}, true},
	{"color = 'red' OR weight > 2", map[string]any{"weight": uint8(1)}, false},
	{"weight BETWEEN 1 AND 3", map[string]any{"weight": int16(3)}, true},
	{"weight NOT BETWEEN 1 AND 3", map[string]any{"weight": int16(4)}, true},
	{"weight NOT BETWEEN 1 AND 3", nil, false},
	{"name LIKE 'ab%'", map[string]any{"name": "abc"}, true},
	{"name LIKE 'a_c'", map[string]any{"name": "aéc"}, true},
	{"name LIKE 'a_c'", map[string]any{"name": "abbc"}, false},
	{"name LIKE '%\\%%' ESCAPE '\\'", map[string]any{"name": "50% off"}, true},
	{"name LIKE '%\\%%' ESCAPE '\\'", map[string]any{"name": "50 off"}, false},
	{"name NOT LIKE 'x%'", map[string]any{"name": "abc"}, true},
	{"name LIKE 'x%'", map[string]any{"name": int64(1)}, false},
	{"region IN ('eu', 'us')", map[string]any{"region": "us"}, true},
	{"region NOT IN ('eu', 'us')", map[string]any{"region": "ap"}, true},
	{"region NOT IN ('eu', 'us')", nil, false},
	{"region IS NULL", nil, true},
	{"region IS NOT NULL", map[string]any{"region": "x"}, true},
	{"a + b * 2 = 7", map[string]any{"a": int64(1), "b": int64(3)}, true},
	{"a / b = 2.5", map[string]any{"a": 5.0, "b": int64(2)}, true},
	{"a / 0 IS NULL", map[string]any{"a": int64(5)}, true},
	{"-a = -5", map[string]any{"a": int64(5)}, true},
	{"flag", map[string]any{"flag": true}, true},
	{"flag = TRUE", map[string]any{"flag": false}, false},
	{"NOT flag", map[string]any{"flag": false}, true},
	{"TRUE", nil, true},
	{"s = 1", map[string]any{"s": "1"}, false},   // different types
	{"s < 'b'", map[string]any{"s": "a"}, false}, // strings order: unknown
	{"big > 9223372036854775806", map[string]any{"big": uint64(math.MaxUint64)}, true},
	{"(a = 1 OR b = 1) AND NOT (c = 1)", map[string]any{"b": int64(1), "c": int64(2)}, true},
	{"x = 0x1F AND y = 010 AND z = 1.5e1", map[string]any{"x": int64(31), "y": int64(8), "z": int64(15)}, true},
	{"sym = 'a'", map[string]any{"sym": stream.Symbol("a")}, true},
	{"it's = 'x'", nil, false},
}

func TestMatch(t *testing.T) {
	for _, c := range cases {
		s, err := Parse(c.sel)
		if c.sel == "it's = 'x'" {
			require.Error(t, err, c.sel)
			continue
		}
		require.NoError(t, err, c.sel)
		got, err := s.Match(encode(t, c.props, nil, nil))
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%s with %v", c.sel, c.props)
		// the reference agrees
		if ref, err := refParse(c.sel); assert.NoError(t, err, c.sel) {
			assert.Equal(t, c.want, ref(refOf(c.props)) == true, "reference: %s with %v", c.sel, c.props)
		}
	}
}

// refOf gives properties as the reference evaluator reads them.
func refOf(props map[string]any) refProps {
	r := refProps{}
	for k, v := range props {
		switch v := v.(type) {
		case int8:
			r[k] = int64(v)
		case int16:
			r[k] = int64(v)
		case int32:
			r[k] = int64(v)
		case uint8:
			r[k] = int64(v)
		case uint16:
			r[k] = int64(v)
		case uint32:
			r[k] = int64(v)
		case uint64:
			if v > math.MaxInt64 {
				r[k] = float64(v)
			} else {
				r[k] = int64(v)
			}
		case float32:
			r[k] = float64(v)
		case stream.Symbol:
			r[k] = string(v)
		default:
			r[k] = v
		}
	}
	return r
}

func TestJMSFields(t *testing.T) {
	h := &message.Header{Durable: true, Priority: 7, DeliveryCount: 2}
	p := &message.Properties{MessageID: message.StringID("m-1"), CorrelationID: message.StringID("c-9"),
		Subject: []byte("order"), GroupID: []byte("g"), UserID: []byte("alice")}
	p.CreationTime, p.HasCreationTime = 1700000000000, true
	p.GroupSequence, p.HasGroupSequence = 3, true
	msg := encode(t, nil, h, p)
	for sel, want := range map[string]bool{
		"JMSDeliveryMode = 'PERSISTENT'":         true,
		"JMSPriority > 5":                        true,
		"JMSMessageID = 'm-1'":                   true,
		"JMSCorrelationID = 'c-9'":               true,
		"JMSType = 'order'":                      true,
		"JMSTimestamp = 1700000000000":           true,
		"JMSExpiration IS NULL":                  true,
		"JMSXGroupID = 'g' AND JMSXGroupSeq = 3": true,
		"JMSXUserID = 'alice'":                   true,
		"JMSXDeliveryCount = 3":                  true,
		"JMSPriority = 4":                        false,
	} {
		s, err := Parse(sel)
		require.NoError(t, err, sel)
		got, err := s.Match(msg)
		require.NoError(t, err)
		assert.Equal(t, want, got, sel)
	}
	// the defaults of a message without header or properties
	s, err := Parse("JMSPriority = 4 AND JMSDeliveryMode = 'NON_PERSISTENT' AND JMSMessageID IS NULL")
	require.NoError(t, err)
	got, err := s.Match(encode(t, nil, nil, nil))
	require.NoError(t, err)
	assert.True(t, got)
}

// TestErrors: a selector that does not parse says what and at which
// column.
func TestErrors(t *testing.T) {
	for sel, col := range map[string]int{
		"":                         1,
		"color = ":                 9,
		"color = 'red":             9,
		"color == 'red'":           8,
		"a AND":                    6,
		"a LIKE 5":                 8,
		"a IN ()":                  7,
		"a IN ('x' 'y')":           11,
		"a NOT 5":                  7,
		"a IS NOT 5":               10,
		"a = 1 b":                  7,
		"5":                        1,
		"'x' AND a":                5,
		"a LIKE 'x\\' ESCAPE '\\'": 8,
		"a LIKE 'x' ESCAPE 'ab'":   19,
		"12abc = 1":                1,
		"a = 99999999999999999999": 5,
		"a = NULL":                 5,
		"a ! b":                    3,
	} {
		_, err := Parse(sel)
		var e *Error
		if assert.True(t, errors.As(err, &e), "%q: %v", sel, err) {
			assert.Equal(t, col, e.Column, "%q: %v", sel, err)
			assert.Contains(t, err.Error(), "selector: column ")
		}
		_, rerr := refParse(sel)
		assert.Error(t, rerr, "the reference parses %q", sel)
	}
	_, err := Parse(strings.Repeat("(", MaxDepth+1) + "a" + strings.Repeat(")", MaxDepth+1))
	assert.ErrorContains(t, err, "nested")
	_, err = Parse(strings.Repeat("NOT ", 10*MaxDepth) + "a")
	assert.ErrorContains(t, err, "nested")
	_, err = Parse("a = '" + strings.Repeat("x", MaxLength) + "'")
	assert.ErrorContains(t, err, "longer than")
}

// TestMatchAllocs: matching allocates nothing, JMS fields included.
func TestMatchAllocs(t *testing.T) {
	s, err := Parse("color = 'red' AND weight BETWEEN 2 AND 9 AND name LIKE 'a%z' AND JMSPriority >= 4 AND region IN ('eu','us')")
	require.NoError(t, err)
	msg := encode(t, map[string]any{"color": "red", "weight": int64(3), "name": "abcz", "region": "eu"}, nil, nil)
	ok, err := s.Match(msg)
	require.NoError(t, err)
	require.True(t, ok)
	allocs := testing.AllocsPerRun(1000, func() {
		if ok, _ := s.Match(msg); !ok {
			t.Fatal("no match")
		}
	})
	assert.Zero(t, allocs)
}

// TestLikeWork: LIKE's work is at most the pattern's length times the
// value's: patterns built to backtrack, at two sizes, counted in turns
// of the matching loop and bytes compared (never timed), with nothing
// allocated.
func TestLikeWork(t *testing.T) {
	work := func(pattern string, n int) int {
		toks, ok := compileLike(pattern, -1)
		require.True(t, ok)
		val := []byte(strings.Repeat("a", 4*n))
		var steps int
		allocs := testing.AllocsPerRun(1, func() { ok, steps = likeSteps(toks, val) })
		assert.False(t, ok)
		assert.Zero(t, allocs)
		assert.LessOrEqual(t, steps, 2*(len(pattern)+1)*(len(val)+1), "within pattern times value")
		return steps
	}
	for name, pat := range map[string]func(n int) string{
		"%a%a…b": func(n int) string { return strings.Repeat("%a", n) + "b" },
		"%aa…ab": func(n int) string { return "%" + strings.Repeat("a", n) + "b" },
		"%a_…_b": func(n int) string { return "%a" + strings.Repeat("_", n) + "b" },
	} {
		w1, w2 := work(pat(50), 50), work(pat(100), 100)
		t.Logf("%s: work %d at n=50, %d at n=100", name, w1, w2)
		assert.LessOrEqual(t, w2, 4*w1+8, "%s: doubling pattern and value at most quadruples the work", name)
	}
}

// FuzzSelector holds Parse and Match to the reference evaluator: the
// same selectors parse, and those that do select the same messages.
func FuzzSelector(f *testing.F) {
	for _, c := range cases {
		f.Add(c.sel, []byte{1, 2, 3, 4, 5, 6})
	}
	f.Add("a BETWEEN -1 AND 1e3 OR s LIKE '_%' ESCAPE '_'", []byte{9, 8, 7})
	f.Add("NOT (a / b > c * -2 AND s NOT IN ('x','y'))", []byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, sel string, seed []byte) {
		s, err := Parse(sel)
		ref, rerr := refParse(sel)
		if (err == nil) != (rerr == nil) {
			t.Fatalf("%q: Parse says %v, the reference %v", sel, err, rerr)
		}
		if err != nil {
			return
		}
		props := fuzzProps(seed)
		msg := encode(t, props, nil, nil)
		got, err := s.Match(msg)
		require.NoError(t, err)
		want := ref(refOf(props)) == true
		if got != want {
			t.Fatalf("%q with %v: Match %v, the reference %v", sel, props, got, want)
		}
	})
}

// fuzzProps makes properties a, b, c, s, t and flag from seed bytes:
// each absent, or of a type the seed picks.
func fuzzProps(seed []byte) map[string]any {
	props := map[string]any{}
	strs := []string{"", "a", "ab", "x", "y", "abc", "50%", "a_c", "é"}
	for i, name := range []string{"a", "b", "c", "s", "t", "flag"} {
		if i >= len(seed) {
			break
		}
		v := seed[i]
		switch v % 7 {
		case 0: // absent
		case 1:
			props[name] = int64(int8(v)) / 3
		case 2:
			props[name] = float64(int8(v)) / 4
		case 3:
			props[name] = strs[int(v/7)%len(strs)]
		case 4:
			props[name] = v&8 != 0
		case 5:
			props[name] = int32(v) - 100
		case 6:
			props[name] = uint64(v) << 56
		}
	}
	return props
}

// BenchmarkMatch: a three-clause selector on a message with five
// application properties and a 100-byte body.
func BenchmarkMatch(b *testing.B) {
	s, err := Parse("color = 'red' AND weight > 2 AND region IN ('eu', 'us')")
	require.NoError(b, err)
	msg := encode(b, map[string]any{"color": "red", "weight": int64(3), "region": "us", "id": int64(7), "k": "v"}, nil, nil)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if ok, _ := s.Match(msg); !ok {
			b.Fatal("no match")
		}
	}
}
