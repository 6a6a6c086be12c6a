package dump

import (
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
	tree tree
	json jsonw
	dec  dispatch.Decoder
	segs segments
}

// NewValues returns a Values printing to out.
func NewValues(out *Out, opts Options) *Values {
	v := &Values{out: out, opts: opts}
	v.tree.out, v.json.out = out, out
	return v
}

// Print prints the values of data. It stops at the first fault and
// returns it (an *amqpsax.Error with Op "amqpdump", the cause, format code
// and offset package dispatch reports), after everything before it has
// been printed; or the output's error (a *LimitError).
func (v *Values) Print(data []byte) error {
	if !v.opts.JSON {
		err := v.tree.all(data, v.segs.at(0), 0)
		if ferr := v.out.Flush(); err == nil {
			err = ferr
		}
		return err
	}
	o := v.out
	for pos := 0; pos < len(data); {
		// Each value is checked whole before it is written, so that no
		// object is left half written.
		n, err := v.dec.Decode(data[pos:], amqpsax.NopHandler{})
		if err != nil {
			o.Flush()
			return remap(err, v.segs.at(int64(pos)))
		}
		o.beginRecord(int64(pos))
		o.buf = append(o.buf, `{"offset":`...)
		o.buf = strconv.AppendInt(o.buf, int64(pos), 10)
		o.buf = append(o.buf, `,"value":`...)
		v.json.c.Reset(data[pos : pos+n])
		if !v.json.c.Next() || !v.json.value(0, 0, false) {
			break
		}
		o.buf = append(o.buf, '}')
		o.endRecord()
		pos += n
	}
	o.Flush()
	return o.err
}

// Work returns the values visited and offsets looked up so far: a test
// hook, to show that work grows linearly with the input.
func (v *Values) Work() int { return v.tree.work + v.json.work + v.segs.steps }

// Work returns the values visited and offsets looked up so far: a test
// hook, to show that work grows linearly with the input.
func (s *Stream) Work() int { return s.tree.work + s.json.work + s.segs.steps }
