package main

import (
	"bufio"
	"net"
	"os"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// pcapWriter writes the two directions of a proxied connection as a
// packet capture that amqpdump -pcap (and Wireshark) reads: Ethernet,
// IPv4 or IPv6 and TCP headers made up around each chunk forwarded,
// stamped with the time it was read, between the client's address and
// the server's; a handshake opens it and FINs close it.
type pcapWriter struct {
	name string
	f    *os.File
	bw   *bufio.Writer
	w    *pcapgo.Writer
	ends [2]*net.TCPAddr // the client's, the server's
	seq  [2]uint32       // the next sequence number of each direction
	buf  gopacket.SerializeBuffer
	ipv6 bool
}

func newPcapWriter(name string, client, server net.Addr, t time.Time) (*pcapWriter, error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	p := &pcapWriter{name: name, f: f, bw: bufio.NewWriterSize(f, 64<<10), buf: gopacket.NewSerializeBuffer()}
	p.w = pcapgo.NewWriterNanos(p.bw)
	for i, a := range []net.Addr{client, server} {
		ta, _ := a.(*net.TCPAddr)
		if ta == nil {
			ta = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}
		}
		p.ends[i] = ta
		if ta.IP.To4() == nil {
			p.ipv6 = true
		}
	}
	p.seq = [2]uint32{1000, 5000}
	if err := p.w.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
		f.Close()
		return nil, err
	}
	// The handshake: SYN, SYN-ACK, ACK.
	p.packet(fromClient, t, nil, true, false)
	p.packet(fromServer, t, nil, true, false)
	err = p.packet(fromClient, t, nil, false, false)
	return p, err
}

// data writes a chunk of direction dir read at t.
func (p *pcapWriter) data(dir int, b []byte, t time.Time) error {
	return p.packet(dir, t, b, false, false)
}

// packet writes one TCP segment of direction dir.
func (p *pcapWriter) packet(dir int, t time.Time, payload []byte, syn, fin bool) error {
	src, dst := p.ends[dir], p.ends[1-dir]
	tcp := &layers.TCP{SrcPort: layers.TCPPort(src.Port), DstPort: layers.TCPPort(dst.Port),
		Seq: p.seq[dir], Ack: p.seq[1-dir], SYN: syn, FIN: fin, ACK: !syn || dir == fromServer,
		PSH: len(payload) > 0, Window: 65535}
	if syn && dir == fromClient {
		tcp.Ack = 0
	}
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, byte(1 + dir)},
		DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, byte(2 - dir)}}
	var ip gopacket.SerializableLayer
	if p.ipv6 {
		eth.EthernetType = layers.EthernetTypeIPv6
		l := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP, SrcIP: src.IP.To16(), DstIP: dst.IP.To16()}
		tcp.SetNetworkLayerForChecksum(l)
		ip = l
	} else {
		eth.EthernetType = layers.EthernetTypeIPv4
		l := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: src.IP.To4(), DstIP: dst.IP.To4()}
		tcp.SetNetworkLayerForChecksum(l)
		ip = l
	}
	if err := gopacket.SerializeLayers(p.buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		eth, ip, tcp, gopacket.Payload(payload)); err != nil {
		return err
	}
	p.seq[dir] += uint32(len(payload))
	if syn || fin {
		p.seq[dir]++
	}
	b := p.buf.Bytes()
	return p.w.WritePacket(gopacket.CaptureInfo{Timestamp: t, CaptureLength: len(b), Length: len(b)}, b)
}

// close writes the FINs of both directions at t and closes the file.
func (p *pcapWriter) close(t time.Time) error {
	err := p.packet(fromClient, t, nil, false, true)
	if err == nil {
		err = p.packet(fromServer, t, nil, false, true)
	}
	if err == nil {
		err = p.packet(fromClient, t, nil, false, false)
	}
	if ferr := p.bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	return err
}
