package frame

import (
	"encoding/binary"
	"math"
)

// Split returns the protocol header or frame at the start of b, as a view
// into b, and the number of bytes it takes: the splitter of a caller that
// holds the stream's bytes itself (an event loop, a sans-IO engine), in
// the style of protowire's Consume functions. It allocates nothing and
// copies nothing: the Frame's Ext and Body are sub-slices of b (their
// capacity ends where they do), valid as long as b is.
//
// When b holds no complete header or frame yet (b may be any prefix of
// one, including an empty b), n is 0 and err is nil: call again with more
// bytes. When the first 8 bytes can never start a valid frame (a size
// above maxFrameSize or below 8, a data offset below 2 or past the frame's
// end), err is a *ReadError with the cause a Reader reports for them
// (ErrFrameTooLarge, ErrFrameSize, ErrDataOffset), HasSize set, and
// Offset 0: the start of b, to which a caller adds its own position in
// the stream. Nothing after such a frame can be split.
//
// maxFrameSize is the largest frame accepted, as a Reader's MaxFrameSize:
// 0 means DefaultReaderMaxFrameSize, and where int has 32 bits frames
// above math.MaxInt32 bytes are refused whatever it says. A frame's size
// is checked against it first, from the 8-byte header alone, so a claim
// of 4 GiB is refused before the caller keeps any of its bytes.
//
// Split keeps no state: the Frame's Offset is 0, and what follows a TLS
// protocol header (a TLS session, not frames: a Reader's next call
// returns ErrEncrypted) is the caller's to handle. Reader.Next splits
// with it, so the two never disagree.
func Split(b []byte, maxFrameSize uint32) (f Frame, n int, err error) {
	f, n, _, cause := split(b, limit(maxFrameSize))
	if cause != nil {
		return Frame{}, 0, headerFault(b, 0, cause)
	}
	return f, n, nil
}

// SplitHeader returns the protocol header at the start of b, where one
// must come (the start of a connection, and after a SASL outcome or a
// TLS handshake), and its size n, 8. While b holds fewer than 8 bytes that
// begin "AMQP", n is 0 and err nil. Bytes that can never be a protocol
// header are refused as soon as one of the four differs: err is a
// *ReadError with IsHeader set and ErrNotHeader, Offset 0. Split and
// Reader read the same 8 bytes as the same header; where a frame may
// come too, call Split.
func SplitHeader(b []byte) (h ProtocolHeader, n int, err error) {
	if !headerPrefix(b) {
		return ProtocolHeader{}, 0, &ReadError{IsHeader: true, Err: ErrNotHeader}
	}
	f, n, _, _ := split(b, DefaultReaderMaxFrameSize)
	return f.Header, n, nil
}

// headerMagic is the start of every protocol header (part 2 §2.2).
const headerMagic = "AMQP"

// headerPrefix reports whether b starts as a protocol header does: its
// first bytes, up to four, are those of "AMQP".
func headerPrefix(b []byte) bool {
	n := min(len(b), len(headerMagic))
	return string(b[:n]) == headerMagic[:n]
}

// limit returns the largest frame a maximum of m accepts: m, or
// DefaultReaderMaxFrameSize for 0, and at most math.MaxInt32 where int has
// 32 bits (a frame must fit a slice).
func limit(m uint32) uint32 {
	if m == 0 {
		m = DefaultReaderMaxFrameSize
	}
	if uint64(m) > math.MaxInt32 && math.MaxInt == math.MaxInt32 {
		m = math.MaxInt32
	}
	return m
}

// split is the one home of the framing rules (part 2 §2.2, §2.3.1), for
// Split and Reader.Next: the item at the start of b and its size n. When
// b holds no complete item, n is 0 and need is the bytes the item takes in
// all (8 until its header is there, then its size), so a reader knows how
// far to fill; cause is the sentinel of a header that cannot be right.
// max has been through limit.
func split(b []byte, max uint32) (f Frame, n, need int, cause error) {
	if len(b) < headerSize {
		return Frame{}, 0, headerSize, nil
	}
	h := b[:headerSize]
	if headerPrefix(h) {
		return Frame{Size: headerSize, IsHeader: true,
			Header: ProtocolHeader{ID: ProtocolID(h[4]), Major: h[5], Minor: h[6], Revision: h[7]}}, headerSize, 0, nil
	}
	size := binary.BigEndian.Uint32(h)
	doff := uint32(h[4]) * 4
	switch {
	case size > max:
		return Frame{}, 0, 0, ErrFrameTooLarge
	case size < headerSize:
		return Frame{}, 0, 0, ErrFrameSize
	case doff < headerSize || doff > size:
		return Frame{}, 0, 0, ErrDataOffset
	}
	if uint64(size) > uint64(len(b)) {
		return Frame{}, 0, int(size), nil // fits: max is at most math.MaxInt32 where int is 32 bits
	}
	p := b[:size:size]
	return Frame{Size: size, Type: h[5], Channel: binary.BigEndian.Uint16(h[6:]),
		Ext: p[headerSize:doff:doff], Body: p[doff:]}, int(size), 0, nil
}

// headerFault is the *ReadError about the frame whose 8-byte header starts
// h, at offset off in the stream.
func headerFault(h []byte, off int64, cause error) *ReadError {
	return &ReadError{Offset: off, Size: binary.BigEndian.Uint32(h), HasSize: true,
		DataOffset: h[4], Type: h[5], Channel: binary.BigEndian.Uint16(h[6:8]), Err: cause}
}
