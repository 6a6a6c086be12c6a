#!/usr/bin/python3
"""Qpid Proton (python3-qpid-proton) transactions against package broker
(broker_txn_test.go), through Proton's own Container and TransactionHandler
(proton.reactor.Container.declare_transaction), at AMQP_ADDR (host:port).

SCENARIO (one per run) is:
  send-commit     a transaction of 10 sends to "txq", committed
  send-rollback   the same, rolled back
  recv-rollback   10 messages received from "txq" and accepted in a
                  transaction, rolled back
  recv-commit     the same, committed
The Go test checks the queue after each. Prints one line; exits non-zero on
any failure. Run with Debian's /usr/bin/python3.
"""

import os
import sys

from proton import Message
from proton.handlers import MessagingHandler, TransactionHandler
from proton.reactor import Container

ADDR = os.environ.get('AMQP_ADDR', '127.0.0.1:5672')
SCENARIO = os.environ.get('SCENARIO', 'send-commit')
N = 10


class Client(MessagingHandler, TransactionHandler):
    def __init__(self):
        super(Client, self).__init__(prefetch=0, auto_accept=False)
        self.send = SCENARIO.startswith('send')
        self.commit = SCENARIO.endswith('commit')
        self.sent = 0
        self.accepted = 0
        self.outcome = None
        self.txn = None
        self.receiver = None

    def on_start(self, event):
        self.conn = event.container.connect('amqp://' + ADDR)
        if self.send:
            self.sender = event.container.create_sender(self.conn, 'txq')
        event.container.declare_transaction(self.conn, handler=self)

    def on_transaction_declared(self, event):
        self.txn = event.transaction
        if self.send:
            self.send_some()
        else:
            self.receiver = event.container.create_receiver(self.conn, 'txq')
            self.receiver.flow(N)

    def on_sendable(self, event):
        self.send_some()

    def send_some(self):
        if self.txn is None or not self.send:
            return
        while self.sent < N and self.sender.credit > 0:
            self.txn.send(self.sender, Message(body='t%d' % self.sent))
            self.sent += 1
        if self.sent == N and self.outcome is None:
            self.outcome = 'pending'
            self.discharge()

    def on_message(self, event):
        if self.send or self.accepted >= N:
            return
        self.txn.accept(event.delivery)
        self.accepted += 1
        if self.accepted == N:
            self.discharge()

    def discharge(self):
        if self.commit:
            self.txn.commit()
        else:
            self.txn.abort()

    def on_transaction_committed(self, event):
        self.done('committed')

    def on_transaction_aborted(self, event):
        self.done('rolled back')

    def on_transaction_declare_failed(self, event):
        self.done('declare failed')

    def on_transaction_commit_failed(self, event):
        self.done('commit failed')

    def done(self, what):
        self.outcome = what
        self.conn.close()


def main():
    c = Client()
    Container(c).run()
    want = 'committed' if c.commit else 'rolled back'
    print('proton %s: %s (sent %d, accepted %d)' % (SCENARIO, c.outcome, c.sent, c.accepted))
    if c.outcome != want:
        sys.exit(1)


if __name__ == '__main__':
    main()
