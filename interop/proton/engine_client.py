#!/usr/bin/python3
"""Qpid Proton (python3-qpid-proton) client of the engine interop tests.

Connects to AMQP_ADDR (host:port: amqpspy in front of examples/broker, or of
RabbitMQ) as AMQP_USER / AMQP_PASSWORD (SASL PLAIN), with frames of at most
4096 bytes, and on queue AMQP_QUEUE:

  * sends COUNT messages on an unsettled sender (each outcome awaited), then
    COUNT on a pre-settled one (AtMostOnce), and one of 100 KB (split over
    many transfer frames);
  * receives them back on an unsettled receiver with credit 10, accepting
    each; then sends 10 more to AMQP_QUEUE-ps and receives them on a receiver
    that asks for pre-settled deliveries;
  * compares every message received with the one sent: message-id, subject,
    application properties and every byte of the body.

Prints one summary line. Exits non-zero on any mismatch. Run with Debian's
/usr/bin/python3.
"""

import hashlib
import os
import sys

from proton import Message
from proton.reactor import AtMostOnce
from proton.utils import BlockingConnection

ADDR = os.environ.get('AMQP_ADDR', '127.0.0.1:5672')
QUEUE = os.environ['AMQP_QUEUE']
USER = os.environ.get('AMQP_USER', 'guest')
PASSWORD = os.environ.get('AMQP_PASSWORD', 'guest')
COUNT = int(os.environ.get('COUNT', '200'))


def body(seed, i, size):
    """size bytes determined by (seed, i)."""
    out = bytearray()
    block = 0
    while len(out) < size:
        out += hashlib.sha256(('%s-%d-%d' % (seed, i, block)).encode()).digest()
        block += 1
    return bytes(out[:size])


def make(seed, i, size):
    return Message(id='%s-%d' % (seed, i), subject='engine-interop',
                   properties={'i': i, 'seed': seed}, body=body(seed, i, size))


def check(m, seed, size_of):
    """Checks m against what was sent; returns its index."""
    props = m.properties or {}
    i = props.get('i')
    if props.get('seed') != seed or not isinstance(i, int):
        raise SystemExit('proton: a message not of this run: %r' % (props,))
    if m.id != '%s-%d' % (seed, i) or m.subject != 'engine-interop':
        raise SystemExit('proton: message %d: id %r subject %r' % (i, m.id, m.subject))
    want = body(seed, i, size_of(i))
    if bytes(m.body) != want:
        raise SystemExit('proton: message %d: body of %d bytes differs from the %d sent'
                         % (i, len(m.body), len(want)))
    return i


def main():
    conn = BlockingConnection('amqp://%s:%s@%s' % (USER, PASSWORD, ADDR), timeout=30,
                              max_frame_size=4096, allowed_mechs='PLAIN')
    seed = 'proton'
    big = COUNT * 2
    size_of = lambda i: 100 * 1024 if i == big else 64 + i % 300

    snd = conn.create_sender(QUEUE, name='unsettled')
    for i in range(COUNT):
        snd.send(make(seed, i, size_of(i)))  # waits for the outcome
    ps = conn.create_sender(QUEUE, name='presettled', options=AtMostOnce())
    for i in range(COUNT, 2 * COUNT):
        ps.send(make(seed, i, size_of(i)))
    snd.send(make(seed, big, size_of(big)))

    rcv = conn.create_receiver(QUEUE, name='receiver', credit=10)
    seen = set()
    for _ in range(2 * COUNT + 1):
        m = rcv.receive(timeout=20)
        i = check(m, seed, size_of)
        if i in seen:
            raise SystemExit('proton: message %d received twice' % i)
        seen.add(i)
        rcv.accept()
    if seen != set(range(2 * COUNT + 1)):
        raise SystemExit('proton: missing messages: %r' % sorted(set(range(2 * COUNT + 1)) - seen))

    # Pre-settled deliveries from the broker, through a queue of their own
    # (the first receiver still holds credit on QUEUE).
    sps = conn.create_sender(QUEUE + '-ps', name='sender-ps')
    for i in range(10):
        sps.send(make(seed + '-ps', i, 200))
    rps = conn.create_receiver(QUEUE + '-ps', name='receiver-presettled', credit=10, options=AtMostOnce())
    got = sorted(check(rps.receive(timeout=20), seed + '-ps', lambda i: 200) for _ in range(10))
    if got != list(range(10)):
        raise SystemExit('proton: pre-settled receiver got %r' % got)
    conn.close()
    print('proton: sent %d unsettled, %d pre-settled and one of 100 KB to %s; received all back, '
          'byte for byte; 10 more through a pre-settled receiver' % (COUNT, COUNT, QUEUE))


if __name__ == '__main__':
    main()
