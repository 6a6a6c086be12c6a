#!/usr/bin/python3
"""Azure uAMQP-C's (Debian python3-uamqp) receiver for interop/abort_test.go.

    AMQP_ADDR=host:port AMQP_CA=cert.pem /usr/bin/python3 interop/uamqp/abort_receiver.py

uAMQP's Python binding speaks only TLS (amqps): the test's server terminates
TLS with a throwaway certificate named by AMQP_CA. Attaches one receiver to
"abort-q" with frames of 512 bytes and an incoming window of 16 frames, so
that the server's first delivery (64 KB) is aborted part way; prints one line
per message it is given ("message N BYTES BODY-START") and stops after the
message "after-abort" (or after 20 s).
"""

import logging
import os
import time

from uamqp import ReceiveClient, authentication, c_uamqp
from uamqp.address import Source

ADDR = os.environ.get('AMQP_ADDR', '127.0.0.1:5671')
HOST, PORT = ADDR.split(':')
CA = os.environ.get('AMQP_CA')
if os.environ.get('UAMQP_DEBUG'):
    logging.basicConfig(level=logging.DEBUG)

auth = authentication.SASLAnonymous('localhost', port=int(PORT), verify=CA)
# A source whose address is exactly abort-q (uAMQP's Address would send the
# whole amqps:// URL), as client.py's node does.
src = Source('amqps://localhost/abort-q')
src._address.address = c_uamqp.string_value(b'abort-q')  # noqa: SLF001
rc = ReceiveClient(src, auth=auth, max_frame_size=512,
                   incoming_window=16, prefetch=10, client_name='uamqp-abort',
                   debug=bool(os.environ.get('UAMQP_DEBUG')))
n = 0
done = False
deadline = time.time() + 20
rc.open()
try:
    while not done and time.time() < deadline:
        for m in rc.receive_message_batch(max_batch_size=10, timeout=1000):
            n += 1
            data = m.get_data()
            body = b''.join(data) if data is not None else b''
            if data is None:
                print('no data: body %r, state %r' % (m._body, m.state), flush=True)  # noqa: SLF001
            print('message %d %d %r' % (n, len(body), body[:16]), flush=True)
            m.accept()
            if body == b'after-abort':
                done = True
    if not done:
        print('timeout', flush=True)
finally:
    rc.close()
