// Package capture reads the TCP connections of a packet capture (pcap or
// pcapng, as tcpdump and Wireshark write them) to or from one port, and
// hands on each direction's bytes in stream order: the TCP segments are
// reassembled (github.com/google/gopacket/tcpassembly: retransmissions
// dropped, segments out of order put back in order, gaps reported).
//
// Link types: whatever gopacket decodes (Ethernet, Linux cooked capture as
// "tcpdump -i any" writes, raw IP, BSD loopback, …). IPv4 and IPv6.
package capture

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/google/gopacket/tcpassembly"
)

// Handler receives the connections of a capture, in capture order: a
// segment's bytes are handed on once every byte before it in its
// direction has been (or is known lost).
type Handler interface {
	// Open is called when a connection is first seen. client is the end
	// whose port is not the one read (its address:port), server the end
	// whose port is.
	Open(conn int, client, server string)
	// Data is called with the next bytes of one direction of a
	// connection: from the client when fromClient is set. b is valid only
	// during the call. seen is the capture's time of the packet that
	// carried them (of the last one, when reassembly joined several).
	Data(conn int, fromClient bool, b []byte, seen time.Time)
	// Gap is called when n bytes of a direction are missing from the
	// capture (n is -1 when the capture starts after the connection did,
	// so that how many is not known).
	Gap(conn int, fromClient bool, n int)
	// Close is called when both directions have ended (FIN or RST) or the
	// capture has.
	Close(conn int)
}

// Magic numbers of the capture formats.
var (
	pcapMagics = [][]byte{
		{0xa1, 0xb2, 0xc3, 0xd4}, {0xd4, 0xc3, 0xb2, 0xa1}, // microseconds
		{0xa1, 0xb2, 0x3c, 0x4d}, {0x4d, 0x3c, 0xb2, 0xa1}, // nanoseconds
	}
	pcapngMagic = []byte{0x0a, 0x0d, 0x0d, 0x0a}
)

// IsCapture reports whether b starts as a pcap or pcapng file does.
func IsCapture(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	if bytes.Equal(b[:4], pcapngMagic) {
		return true
	}
	for _, m := range pcapMagics {
		if bytes.Equal(b[:4], m) {
			return true
		}
	}
	return false
}

// MaxBufferedPages bounds the TCP segments held out of order, in pages of
// about 2 KiB: at most a quarter of them for one connection.
const MaxBufferedPages = 8192

// ErrNotCapture: the input is neither a pcap nor a pcapng file.
var ErrNotCapture = errors.New("not a pcap or pcapng capture")

// Read reads a capture from r and hands the TCP connections to or from
// port to h. It returns an error when the capture cannot be read (what
// was read before is handed on); packets it cannot decode are skipped.
func Read(r io.Reader, port uint16, h Handler) error {
	br := bufio.NewReader(r)
	magic, err := br.Peek(4)
	if err != nil || !IsCapture(magic) {
		return ErrNotCapture
	}
	var src gopacket.PacketDataSource
	var link layers.LinkType
	if bytes.Equal(magic, pcapngMagic) {
		ng, err := pcapgo.NewNgReader(br, pcapgo.DefaultNgReaderOptions)
		if err != nil {
			return fmt.Errorf("pcapng: %w", err)
		}
		src, link = ng, ng.LinkType()
	} else {
		pr, err := pcapgo.NewReader(br)
		if err != nil {
			return fmt.Errorf("pcap: %w", err)
		}
		src, link = pr, pr.LinkType()
	}
	f := &factory{h: h, port: port, conns: map[string]*conn{}}
	asm := tcpassembly.NewAssembler(tcpassembly.NewStreamPool(f))
	// Segments after a hole wait in pages (about 2 KiB each) until the
	// hole is filled; past these bounds the hole is given up as lost, so
	// that memory does not grow with the capture.
	asm.MaxBufferedPagesPerConnection = MaxBufferedPages / 4
	asm.MaxBufferedPagesTotal = MaxBufferedPages
	ps := gopacket.NewPacketSource(src, link)
	ps.DecodeOptions = gopacket.DecodeOptions{Lazy: true, NoCopy: true}
	var readErr error
	for n := 1; ; n++ {
		p, err := ps.NextPacket()
		if err == io.EOF {
			break
		}
		if err != nil {
			// A packet that does not decode is skipped; a capture that
			// cannot be read any further ends here.
			if errors.Is(err, io.ErrUnexpectedEOF) {
				readErr = fmt.Errorf("packet %d: capture cut short: %w", n, err)
				break
			}
			continue
		}
		tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
		nl := p.NetworkLayer()
		if tcp == nil || nl == nil || (uint16(tcp.SrcPort) != port && uint16(tcp.DstPort) != port) {
			continue
		}
		if md := p.Metadata(); md != nil && md.CaptureLength < md.Length && len(tcp.Payload) > 0 {
			// Cut by the capture's snap length: its payload is not all
			// there. Leave it out, so that a gap is reported.
			continue
		}
		asm.AssembleWithTimestamp(nl.NetworkFlow(), tcp, p.Metadata().Timestamp)
	}
	asm.FlushAll()
	for _, c := range f.order {
		if !c.closed {
			c.closed = true
			h.Close(c.id)
		}
	}
	return readErr
}

// factory makes a half for each direction of each connection.
type factory struct {
	h     Handler
	port  uint16
	conns map[string]*conn // by client and server, while open
	order []*conn
	next  int
}

// conn is one TCP connection.
type conn struct {
	id     int
	key    string
	ended  int // halves ended
	closed bool
}

func (f *factory) New(netFlow, tcpFlow gopacket.Flow) tcpassembly.Stream {
	src, dst := netFlow.Src().String(), netFlow.Dst().String()
	sport, dport := tcpFlow.Src().String(), tcpFlow.Dst().String()
	fromClient := dport == strconv.Itoa(int(f.port))
	client, server := hostPort(src, sport), hostPort(dst, dport)
	if !fromClient {
		client, server = server, client
	}
	key := client + " " + server
	c := f.conns[key]
	if c == nil {
		f.next++
		c = &conn{id: f.next, key: key}
		f.conns[key] = c
		f.order = append(f.order, c)
		f.h.Open(c.id, client, server)
	}
	return &half{f: f, c: c, fromClient: fromClient}
}

// hostPort joins an address and a port, with brackets for IPv6.
func hostPort(host, port string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

// half is one direction of a connection.
type half struct {
	f          *factory
	c          *conn
	fromClient bool
}

func (s *half) Reassembled(rs []tcpassembly.Reassembly) {
	for _, r := range rs {
		if r.Skip != 0 {
			s.f.h.Gap(s.c.id, s.fromClient, r.Skip)
		}
		if len(r.Bytes) > 0 {
			s.f.h.Data(s.c.id, s.fromClient, r.Bytes, r.Seen)
		}
	}
}

func (s *half) ReassemblyComplete() {
	c := s.c
	if c.ended++; c.ended == 2 && !c.closed {
		c.closed = true
		delete(s.f.conns, c.key)
		s.f.h.Close(c.id)
	}
}
