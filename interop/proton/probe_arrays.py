#!/usr/bin/python3
"""Which array element constructors RabbitMQ's AMQP 1.0 plugin accepts.

    AMQP_ADDR=127.0.0.1:5672 /usr/bin/python3 interop/proton/probe_arrays.py

For every format code that can construct array elements, sends (with Qpid
Proton's engine, as raw bytes) one message whose amqp-value is an array8 of two
elements of that code, each on a connection of its own, and reports whether the
broker took it (accepted outcome) or not (it ends the connection: RabbitMQ 3.10's
session process fails with failed_to_parse_constructor). Not part of the corpus:
it is how doc/peers.md's list was found. Takes about 3 s per refused code (some 75 s in all).
"""

import os
import struct
import sys

from proton.utils import BlockingConnection

ADDR = os.environ.get('AMQP_ADDR', '127.0.0.1:5672')

TWO = {  # code -> two elements of that code (no constructor)
    0x40: [b'', b''], 0x41: [b'', b''], 0x42: [b'', b''], 0x43: [b'', b''],
    0x44: [b'', b''], 0x45: [b'', b''],
    0x50: [b'\x01', b'\x02'], 0x51: [b'\x01', b'\xfe'], 0x52: [b'\x01', b'\x02'],
    0x53: [b'\x01', b'\x02'], 0x54: [b'\x01', b'\xfe'], 0x55: [b'\x01', b'\xfe'],
    0x56: [b'\x01', b'\x00'], 0x60: [b'\x00\x01'] * 2, 0x61: [b'\x00\x01'] * 2,
    0x70: [b'\0\0\0\1'] * 2, 0x71: [b'\0\0\0\1'] * 2, 0x72: [struct.pack('>f', 1.5)] * 2,
    0x73: [b'\0\0\0A'] * 2, 0x74: [b'\0\0\0\1'] * 2, 0x80: [b'\0' * 7 + b'\1'] * 2,
    0x81: [b'\0' * 7 + b'\1'] * 2, 0x82: [struct.pack('>d', 1.5)] * 2,
    0x83: [b'\0' * 7 + b'\1'] * 2, 0x84: [b'\0' * 8] * 2, 0x94: [b'\0' * 16] * 2,
    0x98: [b'\1' * 16] * 2, 0xa0: [b'\x01a'] * 2, 0xa1: [b'\x01a'] * 2, 0xa3: [b'\x01a'] * 2,
    0xb0: [b'\0\0\0\x01a'] * 2, 0xb1: [b'\0\0\0\x01a'] * 2, 0xb3: [b'\0\0\0\x01a'] * 2,
    0xc0: [b'\x01\x00'] * 2, 0xc1: [b'\x01\x00'] * 2,
    0xd0: [b'\0\0\0\4\0\0\0\0'] * 2, 0xd1: [b'\0\0\0\4\0\0\0\0'] * 2,
}


def array8(code, elems):
    body = bytes([len(elems), code]) + b''.join(elems)
    return bytes([0xe0, len(body)]) + body


def main():
    ok, refused = [], []
    for code, elems in sorted(TWO.items()):
        msg = bytes.fromhex('005377') + array8(code, elems)
        conn = BlockingConnection('amqp://guest:guest@' + ADDR, timeout=1)
        snd = conn.create_sender('/queue/amqpsax-probe-arrays')
        try:
            dlv = snd.link.delivery('%02x' % code)
            snd.link.send(msg)
            snd.link.advance()
            conn.wait(lambda: dlv.remote_state, timeout=1)
            ok.append(code)
        except Exception:  # noqa: BLE001 - the broker ended the connection
            refused.append(code)
        try:
            conn.close()
        except Exception:  # noqa: BLE001
            pass
    print('accepted:', ' '.join('%02x' % c for c in ok))
    print('refused: ', ' '.join('%02x' % c for c in refused))


if __name__ == '__main__':
    sys.exit(main())
