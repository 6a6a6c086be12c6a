// Command amqpspy is a transparent TCP proxy for AMQP 1.0 that prints
// every frame it forwards. It listens, connects each client that comes to
// a target address (a broker), forwards the bytes of both directions
// unchanged, and prints the protocol headers and frames of both
// directions as amqpdump -frames does, interleaved in the order they
// arrived, with each delivery's transfers joined and its message printed.
//
// Usage:
//
//	amqpspy [-listen addr] [-target addr] [-out file] [-record dir] [-json [-plain]] [-o] [-q] [-n N]
//	        [-buffer N] [-max-frame N] [-time abs,rel] [-only names] [-channel N] [-handle N]
//	        [-link name] [-delivery N] [-summary] [-show-secrets]
//
//	-listen addr  the address to listen on (default 127.0.0.1:5673); with
//	              port 0 the system picks one. amqpspy says on standard
//	              error where it listens: "amqpspy: listening on ADDR".
//	-target addr  the address to connect each client to (default
//	              127.0.0.1:5672)
//	-out file     print to file instead of standard output ("-")
//	-record dir   write each connection's two byte streams, as they were
//	              forwarded, to dir/conn-N-client.bin (what the client
//	              sent) and dir/conn-N-server.bin (what the server sent),
//	              N counting connections from 1: a corpus that amqpdump
//	              -frames reads back; and both, each chunk stamped with the
//	              time it was read, as a capture dir/conn-N.pcap (TCP
//	              headers made up around them, between the client's and the
//	              server's addresses) that amqpdump -pcap -time reads back,
//	              with -port the target's port. A recording that could not
//	              keep up (see -buffer) gets ".incomplete" added to its names.
//	              The secret of a SASL exchange is recorded masked, as it is
//	              printed (see -show-secrets): each of its bytes replaced
//	              by '*', so that every length stays and the recording
//	              still parses.
//	-json         print one JSON object per line (as amqpdump -json does,
//	              values with their AMQP types; -plain without)
//	-o            begin every line with the offset of its value in its
//	              direction's stream
//	-q            print only the lines about connections (with -record:
//	              record without decoding)
//	-n N          serve N connections, then exit once they have ended
//	              (0: serve until interrupted)
//	-buffer N     bytes each connection may hold for printing, and as much
//	              for recording (default 16 MiB)
//	-max-frame N  frames larger than N bytes are forwarded, and said to be
//	              too large, but not printed (default 64 MiB); a message
//	              joined from transfers may be up to 64 MiB
//	-time         begin each frame's line with the wall-clock time its last
//	              bytes were read: abs, rel (seconds since the frame printed
//	              before it on the connection) or abs,rel; JSON objects
//	              always carry "time" and "delta"
//	-only, -channel, -handle, -link, -delivery, -summary
//	              filters and summaries, as amqpdump's: the frames left out
//	              are still read; -summary prints each connection's
//	              sessions and links when it closes, instead of its frames
//	-show-secrets print and record the secret of a SASL exchange as it is:
//	              the initial-response of a sasl-init (for PLAIN, the
//	              password) and the response of a sasl-response are
//	              otherwise printed and recorded with each byte replaced
//	              by '*' (0x2a); what is forwarded is never changed
//
// # Output
//
// Every line of a connection's direction begins with the connection's
// number and ">" (from the client) or "<" (from the server):
//
//	c1: client 127.0.0.1:40312, server 127.0.0.1:5672
//	c1 > protocol header at 0: AMQP 3 1.0.0 (SASL)
//	c1 < protocol header at 0: AMQP 3 1.0.0 (SASL)
//	c1 < frame 1 at 8: size 28, doff 2, type 1 (SASL), channel 0: sasl-mechanisms
//	c1 <   described amqp:sasl-mechanisms:list (ulong 0x40 <smallulong>)
//	…
//	c1: closed: 2738 bytes from the client, 1041 from the server
//
// A fault in a frame or message is a line "c1 > error: …", and printing
// goes on with the next frame. With -json each object has "conn" and
// "from" ("client" or "server"); the lines about connections are objects
// with "conn" and "client" and "server" (opened) or "closed".
//
// # Forwarding comes first
//
// The bytes are forwarded as they are read, unchanged, whatever they
// hold: amqpspy never waits for its printer or recorder, and a fault in
// what it decodes does not stop the forwarding. Each chunk read is stamped
// with the time, forwarded, and then copied into a queue (one per
// connection for the printer, one for the recorder) without waiting: the
// queues hand the chunks of both directions back in the order they were
// read. The printer and the recorder do not wake for each chunk: they
// look every 2 ms while chunks come (backing off to 100 ms when none do).
// The printer waits for a pause in the traffic (2 ms without a chunk)
// before it prints what came, unless what waits is 100 ms old or fills
// half the queue, so that its work falls between bursts rather than in
// them (times are those the chunks were read at). It is paced: while chunks wait, it rests nine times as long as
// it worked on the last batch (of at most 256 KiB), so it takes at most a
// tenth of a core and the CPU goes to forwarding and to the programs on
// either side; a burst is printed in the quiet after it. (A lower thread
// priority would not do: a garbage collection waits for every thread,
// the starved one too.) Falling behind is buffered: a queue holds at most
// -buffer bytes, and what comes
// while it is full is forwarded but not printed, counted, and reported
// when the connection closes ("the printer fell behind: N bytes from the
// client and M from the server were forwarded but not printed"); a byte
// stream with a hole cannot be split into frames, so that direction is
// not printed any more. Recording works the same way, from its own queue.
// When a side closes its half of the connection, amqpspy closes the same
// half towards the other side.
//
// amqpspy exits on SIGINT or SIGTERM after closing the connections it is
// proxying and the files it is recording; it exits with status 2 on bad
// usage and 1 when it cannot listen.
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/amqpsax/amqpsax/cmd/internal/dump"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, nil))
}

// run is amqpspy with its arguments (without the program name), standard
// output and standard error; it returns the exit status. When listening
// is not nil, it receives the listener's address once amqpspy listens.
func run(args []string, stdout, stderr io.Writer, listening chan<- string) int {
	fs := flag.NewFlagSet("amqpspy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:5673", "the address to listen on")
	target := fs.String("target", "127.0.0.1:5672", "the address to connect each client to")
	outPath := fs.String("out", "-", `print to this file ("-": standard output)`)
	record := fs.String("record", "", "write each connection's two byte streams to files in this directory")
	jsonOut := fs.Bool("json", false, "print one JSON object per frame")
	offsets := fs.Bool("o", false, "begin every line with the offset of its value in its stream")
	quiet := fs.Bool("q", false, "print only the lines about connections")
	maxConns := fs.Int("n", 0, "serve this many connections, then exit (0: until interrupted)")
	buffer := fs.Int("buffer", 16<<20, "bytes a connection may hold for printing, and for recording")
	maxFrame := fs.Uint("max-frame", defaultMaxFrame, "frames larger than this are not printed")
	plain := fs.Bool("plain", false, "with -json: values as plain JSON, without their AMQP types")
	timeMode := fs.String("time", "", "begin each frame's line with the time it arrived: abs, rel or abs,rel")
	summary := fs.Bool("summary", false, "print a summary per connection, session and link when a connection closes, instead of the frames")
	showSecrets := fs.Bool("show-secrets", false, "print and record SASL responses (a PLAIN password) as they are, not masked")
	filter, filterSet := dump.FilterFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: amqpspy [-listen addr] [-target addr] [-out file] [-record dir] [-json [-plain]] [-o] [-q] [-n N] [-buffer N] [-max-frame N]\n"+
			"               [-time abs,rel] [-only names] [-channel N] [-handle N] [-link name] [-delivery N] [-summary] [-show-secrets]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	tm, terr := dump.ParseTime(*timeMode)
	if fs.NArg() > 0 || *buffer <= 0 || *maxConns < 0 || *maxFrame < 8 || *maxFrame > math.MaxUint32 || terr != nil || *plain && !*jsonOut {
		if terr != nil {
			fmt.Fprintln(stderr, "amqpspy:", terr)
		}
		fs.Usage()
		return 2
	}
	if *record != "" {
		if fi, err := os.Stat(*record); err != nil || !fi.IsDir() {
			fmt.Fprintf(stderr, "amqpspy: -record %s: not a directory\n", *record)
			return 2
		}
	}

	var out io.Writer = stdout
	if *outPath != "-" {
		f, err := os.Create(*outPath)
		if err != nil {
			fmt.Fprintln(stderr, "amqpspy:", err)
			return 1
		}
		defer f.Close()
		out = f
	}
	s := &spy{target: *target, out: &lockedWriter{w: out}, quiet: *quiet, json: *jsonOut, offsets: *offsets,
		record: *record, buffer: *buffer, maxFrame: uint32(*maxFrame), plain: *plain, time: tm, summary: *summary, showSecrets: *showSecrets}
	if *filterSet {
		s.filter = filter
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(stderr, "amqpspy:", err)
		return 1
	}
	fmt.Fprintf(stderr, "amqpspy: listening on %s, forwarding to %s\n", ln.Addr(), *target)
	if listening != nil {
		listening <- ln.Addr().String()
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-sig:
			ln.Close()
			s.closeAll()
		case <-stop:
		}
	}()

	err = s.serve(ln, *maxConns)
	ln.Close()
	if err != nil {
		fmt.Fprintln(stderr, "amqpspy:", err)
		return 1
	}
	return 0
}
