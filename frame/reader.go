package frame

import (
	"errors"
	"io"
	"strconv"
)

// Frame types (part 2 §2.3.1: the type byte of the frame header).
const (
	TypeAMQP uint8 = 0 // an AMQP frame: a performative of part 2 §2.7
	TypeSASL uint8 = 1 // a SASL frame: part 5 §5.3.3
)

// DefaultReaderMaxFrameSize is the largest frame a Reader whose MaxFrameSize is
// 0 accepts: 1 MiB, above what common brokers negotiate (Proton, Artemis
// and RabbitMQ offer 32 KiB to 1 MiB) and small enough that a peer
// claiming more cannot make the reader hold much memory.
const DefaultReaderMaxFrameSize = 1 << 20

// minBuffer is the first size of a Reader's buffer and the least it grows by.
const minBuffer = 4096

// headerSize is the size of a frame header and of a protocol header.
const headerSize = 8

// Frame is one item of an AMQP connection's byte stream: a frame (part 2
// §2.3) or a protocol header (part 2 §2.2, part 5 §5.1 and §5.2).
//
// For a frame, Type, Channel, Ext and Body are set; for a protocol
// header, IsHeader is true, Header says which, and Size is 8.
type Frame struct {
	// Offset is where the frame or protocol header starts in the stream:
	// the number of bytes the Reader had consumed before it.
	Offset int64
	// Size is the frame's size field: the whole frame, its 8-byte header
	// included. It is 8 for a protocol header.
	Size uint32
	// Type is TypeAMQP or TypeSASL (other values are passed on as read).
	Type uint8
	// Channel is the channel of an AMQP frame; SASL frames carry 0.
	Channel uint16
	// Ext is the extended header: the bytes between the 8-byte header and
	// the data offset, empty unless the data offset is above 2. The spec
	// gives it no meaning yet (part 2 §2.3.1).
	Ext []byte
	// Body is the frame body: the performative, then the payload (the
	// message bytes of a transfer). It is empty for a heartbeat (part 2
	// §2.4.5), an AMQP frame with no body.
	Body []byte
	// IsHeader reports a protocol header instead of a frame.
	IsHeader bool
	// Header is the protocol header, when IsHeader.
	Header ProtocolHeader
}

// IsHeartbeat reports an empty AMQP frame, which a peer sends to show it
// is alive (part 2 §2.4.5).
func (f Frame) IsHeartbeat() bool { return !f.IsHeader && f.Type == TypeAMQP && len(f.Body) == 0 }

// DataOffset returns the frame's data offset field: the size of its
// header in 4-byte words (2 plus the extended header's words).
func (f Frame) DataOffset() uint8 { return uint8(2 + len(f.Ext)/4) }

// ProtocolID is the protocol id of a protocol header (part 2 §2.2,
// part 5 §5.1, §5.2).
type ProtocolID uint8

// The protocol ids the spec defines.
const (
	ProtocolAMQP ProtocolID = 0 // AMQP frames follow
	ProtocolTLS  ProtocolID = 2 // a TLS session follows (part 5 §5.2)
	ProtocolSASL ProtocolID = 3 // SASL frames follow (part 5 §5.3)
)

// String returns "amqp", "tls" or "sasl", or "ProtocolID(N)".
func (p ProtocolID) String() string {
	switch p {
	case ProtocolAMQP:
		return "amqp"
	case ProtocolTLS:
		return "tls"
	case ProtocolSASL:
		return "sasl"
	}
	return "ProtocolID(" + strconv.Itoa(int(p)) + ")"
}

// ProtocolHeader is the 8-byte header "AMQP", protocol id, major, minor,
// revision, that opens a connection and follows each security layer.
type ProtocolHeader struct {
	ID                     ProtocolID
	Major, Minor, Revision uint8
}

// The protocol headers of AMQP 1.0.
var (
	HeaderAMQP = ProtocolHeader{ID: ProtocolAMQP, Major: 1}
	HeaderTLS  = ProtocolHeader{ID: ProtocolTLS, Major: 1}
	HeaderSASL = ProtocolHeader{ID: ProtocolSASL, Major: 1}
)

// String returns the header as "AMQP <id> <major>.<minor>.<revision>",
// for example "AMQP sasl 1.0.0".
func (h ProtocolHeader) String() string {
	return "AMQP " + h.ID.String() + " " + strconv.Itoa(int(h.Major)) + "." +
		strconv.Itoa(int(h.Minor)) + "." + strconv.Itoa(int(h.Revision))
}

// AppendProtocolHeader appends the protocol header h.
func AppendProtocolHeader(b []byte, h ProtocolHeader) []byte {
	return append(b, 'A', 'M', 'Q', 'P', byte(h.ID), h.Major, h.Minor, h.Revision)
}

// Causes of a *ReadError, for errors.Is. A stream that ends inside a
// frame or header gives a *ReadError wrapping io.ErrUnexpectedEOF.
var (
	// ErrFrameTooLarge: a frame's size field is above the Reader's
	// MaxFrameSize.
	ErrFrameTooLarge = errors.New("frame larger than the maximum frame size")
	// ErrFrameSize: a frame's size field is below 8, the size of its own
	// header.
	ErrFrameSize = errors.New("frame size below the frame header's")
	// ErrDataOffset: a frame's data offset is below 2 (the header's 8
	// bytes) or points past the frame's end.
	ErrDataOffset = errors.New("invalid data offset")
	// ErrEncrypted: the stream goes on after a TLS protocol header; what
	// follows is a TLS session, not frames.
	ErrEncrypted = errors.New("stream encrypted after a TLS protocol header")
	// ErrNotHeader: SplitHeader was given bytes where a protocol header
	// must come that do not begin "AMQP".
	ErrNotHeader = errors.New("not a protocol header")
)

// ReadError is a fault in a frame stream, with the offset in the stream of
// the frame or protocol header at fault.
type ReadError struct {
	Offset int64  // of the frame or header at fault
	Size   uint32 // the frame's size field, when HasSize
	// HasSize reports that the fault is in a frame whose 8-byte header was
	// read: Size and the header's other fields below are its.
	HasSize bool
	// DataOffset is the header's data offset byte (in 4-byte words), Type
	// its frame type and Channel its channel, when HasSize: what a tool
	// prints of a frame it cannot read.
	DataOffset uint8
	Type       uint8
	Channel    uint16
	// IsHeader reports a stream that ends inside a protocol header: the
	// bytes at Offset are the start of "AMQP" (the Reader cannot tell
	// fewer than four bytes from the start of a frame whose size begins
	// so, and calls them a header); or, with ErrNotHeader, bytes where a
	// header had to be.
	IsHeader bool
	Err      error // the cause: io.ErrUnexpectedEOF or one of the Err… sentinels
}

// Error formats the fault as "frame: cause (size N) at offset M"; the
// cause of a cut is "stream ends inside a frame" or "stream ends inside a
// protocol header".
func (e *ReadError) Error() string {
	cause := "error"
	if e.Err != nil {
		cause = e.Err.Error()
	}
	if e.Err == io.ErrUnexpectedEOF {
		cause = "stream ends inside a frame"
		if e.IsHeader {
			cause = "stream ends inside a protocol header"
		}
	}
	s := "frame: " + cause
	if e.HasSize {
		s += " (size " + strconv.FormatUint(uint64(e.Size), 10) + ")"
	}
	return s + " at offset " + strconv.FormatInt(e.Offset, 10)
}

// Unwrap returns the cause.
func (e *ReadError) Unwrap() error { return e.Err }

// Reader reads the frames and protocol headers of an AMQP connection's
// byte stream through one buffer, which it grows only as far as the
// largest frame it has read needs. Set the option fields before the first
// Next. A Reader is not safe for use by several goroutines at once.
type Reader struct {
	// MaxFrameSize is the largest frame (size field, header included)
	// Next accepts: a larger one is a *ReadError wrapping
	// ErrFrameTooLarge, raised from its header alone, before the reader
	// reads the rest or makes room for it. Zero means
	// DefaultReaderMaxFrameSize. Set it to the max-frame-size this end
	// announced in its open. Where int has 32 bits, frames above
	// math.MaxInt32 bytes are refused whatever it says.
	MaxFrameSize uint32

	r          io.Reader
	buf        []byte
	start, end int   // unread bytes: buf[start:end]
	off        int64 // stream offset of buf[start]
	err        error // a fault in the stream: sticky
	tls        bool  // a TLS protocol header was read
}

// NewReader returns a Reader reading from r.
func NewReader(r io.Reader) *Reader { return &Reader{r: r} }

// Reset makes the Reader read a new stream from r, from offset 0, keeping
// its buffer and options.
func (r *Reader) Reset(src io.Reader) {
	r.r, r.start, r.end, r.off, r.err, r.tls = src, 0, 0, 0, nil, false
}

// Offset returns the stream offset of the next frame or header: the
// number of bytes consumed so far.
func (r *Reader) Offset() int64 { return r.off }

// Next returns the next frame or protocol header of the stream. Its Ext
// and Body are views into the Reader's buffer, valid until the next call
// of Next or Reset.
//
// A clean end of the stream, between two frames, is io.EOF. A stream
// that ends inside a frame or header is a *ReadError wrapping
// io.ErrUnexpectedEOF (IsHeader set for a protocol header). A frame whose header is invalid (size above
// MaxFrameSize or below 8, data offset below 2 or past the frame's end)
// is a *ReadError with ErrFrameTooLarge, ErrFrameSize or ErrDataOffset,
// found from the 8 header bytes alone; such an error is sticky, since the
// stream can no longer be split into frames. An error of the underlying
// reader (a deadline, say) is returned as it is, and the bytes read so
// far are kept: Next may be called again.
//
// Eight bytes "AMQP" followed by an id and version, where a frame could
// start, are a protocol header. After a TLS protocol header (id 2) the
// stream is a TLS session: the next call returns ErrEncrypted.
func (r *Reader) Next() (Frame, error) {
	if r.err != nil {
		return Frame{}, r.err
	}
	if r.tls {
		return Frame{}, r.fail(&ReadError{Offset: r.off, Err: ErrEncrypted})
	}
	for {
		f, n, need, cause := split(r.buf[r.start:r.end], limit(r.MaxFrameSize))
		switch {
		case n > 0:
			f.Offset = r.off
			r.consume(n)
			r.tls = f.IsHeader && f.Header.ID == ProtocolTLS
			return f, nil
		case cause != nil:
			return Frame{}, r.fail(headerFault(r.buf[r.start:r.end], r.off, cause))
		}
		if err := r.fill(need); err != nil {
			return Frame{}, r.eof(err)
		}
	}
}

func (r *Reader) consume(n int) {
	r.start += n
	r.off += int64(n)
	if r.start == r.end {
		r.start, r.end = 0, 0
	}
}

func (r *Reader) fail(e *ReadError) error {
	r.err = e
	return e
}

// eof turns the error of fill into Next's: io.EOF before the first byte
// of an item is a clean end, after it a truncation.
func (r *Reader) eof(err error) error {
	if err != io.EOF {
		return err
	}
	got := r.buf[r.start:r.end]
	switch {
	case len(got) == 0:
		return io.EOF
	case len(got) >= headerSize: // a frame's header is read: split found it valid
		return headerFault(got, r.off, io.ErrUnexpectedEOF)
	}
	return &ReadError{Offset: r.off, IsHeader: headerPrefix(got), Err: io.ErrUnexpectedEOF}
}

// maxEmptyReads is how many reads returning no bytes and no error fill
// accepts in a row before it reports io.ErrNoProgress (as bufio does).
const maxEmptyReads = 100

// fill reads until n bytes are buffered. The buffer grows at most by
// doubling, and never past n (or minBuffer), so what it holds stays within
// twice the bytes the stream has actually delivered: a frame that claims
// a large size and then stops costs no more than what arrived.
func (r *Reader) fill(n int) error {
	empty := 0
	for r.end-r.start < n {
		if r.end == len(r.buf) {
			if r.start > 0 {
				r.end = copy(r.buf, r.buf[r.start:r.end])
				r.start = 0
			}
			if r.end == len(r.buf) {
				size := min(max(2*len(r.buf), minBuffer), max(n, minBuffer))
				nb := make([]byte, size)
				copy(nb, r.buf[:r.end])
				r.buf = nb
			}
		}
		m, err := r.r.Read(r.buf[r.end:])
		if m < 0 || m > len(r.buf)-r.end {
			return errors.New("frame: invalid count from the underlying reader")
		}
		r.end += m
		if r.end-r.start >= n {
			return nil
		}
		if err != nil {
			return err
		}
		if m == 0 {
			if empty++; empty >= maxEmptyReads {
				return io.ErrNoProgress
			}
		} else {
			empty = 0
		}
	}
	return nil
}
