package amqpsax_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCodeAndKind(t *testing.T) {
	assert.Equal(t, "smalluint", amqpsax.CodeSmallUint.String())
	assert.Equal(t, "str8-utf8", amqpsax.CodeStr8.String())
	assert.Equal(t, "0x3f", amqpsax.Code(0x3f).String())
	assert.Equal(t, amqpsax.KindUint, amqpsax.CodeUint0.Kind())
	assert.Equal(t, amqpsax.KindInvalid, amqpsax.Code(0xff).Kind())
	assert.Equal(t, "boolean", amqpsax.KindBool.String())
	assert.Equal(t, "described", amqpsax.KindDescribed.String())
	assert.Equal(t, "Kind(200)", amqpsax.Kind(200).String())
	// every defined code has a kind and a name of its own
	n := 0
	for c := range 256 {
		if k := amqpsax.Code(c).Kind(); k != amqpsax.KindInvalid {
			n++
			assert.NotContains(t, amqpsax.Code(c).String(), "0x", "code %#x", c)
		}
	}
	assert.Equal(t, 40, n) // 39 encodings and the descriptor constructor
}

func TestDescriptor(t *testing.T) {
	assert.Equal(t, "amqp:properties:list", amqpsax.DescriptorProperties.Name())
	d, ok := amqpsax.LookupDescriptor([]byte("amqp:transfer:list"))
	assert.True(t, ok)
	assert.Equal(t, amqpsax.DescriptorTransfer, d)
	_, ok = amqpsax.LookupDescriptor([]byte("amqp:nothing:list"))
	assert.False(t, ok)
	allocs := testing.AllocsPerRun(100, func() { amqpsax.LookupDescriptor([]byte("amqp:header:list")) })
	assert.Zero(t, allocs)
}

func TestError(t *testing.T) {
	err := error(&amqpsax.Error{Op: "stream", Offset: 6, Code: amqpsax.CodeStr8, HasCode: true, Err: amqpsax.ErrOverrun})
	assert.Equal(t, "stream: value overruns its container (str8-utf8) at offset 6", err.Error())
	assert.True(t, errors.Is(err, amqpsax.ErrMalformed))
	assert.False(t, errors.Is(err, io.ErrUnexpectedEOF), "a fault is not a cut")
	err = &amqpsax.Error{Op: "dispatch", Offset: 3, Err: io.ErrUnexpectedEOF}
	assert.Equal(t, "dispatch: truncated input at offset 3", err.Error())
	assert.False(t, errors.Is(err, amqpsax.ErrMalformed), "a cut is not a fault")
	for _, e := range []error{amqpsax.ErrCountTooLarge, amqpsax.ErrSizeMismatch, amqpsax.ErrOddMapCount,
		amqpsax.ErrInvalidBool, amqpsax.ErrInvalidArrayCode, amqpsax.ErrOverrun, amqpsax.ErrTrailing, amqpsax.ErrInvalidCode} {
		assert.ErrorIs(t, e, amqpsax.ErrMalformed, e.Error())
	}
	ke := error(&amqpsax.KindError{Want: "string", Have: amqpsax.KindInt})
	assert.Equal(t, "value of another kind: want string, have int", ke.Error())
	assert.ErrorIs(t, ke, amqpsax.ErrWrongKind)
}

// TestReadme: every Go block of README.md is the body of a runnable
// example (an Example function with // Output:, run by go test), so the
// README cannot drift from code that works.
func TestReadme(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	var examples strings.Builder
	err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, "example_test.go") {
			b, err := os.ReadFile(path)
			examples.Write(b)
			return err
		}
		return err
	})
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	require.NotEmpty(t, blocks)
	for _, b := range blocks {
		assert.Contains(t, examples.String(), b[1], "README block not found in any example_test.go")
	}
}
