// Command amqpdump prints AMQP 1.0 encoded bytes as an indented tree: one
// value per line with its type name (AMQP 1.0 part 1 §1.6), its value, its
// encoding where that says more than the type ("<smalluint>",
// "<str8-utf8>"), the symbolic name of every descriptor the spec defines
// ("amqp:properties:list"), the names of the fields of the spec's
// described lists ("durable: boolean true"), and the names of enumerated
// values ("role: boolean false (sender) <false>").
//
// Usage:
//
//	amqpdump [-x] [-o] [-frames | -pcap [-port N] [-time abs,rel]] [-json [-plain]] [-limit N]
//	         [-only names] [-channel N] [-handle N] [-link name] [-delivery N] [-summary]
//	         [-show-secrets] [file]
//
// The input is the file named, or standard input when there is none or it
// is "-". It is read as it comes (a pipe, a capture being written): memory
// holds the deliveries in flight, the frame being read and the TCP
// segments waiting for a hole to fill, never the whole input. By default
// it holds encoded values one after another (a message is its sections
// one after another), printed in order.
//
//	-x       the input is hex text: ASCII white space between digits is
//	         ignored, and so is text from "#" to the end of a line
//	-o       begin every line with the byte offset of its value in the input
//	-frames  the input is one direction of an AMQP connection (part 2 §2.2,
//	         §2.3): protocol headers and frames
//	-pcap    the input is a packet capture (pcap or pcapng, as tcpdump and
//	         Wireshark write it, or amqpspy -record): every TCP connection
//	         to or from -port is reassembled and both its directions
//	         printed as with -frames, interleaved in capture order
//	-port N  the AMQP port of -pcap (default 5672)
//	-time    with -pcap, begin each frame's line with the time of the
//	         packet that completed it: abs (UTC, microseconds), rel (the
//	         seconds since the frame printed before it on the connection),
//	         or abs,rel
//	-json    print one JSON object per value (or per frame) instead of
//	         text, each value with its AMQP type (see JSON below)
//	-plain   with -json, values as plain JSON, without their types
//	-limit N stop after printing N bytes (default 256 MiB; 0: no limit)
//	-max-message N  the largest message joined from transfers (default
//	         256 MiB): a larger delivery is reported and dropped
//	-show-secrets  print the secret of a SASL exchange as it is: the
//	         initial-response of a sasl-init (for PLAIN, the password) and
//	         the response of a sasl-response are otherwise printed with
//	         each byte replaced by '*' (0x2a), in every output
//
// Filters, with -frames and -pcap, choose the frames printed; every frame
// is still read, so that links are known by the names their attach gave
// them and deliveries are joined whole. A frame is printed when it passes
// every filter given:
//
//	-only names   these performatives, by name, comma-separated
//	              (transfer,disposition), and "header" (protocol headers)
//	              and "heartbeat" (empty frames)
//	-channel N    the frames on channel N
//	-handle N     the attach, flow, transfer and detach frames of the
//	              links with handle N, and the dispositions of their
//	              deliveries
//	-link name    the same, for the links attached with that name
//	-delivery N   the transfers of delivery N and the dispositions whose
//	              range holds it
//	-summary      instead of the frames, a summary of each connection,
//	              session and link (below)
//
// # Output
//
// One line per value, indented two spaces per level of nesting:
//
//	described amqp:header:list (ulong 0x70 <smallulong>)
//	  list[2] <list8>
//	    durable: boolean true <true>
//	    priority: ubyte 9
//
// A described value's line names its descriptor and shows it in
// parentheses; its value follows one level deeper. A list shows its count,
// a map its number of pairs, printed one pair a line ("key => value") when
// the key is a primitive, and an array its count, encoding and element
// type ("array[1] <array8> of symbol <sym8>"); its elements share that
// encoding, which is not repeated on their lines. Strings and symbols are
// quoted, cut after 64 bytes with their length given; a binary shows its
// length and up to 32 bytes in hex; a timestamp is also shown as a UTC time.
//
// With -frames, amqpdump prints each protocol header ("AMQP" 0 1 0 0, or
// "AMQP" 3 1 0 0 for SASL), and each frame's header fields (size, data
// offset, type, channel) and its performative by name (open, begin,
// attach, …, sasl-outcome) with its fields:
//
//	frame 3 at 112: size 23, doff 2, type 0 (AMQP), channel 0: begin
//	  described amqp:begin:list (ulong 0x11 <smallulong>)
//	    list[4] <list8>
//	      remote-channel: null
//
// The payloads of transfer frames are gathered per link (channel and
// handle) while the transfer's "more" field is true, and the whole
// delivery's message sections are printed under the transfer that
// completes it; an aborted delivery is dropped, and deliveries left
// unfinished at the end of the input are listed.
//
// With -pcap, every line of a connection's direction begins with the
// connection's number and ">" (client to server) or "<" (server to
// client): "c1 > frame 2 at 48: …". A line "c1: client A, server B" opens
// each connection. With -time abs,rel a frame's line reads
//
//	c1 > 2023-11-14T22:13:22.523240Z +2.508745 frame 8 at 513: …
//
// # Summary
//
// -summary prints, when a connection ends, its frames and bytes (per
// direction) and how long it lasted, then each session (its channel in
// each direction: sessions are paired by begin's remote-channel) with its
// frames, bytes and deliveries, then each link (paired by name) with its
// handles, which side sends, the settle modes of its attaches, its
// deliveries, transfers and payload bytes, how many the sender settled
// itself and how many were aborted or are left unsettled, the outcomes
// (accepted, rejected, released, modified, received) the receiver's
// dispositions (or the sender's transfers) gave, its credit stalls (how
// often the receiver had to grant credit after the sender had used it
// all, and for how long the sender waited), and the time from each
// delivery's last transfer to the first disposition that settles it or
// gives its outcome: median and maximum (times need -pcap; the median is
// of the last 65,536). A session follows at most 4096 unsettled
// deliveries per direction; those beyond are counted but not timed.
//
// # JSON
//
// One object a line: a protocol header ({"offset","header","protocol",
// "id","version"}), a frame ({"frame","offset","size","doff","type",
// "channel","performative","fields"}; "heartbeat" for an empty frame;
// "payload" and "delivery" for a transfer, and "message" for the
// transfer that completes a delivery), a fault ({"offset","error"}), a
// delivery left incomplete ({"incomplete":{…}}) or a summary
// ({"summary":{"frames","bytes","seconds","sessions":[{"channels",
// "frames","bytes","deliveries","links":[{"name","handles","sender",
// "snd-settle-mode","rcv-settle-mode","frames","transfers","deliveries",
// "settled-by-sender","aborted","unsettled","bytes","outcomes",
// "credit-stalls","stalled-seconds","transfer-to-disposition":{"count",
// "median","max"}}]}]}}; pairs are [client, server]). Without -frames,
// each value is {"offset":N,"value":V}. With -pcap, each object also has
// "conn" and "from" ("client" or "server"), and a frame's object "time"
// (RFC 3339, UTC) and "delta" (seconds since the frame printed before it
// on the connection; absent on the first). A message is {"bytes",
// "frames":[first,last],"sections":[{"offset","section","value"}]}.
//
// A value V keeps its AMQP type:
//
//	{"type":"uint","value":7}                    any primitive
//	{"type":"symbol","value":"queue"}            strings and symbols as JSON strings
//	{"type":"ubyte","value":2,"name":"mixed"}    a field of an enumerated type: its name
//	{"type":"list","value":[V,…]}
//	{"type":"map","value":[[K,V],…]}             keys of any type, typed
//	{"type":"array","of":"int","value":[1,2]}    elements bare: their type is "of"'s
//	{"type":"array","of":"list","value":[[V,…]]} (a list's or map's own values typed;
//	                                             an array in an array keeps its type)
//	{"type":"array","of":"described","descriptor":D,"value-type":"list","value":[…]}
//	{"type":"described","descriptor":D,"value":V}
//	{"type":"described","descriptor":"amqp:source:list","fields":{"address":V,…}}
//
// D is the name of a descriptor the spec defines ("amqp:source:list"),
// else the descriptor as a V. A described list whose fields the spec
// names, and a performative's or section's "fields", are objects of
// their fields by name (fields past the named ones by index). Values:
// null, booleans and numbers as themselves (floats: NaN and infinities as
// strings), timestamps as milliseconds since the epoch, uuids and chars as
// strings, binaries as hex, decimals as "0x" and hex, strings and symbols
// with bytes that are not UTF-8 as U+FFFD. -plain drops the types: every
// value is its JSON value, lists and arrays arrays, maps objects (a key
// that is not a string or symbol is its JSON text, a compound key its
// encoding in hex), described lists of named fields objects with
// "descriptor", other described values {"descriptor","value"}, and
// enumerated fields their names.
//
// # Bad input
//
// Without -frames, amqpdump prints everything it decoded before the first
// fault, then the cause and the byte offset of the fault on standard
// error, and exits with status 1: the fault, its offset and its cause are
// the ones package dispatch reports. Input that starts with an AMQP
// protocol header, or with the magic number of a capture, is refused with
// a hint to use -frames or -pcap.
//
// With -frames and -pcap, a fault in a frame or a message is reported on
// standard error (in the JSON output too, with -json) and amqpdump goes
// on with the next frame: a frame whose header cannot be right is skipped
// by its size when that is at least 8 (otherwise the rest of the stream
// cannot be split into frames). Performatives are also checked field by
// field (types, mandatory fields, choices), and messages for the order of
// their sections. amqpdump exits with status 1 when it reported any fault.
//
// # Limits
//
// A small input cannot print a large output: of a run of identical values
// in a list or array (an array of zero-width elements claims up to
// hundreds of thousands of them in a few bytes) the first two are printed
// and the rest summed up in one line ("… 253 more null"); lines deeper than
// 32 levels are indented as at 32 and say their depth; strings and
// binaries are cut. So the output is at most a constant times the input,
// and -limit caps it (by default at 256 MiB) with a message saying where
// it stopped. amqpdump exits with status 2 on bad usage.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/amqpsax/amqpsax/cmd/internal/capture"
	"github.com/amqpsax/amqpsax/cmd/internal/dump"
	"github.com/amqpsax/amqpsax/frame"
)

// defaultLimit is the default of -limit.
const defaultLimit = 256 << 20

func main() {
	// The garbage collector keeps the heap near this (a soft limit: a
	// larger delivery in flight still fits). amqpdump's live heap is a few
	// MiB whatever the input's size; without it, the heap's peak drifts up
	// with the number of collections a long input takes.
	debug.SetMemoryLimit(softMemoryLimit)
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// softMemoryLimit is the heap amqpdump asks the garbage collector to
// keep to.
const softMemoryLimit = 24 << 20

// run is amqpdump with its arguments (without the program name) and
// standard streams; it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("amqpdump", flag.ContinueOnError)
	fs.SetOutput(stderr)
	hexIn := fs.Bool("x", false, "the input is hex text; white space and # comments are ignored")
	offsets := fs.Bool("o", false, "begin every line with the byte offset of its value")
	frames := fs.Bool("frames", false, "the input is an AMQP connection byte stream: protocol headers and frames")
	pcap := fs.Bool("pcap", false, "the input is a pcap or pcapng capture: print the AMQP connections on -port")
	port := fs.Uint("port", 5672, "the AMQP port of -pcap")
	jsonOut := fs.Bool("json", false, "print one JSON object per value or frame, values with their AMQP types")
	plain := fs.Bool("plain", false, "with -json: values as plain JSON, without their AMQP types")
	limit := fs.Int64("limit", defaultLimit, "stop after printing this many bytes (0: no limit)")
	timeMode := fs.String("time", "", "with -pcap, begin each frame's line with its time: abs, rel or abs,rel")
	summary := fs.Bool("summary", false, "with -frames or -pcap, print a summary per connection, session and link instead of the frames")
	maxMessage := fs.Int("max-message", defaultMaxMessage, "the largest message joined from transfers")
	showSecrets := fs.Bool("show-secrets", false, "print SASL responses (a PLAIN password) as they are, not masked")
	filter, filterSet := dump.FilterFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: amqpdump [-x] [-o] [-frames | -pcap [-port N] [-time abs,rel]] [-json [-plain]] [-limit N]\n"+
			"                [-only names] [-channel N] [-handle N] [-link name] [-delivery N] [-summary] [-show-secrets] [file]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	tm, terr := dump.ParseTime(*timeMode)
	streams := *frames || *pcap
	if fs.NArg() > 1 || *frames && *pcap || *port > 65535 || *limit < 0 || *maxMessage <= 0 || terr != nil ||
		tm != 0 && !*pcap || *plain && !*jsonOut || (*filterSet || *summary) && !streams {
		if terr != nil {
			fmt.Fprintln(stderr, "amqpdump:", terr)
		}
		fs.Usage()
		return 2
	}

	in, size, closeIn, err := openInput(fs.Arg(0), stdin)
	if err != nil {
		report(stderr, err)
		return 1
	}
	defer closeIn()
	var r io.Reader = in
	if *hexIn {
		r, size = newHexReader(in), size/2
	}
	br := bufio.NewReaderSize(r, 64<<10)
	if !streams {
		head, _ := br.Peek(8)
		if err := refuse(head); err != nil {
			report(stderr, err)
			return 1
		}
	}

	out := dump.NewOut(stdout)
	out.Limit, out.Offsets, out.Width = *limit, *offsets, len(strconv.FormatInt(max(size, 1), 10))
	faults := 0
	opts := dump.Options{JSON: *jsonOut, Plain: *plain, MaxMessageSize: *maxMessage, Time: tm, ShowSecrets: *showSecrets, OnFault: func(err error) {
		// Faults go to standard error as they are met, after the output
		// that precedes them.
		faults++
		out.Flush()
		report(stderr, err)
	}}
	if *filterSet {
		opts.Filter = filter
	}
	if *summary {
		opts.Filter = &dump.Filter{Only: []string{}} // nothing: the summary only
	}
	switch {
	case *pcap:
		h := &captured{out: out, opts: opts, summary: *summary, streams: map[int]*[2]*dump.Stream{}}
		err = capture.Read(br, uint16(*port), h)
	case *frames:
		s := dump.NewStream(out, opts)
		s.Conn().Sides = [2]string{"stream", "other side"}
		err = feed(s, br)
		if err == nil {
			s.Close()
			if *summary {
				s.Conn().Summary(out, *jsonOut, "", "")
			}
		}
	default:
		err = dump.NewValues(out, opts).PrintFrom(br)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		report(stderr, err)
		return 1
	}
	if faults > 0 {
		return 1
	}
	return 0
}

// defaultMaxMessage is the default of -max-message.
const defaultMaxMessage = 256 << 20

// feed writes what r holds to s as it is read.
func feed(s *dump.Stream, r io.Reader) error {
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		s.Write(buf[:n])
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// openInput opens the file named, or returns r when name is "" or "-";
// size is the file's size, or 0 when it is not known.
func openInput(name string, r io.Reader) (in io.Reader, size int64, closeIn func(), err error) {
	if name == "" || name == "-" {
		if f, ok := r.(*os.File); ok {
			if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
				size = fi.Size()
			}
		}
		return r, size, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	return f, size, func() { f.Close() }, nil
}

// refuse returns an error for input that is plainly not encoded values:
// a connection byte stream or a capture. head is its first bytes.
func refuse(data []byte) error {
	if capture.IsCapture(data) {
		return errors.New("the input is a packet capture: read it with -pcap")
	}
	if len(data) >= 4 && string(data[:4]) == "AMQP" {
		what := "an AMQP protocol header"
		if f, err := frame.NewReader(bytes.NewReader(data)).Next(); err == nil && f.IsHeader {
			what = "a protocol header (" + f.Header.String() + ")"
		}
		return errors.New("the input starts with " + what + ": it is a connection byte stream, read it with -frames")
	}
	return nil
}

// report prints err on w as one line beginning "amqpdump: ".
func report(w io.Writer, err error) {
	msg := dump.OneLine(err) // a peer's text in it stays on the line
	if !strings.HasPrefix(msg, "amqpdump: ") {
		msg = "amqpdump: " + msg
	}
	fmt.Fprintln(w, msg)
}

// captured prints the connections of a capture: two Streams each.
type captured struct {
	out     *dump.Out
	opts    dump.Options
	summary bool
	streams map[int]*[2]*dump.Stream // [0] from the client, [1] from the server
}

func (c *captured) Open(conn int, client, server string) {
	id := strconv.Itoa(conn)
	var s [2]*dump.Stream
	cs := dump.NewConn()
	for i, dir := range [2]string{" > ", " < "} {
		o := c.opts
		o.Conn, o.Dir = cs, i
		o.Prefix = "c" + id + dir
		o.Tag = `"conn":` + id + `,"from":"` + [2]string{"client", "server"}[i] + `",`
		s[i] = dump.NewStream(c.out, o)
	}
	c.streams[conn] = &s
	if c.summary {
		return
	}
	if c.opts.JSON {
		c.out.Object(`"conn":` + id + `,"client":"` + client + `","server":"` + server + `"`)
	} else {
		c.out.Note("c" + id + ": client " + client + ", server " + server)
	}
}

func (c *captured) stream(conn int, fromClient bool) *dump.Stream {
	s := c.streams[conn]
	if fromClient {
		return s[0]
	}
	return s[1]
}

func (c *captured) Data(conn int, fromClient bool, b []byte, seen time.Time) {
	c.stream(conn, fromClient).WriteAt(b, seen)
}

func (c *captured) Gap(conn int, fromClient bool, n int) { c.stream(conn, fromClient).Lost(n) }

func (c *captured) Close(conn int) {
	s := c.streams[conn]
	s[0].Close()
	s[1].Close()
	if c.summary {
		id := strconv.Itoa(conn)
		s[0].Conn().Summary(c.out, c.opts.JSON, `"conn":`+id+",", "c"+id)
	}
	delete(c.streams, conn)
}
