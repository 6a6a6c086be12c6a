package frame

import (
	"bytes"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// peerStreams returns every recorded connection stream of testdata/: Qpid
// Proton's engine (testdata/proton), and go-amqp, rhea, Proton's python
// client, uAMQP-C and RabbitMQ (testdata/peers).
func peerStreams(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, dir := range []string{protonDir, filepath.Join("..", "testdata", "peers")} {
		names, err := filepath.Glob(filepath.Join(dir, "*.bin"))
		require.NoError(t, err)
		for _, name := range names {
			if filepath.Base(name) == "conn-client-trunc.bin" {
				continue // a stream cut on purpose
			}
			b, err := os.ReadFile(name)
			require.NoError(t, err)
			out[filepath.Base(name)] = b
		}
	}
	require.NotEmpty(t, out)
	return out
}

// sameStruct reports whether two parsed values hold the same fields,
// leaving out DeliveryState.Raw (the encoding each was read from).
func sameStruct(a, b any) bool {
	return reflect.DeepEqual(clearRaw(reflect.ValueOf(a)), clearRaw(reflect.ValueOf(b)))
}

// clearRaw returns a copy of v (a pointer to a parsed struct) with every
// DeliveryState's Raw nil.
func clearRaw(v reflect.Value) any {
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	var walk func(reflect.Value)
	walk = func(x reflect.Value) {
		switch x.Kind() {
		case reflect.Struct:
			if x.Type() == reflect.TypeOf(DeliveryState{}) {
				x.FieldByName("Raw").SetBytes(nil)
			}
			for i := range x.NumField() {
				if f := x.Field(i); f.CanSet() {
					walk(f)
				} else if x.Type().Field(i).Name == "v" { // an Opt's value
					walk(reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem())
				}
			}
		}
	}
	walk(c.Elem())
	return c.Interface()
}

// TestFixedPoint parses every frame every peer of testdata/ wrote (Qpid
// Proton's engine and python client, go-amqp, rhea, uAMQP-C, RabbitMQ)
// and writes it back with the matching Append function: the same struct,
// and the same bytes, for every one of them; and the bytes written parse
// to the same struct again.
func TestFixedPoint(t *testing.T) {
	frames := 0
	for name, data := range peerStreams(t) {
		r := NewReader(bytes.NewReader(data))
		for {
			f, err := r.Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err, name)
			if f.IsHeader || len(f.Body) == 0 {
				continue
			}
			frames++
			v, rest, enc, err := parseAny(f.Body)
			require.NoError(t, err, "%s frame at %d", name, f.Offset)
			v2, rest2, enc2, err := parseAny(append(bytes.Clone(enc), rest...))
			require.NoError(t, err, "%s frame at %d written back", name, f.Offset)
			require.True(t, sameStruct(v, v2), "%s frame at %d: %+v written back as %+v", name, f.Offset, v, v2)
			require.Equal(t, rest, rest2)
			require.Equal(t, enc, enc2, "%s frame at %d: not a fixed point", name, f.Offset)
			perf := f.Body[:len(f.Body)-len(rest)]
			require.Equal(t, hex.EncodeToString(perf), hex.EncodeToString(enc), "%s frame at %d written back", name, f.Offset)
		}
	}
	t.Logf("%d frames of %d streams, each written back byte for byte", frames, len(peerStreams(t)))
	require.Greater(t, frames, 1000)
}
