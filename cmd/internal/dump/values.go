package dump

import (
	"errors"
	"io"
	"slices"
	"strconv"

	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/dispatch"
)

// Values prints encoded values one after the other (a message is its
// sections one after another), at offsets from 0: as a text tree, or one
// JSON object a value ({"offset":N,"value":…}).
type Values struct {
	out  *Out
	opts Options
	walk *walker
	dec  dispatch.Decoder
	segs segments
}

// NewValues returns a Values printing to out.
func NewValues(out *Out, opts Options) *Values {
	v := &Values{out: out, opts: opts}
	v.walk = newWalker(out, opts.JSON, opts.Plain)
	return v
}

// Print prints the values of data. It stops at the first fault and
// returns it (an *amqpsax.Error with Op "amqpdump", the cause, format code
// and offset package dispatch reports), after everything before it has
// been printed; or the output's error (a *LimitError).
func (v *Values) Print(data []byte) error { return v.print(data, 0) }

// readChunk is how much PrintFrom reads at a time.
const readChunk = 64 << 10

// PrintFrom prints the values read from r as they come, as Print does:
// it holds the values not yet complete, not the whole input (a value cut
// by the end of what has arrived is read further until it is whole, the
// buffer at least doubled before each new try, so that a large value is
// decoded a bounded number of times).
func (v *Values) PrintFrom(r io.Reader) error {
	buf := make([]byte, 0, readChunk)
	var base int64
	want := readChunk
	eof := false
	for {
		for !eof && len(buf) < want {
			if cap(buf)-len(buf) < readChunk/2 {
				buf = slices.Grow(buf, max(readChunk, want-len(buf)))
			}
			n, err := r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			switch {
			case err == io.EOF:
				eof = true
			case err != nil:
				if perr := v.print(buf, base); perr != nil {
					return perr
				}
				return err
			}
		}
		// The values that are whole: print them, keep the rest.
		end, cut := 0, false
		for end < len(buf) {
			n, err := v.dec.Decode(buf[end:], amqpsax.NopHandler{})
			if err != nil {
				cut = !eof && errors.Is(err, io.ErrUnexpectedEOF)
				break
			}
			end += n
		}
		if !cut {
			// All of it: whole, or its fault is reported as it stands.
			if err := v.print(buf, base); err != nil || eof {
				return err
			}
			base += int64(len(buf))
			buf, want = buf[:0], readChunk
			continue
		}
		if err := v.print(buf[:end], base); err != nil {
			return err
		}
		rest := copy(buf, buf[end:])
		buf, base = buf[:rest], base+int64(end)
		want = max(readChunk, 2*rest)
	}
}

// print prints the values of data, which begins at input offset base.
func (v *Values) print(data []byte, base int64) error {
	if !v.opts.ShowSecrets {
		data = maskValues(data) // a copy, when there is a secret
	}
	if !v.opts.JSON {
		var err error
		if !v.walk.all(data, v.segs.at(base), 0) {
			err = v.walk.err()
		}
		if ferr := v.out.Flush(); err == nil {
			err = ferr
		}
		return err
	}
	// One walk: a fault ends the value's object where it is met, the
	// objects and arrays open closed, with the fault as its "error"; it is
	// also returned, and nothing after it is read.
	o := v.out
	w := v.walk
	c := &w.c
	c.Reset(data)
	w.segs = v.segs.at(base)
	var err error
	for c.Next() {
		o.beginRecord(base + int64(c.Offset()))
		o.buf = append(o.buf, `{"offset":`...)
		o.buf = strconv.AppendInt(o.buf, base+int64(c.Offset()), 10)
		o.buf = append(o.buf, `,"value":`...)
		if !w.value(w.slot(node{})) {
			if o.err == nil {
				o.unwind(1)
				err = remap(c.Err(), &v.segs)
				o.buf = append(o.buf, `,"error":`...)
				o.buf = appendJSONString(o.buf, []byte(err.Error()))
				o.buf = append(o.buf, '}')
				o.endRecord()
			}
			break
		}
		o.buf = append(o.buf, '}')
		o.endRecord()
	}
	if err == nil && c.Err() != nil {
		err = remap(c.Err(), &v.segs)
	}
	if ferr := o.Flush(); err == nil {
		err = ferr
	}
	return err
}

// Work returns the values visited and offsets looked up so far: a test
// hook, to show that work grows linearly with the input.
func (v *Values) Work() int { return v.walk.work + v.segs.steps }

// Work returns the values visited and offsets looked up so far: a test
// hook, to show that work grows linearly with the input.
func (s *Stream) Work() int { return s.walk.work + s.segs.steps }
