#!/usr/bin/python3
"""Frame and message lists, with Qpid Proton's traces, for the recorded
connections of testdata/peers (see README.md).

    /usr/bin/python3 testdata/peers/gen.py [DIR]

reads every NAME-client.bin / NAME-server.bin in DIR (default: next to this
file) (written by
interop/record.sh: the two byte streams of one connection between a client
and RabbitMQ, exactly as they went over the wire) and writes, per stream:

  NAME-DIR-frames.jsonl    one line per protocol header and frame, in order,
                           in the form of testdata/proton/conn-client-frames.jsonl
                           ({"kind","offset","size","doff","type","channel",
                           "performative"}) plus "trace": Proton's trace of the
                           performative (see testdata/proton/README.md), and
                           "error" where Proton's decoder fails on it
  NAME-DIR-messages.jsonl  one line per delivery: its transfer frames joined
                           ({"name","channel","handle","link","delivery_id",
                           "delivery_tag","settled","frames","hex","trace"});
                           "trace" is Proton's trace of the sequence of
                           sections (null, with "error", where Proton's decoder
                           cannot represent the message)

The traces come from Proton's decoder (proton.Data), through the walk of
testdata/proton/gen.py, which this script imports rather than copies. Needs
Debian's python3-qpid-proton (Proton 0.37): run it with /usr/bin/python3.
Deterministic: the same .bin files always give the same output.
"""

import glob
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'proton'))

import gen as proton_gen  # noqa: E402  testdata/proton/gen.py: the Proton walk
from proton import Data  # noqa: E402

TRANSFER = 0x14
ATTACH = 0x12


def proton_error(e):
    return '%s: %s' % (type(e).__name__, e)


def descriptor_and_fields(body):
    """Proton's reading of a performative: (descriptor, [field values]) with
    field values as Python objects (only the simple fields are needed)."""
    d = Data()
    d.decode(body)
    d.rewind()
    d.next()
    d.enter()
    d.next()
    code = d.get_ulong() if d.type() == Data.ULONG else None
    d.next()
    fields = []
    if d.type() == Data.LIST:
        d.enter()
        while d.next() is not None:
            t = d.type()
            if t in (Data.UINT, Data.ULONG, Data.UBYTE, Data.USHORT):
                fields.append(d.get_object())
            elif t == Data.BOOL:
                fields.append(d.get_bool())
            elif t == Data.BINARY:
                fields.append(bytes(d.get_binary()))
            elif t == Data.STRING:
                fields.append(d.get_string())
            elif t == Data.NULL:
                fields.append(None)
            else:
                fields.append(('other', t))
        d.exit()
    return code, fields


def field(fields, i):
    return fields[i] if i < len(fields) else None


def split(buf):
    """Protocol headers and frames of one stream, each frame with Proton's
    reading of its performative."""
    items = []
    off = 0
    while off < len(buf):
        if buf[off:off + 4] == b'AMQP':
            items.append({'kind': 'protocol-header', 'offset': off, 'size': 8,
                          'hex': buf[off:off + 8].hex()})
            off += 8
            continue
        if off + 8 > len(buf):
            raise ValueError('stream ends inside a frame header at %d' % off)
        size, doff, ftype, channel = struct.unpack('>IBBH', buf[off:off + 8])
        if size < 8 or off + size > len(buf):
            raise ValueError('bad or truncated frame at %d (size %d)' % (off, size))
        body = buf[off + doff * 4:off + size]
        item = {'kind': 'frame', 'offset': off, 'size': size, 'doff': doff, 'type': ftype,
                'channel': channel, 'performative': None}
        if body:
            try:
                n, trace = proton_gen.proton_decode_one(body)
                code, fields = descriptor_and_fields(body)
                item['performative'] = proton_gen.PERFORMATIVES.get(code, '0x%x' % code)
                item['trace'] = trace
                item['_code'] = code
                item['_fields'] = fields
                item['_payload'] = body[n:]
            except Exception as e:  # noqa: BLE001 - recorded, explained in README
                item['performative'] = None
                item['trace'] = None
                item['error'] = proton_error(e)
        items.append(item)
        off += size
    return items


def deliveries(conn, direction, items):
    """Join the transfer frames of each delivery (part 2 §2.6.14): frames
    with more=true continue on the same channel and handle."""
    links = {}  # (channel, handle) -> link name, from this stream's attaches
    open_ = {}  # (channel, handle) -> delivery in progress
    out = []
    for it in items:
        code = it.get('_code')
        if code == ATTACH:
            f = it['_fields']
            links[(it['channel'], field(f, 1))] = field(f, 0)
            continue
        if code != TRANSFER:
            continue
        f = it['_fields']
        key = (it['channel'], field(f, 0))
        dl = open_.get(key)
        if dl is None:
            dl = {'channel': it['channel'], 'handle': field(f, 0), 'link': links.get(key),
                  'delivery_id': field(f, 1),
                  'delivery_tag': field(f, 2).hex() if field(f, 2) is not None else None,
                  'settled': bool(field(f, 4)), 'frames': [], '_payload': b''}
            open_[key] = dl
        dl['frames'].append(it['offset'])
        dl['_payload'] += it['_payload']
        if field(f, 4):
            dl['settled'] = True
        if field(f, 9):  # aborted: the delivery is dropped
            del open_[key]
            continue
        if not field(f, 5):  # more
            del open_[key]
            dl['name'] = '%s-%s-%d' % (conn, direction, len(out) + 1)
            out.append(dl)
    for dl in out:
        payload = dl.pop('_payload')
        dl['hex'] = payload.hex()
        try:
            dl['trace'] = proton_gen.proton_decode_all(payload)
        except Exception as e:  # noqa: BLE001 - recorded, explained in README
            dl['trace'] = None
            dl['error'] = proton_error(e)
    return out, len(open_)


ORDER = ['name', 'channel', 'handle', 'link', 'delivery_id', 'delivery_tag', 'settled',
         'frames', 'hex', 'trace', 'error']


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else HERE
    totals = {}
    problems = []
    for path in sorted(glob.glob(os.path.join(out_dir, '*-client.bin')) +
                       glob.glob(os.path.join(out_dir, '*-server.bin'))):
        base = os.path.basename(path)[:-len('.bin')]
        conn, direction = base.rsplit('-', 1)
        client = conn.split('-')[0]
        with open(path, 'rb') as f:
            buf = f.read()
        items = split(buf)
        msgs, unfinished = deliveries(conn, direction, items)
        frames = [{k: v for k, v in it.items() if not k.startswith('_')} for it in items]
        proton_gen.write_jsonl(os.path.join(out_dir, base + '-frames.jsonl'), frames)
        proton_gen.write_jsonl(os.path.join(out_dir, base + '-messages.jsonl'),
                               [{k: m[k] for k in ORDER if k in m} for m in msgs])
        t = totals.setdefault(client, {'connections': set(), 'frames': 0, 'messages': 0,
                                       'bytes': 0, 'proton-errors': 0})
        t['connections'].add(conn)
        t['frames'] += sum(1 for it in items if it['kind'] == 'frame')
        t['messages'] += len(msgs)
        t['bytes'] += len(buf)
        for it in items:
            if 'error' in it:
                problems.append('%s frame at %d: %s' % (base, it['offset'], it['error']))
        for m in msgs:
            if 'error' in m:
                t['proton-errors'] += 1
                problems.append('%s: %s' % (m['name'], m['error']))
        if unfinished:
            problems.append('%s: %d deliveries not finished when the stream ends'
                            % (base, unfinished))
    print('%-10s %5s %7s %9s %10s %s' % ('client', 'conns', 'frames', 'messages', 'bytes',
                                         'proton-errors'))
    for client, t in sorted(totals.items()):
        print('%-10s %5d %7d %9d %10d %d' % (client, len(t['connections']), t['frames'],
                                             t['messages'], t['bytes'], t['proton-errors']))
    print('%-10s %5d %7d %9d %10d' % (
        'total', sum(len(t['connections']) for t in totals.values()),
        sum(t['frames'] for t in totals.values()), sum(t['messages'] for t in totals.values()),
        sum(t['bytes'] for t in totals.values())))
    for p in problems:
        print('note:', p)


if __name__ == '__main__':
    sys.exit(main())
