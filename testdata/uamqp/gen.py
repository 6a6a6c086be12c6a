#!/usr/bin/python3
"""Messages written by Azure uAMQP-C's own message encoder, with Qpid Proton's
traces, for amqpsax's tests (see README.md).

    /usr/bin/python3 testdata/uamqp/gen.py

Needs Debian's python3-uamqp (uAMQP-C 1.5 through its Python binding) and
python3-qpid-proton (Proton 0.37), both for Debian's /usr/bin/python3. No
network: every message is `uamqp.Message(...).encode_message()`, uAMQP-C's
message_encode, the bytes it puts in transfer frames. Writes messages.jsonl
next to this file: {"name", "hex", "trace", "sections"}, where "trace" comes
from Proton's decoder (the walk of testdata/proton/gen.py) and "sections" is
the order of the top-level section descriptors, for the README's claims.
Deterministic: the same packages always write the same file.
"""

import datetime
import json
import os
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'proton'))

import gen as proton_gen  # noqa: E402  testdata/proton/gen.py: the Proton walk
from proton import Data  # noqa: E402
from uamqp import constants, types  # noqa: E402
from uamqp.message import Message, MessageHeader, MessageProperties  # noqa: E402

DATA = constants.MessageBodyType.Data
VALUE = constants.MessageBodyType.Value
SEQ = constants.MessageBodyType.Sequence
NAMES = {0x70: 'header', 0x71: 'delivery-annotations', 0x72: 'message-annotations',
         0x73: 'properties', 0x74: 'application-properties', 0x75: 'data',
         0x76: 'amqp-sequence', 0x77: 'amqp-value', 0x78: 'footer'}


def sym(s):
    return types.AMQPSymbol(s)


def header(durable=None, priority=None, ttl=None, first=None, count=0):
    h = MessageHeader()
    h.durable, h.priority, h.time_to_live, h.first_acquirer, h.delivery_count = \
        durable, priority, ttl, first, count
    return h


def props(i, **kw):
    ids = [types.AMQPuLong(1000 + i), uuid.UUID(int=i), bytearray(b'id-%d' % i), 'id-%d' % i]
    p = dict(message_id=ids[i % 4], user_id=b'guest', to='/queue/somewhere',
             subject='subject-%d' % i, reply_to='/queue/reply',
             correlation_id='corr-%d' % i if i % 2 else types.AMQPuLong(i),
             content_type='application/json', content_encoding='identity',
             absolute_expiry_time=1893456000000, creation_time=1700000000000 + i,
             group_id='group-1', group_sequence=i, reply_to_group_id='reply-group')
    p.update(kw)
    return MessageProperties(**p)


APP = {'string': 'v', 'int': 42, 'long': types.AMQPLong(2**40), 'bool': True, 'double': 0.5,
       'null': None, 'uuid': uuid.UUID(int=7), 'binary': bytearray(b'\x01\x02'),
       'symbol': sym('s'), 'ulong': types.AMQPuLong(2**64 - 1)}


def cases():
    out = []

    def add(name, **kw):
        out.append((name, Message(**kw)))

    # bodies alone
    add('body-data', body=b'hello', body_type=DATA)
    add('body-data-empty', body=b'', body_type=DATA)
    add('body-data-x3', body=[b'one', b'two', b'three'], body_type=DATA)
    add('body-data-300', body=bytes(range(256)) + bytes(44), body_type=DATA)
    add('body-sequence', body=[[1, 'a', None]], body_type=SEQ)
    add('body-sequence-x2', body=[[1], ['b', True]], body_type=SEQ)
    for name, v in [('string', 'text'), ('int', 7), ('negative', -7), ('large-int', 2**40),
                    ('double', 2.5), ('bool', True), ('null', None), ('uuid', uuid.UUID(int=1)),
                    ('binary', bytearray(b'\x00\xff')), ('bytes', b'python bytes'),
                    ('symbol', sym('sym')), ('ulong', types.AMQPuLong(5)),
                    ('long', types.AMQPLong(-5)), ('uint', types.AMQPuInt(5)),
                    ('ushort', types.AMQPuShort(5)), ('ubyte', types.AMQPuByte(5)),
                    ('short', types.AMQPShort(-5)), ('byte', types.AMQPByte(-5)),
                    ('list', [1, 'two', [3]]), ('map', {'k': 1, sym('s'): None}),
                    ('array', types.AMQPArray([1, 2, 3])),
                    ('described', types.AMQPDescribed(sym('x:y'), [1])),
                    ('timestamp', datetime.datetime(2023, 11, 14, 22, 13, 20, tzinfo=datetime.timezone.utc))]:
        add('body-value-' + name, body=v, body_type=VALUE)
    # each section alone with a body
    add('header-default', body=b'b', body_type=DATA, header=header())
    add('header-all', body=b'b', body_type=DATA,
        header=header(durable=True, priority=9, ttl=1000, first=True, count=3))
    add('delivery-annotations', body=b'b', body_type=DATA,
        delivery_annotations={sym('x-opt-da'): 1})
    add('delivery-annotations-string-key', body=b'b', body_type=DATA,
        delivery_annotations={'x-opt-da': 1})
    add('message-annotations', body=b'b', body_type=DATA,
        annotations={sym('x-opt-ma'): 'v', types.AMQPuLong(7): 'ulong key'})
    add('message-annotations-string-key', body=b'b', body_type=DATA, annotations={'x-opt-ma': 'v'})
    for i in range(4):
        add('properties-%d' % i, body=b'b', body_type=DATA, properties=props(i))
    add('properties-subject-only', body=b'b', body_type=DATA,
        properties=MessageProperties(subject='s'))
    add('application-properties', body=b'b', body_type=DATA, application_properties=APP)
    add('footer', body=b'b', body_type=DATA, footer={sym('x-opt-hash'): bytearray(b'\x01')})
    add('footer-string-key', body=b'b', body_type=DATA, footer={'x-opt-hash': 'h'})
    # pairs that show the order
    add('application-properties+delivery-annotations', body=b'b', body_type=DATA,
        application_properties={'k': 'v'}, delivery_annotations={sym('x-opt-da'): 1})
    add('message-annotations+delivery-annotations', body=b'b', body_type=DATA,
        annotations={sym('x-opt-ma'): 1}, delivery_annotations={sym('x-opt-da'): 1})
    add('footer+delivery-annotations', body=b'b', body_type=DATA,
        footer={sym('x-opt-f'): 1}, delivery_annotations={sym('x-opt-da'): 1})
    # everything
    for i, (body, kind) in enumerate([('all value', VALUE), (b'all data', DATA),
                                      ([[1, 'all']], SEQ), ([b'a', b'b'], DATA)]):
        add('all-sections-%d' % i, body=body, body_type=kind,
            header=header(durable=True, priority=i, ttl=60000, first=bool(i % 2), count=i),
            delivery_annotations={sym('x-opt-da'): i, sym('x-opt-lock'): uuid.UUID(int=i)},
            annotations={sym('x-opt-ma'): 'ma', types.AMQPuLong(0x1234): i},
            properties=props(i), application_properties=APP,
            footer={sym('x-opt-footer'): 'f%d' % i})
    return out


def sections(buf):
    out, off = [], 0
    while off < len(buf):
        d = Data()
        n = d.decode(buf[off:])
        d.rewind()
        d.next()
        d.enter()
        d.next()
        out.append(NAMES.get(d.get_ulong(), '?'))
        off += n
    return out


def main():
    rows = []
    orders = {}
    for name, m in cases():
        buf = bytes(m.encode_message())
        order = sections(buf)
        rows.append({'name': name, 'hex': buf.hex(), 'trace': proton_gen.proton_decode_all(buf),
                     'sections': order})
        orders.setdefault(' '.join(order), []).append(name)
    proton_gen.write_jsonl(os.path.join(HERE, 'messages.jsonl'), rows)
    print('messages: %d' % len(rows))
    for order, names in sorted(orders.items(), key=lambda kv: -len(kv[0])):
        print('  %-100s %d e.g. %s' % (order, len(names), names[0]))


if __name__ == '__main__':
    sys.exit(main())
