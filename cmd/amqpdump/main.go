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
//	amqpdump [-x] [-o] [-frames | -pcap [-port N]] [-json] [-limit N] [file]
//
// The input is the file named, or standard input when there is none or it
// is "-". By default it holds encoded values one after another (a message
// is its sections one after another), printed in order.
//
//	-x       the input is hex text: ASCII white space between digits is
//	         ignored, and so is text from "#" to the end of a line
//	-o       begin every line with the byte offset of its value in the input
//	-frames  the input is one direction of an AMQP connection (part 2 §2.2,
//	         §2.3): protocol headers and frames
//	-pcap    the input is a packet capture (pcap or pcapng, as tcpdump and
//	         Wireshark write it): every TCP connection to or from -port is
//	         reassembled and both its directions printed as with -frames,
//	         interleaved in capture order
//	-port N  the AMQP port of -pcap (default 5672)
//	-json    print one JSON object per value (or per frame) instead of text
//	-limit N stop after printing N bytes (default 256 MiB; 0: no limit)
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
// each connection.
//
// With -json, each protocol header, frame, fault and incomplete delivery
// is one JSON object on a line (without -frames, each value is
// {"offset":N,"value":…}); a transfer that completes a delivery carries
// its "message" with its sections. With -pcap, each object also has
// "conn" and "from" ("client" or "server"). The mapping of AMQP values to
// JSON is documented in package cmd/internal/dump.
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
	filter, filterSet := dump.FilterFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: amqpdump [-x] [-o] [-frames | -pcap [-port N] [-time abs,rel]] [-json [-plain]] [-limit N]\n"+
			"                [-only names] [-channel N] [-handle N] [-link name] [-delivery N] [-summary] [file]")
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
	opts := dump.Options{JSON: *jsonOut, Plain: *plain, MaxMessageSize: *maxMessage, Time: tm, OnFault: func(err error) {
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
	msg := err.Error()
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
