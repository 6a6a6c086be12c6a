#!/usr/bin/python3
"""Check amqpsax's message building with Qpid Proton.

For every record of built.jsonl (written by
`go test ./message -run TestBuildProton -update`: a message of
../proton/messages.jsonl decoded by message.Message.Decode, built afresh
from typed parts -- header and properties structs, every entry and body
value re-made by message.Values -- and encoded by Message.Append), check
with Proton that:

* the built bytes are the corpus message's bytes, which Proton's
  Message.encode() wrote;
* proton.Message().decode() of the built bytes, then encode(), gives the
  built bytes again: Proton writes exactly what amqpsax wrote (less the
  footer, which Proton 0.37's Message does not keep);
* proton.Data, section by section: the built message is a sequence of
  sections in the spec's order, each decoding to the value the corpus
  message's section decodes to (types kept, floats bit for bit, map
  entries in order).

Writes proton-check.jsonl next to itself, one line per record:
{"name", "built_sha256", "ok", "problems": [...], "notes": [...]}.
Exits with status 1 if any record is not ok.

Run from anywhere (paths are relative to this file), with Debian's python3,
which has the python3-qpid-proton package (Proton 0.37):

    /usr/bin/python3 testdata/build/check.py
"""

import hashlib
import json
import os
import sys

from proton import Message

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in testdata/splice
sys.path.insert(0, os.path.join(HERE, '..', 'splice'))
from check import FOOTER, canon, load_jsonl, rank, sections  # noqa: E402  (the splice checker's helpers)

BUILT = os.path.join(HERE, 'built.jsonl')
CORPUS = os.path.join(HERE, '..', 'proton', 'messages.jsonl')
OUT = os.path.join(HERE, 'proton-check.jsonl')


def check(name, built, corpus_hex, problems, notes):
    if built.hex() != corpus_hex:
        problems.append('built bytes differ from the corpus message Proton wrote')
    m = Message()
    try:
        m.decode(built)
    except Exception as e:  # noqa: BLE001 - report whatever Proton raises
        problems.append('Message.decode: %r' % e)
        return
    try:
        got, want = sections(built), sections(bytes.fromhex(corpus_hex))
    except Exception as e:  # noqa: BLE001
        problems.append('proton.Data: %s' % e)
        return
    # Proton 0.37's Message has no footer: it re-encodes without it.
    expect = b''.join(raw for c, raw, _ in got if c != FOOTER)
    if any(c == FOOTER for c, _, _ in got):
        notes.append('footer compared with proton.Data only (Proton 0.37 Message has no footer)')
    again = m.encode()
    if again != expect:
        problems.append('Proton re-encodes to other bytes: %s' % again.hex())
    codes = [c for c, _, _ in got]
    if codes != sorted(codes, key=rank):
        problems.append('sections out of order: %s' % ['0x%02x' % c for c in codes])
    if [(c, canon(v)) for c, _, v in got] != [(c, canon(v)) for c, _, v in want]:
        problems.append('section values differ from the corpus message')


def main():
    corpus = {r['name']: r['hex'] for r in load_jsonl(CORPUS)}
    rows = []
    for rec in load_jsonl(BUILT):
        built = bytes.fromhex(rec['hex'])
        problems, notes = [], []
        check(rec['name'], built, corpus.get(rec['name']), problems, notes)
        rows.append({'name': rec['name'], 'built_sha256': hashlib.sha256(built).hexdigest(),
                     'ok': not problems, 'problems': problems, 'notes': notes})
    with open(OUT, 'w', encoding='ascii', newline='\n') as f:
        for row in rows:
            f.write(json.dumps(row, separators=(',', ':'), ensure_ascii=True) + '\n')
    bad = [r for r in rows if not r['ok']]
    print('%d built messages checked with Proton: %d ok, %d not ok'
          % (len(rows), len(rows) - len(bad), len(bad)))
    for r in bad:
        print('  %s: %s' % (r['name'], '; '.join(r['problems'])))
    missing = set(corpus) - {r['name'] for r in rows}
    if missing:
        print('  corpus messages missing from built.jsonl: %s' % sorted(missing))
    return 1 if bad or missing else 0


if __name__ == '__main__':
    sys.exit(main())
