package encode

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax/internal/corpus"
	"github.com/amqpsax/amqpsax/internal/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProtonPrimitives: for every primitive value Proton's encoder wrote,
// the Writer (which calls the Append functions) writes the same bytes.
func TestProtonPrimitives(t *testing.T) {
	var w Writer
	n := 0
	for _, e := range corpus.Load(t, "values.jsonl") {
		if e.Source != "proton" || strings.Contains(e.Trace, " ") {
			continue // hand-made widths, and compounds
		}
		w.Reset()
		require.NoError(t, trace.Replay(e.Trace, &w), e.Name)
		assert.Equal(t, e.Hex, hex.EncodeToString(w.Bytes()), e.Name)
		n++
	}
	t.Logf("%d primitive values match Proton byte for byte", n)
	assert.Greater(t, n, 3000)
}
