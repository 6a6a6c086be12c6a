package frame

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"runtime"
	"testing"
	"testing/iotest"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// item is what a test remembers of one frame or protocol header.
type item struct {
	off  int64
	size uint32
	hdr  bool
	typ  uint8
	ch   uint16
	body string
}

func readAll(t *testing.T, r *Reader) ([]item, error) {
	t.Helper()
	var out []item
	for {
		f, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, item{f.Offset, f.Size, f.IsHeader, f.Type, f.Channel, string(f.Body)})
		if len(out) > 10000 {
			t.Fatal("no end")
		}
	}
}

func streams(t *testing.T) map[string][]byte {
	return map[string][]byte{
		"client": readStream(t, "conn-client.bin"),
		"server": readStream(t, "conn-server.bin"),
	}
}

// TestReaderCuts cuts each stream at every byte: the items that end
// before the cut are read as from the whole stream, then the Reader
// reports io.EOF when the cut falls between two items, else a
// *ReadError wrapping io.ErrUnexpectedEOF at the offset of the item cut.
// The stream is read whole, one byte per Read, and with data and EOF
// together.
func TestReaderCuts(t *testing.T) {
	for name, data := range streams(t) {
		all, err := readAll(t, NewReader(bytes.NewReader(data)))
		require.Equal(t, io.EOF, err)
		for n := 0; n <= len(data); n++ {
			var want []item
			var cut *item
			for i := range all {
				if all[i].off+int64(all[i].size) <= int64(n) {
					want = append(want, all[i])
				} else if all[i].off < int64(n) {
					cut = &all[i]
					break
				}
			}
			for _, wrap := range []func(io.Reader) io.Reader{
				func(r io.Reader) io.Reader { return r },
				iotest.OneByteReader,
				iotest.DataErrReader,
			} {
				got, err := readAll(t, NewReader(wrap(bytes.NewReader(data[:n]))))
				assert.Equal(t, want, got, "%s cut at %d", name, n)
				if cut == nil {
					assert.Equal(t, io.EOF, err, "%s cut at %d", name, n)
					continue
				}
				require.ErrorIs(t, err, io.ErrUnexpectedEOF, "%s cut at %d", name, n)
				var re *ReadError
				require.ErrorAs(t, err, &re)
				assert.Equal(t, cut.off, re.Offset, "%s cut at %d", name, n)
				assert.Equal(t, cut.hdr, re.IsHeader, "%s cut at %d", name, n)
				if cut.hdr {
					assert.Contains(t, re.Error(), "stream ends inside a protocol header", "%s cut at %d", name, n)
				} else {
					assert.Contains(t, re.Error(), "stream ends inside a frame", "%s cut at %d", name, n)
				}
			}
		}
	}
}

// frameHeader returns an 8-byte frame header.
func frameHeader(size uint32, doff, typ uint8, ch uint16) []byte {
	h := binary.BigEndian.AppendUint32(nil, size)
	return append(h, doff, typ, byte(ch>>8), byte(ch))
}

// TestReaderCorrupt corrupts the size and data offset of every frame of
// both streams: each is an error with the frame's offset, found from its
// header, and it stays.
func TestReaderCorrupt(t *testing.T) {
	for name, data := range streams(t) {
		all, _ := readAll(t, NewReader(bytes.NewReader(data)))
		largest := uint32(0)
		for _, it := range all {
			largest = max(largest, it.size)
		}
		for _, it := range all {
			if it.hdr {
				continue
			}
			for _, c := range []struct {
				size uint32
				doff uint8
				max  uint32
				want error
			}{
				{0, 2, 0, ErrFrameSize},
				{7, 2, 0, ErrFrameSize},
				{DefaultReaderMaxFrameSize + 1, 2, 0, ErrFrameTooLarge},
				{1<<32 - 1, 2, 0, ErrFrameTooLarge},
				{largest + 1, 2, largest, ErrFrameTooLarge},
				{it.size, 0, 0, ErrDataOffset},
				{it.size, 1, 0, ErrDataOffset},
				{it.size, uint8(it.size/4 + 1), 0, ErrDataOffset},
				{it.size, 255, 0, ErrDataOffset},
			} {
				bad := bytes.Clone(data)
				binary.BigEndian.PutUint32(bad[it.off:], c.size)
				bad[it.off+4] = c.doff
				r := NewReader(bytes.NewReader(bad))
				r.MaxFrameSize = c.max
				_, err := readAll(t, r)
				require.ErrorIs(t, err, c.want, "%s frame at %d: %+v", name, it.off, c)
				var re *ReadError
				require.ErrorAs(t, err, &re)
				assert.Equal(t, it.off, re.Offset)
				assert.True(t, re.HasSize)
				assert.Equal(t, c.size, re.Size)
				assert.Equal(t, it.off, r.Offset(), "nothing of the bad frame consumed")
				_, err2 := r.Next()
				assert.Same(t, err, err2, "sticky")
			}
		}
	}
}

// TestReaderHugeClaims feeds frames claiming up to 4 GiB. Over the
// maximum, the error comes from the header alone, with nothing allocated
// for the frame; under it (the maximum raised to 4 GiB) and cut short,
// the buffer grows only with the bytes that arrive.
func TestReaderHugeClaims(t *testing.T) {
	for _, size := range []uint32{1 << 20, 1 << 24, 1 << 31, 1<<32 - 1} {
		in := append(frameHeader(size, 2, 0, 0), make([]byte, 1000)...)
		allocated := allocatedBy(func() func() {
			r := NewReader(bytes.NewReader(in))
			r.MaxFrameSize = size - 1
			return func() {
				_, err := r.Next()
				require.ErrorIs(t, err, ErrFrameTooLarge)
			}
		})
		assert.Less(t, allocated, uint64(minBuffer+allocSlack), "size %d", size)

		for _, sent := range []int{0, 1000, 100000} {
			in := append(frameHeader(size, 2, 0, 0), make([]byte, sent)...)
			var err error
			allocated := allocatedBy(func() func() {
				r := NewReader(bytes.NewReader(in))
				r.MaxFrameSize = 1<<32 - 1
				return func() { _, err = r.Next() }
			})
			if uint64(size) > math.MaxInt {
				// Where int has 32 bits, no frame is above 2 GiB - 1.
				require.ErrorIs(t, err, ErrFrameTooLarge)
				continue
			}
			require.ErrorIs(t, err, io.ErrUnexpectedEOF)
			var re *ReadError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, int64(0), re.Offset)
			assert.Less(t, allocated, uint64(4*(sent+8)+2*minBuffer+allocSlack), "size %d, %d bytes sent", size, sent)
		}
	}
}

// allocSlack is what the runtime, the race detector and the testing
// package may allocate while a measurement runs: the heap counters are the
// whole process's, not only the Reader's. A Reader that sized its buffer by
// the claim instead of by what arrived would allocate up to 2 GiB, so the
// bounds stay tight enough to catch that.
const allocSlack = 64 << 10

// allocatedBy returns the bytes the heap grows by while the function that
// setup returns runs. It measures three times, each time on a fresh setup,
// and returns the least: allocations of other goroutines only add.
func allocatedBy(setup func() func()) uint64 {
	least := uint64(math.MaxUint64)
	for range 3 {
		f := setup()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// TestReaderGrowthLinear: memory follows the bytes that arrive, not the
// size claimed: sending twice as much of a frame claiming 2 GiB at most
// doubles what the Reader allocates. (The claim is 2 GiB - 1, the most a
// frame can be on every platform.)
func TestReaderGrowthLinear(t *testing.T) {
	alloc := func(sent int) uint64 {
		in := append(frameHeader(1<<31-1, 2, 0, 0), make([]byte, sent)...)
		return allocatedBy(func() func() {
			r := NewReader(iotest.HalfReader(bytes.NewReader(in)))
			r.MaxFrameSize = 1<<32 - 1
			return func() {
				_, err := r.Next()
				require.ErrorIs(t, err, io.ErrUnexpectedEOF)
			}
		})
	}
	a1, a2 := alloc(1<<20), alloc(2<<20)
	t.Logf("allocated: %d bytes for 1 MiB sent, %d for 2 MiB", a1, a2)
	assert.LessOrEqual(t, a2, 2*a1+allocSlack, "1 MiB: %d bytes, 2 MiB: %d bytes", a1, a2)
	// Doubling from minBuffer: the buffers add up to less than twice the
	// last, which is less than twice what arrived.
	for sent, got := range map[int]uint64{1 << 20: a1, 2 << 20: a2} {
		assert.LessOrEqual(t, got, uint64(4*(sent+8)+2*minBuffer+allocSlack), "%d bytes sent", sent)
	}
}

func TestReaderHeadersAndFrames(t *testing.T) {
	var in []byte
	in = AppendProtocolHeader(in, HeaderSASL)
	start := len(in)
	in = BeginFrame(in, TypeSASL, 0)
	in = AppendSASLInit(in, SASLInit{Mechanism: []byte("ANONYMOUS")})
	in = EndFrame(in, start)
	in = AppendProtocolHeader(in, HeaderAMQP)
	start = len(in)
	in = EndFrame(BeginFrame(in, TypeAMQP, 7), start) // a heartbeat
	// A frame with an extended header of one word.
	ext := AppendFrame(nil, Frame{Type: TypeAMQP, Channel: 3, Ext: []byte{1, 2, 3}, Body: []byte{0x40}})
	in = append(in, ext...)
	in = AppendProtocolHeader(in, HeaderTLS)
	in = append(in, 0x16, 0x03, 0x01, 0, 0, 0, 0, 0) // a TLS record

	r := NewReader(bytes.NewReader(in))
	f, err := r.Next()
	require.NoError(t, err)
	assert.True(t, f.IsHeader)
	assert.Equal(t, HeaderSASL, f.Header)
	assert.Equal(t, "AMQP sasl 1.0.0", f.Header.String())
	assert.False(t, f.IsHeartbeat())

	f, err = r.Next()
	require.NoError(t, err)
	assert.Equal(t, TypeSASL, f.Type)
	assert.Equal(t, int64(8), f.Offset)
	assert.False(t, f.IsHeartbeat())
	m, err := ParseSASLInit(f.Body)
	require.NoError(t, err)
	assert.Equal(t, "ANONYMOUS", string(m.Mechanism))

	f, err = r.Next()
	require.NoError(t, err)
	assert.Equal(t, HeaderAMQP, f.Header)

	f, err = r.Next()
	require.NoError(t, err)
	assert.True(t, f.IsHeartbeat())
	assert.Equal(t, uint16(7), f.Channel)
	assert.Equal(t, uint32(8), f.Size)

	f, err = r.Next()
	require.NoError(t, err)
	assert.Equal(t, uint8(3), f.DataOffset())
	assert.Equal(t, []byte{1, 2, 3, 0}, f.Ext)
	assert.Equal(t, []byte{0x40}, f.Body)
	assert.Equal(t, uint16(3), f.Channel)
	assert.Equal(t, ext, AppendFrame(nil, f)[:len(ext)])

	f, err = r.Next()
	require.NoError(t, err)
	assert.Equal(t, ProtocolTLS, f.Header.ID)
	off := r.Offset()
	_, err = r.Next()
	require.ErrorIs(t, err, ErrEncrypted)
	var re *ReadError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, off, re.Offset)

	r.Reset(bytes.NewReader(in[:8]))
	f, err = r.Next()
	require.NoError(t, err)
	assert.Equal(t, int64(0), f.Offset)
	_, err = r.Next()
	assert.Equal(t, io.EOF, err)
}

// flaky returns errTimeout once every few reads, as a connection with a
// read deadline does.
type flaky struct {
	r io.Reader
	n int
}

var errTimeout = errors.New("i/o timeout")

func (f *flaky) Read(p []byte) (int, error) {
	f.n++
	if f.n%3 == 0 {
		return 0, errTimeout
	}
	if len(p) > 5 {
		p = p[:5]
	}
	return f.r.Read(p)
}

// TestReaderResume: an error of the underlying reader is returned as it
// is, and the next call goes on where the stream stopped.
func TestReaderResume(t *testing.T) {
	data := readStream(t, "conn-client.bin")
	want, _ := readAll(t, NewReader(bytes.NewReader(data)))
	r := NewReader(&flaky{r: bytes.NewReader(data)})
	var got []item
	timeouts := 0
	for {
		f, err := r.Next()
		if err == errTimeout {
			timeouts++
			continue
		}
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		got = append(got, item{f.Offset, f.Size, f.IsHeader, f.Type, f.Channel, string(f.Body)})
	}
	assert.Equal(t, want, got)
	assert.Greater(t, timeouts, 100)
}

// zeroReader returns no bytes and no error, for ever.
type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestReaderNoProgress(t *testing.T) {
	_, err := NewReader(zeroReader{}).Next()
	assert.Equal(t, io.ErrNoProgress, err)
}

func TestReadErrorText(t *testing.T) {
	e := &ReadError{Offset: 12, Size: 5, HasSize: true, Err: ErrFrameSize}
	assert.Equal(t, "frame: frame size below the frame header's (size 5) at offset 12", e.Error())
	e = &ReadError{Offset: 40, Err: io.ErrUnexpectedEOF}
	assert.Equal(t, "frame: stream ends inside a frame at offset 40", e.Error())
	e = &ReadError{Offset: 8, IsHeader: true, Err: io.ErrUnexpectedEOF}
	assert.Equal(t, "frame: stream ends inside a protocol header at offset 8", e.Error())
	assert.Equal(t, "ProtocolID(9)", ProtocolID(9).String())
}

// TestReaderHeaderCut: a stream that ends inside a protocol header says
// so, with the header's offset; one that ends inside the 8 bytes of a
// frame header says it ends inside a frame.
func TestReaderHeaderCut(t *testing.T) {
	amqp := AppendProtocolHeader(nil, HeaderAMQP)
	sasl := AppendProtocolHeader(nil, HeaderSASL)
	for _, c := range []struct {
		data []byte
		off  int64
		want string
	}{
		{amqp[:5], 0, "frame: stream ends inside a protocol header at offset 0"},
		{amqp[:1], 0, "frame: stream ends inside a protocol header at offset 0"},
		{amqp[:7], 0, "frame: stream ends inside a protocol header at offset 0"},
		{append(sasl, amqp[:4]...), 8, "frame: stream ends inside a protocol header at offset 8"},
		{[]byte{'A', 'M', 'X'}, 0, "frame: stream ends inside a frame at offset 0"},
		{[]byte{0, 0, 0, 8, 2}, 0, "frame: stream ends inside a frame at offset 0"},
		{append(amqp, 0, 0, 0), 8, "frame: stream ends inside a frame at offset 8"},
	} {
		r := NewReader(bytes.NewReader(c.data))
		var err error
		for err == nil {
			_, err = r.Next()
		}
		var re *ReadError
		require.ErrorAs(t, err, &re, "%q", c.data)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
		assert.Equal(t, c.off, re.Offset, "%q", c.data)
		assert.Equal(t, c.want, err.Error(), "%q", c.data)
	}
}

// A frame that cannot be read still tells its header's fields.
func TestReadErrorHeader(t *testing.T) {
	// size 64, doff 2, type 1 (SASL), channel 7, then only 4 bytes
	r := NewReader(bytes.NewReader([]byte{0, 0, 0, 64, 2, 1, 0, 7, 1, 2, 3, 4}))
	_, err := r.Next()
	var e *ReadError
	require.ErrorAs(t, err, &e)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Equal(t, ReadError{Offset: 0, Size: 64, HasSize: true, DataOffset: 2, Type: 1, Channel: 7, Err: io.ErrUnexpectedEOF}, *e)
	r = NewReader(bytes.NewReader([]byte{0, 0, 0, 64, 1, 0, 0, 3}))
	_, err = r.Next()
	require.ErrorAs(t, err, &e)
	assert.ErrorIs(t, err, ErrDataOffset)
	assert.Equal(t, uint8(1), e.DataOffset)
	assert.Equal(t, uint16(3), e.Channel)
}

// TestReaderProtonCaps reads the connection whose opens carry
// capabilities that Proton's Python binding wrote as lists of symbols
// (testdata/proton/conn-caps-*.bin) and checks every item against its
// frame list, and the quirk itself: offered- and desired-capabilities
// are a list32 of symbols, with the symbols gen.py gave.
func TestReaderProtonCaps(t *testing.T) {
	caps := map[string][2][]string{
		"client": {{"amqpsax-offered", "ANONYMOUS-RELAY"}, {"amqpsax-desired"}},
		"server": {{"ANONYMOUS-RELAY"}, {"amqpsax-desired", "amqpsax-other"}},
	}
	for dir, want := range caps {
		data := readStream(t, "conn-caps-"+dir+".bin")
		items := loadJSONL[frameEntry](t, "conn-caps-"+dir+"-frames.jsonl")
		r := NewReader(bytes.NewReader(data))
		opens := 0
		for i, w := range items {
			f, err := r.Next()
			require.NoError(t, err, "%s item %d", dir, i)
			assert.Equal(t, w.Offset, f.Offset, "%s item %d", dir, i)
			assert.Equal(t, w.Size, f.Size, "%s item %d", dir, i)
			assert.Equal(t, w.Kind == "protocol-header", f.IsHeader, "%s item %d", dir, i)
			if f.IsHeader || w.Performative == nil {
				continue
			}
			d, err := Performative(f.Body)
			require.NoError(t, err)
			assert.Equal(t, *w.Performative, perfName(d), "%s item %d", dir, i)
			if d != amqpsax.DescriptorOpen {
				continue
			}
			opens++
			var c stream.Cursor
			c.Reset(f.Body)
			require.True(t, c.Next() && c.EnterValue() && c.Enter(), "%s open", dir)
			for k, field := range []int{7, 8} { // offered-, desired-capabilities
				require.True(t, c.Seek(field), "%s open field %d", dir, field)
				assert.Equal(t, amqpsax.CodeList32, c.Value().Code(), "%s open field %d", dir, field)
				var got []string
				require.True(t, c.Enter())
				for c.Next() {
					assert.Equal(t, amqpsax.CodeSym8, c.Value().Code())
					got = append(got, string(c.Bytes()))
				}
				c.Exit()
				assert.Equal(t, want[k], got, "%s open field %d", dir, field)
			}
			require.NoError(t, c.Err())
			// ParseOpen takes the lists; Symbols reads them.
			o, err := ParseOpen(f.Body)
			require.NoError(t, err, dir)
			for k, syms := range []Symbols{o.OfferedCapabilities, o.DesiredCapabilities} {
				var got []string
				for s := range syms.All() {
					got = append(got, string(s))
				}
				assert.Equal(t, want[k], got, dir)
				assert.Equal(t, len(want[k]), syms.Len(), dir)
			}
		}
		_, err := r.Next()
		assert.Equal(t, io.EOF, err, dir)
		assert.Equal(t, 1, opens, dir)
	}
}
