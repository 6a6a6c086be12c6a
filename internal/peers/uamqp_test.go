package peers

import (
	"slices"
	"testing"

	"github.com/amqpsax/amqpsax/message"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUAMQPEncoder: every message of testdata/uamqp (uAMQP-C's own
// encoder, no broker) decodes through dispatch and a cursor walk to
// Proton's tree, and message.Scan takes it, reporting uAMQP's section
// order as out of order.
func TestUAMQPEncoder(t *testing.T) {
	msgs := LoadUAMQP(t)
	assert.GreaterOrEqual(t, len(msgs), 30)
	late, footerFirst := 0, 0
	for _, m := range msgs {
		push, pull := trees(t, m.Data, m.Name)
		assert.Equal(t, m.Trace, push, "%s: dispatch and Proton", m.Name)
		assert.Equal(t, push, pull, "%s: dispatch and stream", m.Name)

		secs := sectionsOf(t, m.Data)
		require.Len(t, secs, len(m.Sections), m.Name)
		sc, err := message.Scan(m.Data)
		quirk, off := scanQuirk(secs)
		if quirk == "" {
			require.NoError(t, err, m.Name)
			if sc.FooterFirst {
				footerFirst++
			}
			continue
		}
		// Quirk: uAMQP-C writes delivery-annotations after
		// application-properties, message-annotations and the footer
		// (testdata/uamqp/README.md, doc/peers.md). message.Scan takes
		// that order and reports it.
		require.NoError(t, err, m.Name)
		assert.True(t, sc.OutOfOrder, m.Name)
		assert.Equal(t, off, sc.Offsets.DeliveryAnnotations, m.Name)
		assert.True(t, slices.Contains(m.Sections, "delivery-annotations"), m.Name)
		late++
	}
	t.Logf("%d messages; %d with late delivery-annotations, %d with the footer before the body and no delivery-annotations", len(msgs), late, footerFirst)
	assert.Equal(t, 7, late)
}
