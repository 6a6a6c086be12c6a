#!/usr/bin/python3
"""Qpid Proton (python3-qpid-proton 0.37) client for the amqpsax interop corpus.

Connects to AMQP_ADDR (host:port; record.sh points it at the recording proxy
in front of RabbitMQ), sends messages of every body kind with every section
Proton's Message can write, receives them back and settles them in every way:

  queue A  unsettled sender (broker's disposition awaited for each message)
           and a pre-settled sender (AtMostOnce); an unsettled receiver that
           accepts most, rejects some and releases some (the released ones come
           back and are accepted then)
  queue B  unsettled sender, pre-settled receiver (the broker settles first)

Frames are at most 512 bytes (max_frame_size), so every message over ~450
bytes is split over several transfer frames, in both directions.

RabbitMQ 3.10 ends the connection on a message with delivery-annotations
and on an amqp-value holding a list of two or more elements, and the session
on a modified outcome: those go last, each on a connection of its own
(refused_by_broker).

Proton 0.37's Message has no footer and writes one body section; the
messages marked "+footer" and "data x N" append a footer / more data sections
written with Proton's own Data encoder (as testdata/proton/gen.py does).

Run with Debian's /usr/bin/python3. Exits non-zero on any mismatch.
"""

import os
import sys
import uuid

from proton import (Array, Data, Described, Message, char, decimal32, decimal64,
                    decimal128, float32, int32, short, symbol, timestamp, ubyte,
                    uint, ulong, ushort)
from proton import byte as pbyte
from proton.reactor import AtMostOnce
from proton.utils import BlockingConnection

ADDR = os.environ.get('AMQP_ADDR', '127.0.0.1:5672')
RUN = os.environ.get('AMQPSAX_RUN', uuid.uuid4().hex[:8])
QA = '/queue/amqpsax-proton-a-' + RUN
QB = '/queue/amqpsax-proton-b-' + RUN


class Extra(Message):
    """A Message whose encoding is followed by more sections written with
    proton.Data: extra data sections and/or a footer."""

    def __init__(self, extra_data=(), footer=None, **kw):
        super().__init__(**kw)
        self.extra_data = list(extra_data)
        self.footer = footer

    def encode(self):
        out = super().encode()
        for chunk in self.extra_data:
            d = Data()
            d.put_described()
            d.enter()
            d.put_ulong(0x75)
            d.put_binary(chunk)
            d.exit()
            out += d.encode()
        if self.footer is not None:
            d = Data()
            d.put_object(Described(ulong(0x78), self.footer))
            out += d.encode()
        return out


def full_properties(i):
    return dict(
        id=ulong(1000 + i) if i % 4 == 0 else (uuid.UUID(int=i) if i % 4 == 1 else
                                               (b'id-%d' % i if i % 4 == 2 else 'id-%d' % i)),
        user_id=b'guest',
        address=QA,
        subject='subject-%d' % i,
        reply_to='/queue/reply',
        correlation_id='corr-%d' % i if i % 2 else ulong(i),
        content_type=symbol('application/octet-stream'),
        content_encoding=symbol('identity'),
        expiry_time=timestamp(1893456000000),
        creation_time=timestamp(1700000000000 + i),
        group_id='group-1',
        group_sequence=i,
        reply_to_group_id='reply-group',
    )


APP_PROPS = {
    'string': 'value', 'long': 123456789012, 'int': int32(-7), 'short': short(300),
    'byte': pbyte(-3), 'ubyte': ubyte(200), 'ushort': ushort(60000), 'uint': uint(4000000000),
    'ulong': ulong(2**63 + 5), 'bool': True, 'double': 2.5, 'float': float32(0.5),
    'null': None, 'uuid': uuid.UUID('6ba7b810-9dad-11d1-80b4-00c04fd430c8'),
    'timestamp': timestamp(1700000000000), 'binary': b'\x00\x01\x02', 'char': char('Z'),
    'symbol': symbol('sym'),
}


def messages_a():
    """(name, message) for queue A: every body kind and section."""
    out = []
    big = ''.join(chr(ord('a') + i % 26) for i in range(6000))
    values = [
        ('value-string', 'hello from proton'),
        ('value-empty-string', ''),
        ('value-long', 1234567890123),
        ('value-int', int32(-42)),
        ('value-ulong', ulong(18446744073709551615)),
        ('value-uint', uint(7)),
        ('value-ubyte', ubyte(255)),
        ('value-ushort', ushort(65535)),
        ('value-short', short(-300)),
        ('value-byte', pbyte(-128)),
        ('value-double', 3.141592653589793),
        ('value-float', float32(1.5)),
        ('value-bool', False),
        ('value-null', None),
        ('value-binary', b'\xde\xad\xbe\xef'),
        ('value-symbol', symbol('a-symbol')),
        ('value-uuid', uuid.UUID('12345678-1234-5678-1234-567812345678')),
        ('value-timestamp', timestamp(1700000000123)),
        ('value-char', char('\u00e9')),
        ('value-decimal32', decimal32(0x2200000a)),
        ('value-decimal64', decimal64(0x2238000000000010)),
        ('value-decimal128', decimal128(bytes(range(16)))),
        # RabbitMQ 3.10 closes the connection on an amqp-value list of more
        # than one element (see crash_value_list); one element gets through.
        ('value-list-1', [[1, 'two', 3.0, None, True, [b'nested']]]),
        ('value-map', {'a': 1, symbol('b'): [1, 2], ulong(3): {'c': None}}),
        ('value-array-int', Array(None, Data.INT, 1, 2, 3, -4)),
        ('value-array-string', Array(None, Data.STRING, 'x', 'yy', 'zzz')),
        ('value-described', Described(symbol('com.example:point'), [int32(1), int32(2)])),
        ('value-described-ulong', Described(ulong(0x0000468C00000001), 'vendor')),
        ('value-large-string', big),
    ]
    for name, v in values:
        out.append((name, Message(body=v, properties={'case': name})))
    data = [
        ('data-small', Message(body=b'data body', inferred=True)),
        ('data-empty', Message(body=b'', inferred=True)),
        ('data-1500', Message(body=bytes(i % 251 for i in range(1500)), inferred=True)),
        ('data-9000', Message(body=bytes(i % 253 for i in range(9000)), inferred=True)),
        ('data-x3', Extra(body=b'first', inferred=True, extra_data=[b'second', b'third'])),
        ('sequence-1', Message(body=[1, 'a', b'b', None], inferred=True)),
        ('sequence-empty', Message(body=[], inferred=True)),
    ]
    out.extend(data)
    for i in range(4):
        out.append(('full-%d' % i, Extra(
            durable=bool(i % 2), priority=i * 3, ttl=60 + i, first_acquirer=bool(i % 2),
            delivery_count=i,
            annotations={symbol('x-opt-ma'): 'ma', symbol('x-opt-i'): i,
                         ulong(0x1234): 'ulong-key'},
            properties=APP_PROPS,
            body=('full body %d' % i) if i < 2 else b'full data %d' % i,
            inferred=True,
            footer={symbol('x-opt-footer'): 'f%d' % i} if i % 2 else None,
            **full_properties(i))))
    out.append(('header-only-fields', Message(durable=True, priority=9, ttl=1000, body='h')))
    out.append(('footer-only', Extra(body='with footer', footer={symbol('x-opt-hash'): b'\x01\x02'})))
    out.append(('properties-all-large', Message(body=bytes(3000), inferred=True,
                                                **full_properties(7))))
    return out


def messages_presettled():
    return [('presettled-%d' % i, Message(body='presettled %d' % i if i % 2 else b'ps %d' % i,
                                          inferred=True, properties={'i': i}))
            for i in range(10)]


def messages_b():
    return [('b-%d' % i, Message(body=['b', i] if i % 2 else 'b %d' % i, inferred=True,
                                 subject='b', annotations={symbol('x-opt-b'): i}))
            for i in range(8)]


def refused_by_broker():
    """What RabbitMQ 3.10's AMQP 1.0 plugin cannot take, each on a connection
    of its own, which the broker ends (or whose session it ends). The
    recordings keep the client's bytes and the broker's answer.

    - an amqp-value holding a list of two elements: the plugin reads the
      list as the fields of the amqp-value record and its session fails;
    - delivery-annotations: the plugin's section parser goes from header
      straight to message-annotations ("unexpected_trailing_sections");
    - the modified outcome: "Unrecognised state", the session is ended
      with amqp:invalid-field.
    """
    def send(m):
        def run(conn, q):
            conn.create_sender(q, name='refused').send(m)
        return run

    def modify(conn, q):
        conn.create_sender(q, name='refused-s').send(Message(body='to be modified'))
        r = conn.create_receiver(q, name='refused-r', credit=1)
        r.receive(timeout=10)
        r.release(delivered=True)  # modified
        conn.create_sender(q, name='after-modified').send(Message(body='after'))

    cases = [
        ('value-list-2', send(Message(body=[1, 'two']))),
        ('delivery-annotations', send(Message(body='with delivery annotations',
                                              instructions={symbol('x-opt-da'): 'da',
                                                            symbol('x-opt-n'): 1}))),
        ('modified', modify),
    ]
    for name, run in cases:
        conn = BlockingConnection('amqp://guest:guest@' + ADDR, timeout=4, max_frame_size=512,
                                  container_id='amqpsax-proton-' + name)
        try:
            run(conn, '/queue/amqpsax-proton-%s-%s' % (name, RUN))
        except Exception as e:  # noqa: BLE001 - the broker ends the connection
            print('proton: %s: refused by the broker as expected (%s)' % (name, type(e).__name__))
            try:
                conn.close()
            except Exception:  # noqa: BLE001
                pass
            continue
        raise SystemExit('proton: RabbitMQ accepted %s; update refused_by_broker and '
                         'doc/peers.md' % name)


def main():
    conn = BlockingConnection('amqp://guest:guest@' + ADDR, timeout=30, max_frame_size=512,
                              container_id='amqpsax-proton', properties={symbol('product'): 'amqpsax-interop'})
    snd = conn.create_sender(QA, name='a-unsettled')
    sent = 0
    for name, m in messages_a():
        snd.send(m)
        sent += 1
    ps = conn.create_sender(QA, name='a-presettled', options=AtMostOnce())
    for name, m in messages_presettled():
        ps.send(m)
        sent += 1

    # queue A: settle in every way; released and modified come back.
    rcv = conn.create_receiver(QA, name='a-receiver', credit=10)
    outcome = {}  # body repr -> times seen
    expected = sent
    got = 0
    n = 0
    while got < expected:
        m = rcv.receive(timeout=20)
        key = repr(m.body)
        outcome[key] = outcome.get(key, 0) + 1
        got += 1
        n += 1
        if outcome[key] > 1:
            rcv.accept()
        elif n % 13 == 5:
            rcv.reject()
        elif n % 13 == 8:
            rcv.release(delivered=False)  # released
            expected += 1
        else:
            rcv.accept()
    # RabbitMQ 3.10 answers a detach with closed=true by a detach without
    # it, which BlockingLink.close waits for in vain: detach (not close)
    # and do not wait; the connection's close ends everything.
    rcv.link.detach()

    # queue B: pre-settled receiver.
    sb = conn.create_sender(QB, name='b-sender')
    for name, m in messages_b():
        sb.send(m)
    rb = conn.create_receiver(QB, name='b-receiver', credit=8, options=AtMostOnce())
    for _ in messages_b():
        rb.receive(timeout=20)
    for link in (rb, sb, snd):
        link.link.detach()
    ps.link.close()  # closed=true, answered without closed=true
    conn.close()
    refused_by_broker()
    print('proton: sent %d to A, received %d from A (with redeliveries), 8 through B'
          % (sent, got))


if __name__ == '__main__':
    sys.exit(main())
