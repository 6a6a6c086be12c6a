#!/usr/bin/python3
"""broker.py with TLS: Qpid Proton's server with SSL, for the engine's TLS
tests (../tls_test.go).

    /usr/bin/python3 interop/proton/tls_broker.py PORT CERT.pem KEY.pem

The same store-and-forward broker as broker.py, listening on 127.0.0.1:PORT
with an SSLDomain in server mode (certificate and key in PEM, no client
certificate asked for). Proton-C's server layer detects what the client
starts with: a TLS record (direct TLS) or a protocol header. Prints
"listening on 127.0.0.1:PORT" once ready; stops on SIGTERM.
"""

import signal
import sys

from proton import SSLDomain
from proton.reactor import Container

from broker import Broker


class TLSBroker(Broker):
    def __init__(self, port, cert, key):
        super().__init__(port)
        self.domain = SSLDomain(SSLDomain.MODE_SERVER)
        self.domain.set_credentials(cert, key, None)
        self.domain.set_peer_authentication(SSLDomain.ANONYMOUS_PEER)

    def on_start(self, event):
        self.acceptor = event.container.listen('127.0.0.1:%d' % self.port, ssl_domain=self.domain)
        print('listening on 127.0.0.1:%d' % self.port, flush=True)

    def on_transport_error(self, event):
        cond = event.transport.condition
        print('transport error: %s: %s' % (cond.name, cond.description) if cond else 'transport error', flush=True)


def main():
    port, cert, key = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    c = Container(TLSBroker(port, cert, key))
    c.container_id = 'amqpsax-proton-tls-broker'
    signal.signal(signal.SIGTERM, lambda *a: c.stop())
    c.run()


if __name__ == '__main__':
    sys.exit(main())
