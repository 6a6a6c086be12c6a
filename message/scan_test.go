package message

import (
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScanAfter: a value that is no section is named with the section
// before it and that section's offset. The example: a message
// whose application-properties size byte was lowered, so that Scan lands
// inside its map, on a byte that starts no section; the error points back
// to the application-properties at offset 12 (and still at the byte
// where the scan stopped).
func TestScanAfter(t *testing.T) {
	b := encode.AppendUlong(encode.AppendDescribed(nil), uint64(amqpsax.DescriptorProperties))
	start := len(b)
	b = encode.BeginList(b)
	b = encode.AppendString(b, "id-1")
	b = encode.EndList(b, start, 1)
	apOff := len(b)
	b = encode.AppendUlong(encode.AppendDescribed(b), uint64(amqpsax.DescriptorApplicationProperties))
	start = len(b)
	b = encode.BeginMap(b)
	for _, s := range []string{"tenant", "acme", "region", "eu"} {
		b = encode.AppendString(b, s)
	}
	b = encode.EndMap(b, start, 2)
	dataOff := len(b)
	b = encode.AppendUlong(encode.AppendDescribed(b), uint64(amqpsax.DescriptorData))
	b = encode.AppendBinary(b, []byte("hello"))
	s, err := Scan(b)
	require.NoError(t, err)
	require.Equal(t, apOff, s.Offsets.ApplicationProperties)
	require.Equal(t, byte(amqpsax.CodeMap8), b[apOff+3])
	size := apOff + 4 // the map8's size byte

	for _, c := range []struct {
		lower int    // subtracted from the size byte
		want  string // Scan's error
	}{
		{1, "message: section after application-properties at offset 12: invalid format code (0x75) at offset 43"},
		{4, "message: section after application-properties at offset 12: value is not a message section (str8-utf8) at offset 40"},
		{10, "message: section after application-properties at offset 12: value is not a message section (float) at offset 34"},
	} {
		m := append([]byte(nil), b...)
		m[size] -= byte(c.lower)
		_, err := Scan(m)
		require.Error(t, err)
		assert.Equal(t, c.want, err.Error())
		var e *amqpsax.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, dataOff-c.lower, e.Offset, "where the scan stopped")
		var se *SectionError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "section", se.Section)
	}

	// After a body section, the body's kind names it; with nothing
	// before, only the value is named; a cut says nothing of before.
	m := append(append([]byte(nil), b...), 0xa1, 0x01, 'x')
	_, err = Scan(m)
	assert.EqualError(t, err, "message: section after data at offset 44: value is not a message section (str8-utf8) at offset 54")
	_, err = Scan([]byte{0xa1, 0x01, 'x'})
	assert.EqualError(t, err, "message: section: value is not a message section (str8-utf8) at offset 0")
	_, err = Scan(append(append([]byte(nil), b...), 0x00))
	assert.EqualError(t, err, "message: section: truncated input (described) at offset 54")
}
