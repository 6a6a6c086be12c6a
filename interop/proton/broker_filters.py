#!/usr/bin/python3
"""Qpid Proton (python3-qpid-proton) client of package broker's consumer
side (broker_filters_test.go), against the broker amqptest started at
AMQP_ADDR (host:port), topic/ addresses fan-out:

  * a selector: Selector("color = 'red' AND weight > 2") receives exactly
    the matching messages of a mixed stream; a selector with a syntax
    error is refused, amqp:invalid-field with the column in its
    description;
  * the anonymous relay: a sender with no target sends messages whose
    address (to) is set each, and each lands in its queue; one with no
    address is rejected;
  * shared subscriptions: two receivers of one link name "ssub", on two
    connections of one container, capability shared, split the stream to
    topic/shared; two receivers of one link name "gsub" on connections of
    two containers, capabilities shared and global, split it too; and two
    receivers of subscription "jsub" on one connection, named "jsub" and
    "jsub|2" as Qpid JMS names them.

Prints one summary line; exits non-zero on any failure. Run with Debian's
/usr/bin/python3.
"""

import os

from proton import Message, Data, symbol
from proton.reactor import Container, Selector, ReceiverOption
from proton.utils import BlockingConnection, LinkDetached, SendException

ADDR = os.environ.get('AMQP_ADDR', '127.0.0.1:5672')


def fail(msg):
    raise SystemExit('proton: ' + msg)


class Capabilities(ReceiverOption):
    """Source capabilities of a receiver, as Qpid JMS sets them for a
    shared (and global) subscription."""

    def __init__(self, *caps):
        self.caps = caps

    def apply(self, receiver):
        d = receiver.source.capabilities
        d.put_array(False, Data.SYMBOL)
        d.enter()
        for c in self.caps:
            d.put_symbol(symbol(c))
        d.exit()


def split(receivers, n):
    """Receives n messages from receivers, each up to its credit, and
    checks each of the n bodies came once."""
    seen = []
    for r in receivers:
        for _ in range(n // len(receivers)):
            m = r.receive(timeout=20)
            seen.append(m.body)
            r.accept()
    if sorted(seen) != sorted('s%d' % i for i in range(n)):
        fail('shared subscription: got %r' % seen)


def main():
    conn = BlockingConnection('amqp://%s' % ADDR, timeout=30)

    # a selector
    sel = conn.create_receiver('proton-sel', name='sel-good', credit=100, options=Selector("color = 'red' AND weight > 2"))
    snd = conn.create_sender('proton-sel')
    want = []
    for i, color in enumerate(['red', 'blue', 'red', 'green', 'red', 'red', 'blue']):
        snd.send(Message(body='c%d' % i, properties={'color': color, 'weight': i}))
        if color == 'red' and i > 2:
            want.append('c%d' % i)
    got = []
    for _ in want:
        m = sel.receive(timeout=20)
        got.append(m.body)
        sel.accept()
    if got != want:
        fail('selector: got %r, want %r' % (got, want))
    try:
        conn.create_receiver('proton-sel', name='sel-bad', options=Selector("color = 'red' AND"))
        fail('a selector with a syntax error was not refused')
    except LinkDetached as e:
        text = str(e)
        if 'invalid-field' not in text or 'column' not in text:
            fail('selector refused with %r' % text)

    # the anonymous relay
    relay = conn.create_sender(None)
    for i in range(3):
        for q in ('relay-a', 'relay-b'):
            relay.send(Message(address=q, body='%s-%d' % (q, i)))
    try:
        relay.send(Message(body='nowhere'))
        fail('a message with no address to the relay was not rejected')
    except SendException:
        pass
    for q in ('relay-a', 'relay-b'):
        r = conn.create_receiver(q, credit=10)
        for i in range(3):
            m = r.receive(timeout=20)
            if m.body != '%s-%d' % (q, i):
                fail('relay: %s got %r' % (q, m.body))
            r.accept()

    # shared subscriptions
    n = 20
    mine = []
    for _ in range(2):
        c = Container()
        c.container_id = 'proton-shared'
        mine.append(BlockingConnection('amqp://%s' % ADDR, timeout=30, container=c))
    subs = [c.create_receiver('topic/shared', name='ssub', credit=n // 2, options=Capabilities('shared'))
            for c in mine]
    jms = [conn.create_receiver('topic/shared', name=name, credit=n // 2, options=Capabilities('shared'))
           for name in ('jsub', 'jsub|2')]
    conn2 = BlockingConnection('amqp://%s' % ADDR, timeout=30)
    gsubs = [c.create_receiver('topic/shared', name='gsub', credit=n // 2, options=Capabilities('shared', 'global'))
             for c in (conn, conn2)]
    pub = conn.create_sender('topic/shared')
    for i in range(n):
        pub.send(Message(body='s%d' % i))
    split(subs, n)
    split(gsubs, n)
    split(jms, n)
    for c in mine + [conn2, conn]:
        c.close()
    print('proton: selector took %d of 7, a bad one refused; relay to 2 queues; shared and global '
          'subscriptions split %d messages' % (len(want), n))


if __name__ == '__main__':
    main()
