package dump

import (
	"encoding/hex"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/stream"
)

// This file is the connection printer: FrameError and Options, Stream
// (Write and WriteAt take bytes as they come; Close reports what was left
// open), faults and read errors, then one frame at a time (frame: its line,
// filters, time), protocol headers, the parse of a body, and deliveries
// joined across transfers (join, transfer) down to their messages.

// FrameError is a fault in the framing of a connection byte stream: a
// frame header that is cut short or cannot be right, a transfer that
// does not fit its delivery, or a stream that cannot be read further.
type FrameError struct {
	What   string // "frame 5", "protocol header"; "" when it is not known
	Offset int64  // where it begins in the stream
	Msg    string // what is wrong
	Err    error  // the cause, from package frame
}

func (e *FrameError) Error() string {
	s := "amqpdump: "
	if e.What != "" {
		s += e.What + " "
	}
	return s + "at offset " + strconv.FormatInt(e.Offset, 10) + ": " + e.Msg
}

// Unwrap returns the cause.
func (e *FrameError) Unwrap() error { return e.Err }

// Options say how a Stream or Values prints.
type Options struct {
	// JSON prints one JSON object a line (see the package doc) instead of
	// the text tree.
	JSON bool
	// Plain writes JSON values as plain JSON (see the package doc),
	// without their AMQP types.
	Plain bool
	// Tag is added to every JSON object, after its opening brace: a list
	// of members with a trailing comma (`"conn":1,"dir":"client",`).
	Tag string
	// OnFault is called with every fault met in the input, after the
	// lines before it have been buffered; the output goes on after it
	// (but for Values, which stop). With JSON, a fault is also a JSON
	// object of the output.
	OnFault func(error)
	// MaxMessageSize bounds a message joined from several transfers
	// (frame.Assembler); 0 means frame.DefaultMaxMessageSize.
	MaxMessageSize int
	// MaxFrameSize bounds a frame (frame.Reader): a larger one is reported
	// and skipped by its size, unread. 0 means no bound: the Reader's
	// buffer grows only as bytes arrive, so what bounds memory is then the
	// input (amqpdump).
	MaxFrameSize uint32
	// Prefix begins every text line of a Stream (amqpspy's connection and
	// direction), after Out.Prefix.
	Prefix string
	// Conn is the state shared with the Stream of the connection's other
	// direction (Dir 0 and 1); nil for a Stream of its own.
	Conn *Conn
	// Dir is the direction of the Stream in Conn: 0 (the client's) or 1.
	Dir int
	// Filter selects the frames printed; nil prints all.
	Filter *Filter
	// Time says how a frame's line shows the time its last byte arrived
	// (WriteAt), in text: TimeAbs, TimeRel or both; 0 for not at all. JSON
	// objects carry "time" and "delta" whenever the time is known.
	Time int
	// ShowSecrets prints the secrets SASL frames carry — a sasl-init's
	// initial-response (for PLAIN, the password) and a sasl-response's
	// response — as they are. By default their bytes are replaced with
	// as many MaskByte before anything reads them (MaskSecrets), in
	// every output: text, JSON and summaries.
	ShowSecrets bool
}

// The parts of Options.Time.
const (
	TimeAbs = 1 << iota // the time, in UTC: 2023-11-14T22:13:20.001000Z
	TimeRel             // the seconds since the frame printed before it: +0.001000
)

// Stream prints the frames of one direction of an AMQP connection as its
// bytes arrive (Write), one protocol header or frame after the other, and
// the message of every delivery once its last transfer has arrived. A
// fault in a frame or message is reported and printing goes on with the
// next frame; a frame whose header cannot be right is skipped by its size
// when it is at least 8. Stream is not safe for use by several goroutines
// at once.
type Stream struct {
	out  *Out
	opts Options

	feed   feed
	r      *frame.Reader
	base   int64 // stream offset of the Reader's offset 0
	frames int   // frames read or attempted
	dead   bool  // the stream cannot be split into frames any more

	asm  frame.Assembler
	pend map[link]*pending

	walk  *walker // text or JSON, as opts say
	check stream.Cursor
	segs  segments

	conn   *Conn
	perf   perf
	now    time.Time // when the bytes being read arrived
	hasNow bool
}

// link identifies the link a transfer belongs to: handles are scoped to
// the session, which is the channel.
type link struct {
	channel uint16
	handle  uint32
}

// pending is a delivery whose transfers are being joined, as this Stream
// knows it (the frame.Assembler holds the bytes).
type pending struct {
	segs     []segment // where each transfer's payload lies in the stream
	bytes    int
	first    int   // the number of the frame of its first transfer
	firstAt  int64 // the offset of its first payload
	skipping bool  // dropped after an error: its other transfers are ignored
}

// NewStream returns a Stream printing to out.
func NewStream(out *Out, opts Options) *Stream {
	s := &Stream{out: out, opts: opts, pend: map[link]*pending{}, conn: opts.Conn}
	if s.conn == nil {
		s.conn = NewConn()
	}
	s.opts.Dir &= 1
	s.r = frame.NewReader(&s.feed)
	s.r.MaxFrameSize = opts.MaxFrameSize
	if s.r.MaxFrameSize == 0 {
		s.r.MaxFrameSize = math.MaxUint32
	}
	s.asm.MaxMessageSize = opts.MaxMessageSize
	s.walk = newWalker(out, opts.JSON, opts.Plain)
	return s
}

// Write adds b to the stream and prints every frame it completes. b is
// copied. Write never fails: faults in the input are reported to
// Options.OnFault; the output's error is Out.Err.
func (s *Stream) Write(b []byte) (int, error) {
	if s.dead || s.out.err != nil {
		return len(b), nil // nothing more is read: nothing is kept
	}
	s.feed.write(b, false)
	s.drain()
	return len(b), nil
}

// WriteAt is Write for bytes that arrived at time t: the frames they
// complete are stamped with it.
func (s *Stream) WriteAt(b []byte, t time.Time) (int, error) {
	s.now, s.hasNow = t, true
	return s.Write(b)
}

// Conn returns the state of the Stream's connection.
func (s *Stream) Conn() *Conn { return s.conn }

// Lost reports that n bytes of the stream are missing (n < 0: an unknown
// number, before the first byte seen), as when a capture dropped a packet:
// frames cannot be found after them, so nothing more is read.
func (s *Stream) Lost(n int) {
	msg := strconv.Itoa(n) + " bytes are missing here: the rest of the stream is not decoded"
	if n < 0 {
		msg = "the stream's first bytes are missing (the capture starts after the connection did): it is not decoded"
	}
	s.Stop(msg)
}

// Stop ends the decoding of the stream where it has got to: what is
// written after is not read. msg, saying why, is reported as a fault at
// that offset.
func (s *Stream) Stop(msg string) {
	if s.dead {
		return
	}
	s.dead = true
	s.prefix()
	s.fault(&FrameError{Offset: s.feed.end(), Msg: msg})
}

// WriteAll is Write for the whole rest of the stream, which the Stream
// may keep instead of copying, followed by Close.
func (s *Stream) WriteAll(b []byte) {
	s.feed.write(b, true)
	s.Close()
}

// Close ends the stream: a frame cut short is reported, and so is every
// delivery whose last transfer has not arrived.
func (s *Stream) Close() {
	s.feed.closed = true
	s.drain()
	s.prefix()
	s.incomplete()
	s.out.Flush()
}

// prefix makes the lines written from here on begin with the Stream's
// prefix.
func (s *Stream) prefix() {
	s.out.linePrefix = s.opts.Prefix
}

// report passes err to Options.OnFault.
func (s *Stream) report(err error) {
	if s.opts.OnFault != nil {
		s.opts.OnFault(err)
	}
}

// fault reports err, and writes it as a JSON object with JSON, unless it
// is the output's (which its writer reports).
func (s *Stream) fault(err error) {
	if err == s.out.err {
		return
	}
	if s.opts.JSON {
		var at int64
		var fe *FrameError
		var ae *amqpsax.Error
		switch {
		case errors.As(err, &fe):
			at = fe.Offset
		case errors.As(err, &ae):
			at = int64(ae.Offset)
		}
		o := s.out
		o.beginRecord(at)
		o.buf = append(o.buf, '{')
		o.buf = append(o.buf, s.opts.Tag...)
		o.buf = append(o.buf, `"offset":`...)
		o.buf = strconv.AppendInt(o.buf, at, 10)
		o.buf = append(o.buf, `,"error":`...)
		o.buf = appendJSONString(o.buf, []byte(err.Error()))
		o.buf = append(o.buf, '}')
		o.endRecord()
	}
	s.report(err)
}

// drain prints the frames the bytes written so far complete.
func (s *Stream) drain() {
	s.prefix()
	for !s.dead && s.out.err == nil {
		f, err := s.r.Next()
		switch {
		case err == errWait || err == io.EOF:
			return
		case err != nil:
			s.readFault(err)
			continue
		}
		s.frame(f)
		s.feed.discard(s.base + f.Offset + int64(f.Size))
	}
}

// readFault reports a fault of the Reader, and finds the next frame by the
// size of the bad one when it can.
func (s *Stream) readFault(err error) {
	var re *frame.ReadError
	if !errors.As(err, &re) {
		s.dead = true
		s.fault(&FrameError{Offset: s.base + s.r.Offset(), Msg: err.Error() + "; the rest of the stream is not read", Err: err})
		return
	}
	at := s.base + re.Offset
	end := s.feed.end()
	switch {
	case errors.Is(re, io.ErrUnexpectedEOF) && re.HasSize:
		s.frames++
		s.dead = true
		s.fault(&FrameError{"frame " + strconv.Itoa(s.frames), at, "truncated: " + headerText(re) +
			", only " + strconv.FormatInt(end-at, 10) + " bytes present (the input ends at offset " + strconv.FormatInt(end, 10) + ")", re})
	case errors.Is(re, io.ErrUnexpectedEOF):
		s.dead = true
		s.fault(&FrameError{"", at, "truncated: the input ends " + strconv.FormatInt(end-at, 10) +
			" bytes into the 8 bytes of a frame header or protocol header", re})
	case errors.Is(re, frame.ErrEncrypted):
		s.dead = true
		s.fault(&FrameError{"", at, "a TLS session follows the TLS protocol header: the rest of the stream is encrypted and not decoded", re})
	case re.HasSize && re.Size >= 8:
		// The header is wrong but its size may not be: go on after it.
		s.frames++
		next := at + int64(re.Size)
		s.fault(&FrameError{"frame " + strconv.Itoa(s.frames), at, re.Err.Error() + " (" + headerText(re) +
			"): skipped by its size, to offset " + strconv.FormatInt(next, 10), re})
		s.r.Reset(&s.feed)
		s.feed.seek(next)
		s.base = next
	default:
		s.frames++
		s.dead = true
		s.fault(&FrameError{"frame " + strconv.Itoa(s.frames), at, re.Err.Error() + " (" + headerText(re) +
			"): the next frame cannot be found, the rest of the stream is not read", re})
	}
}

// headerText describes the header of a frame the Reader could not read:
// "size 12, doff 1, type 0 (AMQP), channel 0", as a frame's line does.
func headerText(re *frame.ReadError) string {
	return "size " + strconv.FormatUint(uint64(re.Size), 10) + ", doff " + strconv.Itoa(int(re.DataOffset)) +
		", type " + strconv.Itoa(int(re.Type)) + " (" + name(frameTypes[:], int(re.Type)) + "), channel " +
		strconv.Itoa(int(re.Channel))
}

// frameTypes names the frame types (part 2 §2.3.1, part 5 §5.3.1).
var frameTypes = [...]string{frame.TypeAMQP: "AMQP", frame.TypeSASL: "SASL"}

// protocolIDs names the protocol ids of a protocol header (part 2 §2.2,
// part 5 §5.2.1, §5.3.1).
var protocolIDs = [...]string{frame.ProtocolAMQP: "AMQP", frame.ProtocolTLS: "TLS", frame.ProtocolSASL: "SASL"}

// name returns names[i], or "unknown" when there is none.
func name(names []string, i int) string {
	if i < len(names) && names[i] != "" {
		return names[i]
	}
	return "unknown"
}

// frame prints one protocol header or frame.
func (s *Stream) frame(f frame.Frame) {
	at := s.base + f.Offset
	if f.IsHeader {
		fa := facts{header: true, handle: -1, id: -1}
		if s.opts.Filter.match(&fa) {
			s.header(f, at)
		}
		return
	}
	s.frames++
	if f.Type == frame.TypeSASL && !s.opts.ShowSecrets {
		MaskSecrets(f.Body) // the Stream's own copy of the input
	}
	var d amqpsax.Descriptor
	if len(f.Body) > 0 {
		d, _ = frame.Performative(f.Body)
	}
	s.perf.d, s.perf.err = 0, nil
	if len(f.Body) > 0 {
		parsePerf(d, f.Body, &s.perf)
	}
	fa := s.conn.observe(s.opts.Dir, f, d, s.now, s.hasNow, &s.perf)
	if !s.opts.Filter.match(&fa) {
		s.hidden(f, d, at)
		return
	}
	if s.opts.JSON {
		s.frameJSON(f, at)
		return
	}
	o := s.out
	o.begin(at, 0)
	o.buf = s.appendTime(o.buf)
	o.buf = append(o.buf, "frame "...)
	o.buf = strconv.AppendInt(o.buf, int64(s.frames), 10)
	o.buf = append(o.buf, " at "...)
	o.buf = strconv.AppendInt(o.buf, at, 10)
	o.buf = append(o.buf, ": size "...)
	o.buf = strconv.AppendUint(o.buf, uint64(f.Size), 10)
	o.buf = append(o.buf, ", doff "...)
	o.buf = strconv.AppendUint(o.buf, uint64(f.DataOffset()), 10)
	o.buf = append(o.buf, ", type "...)
	o.buf = strconv.AppendUint(o.buf, uint64(f.Type), 10)
	o.buf = append(o.buf, " ("...)
	o.buf = append(o.buf, name(frameTypes[:], int(f.Type))...)
	o.buf = append(o.buf, "), channel "...)
	o.buf = strconv.AppendUint(o.buf, uint64(f.Channel), 10)
	o.buf = append(o.buf, ": "...)
	if len(f.Body) == 0 {
		o.buf = append(o.buf, "empty (heartbeat)"...)
	} else {
		o.buf = append(o.buf, perfName(f.Body)...)
	}
	o.end()
	if len(f.Ext) > 0 {
		o.line(at+8, 1, "extended header: "+hex.EncodeToString(f.Ext))
	}
	if len(f.Body) == 0 {
		return
	}
	bodyAt := at + 4*int64(f.DataOffset())
	if !s.walk.one(f.Body, s.segs.at(bodyAt), 1) {
		s.fault(s.walk.err())
		return
	}
	n := s.valueLen(f.Body)
	// (d is the performative, read above.)
	if err := s.parse(bodyAt); err != nil {
		s.fault(err)
		return
	}
	if d == amqpsax.DescriptorTransfer {
		s.transfer(f, bodyAt)
	} else if n < len(f.Body) {
		o.line(bodyAt+int64(n), 1, "payload: "+strconv.Itoa(len(f.Body)-n)+" bytes after a performative other than transfer")
	}
}

// hidden reads a frame the filter leaves out: a transfer is still joined
// to its delivery, so that the deliveries printed are whole. Faults in a
// frame left out are not reported.
func (s *Stream) hidden(f frame.Frame, d amqpsax.Descriptor, at int64) {
	if d != amqpsax.DescriptorTransfer || len(f.Body) == 0 || s.perf.err != nil {
		return
	}
	s.join(f, s.perf.transfer, s.perf.payload, at+4*int64(f.DataOffset()))
}

// clock returns the time of the frame being printed and the time since
// the frame printed before it on the connection, and makes it the last.
func (s *Stream) clock() (t time.Time, delta time.Duration, hasDelta bool) {
	c := s.conn
	t = s.now
	if c.hasLast {
		delta, hasDelta = t.Sub(c.last), true
	}
	c.last, c.hasLast = t, true
	return t, delta, hasDelta
}

// appendTime appends the time of a frame's line as Options.Time says:
// "2023-11-14T22:13:20.001000Z +0.001000 ".
func (s *Stream) appendTime(b []byte) []byte {
	if !s.hasNow {
		return b
	}
	t, delta, _ := s.clock()
	if s.opts.Time&TimeAbs != 0 {
		b = t.UTC().AppendFormat(b, "2006-01-02T15:04:05.000000Z")
		b = append(b, ' ')
	}
	if s.opts.Time&TimeRel != 0 {
		if delta >= 0 {
			b = append(b, '+')
		}
		b = strconv.AppendFloat(b, delta.Seconds(), 'f', 6, 64)
		b = append(b, ' ')
	}
	return b
}

// appendJSONTime appends the members "time" and "delta" of a frame's
// object, and a comma, when its time is known.
func (s *Stream) appendJSONTime(b []byte) []byte {
	if !s.hasNow {
		return b
	}
	t, delta, hasDelta := s.clock()
	b = append(b, `"time":"`...)
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `",`...)
	if hasDelta {
		b = append(b, `"delta":`...)
		b = appendJSONSeconds(b, delta)
		b = append(b, ',')
	}
	return b
}

// header prints a protocol header.
func (s *Stream) header(f frame.Frame, at int64) {
	h := f.Header
	o := s.out
	if s.opts.JSON {
		o.beginRecord(at)
		o.buf = append(o.buf, '{')
		o.buf = append(o.buf, s.opts.Tag...)
		o.buf = s.appendJSONTime(o.buf)
		o.buf = append(o.buf, `"offset":`...)
		o.buf = strconv.AppendInt(o.buf, at, 10)
		o.buf = append(o.buf, `,"header":"AMQP","protocol":`...)
		o.buf = appendJSONString(o.buf, []byte(name(protocolIDs[:], int(h.ID))))
		o.buf = append(o.buf, `,"id":`...)
		o.buf = strconv.AppendUint(o.buf, uint64(h.ID), 10)
		o.buf = append(o.buf, `,"version":"`...)
		o.buf = appendVersion(o.buf, h)
		o.buf = append(o.buf, `"}`...)
		o.endRecord()
		return
	}
	o.begin(at, 0)
	o.buf = s.appendTime(o.buf)
	o.buf = append(o.buf, "protocol header at "...)
	o.buf = strconv.AppendInt(o.buf, at, 10)
	o.buf = append(o.buf, ": AMQP "...)
	o.buf = strconv.AppendUint(o.buf, uint64(h.ID), 10)
	o.buf = append(o.buf, ' ')
	o.buf = appendVersion(o.buf, h)
	o.buf = append(o.buf, " ("...)
	o.buf = append(o.buf, name(protocolIDs[:], int(h.ID))...)
	o.buf = append(o.buf, ')')
	o.end()
}

func appendVersion(b []byte, h frame.ProtocolHeader) []byte {
	b = strconv.AppendUint(b, uint64(h.Major), 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, uint64(h.Minor), 10)
	b = append(b, '.')
	return strconv.AppendUint(b, uint64(h.Revision), 10)
}

// valueLen returns the length of the value at the start of b, which has
// been read whole without fault.
func (s *Stream) valueLen(b []byte) int {
	s.check.Reset(b)
	if !s.check.Next() {
		return len(b)
	}
	return len(s.check.Raw())
}

// parse returns the fault parsePerf found in the performative of the
// frame being printed, if any, with its offset in the stream.
func (s *Stream) parse(bodyAt int64) error {
	if s.perf.err == nil {
		return nil
	}
	return remap(s.perf.err, s.segs.at(bodyAt))
}

// What became of a transfer.
const (
	joinFault   = iota // the Assembler refused it
	joinMore           // more of its delivery is to come
	joinAborted        // its delivery was aborted
	joinIgnored        // its delivery was dropped after a fault
	joinDone           // it completed a delivery
)

// joined is what became of a transfer's payload.
type joined struct {
	what    int
	n       int   // the payload's length
	payAt   int64 // its offset
	dropped int   // joinAborted: the bytes dropped
	d       frame.Delivery
	segs    []segment // joinDone: where the message's bytes lie in the stream
	first   int       // joinDone: the frame of its first transfer
	firstAt int64     // joinDone: the offset of its first payload
	err     error     // joinFault
}

// join adds the payload of a transfer frame to its delivery.
func (s *Stream) join(f frame.Frame, t frame.Transfer, payload []byte, bodyAt int64) joined {
	j := joined{n: len(payload), payAt: bodyAt + int64(len(f.Body)-len(payload))}
	key := link{f.Channel, t.Handle}
	p := s.pend[key]
	d, done, err := s.asm.Add(f.Channel, t, payload)
	j.d = d
	switch {
	case err != nil:
		j.what, j.err = joinFault, &FrameError{"frame " + strconv.Itoa(s.frames), s.base + f.Offset, strings.TrimPrefix(err.Error(), "frame: "), err}
		switch {
		case t.More && !errors.Is(err, frame.ErrTooManyPending):
			// The Assembler ignores the rest of this delivery.
			if p == nil {
				p = &pending{first: s.frames, firstAt: j.payAt}
				s.pend[key] = p
			}
			p.skipping, p.segs = true, nil
		default:
			delete(s.pend, key)
		}
	case d.Aborted:
		j.what, j.dropped = joinAborted, j.n
		if p != nil {
			j.dropped += p.bytes
		}
		delete(s.pend, key)
	case !done && p != nil && p.skipping:
		j.what = joinIgnored
		if !t.More {
			delete(s.pend, key)
		}
	case !done:
		j.what = joinMore
		if p == nil {
			p = &pending{first: s.frames, firstAt: j.payAt}
			s.pend[key] = p
		}
		p.segs = append(p.segs, segment{p.bytes, j.payAt})
		p.bytes += j.n
	default:
		j.what, j.first, j.firstAt = joinDone, s.frames, j.payAt
		if p != nil {
			j.segs, j.first, j.firstAt = append(p.segs, segment{p.bytes, j.payAt}), p.first, p.firstAt
			delete(s.pend, key)
		} else {
			j.segs = append(s.segs.list[:0], segment{0, j.payAt})
		}
	}
	return j
}

// transfer joins the payload of a transfer frame to its delivery and
// prints the delivery's message when this transfer is its last.
func (s *Stream) transfer(f frame.Frame, bodyAt int64) {
	if s.perf.err != nil {
		return // reported by parse
	}
	j := s.join(f, s.perf.transfer, s.perf.payload, bodyAt)
	o := s.out
	n := strconv.Itoa(j.n)
	switch j.what {
	case joinFault:
		s.fault(j.err)
	case joinAborted:
		o.line(j.payAt, 1, "payload: "+n+" bytes; delivery aborted: "+strconv.Itoa(j.dropped)+
			" bytes from "+strconv.Itoa(j.d.Frames)+" transfers dropped")
	case joinIgnored:
		o.line(j.payAt, 1, "payload: "+n+" bytes, ignored: its delivery was dropped")
	case joinMore:
		o.line(j.payAt, 1, "payload: "+n+" bytes, more to come")
	case joinDone:
		if j.d.Frames == 1 {
			o.line(j.payAt, 1, "message: "+n+" bytes")
		} else {
			o.line(j.payAt, 1, "payload: "+n+" bytes, the last of "+strconv.Itoa(j.d.Frames)+" transfers")
			o.line(j.firstAt, 1, "message: "+strconv.Itoa(len(j.d.Payload))+" bytes from frames "+
				strconv.Itoa(j.first)+"-"+strconv.Itoa(s.frames))
		}
		s.message(j.d.Payload, j.segs)
	}
}

// message prints the sections of a message, and reports a fault in their
// encoding or in their order.
func (s *Stream) message(m []byte, segs []segment) {
	if !s.walk.all(m, s.segs.set(segs), 2) {
		s.fault(s.walk.err())
		return
	}
	if _, err := message.Scan(m); err != nil {
		s.fault(remap(err, s.segs.set(segs)))
	}
}

// incomplete reports the deliveries whose last transfer has not arrived.
func (s *Stream) incomplete() {
	var keys []link
	for k, p := range s.pend {
		if !p.skipping {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b link) int { return s.pend[a].first - s.pend[b].first })
	for _, k := range keys {
		p := s.pend[k]
		if s.opts.JSON {
			o := s.out
			o.beginRecord(p.firstAt)
			o.buf = append(o.buf, '{')
			o.buf = append(o.buf, s.opts.Tag...)
			o.buf = append(o.buf, `"incomplete":{"channel":`...)
			o.buf = strconv.AppendUint(o.buf, uint64(k.channel), 10)
			o.buf = append(o.buf, `,"handle":`...)
			o.buf = strconv.AppendUint(o.buf, uint64(k.handle), 10)
			o.buf = append(o.buf, `,"bytes":`...)
			o.buf = strconv.AppendInt(o.buf, int64(p.bytes), 10)
			o.buf = append(o.buf, `,"transfers":`...)
			o.buf = strconv.AppendInt(o.buf, int64(len(p.segs)), 10)
			o.buf = append(o.buf, `,"first-frame":`...)
			o.buf = strconv.AppendInt(o.buf, int64(p.first), 10)
			o.buf = append(o.buf, "}}"...)
			o.endRecord()
			continue
		}
		s.out.line(p.firstAt, 0, "incomplete delivery on channel "+strconv.Itoa(int(k.channel))+", handle "+
			strconv.FormatUint(uint64(k.handle), 10)+": "+strconv.Itoa(p.bytes)+" bytes in "+strconv.Itoa(len(p.segs))+
			" transfers from frame "+strconv.Itoa(p.first)+", no last transfer")
	}
	clear(s.pend)
}
