#!/usr/bin/python3
"""Qpid Proton (python3-qpid-proton) client of package broker's interop test
(broker_package_clients_test.go), against the broker amqptest started at
AMQP_ADDR (host:port) with queues bounded at BOUND messages:

  * a queue: BOUND messages sent (each outcome awaited), received back in
    order and accepted;
  * fan-out: two receivers on topic/proton each get every one of 5 messages;
  * a dynamic reply queue: a receiver with a dynamic source gets its address
    in the attach's answer; a message sent there (reply-to) comes back;
  * flow control: a sender to a queue with no consumer is held back by
    credit at BOUND (its send times out waiting for credit, nothing is
    rejected), then resumes as a receiver drains the queue.

Prints one summary line; exits non-zero on any failure. Run with Debian's
/usr/bin/python3.
"""

import os

from proton import Message, Timeout
from proton.utils import BlockingConnection

ADDR = os.environ.get('AMQP_ADDR', '127.0.0.1:5672')
BOUND = int(os.environ.get('BOUND', '10'))


def fail(msg):
    raise SystemExit('proton: ' + msg)


def main():
    conn = BlockingConnection('amqp://%s' % ADDR, timeout=30)

    # a queue
    snd = conn.create_sender('proton-queue')
    for i in range(BOUND):
        snd.send(Message(body='m%d' % i))
    rcv = conn.create_receiver('proton-queue', credit=5)
    for i in range(BOUND):
        m = rcv.receive(timeout=20)
        if m.body != 'm%d' % i:
            fail('queue: message %d is %r' % (i, m.body))
        rcv.accept()

    # fan-out
    subs = [conn.create_receiver('topic/proton', name='sub%d' % n, credit=10) for n in range(2)]
    pub = conn.create_sender('topic/proton')
    for i in range(5):
        pub.send(Message(body='t%d' % i))
    for n, sub in enumerate(subs):
        for i in range(5):
            m = sub.receive(timeout=20)
            if m.body != 't%d' % i:
                fail('fan-out: receiver %d got %r for %d' % (n, m.body, i))
            sub.accept()

    # a dynamic reply queue
    replies = conn.create_receiver(None, dynamic=True, credit=10)
    reply_to = replies.link.remote_source.address
    if not reply_to:
        fail('the dynamic source came back without an address')
    req = conn.create_sender(reply_to)
    req.send(Message(body='reply', correlation_id='c1'))
    m = replies.receive(timeout=20)
    if m.body != 'reply' or m.correlation_id != 'c1':
        fail('reply queue %s: got %r' % (reply_to, m.body))
    replies.accept()

    # flow control
    held = conn.create_sender('proton-bounded')
    total = 3 * BOUND
    sent = 0
    try:
        while sent < total:
            held.send(Message(body='f%d' % sent), timeout=2)
            sent += 1
    except Timeout:
        # The message stays in proton's link buffer, waiting for credit:
        # it goes out when the broker grants some.
        sent += 1
    if not BOUND < sent < total:
        fail('flow control: %d of %d sent before the sender waited (bound %d)' % (sent, total, BOUND))
    at = sent - 1
    drain = conn.create_receiver('proton-bounded', credit=total)
    for i in range(total):
        while sent < total and sent <= i + BOUND // 2:
            held.send(Message(body='f%d' % sent), timeout=20)
            sent += 1
        m = drain.receive(timeout=20)
        if m.body != 'f%d' % i:
            fail('flow control: message %d is %r' % (i, m.body))
        drain.accept()
    conn.close()
    print('proton: queue of %d, fan-out to 2, dynamic reply queue %s, flow control: sender held at %d '
          '(bound %d), resumed, all %d received' % (BOUND, reply_to, at, BOUND, total))


if __name__ == '__main__':
    main()
