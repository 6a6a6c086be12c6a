package capture

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// events records what Read hands on, as lines.
type events struct {
	lines []string
	data  [2]bytes.Buffer // of connection 1: from the client, from the server
}

func (e *events) Open(conn int, client, server string) {
	e.lines = append(e.lines, fmt.Sprintf("open %d %s %s", conn, client, server))
}

func (e *events) Data(conn int, fromClient bool, b []byte, _ time.Time) {
	if conn == 1 {
		if fromClient {
			e.data[0].Write(b)
		} else {
			e.data[1].Write(b)
		}
	}
}

func (e *events) Gap(conn int, fromClient bool, n int) {
	e.lines = append(e.lines, fmt.Sprintf("gap %d %v %d", conn, fromClient, n))
}

func (e *events) Close(conn int) { e.lines = append(e.lines, fmt.Sprintf("close %d", conn)) }

// segment is one TCP segment of a test capture.
type segment struct {
	fromClient bool
	seq        uint32
	flags      string // "S", "F", "" (ACK)
	payload    string
}

// write writes segments between 10.0.0.1:40000 and 10.0.0.2:port as a
// pcap file (gopacket's writer: the reader is tested against another
// implementation by testdata/amqpdump/gen_pcap.py's capture).
func write(t *testing.T, port uint16, segs []segment) []byte {
	t.Helper()
	var b bytes.Buffer
	w := pcapgo.NewWriter(&b)
	require.NoError(t, w.WriteFileHeader(65535, layers.LinkTypeEthernet))
	client, server := net.IPv4(10, 0, 0, 1), net.IPv4(10, 0, 0, 2)
	for i, s := range segs {
		eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: client, DstIP: server}
		tcp := &layers.TCP{SrcPort: 40000, DstPort: layers.TCPPort(port), Seq: s.seq, ACK: true, Window: 65535,
			SYN: s.flags == "S", FIN: s.flags == "F"}
		if !s.fromClient {
			ip.SrcIP, ip.DstIP = server, client
			tcp.SrcPort, tcp.DstPort = tcp.DstPort, tcp.SrcPort
		}
		require.NoError(t, tcp.SetNetworkLayerForChecksum(ip))
		buf := gopacket.NewSerializeBuffer()
		require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
			eth, ip, tcp, gopacket.Payload(s.payload)))
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(1700000000, int64(i)*1000), CaptureLength: len(buf.Bytes()), Length: len(buf.Bytes())}
		require.NoError(t, w.WritePacket(ci, buf.Bytes()))
	}
	return b.Bytes()
}

// TestReassembly: segments out of order and retransmitted are handed on
// once, in order; a segment lost is a gap of its length; other ports are
// left out.
func TestReassembly(t *testing.T) {
	pcap := write(t, 5672, []segment{
		{true, 100, "S", ""},
		{false, 900, "S", ""},
		{true, 101, "", "hello "},
		{true, 113, "", "third "}, // before the second
		{true, 107, "", "world "},
		{true, 107, "", "world "},    // again
		{false, 901, "", "8 bytes!"}, // dropped below: the gap
		{false, 909, "", "after the gap"},
		{true, 119, "F", ""},
		{false, 922, "F", ""},
	})
	// The capture without the server's first data segment.
	var e events
	require.NoError(t, Read(bytes.NewReader(dropSegment(t, pcap, 6)), 5672, &e))
	assert.Equal(t, "hello world third ", e.data[0].String())
	assert.Equal(t, "after the gap", e.data[1].String())
	assert.Equal(t, []string{"open 1 10.0.0.1:40000 10.0.0.2:5672", "gap 1 false 8", "close 1"}, e.lines)

	// On another port: nothing.
	e = events{}
	require.NoError(t, Read(bytes.NewReader(pcap), 5671, &e))
	assert.Empty(t, e.lines)
}

// dropSegment returns the capture without its packet number i (from 0).
func dropSegment(t *testing.T, pcap []byte, drop int) []byte {
	t.Helper()
	r, err := pcapgo.NewReader(bytes.NewReader(pcap))
	require.NoError(t, err)
	var b bytes.Buffer
	w := pcapgo.NewWriter(&b)
	require.NoError(t, w.WriteFileHeader(65535, r.LinkType()))
	for i := 0; ; i++ {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		if i != drop {
			require.NoError(t, w.WritePacket(ci, data))
		}
	}
	return b.Bytes()
}

// TestMidStream: a capture that starts after the connection did reports
// a gap of unknown length before its first bytes.
func TestMidStream(t *testing.T) {
	pcap := write(t, 5672, []segment{
		{true, 5000, "", "middle "},
		{true, 5007, "", "end"},
	})
	var e events
	require.NoError(t, Read(bytes.NewReader(pcap), 5672, &e))
	assert.Equal(t, []string{"open 1 10.0.0.1:40000 10.0.0.2:5672", "gap 1 true -1", "close 1"}, e.lines)
	assert.Equal(t, "middle end", e.data[0].String())
}

// TestNotCapture: anything else is refused; the fixture is a capture.
func TestNotCapture(t *testing.T) {
	var e events
	assert.Equal(t, ErrNotCapture, Read(bytes.NewReader([]byte("AMQP\x00\x01\x00\x00")), 5672, &e))
	assert.False(t, IsCapture([]byte{0xa1, 0xb2}))
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "amqpdump", "proton.pcap"))
	require.NoError(t, err)
	assert.True(t, IsCapture(b))
}
