#!/usr/bin/python3
"""Generate the Qpid Proton interop corpus for amqpsax (AMQP 1.0 type system).

Run from anywhere (output goes next to this file):

    /usr/bin/python3 testdata/proton/gen.py

Needs Qpid Proton's Python binding (Debian package python3-qpid-proton,
Proton 0.37).  Use Debian's /usr/bin/python3: the binding is installed for it.
The script is deterministic (fixed random seed, fake clock for the engine) and
rewrites these files in its own directory:

  values.jsonl            single AMQP values, one JSON object per line:
                          {"name", "code", "source", "hex", "trace"}
                          source "proton": bytes written by proton.Data.encode()
                          source "hand":   bytes built here with struct, in a
                                           width/form Proton's encoder never picks
                          Every trace comes from Proton's DECODER (Data.decode
                          + walking the Data tree), never from this script's own
                          model; the model is only used as a cross-check.
  messages.jsonl          whole messages from proton.Message(...).encode():
                          {"name", "hex", "trace"}; trace = the sequence of
                          top-level sections (each decoded by Proton in turn).
  performatives.jsonl     performatives cut out of real frames written by
                          Proton's engine (two Transport/Connection pairs
                          pumped in memory, no network).
  conn-client.bin         client->server byte stream of that connection
  conn-server.bin         server->client byte stream of that connection
  conn-client-frames.jsonl  protocol headers and frames of conn-client.bin
                          (offset/size/doff/type/channel)
  conn-server-frames.jsonl  the same for conn-server.bin
  conn-client-trunc.bin   prefix of conn-client.bin cut inside a frame
  conn-caps-client.bin    client->server byte stream of a second connection
  conn-caps-server.bin    whose opens carry offered- and desired-capabilities
                          given to the binding as Python lists: it writes each
                          as a LIST of symbols (list32 of sym8), not as a
                          symbol or an array of symbols as the spec says
  conn-caps-client-frames.jsonl, conn-caps-server-frames.jsonl
                          protocol headers and frames of those two streams
  proton-quirks.jsonl     inputs deliberately kept out of values.jsonl (Proton
                          rejects or misreads them), with Proton's result

See README.md for the exact trace format and the Proton quirks found.
"""

import json
import os
import random
import struct
import sys
import uuid

import cproton as cp  # the C binding the proton package wraps
import proton
from proton import Data

OUT = os.path.dirname(os.path.abspath(__file__))
SEED = 0x414D5150  # "AMQP"

# ---------------------------------------------------------------------------
# Value trees.  ('kind', payload...) tuples:
#   ('null',) ('boolean', bool) (<int kind>, int) ('float', bits32) ('double', bits64)
#   ('decimal32'|'decimal64'|'decimal128'|'uuid', bytes) ('char', codepoint)
#   ('timestamp', int) ('binary'|'string'|'symbol', bytes)
#   ('list', [items]) ('map', [k, v, k, v, ...])
#   ('array', elemkind, [elems], descriptor_or_None)   # descriptor => described array
#   ('described', descriptor, value)
# ---------------------------------------------------------------------------

PRIM_KINDS = ['null', 'boolean', 'ubyte', 'ushort', 'uint', 'ulong', 'byte', 'short',
              'int', 'long', 'float', 'double', 'decimal32', 'decimal64', 'decimal128',
              'char', 'timestamp', 'uuid', 'binary', 'string', 'symbol']
COMPOUND_KINDS = ['list', 'map', 'array', 'described']
ALL_KINDS = PRIM_KINDS + COMPOUND_KINDS

PN_TYPE = {
    'null': Data.NULL, 'boolean': Data.BOOL, 'ubyte': Data.UBYTE, 'ushort': Data.USHORT,
    'uint': Data.UINT, 'ulong': Data.ULONG, 'byte': Data.BYTE, 'short': Data.SHORT,
    'int': Data.INT, 'long': Data.LONG, 'float': Data.FLOAT, 'double': Data.DOUBLE,
    'decimal32': Data.DECIMAL32, 'decimal64': Data.DECIMAL64, 'decimal128': Data.DECIMAL128,
    'char': Data.CHAR, 'timestamp': Data.TIMESTAMP, 'uuid': Data.UUID, 'binary': Data.BINARY,
    'string': Data.STRING, 'symbol': Data.SYMBOL, 'list': Data.LIST, 'map': Data.MAP,
    'array': Data.ARRAY, 'described': Data.DESCRIBED,
}
KIND_OF_PN = {v: k for k, v in PN_TYPE.items()}

INT_RANGES = {
    'ubyte': (0, 2**8 - 1), 'ushort': (0, 2**16 - 1), 'uint': (0, 2**32 - 1),
    'ulong': (0, 2**64 - 1), 'byte': (-2**7, 2**7 - 1), 'short': (-2**15, 2**15 - 1),
    'int': (-2**31, 2**31 - 1), 'long': (-2**63, 2**63 - 1),
    'timestamp': (-2**63, 2**63 - 1),
}
INT_KINDS = list(INT_RANGES)


# ---------------------------------------------------------------------------
# Trace of a Proton Data tree (the reference: Proton's decoder).
# ---------------------------------------------------------------------------

class TraceError(Exception):
    pass


def _children(d, fn):
    """Enter the current node, call fn for every child, exit; return child count."""
    d.enter()
    n = 0
    while d.next() is not None:
        fn()
        n += 1
    d.exit()
    return n


def proton_walk(d, out):
    t = d.type()
    raw = d._data
    if t == Data.NULL:
        out.append('null')
    elif t == Data.BOOL:
        out.append('bool:true' if d.get_bool() else 'bool:false')
    elif t == Data.UBYTE:
        out.append('ubyte:%d' % d.get_ubyte())
    elif t == Data.USHORT:
        out.append('ushort:%d' % d.get_ushort())
    elif t == Data.UINT:
        out.append('uint:%d' % d.get_uint())
    elif t == Data.ULONG:
        out.append('ulong:%d' % d.get_ulong())
    elif t == Data.BYTE:
        out.append('byte:%d' % d.get_byte())
    elif t == Data.SHORT:
        out.append('short:%d' % d.get_short())
    elif t == Data.INT:
        out.append('int:%d' % d.get_int())
    elif t == Data.LONG:
        out.append('long:%d' % d.get_long())
    elif t == Data.FLOAT:
        out.append('float:' + struct.pack('>f', d.get_float()).hex())
    elif t == Data.DOUBLE:
        out.append('double:' + struct.pack('>d', d.get_double()).hex())
    elif t == Data.DECIMAL32:
        out.append('decimal32:' + struct.pack('>I', d.get_decimal32()).hex())
    elif t == Data.DECIMAL64:
        out.append('decimal64:' + struct.pack('>Q', d.get_decimal64()).hex())
    elif t == Data.DECIMAL128:
        out.append('decimal128:' + bytes(d.get_decimal128()).hex())
    elif t == Data.CHAR:
        # get_char() goes through chr(); read the raw code point instead.
        out.append('char:%d' % cp.pn_data_get_char(raw))
    elif t == Data.TIMESTAMP:
        out.append('timestamp:%d' % d.get_timestamp())
    elif t == Data.UUID:
        out.append('uuid:' + str(d.get_uuid()))
    elif t == Data.BINARY:
        out.append('binary:' + bytes(d.get_binary()).hex())
    elif t == Data.STRING:
        # get_string() would UTF-8 decode; keep the raw bytes Proton holds.
        out.append('string:' + bytes(cp.pn_data_get_string(raw)).hex())
    elif t == Data.SYMBOL:
        out.append('symbol:' + bytes(cp.pn_data_get_symbol(raw)).hex())
    elif t == Data.DESCRIBED:
        out.append('described')
        n = _children(d, lambda: proton_walk(d, out))
        if n != 2:
            raise TraceError('described node with %d children' % n)
        out.append('/described')
    elif t == Data.LIST:
        n = d.get_list()
        out.append('list:%d' % n)
        m = _children(d, lambda: proton_walk(d, out))
        if m != n:
            raise TraceError('list count %d but %d children' % (n, m))
        out.append('/list')
    elif t == Data.MAP:
        n = d.get_map()
        if n % 2:
            raise TraceError('map with odd child count %d' % n)
        out.append('map:%d' % (n // 2))
        m = _children(d, lambda: proton_walk(d, out))
        if m != n:
            raise TraceError('map count %d but %d children' % (n, m))
        out.append('/map')
    elif t == Data.ARRAY:
        count, described, atype = d.get_array()
        kind = 'described' if described else KIND_OF_PN[atype]
        out.append('array:%d:%s' % (count, kind))
        d.enter()
        desc = None
        if described:
            if d.next() is None:
                raise TraceError('described array without descriptor')
            desc = []
            proton_walk(d, desc)
        m = 0
        while d.next() is not None:
            if d.type() != atype:
                raise TraceError('array element type %r != %r' % (d.type(), atype))
            if described:
                out.append('described')
                out.extend(desc)
                proton_walk(d, out)
                out.append('/described')
            else:
                proton_walk(d, out)
            m += 1
        d.exit()
        if m != count:
            raise TraceError('array count %d but %d elements' % (count, m))
        out.append('/array')
    else:
        raise TraceError('unknown Proton type %r' % t)


def proton_decode_one(buf):
    """Decode the first value of buf with Proton; return (consumed, trace)."""
    d = Data()
    n = d.decode(buf)
    d.rewind()
    if d.next() is None:
        raise TraceError('nothing decoded')
    out = []
    proton_walk(d, out)
    if d.next() is not None:
        raise TraceError('more than one top-level node after one decode')
    return n, ' '.join(out)


def proton_decode_all(buf):
    """Decode a sequence of top-level values; return the joined traces."""
    traces = []
    off = 0
    while off < len(buf):
        n, tr = proton_decode_one(buf[off:])
        if n <= 0:
            raise TraceError('decoder made no progress')
        traces.append(tr)
        off += n
    return ' '.join(traces)


# ---------------------------------------------------------------------------
# Model trace of a tree (cross-check only).
# ---------------------------------------------------------------------------

def model_walk(t, out):
    k = t[0]
    if k == 'null':
        out.append('null')
    elif k == 'boolean':
        out.append('bool:true' if t[1] else 'bool:false')
    elif k in INT_RANGES or k == 'char':
        out.append('%s:%d' % (k, t[1]))
    elif k == 'float':
        out.append('float:%08x' % t[1])
    elif k == 'double':
        out.append('double:%016x' % t[1])
    elif k in ('decimal32', 'decimal64', 'decimal128', 'binary', 'string', 'symbol'):
        out.append('%s:%s' % (k, t[1].hex()))
    elif k == 'uuid':
        out.append('uuid:' + str(uuid.UUID(bytes=t[1])))
    elif k == 'list':
        out.append('list:%d' % len(t[1]))
        for c in t[1]:
            model_walk(c, out)
        out.append('/list')
    elif k == 'map':
        out.append('map:%d' % (len(t[1]) // 2))
        for c in t[1]:
            model_walk(c, out)
        out.append('/map')
    elif k == 'array':
        _, ek, elems, desc = t
        if desc is None:
            out.append('array:%d:%s' % (len(elems), ek))
            for e in elems:
                model_walk(e, out)
        else:
            out.append('array:%d:described' % len(elems))
            dt = []
            model_walk(desc, dt)
            for e in elems:
                out.append('described')
                out.extend(dt)
                model_walk(e, out)
                out.append('/described')
        out.append('/array')
    elif k == 'described':
        out.append('described')
        model_walk(t[1], out)
        model_walk(t[2], out)
        out.append('/described')
    else:
        raise ValueError(k)


def model_trace(t):
    out = []
    model_walk(t, out)
    return ' '.join(out)


# ---------------------------------------------------------------------------
# Putting a tree into proton.Data (raw cproton setters: no Python conversions).
# ---------------------------------------------------------------------------

def proton_put(d, t):
    k = t[0]
    r = d._data
    if k == 'null':
        d.put_null()
    elif k == 'boolean':
        d.put_bool(bool(t[1]))
    elif k == 'ubyte':
        cp.pn_data_put_ubyte(r, t[1])
    elif k == 'ushort':
        cp.pn_data_put_ushort(r, t[1])
    elif k == 'uint':
        cp.pn_data_put_uint(r, t[1])
    elif k == 'ulong':
        cp.pn_data_put_ulong(r, t[1])
    elif k == 'byte':
        cp.pn_data_put_byte(r, t[1])
    elif k == 'short':
        cp.pn_data_put_short(r, t[1])
    elif k == 'int':
        cp.pn_data_put_int(r, t[1])
    elif k == 'long':
        cp.pn_data_put_long(r, t[1])
    elif k == 'timestamp':
        cp.pn_data_put_timestamp(r, t[1])
    elif k == 'float':
        cp.pn_data_put_float(r, struct.unpack('>f', struct.pack('>I', t[1]))[0])
    elif k == 'double':
        cp.pn_data_put_double(r, struct.unpack('>d', struct.pack('>Q', t[1]))[0])
    elif k == 'decimal32':
        cp.pn_data_put_decimal32(r, struct.unpack('>I', t[1])[0])
    elif k == 'decimal64':
        cp.pn_data_put_decimal64(r, struct.unpack('>Q', t[1])[0])
    elif k == 'decimal128':
        cp.pn_data_put_decimal128(r, t[1])
    elif k == 'char':
        cp.pn_data_put_char(r, t[1])
    elif k == 'uuid':
        cp.pn_data_put_uuid(r, t[1])
    elif k == 'binary':
        cp.pn_data_put_binary(r, t[1])
    elif k == 'string':
        cp.pn_data_put_string(r, t[1])
    elif k == 'symbol':
        cp.pn_data_put_symbol(r, t[1])
    elif k == 'list':
        d.put_list()
        d.enter()
        for c in t[1]:
            proton_put(d, c)
        d.exit()
    elif k == 'map':
        d.put_map()
        d.enter()
        for c in t[1]:
            proton_put(d, c)
        d.exit()
    elif k == 'array':
        _, ek, elems, desc = t
        d.put_array(desc is not None, PN_TYPE[ek])
        d.enter()
        if desc is not None:
            proton_put(d, desc)
        for e in elems:
            proton_put(d, e)
        d.exit()
    elif k == 'described':
        d.put_described()
        d.enter()
        proton_put(d, t[1])
        proton_put(d, t[2])
        d.exit()
    else:
        raise ValueError(k)
    err = cp.pn_data_errno(r)
    if err:
        raise RuntimeError('proton put error %d for %r' % (err, k))


def proton_encode(t):
    d = Data()
    proton_put(d, t)
    return d.encode()


# ---------------------------------------------------------------------------
# Hand encoder: any legal width, chosen by a policy.
#   policy 'proton' reproduces Proton 0.37's Data encoder (checked against it)
#   policy 'random' picks uniformly among the legal forms for every node
# ---------------------------------------------------------------------------

FIXED = {  # code -> struct format of the payload
    0x50: '>B', 0x51: '>b', 0x60: '>H', 0x61: '>h', 0x70: '>I', 0x71: '>i', 0x52: '>B',
    0x53: '>B', 0x54: '>b', 0x55: '>b', 0x80: '>Q', 0x81: '>q', 0x83: '>q', 0x73: '>I',
    0x72: '>I', 0x82: '>Q',
}
VAR = {'binary': (0xa0, 0xb0), 'string': (0xa1, 0xb1), 'symbol': (0xa3, 0xb3)}
SIMPLE_CODE = {'ubyte': 0x50, 'ushort': 0x60, 'byte': 0x51, 'short': 0x61, 'float': 0x72,
               'double': 0x82, 'decimal32': 0x74, 'decimal64': 0x84, 'decimal128': 0x94,
               'char': 0x73, 'timestamp': 0x83, 'uuid': 0x98}
# Proton's pn_type2code: the constructor it writes for array elements.
ARRAY_CODE = dict(SIMPLE_CODE, null=0x40, boolean=0x56, uint=0x70, ulong=0x80, int=0x71,
                  long=0x81, binary=0xb0, string=0xb1, symbol=0xb3, list=0xd0, map=0xd1,
                  array=0xf0)


def legal_codes(t):
    """Legal constructors for one (non-array-element) node, Proton's choice first."""
    k = t[0]
    v = t[1] if len(t) > 1 else None
    if k == 'null':
        return [0x40]
    if k == 'boolean':
        return [0x41 if v else 0x42, 0x56]
    if k in SIMPLE_CODE:
        return [SIMPLE_CODE[k]]
    if k == 'uint':
        return ([0x43] if v == 0 else []) + ([0x52] if v < 256 else []) + [0x70]
    if k == 'ulong':
        return ([0x44] if v == 0 else []) + ([0x53] if v < 256 else []) + [0x80]
    if k == 'int':
        return ([0x54] if -128 <= v <= 127 else []) + [0x71]
    if k == 'long':
        return ([0x55] if -128 <= v <= 127 else []) + [0x81]
    if k in VAR:
        small, big = VAR[k]
        return ([small] if len(v) < 256 else []) + [big]
    if k == 'list':
        return ([0x45] if not v else []) + [0xd0, 0xc0]
    if k == 'map':
        return [0xd1, 0xc1]
    if k == 'array':
        return [0xf0, 0xe0]
    raise ValueError(k)


def array_elem_codes(ek, elems):
    """Legal shared constructors for the elements of an array, Proton's choice first."""
    codes = [ARRAY_CODE[ek]]
    vals = [e[1] for e in elems] if ek not in ('null', 'list', 'map', 'array') else []
    if ek == 'boolean':
        if all(vals):
            codes.append(0x41)
        if not any(vals):
            codes.append(0x42)
    elif ek in ('uint', 'ulong'):
        if all(x < 256 for x in vals):
            codes.append(0x52 if ek == 'uint' else 0x53)
        if all(x == 0 for x in vals):
            codes.append(0x43 if ek == 'uint' else 0x44)
    elif ek in ('int', 'long'):
        if all(-128 <= x <= 127 for x in vals):
            codes.append(0x54 if ek == 'int' else 0x55)
    elif ek in VAR:
        if all(len(x) < 256 for x in vals):
            codes.append(VAR[ek][0])
    elif ek == 'list':
        codes.append(0xc0)
        if all(not e[1] for e in elems):
            codes.append(0x45)
    elif ek == 'map':
        codes.append(0xc1)
    elif ek == 'array':
        codes.append(0xe0)
    return codes


class Encoder:
    def __init__(self, policy, rng=None, bias=0.5):
        self.policy = policy
        self.rng = rng
        self.bias = bias  # probability of deviating from Proton's choice (random policy)

    def pick(self, codes):
        if self.policy == 'proton' or len(codes) == 1:
            return codes[0]
        if self.policy == 'compact':
            return min(codes, key=lambda c: COMPACT_RANK.get(c, 3))
        if self.rng.random() < self.bias:
            return self.rng.choice(codes[1:])
        return codes[0]

    def encode(self, t, force=None):
        if t[0] == 'described':
            return b'\x00' + self.encode(t[1]) + self.encode(t[2])
        codes = legal_codes(t)
        if self.policy == 'proton':
            codes = [c for c in codes if c not in (0xc0, 0xc1, 0xe0)]
        if force is not None:
            return self.payload(t, force, top=True)
        code = self.pick(codes)
        if code in WIDE:
            try:
                return self.payload(t, code, top=True)
            except OverflowError:
                code = WIDE[code]  # an inner compound too big for the 8-bit form
        return self.payload(t, code, top=True)

    def compound_body(self, t):
        """(count, bytes after the count field) for a list/map/array."""
        k = t[0]
        if k in ('list', 'map'):
            return len(t[1]), b''.join(self.encode(c) for c in t[1])
        _, ek, elems, desc = t
        body = b''
        if desc is not None:
            body += b'\x00' + self.encode(desc)
        codes = array_elem_codes(ek, elems)
        if ek in ('list', 'map', 'array'):
            # pre-encode the element bodies, then drop the 8-bit form if any overflows
            parts = [self.compound_body(e) for e in elems]
            fits = all(n <= 255 and len(b) + 1 <= 255 for n, b in parts)
            if not fits:
                codes = [c for c in codes if c not in (0xc0, 0xc1, 0xe0)]
            if ek == 'list' and 0x45 in codes and self.policy == 'random' and self.rng.random() < 0.7:
                codes = [c for c in codes if c != 0x45]
            ec = self.pick(codes)
            body += bytes([ec])
            for n, b in parts:
                body += self.sized(ec, n, b)
            return len(elems), body
        ec = self.pick(codes)
        body += bytes([ec])
        for e in elems:
            body += self.payload(e, ec, top=False)
        return len(elems), body

    def sized(self, code, n, b):
        if code == 0x45:
            assert n == 0
            return b''
        if code in (0xc0, 0xc1, 0xe0):
            if n > 255 or len(b) + 1 > 255:
                raise OverflowError('does not fit 8-bit compound')
            return struct.pack('>BB', len(b) + 1, n) + b
        return struct.pack('>II', len(b) + 4, n) + b

    def payload(self, t, code, top):
        """Encoding of t with constructor code; top=True includes the code byte."""
        pre = bytes([code]) if top else b''
        k = t[0]
        v = t[1] if len(t) > 1 else None
        if code in (0x40, 0x41, 0x42, 0x43, 0x44, 0x45):
            return pre
        if code == 0x56:
            return pre + bytes([1 if v else 0])
        if code in FIXED:
            return pre + struct.pack(FIXED[code], v)
        if code in (0x74, 0x84, 0x94, 0x98):
            return pre + v
        if code in (0xa0, 0xa1, 0xa3):
            return pre + struct.pack('>B', len(v)) + v
        if code in (0xb0, 0xb1, 0xb3):
            return pre + struct.pack('>I', len(v)) + v
        if code in (0xc0, 0xd0, 0xc1, 0xd1, 0xe0, 0xf0):
            n, b = self.compound_body(t)
            return pre + self.sized(code, n, b)
        raise ValueError('code %#x for %s' % (code, k))


PROTON_MIMIC = Encoder('proton')
WIDE = {0xc0: 0xd0, 0xc1: 0xd1, 0xe0: 0xf0}
# 'compact' policy: zero-width forms first, then 1-byte payloads, then 8-bit sizes
COMPACT_RANK = {0x40: 0, 0x41: 0, 0x42: 0, 0x43: 0, 0x44: 0, 0x45: 0, 0x52: 1, 0x53: 1,
                0x54: 1, 0x55: 1, 0x56: 1, 0xa0: 2, 0xa1: 2, 0xa3: 2, 0xc0: 2, 0xc1: 2, 0xe0: 2}


# ---------------------------------------------------------------------------
# Random trees.
# ---------------------------------------------------------------------------

BOUNDS = {
    'ubyte': [0, 1, 127, 128, 254, 255],
    'ushort': [0, 1, 127, 128, 255, 256, 32767, 32768, 65534, 65535],
    'uint': [0, 1, 127, 128, 255, 256, 65535, 65536, 2**24, 2**31 - 1, 2**31, 2**32 - 2, 2**32 - 1],
    'ulong': [0, 1, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**53, 2**63 - 1, 2**63,
              2**64 - 2, 2**64 - 1],
    'byte': [-128, -127, -1, 0, 1, 126, 127],
    'short': [-32768, -32767, -129, -128, -1, 0, 1, 127, 128, 255, 256, 32766, 32767],
    'int': [-2**31, -2**31 + 1, -32769, -32768, -129, -128, -1, 0, 1, 127, 128, 255, 256,
            32767, 32768, 2**31 - 2, 2**31 - 1],
    'long': [-2**63, -2**63 + 1, -2**31 - 1, -2**31, -129, -128, -1, 0, 1, 127, 128, 255, 256,
             2**31 - 1, 2**31, 2**32, 2**63 - 2, 2**63 - 1],
    'timestamp': [-2**63, -1, 0, 1, 1000, 1234567890123, 1700000000000, 253402300799999,
                  -62135596800000, 2**63 - 1],
}

FLOAT_SPECIAL = [0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000,
                 0x7fc00000, 0xffc00000, 0x7fc00001, 0x7fffffff, 0xffffffff, 0x7fe00000,
                 0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00800000, 0x80800000,
                 0x7f7fffff, 0xff7fffff, 0x3eaaaaab, 0x40490fdb, 0x3f000000, 0x4b800000,
                 0x3dcccccd, 0xc2f6e979]
DOUBLE_SPECIAL = [0x0000000000000000, 0x8000000000000000, 0x3ff0000000000000,
                  0xbff0000000000000, 0x7ff0000000000000, 0xfff0000000000000,
                  0x7ff8000000000000, 0xfff8000000000000, 0x7ff8000000000001,
                  0x7fffffffffffffff, 0xffffffffffffffff, 0x0000000000000001,
                  0x8000000000000001, 0x000fffffffffffff, 0x0010000000000000,
                  0x7fefffffffffffff, 0xffefffffffffffff, 0x3fb999999999999a,
                  0x400921fb54442d18, 0x4340000000000000, 0x3fd5555555555555,
                  0xc0934a456d5cfaad, 0x36a0000000000000]
DEC_SPECIAL = {
    'decimal32': ['00000000', 'ffffffff', '22500000', '22500001', 'a2500001', '7c000000',
                  'fc000000', '78000000', 'f8000000', '7e000000', '2e3ffffd', '00000001'],
    'decimal64': ['0000000000000000', 'ffffffffffffffff', '2238000000000000',
                  '2238000000000001', 'a238000000000001', '7c00000000000000',
                  '7800000000000000', 'f800000000000000', '7e00000000000000',
                  '2e3ffffffffffffd', '0000000000000001'],
    'decimal128': ['00000000000000000000000000000000', 'ffffffffffffffffffffffffffffffff',
                   '22080000000000000000000000000000', '22080000000000000000000000000001',
                   'a2080000000000000000000000000001', '7c000000000000000000000000000000',
                   '78000000000000000000000000000000', 'f8000000000000000000000000000000',
                   '7e000000000000000000000000000000', '000102030405060708090a0b0c0d0e0f'],
}
CHAR_SPECIAL = [0, 1, 0x1f, 0x20, 0x41, 0x7f, 0x80, 0xff, 0x100, 0x7ff, 0x800, 0xd7ff,
                0xe000, 0xfeff, 0xfffd, 0xfffe, 0xffff, 0x10000, 0x1f600, 0x10fffe, 0x10ffff]
UUID_SPECIAL = ['00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff',
                '12345678-9abc-def0-1234-56789abcdef0', '6ba7b810-9dad-11d1-80b4-00c04fd430c8']

# characters by UTF-8 length, used for strings
UTF8_POOLS = [
    (1, [(0x20, 0x7e)]),
    (2, [(0x80, 0x7ff)]),
    (3, [(0x800, 0xd7ff), (0xe000, 0xfffd)]),
    (4, [(0x10000, 0x10ffff)]),
]
FIXED_STRINGS = ['', 'a', 'hello', 'h\u00e9llo w\u00f6rld', '\u65e5\u672c\u8a9e',
                 '\U0001F600\U0001F680', '\u0000', 'tab\tnew\nline', '\u00ff\u0100\u07ff\u0800',
                 '\uffff\U00010000\U0010ffff', 'emoji \U0001F44D\U0001F3FD mixed \u00e9\u4e2d']


def is_snan32(b):
    return (b & 0x7f800000) == 0x7f800000 and (b & 0x007fffff) and not (b & 0x00400000)


def is_snan64(b):
    return ((b & 0x7ff0000000000000) == 0x7ff0000000000000 and (b & 0x000fffffffffffff)
            and not (b & 0x0008000000000000))


class Gen:
    def __init__(self, rng):
        self.rng = rng

    # --- primitives ---
    def int_of(self, k):
        r = self.rng
        lo, hi = INT_RANGES[k]
        if r.random() < 0.25:
            return r.choice(BOUNDS[k])
        width = hi.bit_length()
        bits = r.randint(1, width)
        v = r.getrandbits(bits)
        if lo < 0 and r.random() < 0.5:
            v = -v - 1
        return max(lo, min(hi, v))

    def float_bits(self):
        r = self.rng
        if r.random() < 0.2:
            return r.choice(FLOAT_SPECIAL)
        if r.random() < 0.3:
            return struct.unpack('>I', struct.pack('>f', r.uniform(-1e6, 1e6)))[0]
        while True:
            b = r.getrandbits(32)
            if not is_snan32(b):
                return b

    def double_bits(self):
        r = self.rng
        if r.random() < 0.2:
            return r.choice(DOUBLE_SPECIAL)
        if r.random() < 0.3:
            return struct.unpack('>Q', struct.pack('>d', r.uniform(-1e9, 1e9)))[0]
        while True:
            b = r.getrandbits(64)
            if not is_snan64(b):
                return b

    def char(self):
        r = self.rng
        if r.random() < 0.25:
            return r.choice(CHAR_SPECIAL)
        while True:
            c = r.choice([r.randint(0, 0x7f), r.randint(0x80, 0x7ff), r.randint(0x800, 0xffff),
                          r.randint(0x10000, 0x10ffff)])
            if not 0xd800 <= c <= 0xdfff:
                return c

    def length(self, maxlen=40):
        r = self.rng
        x = r.random()
        if x < 0.1:
            return 0
        if x < 0.6:
            return r.randint(1, 8)
        return r.randint(1, maxlen)

    def utf8(self, nbytes):
        """A random valid UTF-8 string of exactly nbytes bytes."""
        r = self.rng
        out = []
        left = nbytes
        while left > 0:
            choices = [p for p in UTF8_POOLS if p[0] <= left]
            n, ranges = r.choice(choices)
            lo, hi = r.choice(ranges)
            out.append(chr(r.randint(lo, hi)))
            left -= n
        s = ''.join(out).encode('utf-8')
        assert len(s) == nbytes
        return s

    def string(self, maxlen=40):
        if self.rng.random() < 0.15:
            return self.rng.choice(FIXED_STRINGS).encode('utf-8')
        return self.utf8(self.length(maxlen))

    def symbol(self, maxlen=40, n=None):
        r = self.rng
        if n is None:
            if r.random() < 0.3:
                return r.choice([b'', b'a', b'amqp:accepted:list', b'x-opt-key', b'PLAIN',
                                 b'com.example:type', b'sym bol', b'~!@#$%^&*()'])
            n = self.length(maxlen)
        return bytes(r.randint(0x20, 0x7e) for _ in range(n))

    def binary(self, maxlen=40, n=None):
        if n is None:
            n = self.length(maxlen)
        return bytes(self.rng.getrandbits(8) for _ in range(n))

    def prim(self, k, maxlen=40):
        r = self.rng
        if k == 'null':
            return ('null',)
        if k == 'boolean':
            return ('boolean', r.random() < 0.5)
        if k in INT_RANGES:
            return (k, self.int_of(k))
        if k == 'float':
            return ('float', self.float_bits())
        if k == 'double':
            return ('double', self.double_bits())
        if k in DEC_SPECIAL:
            if r.random() < 0.2:
                return (k, bytes.fromhex(r.choice(DEC_SPECIAL[k])))
            return (k, self.binary(n={'decimal32': 4, 'decimal64': 8, 'decimal128': 16}[k]))
        if k == 'char':
            return ('char', self.char())
        if k == 'uuid':
            if r.random() < 0.1:
                return ('uuid', uuid.UUID(r.choice(UUID_SPECIAL)).bytes)
            return ('uuid', self.binary(n=16))
        if k == 'binary':
            return ('binary', self.binary(maxlen))
        if k == 'string':
            return ('string', self.string(maxlen))
        if k == 'symbol':
            return ('symbol', self.symbol(maxlen))
        raise ValueError(k)

    # --- compounds ---
    def descriptor(self):
        r = self.rng
        x = r.random()
        if x < 0.5:
            return ('ulong', r.choice([0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,
                                       0x23, 0x24, 0x25, 0x26, 0x27, 0x40, 0x41, 0x44, 0x70,
                                       0x73, 0x77, 0, 1, 255, 256, 0x0000468c00000001,
                                       2**64 - 1]))
        if x < 0.95:
            return ('symbol', r.choice([b'amqp:open:list', b'amqp:data:binary',
                                        b'com.example:point', b'x', b'', b'amqp:accepted:list',
                                        b'org.apache:selector-filter:string']))
        k = r.choice(['uint', 'string', 'ubyte', 'long', 'binary', 'boolean', 'null', 'uuid'])
        return self.prim(k, maxlen=8)

    def of_kind(self, k, depth):
        if k in PRIM_KINDS:
            return self.prim(k, maxlen=24 if depth else 40)
        if k == 'list':
            return self.list_(depth)
        if k == 'map':
            return self.map_(depth)
        if k == 'array':
            return self.array_(depth)
        if k == 'described':
            return self.described(depth)
        raise ValueError(k)

    def any_kind(self, depth):
        r = self.rng
        if depth >= 3 or r.random() < 0.7:
            return r.choice(PRIM_KINDS)
        return r.choice(COMPOUND_KINDS)

    def value(self, depth=0):
        return self.of_kind(self.any_kind(depth), depth)

    def list_(self, depth, n=None):
        if n is None:
            n = self.rng.choice([0, 1, 2, 3, 4, 5, 6, 8]) if depth < 3 else self.rng.randint(0, 2)
        return ('list', [self.value(depth + 1) for _ in range(n)])

    def map_(self, depth, n=None, keykind=None):
        r = self.rng
        if n is None:
            n = r.choice([0, 1, 2, 3, 4, 5]) if depth < 3 else r.randint(0, 2)
        items = []
        for _ in range(n):
            kk = keykind or r.choice(['symbol', 'symbol', 'string', 'ulong', 'int', 'any'])
            key = self.value(depth + 2) if kk == 'any' else self.prim(kk, maxlen=12)
            items += [key, self.value(depth + 1)]
        return ('map', items)

    def array_(self, depth, ek=None, n=None, described=None):
        r = self.rng
        if ek is None:
            if depth >= 2:
                ek = r.choice(PRIM_KINDS)
            else:
                ek = r.choice(PRIM_KINDS + ['list', 'map', 'array', 'described'])
        if ek == 'described':
            described = True
            ek = r.choice(PRIM_KINDS + ['list', 'map']) if depth < 2 else r.choice(PRIM_KINDS)
        if n is None:
            n = r.choice([0, 1, 2, 3, 4, 5, 7]) if depth < 2 else r.randint(0, 3)
        desc = self.descriptor() if described else None
        if ek == 'array':
            # arrays of arrays: inner arrays may differ in element type
            elems = [self.array_(depth + 1) for _ in range(n)]
        else:
            elems = [self.of_kind(ek, depth + 1) for _ in range(n)]
        return ('array', ek, elems, desc)

    def described(self, depth, vk=None):
        vk = vk or self.any_kind(depth + 1)
        return ('described', self.descriptor(), self.of_kind(vk, depth + 1))


# ---------------------------------------------------------------------------
# Corpus bookkeeping
# ---------------------------------------------------------------------------

ALL_CODES = [0x40, 0x56, 0x41, 0x42, 0x50, 0x60, 0x70, 0x52, 0x43, 0x80, 0x53, 0x44, 0x51,
             0x61, 0x71, 0x54, 0x81, 0x55, 0x72, 0x82, 0x74, 0x84, 0x94, 0x73, 0x83, 0x98,
             0xa0, 0xb0, 0xa1, 0xb1, 0xa3, 0xb3, 0x45, 0xc0, 0xd0, 0xc1, 0xd1, 0xe0, 0xf0]
TARGET = 300
TARGET_MAX = 320


class Corpus:
    def __init__(self):
        self.entries = []
        self.names = set()
        self.seen = set()  # (hex, source)
        self.by_code = {}
        self.rejected = []  # (name, reason)
        self.mimic_mismatch = []

    def count(self, code):
        return self.by_code.get(code, 0)

    def _name(self, name):
        base = name
        i = 2
        while name in self.names:
            name = '%s#%d' % (base, i)
            i += 1
        self.names.add(name)
        return name

    def _add(self, name, source, buf, t, expect_code=None):
        h = buf.hex()
        if (h, source) in self.seen:
            return False
        code = buf[0]
        if expect_code is not None and code != expect_code:
            return False
        try:
            n, trace = proton_decode_one(buf)
        except Exception as e:  # noqa: BLE001 - Proton raises DataException et al.
            self.rejected.append((name, 'decode: %s' % e))
            return False
        if n != len(buf):
            self.rejected.append((name, 'decoded %d of %d bytes' % (n, len(buf))))
            return False
        mt = model_trace(t)
        if trace != mt:
            self.rejected.append((name, 'trace differs from model: %s' % trace[:200]))
            return False
        self.seen.add((h, source))
        self.by_code[code] = self.by_code.get(code, 0) + 1
        self.entries.append({'name': self._name(name), 'code': '0x%02x' % code,
                             'source': source, 'hex': h, 'trace': trace})
        return True

    def proton(self, name, t, expect_code=None):
        buf = proton_encode(t)
        mimic = PROTON_MIMIC.encode(t)
        if mimic != buf:
            self.mimic_mismatch.append((name, buf.hex()[:120], mimic.hex()[:120]))
        return self._add(name, 'proton', buf, t, expect_code)

    def hand(self, name, t, code, enc):
        """Hand-encode t with outer constructor `code` (None: described)."""
        try:
            buf = enc.encode(t, force=code)
        except (OverflowError, ValueError, struct.error):
            return False
        if buf == proton_encode(t):
            # Proton writes exactly these bytes; record it as a proton entry instead
            return self._add(name, 'proton', buf, t, code)
        return self._add(name, 'hand', buf, t, code)


# ---------------------------------------------------------------------------
# values.jsonl
# ---------------------------------------------------------------------------

def gen_values(rng):
    c = Corpus()
    g = Gen(rng)
    enc = Encoder('random', rng, bias=0.5)

    # --- one-valued codes: null/true/false/uint0/ulong0/list0 and the two 0x56 values
    c.proton('null', ('null',))
    c.proton('true', ('boolean', True))
    c.proton('false', ('boolean', False))
    c.hand('bool-0x56-true', ('boolean', True), 0x56, enc)
    c.hand('bool-0x56-false', ('boolean', False), 0x56, enc)
    c.proton('uint0', ('uint', 0))
    c.proton('ulong0', ('ulong', 0))
    c.proton('list0', ('list', []))
    for code, t in ((0x40, ('null',)), (0x41, ('boolean', True)), (0x42, ('boolean', False)), (0x43, ('uint', 0)),
                    (0x44, ('ulong', 0)), (0x45, ('list', []))):
        # same bytes as the proton entry, but recorded as produced by the hand path
        c._add('%s-hand-%#04x' % (t[0], code), 'hand', enc.encode(t, force=code), t, code)

    # --- the 8-bit domains: every value
    for v in range(256):
        c.proton('ubyte-%d' % v, ('ubyte', v))
        c.proton('byte-%d' % (v - 128), ('byte', v - 128))
        c.proton('int-small-%d' % (v - 128), ('int', v - 128), 0x54)
        c.proton('long-small-%d' % (v - 128), ('long', v - 128), 0x55)
        if v:
            c.proton('smalluint-%d' % v, ('uint', v), 0x52)
            c.proton('smallulong-%d' % v, ('ulong', v), 0x53)
    c.hand('smalluint-0', ('uint', 0), 0x52, enc)
    c.hand('smallulong-0', ('ulong', 0), 0x53, enc)

    # --- wide forms of small values (hand) and wide values (proton)
    def fill(code, kind, filt, hand, vals=None):
        tries = 0
        for v in (vals if vals is not None else BOUNDS.get(kind, [])):
            if filt(v):
                t = (kind, v)
                (c.hand('%s-%#04x-hand-%d' % (kind, code, v), t, code, enc) if hand
                 else c.proton('%s-%d' % (kind, v), t, code))
        while c.count(code) < TARGET_MAX and tries < 20000:
            tries += 1
            v = g.int_of(kind)
            if not filt(v):
                if kind in ('byte', 'ubyte') or not hand:
                    continue
                v = v % 256 if kind in ('uint', 'ulong') else (v % 256) - 128
                if not filt(v):
                    continue
            t = (kind, v)
            if hand:
                c.hand('%s-%#04x-hand-%d' % (kind, code, v), t, code, enc)
            else:
                c.proton('%s-%d' % (kind, v), t, code)

    fill(0x60, 'ushort', lambda v: True, False)
    fill(0x61, 'short', lambda v: True, False)
    fill(0x70, 'uint', lambda v: v >= 256, False)
    fill(0x80, 'ulong', lambda v: v >= 256, False)
    fill(0x71, 'int', lambda v: not -128 <= v <= 127, False)
    fill(0x81, 'long', lambda v: not -128 <= v <= 127, False)
    fill(0x83, 'timestamp', lambda v: True, False)
    # wide encodings of values that fit a smaller form: all 256 small values each,
    # taking the hand total for the code past the target.
    for code, kind, vals in ((0x70, 'uint', range(256)), (0x80, 'ulong', range(256)),
                             (0x71, 'int', range(-128, 128)), (0x81, 'long', range(-128, 128))):
        for v in vals:
            c.hand('%s-%#04x-hand-%d' % (kind, code, v), (kind, v), code, enc)

    # --- floats, decimals, chars, uuids
    for b in FLOAT_SPECIAL:
        c.proton('float-%08x' % b, ('float', b))
    while c.count(0x72) < TARGET_MAX:
        b = g.float_bits()
        c.proton('float-%08x' % b, ('float', b))
    for b in DOUBLE_SPECIAL:
        c.proton('double-%016x' % b, ('double', b))
    while c.count(0x82) < TARGET_MAX:
        b = g.double_bits()
        c.proton('double-%016x' % b, ('double', b))
    for k, code in (('decimal32', 0x74), ('decimal64', 0x84), ('decimal128', 0x94)):
        for h in DEC_SPECIAL[k]:
            c.proton('%s-%s' % (k, h), (k, bytes.fromhex(h)))
        while c.count(code) < TARGET_MAX:
            t = g.prim(k)
            c.proton('%s-%s' % (k, t[1].hex()), t)
    for ch in CHAR_SPECIAL:
        c.proton('char-%d' % ch, ('char', ch))
    while c.count(0x73) < TARGET_MAX:
        ch = g.char()
        c.proton('char-%d' % ch, ('char', ch))
    for u in UUID_SPECIAL:
        c.proton('uuid-' + u, ('uuid', uuid.UUID(u).bytes))
    while c.count(0x98) < TARGET_MAX:
        t = g.prim('uuid')
        c.proton('uuid-' + str(uuid.UUID(bytes=t[1])), t)

    # --- binary / string / symbol, both widths
    def var_len(kind, n):
        if kind == 'binary':
            return ('binary', g.binary(n=n))
        if kind == 'string':
            return ('string', g.utf8(n))
        return ('symbol', g.symbol(n=n))

    for kind, (small, big) in VAR.items():
        # proton: short forms, all boundary lengths
        for n in (0, 1, 2, 127, 128, 254, 255):
            c.proton('%s-len%d' % (kind, n), var_len(kind, n), small)
        if kind == 'string':
            for s in FIXED_STRINGS:
                c.proton('string-fixed-%s' % s.encode('utf-8').hex()[:24], ('string', s.encode('utf-8')), small)
            # 255 bytes made of 4-byte sequences + padding, and a 256-byte one
            c.proton('string-255-4byte', ('string', ('\U0010ffff' * 63 + 'abc').encode()), small)
            c.proton('string-256-4byte', ('string', ('\U0001F600' * 64).encode()), big)
        i = 0
        while c.count(small) < TARGET_MAX:
            i += 1
            n = g.length(60) if i % 10 else g.rng.randint(100, 255)
            c.proton('%s-len%d-%d' % (kind, n, i), var_len(kind, n), small)
        # proton: long forms
        for n in (256, 257, 511, 512, 1000, 1024):
            c.proton('%s-len%d' % (kind, n), var_len(kind, n), big)
        i = 0
        while c.count(big) < 60:
            i += 1
            n = g.rng.randint(256, 600)
            c.proton('%s-len%d-%d' % (kind, n, i), var_len(kind, n), big)
        # hand: 32-bit forms of short values
        for n in (0, 1, 127, 128, 254, 255):
            c.hand('%s-%#04x-hand-len%d' % (kind, big, n), var_len(kind, n), big, enc)
        if kind == 'string':
            for s in FIXED_STRINGS:
                c.hand('string-0xb1-hand-fixed-%s' % s.encode('utf-8').hex()[:24], ('string', s.encode('utf-8')), big, enc)
        i = 0
        while c.count(big) < TARGET_MAX:
            i += 1
            n = g.length(60)
            c.hand('%s-%#04x-hand-len%d-%d' % (kind, big, n, i), var_len(kind, n), big, enc)

    # --- compounds (systematic coverage first, then random fill)
    gen_compounds(c, g, enc, rng)
    return c


def gen_compounds(c, g, enc, rng):
    r = rng
    sym = lambda s: ('symbol', s.encode())  # noqa: E731
    ul = lambda v: ('ulong', v)  # noqa: E731
    text = lambda s: ('string', s.encode())  # noqa: E731

    systematic = []  # (name, tree)
    for k in ALL_KINDS:
        systematic.append(('list-of-%s' % k, ('list', [g.of_kind(k, 1) for _ in range(3)])))
        systematic.append(('list-of-one-%s' % k, ('list', [g.of_kind(k, 1)])))
        systematic.append(('map-symbol-to-%s' % k,
                           ('map', sum([[sym('k%d' % i), g.of_kind(k, 1)] for i in range(3)], []))))
        if k in PRIM_KINDS:
            keys = []
            while len(keys) < 6:
                key = g.prim(k, maxlen=10)
                if key not in keys[::2]:
                    keys += [key, g.value(1)]
                if k in ('null', 'boolean'):
                    break
            systematic.append(('map-%s-keys' % k, ('map', keys)))
        if k != 'described':
            for n in (0, 1, 3):
                systematic.append(('array-%d-of-%s' % (n, k), g.array_(1, ek=k, n=n)))
            systematic.append(('array-described-ulong-of-%s' % k,
                               ('array', k, [g.of_kind(k, 2) for _ in range(3)], ul(0x77))))
            systematic.append(('array-described-symbol-of-%s' % k,
                               ('array', k, [g.of_kind(k, 2) for _ in range(2)], sym('com.example:elem'))))
            systematic.append(('array-described-empty-of-%s' % k, ('array', k, [], ul(0x78))))
        else:
            systematic.append(('array-of-described', g.array_(1, ek='described', n=3)))
        systematic.append(('list-with-described-%s' % k,
                           ('list', [('described', ul(0x70), g.of_kind(k, 2)), ('int', 7)])))
    # empties and nesting
    systematic += [
        ('list-empty', ('list', [])),
        ('map-empty', ('map', [])),
        ('list-of-empties', ('list', [('list', []), ('map', []), ('array', 'int', [], None),
                                      ('binary', b''), ('string', b''), ('symbol', b'')])),
        ('nested-list-map-list', ('list', [('map', [sym('inner'), ('list', [('uint', 1), ('map', [text('deep'), ('list', [('null',)])])])]), ('int', -1)])),
        ('nested-map-list-map', ('map', [text('a'), ('list', [('map', [('ulong', 1), ('list', [])])]), sym('b'), ('map', [])])),
        ('map-mixed-keys', ('map', [sym('s'), ('int', 1), text('str'), ('int', 2), ('ulong', 3), ('int', 3),
                                    ('int', -4), ('int', 4), ('binary', b'\x00\xff'), ('int', 5), ('null',), ('int', 6),
                                    ('boolean', True), ('int', 7), ('uuid', bytes(16)), ('int', 8),
                                    ('list', [('uint', 9)]), ('int', 9), ('double', 0x3ff0000000000000), ('int', 10)])),
        ('array-of-null', ('array', 'null', [('null',)] * 4, None)),
        ('array-of-empty-lists', ('array', 'list', [('list', [])] * 3, None)),
        ('array-of-empty-maps', ('array', 'map', [('map', [])] * 2, None)),
        ('array-of-empty-arrays', ('array', 'array', [('array', 'uint', [], None), ('array', 'string', [], None)], None)),
        ('array-of-arrays-mixed', ('array', 'array', [('array', 'int', [('int', 1), ('int', -1)], None),
                                                      ('array', 'symbol', [sym('x')], None),
                                                      ('array', 'ulong', [], ul(0x33))], None)),
        ('array-of-described-arrays', ('array', 'array', [('array', 'int', [('int', 1)], sym('d')),
                                                          ('array', 'int', [('int', 2), ('int', 3)], sym('d'))], None)),
        ('array-of-lists', ('array', 'list', [('list', [('int', 1), text('a')]), ('list', []), ('list', [('null',)])], None)),
        ('array-of-maps', ('array', 'map', [('map', [sym('a'), ('int', 1)]), ('map', [])], None)),
        ('described-ulong-list', ('described', ul(0x10), ('list', [text('container'), text('host'), ('uint', 512)]))),
        ('described-symbol-string', ('described', sym('com.example:name'), text('value'))),
        ('described-value-is-described', ('described', ul(1), ('described', ul(2), ('int', 3)))),
        ('described-in-list-last', ('list', [('int', 1), ('described', ul(1), ('described', sym('b'), ('null',)))])),
        ('described-in-array', ('array', 'string', [text('a'), text('b')], ul(0x75))),
        ('described-array-value', ('described', ul(0x76), ('array', 'ulong', [ul(1), ul(2)], None))),
        ('described-described-array', ('described', ul(0x76), ('array', 'ulong', [ul(1), ul(300)], sym('inner')))),
        ('described-empty-list', ('described', ul(0x23), ('list', []))),
        ('described-list-trailing-nulls', ('described', ul(0x10), ('list', [text('c'), ('null',), ('null',)]))),
        ('list-of-described-mixed', ('list', [('described', ul(0x24), ('list', [])), ('described', ul(0x25), ('list', [])),
                                              ('described', sym('x-opt'), ('map', [sym('k'), text('v')]))])),
        ('array-bool-all-true', ('array', 'boolean', [('boolean', True)] * 3, None)),
        ('array-bool-all-false', ('array', 'boolean', [('boolean', False)] * 3, None)),
        ('array-uint-zeros', ('array', 'uint', [('uint', 0)] * 3, None)),
        ('array-ulong-small', ('array', 'ulong', [ul(1), ul(255), ul(0)], None)),
        ('array-int-small', ('array', 'int', [('int', -128), ('int', 127)], None)),
        ('array-symbol-long', ('array', 'symbol', [sym('x' * 300), sym('y')], None)),
    ]
    for k in PRIM_KINDS:
        systematic.append(('described-ulong-%s' % k, ('described', ul(r.randint(0, 0x80)), g.prim(k))))
        systematic.append(('described-symbol-%s' % k, ('described', sym('com.example:' + k), g.prim(k))))
        systematic.append(('described-by-%s' % k, ('described', g.prim(k, maxlen=6), g.prim('string', maxlen=6))))

    # size boundaries: list/map/array whose size field (and whole encoding) straddles 255/256
    for target in range(250, 262):
        # list [binary(L)] : list32 size field = 4 + (1 or 5) + 1 + L ... choose L for 8-bit form too
        L = target - 1 - 2  # list8 size = 1(count) + a0 + len + L
        if 0 <= L < 256:
            systematic.append(('list-binary-size%d' % target, ('list', [('binary', g.binary(n=L))])))
        systematic.append(('list-of-%d-nulls' % (target - 1), ('list', [('null',)] * (target - 1))))
        systematic.append(('list-of-%d-ubytes' % (target // 2), ('list', [('ubyte', i % 256) for i in range(target // 2)])))
        systematic.append(('map-of-%d-null-pairs' % ((target - 1) // 2), ('map', [('null',)] * (2 * ((target - 1) // 2)))))
        systematic.append(('array-of-%d-ubytes' % (target - 2), ('array', 'ubyte', [('ubyte', i % 256) for i in range(target - 2)], None)))
        systematic.append(('array-of-%d-nulls' % (target - 2), ('array', 'null', [('null',)] * (target - 2), None)))
    for n in (254, 255, 256, 257):
        systematic.append(('list-count%d' % n, ('list', [('uint', 0)] * n)))
        systematic.append(('array-count%d-bool' % n, ('array', 'boolean', [('boolean', i % 3 == 0) for i in range(n)], None)))
    for total in (254, 255, 256, 257):
        # whole encoding of list32 = 9 + items; items = a0 len + L
        L = total - 9 - 2
        systematic.append(('list32-total%d' % total, ('list', [('binary', g.binary(n=L))])))

    # proton encodes every systematic tree; the hand path re-encodes each one in
    # 8-bit forms / random inner widths, and once with the most compact form of
    # every node (zero-width array element constructors 0x40-0x45, 0x52..0x56, 8-bit
    # sizes everywhere).
    compact = Encoder('compact')
    for name, t in systematic:
        c.proton(name, t)
    for name, t in systematic:
        k = t[0]
        if k == 'described':
            c.hand(name + '-hand', t, None, enc)
            c.hand(name + '-compact', t, None, compact)
            continue
        small = {'list': 0xc0, 'map': 0xc1, 'array': 0xe0}[k]
        big = {'list': 0xd0, 'map': 0xd1, 'array': 0xf0}[k]
        c.hand(name + '-hand8', t, small, enc)
        c.hand(name + '-hand32', t, big, enc)
        c.hand(name + '-compact', t, small, compact)
    # empty 8-bit and 32-bit compounds, and empty arrays in 8-bit form
    for code, t in ((0xc0, ('list', [])), (0xd0, ('list', [])), (0xc1, ('map', [])), (0xd1, ('map', []))):
        c.hand('%s-empty-%#04x' % (t[0], code), t, code, enc)

    # random fill to the target for each compound code, and random described values
    i = 0
    fill_codes = {0xd0: ('list', 'proton'), 0xd1: ('map', 'proton'), 0xf0: ('array', 'proton'),
                  0xc0: ('list', 'hand'), 0xc1: ('map', 'hand'), 0xe0: ('array', 'hand')}
    while any(c.count(code) < TARGET_MAX for code in fill_codes) and i < 50000:
        i += 1
        for code, (k, src) in fill_codes.items():
            if c.count(code) >= TARGET_MAX:
                continue
            t = g.of_kind(k, 0)
            if k != 'array' and not t[1]:
                continue
            if src == 'proton':
                # a third of the 32-bit entries are hand-built with mixed inner widths
                if i % 3 == 0:
                    c.hand('%s-%#04x-hand-rand-%d' % (k, code, i), t, code, enc)
                else:
                    c.proton('%s-rand-%d' % (k, i), t, code)
            else:
                c.hand('%s-%#04x-hand-rand-%d' % (k, code, i), t, code, enc)
    described = 0
    while described < 200:
        i += 1
        t = g.described(0)
        if i % 4 == 0:
            ok = c.hand('described-hand-rand-%d' % i, t, None, enc)
        else:
            ok = c.proton('described-rand-%d' % i, t)
        described += ok


# ---------------------------------------------------------------------------
# messages.jsonl
# ---------------------------------------------------------------------------

def gen_messages(rng):
    from proton import Message, symbol, ulong, char, timestamp, uint, int32, ubyte, byte, \
        short, ushort, float32, decimal32, decimal64, decimal128, Described, Array
    g = Gen(rng)
    big = bytes(rng.getrandbits(8) for _ in range(256 * 1024))
    mid = g.utf8(64 * 1024).decode('utf-8')
    U = uuid.UUID('0f8fad5b-d9cb-469f-a165-70867728950e')
    msgs = []

    def add(name, **kw):
        body = kw.pop('body', None)
        m = Message(body=body, **kw)
        msgs.append((name, m.encode()))

    add('empty')
    add('body-null', body=None, durable=True)
    add('header-all', durable=True, priority=9, ttl=60.5, first_acquirer=True, delivery_count=7,
        body='hi')
    add('header-priority0', priority=0, body='p0')
    add('header-delivery-count-max', delivery_count=2**32 - 1, ttl=4294967.295, body=ulong(5))
    add('properties-all', id=ulong(123456789), user_id=b'alice', address='queue://a',
        subject='greeting', reply_to='queue://reply', correlation_id='corr-1',
        content_type=symbol('text/plain'), content_encoding=symbol('utf-8'),
        expiry_time=1700000060.0, creation_time=1700000000.0, group_id='g1',
        group_sequence=42, reply_to_group_id='rg', body='with properties')
    add('message-id-ulong', id=ulong(2**64 - 1), correlation_id=ulong(0), body=b'', inferred=True)
    add('message-id-uuid', id=U, correlation_id=uuid.UUID(int=0), body=int32(-5))
    add('message-id-binary', id=b'\x00\x01\xfe\xff', correlation_id=b'', body=True)
    add('message-id-string', id='\u6d88\u606f-\U0001F600', correlation_id='c' * 300, body=3.25)
    add('message-id-small-ulong', id=ulong(7), body=symbol('sym'))
    add('delivery-annotations', instructions={symbol('x-opt-delivery'): 'yes', symbol('x-count'): ulong(3)},
        body='da')
    add('message-annotations', annotations={symbol('x-opt-jms-msg-type'): byte(5),
                                            symbol('x-opt-to-type'): 'queue', ulong(42): 'numeric-key',
                                            symbol('x-list'): [1, 'two', None]},
        body={'k': 'v'})
    add('application-properties', properties={'str': 's', 'int': int32(1), 'long': 2**40,
                                              'bool': False, 'double': -0.0, 'null': None,
                                              'uuid': U, 'bin': b'\x01', 'ts': timestamp(1700000000000),
                                              'char': char('\U0010ffff'), 'float': float32(1.5),
                                              'ubyte': ubyte(255), 'short': short(-2), 'ushort': ushort(65535),
                                              'uint': uint(4294967295), 'sym': symbol('s')},
        body=None)
    add('all-sections', durable=True, priority=1, ttl=1.0, first_acquirer=False, delivery_count=1,
        instructions={symbol('x-opt-i'): 1}, annotations={symbol('x-opt-a'): 'a'},
        id='all', user_id=b'u', address='to', subject='s', reply_to='r', correlation_id=U,
        content_type=symbol('application/octet-stream'), content_encoding=symbol('gzip'),
        expiry_time=2.0, creation_time=1.0, group_id='gid', group_sequence=2**32 - 1,
        reply_to_group_id='rtg', properties={'p': 'q'}, body=b'\x00' * 16, inferred=True)
    add('body-value-string', body='hello world')
    add('body-value-empty-string', body='')
    add('body-value-binary', body=b'amqp-value binary', inferred=False)
    add('body-value-map', body={'a': 1, symbol('b'): [1.5, None, True], ulong(3): {'n': {}}})
    add('body-value-list-not-inferred', body=[1, 'a', b'b'], inferred=False)
    add('body-value-described', body=Described(symbol('com.example:point'), [int32(1), int32(2)]))
    add('body-value-array', body=Array(proton.UNDESCRIBED, Data.INT, 1, 2, 3))
    add('body-value-described-array', body=Array(symbol('d'), Data.STRING, 'x', 'y'))
    add('body-value-decimals', body=[decimal32(1), decimal64(2), decimal128(bytes(range(16))), -1])
    add('body-data-empty', body=b'', inferred=True)
    add('body-data-small', body=b'\xde\xad\xbe\xef', inferred=True)
    add('body-data-255', body=bytes(range(255)), inferred=True)
    add('body-data-256', body=bytes(range(256)), inferred=True)
    add('body-sequence', body=[1, 'two', [3], {'four': 4}], inferred=True)
    add('body-sequence-empty', body=[], inferred=True)
    add('body-value-64KiB-string', durable=True, id=ulong(64), body=mid)
    add('body-data-256KiB', durable=True, id=ulong(256), address='big', body=big, inferred=True)

    out = []
    for name, buf in msgs:
        out.append({'name': name, 'hex': buf.hex(), 'trace': proton_decode_all(buf)})
    # The 0.37 binding has no footer support; one message gets a footer section
    # (described 0x78 annotations map) appended with proton.Data.
    d = Data()
    proton_put(d, ('described', ('ulong', 0x78),
                   ('map', [('symbol', b'x-opt-checksum'), ('uint', 0xdeadbeef)])))
    buf = Message(body='with footer', durable=True).encode() + d.encode()
    out.append({'name': 'footer-appended-via-data', 'hex': buf.hex(), 'trace': proton_decode_all(buf)})
    return out


# ---------------------------------------------------------------------------
# Engine conversation: performatives.jsonl and conn-*.bin
# ---------------------------------------------------------------------------

PERFORMATIVES = {0x10: 'open', 0x11: 'begin', 0x12: 'attach', 0x13: 'flow', 0x14: 'transfer',
                 0x15: 'disposition', 0x16: 'detach', 0x17: 'end', 0x18: 'close',
                 0x40: 'sasl-mechanisms', 0x41: 'sasl-init', 0x42: 'sasl-challenge',
                 0x43: 'sasl-response', 0x44: 'sasl-outcome'}
AMQP_HEADER = b'AMQP\x00\x01\x00\x00'
SASL_HEADER = b'AMQP\x03\x01\x00\x00'


def split_stream(buf):
    """Split one direction of a connection into protocol headers and frames."""
    items = []
    off = 0
    while off < len(buf):
        if buf[off:off + 4] == b'AMQP':
            items.append({'kind': 'protocol-header', 'offset': off, 'size': 8,
                          'hex': buf[off:off + 8].hex()})
            off += 8
            continue
        size, doff, ftype, channel = struct.unpack('>IBBH', buf[off:off + 8])
        if off + size > len(buf):
            raise ValueError('truncated frame at %d' % off)
        frame = buf[off:off + size]
        body = frame[doff * 4:]
        item = {'kind': 'frame', 'offset': off, 'size': size, 'doff': doff, 'type': ftype,
                'channel': channel, 'performative': None}
        if body:
            n, trace = proton_decode_one(body)
            d = Data()
            d.decode(body)
            d.rewind()
            d.next()
            d.enter()
            d.next()
            code = d.get_ulong()
            item['performative'] = PERFORMATIVES.get(code, '0x%x' % code)
            item['_perf'] = body[:n]
            item['_payload'] = body[n:]
            item['_trace'] = trace
        items.append(item)
        off += size
    return items


class Pair:
    """A client and a server transport bound to their connections, pumped in memory."""

    def __init__(self, max_frame=512, plain_probe=False):
        from proton import Connection, Transport
        self.now = 1000.0
        self.c = Connection()
        self.c.container = 'amqpsax-client'
        self.c.hostname = 'broker.example'
        self.c.user = 'alice'
        self.c.password = 'secret'
        self.ct = Transport()
        self.ct.max_frame_size = max_frame
        self.ct.idle_timeout = 4.0
        cs = self.ct.sasl()
        cs.allow_insecure_mechs = True
        self.ct.bind(self.c)
        self.s = Connection()
        self.s.container = 'amqpsax-server'
        self.st = Transport(Transport.SERVER)
        self.st.max_frame_size = max_frame
        self.st.idle_timeout = 2.0
        ss = self.st.sasl()
        ss.allowed_mechs('ANONYMOUS PLAIN')
        ss.allow_insecure_mechs = True
        self.st.bind(self.s)
        self.c_out = bytearray()
        self.s_out = bytearray()
        self.plain_probe = plain_probe
        self.rewritten = None  # (offset in s_out, original bytes, replacement)

    def _move(self, src, dst, log, rewrite=False):
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
            if rewrite and self.rewritten is None:
                data = self._rewrite_mechs(bytes(data), len(log) - len(data))
            dst.push(data)
            moved = True
        return moved

    def _rewrite_mechs(self, data, base):
        """plain_probe: make the server's sasl-mechanisms offer PLAIN too."""
        i = data.find(SASL_HEADER)
        if i < 0:
            return data
        off = i + 8
        size = struct.unpack('>I', data[off:off + 4])[0]
        d = Data()
        proton_put(d, ('described', ('ulong', 0x40), ('list', [
            ('array', 'symbol', [('symbol', b'ANONYMOUS'), ('symbol', b'PLAIN')], None)])))
        body = d.encode()
        frame = struct.pack('>IBBH', 8 + len(body), 2, 1, 0) + body
        self.rewritten = (base + off, data[off:off + size], frame)
        return data[:off] + frame + data[off + size:]

    def pump(self):
        while True:
            a = self._move(self.ct, self.st, self.c_out)
            b = self._move(self.st, self.ct, self.s_out, rewrite=self.plain_probe)
            if not (a or b):
                break

    def tick(self, dt=0.0):
        self.now += dt
        self.ct.tick(self.now)
        self.st.tick(self.now)
        self.pump()


def drive_main():
    from proton import Delivery, Condition, Message, symbol, ulong
    p = Pair()
    p.tick()
    p.c.open()
    p.pump()
    p.s.open()
    p.pump()

    # two sessions (channels 0 and 1)
    cs0 = p.c.session()
    cs0.incoming_capacity = 4096
    cs0.open()
    cs1 = p.c.session()
    cs1.open()
    p.pump()
    for ssn in iter_sessions(p.s):
        ssn.open()
    p.pump()

    snd = cs0.sender('amqpsax-sender')
    snd.source.address = 'client/out'
    snd.target.address = 'queue/a'
    snd.target.durability = 2
    snd.target.capabilities.put_array(False, Data.SYMBOL)
    snd.target.capabilities.enter()
    snd.target.capabilities.put_symbol('queue')
    snd.target.capabilities.exit()
    snd.open()
    rcv = cs0.receiver('amqpsax-receiver')
    rcv.source.address = 'queue/b'
    rcv.source.filter.put_map()
    rcv.source.filter.enter()
    rcv.source.filter.put_symbol('sel')
    rcv.source.filter.put_described()
    rcv.source.filter.enter()
    rcv.source.filter.put_symbol('apache.org:selector-filter:string')
    rcv.source.filter.put_string("color = 'red'")
    rcv.source.filter.exit()
    rcv.source.filter.exit()
    rcv.target.address = 'client/in'
    rcv.open()
    snd2 = cs1.sender('amqpsax-sender-2')
    snd2.target.address = 'queue/c'
    snd2.snd_settle_mode = snd2.SND_SETTLED
    snd2.open()
    p.pump()
    s_links = {}
    for link in iter_links(p.s):
        link.source.copy(link.remote_source)
        link.target.copy(link.remote_target)
        link.open()
        s_links[link.name] = link
    p.pump()
    s_rcv = s_links['amqpsax-sender']
    s_snd = s_links['amqpsax-receiver']
    s_rcv2 = s_links['amqpsax-sender-2']

    # flow: server grants credit to both client senders
    s_rcv.flow(10)
    s_rcv2.flow(3)
    p.pump()

    def send(link, tag, msg, settle=False):
        dlv = link.delivery(tag)
        link.send(msg.encode())
        if settle:
            dlv.settle()
        link.advance()
        return dlv

    msgs = [Message(body='m%d' % i, id=ulong(i)) for i in range(4)]
    big = Message(body=bytes(range(256)) * 6, id='big', durable=True, inferred=True)
    c_dlvs = [send(snd, 'tag-%d' % i, m) for i, m in enumerate(msgs)]
    c_dlvs.append(send(snd, 'tag-big', big))
    send(snd2, 'pre', Message(body='presettled'), settle=True)
    p.pump()

    got = []
    while True:
        dlv = s_rcv.current
        if dlv is None or dlv.partial:
            break
        s_rcv.recv(dlv.pending)
        s_rcv.advance()
        got.append(dlv)
    while s_rcv2.current is not None:
        dlv = s_rcv2.current
        s_rcv2.recv(dlv.pending)
        s_rcv2.advance()
        dlv.settle()
    # dispositions: accepted (settled), rejected with error, released, modified, accepted unsettled
    got[0].update(Delivery.ACCEPTED)
    got[0].settle()
    got[1].local.condition = Condition('amqp:not-allowed', 'rejected by amqpsax test',
                                       {symbol('field'): 'value'})
    got[1].update(Delivery.REJECTED)
    got[1].settle()
    got[2].update(Delivery.RELEASED)
    got[2].settle()
    got[3].local.failed = True
    got[3].local.undeliverable = True
    got[3].local.annotations = {symbol('x-opt-reason'): 'busy'}
    got[3].update(Delivery.MODIFIED)
    got[3].settle()
    got[4].update(Delivery.ACCEPTED)
    p.pump()
    for dlv in c_dlvs:
        dlv.settle()
    p.pump()

    # server -> client: receiver grants credit, server sends unsettled + presettled
    rcv.flow(5)
    p.pump()
    send(s_snd, 's-1', Message(body={'reply': True}, correlation_id=ulong(1)))
    send(s_snd, 's-2', Message(body=b'\x01\x02', inferred=True), settle=True)
    p.pump()
    while rcv.current is not None:
        dlv = rcv.current
        rcv.recv(dlv.pending)
        rcv.advance()
        dlv.update(Delivery.ACCEPTED)
        dlv.settle()
    p.pump()
    rcv.drain(2)
    p.pump()
    s_snd.drained()
    p.pump()

    # idle: let heartbeats (empty frames) happen
    for _ in range(3):
        p.tick(1.5)

    # detach / end / close
    snd.close()
    rcv.detach()
    snd2.condition = Condition('amqp:link:detach-forced', 'test detach')
    snd2.close()
    p.pump()
    for link in s_links.values():
        link.close()
    p.pump()
    cs1.close()
    p.pump()
    for ssn in iter_sessions(p.s, remote_closed=True):
        ssn.close()
    cs0.close()
    p.pump()
    for ssn in iter_sessions(p.s, remote_closed=True):
        ssn.close()
    p.pump()
    p.c.condition = Condition('amqp:connection:forced', 'amqpsax done')
    p.c.close()
    p.pump()
    p.s.close()
    p.pump()
    return p


def iter_sessions(conn, remote_closed=False):
    from proton import Endpoint
    mask = (Endpoint.LOCAL_ACTIVE | Endpoint.REMOTE_CLOSED) if remote_closed else \
        (Endpoint.LOCAL_UNINIT | Endpoint.REMOTE_ACTIVE)
    out = []
    s = conn.session_head(mask)
    while s:
        out.append(s)
        s = s.next(mask)
    return out


def iter_links(conn):
    from proton import Endpoint
    mask = Endpoint.LOCAL_UNINIT | Endpoint.REMOTE_ACTIVE
    out = []
    lk = conn.link_head(mask)
    while lk:
        out.append(lk)
        lk = lk.next(mask)
    return out


def drive_plain_probe():
    p = Pair(plain_probe=True)
    p.tick()
    p.c.open()
    p.pump()
    p.s.open()
    p.pump()
    return p


def drive_capabilities():
    """Opens whose capabilities are Python lists: Proton's binding writes a list of symbols."""
    p = Pair()
    p.c.offered_capabilities = ['amqpsax-offered', 'ANONYMOUS-RELAY']
    p.c.desired_capabilities = ['amqpsax-desired']
    p.s.offered_capabilities = ['ANONYMOUS-RELAY']
    p.s.desired_capabilities = ['amqpsax-desired', 'amqpsax-other']
    p.tick()
    p.c.open()
    p.pump()
    p.s.open()
    p.pump()
    ssn = p.c.session()
    ssn.open()
    p.pump()
    for s in iter_sessions(p.s):
        s.open()
    p.pump()
    ssn.close()
    p.pump()
    for s in iter_sessions(p.s, remote_closed=True):
        s.close()
    p.pump()
    p.c.close()
    p.pump()
    p.s.close()
    p.pump()
    for d, buf in (('client', p.c_out), ('server', p.s_out)):
        for it in split_stream(bytes(buf)):
            if it.get('performative') == 'open' and b'\xd0' not in it['_perf']:
                raise ValueError('%s open: capabilities not written as a list32: %s' % (d, it['_perf'].hex()))
    return p


def gen_engine():
    main = drive_main()
    probe = drive_plain_probe()
    perfs = []
    streams = {}
    for conn, pair in (('main', main), ('plain-probe', probe)):
        for direction, buf in (('client', pair.c_out), ('server', pair.s_out)):
            items = split_stream(bytes(buf))
            streams[(conn, direction)] = items
            for it in items:
                if it['kind'] != 'frame' or it['performative'] is None:
                    continue
                perfs.append({'name': it['performative'], 'channel': it['channel'],
                              'type': it['type'], 'hex': it['_perf'].hex(),
                              'payload_hex': it['_payload'].hex(), 'trace': it['_trace'],
                              'conn': conn, 'dir': direction, 'offset': it['offset']})
    frames = {}
    for d in ('client', 'server'):
        frames[d] = [{k: v for k, v in it.items() if not k.startswith('_')}
                     for it in streams[('main', d)]]
    return main, probe, perfs, frames['client'], frames['server']


# ---------------------------------------------------------------------------
# proton-quirks.jsonl: inputs kept OUT of values.jsonl, with what Proton does.
# ---------------------------------------------------------------------------

def gen_quirks():
    def nested(inner_desc):
        return ('described', inner_desc, ('null',))
    cases = [
        ('nested-descriptor-proton-encoded',
         proton_encode(nested(('described', ('ulong', 1), ('int', 1)))).hex(),
         'a described value as descriptor: Proton 0.37 ENCODES it but its decoder rejects it'),
        ('descriptor-list8', '00c0010040', 'list8 as descriptor: rejected'),
        ('descriptor-list32', '00d0000000040000000040', 'list32 as descriptor: rejected'),
        ('descriptor-map32', '00d100000004000000004054', 'map32 as descriptor: rejected'),
        ('descriptor-array8', '00e00200404054', 'array8 as descriptor: rejected'),
        ('descriptor-list0', '004540', 'list0 as descriptor: ACCEPTED (only 8/32-bit compounds are '
                                       'refused), unlike the other compound descriptors'),
        ('described-described-then-sibling',
         proton_encode(('list', [('described', ('ulong', 1), ('described', ('ulong', 2), ('int', 1))),
                                 ('int', 2)])).hex(),
         'a described value whose VALUE is described, followed by a sibling: Proton 0.37 mis-nests '
         'the following siblings into the outer described node (tree walk fails)'),
        ('float-signalling-nan', '727f800001', 'binary32 sNaN: Proton quiets it (trace shows 7fc00001)'),
        ('float-signalling-nan-neg', '72ffbfffff', 'binary32 sNaN: Proton quiets it'),
        ('double-signalling-nan', '827ff0000000000001', 'binary64 sNaN: kept as is by Proton, left out '
                                                        'of values.jsonl anyway (quiet NaN only)'),
        ('boolean-0x56-02', '5602', '0x56 with a byte other than 0/1: Proton reads it as true'),
        ('boolean-0x56-ff', '56ff', '0x56 with a byte other than 0/1: Proton reads it as true'),
        ('char-surrogate', '730000d800', 'char U+D800 (not a Unicode scalar value): Proton accepts it'),
        ('char-above-unicode', '7300110000', 'char 0x110000: Proton accepts it'),
        ('string-invalid-utf8', 'a103ff00fe', 'invalid UTF-8 in a str8: Proton does not validate'),
        ('list8-size-too-big', 'c0050154010000', 'list8 whose size (5) exceeds its one element: Proton '
                                                 'decodes count elements and ignores the rest of size'),
        ('list8-size-too-small', 'c001015401', 'list8 whose size (1) is smaller than its element: '
                                              'Proton reads past the declared size'),
    ]
    out = []
    for name, h, note in cases:
        row = {'name': name, 'hex': h, 'note': note}
        try:
            n, tr = proton_decode_one(bytes.fromhex(h))
            row.update(result='decoded', consumed=n, trace=tr)
        except Exception as e:  # noqa: BLE001
            row.update(result='error', error='%s: %s' % (type(e).__name__, e))
        out.append(row)
    return out


# ---------------------------------------------------------------------------

def write_jsonl(path, rows):
    with open(path, 'w', encoding='ascii', newline='\n') as f:
        for row in rows:
            f.write(json.dumps(row, separators=(',', ':'), ensure_ascii=True) + '\n')


def main():
    rng = random.Random(SEED)
    corpus = gen_values(rng)
    write_jsonl(os.path.join(OUT, 'values.jsonl'), corpus.entries)
    msgs = gen_messages(random.Random(SEED + 1))
    write_jsonl(os.path.join(OUT, 'messages.jsonl'), msgs)
    main_pair, probe, perfs, frames, server_frames = gen_engine()
    write_jsonl(os.path.join(OUT, 'performatives.jsonl'), perfs)
    with open(os.path.join(OUT, 'conn-client.bin'), 'wb') as f:
        f.write(bytes(main_pair.c_out))
    with open(os.path.join(OUT, 'conn-server.bin'), 'wb') as f:
        f.write(bytes(main_pair.s_out))
    write_jsonl(os.path.join(OUT, 'conn-client-frames.jsonl'), frames)
    write_jsonl(os.path.join(OUT, 'conn-server-frames.jsonl'), server_frames)
    write_jsonl(os.path.join(OUT, 'proton-quirks.jsonl'), gen_quirks())
    caps = drive_capabilities()
    for d, buf in (('client', caps.c_out), ('server', caps.s_out)):
        with open(os.path.join(OUT, 'conn-caps-%s.bin' % d), 'wb') as f:
            f.write(bytes(buf))
        write_jsonl(os.path.join(OUT, 'conn-caps-%s-frames.jsonl' % d),
                    [{k: v for k, v in it.items() if not k.startswith('_')} for it in split_stream(bytes(buf))])
    # truncated stream: cut in the middle of the first attach frame
    cut = None
    for fr in frames:
        if fr['kind'] == 'frame' and fr['performative'] == 'attach':
            cut = fr['offset'] + fr['size'] // 2
            break
    with open(os.path.join(OUT, 'conn-client-trunc.bin'), 'wb') as f:
        f.write(bytes(main_pair.c_out[:cut]))

    # summary on stdout
    print('values: %d entries' % len(corpus.entries))
    for code in ALL_CODES:
        srcs = {}
        for e in corpus.entries:
            if e['code'] == '0x%02x' % code:
                srcs[e['source']] = srcs.get(e['source'], 0) + 1
        print('  0x%02x %4d %s' % (code, corpus.count(code), srcs))
    print('  0x00 %4d (described)' % corpus.count(0x00))
    print('rejected candidates: %d' % len(corpus.rejected))
    reasons = {}
    for name, why in corpus.rejected:
        reasons.setdefault(why.split(':')[0], []).append(name)
    for why, names in sorted(reasons.items()):
        print('  %s: %d e.g. %s' % (why, len(names), ', '.join(names[:4])))
    print('proton-mimic mismatches: %d' % len(corpus.mimic_mismatch))
    for m in corpus.mimic_mismatch[:10]:
        print('  ', m)
    print('messages: %d' % len(msgs))
    print('performatives: %d %s' % (len(perfs), sorted({p['name'] for p in perfs})))
    print('conn-client.bin %d bytes, conn-server.bin %d bytes, frames %d, trunc %d bytes'
          % (len(main_pair.c_out), len(main_pair.s_out), len(frames), cut))
    print('conn-caps-client.bin %d bytes, conn-caps-server.bin %d bytes' % (len(caps.c_out), len(caps.s_out)))


if __name__ == '__main__':
    sys.exit(main())
