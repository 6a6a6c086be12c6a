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
	"strconv"
	"strings"

	"github.com/amqpsax/amqpsax/cmd/internal/capture"
	"github.com/amqpsax/amqpsax/cmd/internal/dump"
	"github.com/amqpsax/amqpsax/frame"
)

// defaultLimit is the default of -limit.
const defaultLimit = 256 << 20

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

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
	jsonOut := fs.Bool("json", false, "print one JSON object per value or frame")
	limit := fs.Int64("limit", defaultLimit, "stop after printing this many bytes (0: no limit)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: amqpdump [-x] [-o] [-frames | -pcap [-port N]] [-json] [-limit N] [file]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 1 || *frames && *pcap || *port > 65535 || *limit < 0 {
		fs.Usage()
		return 2
	}

	data, err := readInput(fs.Arg(0), stdin)
	if err == nil && *hexIn {
		data, err = decodeHex(data)
	}
	if err == nil && !*frames && !*pcap {
		err = refuse(data)
	}
	if err != nil {
		report(stderr, err)
		return 1
	}

	out := dump.NewOut(stdout)
	out.Limit, out.Offsets, out.Width = *limit, *offsets, len(strconv.Itoa(len(data)))
	faults := 0
	opts := dump.Options{JSON: *jsonOut, MaxMessageSize: max(len(data), 1), OnFault: func(err error) {
		// Faults go to standard error as they are met, after the output
		// that precedes them.
		faults++
		out.Flush()
		report(stderr, err)
	}}
	switch {
	case *pcap:
		h := &captured{out: out, opts: opts, streams: map[int]*[2]*dump.Stream{}}
		err = capture.Read(bytes.NewReader(data), uint16(*port), h)
	case *frames:
		dump.NewStream(out, opts).WriteAll(data)
	default:
		err = dump.NewValues(out, opts).Print(data)
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

// readInput reads the file named, or r when name is "" or "-".
func readInput(name string, r io.Reader) ([]byte, error) {
	if name != "" && name != "-" {
		return os.ReadFile(name)
	}
	return io.ReadAll(bufio.NewReader(r))
}

// refuse returns an error for input that is plainly not encoded values:
// a connection byte stream or a capture.
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
	streams map[int]*[2]*dump.Stream // [0] from the client, [1] from the server
}

func (c *captured) Open(conn int, client, server string) {
	id := strconv.Itoa(conn)
	var s [2]*dump.Stream
	for i, dir := range [2]string{" > ", " < "} {
		o := c.opts
		o.Prefix = "c" + id + dir
		o.Tag = `"conn":` + id + `,"from":"` + [2]string{"client", "server"}[i] + `",`
		s[i] = dump.NewStream(c.out, o)
	}
	c.streams[conn] = &s
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

func (c *captured) Data(conn int, fromClient bool, b []byte) { c.stream(conn, fromClient).Write(b) }

func (c *captured) Gap(conn int, fromClient bool, n int) { c.stream(conn, fromClient).Lost(n) }

func (c *captured) Close(conn int) {
	s := c.streams[conn]
	s[0].Close()
	s[1].Close()
	delete(c.streams, conn)
}
