// Command amqpdump prints AMQP 1.0 encoded bytes as an indented tree: one
// value per line with its type name (AMQP 1.0 part 1 §1.6), its value, its
// encoding where that says more than the type ("<smalluint>",
// "<str8-utf8>"), the symbolic name of every descriptor the spec defines
// ("amqp:properties:list"), and the names of the fields of the spec's
// described lists ("durable: boolean true").
//
// Usage:
//
//	amqpdump [-x] [-o] [-frames] [file]
//
// The input is the file named, or standard input when there is none or it
// is "-". It holds encoded values one after another (a message is its
// sections one after another), printed in order.
//
//	-x       the input is hex text: ASCII white space between digits is
//	         ignored, and so is text from "#" to the end of a line
//	-o       begin every line with the byte offset of its value in the input
//	-frames  the input is an AMQP connection byte stream (part 2 §2.2, §2.3):
//	         protocol headers and frames
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
// On bad input amqpdump prints everything it decoded before the fault,
// then the cause and the byte offset of the fault on standard error, and
// exits with status 1. It exits with status 2 on bad usage.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

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
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: amqpdump [-x] [-o] [-frames] [file]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return 2
	}

	data, err := readInput(fs.Arg(0), stdin)
	if err == nil && *hexIn {
		data, err = decodeHex(data)
	}
	if err != nil {
		report(stderr, err)
		return 1
	}

	out := bufio.NewWriter(stdout)
	p := newPrinter(out, *offsets, len(data)).at(data, nil)
	if *frames {
		err = dumpFrames(p)
	} else {
		err = p.all(0, len(data), 0)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		report(stderr, err)
		return 1
	}
	return 0
}

// readInput reads the file named, or r when name is "" or "-".
func readInput(name string, r io.Reader) ([]byte, error) {
	if name != "" && name != "-" {
		return os.ReadFile(name)
	}
	return io.ReadAll(r)
}

// report prints err on w as one line beginning "amqpdump: ".
func report(w io.Writer, err error) {
	msg := err.Error()
	if !strings.HasPrefix(msg, "amqpdump: ") {
		msg = "amqpdump: " + msg
	}
	fmt.Fprintln(w, msg)
}

// errOddHex reports hex input with an odd number of digits.
var errOddHex = errors.New("hex input: odd number of hex digits")

// decodeHex decodes hex text, ignoring ASCII white space between digits
// and comments from "#" to the end of a line.
func decodeHex(text []byte) ([]byte, error) {
	out := make([]byte, 0, len(text)/2)
	line, col := 1, 0
	var hi byte
	half, comment := false, false
	for _, c := range text {
		col++
		var v byte
		switch {
		case c == '\n':
			line, col, comment = line+1, 0, false
			continue
		case comment:
			continue
		case c == '#':
			comment = true
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			continue
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return nil, fmt.Errorf("hex input: invalid character %q at line %d, column %d", c, line, col)
		}
		if half {
			out = append(out, hi<<4|v)
		} else {
			hi = v
		}
		half = !half
	}
	if half {
		return nil, errOddHex
	}
	return out, nil
}
