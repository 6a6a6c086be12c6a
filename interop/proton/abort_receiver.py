#!/usr/bin/python3
"""Qpid Proton's python receiver for interop/abort_test.go.

    AMQP_ADDR=host:port /usr/bin/python3 interop/proton/abort_receiver.py

Attaches one receiver to "abort-q" with frames of 512 bytes and a session
incoming capacity of 16 frames, so that the server's first delivery (64 KB)
is held back by the session window and aborted by the server part way; it
reads a partial delivery's bytes as they come
(so that Proton reopens its window), prints one line per message it is given ("message N BYTES BODY-START"),
accepts each, and closes after the message "after-abort" (or after 20 s).
"""

import os
import sys

from proton import Message
from proton.handlers import MessagingHandler
from proton.reactor import Container

ADDR = os.environ.get('AMQP_ADDR', '127.0.0.1:5672')


class Receiver(MessagingHandler):
    def __init__(self):
        super().__init__(prefetch=0, auto_accept=False)
        self.n = 0

    def on_start(self, event):
        self.timer = event.container.schedule(20, self)
        conn = event.container.connect('amqp://' + ADDR, max_frame_size=512, sasl_enabled=False)
        ssn = conn.session()
        ssn.incoming_capacity = 512 * 16  # a window of 16 frames
        ssn.open()
        self.rcv = ssn.receiver('abort-rcv')
        self.rcv.source.address = 'abort-q'
        self.rcv.open()
        self.rcv.flow(10)

    def on_message(self, event):
        self.n += 1
        body = event.message.body
        if isinstance(body, memoryview):
            body = bytes(body)
        print('message %d %d %r' % (self.n, len(body), body[:16]), flush=True)
        self.accept(event.delivery)
        if body == b'after-abort':
            self.timer.cancel()
            event.connection.close()

    def on_delivery(self, event):
        # Runs before MessagingHandler's own (which gives on_message a
        # whole delivery and on_aborted an aborted one): take a partial
        # delivery's bytes as they come, or the session's capacity stays
        # full and its window shut until the delivery completes.
        dlv = event.delivery
        if dlv.partial and not dlv.aborted and dlv.pending > 0:
            event.link.recv(dlv.pending)

    def on_aborted(self, event):
        print('aborted', flush=True)

    def on_timer_task(self, event):
        print('timeout', flush=True)
        event.container.stop()


Container(Receiver()).run()
