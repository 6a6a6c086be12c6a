// rhea client of the engine interop tests (see ../README.md).
//
// Connects to AMQP_ADDR (host:port: amqpspy in front of examples/broker, or
// of RabbitMQ) as AMQP_USER / AMQP_PASSWORD (SASL PLAIN), with frames of at
// most 4096 bytes, and on queue AMQP_QUEUE:
//
//   * sends COUNT messages on an unsettled sender (all in flight, every
//     outcome awaited: accepted), COUNT on a pre-settled sender, and one of
//     100 KB (split over many transfer frames);
//   * receives them back with credit 10, accepting each; then sends 10 more
//     to AMQP_QUEUE-ps and receives them on a receiver that asks for
//     pre-settled deliveries;
//   * compares every message received with the one sent: message-id,
//     subject, application properties and every byte of the body.
//
// Prints one summary line; exits non-zero on any mismatch.
'use strict';

const rhea = require('rhea');
const crypto = require('crypto');

const [HOST, PORT] = (process.env.AMQP_ADDR || '127.0.0.1:5672').split(':');
const QUEUE = process.env.AMQP_QUEUE;
const USER = process.env.AMQP_USER || 'guest';
const PASSWORD = process.env.AMQP_PASSWORD || 'guest';
const COUNT = Number(process.env.COUNT || 200);
const SEED = 'rhea';

function fail(msg) {
  console.error('rhea: ' + msg);
  process.exit(1);
}

// body is size bytes determined by (seed, i).
function body(seed, i, size) {
  const parts = [];
  let n = 0;
  for (let block = 0; n < size; block++) {
    const d = crypto.createHash('sha256').update(`${seed}-${i}-${block}`).digest();
    parts.push(d);
    n += d.length;
  }
  return Buffer.concat(parts).subarray(0, size);
}

const sizeOf = (i) => (i === 2 * COUNT ? 100 * 1024 : 64 + (i % 300));

function make(seed, i, size) {
  return {
    message_id: `${seed}-${i}`, subject: 'engine-interop',
    application_properties: { i: i, seed: seed },
    body: rhea.message.data_section(body(seed, i, size)),
  };
}

function check(m, seed, size) {
  const p = m.application_properties || {};
  const i = p.i;
  if (p.seed !== seed || typeof i !== 'number') fail('a message not of this run: ' + JSON.stringify(p));
  if (m.message_id !== `${seed}-${i}` || m.subject !== 'engine-interop') {
    fail(`message ${i}: id ${m.message_id} subject ${m.subject}`);
  }
  const got = m.body && m.body.typecode === 0x75 ? m.body.content : m.body;
  if (!Buffer.isBuffer(got) || !got.equals(body(seed, i, size(i)))) {
    fail(`message ${i}: body differs from the one sent`);
  }
  return i;
}

function once(emitter, event) {
  return new Promise((resolve) => emitter.once(event, resolve));
}

// send sends messages first..last-1 of seed on sender, all at once as
// credit allows; unsettled, it resolves when every one is accepted.
function send(sender, seed, first, last, size, presettled) {
  return new Promise((resolve) => {
    let next = first;
    let outcomes = 0;
    const pump = () => {
      while (next < last && sender.sendable()) {
        sender.send(make(seed, next, size(next)));
        next++;
      }
      if (presettled && next === last) resolve();
    };
    sender.on('sendable', pump);
    sender.on('accepted', () => {
      if (++outcomes === last - first) resolve();
    });
    for (const ev of ['rejected', 'released', 'modified']) {
      sender.on(ev, () => fail(`a message was ${ev}`));
    }
    pump();
  });
}

// receive receives n messages of seed on receiver, each checked and, on
// an unsettled receiver, accepted.
function receive(receiver, seed, n, size) {
  return new Promise((resolve) => {
    const seen = new Set();
    receiver.on('message', (ctx) => {
      const i = check(ctx.message, seed, size);
      if (seen.has(i)) fail(`message ${i} received twice`);
      seen.add(i);
      if (!ctx.delivery.remote_settled) ctx.delivery.accept();
      if (seen.size === n) resolve(seen);
    });
  });
}

async function main() {
  if (!QUEUE) fail('AMQP_QUEUE is not set');
  const timer = setTimeout(() => fail('timed out after 60 s'), 60000);
  let done = false;
  const container = rhea.create_container({ id: 'engine-interop-rhea' });
  const conn = container.connect({
    host: HOST, port: Number(PORT), username: USER, password: PASSWORD,
    max_frame_size: 4096, reconnect: false,
  });
  conn.on('connection_error', (ctx) => fail('connection error: ' + JSON.stringify(ctx.connection.error)));
  conn.on('disconnected', (ctx) => { if (!done) fail('disconnected: ' + (ctx.error || '')); });
  await once(conn, 'connection_open');

  const snd = conn.open_sender({ name: 'unsettled', target: { address: QUEUE } });
  await send(snd, SEED, 0, COUNT, sizeOf, false);
  const ps = conn.open_sender({ name: 'presettled', target: { address: QUEUE }, snd_settle_mode: 1 });
  await send(ps, SEED, COUNT, 2 * COUNT, sizeOf, true);
  const big = conn.open_sender({ name: 'big', target: { address: QUEUE } });
  await send(big, SEED, 2 * COUNT, 2 * COUNT + 1, sizeOf, false);

  const rcv = conn.open_receiver({ name: 'receiver', source: { address: QUEUE }, credit_window: 10, autoaccept: false });
  const seen = await receive(rcv, SEED, 2 * COUNT + 1, sizeOf);
  for (let i = 0; i <= 2 * COUNT; i++) if (!seen.has(i)) fail(`message ${i} missing`);

  const sps = conn.open_sender({ name: 'sender-ps', target: { address: QUEUE + '-ps' } });
  await send(sps, SEED + '-ps', 0, 10, () => 200, false);
  const rps = conn.open_receiver({ name: 'receiver-presettled', source: { address: QUEUE + '-ps' },
    credit_window: 10, snd_settle_mode: 1, autoaccept: false });
  await receive(rps, SEED + '-ps', 10, () => 200);

  done = true;
  conn.close();
  await once(conn, 'connection_close');
  clearTimeout(timer);
  console.log(`rhea: sent ${COUNT} unsettled, ${COUNT} pre-settled and one of 100 KB to ${QUEUE}; ` +
    'received all back, byte for byte; 10 more through a pre-settled receiver');
}

main().catch((e) => fail(e.stack || String(e)));
