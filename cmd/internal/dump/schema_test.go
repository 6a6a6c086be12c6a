package dump

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/internal/cases"
	"github.com/amqpsax/amqpsax/internal/corpus"
	"github.com/amqpsax/amqpsax/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The typed JSON schema (package doc), tested by decoding the output back:
// each value read from the output must be what the schema makes of the
// value read from the input with a stream.Cursor, built here on its own
// (expected, below) rather than by the code that writes it.

// decodeJSON decodes one line of output, numbers kept as they were
// written.
func decodeJSON(t *testing.T, line string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(line))
	d.UseNumber()
	var obj map[string]any
	require.NoError(t, d.Decode(&obj), line)
	return obj
}

// withoutNames returns v with the "name" of every enumerated field taken
// out, after checking that each is a string beside a primitive's value.
func withoutNames(t *testing.T, v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		_, typed := v["type"].(string)
		for k, e := range v {
			if k == "name" && typed { // a typed value's name, not a field called "name"
				_, ok := e.(string)
				assert.True(t, ok, "name %v", e)
				assert.NotContains(t, []any{"list", "map", "array", "described"}, v["type"], "a name beside a compound")
				continue
			}
			out[k] = withoutNames(t, e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = withoutNames(t, e)
		}
		return out
	}
	return v
}

// expected is what the schema makes of the value the cursor is on: with
// its type, or bare (an array's primitive elements).
func expected(t *testing.T, c *stream.Cursor, bare bool) any {
	k := c.Kind()
	var v any
	switch k {
	case amqpsax.KindNull:
		v = nil
	case amqpsax.KindBool:
		v = c.Bool()
	case amqpsax.KindUbyte, amqpsax.KindUshort, amqpsax.KindUint, amqpsax.KindUlong:
		v = json.Number(strconv.FormatUint(c.Uint(), 10))
	case amqpsax.KindByte, amqpsax.KindShort, amqpsax.KindInt, amqpsax.KindLong:
		v = json.Number(strconv.FormatInt(c.Int(), 10))
	case amqpsax.KindFloat:
		v = jsonFloat(float64(c.Float()), 32)
	case amqpsax.KindDouble:
		v = jsonFloat(c.Double(), 64)
	case amqpsax.KindDecimal32:
		d := c.Decimal32()
		v = "0x" + hex.EncodeToString(d[:])
	case amqpsax.KindDecimal64:
		d := c.Decimal64()
		v = "0x" + hex.EncodeToString(d[:])
	case amqpsax.KindDecimal128:
		d := c.Decimal128()
		v = "0x" + hex.EncodeToString(d[:])
	case amqpsax.KindChar:
		if r := c.Char(); utf8.ValidRune(r) {
			v = string(r)
		} else {
			v = string(appendChar(nil, r))
		}
	case amqpsax.KindTimestamp:
		v = json.Number(strconv.FormatInt(c.Timestamp(), 10))
	case amqpsax.KindUUID:
		u := c.UUID()
		v = u.String()
	case amqpsax.KindBinary:
		v = hex.EncodeToString(c.Bytes())
	case amqpsax.KindString, amqpsax.KindSymbol:
		v = validUTF8(c.Bytes())
	case amqpsax.KindList:
		var elems []any
		require.True(t, c.Enter())
		for c.Next() {
			elems = append(elems, expected(t, c, false))
		}
		require.True(t, c.Exit())
		v = orEmpty(elems)
	case amqpsax.KindMap:
		var pairs []any
		require.True(t, c.Enter())
		for c.Next() {
			key := expected(t, c, false)
			require.True(t, c.Next())
			pairs = append(pairs, []any{key, expected(t, c, false)})
		}
		require.True(t, c.Exit())
		v = orEmpty(pairs)
	case amqpsax.KindArray:
		return expectedArray(t, c)
	case amqpsax.KindDescribed:
		return expectedDescribed(t, c)
	}
	if bare {
		return v
	}
	return map[string]any{"type": k.String(), "value": v}
}

func orEmpty(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}

func jsonFloat(f float64, bits int) any {
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return s
	}
	return json.Number(s)
}

// validUTF8 is s with each byte that is not UTF-8 as U+FFFD.
func validUTF8(s []byte) string {
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		b.WriteRune(r)
		s = s[n:]
	}
	return b.String()
}

// descriptorOf returns the descriptor as the schema writes it: the name of
// one the spec defines (and, for a list of named fields, that it names
// them), else the descriptor with its type.
func descriptorOf(t *testing.T, c *stream.Cursor) (any, amqpsax.Descriptor, bool) {
	switch c.Kind() {
	case amqpsax.KindUlong:
		if d := amqpsax.Descriptor(c.Uint()); d.Name() != "" {
			return d.Name(), d, true
		}
	case amqpsax.KindSymbol:
		if d, ok := amqpsax.LookupDescriptor(c.Bytes()); ok {
			return d.Name(), d, true
		}
	}
	return expected(t, c, false), 0, false
}

func expectedDescribed(t *testing.T, c *stream.Cursor) any {
	require.True(t, c.Enter())
	require.True(t, c.Next())
	desc, d, known := descriptorOf(t, c)
	require.True(t, c.Next())
	obj := map[string]any{"type": "described", "descriptor": desc}
	if known && frame.NumFields(d) > 0 && c.Kind() == amqpsax.KindList {
		obj["fields"] = expectedFields(t, c, d)
	} else {
		obj["value"] = expected(t, c, false)
	}
	require.False(t, c.Next())
	require.True(t, c.Exit())
	return obj
}

// expectedFields is the object of the named fields of a list.
func expectedFields(t *testing.T, c *stream.Cursor, d amqpsax.Descriptor) map[string]any {
	fields := map[string]any{}
	require.True(t, c.Enter())
	for i := 0; c.Next(); i++ {
		name := frame.FieldName(d, frame.FieldIndex(i))
		if name == "" {
			name = strconv.Itoa(i)
		}
		fields[name] = expected(t, c, false)
	}
	require.True(t, c.Exit())
	return fields
}

func expectedArray(t *testing.T, c *stream.Cursor) any {
	obj := map[string]any{"type": "array", "of": c.ElemKind().String()}
	elems := []any{}
	if c.ElemKind() != amqpsax.KindDescribed {
		require.True(t, c.Enter())
		for c.Next() {
			elems = append(elems, expected(t, c, true))
		}
		require.True(t, c.Exit())
		obj["value"] = elems
		return obj
	}
	d, sym, ok := c.Descriptor()
	named := false
	switch {
	case ok && (sym == nil && d.Name() != "" || sym != nil && d != 0):
		obj["descriptor"], named = d.Name(), frame.NumFields(d) > 0
	case ok && sym != nil:
		obj["descriptor"] = map[string]any{"type": "symbol", "value": validUTF8(sym)}
	case ok:
		obj["descriptor"] = map[string]any{"type": "ulong", "value": json.Number(strconv.FormatUint(uint64(d), 10))}
	default:
		obj["descriptor"] = nil
	}
	require.True(t, c.Enter())
	for c.Next() {
		require.True(t, c.EnterValue())
		obj["value-type"] = c.Kind().String()
		if named && c.Kind() == amqpsax.KindList {
			elems = append(elems, expectedFields(t, c, d))
		} else {
			elems = append(elems, expected(t, c, true))
		}
		require.False(t, c.Next())
		require.True(t, c.Exit())
	}
	require.True(t, c.Exit())
	obj["value"] = elems
	return obj
}

// valuesOf returns the top-level values of data, each as its own bytes.
func valuesOf(t *testing.T, data []byte) [][]byte {
	var c stream.Cursor
	c.Reset(data)
	var out [][]byte
	for c.Next() {
		out = append(out, c.Raw())
	}
	require.NoError(t, c.Err())
	return out
}

// TestJSONSchemaValues: every value of the Proton corpus and of the shared
// valid cases, printed as typed JSON and decoded back, is what the schema
// says it is.
func TestJSONSchemaValues(t *testing.T) {
	var inputs [][]byte
	for _, e := range corpus.Load(t, "messages.jsonl") {
		inputs = append(inputs, e.Data)
	}
	for _, e := range corpus.Load(t, "values.jsonl") {
		inputs = append(inputs, e.Data)
	}
	for _, c := range cases.Valid {
		inputs = append(inputs, cases.Bytes(c.Hex))
	}
	require.NotEmpty(t, inputs)
	for _, data := range inputs {
		var b bytes.Buffer
		out := NewOut(&b)
		require.NoError(t, NewValues(out, Options{JSON: true}).Print(data))
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		values := valuesOf(t, data)
		require.Len(t, lines, len(values), "%x", data)
		offset := 0
		for i, line := range lines {
			obj := decodeJSON(t, line)
			assert.Equal(t, json.Number(strconv.Itoa(offset)), obj["offset"], line)
			var c stream.Cursor
			c.Reset(values[i])
			require.True(t, c.Next())
			assert.Equal(t, expected(t, &c, false), withoutNames(t, obj["value"]), "%x\n%s", values[i], line)
			offset += len(values[i])
		}
	}
}

// TestJSONSchemaFrames: the fields of every performative of Proton's two
// connection streams and the sections of every message are what the
// schema says they are; every frame object has its members, times when
// the input has them.
func TestJSONSchemaFrames(t *testing.T) {
	for _, side := range []string{"client", "server"} {
		data, err := os.ReadFile(filepath.Join(corpus.Dir(), "conn-"+side+".bin"))
		require.NoError(t, err)
		frames := map[int]frame.Frame{} // by offset
		r := frame.NewReader(bytes.NewReader(data))
		for {
			f, err := r.Next()
			if err != nil {
				break
			}
			frames[int(f.Offset)] = f
		}
		p := printChunks(data, Options{JSON: true, ShowSecrets: true}, nil) // the fields as the frames have them
		require.Empty(t, p.faults)
		var asm frame.Assembler
		messages := 0
		for _, line := range strings.Split(strings.TrimSuffix(p.out, "\n"), "\n") {
			obj := decodeJSON(t, line)
			off, err := obj["offset"].(json.Number).Int64()
			require.NoError(t, err)
			f := frames[int(off)]
			if f.IsHeader {
				assert.Equal(t, "AMQP", obj["header"], line)
				continue
			}
			for _, k := range []string{"frame", "size", "doff", "type", "channel"} {
				assert.Contains(t, obj, k, line)
			}
			if len(f.Body) == 0 {
				assert.Equal(t, true, obj["heartbeat"], line)
				continue
			}
			var c stream.Cursor
			c.Reset(f.Body)
			require.True(t, c.Next())
			d, _, _ := c.Descriptor()
			assert.Equal(t, d.TypeName(), obj["performative"], line)
			require.True(t, c.EnterValue())
			assert.Equal(t, expectedFields(t, &c, d), withoutNames(t, obj["fields"]), line)
			if d != amqpsax.DescriptorTransfer {
				continue
			}
			tr, payload, err := frame.ParseTransfer(f.Body)
			require.NoError(t, err)
			dl, done, err := asm.Add(f.Channel, tr, payload)
			require.NoError(t, err)
			if !done {
				continue
			}
			messages++
			msg, _ := obj["message"].(map[string]any)
			require.NotNil(t, msg, line)
			sections, _ := msg["sections"].([]any)
			values := valuesOf(t, dl.Payload)
			require.Len(t, sections, len(values), line)
			for i, s := range sections {
				s := s.(map[string]any)
				var c stream.Cursor
				c.Reset(values[i])
				require.True(t, c.Next())
				d, _, _ := c.Descriptor()
				assert.Equal(t, d.TypeName(), s["section"], line)
				require.True(t, c.EnterValue())
				var want any
				if frame.NumFields(d) > 0 && c.Kind() == amqpsax.KindList {
					want = expectedFields(t, &c, d)
				} else {
					want = expected(t, &c, false)
				}
				assert.Equal(t, want, withoutNames(t, s["value"]), line)
			}
		}
		assert.Positive(t, messages, side)
	}
}
