package dispatch

import (
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/internal/corpus"
	"github.com/amqpsax/amqpsax/internal/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProtonCorpus: every value, message and performative Proton wrote
// (or decoded) decodes to the tree Proton's own decoder reported.
func TestProtonCorpus(t *testing.T) {
	var d Decoder
	var rec trace.Recorder
	counts := map[string]int{}
	for _, file := range []string{"values.jsonl", "messages.jsonl", "performatives.jsonl"} {
		for _, e := range corpus.Load(t, file) {
			rec.Reset()
			err := d.DecodeAll(e.Data, &rec)
			if assert.NoError(t, err, "%s %s", file, e.Name) {
				assert.Equal(t, e.Trace, rec.String(), "%s %s", file, e.Name)
			}
			counts[file]++
		}
	}
	t.Logf("decoded %v", counts)
	assert.GreaterOrEqual(t, counts["messages.jsonl"], 20)
	assert.GreaterOrEqual(t, counts["performatives.jsonl"], 20)
}

// TestProtonRoundTrip: decode → Writer → decode gives the same events.
func TestProtonRoundTrip(t *testing.T) {
	var d Decoder
	var w encode.Writer
	var rec trace.Recorder
	for _, e := range corpus.All(t) {
		w.Reset()
		require.NoError(t, d.DecodeAll(e.Data, &w), e.Name)
		rec.Reset()
		require.NoError(t, d.DecodeAll(w.Bytes(), &rec), e.Name)
		assert.Equal(t, e.Trace, rec.String(), e.Name)
	}
}

// TestProtonAllocs: a warm Decoder with a no-op handler allocates nothing
// over the whole corpus.
func TestProtonAllocs(t *testing.T) {
	var d Decoder
	entries := corpus.All(t)
	h := amqpsax.NopHandler{}
	for _, e := range entries {
		require.NoError(t, d.DecodeAll(e.Data, h))
	}
	allocs := testing.AllocsPerRun(5, func() {
		for _, e := range entries {
			_ = d.DecodeAll(e.Data, h)
		}
	})
	assert.Zero(t, allocs)
}
