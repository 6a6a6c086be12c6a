package message

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/internal/corpus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The splice a broker does to a message it forwards, checked by Qpid
// Proton: testdata/splice/spliced.jsonl holds the result for every
// message of the Proton corpus (a golden file, rewritten by
// go test ./message -run TestSpliceProton -update), and
// testdata/splice/check.py decodes each one with Proton and writes its
// verdict to testdata/splice/proton-check.jsonl, which this test reads.
// See testdata/splice/README.md.

func init() {
	// -update rewrites golden files. Register it unless another test file
	// of this package already has (package-level variables are
	// initialised before init functions run).
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

var spliceDir = filepath.Join("..", "testdata", "splice")

// routedBy is the annotation the splice adds.
const routedBy = "x-opt-routed-by"

// splicedRecord is one line of spliced.jsonl.
type splicedRecord struct {
	Name        string `json:"name"`
	OriginalHex string `json:"original_hex"`
	SplicedHex  string `json:"spliced_hex"`
}

// protonVerdict is one line of proton-check.jsonl.
type protonVerdict struct {
	Name          string   `json:"name"`
	SplicedSHA256 string   `json:"spliced_sha256"`
	OK            bool     `json:"ok"`
	Problems      []string `json:"problems"`
	Notes         []string `json:"notes"`
}

// protonExceptions names corpus messages whose Proton check may fail, with
// the reason. It is empty: Proton agrees on every message.
var protonExceptions = map[string]string{}

// forward is the broker's splice: delivery-count + 1 and the message
// annotation x-opt-routed-by = "amqpsax". The count saturates at the
// largest uint (header-delivery-count-max): wrapping to 0 would make a
// message delivered 2³²-1 times look never delivered.
func forward(t *testing.T, msg []byte) []byte {
	t.Helper()
	s, err := Scan(msg)
	require.NoError(t, err)
	h, err := ParseHeader(s.Header)
	require.NoError(t, err)
	h.AddDelivery() // saturates at the largest uint
	ch := Changes{Header: &h, MessageAnnotations: Edit{Set: []Entry{{SymbolKey(routedBy), encode.AppendString(nil, "amqpsax")}}}}
	out, err := Append(nil, s, &ch)
	require.NoError(t, err)

	// Our own reading of the result; Proton's is check.py's.
	s2, err := Scan(out)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(s.Bare, s2.Bare), "bare message changed")
	assert.True(t, bytes.Equal(s.Footer, s2.Footer), "footer changed")
	assert.True(t, bytes.Equal(s.DeliveryAnnotations, s2.DeliveryAnnotations), "delivery annotations changed")
	h2, err := ParseHeader(s2.Header)
	require.NoError(t, err)
	assert.Equal(t, h, h2)
	v, err := Lookup(s2.MessageAnnotations, routedBy)
	require.NoError(t, err)
	assert.Equal(t, encode.AppendString(nil, "amqpsax"), v.Raw())
	return out
}

// TestSpliceProton splices every message of the Proton corpus, compares
// the result with the golden file, and checks Proton's verdict on it.
func TestSpliceProton(t *testing.T) {
	msgs := corpus.Load(t, "messages.jsonl")
	var golden bytes.Buffer
	spliced := make(map[string][]byte, len(msgs))
	for _, e := range msgs {
		var out []byte
		t.Run(e.Name, func(t *testing.T) { out = forward(t, e.Data) })
		require.NotNil(t, out, e.Name)
		_, dup := spliced[e.Name]
		require.False(t, dup, "duplicate corpus name %s", e.Name)
		spliced[e.Name] = out
		line, err := json.Marshal(splicedRecord{e.Name, e.Hex, hex.EncodeToString(out)})
		require.NoError(t, err)
		golden.Write(line)
		golden.WriteByte('\n')
	}

	path := filepath.Join(spliceDir, "spliced.jsonl")
	if updating() {
		require.NoError(t, os.WriteFile(path, golden.Bytes(), 0o644))
		t.Log("wrote", path, "- now run /usr/bin/python3 testdata/splice/check.py")
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./message -run TestSpliceProton -update to create it")
	// Compared as bytes, not with assert.Equal: the file is over a
	// megabyte and a diff of it is no help.
	require.True(t, bytes.Equal(want, golden.Bytes()),
		"%s differs from what the splice writes now; rerun with -update, then check.py", path)

	// Proton's verdict, one record per spliced message.
	verdicts := loadVerdicts(t, filepath.Join(spliceDir, "proton-check.jsonl"))
	seen := make(map[string]bool, len(verdicts))
	for _, v := range verdicts {
		out, ok := spliced[v.Name]
		if !assert.True(t, ok, "proton-check.jsonl: %s is not a corpus message", v.Name) {
			continue
		}
		assert.False(t, seen[v.Name], "proton-check.jsonl: %s twice", v.Name)
		seen[v.Name] = true
		sum := sha256.Sum256(out)
		assert.Equal(t, hex.EncodeToString(sum[:]), v.SplicedSHA256,
			"%s: Proton checked other bytes than the splice writes now; rerun check.py", v.Name)
		if reason, excepted := protonExceptions[v.Name]; excepted {
			t.Logf("%s: Proton check not required (%s): ok=%v %v", v.Name, reason, v.OK, v.Problems)
			continue
		}
		assert.True(t, v.OK, "%s: Proton disagrees: %v", v.Name, v.Problems)
		assert.Empty(t, v.Problems, v.Name)
	}
	for name := range spliced {
		assert.True(t, seen[name], "proton-check.jsonl has no record of %s; rerun check.py", name)
	}
}

func loadVerdicts(t *testing.T, path string) []protonVerdict {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err, "run /usr/bin/python3 testdata/splice/check.py to create it")
	defer f.Close()
	var out []protonVerdict
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var v protonVerdict
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v), path)
		out = append(out, v)
	}
	require.NoError(t, sc.Err())
	return out
}
