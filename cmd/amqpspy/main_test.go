package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/Azure/go-amqp"
	"github.com/amqpsax/amqpsax"
	"github.com/amqpsax/amqpsax/cmd/internal/capture"
	"github.com/amqpsax/amqpsax/cmd/internal/dump"
	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recConn is a net.Conn that keeps a copy of what it reads and writes.
type recConn struct {
	net.Conn
	mu          sync.Mutex
	read, wrote bytes.Buffer
}

func (c *recConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.read.Write(p[:n])
	c.mu.Unlock()
	return n, err
}

func (c *recConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.mu.Lock()
	c.wrote.Write(p[:n])
	c.mu.Unlock()
	return n, err
}

// Close closes only the write side, as go-amqp's Close would close the
// whole connection before the peer's last frames arrive: drain reads them.
func (c *recConn) Close() error { return c.Conn.(*net.TCPConn).CloseWrite() }

// drain reads what is left until the peer closes, then closes.
func (c *recConn) drain() error {
	_, err := io.Copy(io.Discard, readerOnly{c})
	c.Conn.Close()
	return err
}

type readerOnly struct{ io.Reader }

func (c *recConn) bytes() (read, wrote []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.read.Bytes()), bytes.Clone(c.wrote.Bytes())
}

// brokerMessage is the message the fake broker sends to a receiver: 1,500
// bytes of data, more than one of its 512-byte frames holds.
var brokerMessage = bytes.Repeat([]byte("from the broker "), 1500/16)

// fakeBroker serves one AMQP connection on c with package frame: SASL
// ANONYMOUS, open with a max-frame-size of 512, begin, attach; a sending
// link gets credit and a disposition for each delivery, a receiving link
// brokerMessage once it gives credit; detach, end and close are answered.
// It ends when the client has closed the connection.
func fakeBroker(c net.Conn) error {
	r := frame.NewReader(c)
	send := func(b []byte) error { _, err := c.Write(b); return err }
	next := func() (frame.Frame, error) {
		for {
			f, err := r.Next()
			if err != nil || !f.IsHeartbeat() {
				return f, err
			}
		}
	}
	f, err := next()
	if err != nil || !f.IsHeader || f.Header != frame.HeaderSASL {
		return fmt.Errorf("want a SASL header: %v %v", f.Header, err)
	}
	b := frame.AppendProtocolHeader(nil, frame.HeaderSASL)
	b = frame.AppendFrame(b, frame.Frame{Type: frame.TypeSASL,
		Body: frame.AppendSASLMechanisms(nil, frame.SASLMechanisms{Mechanisms: frame.Symbols(frame.AppendSymbols(nil, "ANONYMOUS"))})})
	if err := send(b); err != nil {
		return err
	}
	if f, err = next(); err != nil {
		return err
	}
	if _, err := frame.ParseSASLInit(f.Body); err != nil {
		return err
	}
	if err := send(frame.AppendFrame(nil, frame.Frame{Type: frame.TypeSASL, Body: frame.AppendSASLOutcome(nil, frame.SASLOutcome{Code: frame.SASLOk})})); err != nil {
		return err
	}
	if f, err = next(); err != nil || !f.IsHeader || f.Header != frame.HeaderAMQP {
		return fmt.Errorf("want an AMQP header: %v %v", f.Header, err)
	}
	if err := send(frame.AppendProtocolHeader(nil, frame.HeaderAMQP)); err != nil {
		return err
	}
	if f, err = next(); err != nil {
		return err
	}
	if _, err := frame.ParseOpen(f.Body); err != nil {
		return err
	}
	if err := send(frame.AppendFrame(nil, frame.Frame{Body: frame.AppendOpen(nil, frame.Open{ContainerID: []byte("fake-broker"), MaxFrameSize: frame.Some[uint32](512)})})); err != nil {
		return err
	}

	var received uint32 // deliveries received: the next incoming id
	var outgoing uint32 // deliveries sent: the next outgoing id
	sent := map[uint32]bool{}
	perf := func(channel uint16, body []byte) error {
		return send(frame.AppendFrame(nil, frame.Frame{Channel: channel, Body: body}))
	}
	for {
		f, err := next()
		if err != nil {
			return err
		}
		d, err := frame.Performative(f.Body)
		if err != nil {
			return err
		}
		switch d {
		case amqpsax.DescriptorBegin:
			bg := frame.Begin{RemoteChannel: frame.Some(f.Channel), IncomingWindow: 1000, OutgoingWindow: 1000}
			err = perf(f.Channel, frame.AppendBegin(nil, bg))
		case amqpsax.DescriptorAttach:
			a, perr := frame.ParseAttach(f.Body)
			if perr != nil {
				return perr
			}
			reply := frame.Attach{Name: a.Name, Handle: a.Handle, Role: !a.Role, Source: a.Source, Target: a.Target,
				SndSettleMode: a.SndSettleMode, RcvSettleMode: a.RcvSettleMode}
			if a.Role == frame.RoleReceiver {
				reply.InitialDeliveryCount = frame.Some[uint32](0)
			}
			if err = perf(f.Channel, frame.AppendAttach(nil, reply)); err == nil && a.Role == frame.RoleSender {
				fl := frame.Flow{NextIncomingID: frame.Some(received), IncomingWindow: 1000, NextOutgoingID: outgoing,
					OutgoingWindow: 1000, Handle: frame.Some(a.Handle), DeliveryCount: frame.Some[uint32](0),
					LinkCredit: frame.Some[uint32](10)}
				err = perf(f.Channel, frame.AppendFlow(nil, fl))
			}
		case amqpsax.DescriptorFlow:
			fl, perr := frame.ParseFlow(f.Body)
			if perr != nil {
				return perr
			}
			if h, ok := fl.Handle.Get(); ok && fl.LinkCredit.Or(0) > 0 && !sent[h] {
				sent[h] = true
				err = sendMessage(send, f.Channel, h, outgoing)
				outgoing++
			}
		case amqpsax.DescriptorTransfer:
			t, _, perr := frame.ParseTransfer(f.Body)
			if perr != nil {
				return perr
			}
			if !t.More {
				received++
				if !t.Settled {
					id, _ := t.DeliveryID.Get()
					ds := frame.Disposition{Role: frame.RoleReceiver, First: id, Settled: true,
						State: frame.DeliveryState{Type: frame.StateAccepted}}
					err = perf(f.Channel, frame.AppendDisposition(nil, ds))
				}
			}
		case amqpsax.DescriptorDetach:
			dt, perr := frame.ParseDetach(f.Body)
			if perr != nil {
				return perr
			}
			err = perf(f.Channel, frame.AppendDetach(nil, frame.Detach{Handle: dt.Handle, Closed: true}))
		case amqpsax.DescriptorEnd:
			err = perf(f.Channel, frame.AppendEnd(nil, frame.End{}))
		case amqpsax.DescriptorClose:
			if err := perf(0, frame.AppendClose(nil, frame.Close{})); err != nil {
				return err
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// sendMessage sends brokerMessage on channel and handle as delivery id,
// in as many transfers as frames of 512 bytes need.
func sendMessage(send func([]byte) error, channel uint16, handle, id uint32) error {
	msg := encode.AppendDescribed(nil)
	msg = encode.AppendUlong(msg, uint64(amqpsax.DescriptorData))
	msg = encode.AppendBinary(msg, brokerMessage)
	for first := true; len(msg) > 0; first = false {
		t := frame.Transfer{Handle: handle}
		if first {
			t.DeliveryID, t.DeliveryTag, t.MessageFormat = frame.Some(id), []byte("tag"), frame.Some[uint32](0)
		}
		room := 512 - 8 - len(frame.AppendTransfer(nil, frame.Transfer{Handle: handle, DeliveryID: frame.Some(id), DeliveryTag: []byte("tag"),
			MessageFormat: frame.Some[uint32](0), More: true}))
		n := min(room, len(msg))
		t.More = n < len(msg)
		b := frame.BeginFrame(nil, frame.TypeAMQP, channel)
		b = frame.AppendTransfer(b, t)
		b = append(b, msg[:n]...)
		if err := send(frame.EndFrame(b, 0)); err != nil {
			return err
		}
		msg = msg[n:]
	}
	return nil
}

// item is a protocol header or frame of a stream, as a line of amqpspy's
// output begins.
func items(t *testing.T, stream []byte) []string {
	t.Helper()
	r := frame.NewReader(bytes.NewReader(stream))
	var out []string
	frames := 0
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		if f.IsHeader {
			out = append(out, fmt.Sprintf("protocol header at %d: ", f.Offset))
			continue
		}
		frames++
		out = append(out, fmt.Sprintf("frame %d at %d: size %d, ", frames, f.Offset, f.Size))
	}
}

// runClient talks to addr with go-amqp: it sends a message of 2,000 bytes
// (several transfers, the broker's frames being 512 bytes), receives the
// broker's, and closes everything. It returns what it sent and read.
func runClient(t *testing.T, addr string) (sent, read []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	c := &recConn{Conn: raw}
	conn, err := amqp.NewConn(ctx, c, &amqp.ConnOptions{SASLType: amqp.SASLTypeAnonymous(), ContainerID: "spy-test"})
	require.NoError(t, err)
	sess, err := conn.NewSession(ctx, nil)
	require.NoError(t, err)
	snd, err := sess.NewSender(ctx, "queue/in", nil)
	require.NoError(t, err)
	require.NoError(t, snd.Send(ctx, amqp.NewMessage(bytes.Repeat([]byte("to the broker "), 2000/14)), nil))
	rcv, err := sess.NewReceiver(ctx, "queue/out", &amqp.ReceiverOptions{Credit: 1})
	require.NoError(t, err)
	msg, err := rcv.Receive(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, brokerMessage, msg.GetData())
	require.NoError(t, rcv.AcceptMessage(ctx, msg))
	require.NoError(t, snd.Close(ctx))
	require.NoError(t, rcv.Close(ctx))
	require.NoError(t, sess.Close(ctx))
	require.NoError(t, conn.Close())
	require.NoError(t, c.drain())
	read, sent = c.bytes()
	return sent, read
}

// sameBytes checks that got is want, byte for byte, saying where they
// part when they do not.
func sameBytes(t *testing.T, want, got []byte, what string) {
	t.Helper()
	if bytes.Equal(want, got) {
		return
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	t.Errorf("%s: %d bytes, want %d; they differ from byte %d", what, len(got), len(want), i)
}

// startBroker listens for one connection and serves it with fakeBroker,
// recording what it reads and writes.
func startBroker(t *testing.T) (addr string, done func() (read, wrote []byte)) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	var c *recConn
	errc := make(chan error, 1)
	go func() {
		raw, err := ln.Accept()
		if err != nil {
			errc <- err
			return
		}
		c = &recConn{Conn: raw}
		err = fakeBroker(c)
		if err == nil {
			err = c.drain()
		}
		errc <- err
	}()
	return ln.Addr().String(), func() ([]byte, []byte) {
		require.NoError(t, <-errc)
		return c.bytes()
	}
}

// startSpy serves one connection with s on a port of its own.
func startSpy(t *testing.T, s *spy) (addr string, wait func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.serve(ln, 1) }()
	return ln.Addr().String(), func() {
		require.NoError(t, <-done)
		ln.Close()
	}
}

// TestSpy runs amqpspy between go-amqp and a fake broker: both directions
// arrive byte for byte, every protocol header and frame of both is printed
// (each direction's lines in its stream's order), the messages of both
// deliveries are joined from their transfers and printed, and nothing is
// reported as a fault.
func TestSpy(t *testing.T) {
	brokerAddr, brokerDone := startBroker(t)
	var out bytes.Buffer
	dir := t.TempDir()
	s := &spy{target: brokerAddr, out: &lockedWriter{w: &out}, buffer: 1 << 20, record: dir}
	spyAddr, spyDone := startSpy(t, s)

	clientSent, clientRead := runClient(t, spyAddr)
	brokerRead, brokerWrote := brokerDone()
	spyDone()

	sameBytes(t, clientSent, brokerRead, "client to broker")
	sameBytes(t, brokerWrote, clientRead, "broker to client")

	text := out.String()
	if os.Getenv("SPY_SHOW") != "" {
		t.Log(text)
	}
	var lines [2][]string // the item lines of each direction, in order
	for line := range strings.SplitSeq(text, "\n") {
		assert.NotContains(t, line, "error", "no fault")
		for dir, prefix := range [2]string{"c1 > ", "c1 < "} {
			if rest, ok := strings.CutPrefix(line, prefix); ok && (strings.HasPrefix(rest, "frame ") || strings.HasPrefix(rest, "protocol header ")) {
				lines[dir] = append(lines[dir], rest)
			}
		}
	}
	for dir, stream := range [2][]byte{clientSent, brokerWrote} {
		want := items(t, stream)
		if assert.Len(t, lines[dir], len(want), sides[dir]) {
			for i := range want {
				assert.True(t, strings.HasPrefix(lines[dir][i], want[i]), "%s: %q, want %q…", sides[dir], lines[dir][i], want[i])
			}
		}
	}
	assert.Regexp(t, `(?m)^c1 >   message: \d+ bytes from frames \d+-\d+$`, text, "the client's delivery, joined")
	assert.Regexp(t, `(?m)^c1 <   message: \d+ bytes from frames \d+-\d+$`, text, "the broker's delivery, joined")
	assert.Contains(t, text, `c1 <       binary[1488] 66726f6d207468652062726f6b657220`)
	assert.Regexp(t, `(?m)^c1: client 127\.0\.0\.1:\d+, server `+brokerAddr+`$`, text)
	assert.Contains(t, text, fmt.Sprintf("c1: closed: %d bytes from the client, %d from the server; recorded in ", len(clientSent), len(brokerWrote)))
	// Time order: the broker's first bytes answer the client's.
	assert.Less(t, strings.Index(text, "c1 > protocol header at 0"), strings.Index(text, "c1 < protocol header at 0"))

	// -record: the two streams, as forwarded, but for the SASL secret
	// (go-amqp's ANONYMOUS sends an initial-response), masked.
	got, err := os.ReadFile(filepath.Join(dir, "conn-1-client.bin"))
	require.NoError(t, err)
	sameBytes(t, masked(clientSent), got, "recorded from the client")
	got, err = os.ReadFile(filepath.Join(dir, "conn-1-server.bin"))
	require.NoError(t, err)
	sameBytes(t, brokerWrote, got, "recorded from the server")
}

// TestSpyJSON: with -json every line is a JSON object naming its
// connection, and every frame of both directions is there.
func TestSpyJSON(t *testing.T) {
	brokerAddr, brokerDone := startBroker(t)
	var out bytes.Buffer
	s := &spy{target: brokerAddr, out: &lockedWriter{w: &out}, buffer: 1 << 20, json: true}
	spyAddr, spyDone := startSpy(t, s)
	clientSent, _ := runClient(t, spyAddr)
	_, brokerWrote := brokerDone()
	spyDone()
	counts := map[string]int{}
	messages := 0
	for line := range strings.SplitSeq(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var obj struct {
			Conn    int
			From    string
			Error   string
			Message json.RawMessage
		}
		require.NoError(t, json.Unmarshal([]byte(line), &obj), line)
		assert.Equal(t, 1, obj.Conn)
		assert.Empty(t, obj.Error)
		counts[obj.From]++
		if obj.Message != nil {
			messages++
		}
	}
	assert.Equal(t, len(items(t, clientSent)), counts["client"])
	assert.Equal(t, len(items(t, brokerWrote)), counts["server"])
	assert.Equal(t, 2, counts[""], "the lines about the connection")
	assert.Equal(t, 2, messages)
}

// blockingWriter blocks every Write until released.
type blockingWriter struct {
	release chan struct{}
	mu      sync.Mutex
	buf     bytes.Buffer
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// TestSpyPrinterBehind: a printer that cannot write at all does not slow
// the forwarding: the whole conversation goes through, byte for byte,
// while nothing is printed; once it can write, amqpspy says it fell
// behind and how much it did not print.
func TestSpyPrinterBehind(t *testing.T) {
	brokerAddr, brokerDone := startBroker(t)
	w := &blockingWriter{release: make(chan struct{})}
	s := &spy{target: brokerAddr, out: &lockedWriter{w: w}, buffer: 1024}
	spyAddr, spyDone := startSpy(t, s)
	clientSent, clientRead := runClient(t, spyAddr)
	brokerRead, brokerWrote := brokerDone()
	sameBytes(t, clientSent, brokerRead, "client to broker")
	sameBytes(t, brokerWrote, clientRead, "broker to client")
	close(w.release)
	spyDone()
	text := w.buf.String()
	assert.Contains(t, text, "error: at offset ")
	assert.Contains(t, text, "the printer fell behind (more than 1024 bytes waiting): the rest of this direction is forwarded but not printed")
	assert.Regexp(t, `c1: closed: \d+ bytes from the client, \d+ from the server; the printer fell behind: \d+ bytes from the client and \d+ from the server were forwarded but not printed`, text)
}

// TestSpyGarbage: bytes that are not AMQP are forwarded unchanged both
// ways; the fault is printed, and the forwarding goes on after it.
func TestSpyGarbage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	fromServer := []byte("HTTP/1.1 400 Bad Request\r\n\r\n")
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		c.Write(fromServer)
		b, _ := io.ReadAll(c)
		got <- b
	}()
	var out bytes.Buffer
	s := &spy{target: ln.Addr().String(), out: &lockedWriter{w: &out}, buffer: 1 << 20}
	spyAddr, spyDone := startSpy(t, s)
	c, err := net.Dial("tcp", spyAddr)
	require.NoError(t, err)
	fromClient := append([]byte("GET / HTTP/1.1\r\n\r\n"), frame.AppendFrame(nil, frame.Frame{Body: frame.AppendEnd(nil, frame.End{})})...)
	_, err = c.Write(fromClient)
	require.NoError(t, err)
	c.(*net.TCPConn).CloseWrite()
	read, err := io.ReadAll(c)
	require.NoError(t, err)
	c.Close()
	assert.Equal(t, fromServer, read)
	assert.Equal(t, fromClient, <-got)
	spyDone()
	text := out.String()
	assert.Contains(t, text, "c1 > error: frame 1 at offset 0: ")
	assert.Contains(t, text, "c1 < error: frame 1 at offset 0: ")
	assert.Contains(t, text, fmt.Sprintf("c1: closed: %d bytes from the client, %d from the server", len(fromClient), len(fromServer)))
}

// TestRun: amqpspy's flags; -n 1 serves one connection and exits; a
// target that refuses is said so; bad usage is status 2.
func TestRun(t *testing.T) {
	var stderr bytes.Buffer
	assert.Equal(t, 2, run([]string{"-nope"}, io.Discard, &stderr, nil))
	assert.Equal(t, 2, run([]string{"extra"}, io.Discard, &stderr, nil))
	assert.Equal(t, 2, run([]string{"-record", filepath.Join(t.TempDir(), "absent")}, io.Discard, &stderr, nil))
	assert.Equal(t, 0, run([]string{"-h"}, io.Discard, &stderr, nil))

	// A target nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := ln.Addr().String()
	ln.Close()
	outPath := filepath.Join(t.TempDir(), "out.txt")
	listening := make(chan string, 1)
	status := make(chan int, 1)
	go func() {
		status <- run([]string{"-listen", "127.0.0.1:0", "-target", refused, "-n", "1", "-out", outPath}, io.Discard, io.Discard, listening)
	}()
	c, err := net.Dial("tcp", <-listening)
	require.NoError(t, err)
	io.ReadAll(c)
	c.Close()
	assert.Equal(t, 0, <-status)
	got, err := os.ReadFile(outPath)
	require.NoError(t, err)
	assert.Regexp(t, `^c1: client 127\.0\.0\.1:\d+: cannot connect to `+refused+`: .*refused\n$`, string(got))
}

// pcapStreams reads a capture with package capture: the bytes of each
// direction of its one connection and the times they were stamped with.
type pcapStreams struct {
	data  [2]bytes.Buffer
	times []time.Time
	conns int
}

func (p *pcapStreams) Open(int, string, string) { p.conns++ }
func (p *pcapStreams) Data(_ int, fromClient bool, b []byte, t time.Time) {
	dir := fromServer
	if fromClient {
		dir = clientSide
	}
	p.data[dir].Write(b)
	p.times = append(p.times, t)
}
func (p *pcapStreams) Gap(int, bool, int) { panic("gap") }
func (p *pcapStreams) Close(int)          {}

// clientSide is fromClient, which the handler's parameter shadows.
const clientSide = fromClient

// TestSpyTimesAndPcap: with -time every frame's line begins with the wall
// clock time it arrived and the seconds since the frame before it; with
// -record the connection is also written as a capture, which carries both
// streams byte for byte, stamped with times in the run's window, in
// order; -summary prints the connection's links instead of the frames.
func TestSpyTimesAndPcap(t *testing.T) {
	brokerAddr, brokerDone := startBroker(t)
	var out bytes.Buffer
	dir := t.TempDir()
	s := &spy{target: brokerAddr, out: &lockedWriter{w: &out}, buffer: 1 << 20, record: dir, time: dump.TimeAbs | dump.TimeRel}
	spyAddr, spyDone := startSpy(t, s)
	start := time.Now()
	clientSent, _ := runClient(t, spyAddr)
	_, brokerWrote := brokerDone()
	spyDone()
	end := time.Now()

	stamped := regexp.MustCompile(`^c1 [<>] (\S+) ([+-]\d+\.\d{6}) (frame|protocol header) `)
	n := 0
	for line := range strings.SplitSeq(out.String(), "\n") {
		if !strings.HasPrefix(line, "c1 > frame") && !strings.HasPrefix(line, "c1 < frame") {
			if m := stamped.FindStringSubmatch(line); m != nil {
				ts, err := time.Parse("2006-01-02T15:04:05.000000Z", m[1])
				require.NoError(t, err)
				assert.False(t, ts.Before(start.Truncate(time.Microsecond)) || ts.After(end), line)
				n++
			}
			continue
		}
		t.Errorf("a frame without its time: %s", line)
	}
	assert.Equal(t, len(items(t, clientSent))+len(items(t, brokerWrote)), n)

	f, err := os.Open(filepath.Join(dir, "conn-1.pcap"))
	require.NoError(t, err)
	defer f.Close()
	var p pcapStreams
	require.NoError(t, capture.Read(f, uint16(mustPort(t, brokerAddr)), &p))
	assert.Equal(t, 1, p.conns)
	sameBytes(t, masked(clientSent), p.data[fromClient].Bytes(), "the capture, from the client")
	sameBytes(t, brokerWrote, p.data[fromServer].Bytes(), "the capture, from the server")
	for i, ts := range p.times {
		assert.False(t, ts.Before(start) || ts.After(end), "time %v", ts)
		if i > 0 {
			assert.False(t, ts.Before(p.times[i-1]), "in order")
		}
	}

	// -summary, filtered to nothing but the summary.
	brokerAddr, brokerDone = startBroker(t)
	out.Reset()
	s = &spy{target: brokerAddr, out: &lockedWriter{w: &out}, buffer: 1 << 20, summary: true}
	spyAddr, spyDone = startSpy(t, s)
	runClient(t, spyAddr)
	brokerDone()
	spyDone()
	text := out.String()
	assert.NotContains(t, text, "frame ")
	assert.Regexp(t, `(?m)^summary c1: \d+ frames, `, text)
	assert.Regexp(t, `(?m)^    link "[^"]+" \(handle 0 from the client, 0 from the server\): client sends; `, text)
	assert.Regexp(t, `(?m)^      1 delivery in \d+ transfers, 1996 bytes of payload`, text)
	assert.Regexp(t, `(?m)^      transfer to disposition: median \d+\.\d{6}s, max \d+\.\d{6}s \(1 delivery\)$`, text)
}

func mustPort(t *testing.T, addr string) int {
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	n, err := strconv.Atoi(port)
	require.NoError(t, err)
	return n
}
