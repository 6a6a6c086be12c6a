package dump

import (
	"strconv"
	"time"

	"github.com/amqpsax/amqpsax/frame"
)

// Summary prints what the connection carried, per session and link: a
// few lines of text, or with JSON one object {"summary":{…}} (see the
// package doc), tag added after its opening brace. label names the
// connection in the text ("c1"); "" for none.
func (c *Conn) Summary(out *Out, json bool, tag, label string) {
	out.linePrefix = ""
	if json {
		c.summaryJSON(out, tag)
		out.Flush()
		return
	}
	var b []byte
	b = append(b, "summary"...)
	if label != "" {
		b = append(b, ' ')
		b = append(b, label...)
	}
	b = append(b, ": "...)
	b = strconv.AppendInt(b, int64(c.frames[0]+c.frames[1]), 10)
	b = append(b, " frames, "...)
	b = strconv.AppendInt(b, c.bytes[0]+c.bytes[1], 10)
	b = append(b, " bytes"...)
	if c.frames[0] > 0 && c.frames[1] > 0 {
		for i, side := range c.Sides {
			b = append(b, "; "[:min(i*2, 2)]...)
			if i == 0 {
				b = append(b, " ("...)
			}
			b = append(b, side...)
			b = append(b, ": "...)
			b = strconv.AppendInt(b, int64(c.frames[i]), 10)
			b = append(b, " frames, "...)
			b = strconv.AppendInt(b, c.bytes[i], 10)
			b = append(b, " bytes"...)
		}
		b = append(b, ')')
	}
	if c.hasTime {
		b = append(b, ", over "...)
		b = appendSeconds(b, c.ended.Sub(c.begun))
	}
	b = append(b, "; "...)
	b = strconv.AppendInt(b, int64(len(c.sessions)), 10)
	b = append(b, plural(len(c.sessions), " session", " sessions")...)
	out.line(-1, 0, string(b))
	for _, s := range c.sessions {
		b = append(b[:0], "session (channel "...)
		b = c.appendPair(b, s.chans)
		b = append(b, "): "...)
		b = strconv.AppendInt(b, int64(s.frames), 10)
		b = append(b, " frames, "...)
		b = strconv.AppendInt(b, s.bytes, 10)
		b = append(b, " bytes, "...)
		b = strconv.AppendInt(b, int64(s.deliveries), 10)
		b = append(b, plural(s.deliveries, " delivery", " deliveries")...)
		out.line(-1, 1, string(b))
		for _, l := range s.links {
			c.linkText(out, l)
		}
	}
	out.Flush()
}

// linkText prints the lines of a link in a summary.
func (c *Conn) linkText(out *Out, l *linkState) {
	b := append([]byte(nil), "link "...)
	b = strconv.AppendQuote(b, l.name)
	b = append(b, " (handle "...)
	b = c.appendPair(b, [2]int{int(l.handles[0]), int(l.handles[1])})
	b = append(b, "): "...)
	if l.sender >= 0 {
		b = append(b, c.Sides[l.sender]...)
		b = append(b, " sends"...)
	} else {
		b = append(b, "sender not known"...)
	}
	b = append(b, "; snd-settle-mode "...)
	b = append(b, modeName(l.hasSnd, l.snd.String())...)
	b = append(b, ", rcv-settle-mode "...)
	b = append(b, modeName(l.hasRcv, l.rcv.String())...)
	out.line(-1, 2, string(b))

	b = strconv.AppendInt(b[:0], int64(l.deliveries), 10)
	b = append(b, plural(l.deliveries, " delivery", " deliveries")...)
	b = append(b, " in "...)
	b = strconv.AppendInt(b, int64(l.transfers), 10)
	b = append(b, plural(l.transfers, " transfer, ", " transfers, ")...)
	b = strconv.AppendInt(b, l.bytes, 10)
	b = append(b, " bytes of payload; "...)
	b = strconv.AppendInt(b, int64(l.presettled), 10)
	b = append(b, " settled by the sender, "...)
	b = strconv.AppendInt(b, int64(l.aborted), 10)
	b = append(b, " aborted, "...)
	b = strconv.AppendInt(b, int64(l.unsettled()), 10)
	b = append(b, " unsettled at the end"...)
	out.line(-1, 3, string(b))

	b = append(b[:0], "outcomes:"...)
	none := true
	for st, n := range l.outcomes {
		if n > 0 {
			b = append(b, ' ')
			b = append(b, frame.StateType(st).String()...)
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(n), 10)
			none = false
		}
	}
	if none {
		b = append(b, " none"...)
	}
	b = append(b, "; credit stalls: "...)
	b = strconv.AppendInt(b, int64(l.stalls), 10)
	if l.stalls > 0 && c.hasTime {
		b = append(b, " ("...)
		b = appendSeconds(b, l.stalledFor)
		b = append(b, " waiting)"...)
	}
	out.line(-1, 3, string(b))
	if l.t2dN > 0 {
		b = append(b[:0], "transfer to disposition: median "...)
		b = appendSeconds(b, l.median())
		b = append(b, ", max "...)
		b = appendSeconds(b, l.t2dMax)
		b = append(b, " ("...)
		b = strconv.AppendInt(b, int64(l.t2dN), 10)
		b = append(b, plural(l.t2dN, " delivery)", " deliveries)")...)
		out.line(-1, 3, string(b))
	}
}

// unsettled counts the deliveries of l still waiting for settlement.
func (l *linkState) unsettled() int {
	if l.sender < 0 {
		return 0
	}
	n := 0
	for _, d := range l.sess.unsettled[l.sender] {
		if d.l == l {
			n++
		}
	}
	return n
}

// appendPair appends "0 from the client, 1 from the server", leaving out
// a side that is -1.
func (c *Conn) appendPair(b []byte, v [2]int) []byte {
	first := true
	for i, n := range v {
		if n < 0 {
			continue
		}
		if !first {
			b = append(b, ", "...)
		}
		first = false
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, " from the "...)
		b = append(b, c.Sides[i]...)
	}
	if first {
		b = append(b, "none"...)
	}
	return b
}

func modeName(has bool, name string) string {
	if !has {
		return "not known"
	}
	return name
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// appendSeconds appends d in seconds with microseconds: "0.001500s".
func appendSeconds(b []byte, d time.Duration) []byte {
	b = strconv.AppendFloat(b, d.Seconds(), 'f', 6, 64)
	return append(b, 's')
}

// appendJSONSeconds appends d in seconds, as a JSON number with
// nanoseconds.
func appendJSONSeconds(b []byte, d time.Duration) []byte {
	return strconv.AppendFloat(b, d.Seconds(), 'f', -1, 64)
}

// summaryJSON writes the summary as one JSON object.
func (c *Conn) summaryJSON(o *Out, tag string) {
	o.beginRecord(0)
	b := o.buf
	b = append(b, '{')
	b = append(b, tag...)
	b = append(b, `"summary":{"frames":`...)
	b = appendIntPair(b, [2]int64{int64(c.frames[0]), int64(c.frames[1])}, false)
	b = append(b, `,"bytes":`...)
	b = appendIntPair(b, c.bytes, false)
	if c.hasTime {
		b = append(b, `,"seconds":`...)
		b = appendJSONSeconds(b, c.ended.Sub(c.begun))
	}
	b = append(b, `,"sessions":[`...)
	for i, s := range c.sessions {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"channels":`...)
		b = appendIntPair(b, [2]int64{int64(s.chans[0]), int64(s.chans[1])}, true)
		b = append(b, `,"frames":`...)
		b = strconv.AppendInt(b, int64(s.frames), 10)
		b = append(b, `,"bytes":`...)
		b = strconv.AppendInt(b, s.bytes, 10)
		b = append(b, `,"deliveries":`...)
		b = strconv.AppendInt(b, int64(s.deliveries), 10)
		b = append(b, `,"links":[`...)
		for j, l := range s.links {
			if j > 0 {
				b = append(b, ',')
			}
			b = c.linkJSON(b, l)
		}
		b = append(b, "]}"...)
	}
	b = append(b, "]}}"...)
	o.buf = b
	o.endRecord()
}

// linkJSON appends a link's object of a summary.
func (c *Conn) linkJSON(b []byte, l *linkState) []byte {
	b = append(b, `{"name":`...)
	b = appendJSONString(b, []byte(l.name))
	b = append(b, `,"handles":`...)
	b = appendIntPair(b, l.handles, true)
	b = append(b, `,"sender":`...)
	if l.sender >= 0 {
		b = appendJSONString(b, []byte(c.Sides[l.sender]))
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"snd-settle-mode":`...)
	b = appendMode(b, l.hasSnd, l.snd.String())
	b = append(b, `,"rcv-settle-mode":`...)
	b = appendMode(b, l.hasRcv, l.rcv.String())
	for _, m := range []struct {
		k string
		v int
	}{{"frames", l.frames}, {"transfers", l.transfers}, {"deliveries", l.deliveries},
		{"settled-by-sender", l.presettled}, {"aborted", l.aborted}, {"unsettled", l.unsettled()}} {
		b = append(b, ",\""...)
		b = append(b, m.k...)
		b = append(b, "\":"...)
		b = strconv.AppendInt(b, int64(m.v), 10)
	}
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, l.bytes, 10)
	b = append(b, `,"outcomes":{`...)
	first := true
	for st, n := range l.outcomes {
		if n > 0 {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendJSONString(b, []byte(frame.StateType(st).String()))
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(n), 10)
		}
	}
	b = append(b, `},"credit-stalls":`...)
	b = strconv.AppendInt(b, int64(l.stalls), 10)
	if c.hasTime {
		b = append(b, `,"stalled-seconds":`...)
		b = appendJSONSeconds(b, l.stalledFor)
	}
	if l.t2dN > 0 {
		b = append(b, `,"transfer-to-disposition":{"count":`...)
		b = strconv.AppendInt(b, int64(l.t2dN), 10)
		b = append(b, `,"median":`...)
		b = appendJSONSeconds(b, l.median())
		b = append(b, `,"max":`...)
		b = appendJSONSeconds(b, l.t2dMax)
		b = append(b, '}')
	}
	return append(b, '}')
}

func appendMode(b []byte, has bool, name string) []byte {
	if !has {
		return append(b, "null"...)
	}
	return appendJSONString(b, []byte(name))
}

// appendIntPair appends [a,b], a negative number as null when nulls.
func appendIntPair(b []byte, v [2]int64, nulls bool) []byte {
	b = append(b, '[')
	for i, n := range v {
		if i > 0 {
			b = append(b, ',')
		}
		if nulls && n < 0 {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendInt(b, n, 10)
		}
	}
	return append(b, ']')
}
