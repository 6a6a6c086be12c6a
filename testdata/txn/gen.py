#!/usr/bin/python3
"""Record a transaction between two Qpid Proton engines (part 4 of AMQP 1.0).

Run as /usr/bin/python3 testdata/txn/gen.py (Debian's python3-qpid-proton);
it writes client.bin and server.bin beside itself: the two byte streams of one
connection, exactly as each engine wrote them. No network, no SASL, a fake
clock: the output is the same on every run.

The client is a controller as Proton's own Container makes one
(proton/_reactor.py: Transaction): a sender named txn-ctrl whose target is a
coordinator with capability amqp:local-transactions, a declare sent as
Described(symbol 'amqp:declare:list', [None]), a discharge as
Described(symbol 'amqp:discharge:list', [txn-id, failed]), transactional
transfers with state [txn-id] (0x34), and transactional acceptance with state
[txn-id, Described(ulong 0x24, [])]. The server is Proton's engine answering as
a coordinator would: declared [txn-id] (0x33), then accepted for the commit
and rejected with amqp:transaction:unknown-id for a discharge of an unknown
transaction.

What happens, in order:
  1. open, begin; the client attaches txn-ctrl (coordinator), a sender "q-in"
     to address "q" and a receiver "q-out" from "q".
  2. declare -> declared b'txn-1'.
  3. two transfers on q-in with transactional-state(txn-1), one a message in
     three frames (max-frame-size 512).
  4. the server sends one message on q-out; the client accepts it with
     transactional-state(txn-1, accepted), settled.
  5. the server answers the two transfers with transactional-state(txn-1,
     accepted) (not settled by the server).
  6. discharge(txn-1, fail=false) -> accepted.
  7. discharge(b'nope', fail=true) -> rejected amqp:transaction:unknown-id.
  8. close.
"""
import os

from proton import (Connection, Transport, Message, Delivery, Described,
                    Terminus, symbol, ulong, Condition, Data)

HERE = os.path.dirname(os.path.abspath(__file__))

TXN_STATE = 0x34
DECLARED = 0x33


class Pair:
    def __init__(self, max_frame=512):
        self.now = 1000.0
        self.c = Connection()
        self.c.container = 'txn-client'
        self.ct = Transport()
        self.ct.max_frame_size = max_frame
        self.ct.bind(self.c)
        self.s = Connection()
        self.s.container = 'txn-server'
        self.st = Transport(Transport.SERVER)
        self.st.max_frame_size = max_frame
        self.st.bind(self.s)
        self.c_out = bytearray()
        self.s_out = bytearray()

    def _move(self, src, dst, log):
        moved = False
        while True:
            p = src.pending()
            if p <= 0:
                break
            cap = dst.capacity()
            if cap <= 0:
                break
            data = src.peek(min(p, cap))
            src.pop(len(data))
            log += data
            dst.push(data)
            moved = True
        return moved

    def pump(self):
        while True:
            a = self._move(self.ct, self.st, self.c_out)
            b = self._move(self.st, self.ct, self.s_out)
            if not (a or b):
                break
        self.now += 0.01
        self.ct.tick(self.now)
        self.st.tick(self.now)


def remote_links(conn):
    out = {}
    l = conn.link_head(0)
    while l:
        out[l.name] = l
        l = l.next(0)
    return out


def main():
    p = Pair()
    p.c.open()
    p.pump()
    p.s.open()
    ssn = p.c.session()
    ssn.open()
    p.pump()
    p.s.session_head(0).open()
    p.pump()

    ctrl = ssn.sender('txn-ctrl')
    ctrl.target.type = Terminus.COORDINATOR
    ctrl.target.capabilities.put_object(symbol('amqp:local-transactions'))
    ctrl.open()
    snd = ssn.sender('q-in')
    snd.target.address = 'q'
    snd.open()
    rcv = ssn.receiver('q-out')
    rcv.source.address = 'q'
    rcv.open()
    p.pump()
    links = remote_links(p.s)
    for name in ('txn-ctrl', 'q-in', 'q-out'):
        l = links[name]
        l.source.copy(l.remote_source)
        l.target.copy(l.remote_target)
        l.open()
    links['txn-ctrl'].flow(10)
    links['q-in'].flow(10)
    rcv.flow(10)
    p.pump()

    def ctrl_send(descriptor, value, tag):
        m = Message(body=Described(symbol(descriptor), value))
        d = ctrl.delivery(tag)
        ctrl.send(m.encode())
        ctrl.advance()
        return d

    # 2. declare
    declare = ctrl_send('amqp:declare:list', [None], 'd1')
    p.pump()
    sctrl = links['txn-ctrl']
    sd = sctrl.current
    sctrl.recv(sd.pending)
    sctrl.advance()
    sd.local.data = [b'txn-1']
    sd.update(DECLARED)
    sd.settle()
    p.pump()
    assert declare.remote_state == DECLARED, declare.remote_state
    txn = declare.remote.data[0]
    declare.settle()

    # 3. two transactional transfers, the second in three frames
    sent = []
    for i, body in enumerate(['one', 'x' * 1200]):
        d = snd.delivery('t%d' % i)
        snd.send(Message(body=body).encode())
        d.local.data = [txn]
        d.update(TXN_STATE)
        snd.advance()
        sent.append(d)
        p.pump()
    sin = links['q-in']
    got = []
    while sin.current is not None and not sin.current.partial:
        sd = sin.current
        sin.recv(sd.pending)
        sin.advance()
        got.append(sd)
    assert len(got) == 2, len(got)

    # 4. the server sends; the client accepts under the transaction
    sout = links['q-out']
    d = sout.delivery('r0')
    sout.send(Message(body='for the client').encode())
    sout.advance()
    p.pump()
    cd = rcv.current
    rcv.recv(cd.pending)
    rcv.advance()
    cd.local.data = [txn, Described(ulong(0x24), [])]
    cd.update(TXN_STATE)
    cd.settle()
    p.pump()

    # 5. the server's transactional outcome of the two transfers
    for sd in got:
        sd.local.data = [txn, Described(ulong(0x24), [])]
        sd.update(TXN_STATE)
    p.pump()

    # 6. commit
    dis = ctrl_send('amqp:discharge:list', [txn, False], 'd2')
    p.pump()
    sd = sctrl.current
    sctrl.recv(sd.pending)
    sctrl.advance()
    sd.update(Delivery.ACCEPTED)
    sd.settle()
    p.pump()
    assert dis.remote_state == Delivery.ACCEPTED

    # 7. a discharge of an unknown transaction
    dis = ctrl_send('amqp:discharge:list', [b'nope', True], 'd3')
    p.pump()
    sd = sctrl.current
    sctrl.recv(sd.pending)
    sctrl.advance()
    sd.local.condition = Condition('amqp:transaction:unknown-id', 'no transaction nope')
    sd.update(Delivery.REJECTED)
    sd.settle()
    p.pump()
    assert dis.remote_state == Delivery.REJECTED

    # 8. close
    p.c.close()
    p.pump()
    p.s.close()
    p.pump()

    for name, data in (('client.bin', p.c_out), ('server.bin', p.s_out)):
        with open(os.path.join(HERE, name), 'wb') as f:
            f.write(bytes(data))
        print(name, len(data), 'bytes')


if __name__ == '__main__':
    main()
