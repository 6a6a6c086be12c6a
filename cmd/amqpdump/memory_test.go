//go:build linux

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/amqpsax/amqpsax/encode"
	"github.com/amqpsax/amqpsax/frame"
	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// (Linux only: getrusage's maxrss, in KiB, is Linux's.)

// TestMain runs amqpdump itself when the test binary is started as it
// (asMain set): TestResidentMemory measures a process of its own.
func TestMain(m *testing.M) {
	if os.Getenv(asMain) != "" {
		main()
	}
	os.Exit(m.Run())
}

const asMain = "AMQPDUMP_TEST_AS_MAIN"

// maxResident is what amqpdump may hold resident on any input.
const maxResident = 64 << 20

// TestResidentMemory: amqpdump reads a connection stream and a capture as
// they come, in memory bounded by the largest delivery in flight and the
// reassembly window, not by the input's size. Both are generated on the
// fly through a pipe into a process of its own, at two sizes (and 1 GiB
// without -short); its peak resident set (getrusage's maxrss) stays under
// 64 MiB and does not grow with the input.
func TestResidentMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector the resident set is mostly its shadow memory")
	}
	sizes := []int64{24 << 20, 96 << 20}
	if !testing.Short() {
		sizes = append(sizes, 1<<30)
	}
	for _, kind := range []string{"frames", "pcap"} {
		var rss []int64
		for _, size := range sizes {
			r := residentOf(t, kind, size)
			t.Logf("-%s, %4d MiB in: %5.1f MiB resident", kind, size>>20, float64(r)/(1<<20))
			assert.Less(t, r, int64(maxResident), "-%s, %d MiB", kind, size>>20)
			rss = append(rss, r)
		}
		// Four times the input, then ten times that: at most 8 MiB more
		// each time (the garbage collector's pacing; the unsettled
		// deliveries the connection's state follows, at most
		// dump's maxUnsettled).
		for i := 1; i < len(rss); i++ {
			assert.Less(t, rss[i], rss[i-1]+8<<20, "-%s: resident memory grows with the input: %v", kind, rss)
		}
	}
}

// residentOf runs amqpdump -kind on size bytes generated through a pipe,
// its output thrown away, and returns its peak resident set in bytes.
func residentOf(t *testing.T, kind string, size int64) int64 {
	cmd := exec.Command(os.Args[0], "-"+kind, "-limit", "0")
	cmd.Env = append(os.Environ(), asMain+"=1")
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	var out counter
	cmd.Stdout = &out
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	w := bufio.NewWriterSize(in, 256<<10)
	var gerr error
	if kind == "pcap" {
		gerr = generatePcap(w, size)
	} else {
		gerr = generateStream(w, size)
	}
	require.NoError(t, gerr)
	require.NoError(t, w.Flush())
	require.NoError(t, in.Close())
	require.NoError(t, cmd.Wait(), stderr.String())
	// Each delivery of 64 KiB prints its four frames and its message.
	require.Greater(t, int64(out), size/(64<<10)*1000, "the deliveries are printed")
	return int64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) << 10 // (int32 on 386)
}

// counter counts the bytes written to it.
type counter int64

func (c *counter) Write(p []byte) (int, error) { *c += counter(len(p)); return len(p), nil }

// generateStream writes a connection stream of about size bytes: the
// protocol header, open, begin, attach, then deliveries of 64 KiB each in
// four transfers (unsettled), over and over.
func generateStream(w io.Writer, size int64) error {
	b := frame.AppendProtocolHeader(nil, frame.HeaderAMQP)
	b = frame.AppendFrame(b, frame.Frame{Body: frame.AppendOpen(nil, frame.Open{ContainerID: []byte("gen")})})
	b = frame.AppendFrame(b, frame.Frame{Body: frame.AppendBegin(nil, frame.Begin{IncomingWindow: 1 << 20, OutgoingWindow: 1 << 20})})
	b = frame.AppendFrame(b, frame.Frame{Body: frame.AppendAttach(nil, frame.Attach{Name: []byte("gen"), Role: frame.RoleSender,
		InitialDeliveryCount: frame.Some[uint32](0)})})
	if _, err := w.Write(b); err != nil {
		return err
	}
	written := int64(len(b))
	payload := make([]byte, 64<<10)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	msg := encode.AppendDescribed(nil)
	msg = encode.AppendUlong(msg, 0x75) // amqp:data:binary
	msg = encode.AppendBinary(msg, payload)
	var one []byte
	for id := uint32(0); written < size; id++ {
		one = one[:0]
		part := (len(msg) + 3) / 4
		for k := 0; k < 4; k++ {
			tr := frame.Transfer{Handle: 0, More: k < 3}
			if k == 0 {
				tr.DeliveryID, tr.DeliveryTag, tr.MessageFormat = frame.Some(id), []byte{byte(id), byte(id >> 8), byte(id >> 16), byte(id >> 24)}, frame.Some[uint32](0)
			}
			start := len(one)
			one = frame.BeginFrame(one, frame.TypeAMQP, 0)
			one = frame.AppendTransfer(one, tr)
			one = append(one, msg[k*part:min((k+1)*part, len(msg))]...)
			one = frame.EndFrame(one, start)
		}
		if _, err := w.Write(one); err != nil {
			return err
		}
		written += int64(len(one))
	}
	return nil
}

// generatePcap writes a capture (Ethernet, IPv4, TCP) of one connection
// to port 5672 whose client sends generateStream's bytes, about size of
// them, in segments of 32 KiB, a microsecond apart.
func generatePcap(w io.Writer, size int64) error {
	pw := pcapgo.NewWriter(w)
	if err := pw.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
		return err
	}
	seg := &segmenter{w: pw, seq: [2]uint32{100, 900}, at: time.Unix(1700000000, 0)}
	seg.packet(0, nil, true)
	seg.packet(1, nil, true)
	seg.packet(0, nil, false)
	bw := bufio.NewWriterSize(seg, 32<<10)
	if err := generateStream(bw, size); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return seg.err
}

// segmenter writes what is written to it as TCP segments from the client.
type segmenter struct {
	w   *pcapgo.Writer
	seq [2]uint32
	at  time.Time
	buf gopacket.SerializeBuffer
	err error
}

func (s *segmenter) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0; {
		n := min(len(rest), 32<<10)
		s.packet(0, rest[:n], false)
		rest = rest[n:]
	}
	return len(p), s.err
}

func (s *segmenter) packet(dir int, payload []byte, syn bool) {
	if s.err != nil {
		return
	}
	if s.buf == nil {
		s.buf = gopacket.NewSerializeBuffer()
	}
	ips := [2][]byte{{10, 0, 0, 1}, {10, 0, 0, 2}}
	ports := [2]layers.TCPPort{40000, 5672}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: ips[dir], DstIP: ips[1-dir]}
	tcp := &layers.TCP{SrcPort: ports[dir], DstPort: ports[1-dir], Seq: s.seq[dir], Ack: s.seq[1-dir], SYN: syn,
		ACK: !syn || dir == 1, Window: 65535}
	tcp.SetNetworkLayerForChecksum(ip)
	eth := &layers.Ethernet{SrcMAC: []byte{2, 0, 0, 0, 0, 1}, DstMAC: []byte{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
	if s.err = gopacket.SerializeLayers(s.buf, gopacket.SerializeOptions{FixLengths: true}, eth, ip, tcp, gopacket.Payload(payload)); s.err != nil {
		return
	}
	s.seq[dir] += uint32(len(payload))
	if syn {
		s.seq[dir]++
	}
	s.at = s.at.Add(time.Microsecond)
	b := s.buf.Bytes()
	s.err = s.w.WritePacket(gopacket.CaptureInfo{Timestamp: s.at, CaptureLength: len(b), Length: len(b)}, b)
	if s.err != nil {
		s.err = fmt.Errorf("pcap: %w", s.err)
	}
}
