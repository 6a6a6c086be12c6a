package message

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/amqpsax/amqpsax/internal/corpus"
	"github.com/amqpsax/amqpsax/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Building, checked by Qpid Proton: testdata/build/built.jsonl holds every
// message of the Proton corpus built afresh by Message.Append from typed
// parts (a golden file, rewritten by go test ./message -run
// TestBuildProton -update), and testdata/build/check.py has Proton decode
// and re-encode each one and writes its verdict to
// testdata/build/proton-check.jsonl, which this test reads. See
// testdata/build/README.md.

var buildDir = filepath.Join("..", "testdata", "build")

// builtRecord is one line of built.jsonl.
type builtRecord struct {
	Name string `json:"name"`
	Hex  string `json:"hex"`
}

// rebuild builds the message m holds afresh from typed parts: the header
// and properties structs copied, every entry and body value re-made with
// a Values from its encoding, data payloads copied.
func rebuild(t *testing.T, vs *Values, m *Message) *Message {
	t.Helper()
	out := &Message{}
	if m.Header != nil {
		h := *m.Header
		out.Header = &h
	}
	if m.Properties != nil {
		p := *m.Properties
		out.Properties = &p
	}
	entries := func(e Entries) Entries {
		if !e.Present() {
			return Entries{}
		}
		var r []Field
		for key, val := range e.All() {
			k, err := vs.Raw(key.Raw())
			require.NoError(t, err)
			v, err := vs.Raw(val.Raw())
			require.NoError(t, err)
			r = append(r, Field{k, v})
		}
		return EntriesOf(r...)
	}
	out.DeliveryAnnotations = entries(m.DeliveryAnnotations)
	out.MessageAnnotations = entries(m.MessageAnnotations)
	out.ApplicationProperties = entries(m.ApplicationProperties)
	out.Footer = entries(m.Footer)
	out.Body.Kind = m.Body.Kind
	for _, d := range m.Body.Data {
		out.Body.Data = append(out.Body.Data, bytes.Clone(d))
	}
	for _, s := range m.Body.Sequence {
		v, err := vs.Raw(s.Raw())
		require.NoError(t, err)
		out.Body.Sequence = append(out.Body.Sequence, v)
	}
	if m.Body.Kind == BodyValue {
		v, err := vs.Raw(m.Body.Value.Raw())
		require.NoError(t, err)
		out.Body.Value = v
	}
	return out
}

// TestBuildProton: every corpus message, built afresh from typed parts,
// is byte for byte what Proton wrote, and Proton (check.py) agrees: it
// decodes each built message and encodes it again to the same bytes.
func TestBuildProton(t *testing.T) {
	var recs []builtRecord
	var m Message
	for _, e := range corpus.Load(t, "messages.jsonl") {
		require.NoError(t, m.Decode(e.Data), e.Name)
		var vs Values
		out, err := rebuild(t, &vs, &m).Append(nil)
		require.NoError(t, err)
		assert.Equal(t, hex.EncodeToString(e.Data), hex.EncodeToString(out), e.Name)
		recs = append(recs, builtRecord{e.Name, hex.EncodeToString(out)})
	}
	path := filepath.Join(buildDir, "built.jsonl")
	var buf bytes.Buffer
	for _, r := range recs {
		line, err := json.Marshal(r)
		require.NoError(t, err)
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if updating() {
		require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	}
	golden, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(golden), buf.String(), "built.jsonl is stale: go test ./message -run TestBuildProton -update, then /usr/bin/python3 testdata/build/check.py")

	verdicts := loadBuildVerdicts(t, filepath.Join(buildDir, "proton-check.jsonl"))
	require.Len(t, verdicts, len(recs))
	for i, v := range verdicts {
		raw, _ := hex.DecodeString(recs[i].Hex)
		sum := sha256.Sum256(raw)
		assert.Equal(t, recs[i].Name, v.Name)
		assert.Equal(t, hex.EncodeToString(sum[:]), v.BuiltSHA256, "%s: Proton checked other bytes; rerun check.py", v.Name)
		assert.True(t, v.OK, "%s: %v", v.Name, v.Problems)
	}
}

// TestBuildFromGoValues: every message of testdata rebuilt from Go values
// (each entry's key and value, and the body value, through
// stream.Value.Any and Values.Any) holds the same Go values, and the same
// bytes where no value changes form on the way (arrays become lists,
// chars ints, map entries sort).
func TestBuildFromGoValues(t *testing.T) {
	var m, back Message
	same, total := 0, 0
	for _, pm := range loadMessages(t) {
		require.NoError(t, m.Decode(pm.Data))
		var vs Values
		goValue := func(v stream.Value) stream.Value {
			a, err := v.Any()
			require.NoError(t, err, pm.Name)
			w, err := vs.Any(a)
			require.NoError(t, err, pm.Name)
			return w
		}
		built := rebuild(t, &vs, &m)
		for _, e := range []*Entries{&built.DeliveryAnnotations, &built.MessageAnnotations, &built.ApplicationProperties, &built.Footer} {
			if !e.Present() {
				continue
			}
			var fs []Field
			for k, v := range e.All() {
				fs = append(fs, Field{goValue(k), goValue(v)})
			}
			*e = EntriesOf(fs...)
		}
		for i := range built.Body.Sequence {
			built.Body.Sequence[i] = goValue(built.Body.Sequence[i])
		}
		if built.Body.Kind == BodyValue {
			built.Body.Value = goValue(built.Body.Value)
		}
		out, err := built.Append(nil)
		require.NoError(t, err)
		require.NoError(t, back.Decode(out))
		require.Equal(t, goValues(t, &m), goValues(t, &back), pm.Name)
		total++
		if bytes.Equal(out, pm.Data) {
			same++
		}
	}
	t.Logf("%d of %d messages rebuilt from Go values byte for byte", same, total)
}

// goValues is a message's entries and body as Go values.
func goValues(t *testing.T, m *Message) []any {
	var out []any
	for _, e := range []Entries{m.DeliveryAnnotations, m.MessageAnnotations, m.ApplicationProperties, m.Footer} {
		for key, val := range e.All() {
			k, err := key.Any()
			require.NoError(t, err)
			v, err := val.Any()
			require.NoError(t, err)
			out = append(out, k, v)
		}
	}
	for _, s := range m.Body.Sequence {
		v, err := s.Any()
		require.NoError(t, err)
		out = append(out, v)
	}
	if m.Body.Kind == BodyValue {
		v, err := m.Body.Value.Any()
		require.NoError(t, err)
		out = append(out, v)
	}
	return append(out, m.Body.Data, describeFields(m))
}

// describeFields is the header and properties of m, for comparison.
func describeFields(m *Message) string {
	var b bytes.Buffer
	if m.Header != nil {
		b.WriteString("header ")
		fmt.Fprintf(&b, "%+v", *m.Header)
	}
	if m.Properties != nil {
		b.WriteString(" properties ")
		fmt.Fprintf(&b, "%+v", *m.Properties)
	}
	return b.String()
}

// buildVerdict is one line of testdata/build/proton-check.jsonl.
type buildVerdict struct {
	Name        string   `json:"name"`
	BuiltSHA256 string   `json:"built_sha256"`
	OK          bool     `json:"ok"`
	Problems    []string `json:"problems"`
}

func loadBuildVerdicts(t *testing.T, path string) []buildVerdict {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err, "run /usr/bin/python3 testdata/build/check.py")
	defer f.Close()
	var out []buildVerdict
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var v buildVerdict
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v))
		out = append(out, v)
	}
	require.NoError(t, sc.Err())
	return out
}
