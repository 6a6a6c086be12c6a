#!/usr/bin/python3
"""Qpid Proton (python3-qpid-proton) durable subscription against package
broker (broker_durable_test.go), through Proton's own Container and its
DurableSubscription receiver option (source durable unsettled-state, expiry
policy never), with a fixed container id, at AMQP_ADDR (host:port).

The scenario (issue 30): a subscription to the fan-out address
"topic/durable" named "durable-sub" takes 10 messages and accepts 7, then
is detached without closing (receiver.detach(), not close()); 10 more are
sent while it is away; the connection closes. A new connection with the
same container id attaches the subscription again: it gets the 3 it had
not accepted (sent again) and the 10 kept for it, and accepts them. Every
one of the 20 messages must be accepted exactly once; a second after the
20th, nothing more may arrive. Then the subscription is closed (close()),
which ends it at the broker. Prints one line; exits non-zero on any
failure. Run with Debian's /usr/bin/python3.
"""

import os
import sys

from proton import Message
from proton.handlers import MessagingHandler
from proton.reactor import Container, DurableSubscription

ADDR = os.environ.get('AMQP_ADDR', '127.0.0.1:5672')
TOPIC = 'topic/durable'
NAME = 'durable-sub'
WATCHDOG = 30.0  # seconds: a bound on a hang, not a timing
N = 20          # messages in all
FIRST = 10      # sent while the subscription is attached
ACCEPT = 7      # of those, accepted before the detach


class Watchdog(object):
    def __init__(self, client):
        self.client = client

    def on_timer_task(self, event):
        if self.client.phase != 'finished':
            self.client.fail('timed out in phase %s' % self.client.phase)


class Client(MessagingHandler):
    def __init__(self):
        super(Client, self).__init__(prefetch=0, auto_accept=False)
        self.phase = 'first'   # first, away, again, done
        self.to_send = 0       # messages released to the sender
        self.sent = 0
        self.outcomes = 0
        self.received = 0
        self.accepted = {}     # body -> times accepted
        self.again = 0         # received after the re-attach
        self.extra = []        # anything past the 20th
        self.error = None

    def on_start(self, event):
        self.container = event.container
        self.watchdog = event.container.schedule(WATCHDOG, Watchdog(self))
        self.conn = event.container.connect('amqp://' + ADDR)
        self.rcv = event.container.create_receiver(self.conn, TOPIC, name=NAME, options=DurableSubscription())
        self.snd = event.container.create_sender(self.conn, TOPIC)

    def on_link_opened(self, event):
        if event.receiver is not None and event.receiver == self.rcv and self.phase == 'first':
            self.rcv.flow(FIRST)
            self.to_send = FIRST   # the subscription exists: send
            self.send_some()
        elif event.receiver is not None and event.receiver == self.rcv and self.phase == 'again':
            self.rcv.flow(N)

    def on_sendable(self, event):
        self.send_some()

    def send_some(self):
        while self.sent < self.to_send and self.snd.credit > 0:
            self.snd.send(Message(body='m%d' % self.sent))
            self.sent += 1

    def on_accepted(self, event):
        if event.sender is None:
            return
        self.outcomes += 1
        if self.outcomes == N and self.phase == 'away':
            self.conn.close()  # the subscription is detached: not closed

    def on_rejected(self, event):
        self.fail('a message was rejected')

    def on_message(self, event):
        body = event.message.body
        if self.phase in ('done', 'finished'):
            self.extra.append(body)
            return
        self.received += 1
        if self.phase == 'first':
            if self.received <= ACCEPT:
                self.accept(event.delivery)
                self.count(body)
            if self.received == FIRST:
                self.rcv.detach()  # closed=false: the broker keeps the subscription
            return
        self.again += 1
        self.accept(event.delivery)
        self.count(body)
        if len(self.accepted) == N:
            self.phase = 'done'
            self.container.schedule(1.0, self)  # then nothing more may come

    def count(self, body):
        self.accepted[body] = self.accepted.get(body, 0) + 1

    def on_link_remote_detach(self, event):
        if event.link == self.rcv and self.phase == 'first':
            self.phase = 'away'
            self.to_send = N
            self.send_some()

    def on_connection_closed(self, event):
        if self.phase == 'away':
            self.phase = 'again'
            self.conn = self.container.connect('amqp://' + ADDR)
            self.rcv = self.container.create_receiver(self.conn, TOPIC, name=NAME, options=DurableSubscription())

    def on_timer_task(self, event):
        self.phase = 'finished'
        self.watchdog.cancel()
        self.rcv.close()  # closed: the subscription ends
        self.conn.close()

    def on_transport_error(self, event):
        cond = event.transport.condition
        self.fail('transport error: %s' % (cond.description if cond else '?'))

    def fail(self, what):
        self.error = what
        self.phase = 'finished'
        self.watchdog.cancel()
        self.conn.close()


def main():
    c = Client()
    cont = Container(c)
    cont.container_id = 'amqpsax-durable-subscriber'
    cont.run()
    twice = sorted(b for b, k in c.accepted.items() if k != 1)
    want = sorted('m%d' % i for i in range(N))
    ok = c.error is None and sorted(c.accepted) == want and not twice and not c.extra
    print('proton durable subscription: %d of %d accepted, each once: %s; %d received after the re-attach '
          '(%d sent again, %d kept while detached); %d more after the last%s' % (
              len(c.accepted), N, not twice, c.again, FIRST - ACCEPT, N - FIRST, len(c.extra),
              '; ' + c.error if c.error else ''))
    if not ok:
        sys.exit(1)


if __name__ == '__main__':
    main()
