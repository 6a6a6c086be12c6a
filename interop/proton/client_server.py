#!/usr/bin/python3
"""A store-and-forward AMQP 1.0 server on Qpid Proton's python binding (a
proton.reactor Container listening), the peer of package client's interop
test (../client_test.go).

    /usr/bin/python3 interop/proton/client_server.py PORT

Listens on 127.0.0.1:PORT. A message sent to address A is kept, as the exact
bytes of its delivery, until a receiver attached to A takes it; incoming
deliveries are accepted and settled, outgoing ones settled when the receiver
settles (a released or modified one is queued again). A link to an address
starting with "refuse/" is refused: answered with no terminus, then closed
with amqp:not-found. Prints "listening on 127.0.0.1:PORT" once ready.
"""

import collections
import sys

from proton import Condition, Delivery, Terminus
from proton.handlers import MessagingHandler
from proton.reactor import Container


class Server(MessagingHandler):
    def __init__(self, port):
        super().__init__(prefetch=200, auto_accept=False, auto_settle=False)
        self.port = port
        self.queues = collections.defaultdict(collections.deque)
        self.consumers = collections.defaultdict(list)
        self.tag = 0

    def on_start(self, event):
        event.container.listen('127.0.0.1:%d' % self.port)
        print('listening on 127.0.0.1:%d' % self.port, flush=True)

    def on_link_opening(self, event):
        link = event.link
        addr = link.remote_source.address if link.is_sender else link.remote_target.address
        if (addr or '').startswith('refuse/'):
            # Answered with no terminus (null), then closed once open: the
            # handler opens the link after this returns.
            link.refuse = addr
            if link.is_sender:
                link.source.type = Terminus.UNSPECIFIED
            else:
                link.target.type = Terminus.UNSPECIFIED
            return
        link.source.address = link.remote_source.address or addr
        link.target.address = link.remote_target.address or addr
        link.snd_settle_mode = link.remote_snd_settle_mode
        link.rcv_settle_mode = link.remote_rcv_settle_mode
        if link.is_sender:
            self.consumers[addr].append(link)

    def on_link_opened(self, event):
        addr = getattr(event.link, 'refuse', None)
        if addr is not None:
            event.link.condition = Condition('amqp:not-found', 'no node ' + addr)
            event.link.close()

    def on_link_closing(self, event):
        self.forget(event.link)

    def on_disconnected(self, event):
        for links in self.consumers.values():
            for link in list(links):
                if link.connection == event.connection:
                    links.remove(link)

    def forget(self, link):
        if link.is_sender:
            links = self.consumers.get(link.source.address, [])
            if link in links:
                links.remove(link)

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


def main():
    c = Container(Server(int(sys.argv[1])))
    c.container_id = 'amqpsax-client-proton-server'
    c.run()


if __name__ == '__main__':
    sys.exit(main())
