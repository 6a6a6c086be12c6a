package broker

import (
	"testing"

	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/engine"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// filterEntry is one filter of a filter-set: its key, and its described
// value with a symbolic descriptor (sym) or a numeric one.
type filterEntry struct {
	key, sym string
	code     uint64
	value    func([]byte) []byte
}

func filterSet(entries ...filterEntry) frame.Map {
	b := encode.BeginMap(nil)
	for _, e := range entries {
		b = encode.AppendSymbol(b, e.key)
		b = encode.AppendDescribed(b)
		if e.sym != "" {
			b = encode.AppendSymbol(b, e.sym)
		} else {
			b = encode.AppendUlong(b, e.code)
		}
		b = e.value(b)
	}
	return frame.Map(encode.EndMap(b, 0, len(entries)))
}

func str(s string) func([]byte) []byte {
	return func(b []byte) []byte { return encode.AppendString(b, s) }
}

func filterMsg(t *testing.T, props map[string]any, p *message.Properties) message.Sections {
	var vs message.Values
	m := message.Message{Properties: p}
	e, err := vs.PropertiesOf(props)
	require.NoError(t, err)
	m.ApplicationProperties = e
	m.Body = message.Body{Kind: message.BodyValue, Value: vs.String("body")}
	b, err := m.Append(nil)
	require.NoError(t, err)
	secs, err := message.Scan(b)
	require.NoError(t, err)
	return secs
}

// TestFiltersAnswer: the answer holds exactly the filters the broker
// applies; an unknown one is left out, or refused when the consumer
// requires it; a selector that does not parse is refused with its column.
func TestFiltersAnswer(t *testing.T) {
	sel := filterEntry{"jms-selector", "apache.org:selector-filter:string", 0, str("color = 'red'")}
	xq := filterEntry{"xq", "apache.org:xquery-filter:string", 0, str("//a")}
	f, answer, refuse := parseFilters(filterSet(sel, xq), nil)
	require.Nil(t, refuse)
	require.NotNil(t, f.sel)
	assert.Equal(t, []byte(filterSet(sel)), answer, "the answer holds the selector alone")

	_, answer, refuse = parseFilters(filterSet(xq), nil)
	require.Nil(t, refuse)
	assert.Nil(t, answer, "no filter applied: none in the answer")

	_, _, refuse = parseFilters(filterSet(sel, xq), frame.Symbols(frame.AppendSymbols(nil, "apache.org:xquery-filter:string")))
	require.NotNil(t, refuse)
	assert.True(t, refuse.Is(engine.NewError(frame.CondNotImplemented, "")), refuse)

	_, _, refuse = parseFilters(filterSet(filterEntry{"s", "", 0x0000468C00000004, str("color = ")}), nil)
	require.NotNil(t, refuse)
	assert.True(t, refuse.Is(engine.NewError(frame.CondInvalidField, "")), refuse)
	assert.Contains(t, refuse.Description, "column 9")

	f, answer, refuse = parseFilters(filterSet(filterEntry{"nl", "", 0x0000468C00000003, func(b []byte) []byte { return encode.AppendCodeList0(b) }}), nil)
	require.Nil(t, refuse)
	assert.True(t, f.noLocal)
	assert.NotNil(t, answer)
}

// TestFiltersMatch: selectors, properties and application-properties
// filters, and no-local, each on the message's encoded sections.
func TestFiltersMatch(t *testing.T) {
	appFilter := func(b []byte) []byte {
		start := len(b)
		b = encode.BeginMap(b)
		b = encode.AppendString(encode.AppendString(b, "color"), "&p:re")
		b = encode.AppendString(b, "n")
		b = encode.AppendUint(b, 7)
		return encode.EndMap(b, start, 2)
	}
	propsFilter := func(b []byte) []byte {
		start := len(b)
		b = encode.BeginMap(b)
		b = encode.AppendString(encode.AppendSymbol(b, "subject"), "&s:.eu")
		return encode.EndMap(b, start, 1)
	}
	f, _, refuse := parseFilters(filterSet(
		filterEntry{"app", "amqp:application-properties-filter", 0, appFilter},
		filterEntry{"props", "", 0x173, propsFilter},
		filterEntry{"sel", "apache.org:selector-filter:string", 0, str("weight > 2")},
	), nil)
	require.Nil(t, refuse)
	euSubject := &message.Properties{Subject: []byte("orders.eu")}
	for name, tc := range map[string]struct {
		props map[string]any
		p     *message.Properties
		want  bool
	}{
		"all match":           {map[string]any{"color": "red", "n": int64(7), "weight": 3}, euSubject, true},
		"prefix fails":        {map[string]any{"color": "blue", "n": int64(7), "weight": 3}, euSubject, false},
		"number of any width": {map[string]any{"color": "reddish", "n": uint8(7), "weight": 3}, euSubject, true},
		"number differs":      {map[string]any{"color": "red", "n": int64(8), "weight": 3}, euSubject, false},
		"suffix fails":        {map[string]any{"color": "red", "n": int64(7), "weight": 3}, &message.Properties{Subject: []byte("orders.us")}, false},
		"no subject":          {map[string]any{"color": "red", "n": int64(7), "weight": 3}, nil, false},
		"selector fails":      {map[string]any{"color": "red", "n": int64(7), "weight": 1}, euSubject, false},
		"property missing":    {map[string]any{"n": int64(7), "weight": 3}, euSubject, false},
	} {
		secs := filterMsg(t, tc.props, tc.p)
		assert.Equal(t, tc.want, f.match(&secs, nil, nil), name)
	}

	nl, _, _ := parseFilters(filterSet(filterEntry{"nl", "apache.org:no-local-filter:list", 0, func(b []byte) []byte { return encode.AppendCodeList0(b) }}), nil)
	own, other := &engine.Conn{}, &engine.Conn{}
	secs := filterMsg(t, map[string]any{}, nil)
	assert.False(t, nl.match(&secs, own, own), "no-local: not from the consumer's own connection")
	assert.True(t, nl.match(&secs, other, own))
	var none sourceFilter
	assert.False(t, none.any())
	assert.True(t, none.match(&secs, own, own))
}

// TestFiltersMatchAllocs: matching allocates nothing.
func TestFiltersMatchAllocs(t *testing.T) {
	f, _, refuse := parseFilters(filterSet(filterEntry{"sel", "apache.org:selector-filter:string", 0, str("color = 'red' AND weight > 2")}), nil)
	require.Nil(t, refuse)
	secs := filterMsg(t, map[string]any{"color": "red", "weight": 3}, &message.Properties{Subject: []byte("x")})
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		if !f.match(&secs, nil, nil) {
			t.Fatal("no match")
		}
	}))
}
