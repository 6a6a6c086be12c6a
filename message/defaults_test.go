package message

import (
	"strconv"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/internal/protocol/composite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHeaderDefaults reads the header's defaults from the default column
// of its table (which frame's tests check against the spec): DefaultHeader
// holds them, a header of null fields parses to them, and AppendHeader
// leaves a field at its default out, or writes it as null before the last
// field given, as Qpid Proton does.
func TestHeaderDefaults(t *testing.T) {
	spec := composite.Header
	fields := []string{
		strconv.FormatBool(DefaultHeader.Durable),
		strconv.FormatUint(uint64(DefaultHeader.Priority), 10),
		"",
		strconv.FormatBool(DefaultHeader.FirstAcquirer),
		strconv.FormatUint(uint64(DefaultHeader.DeliveryCount), 10),
	}
	require.Len(t, spec.Fields, len(fields))
	for i, f := range spec.Fields {
		assert.Equal(t, f.Default, fields[i], f.Name)
	}
	assert.False(t, DefaultHeader.HasTTL, "ttl has no default: absent")

	nulls := mkSection(amqpsax.DescriptorHeader, false, list(null, null, null, null, null))
	h, err := ParseHeader(nulls)
	require.NoError(t, err)
	assert.Equal(t, DefaultHeader, h)

	// One field off its default: written at its place, nulls before it.
	for i, h := range []Header{
		{Durable: true, Priority: 4},
		{Priority: 5},
		{Priority: 4, TTL: 0, HasTTL: true},
		{Priority: 4, FirstAcquirer: true},
		{Priority: 4, DeliveryCount: 2},
	} {
		b := AppendHeader(nil, h)
		var rd composite.Reader
		rd.C.Reset(b)
		require.True(t, rd.C.Next() && rd.C.EnterValue(), spec.Fields[i].Name)
		assert.Equal(t, i+1, rd.C.Count(), "%s: the fields up to it", spec.Fields[i].Name)
		require.True(t, rd.C.Enter())
		for j := range i {
			require.True(t, rd.C.Next())
			assert.True(t, rd.C.IsNull(), "%s: field %d at its default is null", spec.Fields[i].Name, j)
		}
		back, err := ParseHeader(b)
		require.NoError(t, err)
		assert.Equal(t, h, back, spec.Fields[i].Name)
	}
}
