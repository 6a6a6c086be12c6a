package dump

import (
	"encoding/hex"
	"strconv"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/amqpsax/amqpsax/message"
	"github.com/amqpsax/amqpsax/stream"
)

// frameJSON prints a frame as one JSON object.
func (s *Stream) frameJSON(f frame.Frame, at int64) {
	o := s.out
	bodyAt := at + 4*int64(f.DataOffset())
	d, _ := frame.Performative(f.Body)
	o.beginRecord(at)
	o.buf = append(o.buf, '{')
	o.buf = append(o.buf, s.opts.Tag...)
	o.buf = s.appendJSONTime(o.buf)
	o.buf = append(o.buf, `"frame":`...)
	o.buf = strconv.AppendInt(o.buf, int64(s.frames), 10)
	o.buf = append(o.buf, `,"offset":`...)
	o.buf = strconv.AppendInt(o.buf, at, 10)
	o.buf = append(o.buf, `,"size":`...)
	o.buf = strconv.AppendUint(o.buf, uint64(f.Size), 10)
	o.buf = append(o.buf, `,"doff":`...)
	o.buf = strconv.AppendUint(o.buf, uint64(f.DataOffset()), 10)
	o.buf = append(o.buf, `,"type":`...)
	o.buf = appendJSONString(o.buf, []byte(name(frameTypes[:], int(f.Type))))
	o.buf = append(o.buf, `,"channel":`...)
	o.buf = strconv.AppendUint(o.buf, uint64(f.Channel), 10)
	if len(f.Ext) > 0 {
		o.buf = append(o.buf, `,"ext":"`...)
		o.buf = hex.AppendEncode(o.buf, f.Ext)
		o.buf = append(o.buf, '"')
	}
	if len(f.Body) == 0 {
		o.buf = append(o.buf, `,"heartbeat":true}`...)
		o.endRecord()
		return
	}
	o.buf = append(o.buf, `,"performative":`...)
	if isPerformative(d) {
		o.buf = appendJSONString(o.buf, []byte(shortName(d)))
	} else {
		o.buf = append(o.buf, "null"...)
	}
	o.buf = append(o.buf, `,"fields":`...)
	w := s.walk
	w.segs = s.segs.at(bodyAt)
	w.c.Reset(f.Body)
	// One walk: a fault in the encoding ends the fields where it is met,
	// the objects and arrays open closed (what was before it is written,
	// as in text), and the fault is the frame's "error".
	if !w.c.Next() || !w.perf() {
		if o.err != nil {
			o.endRecord()
			return
		}
		o.unwind(1)
		s.endWithError(w.err())
		return
	}
	if err := s.parse(bodyAt); err != nil {
		s.endWithError(err)
		return
	}
	n := s.valueLen(f.Body)
	if d == amqpsax.DescriptorTransfer {
		s.transferJSON(f, bodyAt)
	} else if n < len(f.Body) {
		o.buf = append(o.buf, `,"payload":`...)
		o.buf = strconv.AppendInt(o.buf, int64(len(f.Body)-n), 10)
	}
	o.buf = append(o.buf, '}')
	o.endRecord()
}

// endWithError ends the object being written with an "error" member, and
// reports err.
func (s *Stream) endWithError(err error) {
	o := s.out
	o.buf = append(o.buf, `,"error":`...)
	o.buf = appendJSONString(o.buf, []byte(err.Error()))
	o.buf = append(o.buf, '}')
	o.endRecord()
	s.report(err)
}

// transferJSON writes the members of a transfer's object about its
// payload and delivery: "payload" (its length), "delivery" (what became
// of it: "more", "aborted", "ignored", "complete"), and "message" when it
// completes its delivery.
func (s *Stream) transferJSON(f frame.Frame, bodyAt int64) {
	o := s.out
	if s.perf.err != nil {
		return
	}
	j := s.join(f, s.perf.transfer, s.perf.payload, bodyAt)
	o.buf = append(o.buf, `,"payload":`...)
	o.buf = strconv.AppendInt(o.buf, int64(j.n), 10)
	switch j.what {
	case joinFault:
		o.buf = append(o.buf, `,"delivery":"refused","error":`...)
		o.buf = appendJSONString(o.buf, []byte(j.err.Error()))
		s.report(j.err)
	case joinAborted:
		o.buf = append(o.buf, `,"delivery":"aborted","dropped":`...)
		o.buf = strconv.AppendInt(o.buf, int64(j.dropped), 10)
	case joinIgnored:
		o.buf = append(o.buf, `,"delivery":"ignored"`...)
	case joinMore:
		o.buf = append(o.buf, `,"delivery":"more"`...)
	case joinDone:
		o.buf = append(o.buf, `,"delivery":"complete","message":`...)
		s.messageJSON(j.d.Payload, j.segs, j.first)
	}
}

// messageJSON writes a message as an object: "bytes", "frames" (the
// first and last frame of its transfers), and "sections", each with its
// "offset", "section" (its short name: "header", "application-properties"
// …; null for a value that is not a section) and "value"; or "error".
func (s *Stream) messageJSON(m []byte, segs []segment, first int) {
	o := s.out
	o.buf = append(o.buf, `{"bytes":`...)
	o.buf = strconv.AppendInt(o.buf, int64(len(m)), 10)
	o.buf = append(o.buf, `,"frames":[`...)
	o.buf = strconv.AppendInt(o.buf, int64(first), 10)
	o.buf = append(o.buf, ',')
	o.buf = strconv.AppendInt(o.buf, int64(s.frames), 10)
	o.buf = append(o.buf, ']')
	var bad error
	o.buf = append(o.buf, `,"sections":[`...)
	depth := o.depth() // the message's object and its sections
	w := s.walk
	w.c.Reset(m)
	w.segs = s.segs.set(segs)
	for i := 0; w.c.Next(); i++ {
		w.work++
		if i > 0 {
			o.buf = append(o.buf, ',')
		}
		o.buf = append(o.buf, `{"offset":`...)
		o.buf = strconv.AppendInt(o.buf, s.segs.offset(w.c.Offset()), 10)
		o.buf = append(o.buf, `,"section":`...)
		if !w.section() {
			break
		}
		o.buf = append(o.buf, '}')
	}
	switch {
	case o.err != nil:
		return
	case w.c.Err() != nil:
		// A fault in the encoding: the sections before it, and as much of
		// its section as precedes it, are written.
		o.unwind(depth)
		bad = remap(w.c.Err(), s.segs.set(segs))
	default:
		if _, err := message.Scan(m); err != nil {
			bad = remap(err, s.segs.set(segs))
		}
	}
	o.buf = append(o.buf, ']')
	if bad != nil {
		o.buf = append(o.buf, `,"error":`...)
		o.buf = appendJSONString(o.buf, []byte(bad.Error()))
		s.report(bad)
	}
	o.buf = append(o.buf, '}')
}

// perf writes the performative the cursor is on as the object of its
// fields (or, when it is not a described list the spec names the fields
// of, as any value).
func (w *walker) perf() bool {
	d, known := describedAs(&w.c)
	if !known || !hasFields(d) {
		return w.value(w.slot(node{}))
	}
	return w.fields(d)
}

// section writes the name of the section the cursor is on and its
// "value" member: the object of its fields for the header and
// properties, any value for the others. A value that is not a section
// has a null name and is written whole.
func (w *walker) section() bool {
	o := w.out
	d, known := describedAs(&w.c)
	if !known {
		o.buf = append(o.buf, `null,"value":`...)
		return w.value(w.slot(node{}))
	}
	o.buf = appendJSONString(o.buf, []byte(shortName(d)))
	o.buf = append(o.buf, `,"value":`...)
	if hasFields(d) {
		return w.fields(d)
	}
	return w.enterValue()
}

// describedAs returns the descriptor of the described value the cursor
// is on, without entering it, and whether it is one the spec defines.
func describedAs(c *stream.Cursor) (amqpsax.Descriptor, bool) {
	if c.Kind() != amqpsax.KindDescribed {
		return 0, false
	}
	d, sym, ok := c.Descriptor()
	switch {
	case !ok:
		return 0, false
	case sym != nil:
		return d, d != 0
	}
	return d, d.Name() != ""
}
