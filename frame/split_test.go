package frame

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// splitCase is a stream and the maximum frame size it is split with.
type splitCase struct {
	name string
	data []byte
	max  uint32
}

// headersAndFrames is TestReaderHeadersAndFrames's stream: protocol
// headers, a SASL frame, a heartbeat, an extended header, a TLS header
// and the TLS record after it.
func headersAndFrames() []byte {
	var in []byte
	in = AppendProtocolHeader(in, HeaderSASL)
	start := len(in)
	in = BeginFrame(in, TypeSASL, 0)
	in = AppendSASLInit(in, SASLInit{Mechanism: []byte("ANONYMOUS")})
	in = EndFrame(in, start)
	in = AppendProtocolHeader(in, HeaderAMQP)
	start = len(in)
	in = EndFrame(BeginFrame(in, TypeAMQP, 7), start)
	in = append(in, AppendFrame(nil, Frame{Type: TypeAMQP, Channel: 3, Ext: []byte{1, 2, 3}, Body: []byte{0x40}})...)
	in = AppendProtocolHeader(in, HeaderTLS)
	return append(in, 0x16, 0x03, 0x01, 0, 0, 0, 0, 0)
}

// splitCases are the streams of the Reader's tests: the captured
// connections, headers and frames of every kind, every corruption of
// TestReaderCorrupt (of the client connection's frames), the cuts of
// TestReaderHeaderCut, TestReadErrorHeader's and TestReaderHugeClaims'
// frames.
func splitCases(t testing.TB) []splitCase {
	var cases []splitCase
	for _, name := range []string{"conn-client.bin", "conn-server.bin", "conn-caps-client.bin",
		"conn-caps-server.bin", "conn-client-trunc.bin"} {
		cases = append(cases, splitCase{name, readStream(t, name), 0})
	}
	cases = append(cases, splitCase{"headers-and-frames", headersAndFrames(), 0})
	data := readStream(t, "conn-client.bin")
	var offs []int
	var sizes []uint32
	largest := uint32(0)
	for off := 0; off < len(data); {
		f, n, err := Split(data[off:], 0)
		require.NoError(t, err)
		require.NotZero(t, n)
		if !f.IsHeader {
			offs, sizes = append(offs, off), append(sizes, f.Size)
		}
		largest = max(largest, f.Size)
		off += n
	}
	for i, off := range offs {
		size := sizes[i]
		for _, c := range []struct {
			size uint32
			doff uint8
			max  uint32
		}{
			{0, 2, 0}, {7, 2, 0}, {DefaultReaderMaxFrameSize + 1, 2, 0}, {1<<32 - 1, 2, 0},
			{largest + 1, 2, largest}, {size, 0, 0}, {size, 1, 0}, {size, uint8(size/4 + 1), 0}, {size, 255, 0},
		} {
			bad := bytes.Clone(data)
			binary.BigEndian.PutUint32(bad[off:], c.size)
			bad[off+4] = c.doff
			cases = append(cases, splitCase{"corrupt", bad, c.max})
		}
	}
	amqp := AppendProtocolHeader(nil, HeaderAMQP)
	sasl := AppendProtocolHeader(nil, HeaderSASL)
	for _, cut := range [][]byte{amqp[:5], amqp[:1], amqp[:7], append(sasl, amqp[:4]...), []byte("AMX"),
		{0, 0, 0, 8, 2}, append(bytes.Clone(amqp), 0, 0, 0),
		{0, 0, 0, 64, 2, 1, 0, 7, 1, 2, 3, 4}, {0, 0, 0, 64, 1, 0, 0, 3}} {
		cases = append(cases, splitCase{"cut", cut, 0})
	}
	for _, size := range []uint32{1 << 20, 1 << 24, 1 << 31, 1<<32 - 1} {
		in := append(frameHeader(size, 2, 0, 0), make([]byte, 1000)...)
		cases = append(cases, splitCase{"huge", in, size - 1}, splitCase{"huge", in, 1<<32 - 1})
	}
	return cases
}

// readFrames reads the whole stream with a Reader: every frame and
// header, Ext included, and the error that ends it.
func readFrames(r *Reader) ([]Frame, error) {
	var out []Frame
	for {
		f, err := r.Next()
		if err != nil {
			return out, err
		}
		f.Ext, f.Body = bytes.Clone(f.Ext), bytes.Clone(f.Body)
		out = append(out, f)
	}
}

// sameFrame reports whether a frame Split returned at offset off is the
// one the Reader returned.
func sameFrame(t *testing.T, want Frame, got Frame, off int, msg ...any) {
	t.Helper()
	got.Offset = int64(off)
	if len(want.Ext) == 0 && len(got.Ext) == 0 {
		want.Ext, got.Ext = nil, nil
	}
	if len(want.Body) == 0 && len(got.Body) == 0 {
		want.Body, got.Body = nil, nil
	}
	assert.Equal(t, want, got, msg...)
}

// TestSplitTable splits every stream of splitCases item by item, each
// cut at every byte: a cut item is n == 0 and no error; a whole one is
// the frame the Reader returns, a view into the input; the fault that
// ends the Reader's stream is Split's fault too, at the same place, from
// the same 8 bytes on.
func TestSplitTable(t *testing.T) {
	for _, c := range splitCases(t) {
		r := NewReader(bytes.NewReader(c.data))
		r.MaxFrameSize = c.max
		want, rerr := readFrames(r)
		off := 0
		for i, w := range want {
			size := int(w.Size)
			for k := range size {
				f, n, err := Split(c.data[off:off+k], c.max)
				require.NoError(t, err, "%s item %d cut at %d", c.name, i, k)
				require.Zero(t, n, "%s item %d cut at %d", c.name, i, k)
				require.Equal(t, Frame{}, f)
			}
			for _, b := range [][]byte{c.data[off : off+size], c.data[off:]} {
				f, n, err := Split(b, c.max)
				require.NoError(t, err, "%s item %d", c.name, i)
				require.Equal(t, size, n, "%s item %d", c.name, i)
				sameFrame(t, w, f, off, "%s item %d", c.name, i)
				if len(f.Body) > 0 {
					assert.Same(t, &b[size-len(f.Body)], &f.Body[0], "a view")
					assert.Equal(t, len(f.Body), cap(f.Body), "capacity ends with the frame")
				}
			}
			off += size
		}
		rest := c.data[off:]
		var re *ReadError
		switch {
		case rerr == io.EOF:
			assert.Empty(t, rest, c.name)
		case errors.Is(rerr, ErrEncrypted):
			require.NotEmpty(t, want, c.name)
			assert.Equal(t, ProtocolTLS, want[len(want)-1].Header.ID, c.name)
		case errors.Is(rerr, io.ErrUnexpectedEOF):
			for k := 0; k <= len(rest); k++ {
				_, n, err := Split(rest[:k], c.max)
				require.NoError(t, err, "%s cut at %d of the last item", c.name, k)
				require.Zero(t, n, "%s cut at %d of the last item", c.name, k)
			}
		default:
			require.ErrorAs(t, rerr, &re, c.name)
			require.True(t, re.HasSize, c.name)
			for k := 0; k <= len(rest); k++ {
				if k > 2*headerSize && k < len(rest) {
					continue // the fault is in the first 8 bytes: a few more, then all
				}
				f, n, err := Split(rest[:k], c.max)
				require.Zero(t, n)
				require.Equal(t, Frame{}, f)
				if k < headerSize {
					require.NoError(t, err, "%s fault cut at %d", c.name, k)
					continue
				}
				var se *ReadError
				require.ErrorAs(t, err, &se, "%s fault cut at %d", c.name, k)
				se.Offset += int64(off)
				require.Equal(t, *re, *se, "%s fault cut at %d", c.name, k)
			}
		}
	}
}

// TestSplitLimit: 0 is DefaultReaderMaxFrameSize, the size is compared
// before anything else, and where int has 32 bits nothing above
// math.MaxInt32 is a frame.
func TestSplitLimit(t *testing.T) {
	at := func(size uint32, doff uint8, max uint32) error {
		_, _, err := Split(frameHeader(size, doff, 0, 0), max)
		return err
	}
	assert.NoError(t, at(DefaultReaderMaxFrameSize, 2, 0))
	assert.ErrorIs(t, at(DefaultReaderMaxFrameSize+1, 2, 0), ErrFrameTooLarge)
	assert.ErrorIs(t, at(9, 255, 8), ErrFrameTooLarge, "the size before the data offset")
	assert.ErrorIs(t, at(6, 2, 4), ErrFrameTooLarge, "the size against the maximum first")
	assert.ErrorIs(t, at(6, 2, 0), ErrFrameSize)
	err := at(1<<31, 2, 1<<32-1)
	if math.MaxInt == math.MaxInt32 {
		assert.ErrorIs(t, err, ErrFrameTooLarge)
	} else {
		assert.NoError(t, err, "a prefix of a 2 GiB frame")
	}
	var re *ReadError
	require.ErrorAs(t, at(1<<32-1, 3, 0), &re)
	assert.Equal(t, ReadError{Size: 1<<32 - 1, HasSize: true, DataOffset: 3, Err: ErrFrameTooLarge}, *re)
}

// TestSplitAllocs: splitting a whole connection allocates nothing.
func TestSplitAllocs(t *testing.T) {
	data := readStream(t, "conn-client.bin")
	frames := 0
	allocs := testing.AllocsPerRun(10, func() {
		frames = 0
		for b := data; len(b) > 0; frames++ {
			_, n, err := Split(b, 0)
			if err != nil || n == 0 {
				panic("split")
			}
			b = b[n:]
		}
	})
	assert.Zero(t, allocs)
	assert.Greater(t, frames, 10)
}

// chunked hands out its data in reads of the sizes cuts gives, in turn
// (a byte of cuts is a read of 1 to 256 bytes), then the rest at once.
type chunked struct {
	data, cuts []byte
}

func (c *chunked) next() []byte {
	n := len(c.data)
	if len(c.cuts) > 0 {
		n = min(n, int(c.cuts[0])+1)
		c.cuts = c.cuts[1:]
	}
	p := c.data[:n]
	c.data = c.data[n:]
	return p
}

func (c *chunked) Read(b []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	if len(c.cuts) > 0 {
		b = b[:min(len(b), int(c.cuts[0])+1)]
	}
	n := copy(b, c.data)
	c.data = c.data[n:]
	if len(c.cuts) > 0 {
		c.cuts = c.cuts[1:]
	}
	return n, nil
}

// FuzzSplit holds Split and the Reader equal on any stream, cut between
// reads anywhere: the Reader reads the stream in reads of the sizes cuts
// gives, and a sans-IO loop receives the same pieces, appends each to what
// it holds and splits all it can, as an engine's Feed does. Both give the
// same frames at the same offsets, and end the same way: a clean end, a
// cut item at the same offset, the same fault from the same header, or a
// TLS header (after which the Reader reports ErrEncrypted).
func FuzzSplit(f *testing.F) {
	for i, c := range splitCases(f) {
		if c.name != "corrupt" || i%5 == 0 {
			f.Add(c.data, []byte{3, 0, 200, 7}, c.max)
		}
	}
	f.Fuzz(func(t *testing.T, data, cuts []byte, max uint32) {
		// SplitHeader reads what Split reads as a header, waits on what
		// may become one, and refuses the rest.
		hh, hn, herr := SplitHeader(data)
		sf, sn, serr0 := Split(data, max)
		switch {
		case herr != nil:
			require.False(t, sn > 0 && sf.IsHeader, "a header refused")
		case hn == 0:
			require.Less(t, len(data), headerSize)
			require.Zero(t, sn)
			require.NoError(t, serr0)
		default:
			require.True(t, sn == headerSize && sf.IsHeader && sf.Header == hh, "the header Split reads")
		}

		r := NewReader(&chunked{data: data, cuts: cuts})
		r.MaxFrameSize = max
		want, rerr := readFrames(r)

		src := chunked{data: data, cuts: cuts}
		var held []byte
		var got []Frame
		var serr error
		pos := 0 // stream offset of held[0]
	feed:
		for len(src.data) > 0 {
			held = append(held, src.next()...)
			for len(held) > 0 {
				f, n, err := Split(held, max)
				if err != nil {
					var re *ReadError
					require.ErrorAs(t, err, &re)
					re.Offset += int64(pos)
					serr = re
					break feed
				}
				if n == 0 {
					break
				}
				require.Equal(t, int(f.Size), n)
				require.LessOrEqual(t, n, len(held))
				f.Offset = int64(pos)
				f.Ext, f.Body = bytes.Clone(f.Ext), bytes.Clone(f.Body)
				got = append(got, f)
				held, pos = held[n:], pos+n
				if f.IsHeader && f.Header.ID == ProtocolTLS {
					// A TLS session follows: the Reader's next call says
					// so, whether or not bytes follow.
					serr = ErrEncrypted
					break feed
				}
			}
		}
		require.Equal(t, len(want), len(got), "items")
		for i := range want {
			sameFrame(t, want[i], got[i], int(got[i].Offset), "item %d", i)
		}
		var re *ReadError
		switch {
		case serr == nil && len(held) == 0:
			require.Equal(t, io.EOF, rerr)
		case serr == nil:
			require.ErrorIs(t, rerr, io.ErrUnexpectedEOF)
			require.ErrorAs(t, rerr, &re)
			require.Equal(t, int64(pos), re.Offset)
			require.Equal(t, len(held) >= headerSize, re.HasSize)
		case serr == ErrEncrypted:
			require.ErrorIs(t, rerr, ErrEncrypted)
			require.ErrorAs(t, rerr, &re)
			require.Equal(t, int64(pos), re.Offset)
		default:
			require.ErrorAs(t, rerr, &re)
			require.Equal(t, re, serr)
		}
	})
}

func TestNeed(t *testing.T) {
	b := AppendProtocolHeader(nil, HeaderAMQP)
	start := len(b)
	b = BeginFrame(b, TypeAMQP, 3)
	b = append(b, "payload of the frame"...)
	b = EndFrame(b, start)
	fr := b[start:]
	for i := range len(fr) + 1 {
		want := 8
		if i >= 8 {
			want = len(fr)
		}
		if got := Need(fr[:i], 0); got != want {
			t.Fatalf("Need of %d bytes: %d, want %d", i, got, want)
		}
	}
	if got := Need(b[:5], 0); got != 8 {
		t.Fatal(got)
	}
	if got := Need(b[:8], 0); got != 8 {
		t.Fatal(got)
	}
	if got := Need(fr, 16); got != 0 {
		t.Fatalf("a frame above the maximum: Need %d", got)
	}
}

// TestSplitHeader: every prefix of a protocol header waits, the whole one
// is the header Split reads; bytes that cannot begin "AMQP" are refused
// from the first that differs.
func TestSplitHeader(t *testing.T) {
	for _, h := range []ProtocolHeader{HeaderAMQP, HeaderSASL, HeaderTLS, {ID: 9, Major: 2, Minor: 1, Revision: 7}} {
		b := append(AppendProtocolHeader(nil, h), 0, 0, 0, 8, 2, 0, 0, 0)
		for k := range headerSize {
			got, n, err := SplitHeader(b[:k])
			require.NoError(t, err, "%v cut at %d", h, k)
			require.Zero(t, n)
			require.Equal(t, ProtocolHeader{}, got)
		}
		got, n, err := SplitHeader(b)
		require.NoError(t, err)
		assert.Equal(t, headerSize, n)
		assert.Equal(t, h, got)
		f, fn, err := Split(b, 0)
		require.NoError(t, err)
		assert.Equal(t, Frame{Size: headerSize, IsHeader: true, Header: got}, f)
		assert.Equal(t, fn, n)
		_, _, err = SplitHeader(b[headerSize:])
		assert.ErrorIs(t, err, ErrNotHeader, "a frame where a header must be")
	}
	for _, junk := range []string{"G", "GET / HTTP/1.1\r\n", "AMX", "AMQ\x00", "\x00\x00\x00\x08"} {
		_, n, err := SplitHeader([]byte(junk))
		var re *ReadError
		require.ErrorAs(t, err, &re, "%q", junk)
		assert.Zero(t, n)
		assert.Equal(t, ReadError{IsHeader: true, Err: ErrNotHeader}, *re, "%q", junk)
		assert.Equal(t, "frame: not a protocol header at offset 0", err.Error())
	}
}
