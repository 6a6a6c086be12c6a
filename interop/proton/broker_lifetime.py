#!/usr/bin/python3
"""Qpid Proton (python3-qpid-proton) client of package broker's message
lifetimes (broker_lifetime_test.go), against the broker amqptest started at
AMQP_ADDR (host:port) with MaxDeliveryCount 2 and DeadLetterAddress "dlq":

  * ttl: a message whose absolute-expiry-time has passed is never delivered;
    the one after it is;
  * priority: messages of priorities 0-9 come highest first, in order within
    a priority;
  * dead-lettering: a message given back modified with delivery-failed twice
    goes to dlq, with its reason in x-opt-deadletter-reason;
  * scheduled: a message with x-opt-delivery-delay 200 ms comes once its time
    has come, on the broker's timer.

Prints one summary line; exits non-zero on any failure. Run with Debian's
/usr/bin/python3.
"""

import os

from proton import Message, symbol
from proton.utils import BlockingConnection

ADDR = os.environ.get('AMQP_ADDR', '127.0.0.1:5672')


def fail(msg):
    raise SystemExit('proton: ' + msg)


def main():
    conn = BlockingConnection('amqp://%s' % ADDR, timeout=30)

    # ttl
    snd = conn.create_sender('ttl')
    snd.send(Message(body='gone', expiry_time=1.0))
    snd.send(Message(body='kept', ttl=3600))
    rcv = conn.create_receiver('ttl', credit=10)
    m = rcv.receive(timeout=20)
    if m.body != 'kept':
        fail('ttl: got %r, not the message after the expired one' % m.body)
    rcv.accept()

    # priority
    snd = conn.create_sender('prio')
    prios = [0, 9, 4, 9, 1, 7]
    for i, p in enumerate(prios):
        snd.send(Message(body='p%d' % i, priority=p))
    rcv = conn.create_receiver('prio', credit=10)
    got = []
    for _ in prios:
        got.append(rcv.receive(timeout=20).body)
        rcv.accept()
    want = ['p1', 'p3', 'p5', 'p2', 'p4', 'p0']
    if got != want:
        fail('priority: got %r, want %r' % (got, want))

    # dead-lettering after MaxDeliveryCount failed deliveries
    snd = conn.create_sender('work')
    snd.send(Message(body='poison'))
    rcv = conn.create_receiver('work', credit=1)
    for i in range(2):
        m = rcv.receive(timeout=20)
        if m.delivery_count != i:
            fail('dead-letter: delivery-count %d, want %d' % (m.delivery_count, i))
        # modified with delivery-failed: proton's release(delivered=True)
        # sends modified without it (which does not count), so the flag is
        # set on the delivery first.
        rcv.fetcher.unsettled[0].local.failed = True
        rcv.release(delivered=True)
    dlq = conn.create_receiver('dlq', credit=1)
    m = dlq.receive(timeout=20)
    reason = m.annotations.get(symbol('x-opt-deadletter-reason'))
    if m.body != 'poison' or reason != 'MaxDeliveryCountExceeded':
        fail('dead-letter: got %r, reason %r' % (m.body, reason))
    dlq.accept()

    # scheduled delivery
    rcv = conn.create_receiver('later', credit=1)
    snd = conn.create_sender('later')
    snd.send(Message(body='delayed', annotations={symbol('x-opt-delivery-delay'): 200}))
    m = rcv.receive(timeout=20)
    if m.body != 'delayed':
        fail('scheduled: got %r' % m.body)
    rcv.accept()

    conn.close()
    print('proton: ttl, priority, dead-lettering and scheduled delivery ok')


if __name__ == '__main__':
    main()
