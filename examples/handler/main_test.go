package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
	"github.com/amqpsax/amqpsax/internal/corpus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRun runs the example on its bundled sample.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out, nil))
	assert.Equal(t, `sample.amqp: 209 bytes, 6 sections
  amqp:header:list
  amqp:delivery-annotations:map
  amqp:message-annotations:map
  amqp:properties:list
  amqp:application-properties:map
  amqp:data:binary
values by type:
  null         1
  boolean      1
  ubyte        1
  uint         3
  ulong        6
  long         1
  timestamp    2
  uuid         1
  binary       2
  string       9
  symbol       4
  list         2
  map          3
  described    6
string bytes: 16
symbol bytes: 42
binary bytes: 17
deepest nesting: 2
`, out.String())
}

// TestRunFile runs the example on a file, and on bad input.
func TestRunFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.amqp")
	require.NoError(t, os.WriteFile(good, []byte{0x00, 0x53, 0x77, 0xa1, 0x02, 'h', 'i'}, 0o644))
	var out bytes.Buffer
	require.NoError(t, run(&out, []string{good}))
	assert.Contains(t, out.String(), "7 bytes, 1 sections\n  amqp:amqp-value:*\n")
	assert.Contains(t, out.String(), "string bytes: 2\n")

	bad := filepath.Join(dir, "bad.amqp")
	require.NoError(t, os.WriteFile(bad, []byte{0x00, 0x53, 0x77, 0xa1, 0x05, 'h', 'i'}, 0o644))
	err := run(&out, []string{bad})
	var ae *amqpsax.Error
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 3, ae.Offset)

	assert.Error(t, run(&out, []string{filepath.Join(dir, "absent")}))
	assert.Error(t, run(&out, []string{good, good}))
}

// TestStatsMatchProton: for every message of the Proton corpus, Stats
// reports what the trace of Proton's own decoder implies.
func TestStatsMatchProton(t *testing.T) {
	kinds := map[string]amqpsax.Kind{"bool": amqpsax.KindBool}
	for k := amqpsax.KindNull; k <= amqpsax.KindDescribed; k++ {
		kinds[k.String()] = k
	}
	for _, e := range corpus.Load(t, "messages.jsonl") {
		var want Stats
		depth := 0
		toks := strings.Fields(e.Trace)
		for i, tok := range toks {
			if strings.HasPrefix(tok, "/") {
				depth--
				continue
			}
			name, val, _ := strings.Cut(tok, ":")
			k, ok := kinds[name]
			require.True(t, ok, tok)
			want.Kinds[k]++
			switch k {
			case amqpsax.KindString:
				want.StringBytes += len(val) / 2
			case amqpsax.KindSymbol:
				want.SymbolBytes += len(val) / 2
			case amqpsax.KindBinary:
				want.BinaryBytes += len(val) / 2
			case amqpsax.KindList, amqpsax.KindMap, amqpsax.KindArray, amqpsax.KindDescribed:
				if k == amqpsax.KindDescribed && depth == 0 {
					v, err := strconv.ParseUint(strings.TrimPrefix(toks[i+1], "ulong:"), 10, 64)
					require.NoError(t, err, "%s: section descriptor %s", e.Name, toks[i+1])
					want.Sections = append(want.Sections, amqpsax.Descriptor(v))
				}
				depth++
				want.MaxDepth = max(want.MaxDepth, depth)
			}
		}

		var got Stats
		var d dispatch.Decoder
		require.NoError(t, d.DecodeAll(e.Data, &got), e.Name)
		got.depth, got.descriptor = 0, false
		assert.Equal(t, want, got, e.Name)
	}
}
