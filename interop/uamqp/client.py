#!/usr/bin/python3
"""Azure uAMQP-C (Debian python3-uamqp 1.5) client of the amqpsax interop corpus.

    AMQP_ADDR=host:port AMQP_CA=cert.pem /usr/bin/python3 interop/uamqp/client.py proton|rabbitmq

uAMQP's Python binding speaks only TLS (amqps): the recorder (interop/cmd/record
-tls) terminates TLS with a throwaway certificate, named by AMQP_CA, and records
the AMQP bytes inside.

RabbitMQ 3.10 and uAMQP-C cannot exchange messages at all, in either direction:

  - uAMQP as sender: RabbitMQ's first flow leaves delivery-count out (the spec
    says it MUST be set once the receiver has seen the sender's attach);
    uAMQP-C logs "Cannot get delivery count" and its sender goes idle, never
    sending a transfer;
  - uAMQP as receiver: RabbitMQ's attach (role sender) has no target; uAMQP-C
    takes a peer attach without source or target as a refusal ("Link ATTACH
    frame missing source and/or target. DETACH pending") and never gives credit.

`rabbitmq` records those two attempts (a few seconds each). `proton` runs the
full session against interop/proton/broker.py (Qpid Proton's engine, a
store-and-forward broker that forwards the exact bytes):

  queue A  unsettled sender (settle mode first) and a pre-settled sender; a
           receiver (settle mode second, uAMQP's PeekLock) that accepts most,
           rejects some, releases some and modifies some (those two come back)
  queue B  receiver that asks for settled deliveries

Messages carry every section uAMQP writes (header, delivery-annotations,
message-annotations, properties with every field, application-properties,
footer) and every body kind (data: one and several sections, amqp-sequence,
amqp-value of many types); frames are at most 512 bytes.
"""

import datetime
import os
import signal
import sys
import time
import uuid

from uamqp import ReceiveClient, SendClient, authentication, c_uamqp, constants, types
from uamqp.address import Source, Target
from uamqp.message import Message, MessageHeader, MessageProperties

ADDR = os.environ.get('AMQP_ADDR', '127.0.0.1:5673')
HOST, PORT = ADDR.split(':')
CA = os.environ.get('AMQP_CA')
RUN = os.environ.get('AMQPSAX_RUN', uuid.uuid4().hex[:8])
MAX_FRAME = int(os.environ.get('AMQPSAX_MAX_FRAME', '512'))
FIRST = constants.ReceiverSettleMode.ReceiveAndDelete  # rcv-settle-mode first
SECOND = constants.ReceiverSettleMode.PeekLock  # rcv-settle-mode second


def node(cls, path):
    """A Source/Target whose address is exactly path (uAMQP's Address would
    otherwise send the whole amqps:// URL)."""
    a = cls('amqps://localhost' + path)
    a._address.address = c_uamqp.string_value(path.encode())  # noqa: SLF001
    return a


def auth(anonymous):
    if anonymous:
        return authentication.SASLAnonymous('localhost', port=int(PORT), verify=CA)
    return authentication.SASLPlain('localhost', 'guest', 'guest', port=int(PORT), verify=CA)


def sym(s):
    return types.AMQPSymbol(s)


def header(i):
    h = MessageHeader()
    h.durable = bool(i % 2)
    h.priority = i * 3
    h.time_to_live = 60000 + i
    h.first_acquirer = bool(i % 2)
    h.delivery_count = i
    return h


def properties(i):
    ids = [types.AMQPuLong(1000 + i), uuid.UUID(int=i), bytearray(b'id-%d' % i), 'id-%d' % i]
    return MessageProperties(
        message_id=ids[i % 4], user_id=b'guest', to='/queue/somewhere', subject='subject-%d' % i,
        reply_to='/queue/reply', correlation_id='corr-%d' % i if i % 2 else types.AMQPuLong(i),
        content_type='application/octet-stream', content_encoding='identity',
        absolute_expiry_time=1893456000000, creation_time=1700000000000 + i,
        group_id='group-1', group_sequence=i, reply_to_group_id='reply-group')


APP_PROPS = {
    'string': 'value', 'long': types.AMQPLong(123456789012), 'int': types.AMQPInt(-7),
    'short': types.AMQPShort(300), 'byte': types.AMQPByte(-3), 'ubyte': types.AMQPuByte(200),
    'ushort': types.AMQPuShort(60000), 'uint': types.AMQPuInt(4000000000),
    'ulong': types.AMQPuLong(2**63 + 5), 'bool': True, 'double': 2.5, 'null': None,
    'uuid': uuid.UUID('6ba7b810-9dad-11d1-80b4-00c04fd430c8'), 'binary': bytearray(b'\x00\x01\x02'),
    'timestamp': datetime.datetime(2023, 11, 14, 22, 13, 20, tzinfo=datetime.timezone.utc),
    'symbol': sym('sym'), 'number': 42, 'big': 2**40,
}


def value(v, name):
    return Message(body=v, body_type=constants.MessageBodyType.Value,
                   application_properties={'case': name})


def plan_a():
    out = []
    big = ''.join(chr(ord('a') + i % 26) for i in range(6000))
    values = [
        ('value-string', 'hello from uamqp'),
        ('value-empty-string', ''),
        ('value-int-small', 7),
        ('value-int-large', 2**40),
        ('value-negative', -42),
        ('value-long', types.AMQPLong(1234567890123)),
        ('value-int', types.AMQPInt(-42)),
        ('value-short', types.AMQPShort(-300)),
        ('value-byte', types.AMQPByte(-128)),
        ('value-ubyte', types.AMQPuByte(255)),
        ('value-ushort', types.AMQPuShort(65535)),
        ('value-uint', types.AMQPuInt(4294967295)),
        ('value-ulong', types.AMQPuLong(2**64 - 1)),
        ('value-double', 3.141592653589793),
        ('value-bool', False),
        ('value-null', None),
        ('value-binary', bytearray(b'\xde\xad\xbe\xef')),
        ('value-bytes-as-string', b'python bytes'),
        ('value-symbol', sym('a-symbol')),
        # no char: types.AMQPChar fails on every argument in python3-uamqp 1.5
        ('value-uuid', uuid.UUID('12345678-1234-5678-1234-567812345678')),
        ('value-timestamp', datetime.datetime(2023, 11, 14, 22, 13, 20, 123000,
                                              tzinfo=datetime.timezone.utc)),
        ('value-list', [1, 'two', 3.5, None, True, [bytearray(b'nested')]]),
        ('value-map', {'a': 1, sym('b'): [1, 2], types.AMQPuLong(3): {'c': None}}),
        ('value-array-int', types.AMQPArray([1, 2, 100000, -4])),
        ('value-array-string', types.AMQPArray(['x', 'yy', 'zzz'])),
        ('value-described-symbol', types.AMQPDescribed(sym('com.example:point'), [1, 2])),
        ('value-described-ulong', types.AMQPDescribed(types.AMQPuLong(0x0000468C00000001), 'vendor')),
        ('value-large-string', big),
    ]
    for name, v in values:
        out.append((name, value(v, name)))
    data = constants.MessageBodyType.Data
    seq = constants.MessageBodyType.Sequence
    out += [
        ('data-small', Message(body=b'data body', body_type=data)),
        ('data-empty', Message(body=b'', body_type=data)),
        ('data-1500', Message(body=bytes(i % 251 for i in range(1500)), body_type=data)),
        ('data-9000', Message(body=bytes(i % 253 for i in range(9000)), body_type=data)),
        ('data-x3', Message(body=[b'first', b'second', b'third'], body_type=data)),
        ('sequence-1', Message(body=[[1, 'a', bytearray(b'b'), None]], body_type=seq)),
        ('sequence-x2', Message(body=[[1], ['b', True]], body_type=seq)),
    ]
    for i in range(6):
        body = 'full body %d' % i if i % 3 == 0 else (b'full data %d' % i if i % 3 == 1 else [['full', i]])
        kind = [constants.MessageBodyType.Value, data, seq][i % 3]
        m = Message(
            body=body, body_type=kind, header=header(i), properties=properties(i),
            application_properties=APP_PROPS,
            # uAMQP writes str keys as strings; AMQPSymbol keys as symbols.
            annotations={'x-opt-string-key': 'ma', sym('x-opt-i'): i, types.AMQPuLong(0x1234): 'ulong-key'},
            delivery_annotations={sym('x-opt-da'): 'da', 'x-opt-da-string-key': i} if i != 5 else None,
            footer={sym('x-opt-footer'): 'f%d' % i, 'x-opt-string-key': True} if i % 2 else None)
        out.append(('full-%d' % i, m))
    out += [
        ('header-only', Message(body='h', body_type=constants.MessageBodyType.Value, header=header(2))),
        ('delivery-annotations-only', Message(body=b'da', body_type=data,
                                              delivery_annotations={sym('x-opt-da'): 1})),
        ('footer-only', Message(body=b'footer', body_type=data, footer={sym('x-opt-hash'): bytearray(b'\x01')})),
        ('properties-all-large', Message(body=bytes(3000), body_type=data, properties=properties(7))),
    ]
    return out


def plan_presettled():
    return [('presettled-%d' % i, Message(body=b'ps %d' % i, body_type=constants.MessageBodyType.Data,
                                          application_properties={'i': i})) for i in range(10)]


def plan_b():
    return [('b-%d' % i, Message(body='b %d' % i, body_type=constants.MessageBodyType.Value,
                                 properties=MessageProperties(subject='b'),
                                 annotations={sym('x-opt-b'): i})) for i in range(8)]


def send(q, plan, settled=False, anonymous=True):
    c = SendClient(node(Target, q), auth=auth(anonymous), max_frame_size=MAX_FRAME,
                   client_name='amqpsax-uamqp-sender', receive_settle_mode=FIRST,
                   send_settle_mode=constants.SenderSettleMode.Settled if settled else
                   constants.SenderSettleMode.Unsettled,
                   properties={'product': 'amqpsax-interop'})
    for _, m in plan:
        c.queue_message(m)
    results = c.send_all_messages(close_on_done=True)
    bad = [r for r in results if r != constants.MessageState.SendComplete]
    if bad:
        raise SystemExit('uamqp: %d of %d sends failed: %s' % (len(bad), len(results), bad[:3]))
    return len(results)


def key_of(m):
    """What tells a message from the others, to spot redeliveries (uAMQP
    cannot re-encode a received message, and str() of a binary body fails)."""
    d = m.get_data()
    if hasattr(d, '__next__'):
        d = list(d)
    return repr(m.application_properties) + repr(d)


def run_proton():
    qa = '/queue/amqpsax-uamqp-a-' + RUN
    qb = '/queue/amqpsax-uamqp-b-' + RUN
    sent = send(qa, plan_a())
    sent += send(qa, plan_presettled(), settled=True)

    rc = ReceiveClient(node(Source, qa), auth=auth(True), max_frame_size=MAX_FRAME,
                       client_name='amqpsax-uamqp-receiver', auto_complete=False, prefetch=10,
                       receive_settle_mode=SECOND)
    seen = {}
    expected, got = sent, 0
    deadline = time.time() + 30
    while got < expected and time.time() < deadline:
        for m in rc.receive_message_batch(max_batch_size=10, timeout=2000):
            got += 1
            key = key_of(m)
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > 1:
                m.accept()
            elif got % 13 == 5:
                m.reject(condition='amqp:internal-error', description='rejected by amqpsax interop')
            elif got % 13 == 8:
                m.release()
                expected += 1
            elif got % 13 == 11:
                m.modify(True, True, annotations={sym('x-opt-modified'): 'yes'})
                expected += 1
            else:
                m.accept()
    rc.close()
    if got < expected:
        raise SystemExit('uamqp: queue A: received %d of %d' % (got, expected))

    send(qb, plan_b())
    rb = ReceiveClient(node(Source, qb), auth=auth(True), max_frame_size=MAX_FRAME,
                       client_name='amqpsax-uamqp-receiver-b', prefetch=8,
                       send_settle_mode=constants.SenderSettleMode.Settled, receive_settle_mode=FIRST)
    n = 0
    deadline = time.time() + 20
    while n < len(plan_b()) and time.time() < deadline:
        n += len(rb.receive_message_batch(max_batch_size=8, timeout=2000))
    rb.close()
    if n < len(plan_b()):
        raise SystemExit('uamqp: queue B: received %d of %d' % (n, len(plan_b())))
    print('uamqp: sent %d to A, received %d from A (with redeliveries), %d through B'
          % (sent, got, n))


def run_rabbitmq():
    """The two attempts RabbitMQ 3.10 and uAMQP-C cannot complete (see the
    module doc), a few seconds each; each is expected to fail."""
    q = '/queue/amqpsax-uamqp-refused-' + RUN
    c = SendClient(node(Target, q), auth=auth(False), max_frame_size=MAX_FRAME,
                   client_name='amqpsax-uamqp-sender', receive_settle_mode=FIRST)
    m = Message(body=b'never sent', body_type=constants.MessageBodyType.Data)
    c.open()
    c.queue_message(m)
    deadline = time.time() + 4
    while time.time() < deadline and m.state != constants.MessageState.SendComplete:
        c.do_work()
        time.sleep(0.05)
    c.close()
    if m.state == constants.MessageState.SendComplete:
        raise SystemExit('uamqp: RabbitMQ took a message from uAMQP; update interop/uamqp/client.py '
                         'and doc/peers.md')
    print('uamqp: sending to RabbitMQ failed as expected (message state %s)' % m.state)

    rc = ReceiveClient(node(Source, q), auth=auth(False), max_frame_size=MAX_FRAME,
                       client_name='amqpsax-uamqp-receiver', prefetch=5, receive_settle_mode=FIRST)
    got = []
    rc.open()
    deadline = time.time() + 3
    while time.time() < deadline and not got:
        rc.do_work()
        got = rc._received_messages.qsize() if hasattr(rc, '_received_messages') else 0  # noqa: SLF001
        time.sleep(0.05)
    rc.close()
    if got:
        raise SystemExit('uamqp: received from RabbitMQ; update interop/uamqp/client.py and doc/peers.md')
    print('uamqp: receiving from RabbitMQ failed as expected (no credit given)')


def main():
    signal.alarm(120)
    peer = sys.argv[1] if len(sys.argv) > 1 else 'proton'
    if peer == 'proton':
        run_proton()
    elif peer == 'rabbitmq':
        run_rabbitmq()
    else:
        raise SystemExit('usage: client.py proton|rabbitmq')


if __name__ == '__main__':
    sys.exit(main())
