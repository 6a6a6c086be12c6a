package dump

import (
	"bytes"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestValuesMaskInACopy: Values.Print masks a sasl-init's secret in what
// it prints, not in the caller's bytes; a value of another kind is
// printed from them, uncopied, and secrets are shown with ShowSecrets.
func TestValuesMaskInACopy(t *testing.T) {
	init := frame.AppendSASLInit(nil, frame.SASLInit{Mechanism: []byte("PLAIN"), InitialResponse: []byte("\x00u\x00pw-secret")})
	data := append(bytes.Clone(init), init...)
	var out bytes.Buffer
	require.NoError(t, NewValues(NewOut(&out), Options{}).Print(data))
	assert.Equal(t, append(bytes.Clone(init), init...), data, "the caller's bytes are not written")
	assert.NotContains(t, out.String(), "70772d736563726574") // "pw-secret"
	assert.Equal(t, 2, strings.Count(out.String(), "2a2a2a2a2a2a2a2a2a2a2a2a"))
	other := frame.AppendOpen(nil, frame.Open{ContainerID: []byte("c")})
	assert.Equal(t, &other[0], &maskValues(other)[0], "nothing to mask: no copy")
	out.Reset()
	require.NoError(t, NewValues(NewOut(&out), Options{ShowSecrets: true}).Print(data))
	assert.Contains(t, out.String(), "70772d736563726574")
}
