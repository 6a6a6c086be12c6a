#!/usr/bin/python3
"""A minimal store-and-forward AMQP 1.0 broker on Qpid Proton's engine, for
the peers RabbitMQ 3.10 cannot talk to (uAMQP-C: see ../README.md).

    /usr/bin/python3 interop/proton/broker.py [PORT]     (default 5673)

Listens on 127.0.0.1 only. A message sent to address A is kept, as the exact
bytes of its delivery, until a receiver attached to A takes it: the broker
never decodes or re-encodes a message, so the bare message arrives
byte-identical. Incoming deliveries are accepted and settled; outgoing ones
are settled when the receiver settles (or sent settled when the receiver
asked for that). Every attach is answered with both source and target set
(uAMQP-C refuses a link whose peer omits either). SASL: Proton's built-in
ANONYMOUS. Prints "listening on 127.0.0.1:PORT" once ready; stops on SIGTERM.
"""

import collections
import signal
import sys

from proton import Delivery, Link
from proton.handlers import MessagingHandler
from proton.reactor import Container


class Broker(MessagingHandler):
    def __init__(self, port):
        super().__init__(prefetch=50, auto_accept=False, auto_settle=False)
        self.port = port
        self.queues = collections.defaultdict(collections.deque)
        self.consumers = collections.defaultdict(list)
        self.tag = 0

    def on_start(self, event):
        self.acceptor = event.container.listen('127.0.0.1:%d' % self.port)
        print('listening on 127.0.0.1:%d' % self.port, flush=True)

    def on_connection_bound(self, event):
        # Advertise 512-byte frames: uAMQP-C splits what it sends by the
        # peer's max-frame-size but refuses to encode a frame larger than
        # its own (512 here), so with the default (unlimited) it cannot
        # send any message larger than one frame.
        event.transport.max_frame_size = 512

    def on_link_opening(self, event):
        link = event.link
        if link.is_sender:
            addr = link.remote_source.address
            link.source.address = addr
            link.target.address = link.remote_target.address or addr
            self.consumers[addr].append(link)
        else:
            addr = link.remote_target.address
            link.target.address = addr
            link.source.address = link.remote_source.address or addr
        link.snd_settle_mode = link.remote_snd_settle_mode
        link.rcv_settle_mode = link.remote_rcv_settle_mode

    def on_link_closing(self, event):
        self.unsubscribe(event.link)

    def on_disconnected(self, event):
        for link_list in self.consumers.values():
            for link in list(link_list):
                if link.connection == event.connection:
                    link_list.remove(link)

    def unsubscribe(self, link):
        if link.is_sender:
            lst = self.consumers.get(link.source.address, [])
            if link in lst:
                lst.remove(link)

    def on_delivery(self, event):
        dlv = event.delivery
        link = dlv.link
        if link.is_receiver:
            if not dlv.readable or dlv.partial:
                return
            data = link.recv(dlv.pending)
            link.advance()
            self.queues[link.target.address].append(data)
            if not dlv.settled:
                dlv.update(Delivery.ACCEPTED)
            dlv.settle()
            self.dispatch(link.target.address)
        elif dlv.remote_state or dlv.settled:
            # the receiver's outcome: a released message is queued again
            if dlv.remote_state in (Delivery.RELEASED, Delivery.MODIFIED):
                self.queues[link.source.address].appendleft(dlv.context)
            dlv.settle()
            self.dispatch(link.source.address)

    def on_sendable(self, event):
        self.dispatch(event.link.source.address)

    def dispatch(self, addr):
        q = self.queues[addr]
        for link in self.consumers.get(addr, []):
            while q and link.credit > 0:
                data = q.popleft()
                self.tag += 1
                dlv = link.delivery(str(self.tag))
                dlv.context = data
                link.send(data)
                link.advance()
                if link.snd_settle_mode == Link.SND_SETTLED:
                    dlv.settle()


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 5673
    c = Container(Broker(port))
    c.container_id = 'amqpsax-proton-broker'
    signal.signal(signal.SIGTERM, lambda *a: c.stop())
    c.run()


if __name__ == '__main__':
    sys.exit(main())
