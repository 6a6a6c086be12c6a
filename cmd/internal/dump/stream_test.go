package dump

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/internal/corpus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// printed is the output of a Stream and the faults it reported.
type printed struct {
	out    string
	faults []string
}

// printChunks prints data as a Stream, written in the chunks cut says
// (their lengths, in turn; the last repeats), or whole when cut is nil.
func printChunks(data []byte, opts Options, cut func() int) printed {
	var b bytes.Buffer
	var p printed
	out := NewOut(&b)
	out.Offsets, out.Width = true, 5
	opts.OnFault = func(err error) { p.faults = append(p.faults, err.Error()) }
	s := NewStream(out, opts)
	if cut == nil {
		s.WriteAll(data)
	} else {
		for len(data) > 0 {
			n := min(max(cut(), 1), len(data))
			s.Write(data[:n])
			data = data[n:]
		}
		s.Close()
	}
	p.out = b.String()
	return p
}

// badStream is a connection stream with faults a Stream goes on after,
// then one it cannot: a frame of size 4.
func badStream() []byte {
	b := frame.AppendProtocolHeader(nil, frame.HeaderAMQP)
	b = frame.AppendFrame(b, frame.Frame{Body: frame.AppendOpen(nil, frame.Open{ContainerID: []byte("a")})})
	b = append(b, 0, 0, 0, 12, 1, 0, 0, 0, 0x00, 0x53, 0x17, 0x45) // data offset 1
	b = append(b, 0, 0, 0, 12, 4, 0, 0, 0, 0x00, 0x53, 0x17, 0x45) // data offset past the end
	b = frame.AppendFrame(b, frame.Frame{Channel: 3, Body: frame.AppendEnd(nil, frame.End{})})
	b = append(b, 0, 0, 0, 4, 2, 0, 0, 0) // size 4: the rest cannot be split
	return frame.AppendFrame(b, frame.Frame{Body: frame.AppendClose(nil, frame.Close{})})
}

// TestChunks: a Stream prints the same, and reports the same faults,
// however its bytes arrive: whole, one at a time, or in random chunks
// (frame.Reader resumes after the feed runs dry, and a bad frame is
// skipped by its size whether the bytes after it have arrived or not).
func TestChunks(t *testing.T) {
	client, err := os.ReadFile(filepath.Join(corpus.Dir(), "conn-client.bin"))
	require.NoError(t, err)
	inputs := map[string][]byte{
		"client":      client,
		"client cut":  client[:len(client)-20],
		"bad":         badStream(),
		"bad and cut": badStream()[:len(badStream())-3],
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for name, data := range inputs {
		for _, opts := range []Options{{}, {JSON: true}} {
			whole := printChunks(data, opts, nil)
			assert.Equal(t, whole, printChunks(data, opts, func() int { return 1 }), "%s: one byte at a time", name)
			for range 20 {
				assert.Equal(t, whole, printChunks(data, opts, func() int { return rng.IntN(40) }), "%s: random chunks", name)
			}
		}
	}
}

// TestBadStream: what a Stream says about each fault of badStream, and
// that the frames after the ones it can skip are printed.
func TestBadStream(t *testing.T) {
	p := printChunks(badStream(), Options{}, nil)
	assert.Contains(t, p.out, "frame 1 at 8: size 17, doff 2, type 0 (AMQP), channel 0: open\n")
	assert.Contains(t, p.out, "frame 4 at 49: size 12, doff 2, type 0 (AMQP), channel 3: end\n")
	assert.NotContains(t, p.out, "close")
	assert.Equal(t, []string{
		"amqpdump: frame 2 at offset 25: invalid data offset (size 12, doff 1, type 0 (AMQP), channel 0): skipped by its size, to offset 37",
		"amqpdump: frame 3 at offset 37: invalid data offset (size 12, doff 4, type 0 (AMQP), channel 0): skipped by its size, to offset 49",
		"amqpdump: frame 5 at offset 61: frame size below the frame header's (size 4, doff 2, type 0 (AMQP), channel 0): the next frame cannot be found, the rest of the stream is not read",
	}, p.faults)
}

// TestTLS: after a TLS protocol header the stream is not decoded.
func TestTLS(t *testing.T) {
	data := append(frame.AppendProtocolHeader(nil, frame.HeaderTLS), "\x16\x03\x01 a TLS client hello"...)
	p := printChunks(data, Options{}, nil)
	assert.Equal(t, "    0  protocol header at 0: AMQP 2 1.0.0 (TLS)\n", p.out)
	require.Len(t, p.faults, 1)
	assert.Contains(t, p.faults[0], "encrypted")
}

// TestLost: bytes missing from a capture stop the decoding of that
// direction, with a fault saying where.
func TestLost(t *testing.T) {
	var b bytes.Buffer
	var faults []error
	s := NewStream(NewOut(&b), Options{OnFault: func(err error) { faults = append(faults, err) }})
	s.Write(frame.AppendProtocolHeader(nil, frame.HeaderAMQP))
	s.Lost(100)
	s.Write(frame.AppendFrame(nil, frame.Frame{Body: frame.AppendEnd(nil, frame.End{})}))
	s.Close()
	assert.Equal(t, "protocol header at 0: AMQP 0 1.0.0 (AMQP)\n", b.String())
	require.Len(t, faults, 1)
	var fe *FrameError
	require.ErrorAs(t, faults[0], &fe)
	assert.Equal(t, int64(8), fe.Offset)
}

// TestJSONLines: every line of the JSON output of both Proton streams is
// a JSON object, one per protocol header and frame, and the fields of the
// performatives and the sections of the messages are there.
func TestJSONLines(t *testing.T) {
	for _, side := range []string{"client", "server"} {
		data, err := os.ReadFile(filepath.Join(corpus.Dir(), "conn-"+side+".bin"))
		require.NoError(t, err)
		p := printChunks(data, Options{JSON: true}, nil)
		require.Empty(t, p.faults)
		var items int
		r := frame.NewReader(bytes.NewReader(data))
		for {
			if _, err := r.Next(); errors.Is(err, io.EOF) {
				break
			}
			items++
		}
		lines := strings.Split(strings.TrimSuffix(p.out, "\n"), "\n")
		assert.Len(t, lines, items, side)
		var messages int
		for _, line := range lines {
			var obj struct {
				Performative string
				Fields       map[string]any
				Delivery     string
				Message      *struct {
					Bytes    int
					Sections []struct {
						Section string
						Value   any
					}
				}
			}
			require.NoError(t, json.Unmarshal([]byte(line), &obj), line)
			if obj.Performative == "attach" {
				role, _ := obj.Fields["role"].(map[string]any)
				assert.Equal(t, "boolean", role["type"], line)
				assert.Contains(t, []any{"sender", "receiver"}, role["name"], line)
			}
			if obj.Message != nil {
				messages++
				require.NotEmpty(t, obj.Message.Sections, line)
				assert.Equal(t, "header", obj.Message.Sections[0].Section, line)
			}
		}
		assert.Positive(t, messages, side)
	}
}

// TestTooLarge: a frame above MaxFrameSize is reported and skipped by its
// size without being held, and the frames after it are printed, however
// the bytes arrive.
func TestTooLarge(t *testing.T) {
	b := frame.AppendProtocolHeader(nil, frame.HeaderAMQP)
	big := frame.Frame{Body: frame.AppendOpen(nil, frame.Open{ContainerID: bytes.Repeat([]byte("x"), 500)})}
	b = frame.AppendFrame(b, big)
	b = frame.AppendFrame(b, frame.Frame{Channel: 2, Body: frame.AppendEnd(nil, frame.End{})})
	opts := Options{MaxFrameSize: 64}
	whole := printChunks(b, opts, nil)
	assert.Equal(t, []string{"amqpdump: frame 1 at offset 8: frame larger than the maximum frame size (size 525, doff 2, type 0 (AMQP), channel 0): skipped by its size, to offset 533"}, whole.faults)
	assert.Contains(t, whole.out, "frame 2 at 533: size 12, doff 2, type 0 (AMQP), channel 2: end\n")
	assert.Equal(t, whole, printChunks(b, opts, func() int { return 1 }))
	assert.Equal(t, whole, printChunks(b, opts, func() int { return 100 }))
}
