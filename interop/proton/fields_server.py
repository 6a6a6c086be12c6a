#!/usr/bin/python3
"""A Qpid Proton server that prints the fields of the open and attaches it
is sent, the peer of the engine as a client in ../fields_test.go.

    /usr/bin/python3 interop/proton/fields_server.py PORT

Listens on 127.0.0.1:PORT and prints "listening on 127.0.0.1:PORT" once
ready. For the client's open it prints one JSON line {"open": {...}} (its
properties, offered and desired capabilities) and answers with properties
of its own; for each attach {"attach": {...}} (name, role, properties,
source and target addresses, the source's filter), answering with the
client's termini (the filter echoed) and link properties of its own. It
exits once the client's connection has closed.
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
        conn.properties = {symbol('product'): 'proton-server', symbol('x-opt-n'): 9}
        conn.offered_capabilities = [symbol('ANONYMOUS-RELAY')]

    def on_link_opening(self, event):
        link = event.link
        print(json.dumps({'attach': {
            'name': link.name,
            'sender': link.is_receiver,  # the client's role
            'properties': plain(link.remote_properties),
            'source': link.remote_source.address,
            'target': link.remote_target.address,
            'filter': data(link.remote_source.filter),
        }}, sort_keys=True), flush=True)
        link.source.copy(link.remote_source)
        link.target.copy(link.remote_target)
        link.properties = {symbol('answer'): 'proton-' + link.name}

    def on_transport_closed(self, event):
        # The client's connection is over (closed, or its socket gone):
        # stop listening, and the container's run returns.
        self.acceptor.close()
        event.container.stop()

Container(Server(int(sys.argv[1]))).run()
