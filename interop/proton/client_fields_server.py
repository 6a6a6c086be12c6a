#!/usr/bin/python3
"""A Qpid Proton server that prints the fields of the open and attaches
package client sends it, the peer of ../client_fields_test.go.

    /usr/bin/python3 interop/proton/client_fields_server.py PORT

Listens on 127.0.0.1:PORT and prints "listening on 127.0.0.1:PORT" once
ready. For the client's open it prints one JSON line {"open": {...}} (its
properties, offered and desired capabilities) and answers with properties
and offered capabilities of its own; for each attach {"attach": {...}}
(name, role, link properties, source and target addresses, the source's
filter, the termini's capabilities), answering with the client's termini
(the filter echoed) and link properties of its own. It exits once the
client's connection has closed. (Proton 0.37's python API and C library
read and write no link capabilities: the test reads the client's on the
wire.)
"""

import json
import os
import sys

from proton import symbol
from proton.handlers import MessagingHandler
from proton.reactor import Container

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fields_common import data, plain  # noqa: E402


class Server(MessagingHandler):
    def __init__(self, port):
        super().__init__(prefetch=0)
        self.port = port

    def on_start(self, event):
        self.acceptor = event.container.listen('127.0.0.1:%d' % self.port)
        print('listening on 127.0.0.1:%d' % self.port, flush=True)

    def on_connection_opening(self, event):
        conn = event.connection
        print(json.dumps({'open': {
            'properties': plain(conn.remote_properties),
            'offered': plain(conn.remote_offered_capabilities),
            'desired': plain(conn.remote_desired_capabilities),
        }}, sort_keys=True), flush=True)
        conn.properties = {symbol('product'): 'proton-client-fields', symbol('x-opt-n'): 9}
        conn.offered_capabilities = [symbol('ANONYMOUS-RELAY'), symbol('x-proton-offer')]

    def on_link_opening(self, event):
        link = event.link
        print(json.dumps({'attach': {
            'name': link.name,
            'sender': link.is_receiver,  # the client's role
            'properties': plain(link.remote_properties),
            'source': link.remote_source.address,
            'target': link.remote_target.address,
            'filter': data(link.remote_source.filter),
            'source_caps': data(link.remote_source.capabilities),
            'target_caps': data(link.remote_target.capabilities),
        }}, sort_keys=True), flush=True)
        link.source.copy(link.remote_source)
        link.target.copy(link.remote_target)
        link.properties = {symbol('answer'): 'proton-' + link.name, symbol('x-opt-credit'): 5}

    def on_transport_closed(self, event):
        self.acceptor.close()
        event.container.stop()


Container(Server(int(sys.argv[1]))).run()
