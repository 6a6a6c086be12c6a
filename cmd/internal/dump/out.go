package dump

import (
	"io"
	"strconv"
)

// flushAt is how many bytes Out buffers before it writes them.
const flushAt = 32 << 10

// maxIndent is the deepest nesting shown by indentation; deeper lines
// are indented as at maxIndent and say their depth in words, so that a
// line costs a bounded number of bytes however deep its value lies.
const maxIndent = 32

// LimitError is the fault of output that reached Out.Limit: nothing
// more is written.
type LimitError struct {
	Limit int64 // the limit, in bytes
	At    int64 // the input offset of the first line not written
}

func (e *LimitError) Error() string {
	return "output limit of " + strconv.FormatInt(e.Limit, 10) + " bytes reached at input offset " +
		strconv.FormatInt(e.At, 10) + ": the rest is not printed (set the limit to 0 for no limit)"
}

// Out writes lines (text) or records (JSON) to an io.Writer through a
// buffer, counts what it writes, and stops at Limit. Lines are built in
// place: begin, then appends to buf, then end.
type Out struct {
	// Limit bounds the bytes written; 0 means no limit. The line or record
	// that would pass it is not written, nor anything after it.
	Limit int64
	// Prefix begins every line (amqpspy's connection and direction).
	Prefix string
	// Offsets starts every line with the input offset of its value, in a
	// column Width digits wide.
	Offsets bool
	Width   int

	// linePrefix follows Prefix: the Stream writing (Options.Prefix).
	linePrefix string

	w     io.Writer
	buf   []byte
	n     int64 // bytes written to w
	err   error // sticky: a *LimitError or an error of w
	start int   // where the line or record being built begins in buf
	text  int   // where its text begins (after prefix, offset and indent)
	at    int64 // its input offset

	// capture, when set, receives the text of the next line ended.
	capture *string

	// js follows the brackets of the JSON record being built, so that a
	// record cut by a fault can be closed (unwind).
	js jsonScan
}

// jsonScan follows the nesting of a JSON text as it is written: the
// closing bracket of each open object and array, and whether a string is
// open. scanned is how much of Out.buf it has read.
type jsonScan struct {
	stack   []byte
	inStr   bool
	esc     bool
	scanned int
}

// scan reads b, the next bytes of the JSON text.
func (j *jsonScan) scan(b []byte) {
	for _, c := range b {
		switch {
		case j.esc:
			j.esc = false
		case j.inStr:
			switch c {
			case '\\':
				j.esc = true
			case '"':
				j.inStr = false
			}
		case c == '"':
			j.inStr = true
		case c == '{':
			j.stack = append(j.stack, '}')
		case c == '[':
			j.stack = append(j.stack, ']')
		case c == '}' || c == ']':
			if len(j.stack) > 0 {
				j.stack = j.stack[:len(j.stack)-1]
			}
		}
	}
}

// catchUp scans what has been appended to buf since the last scan.
func (o *Out) catchUp() {
	if o.js.scanned < len(o.buf) {
		o.js.scan(o.buf[o.js.scanned:])
	}
	o.js.scanned = len(o.buf)
}

// Depth returns how many objects and arrays of the JSON record being
// built are open.
func (o *Out) depth() int {
	o.catchUp()
	return len(o.js.stack)
}

// unwind closes the objects and arrays of the JSON record being built
// down to depth open ones: a record cut short by a fault (after a key or
// a comma whose value never came, a null, or no comma) stays valid JSON.
func (o *Out) unwind(depth int) {
	if o.err != nil {
		return
	}
	o.catchUp()
	if len(o.buf) > o.start {
		switch o.buf[len(o.buf)-1] {
		case ':':
			o.buf = append(o.buf, "null"...)
		case ',':
			o.buf = o.buf[:len(o.buf)-1]
		}
	}
	for len(o.js.stack) > depth {
		o.buf = append(o.buf, o.js.stack[len(o.js.stack)-1])
		o.js.stack = o.js.stack[:len(o.js.stack)-1]
	}
	o.js.scanned = len(o.buf)
}

// NewOut returns an Out writing to w.
func NewOut(w io.Writer) *Out { return &Out{w: w} }

// Err returns the first error: a *LimitError or an error of the writer.
func (o *Out) Err() error { return o.err }

// begin starts a line for the value at input offset off, indented by
// indent levels.
func (o *Out) begin(off int64, indent int) {
	o.start, o.at = len(o.buf), off
	o.buf = append(o.buf, o.Prefix...)
	o.buf = append(o.buf, o.linePrefix...)
	if o.Offsets {
		var num [20]byte
		d := strconv.AppendInt(num[:0], off, 10)
		if off < 0 {
			d = d[:0]
		}
		for range o.Width - len(d) {
			o.buf = append(o.buf, ' ')
		}
		o.buf = append(o.buf, d...)
		o.buf = append(o.buf, "  "...)
	}
	for range min(indent, maxIndent) {
		o.buf = append(o.buf, "  "...)
	}
	if indent > maxIndent {
		o.buf = append(o.buf, "(depth "...)
		o.buf = strconv.AppendInt(o.buf, int64(indent), 10)
		o.buf = append(o.buf, ") "...)
	}
	o.text = len(o.buf)
}

// end finishes the line begun last: it is written unless it would pass
// the limit.
func (o *Out) end() {
	if o.err != nil {
		o.buf = o.buf[:o.start]
		return
	}
	o.buf = append(o.buf, '\n')
	if o.Limit > 0 && o.n+int64(len(o.buf)) > o.Limit {
		o.buf = o.buf[:o.start]
		o.err = &LimitError{Limit: o.Limit, At: o.at}
		return
	}
	if o.capture != nil {
		*o.capture = string(o.buf[o.text : len(o.buf)-1])
		o.capture = nil
	}
	if len(o.buf) >= flushAt {
		o.Flush()
	}
}

// line writes one line of text for the value at input offset off.
func (o *Out) line(off int64, indent int, text string) {
	o.begin(off, indent)
	o.buf = append(o.buf, text...)
	o.end()
}

// Note writes a line that is about no value in particular (a
// connection opening): with Prefix, without indentation, its offset column
// left blank.
func (o *Out) Note(text string) {
	o.begin(-1, 0)
	o.at = 0
	o.buf = append(o.buf, text...)
	o.end()
}

// Object writes a JSON object, one line, whose members (without braces)
// are given.
func (o *Out) Object(members string) {
	o.beginRecord(0)
	o.buf = append(o.buf, '{')
	o.buf = append(o.buf, members...)
	o.buf = append(o.buf, '}')
	o.endRecord()
}

// beginRecord starts a JSON record (one line) about input offset off.
func (o *Out) beginRecord(off int64) {
	o.start, o.at = len(o.buf), off
	o.js.stack, o.js.inStr, o.js.esc, o.js.scanned = o.js.stack[:0], false, false, len(o.buf)
}

// spill writes what is buffered when the buffer is full, in the middle of
// a record: a record as large as a whole message is not held in memory.
// It reports false once the output has failed or reached its limit.
func (o *Out) spill() bool {
	if o.err != nil {
		return false
	}
	if o.Limit > 0 && o.n+int64(len(o.buf)) > o.Limit {
		if o.start < len(o.buf) {
			o.buf = o.buf[:o.start]
		}
		o.err = &LimitError{Limit: o.Limit, At: o.at}
		return false
	}
	if len(o.buf) >= flushAt {
		o.catchUp()
		o.Flush()
		o.start, o.js.scanned = 0, 0
	}
	return o.err == nil
}

// endRecord finishes a JSON record with a newline.
func (o *Out) endRecord() {
	if o.err != nil {
		o.buf = o.buf[:min(o.start, len(o.buf))]
		return
	}
	o.buf = append(o.buf, '\n')
	o.spill()
}

// Flush writes what is buffered.
func (o *Out) Flush() error {
	if len(o.buf) > 0 && o.w != nil {
		n, err := o.w.Write(o.buf)
		o.n += int64(n)
		if err != nil && o.err == nil {
			o.err = err
		}
	}
	o.buf = o.buf[:0]
	return o.err
}
