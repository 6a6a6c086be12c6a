#!/usr/bin/python3
"""Check amqpsax's splice with Qpid Proton.

For every record of spliced.jsonl (written by
`go test ./message -run TestSpliceProton -update`: a message of
../proton/messages.jsonl before and after message.Append raised its
delivery-count by one and added the message annotation
x-opt-routed-by = "amqpsax"), decode the original and the spliced message
with Proton and check, in Proton's view, that the spliced message is the
original plus exactly that change:

* proton.Message().decode(): delivery_count is the original's + 1
  (saturating at the largest uint, 2**32-1); annotations are the original's
  with symbol('x-opt-routed-by') -> 'amqpsax' added (in place if the key was
  there, else last); every other field is equal, type for type.
* proton.Data, section by section (Proton's own section boundaries, not
  amqpsax's): both messages are sequences of sections in the spec's order;
  the spliced message has a header and a message-annotations section; every
  other section is byte-identical and in the same order: the bare message
  (properties, application-properties, body) as one byte string, and the
  delivery annotations and footer. Proton 0.37's Message has no footer, so
  the footer is only checked here.

Writes proton-check.jsonl next to itself, one line per record:
{"name", "spliced_sha256", "ok", "problems": [...], "notes": [...]}.
Exits with status 1 if any record is not ok.

Run from anywhere (paths are relative to this file), with Debian's python3,
which has the python3-qpid-proton package (Proton 0.37):

    /usr/bin/python3 testdata/splice/check.py
"""

import hashlib
import json
import os
import struct
import sys

from proton import Array, Data, Described, Message, symbol

HERE = os.path.dirname(os.path.abspath(__file__))
SPLICED = os.path.join(HERE, 'spliced.jsonl')
CORPUS = os.path.join(HERE, '..', 'proton', 'messages.jsonl')
OUT = os.path.join(HERE, 'proton-check.jsonl')

ROUTED_BY = symbol('x-opt-routed-by')
ROUTED_BY_VALUE = 'amqpsax'
UINT_MAX = 2**32 - 1

# Message fields that the splice must leave alone (all but delivery_count
# and annotations).
UNCHANGED = ['durable', 'priority', 'ttl', 'first_acquirer', 'id', 'user_id', 'address',
             'subject', 'reply_to', 'correlation_id', 'content_type', 'content_encoding',
             'expiry_time', 'creation_time', 'group_id', 'group_sequence',
             'reply_to_group_id', 'properties', 'instructions', 'body', 'inferred']

HEADER, DELIVERY_ANN, MESSAGE_ANN, PROPERTIES, APP_PROPERTIES = 0x70, 0x71, 0x72, 0x73, 0x74
DATA, SEQUENCE, VALUE, FOOTER = 0x75, 0x76, 0x77, 0x78
BARE = (PROPERTIES, APP_PROPERTIES, DATA, SEQUENCE, VALUE)
SYMBOLIC = {
    'amqp:header:list': HEADER,
    'amqp:delivery-annotations:map': DELIVERY_ANN,
    'amqp:message-annotations:map': MESSAGE_ANN,
    'amqp:properties:list': PROPERTIES,
    'amqp:application-properties:map': APP_PROPERTIES,
    'amqp:data:binary': DATA,
    'amqp:amqp-sequence:list': SEQUENCE,
    'amqp:amqp-value:*': VALUE,
    'amqp:footer:map': FOOTER,
}


def rank(code):
    """The section's place in the spec's order (body sections share one)."""
    return {DATA: VALUE, SEQUENCE: VALUE}.get(code, code)


def canon(v):
    """A form of v that compares equal only for the same AMQP value: types
    are kept (ulong(1) != 1, symbol('a') != 'a'), floats by their bits
    (-0.0 != 0.0, NaN == the same NaN), map entries in order."""
    if isinstance(v, dict):
        return ('map', tuple((canon(k), canon(x)) for k, x in v.items()))
    if isinstance(v, list):
        return ('list', tuple(canon(x) for x in v))
    if isinstance(v, Described):
        return ('described', canon(v.descriptor), canon(v.value))
    if isinstance(v, Array):
        return ('array', canon(v.descriptor), v.type, tuple(canon(x) for x in v.elements))
    if isinstance(v, float):
        return (type(v).__name__, struct.pack('>d', v).hex())
    return (type(v).__name__, repr(v))


def short(v, limit=120):
    r = repr(v)
    return r if len(r) <= limit else r[:limit] + '...(%d chars)' % len(r)


def sections(buf):
    """Split buf into sections with proton.Data: [(descriptor code, raw bytes,
    decoded value)]. Raises ValueError on anything that is not a section."""
    out = []
    off = 0
    while off < len(buf):
        d = Data()
        n = d.decode(buf[off:])
        if n <= 0:
            raise ValueError('proton.Data made no progress at offset %d' % off)
        d.rewind()
        if d.next() != Data.DESCRIBED:
            raise ValueError('value at offset %d is not described' % off)
        d.enter()
        d.next()
        if d.type() == Data.ULONG:
            code = d.get_ulong()
        elif d.type() == Data.SYMBOL:
            code = SYMBOLIC.get(str(d.get_symbol()))
        else:
            code = None
        d.exit()
        if code not in SYMBOLIC.values():
            raise ValueError('value at offset %d is not a section' % off)
        d.rewind()
        d.next()
        out.append((code, buf[off:off + n], d.get_object()))
        off += n
    return out


def check_message(orig, spliced, problems, notes):
    """Proton's Message view."""
    mo, ms = Message(), Message()
    try:
        mo.decode(orig)
    except Exception as e:  # noqa: BLE001 - report whatever Proton raises
        problems.append('Message.decode(original): %r' % e)
        return
    try:
        ms.decode(spliced)
    except Exception as e:  # noqa: BLE001
        problems.append('Message.decode(spliced): %r' % e)
        return

    want = mo.delivery_count + 1
    if mo.delivery_count == UINT_MAX:
        want = UINT_MAX
        notes.append('delivery_count is already 2**32-1: the increment saturates')
    if ms.delivery_count != want:
        problems.append('delivery_count %r, want %r (original %r)'
                        % (ms.delivery_count, want, mo.delivery_count))

    ann = list((mo.annotations or {}).items())
    for i, (k, _) in enumerate(ann):
        if canon(k) == canon(ROUTED_BY):
            ann[i] = (ROUTED_BY, ROUTED_BY_VALUE)
            break
    else:
        ann.append((ROUTED_BY, ROUTED_BY_VALUE))
    got = list((ms.annotations or {}).items())
    if [(canon(k), canon(v)) for k, v in got] != [(canon(k), canon(v)) for k, v in ann]:
        problems.append('annotations %s, want %s' % (short(got), short(ann)))

    for f in UNCHANGED:
        a, b = getattr(mo, f), getattr(ms, f)
        if canon(a) != canon(b):
            problems.append('%s changed: %s -> %s' % (f, short(a), short(b)))


def check_sections(orig, spliced, problems, notes):
    """Proton's Data view, section by section."""
    try:
        so = sections(orig)
    except Exception as e:  # noqa: BLE001
        problems.append('proton.Data, original: %s' % e)
        return
    try:
        ss = sections(spliced)
    except Exception as e:  # noqa: BLE001
        problems.append('proton.Data, spliced: %s' % e)
        return

    codes = [c for c, _, _ in ss]
    for a, b in zip(codes, codes[1:]):
        if rank(b) < rank(a) or (rank(a) == rank(b) and a not in (DATA, SEQUENCE)):
            problems.append('spliced sections out of order: %s' % ['0x%02x' % c for c in codes])
            break
    for code, what in ((HEADER, 'header'), (MESSAGE_ANN, 'message-annotations')):
        if codes.count(code) != 1:
            problems.append('spliced message has %d %s sections' % (codes.count(code), what))

    def bare(secs):
        return b''.join(raw for c, raw, _ in secs if c in BARE)

    if bare(so) != bare(ss):
        problems.append('bare message not byte-identical (%d bytes, now %d)'
                        % (len(bare(so)), len(bare(ss))))
    # Every section but the two the splice rewrites: same bytes, same order,
    # same value in Proton's reading.
    kept_o = [(c, raw, v) for c, raw, v in so if c not in (HEADER, MESSAGE_ANN)]
    kept_s = [(c, raw, v) for c, raw, v in ss if c not in (HEADER, MESSAGE_ANN)]
    if [raw for _, raw, _ in kept_o] != [raw for _, raw, _ in kept_s]:
        problems.append('sections other than header and message-annotations changed: %s -> %s'
                        % (['0x%02x' % c for c, _, _ in kept_o], ['0x%02x' % c for c, _, _ in kept_s]))
    elif [canon(v) for _, _, v in kept_o] != [canon(v) for _, _, v in kept_s]:
        problems.append('same bytes, different values (?)')
    if any(c == FOOTER for c, _, _ in so):
        notes.append('footer compared with proton.Data only (Proton 0.37 Message has no footer)')


def load_jsonl(path):
    with open(path, encoding='ascii') as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    corpus = {r['name']: r['hex'] for r in load_jsonl(CORPUS)}
    rows = []
    for rec in load_jsonl(SPLICED):
        name = rec['name']
        orig, spliced = bytes.fromhex(rec['original_hex']), bytes.fromhex(rec['spliced_hex'])
        problems, notes = [], []
        if corpus.get(name) != rec['original_hex']:
            problems.append('original_hex is not the corpus message %r' % name)
        check_message(orig, spliced, problems, notes)
        check_sections(orig, spliced, problems, notes)
        rows.append({'name': name, 'spliced_sha256': hashlib.sha256(spliced).hexdigest(),
                     'ok': not problems, 'problems': problems, 'notes': notes})
    with open(OUT, 'w', encoding='ascii', newline='\n') as f:
        for row in rows:
            f.write(json.dumps(row, separators=(',', ':'), ensure_ascii=True) + '\n')
    bad = [r for r in rows if not r['ok']]
    print('%d spliced messages checked with Proton: %d ok, %d not ok'
          % (len(rows), len(rows) - len(bad), len(bad)))
    for r in bad:
        print('  %s: %s' % (r['name'], '; '.join(r['problems'])))
    missing = set(corpus) - {r['name'] for r in rows}
    if missing:
        print('  corpus messages missing from spliced.jsonl: %s' % sorted(missing))
    return 1 if bad or missing else 0


if __name__ == '__main__':
    sys.exit(main())
