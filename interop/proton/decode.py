#!/usr/bin/python3
"""Decode AMQP values with Qpid Proton's own decoder (proton.Data), for
interop/frame_proton_test.go: what frame's encoders write must read back,
in Proton, as exactly the values the test set.

Reads lines "NAME HEX" on stdin, one encoded value each, and writes one JSON
object per line: {"name": NAME, "value": TREE}, or {"name": NAME, "error":
TEXT} when Proton refuses the bytes or does not consume all of them.

TREE is null for null; {"TYPE": TEXT} for a scalar (TYPE is Proton's type
name: "uint", "ubyte", "symbol" ...; integers in decimal, a binary in hex,
a string or symbol as its text, a bool as true/false); {"list": [TREE...]};
{"map": [key, value, ...]}; {"array": TYPE, "items": [...]} (with
"descriptor" for a described array); {"described": [descriptor, value]}.

Run with Debian's /usr/bin/python3 (python3-qpid-proton is installed for it).
"""

import json
import sys

from proton import Data

NAMES = {Data.NULL: 'null', Data.BOOL: 'bool', Data.UBYTE: 'ubyte', Data.USHORT: 'ushort',
         Data.UINT: 'uint', Data.ULONG: 'ulong', Data.BYTE: 'byte', Data.SHORT: 'short',
         Data.INT: 'int', Data.LONG: 'long', Data.FLOAT: 'float', Data.DOUBLE: 'double',
         Data.DECIMAL32: 'decimal32', Data.DECIMAL64: 'decimal64', Data.DECIMAL128: 'decimal128',
         Data.CHAR: 'char', Data.TIMESTAMP: 'timestamp', Data.UUID: 'uuid',
         Data.BINARY: 'binary', Data.STRING: 'string', Data.SYMBOL: 'symbol',
         Data.LIST: 'list', Data.MAP: 'map', Data.ARRAY: 'array', Data.DESCRIBED: 'described'}

INTS = {Data.UBYTE: Data.get_ubyte, Data.USHORT: Data.get_ushort, Data.UINT: Data.get_uint,
        Data.ULONG: Data.get_ulong, Data.BYTE: Data.get_byte, Data.SHORT: Data.get_short,
        Data.INT: Data.get_int, Data.LONG: Data.get_long, Data.TIMESTAMP: Data.get_timestamp}


def children(d):
    out = []
    d.enter()
    while d.next() is not None:
        out.append(walk(d))
    d.exit()
    return out


def walk(d):
    t = d.type()
    if t == Data.NULL:
        return None
    if t == Data.BOOL:
        return {'bool': bool(d.get_bool())}
    if t in INTS:
        return {NAMES[t]: str(int(INTS[t](d)))}
    if t == Data.BINARY:
        return {'binary': bytes(d.get_binary()).hex()}
    if t == Data.STRING:
        return {'string': d.get_string()}
    if t == Data.SYMBOL:
        return {'symbol': str(d.get_symbol())}
    if t == Data.LIST:
        n = d.get_list()
        items = children(d)
        if len(items) != n:
            raise ValueError('list of %d elements read as %d' % (n, len(items)))
        return {'list': items}
    if t == Data.MAP:
        return {'map': children(d)}
    if t == Data.ARRAY:
        count, described, etype = d.get_array()
        items = children(d)
        out = {'array': NAMES[etype]}
        if described:
            out['descriptor'], items = items[0], items[1:]
        if len(items) != count:
            raise ValueError('array of %d elements read as %d' % (count, len(items)))
        out['items'] = items
        return out
    if t == Data.DESCRIBED:
        desc, value = children(d)
        return {'described': [desc, value]}
    return {NAMES.get(t, str(t)): str(d.get_object())}


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        name, h = line.split()
        b = bytes.fromhex(h)
        d = Data()
        try:
            n = d.decode(b)
            if n != len(b):
                raise ValueError('decoded %d of %d bytes' % (n, len(b)))
            d.rewind()
            d.next()
            out = {'name': name, 'value': walk(d)}
        except Exception as e:  # noqa: BLE001 - reported to the test
            out = {'name': name, 'error': '%s: %s' % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(out) + '\n')


if __name__ == '__main__':
    main()
