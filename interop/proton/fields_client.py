#!/usr/bin/python3
"""Qpid Proton's python client setting the fields of the open and the
attach that services read, the peer of the engine as a server in
../fields_test.go.

    AMQP_ADDR=127.0.0.1:PORT /usr/bin/python3 interop/proton/fields_client.py

It opens with connection properties and offered and desired capabilities,
then attaches on one session: a receiver from "fields/q" with a selector
filter (proton.reactor.Selector), link properties, source capabilities and
a target with a reply address; a sender to "fields/q" with link properties
and a source address; a receiver from a dynamic source with node
properties. Once all three are attached it prints, as one JSON line, what
it read of the server (its open's properties and capabilities, each
answer's properties, source address and filter), and closes.
"""

import json
import os
import sys

from proton import symbol
from proton.handlers import MessagingHandler
from proton.reactor import Container, DynamicNodeProperties, LinkOption, Selector

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fields_common import data, plain, put_symbols  # noqa: E402


class Props(LinkOption):
    """Link properties (Proton has no link capabilities in its API)."""

    def __init__(self, props):
        self.props = props

    def apply(self, link):
        link.properties = self.props


class SourceCaps(LinkOption):
    def __init__(self, caps):
        self.caps = caps

    def apply(self, link):
        put_symbols(link.source.capabilities, self.caps)


class SourceAddress(LinkOption):
    def __init__(self, addr):
        self.addr = addr

    def apply(self, link):
        link.source.address = self.addr


class Client(MessagingHandler):
    def __init__(self, addr):
        super().__init__(prefetch=0)
        self.addr = addr
        self.links = []
        self.opened = 0

    def on_start(self, event):
        conn = event.container.connect(
            self.addr,
            properties={symbol('product'): 'proton-fields', symbol('x-opt-kind'): symbol('interop'),
                        symbol('x-opt-n'): 7},
            offered_capabilities=[symbol('proton-offer')],
            desired_capabilities=[symbol('DELAYED_DELIVERY'), symbol('proton-want')])
        c = event.container
        self.links = [
            c.create_receiver(conn, 'fields/q', target='proton-reply-1', name='proton-rcv',
                              options=[Selector("color = 'red'"),
                                       Props({symbol('rcv-prop'): 'r', symbol('x-epoch'): 3}),
                                       SourceCaps(['queue', 'shared'])]),
            c.create_sender(conn, 'fields/q', name='proton-snd',
                            options=[Props({symbol('snd-prop'): symbol('s')}), SourceAddress('proton-src')]),
            c.create_receiver(conn, None, dynamic=True, name='proton-dyn',
                              options=[DynamicNodeProperties({'x-opt-dnp': 'v'})]),
        ]

    def on_link_opened(self, event):
        self.opened += 1
        if self.opened < len(self.links):
            return
        conn = event.connection
        out = {
            'properties': plain(conn.remote_properties),
            'offered': plain(conn.remote_offered_capabilities),
            'desired': plain(conn.remote_desired_capabilities),
            'links': {},
        }
        for link in self.links:
            out['links'][link.name] = {
                'properties': plain(link.remote_properties),
                'source': link.remote_source.address,
                'filter': data(link.remote_source.filter),
            }
        print(json.dumps(out, sort_keys=True), flush=True)
        conn.close()

    def on_transport_error(self, event):
        print('transport error: %s' % event.transport.condition, file=sys.stderr, flush=True)
        sys.exit(1)


Container(Client(os.environ['AMQP_ADDR'])).run()
