package dump

import (
	"errors"
	"io"
)

// errWait is what a feed's Read returns when it has handed out every byte
// it holds and more may come: frame.Reader passes errors of its source
// through and may be called again after them, keeping what it has read.
var errWait = errors.New("dump: waiting for more bytes")

// feed turns bytes pushed in (Write) into the io.Reader a frame.Reader
// pulls from. It keeps the bytes of the frame being read, even those the
// Reader has already taken, so that after a frame whose header is bad the
// stream can be read again from the offset its size points to.
type feed struct {
	data   []byte // the stream's bytes from offset base on
	base   int64
	rd     int    // data[rd:] has not been handed out
	skip   int64  // bytes yet to come that are to be dropped (a seek past the end)
	owned  bool   // data may be appended to: it is not the caller's
	array  []byte // the whole array data lies in, when owned
	closed bool   // no more bytes will come
}

// write adds b at the end of the stream, copying it unless keep is set
// (then the caller leaves b alone while the feed holds it).
func (f *feed) write(b []byte, keep bool) {
	if f.skip > 0 {
		n := int(min(f.skip, int64(len(b))))
		b, f.skip, f.base = b[n:], f.skip-int64(n), f.base+int64(n)
	}
	switch {
	case len(b) == 0:
	case len(f.data) == 0 && keep:
		f.data, f.rd, f.owned = b, 0, false
	case f.owned && cap(f.data)-len(f.data) >= len(b):
		f.data = append(f.data, b...)
	default:
		// Into the array's start (discard leaves the bytes before the
		// data in it), or into a new array twice what is kept: the array
		// stays within a small multiple of what is kept, however long the
		// stream.
		need := len(f.data) + len(b)
		arr := f.array
		if !f.owned || need > len(arr)/2 {
			arr = make([]byte, max(2*need, 4096))
		}
		n := copy(arr, f.data)
		n += copy(arr[n:], b)
		f.array, f.data, f.owned = arr, arr[:n], true
	}
}

// end is the offset after the last byte written.
func (f *feed) end() int64 { return f.base + int64(len(f.data)) }

// Read hands out bytes to the frame.Reader.
func (f *feed) Read(p []byte) (int, error) {
	if f.rd < len(f.data) {
		n := copy(p, f.data[f.rd:])
		f.rd += n
		return n, nil
	}
	if f.closed {
		return 0, io.EOF
	}
	return 0, errWait
}

// discard drops the bytes before offset off, which no frame will need
// again; the Reader has already taken them.
func (f *feed) discard(off int64) {
	k := off - f.base
	if k <= 0 || k > int64(f.rd) {
		return
	}
	f.data, f.rd, f.base = f.data[k:], f.rd-int(k), off
}

// seek makes the next Read start at offset off, which is at or after the
// bytes kept.
func (f *feed) seek(off int64) {
	if off < f.base {
		off = f.base
	}
	if end := f.base + int64(len(f.data)); off <= end {
		f.rd = int(off - f.base)
		return
	}
	f.skip = off - f.end() // (off >= end: any earlier skip is part of it)
	f.base += int64(len(f.data))
	f.data, f.rd = f.data[:0], 0
}
