#!/usr/bin/python3
"""Writes the samples of cmd/amqpdump's tests and of the examples.

Run from anywhere:

    /usr/bin/python3 testdata/amqpdump/gen.py

The messages are taken from testdata/proton/messages.jsonl (written by Qpid
Proton 0.37) or, for the filter example's sample, built with Proton's
Message (Debian package python3-qpid-proton); the bad inputs are cut or
patched from them by hand, as the comments in each file say. The output is
the same on every run. The golden files (*.golden) are not written here:
they are the output of `cd cmd && go test ./amqpdump -update`. The
capture proton.pcap is written by gen_pcap.py.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def messages():
    out = {}
    with open(os.path.join(ROOT, "testdata", "proton", "messages.jsonl")) as f:
        for line in f:
            e = json.loads(line)
            out[e["name"]] = bytes.fromhex(e["hex"])
    return out


def hex_lines(b, width=32):
    return "".join(b[i:i + width].hex() + "\n" for i in range(0, len(b), width))


def write(path, data):
    path = os.path.join(ROOT, path)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode) as f:
        f.write(data)
    print("wrote", os.path.relpath(path, ROOT), len(data))


def main():
    msgs = messages()
    all_sections = msgs["all-sections"]

    # A message with every section but the footer, as raw bytes: the
    # sample of cmd/amqpdump's -o test and of examples/handler.
    write("testdata/amqpdump/all-sections.amqp", all_sections)
    write("examples/handler/sample.amqp", all_sections)

    # Application properties of 16 types, as hex text.
    write("testdata/amqpdump/application-properties.hex",
          "# testdata/proton/messages.jsonl: application-properties\n"
          + hex_lines(msgs["application-properties"]))

    # Several messages one after another, for the types of their bodies.
    text = ""
    for name in ["body-value-described-array", "body-value-decimals",
                 "body-value-array", "body-value-map", "body-sequence",
                 "message-id-string", "footer-appended-via-data"]:
        text += "# testdata/proton/messages.jsonl: %s\n" % name
        text += hex_lines(msgs[name])
    write("testdata/amqpdump/bodies.hex", text)

    # all-sections cut inside the properties section (the list8 at 67
    # claims more bytes than remain).
    write("testdata/amqpdump/bad-truncated.hex",
          "# all-sections cut after 120 of its %d bytes\n" % len(all_sections)
          + hex_lines(all_sections[:120]))

    # all-sections with the value of its application property "p"
    # replaced by 0x3f, which is no format code.
    i = all_sections.index(bytes.fromhex("a10170a10171"))
    bad = all_sections[:i + 3] + b"\x3f" + all_sections[i + 4:]
    write("testdata/amqpdump/bad-code.hex",
          "# all-sections with 0x3f (no format code) at offset %d\n" % (i + 3)
          + hex_lines(bad))

    # A connection stream: the AMQP protocol header, an empty frame, then
    # a frame whose data offset is 1.
    write("testdata/amqpdump/bad-doff.hex",
          "# protocol header\n414d515000010000\n"
          + "# empty frame\n0000000802000000\n"
          + "# frame with doff 1\n0000000c01000000 00537045\n")

    # A connection stream with a fault in most frames, for amqpdump's
    # going on after a bad frame or message: every good frame after a bad
    # one is printed.
    def frame(body, doff=2, typ=0, channel=0):
        return (8 + len(body)).to_bytes(4, "big") + bytes([doff, typ]) + channel.to_bytes(2, "big") + body
    write("testdata/amqpdump/bad-frames.hex",
          "# protocol header\n414d515000010000\n"
          + "# open, container-id \"a\"\n" + frame(bytes.fromhex("005310c00401a10161")).hex() + "\n"
          + "# a frame whose data offset is 1: skipped by its size, 12\n0000000c01000000 00537045\n"
          + "# begin whose second field has no format code (0x3f)\n" + frame(bytes.fromhex("005311c00302403f")).hex() + "\n"
          + "# begin whose next-outgoing-id is a string\n" + frame(bytes.fromhex("005311c0070440a101784343")).hex() + "\n"
          + "# transfer of a message whose data section is cut short\n"
          + frame(bytes.fromhex("005314c006034343a00100") + bytes.fromhex("005375a0050102")).hex() + "\n"
          + "# transfer of a message with two header sections\n"
          + frame(bytes.fromhex("005314c007034352 01a00101".replace(" ", "")) + bytes.fromhex("0053704500537045")).hex() + "\n"
          + "# end\n" + frame(bytes.fromhex("00531745")).hex() + "\n"
          + "# a frame of 32 bytes cut after 10\n0000002002000000 0053\n")

    # Values that would print far more lines than they have bytes: an
    # array of 255 nulls in 4 bytes, a list of five equal ulongs, and 34
    # lists nested around a null (deeper than the 32 levels amqpdump
    # indents).
    nested = bytes.fromhex("40")
    for _ in range(34):
        nested = bytes([0xc0, len(nested) + 1, 1]) + nested
    write("testdata/amqpdump/zero-width.hex",
          "# array8 of 255 nulls\ne002ff40\n"
          + "# list8 of five smallulong 1\nc00b05" + "5301" * 5 + "\n"
          + "# 34 lists around a null\n" + hex_lines(nested))

    # The filter example's sample: header, properties, application
    # properties with a "secret", a string body, and no message
    # annotations, written by Proton.
    import proton
    m = proton.Message(
        id="order-17", subject="order", content_type="text/plain",
        durable=True, priority=5,
        properties={"customer": "alice", "secret": "hunter2", "items": proton.int32(3)},
        body="two apples")
    write("examples/filter/sample.amqp", bytes(m.encode()))


if __name__ == "__main__":
    main()
