#!/usr/bin/python3
"""Writes testdata/amqpdump/proton.pcap, the capture of cmd/amqpdump's -pcap tests.

Run from anywhere, with any Python 3 (no modules beyond the standard library):

    python3 testdata/amqpdump/gen_pcap.py

It builds a pcap file (Ethernet, IPv4, TCP; microsecond timestamps, known
and irregular: see main) of one TCP connection from 10.0.0.1:40000 to
10.0.0.2:5672 whose two directions carry the Qpid Proton connection
streams testdata/proton/conn-client.bin (client to server) and conn-server.bin (server to client), byte for byte.
The segments are cut at frame boundaries, inside frames and across them,
the two directions interleaved; to exercise TCP reassembly, two client
segments are sent out of order and a server segment is sent twice (a
retransmission). A SYN handshake opens the connection and a FIN from each
side closes it. The output is the same on every run.
"""

import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
PROTON = os.path.join(ROOT, "testdata", "proton")

CLIENT = (bytes([10, 0, 0, 1]), 40000, bytes.fromhex("020000000001"))
SERVER = (bytes([10, 0, 0, 2]), 5672, bytes.fromhex("020000000002"))


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def packet(src, dst, seq, ack, flags, payload):
    """An Ethernet frame holding an IPv4 packet holding a TCP segment."""
    tcp = struct.pack("!HHIIBBHHH", src[1], dst[1], seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                      5 << 4, flags, 65535, 0, 0) + payload
    pseudo = src[0] + dst[0] + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", checksum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0x4000, 64, 6, 0, src[0], dst[0])
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return dst[2] + src[2] + b"\x08\x00" + ip + tcp


SYN, ACK, PSH, FIN = 0x02, 0x10, 0x08, 0x01


def boundaries(name):
    """The offsets where the frames and protocol headers of a stream start."""
    with open(os.path.join(PROTON, name)) as f:
        return [json.loads(line)["offset"] for line in f]


def chunks(data, starts):
    """Cuts data into segments: two frames together, then a frame cut in
    the middle, in turn, so that segments and frames seldom line up."""
    starts = starts + [len(data)]
    out, i = [], 0
    while i < len(starts) - 1:
        if i % 3 == 0 and i + 2 < len(starts):
            out.append(data[starts[i]:starts[i + 2]])
            i += 2
            continue
        a, b = starts[i], starts[i + 1]
        if b - a > 16:
            out += [data[a:(a + b) // 2], data[(a + b) // 2:b]]
        else:
            out.append(data[a:b])
        i += 1
    assert b"".join(out) == data
    return out


def main():
    c_data = open(os.path.join(PROTON, "conn-client.bin"), "rb").read()
    s_data = open(os.path.join(PROTON, "conn-server.bin"), "rb").read()
    c_chunks = chunks(c_data, boundaries("conn-client-frames.jsonl"))
    s_chunks = chunks(s_data, boundaries("conn-server-frames.jsonl"))

    c_isn, s_isn = 1000, 500000
    packets = []  # (src, dst, seq, ack, flags, payload)
    packets.append((CLIENT, SERVER, c_isn, 0, SYN, b""))
    packets.append((SERVER, CLIENT, s_isn, c_isn + 1, SYN | ACK, b""))
    packets.append((CLIENT, SERVER, c_isn + 1, s_isn + 1, ACK, b""))

    # Segments with their sequence numbers, the directions interleaved.
    c_seq, s_seq = c_isn + 1, s_isn + 1
    segs = []
    for i in range(max(len(c_chunks), len(s_chunks))):
        if i < len(c_chunks):
            segs.append((CLIENT, SERVER, c_seq, s_seq, ACK | PSH, c_chunks[i]))
            c_seq += len(c_chunks[i])
        if i < len(s_chunks):
            segs.append((SERVER, CLIENT, s_seq, c_seq, ACK | PSH, s_chunks[i]))
            s_seq += len(s_chunks[i])

    # Two client segments out of order (the 5th and the 7th packets of the
    # data), and the 4th server segment sent again after the 6th.
    client_idx = [i for i, p in enumerate(segs) if p[0] is CLIENT]
    server_idx = [i for i, p in enumerate(segs) if p[0] is SERVER]
    a, b = client_idx[4], client_idx[5]
    segs[a], segs[b] = segs[b], segs[a]
    segs.insert(server_idx[6] + 1, segs[server_idx[3]])

    packets += segs
    packets.append((CLIENT, SERVER, c_seq, s_seq, FIN | ACK, b""))
    packets.append((SERVER, CLIENT, s_seq, c_seq + 1, FIN | ACK, b""))
    packets.append((CLIENT, SERVER, c_seq + 1, s_seq + 1, ACK, b""))

    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)  # Ethernet
    # Known times (the -time goldens): from 1700000000 s, each packet
    # 250 us to 2 ms after the one before, the 20th 2.5 s after the 19th,
    # and the last six (the last data segments, then the FINs) 30 s later.
    t = 1700000000 * 1000000
    for n, p in enumerate(packets):
        frame = packet(*p)
        t += 250 + (n * 7919) % 1750
        if n == 19:
            t += 2500000
        if n == len(packets) - 6:
            t += 30000000
        sec, usec = divmod(t, 1000000)
        out += struct.pack("<IIII", sec, usec, len(frame), len(frame)) + frame
    path = os.path.join(HERE, "proton.pcap")
    with open(path, "wb") as f:
        f.write(out)
    print("wrote", os.path.relpath(path, ROOT), len(out), "bytes,", len(packets), "packets")


if __name__ == "__main__":
    main()
