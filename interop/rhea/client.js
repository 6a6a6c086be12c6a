#!/usr/bin/env node
// rhea client of the amqpsax interop corpus (see ../README.md).
//
// Connects to AMQP_ADDR (host:port; record.sh points it at the recording
// proxy in front of RabbitMQ), sends messages of every body kind with every
// section rhea writes, receives them back and settles them:
//
//   queue A  unsettled sender (each message's outcome awaited) and a
//            pre-settled sender; an unsettled receiver that accepts most,
//            rejects some and releases some (those come back and are
//            accepted then)
//   queue B  unsettled sender, receiver the broker sends settled
//
// then, each on a connection of its own, what RabbitMQ 3.10 refuses: an
// amqp-value list of two elements, a footer (rhea writes it before the
// body), delivery-annotations, the modified outcome. Frames are at most 512 bytes, so larger messages are split over
// several transfer frames in both directions. Exits non-zero on failure.
'use strict';

const rhea = require('rhea');
const crypto = require('crypto');
const types = rhea.types;
const message = rhea.message;

const [HOST, PORT] = (process.env.AMQP_ADDR || '127.0.0.1:5672').split(':');
const RUN = process.env.AMQPSAX_RUN || crypto.randomBytes(4).toString('hex');
const QA = '/queue/amqpsax-rhea-a-' + RUN;
const QB = '/queue/amqpsax-rhea-b-' + RUN;
const MAX_FRAME = 512;

function pattern(n, mod) {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = i % mod;
  return b;
}

function fullProperties(i) {
  const ids = [types.wrap_ulong(1000 + i), types.wrap_uuid(Buffer.from('123456781234567812345678123456' + (i % 10).toString(16).padStart(2, '0'), 'hex')),
    Buffer.from('id-' + i), 'id-' + i];
  return {
    message_id: ids[i % 4],
    user_id: Buffer.from('guest'),
    to: QA,
    subject: 'subject-' + i,
    reply_to: '/queue/reply',
    correlation_id: i % 2 ? 'corr-' + i : types.wrap_ulong(i),
    content_type: 'application/octet-stream',
    content_encoding: 'identity',
    absolute_expiry_time: new Date(1893456000000),
    creation_time: new Date(1700000000000 + i),
    group_id: 'group-1',
    group_sequence: i,
    reply_to_group_id: 'reply-group',
  };
}

const APP_PROPS = {
  string: 'value', long: types.wrap_long(123456789012), int: types.wrap_int(-7), short: types.wrap_short(300),
  byte: types.wrap_byte(-3), ubyte: types.wrap_ubyte(200), ushort: types.wrap_ushort(60000),
  uint: types.wrap_uint(4000000000), ulong: types.wrap_ulong(9007199254740991), bool: true, double: 2.5,
  float: types.wrap_float(0.5), null: null, timestamp: new Date(1700000000000), binary: Buffer.from([0, 1, 2]),
  symbol: types.wrap_symbol('sym'), number: 42, negative: -42,
};

function planA() {
  const out = [];
  const big = 'abcdefghijklmnopqrstuvwxyz'.repeat(231).slice(0, 6000);
  const values = [
    ['value-string', 'hello from rhea'],
    ['value-empty-string', ''],
    ['value-number-uint', 7],
    ['value-number-int', -42],
    ['value-number-double', 3.141592653589793],
    ['value-long', types.wrap_long(1234567890123)],
    ['value-int', types.wrap_int(-42)],
    ['value-short', types.wrap_short(-300)],
    ['value-byte', types.wrap_byte(-128)],
    ['value-ubyte', types.wrap_ubyte(255)],
    ['value-ushort', types.wrap_ushort(65535)],
    ['value-uint', types.wrap_uint(4294967295)],
    ['value-ulong', types.wrap_ulong(9007199254740991)],
    ['value-float', types.wrap_float(1.5)],
    ['value-double', types.wrap_double(-0.25)],
    ['value-bool', false],
    ['value-null', null],
    ['value-binary', Buffer.from([0xde, 0xad, 0xbe, 0xef])],
    ['value-symbol', types.wrap_symbol('a-symbol')],
    ['value-uuid', types.wrap_uuid(Buffer.from('12345678123456781234567812345678', 'hex'))],
    ['value-timestamp', new Date(1700000000123)],
    ['value-char', types.wrap_char(0xe9)],
    // RabbitMQ 3.10 ends the connection on an amqp-value list of more than
    // one element (see refused); one element gets through.
    ['value-list-1', [[1, 'two', 3.5, null, true]]],
    ['value-map', { a: 1, b: 'two', c: [null] }],
    ['value-map-symbol-keys', types.wrap_symbolic_map({ x: 1, y: 'z' })],
    ['value-array-int', types.wrap_array([1, 2, 100000, -4], 0x71)],
    ['value-array-string', types.wrap_array(['x', 'yy', 'zzz'], 0xb1)],
    ['value-array-symbol', types.wrap_array(['p', 'q'], 0xb3)],
    // No described value: rhea's message body wrapper drops the descriptor
    // of a types.wrap_described value (the body goes out as its plain
    // value), so rhea cannot write a described amqp-value this way.
    ['value-large-string', big],
  ];
  for (const [name, v] of values) {
    out.push([name, { body: v, application_properties: { case: name } }]);
  }
  out.push(
    ['data-small', { body: message.data_section(Buffer.from('data body')) }],
    ['data-empty', { body: message.data_section(Buffer.alloc(0)) }],
    ['data-1500', { body: message.data_section(pattern(1500, 251)) }],
    ['data-9000', { body: message.data_section(pattern(9000, 253)) }],
    ['data-x3', { body: message.data_sections([Buffer.from('first'), Buffer.from('second'), Buffer.from('third')]) }],
    ['sequence-1', { body: message.sequence_section([1, 'a', Buffer.from('b'), null]) }],
    ['sequence-x2', { body: message.sequence_sections([[1], ['b', true]]) }],
  );
  // No footer: rhea writes the footer before the body, and RabbitMQ 3.10
  // ends the connection on that (see refused).
  for (let i = 0; i < 4; i++) {
    const m = Object.assign({
      durable: i % 2 === 1, priority: i * 3, ttl: 60000 + i, first_acquirer: i % 2 === 1, delivery_count: i,
      message_annotations: { 'x-opt-ma': 'ma', 'x-opt-i': i },
      application_properties: APP_PROPS,
      body: i < 2 ? 'full body ' + i : message.data_section(Buffer.from('full data ' + i)),
    }, fullProperties(i));
    out.push(['full-' + i, m]);
  }
  out.push(
    ['header-only-fields', { durable: true, priority: 9, ttl: 1000, body: 'h' }],
    ['header-defaults', { durable: false, priority: 4, first_acquirer: false, delivery_count: 0, body: 'default header' }],
    ['properties-all-large', Object.assign({ body: message.data_section(Buffer.alloc(3000)) }, fullProperties(7))],
  );
  return out;
}

function planPresettled() {
  const out = [];
  for (let i = 0; i < 10; i++) {
    out.push(['presettled-' + i, {
      body: i % 2 ? 'presettled ' + i : message.data_section(Buffer.from('ps ' + i)),
      application_properties: { i: i },
    }]);
  }
  return out;
}

function planB() {
  const out = [];
  for (let i = 0; i < 8; i++) {
    out.push(['b-' + i, {
      subject: 'b', message_annotations: { 'x-opt-b': i },
      body: i % 2 ? message.sequence_section(['b', i]) : 'b ' + i,
    }]);
  }
  return out;
}

function connect(id) {
  const container = rhea.create_container({ id: id });
  const conn = container.connect({
    host: HOST, port: Number(PORT), username: 'guest', password: 'guest',
    max_frame_size: MAX_FRAME, reconnect: false, idle_time_out: 0,
    properties: { product: 'amqpsax-interop' },
  });
  return conn;
}

function once(emitter, event) {
  return new Promise((resolve) => emitter.once(event, resolve));
}

// sendAll sends plan on sender one message at a time, waiting for each
// unsettled message's outcome (or, pre-settled, only for credit).
async function sendAll(sender, plan, presettled) {
  for (const [name, m] of plan) {
    while (!sender.sendable()) await once(sender, 'sendable');
    const dlv = sender.send(m);
    if (!presettled) {
      await new Promise((resolve, reject) => {
        const check = () => {
          if (dlv.remote_settled) {
            resolve();
          } else {
            setTimeout(check, 2);
          }
        };
        check();
        setTimeout(() => reject(new Error('no outcome for ' + name)), 20000);
      });
    }
  }
}

async function main() {
  const conn = connect('amqpsax-rhea');
  await once(conn, 'connection_open');

  const snd = conn.open_sender({ name: 'a-unsettled', target: { address: QA } });
  await once(snd, 'sender_open');
  const a = planA();
  await sendAll(snd, a, false);
  const ps = conn.open_sender({ name: 'a-presettled', target: { address: QA }, snd_settle_mode: 1 });
  await once(ps, 'sender_open');
  const p = planPresettled();
  await sendAll(ps, p, true);
  const sent = a.length + p.length;

  // Queue A: accept most, reject some, release some (those come back).
  // rhea 3.0.5 merges the disposition of a delivery into the range of the
  // one before when that range holds a single delivery, whatever the two
  // outcomes (write_dispositions in lib/session.js): a reject followed by
  // an accept in the same tick goes out as one rejected range. So the
  // broker drops more than was rejected here and brings back fewer than
  // were released; the receiver stops when the queue has been quiet for 2 s.
  const got = await new Promise((resolve, reject) => {
    const seen = new Map();
    let n = 0;
    let quiet = null;
    const rcv = conn.open_receiver({ name: 'a-receiver', source: { address: QA }, autoaccept: false, credit_window: 10 });
    const timer = setTimeout(() => reject(new Error('queue A: received only ' + n + ' of ' + sent)), 30000);
    rcv.on('message', (ctx) => {
      n++;
      const key = JSON.stringify(ctx.message.body) + JSON.stringify(ctx.message.application_properties);
      seen.set(key, (seen.get(key) || 0) + 1);
      if (seen.get(key) > 1) {
        ctx.delivery.accept();
      } else if (n % 13 === 5) {
        ctx.delivery.reject({ condition: 'amqp:internal-error', description: 'rejected by amqpsax interop' });
      } else if (n % 13 === 8) {
        ctx.delivery.release();
      } else {
        ctx.delivery.accept();
      }
      clearTimeout(quiet);
      quiet = setTimeout(() => {
        if (seen.size >= sent - 8) {
          clearTimeout(timer);
          resolve(n);
        }
      }, 2000);
    });
  });

  // Queue B: the broker settles before sending.
  const sb = conn.open_sender({ name: 'b-sender', target: { address: QB } });
  await once(sb, 'sender_open');
  const b = planB();
  await sendAll(sb, b, false);
  await new Promise((resolve, reject) => {
    let n = 0;
    const rb = conn.open_receiver({ name: 'b-receiver', source: { address: QB }, snd_settle_mode: 1, credit_window: 8 });
    const timer = setTimeout(() => reject(new Error('queue B: received ' + n)), 20000);
    rb.on('message', () => {
      if (++n === b.length) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  // RabbitMQ 3.10 answers a detach with closed=true by a detach without
  // it: links are left to the connection's close.
  conn.close();
  await once(conn, 'connection_close');
  console.log('rhea: sent ' + sent + ' to A, received ' + got + ' from A (with redeliveries), ' + b.length + ' through B');
  await refused();
}

// refused sends, each on a connection of its own, what RabbitMQ 3.10's
// AMQP 1.0 plugin cannot take; the broker ends the connection (or the
// session). Fails if it takes any of them.
async function refused() {
  const cases = [
    ['value-list-2', { body: [1, 'two'] }],
    ['footer', Object.assign({
      durable: true, message_annotations: { 'x-opt-ma': 'ma' }, application_properties: { k: 'v' },
      body: message.data_section(Buffer.from('data with footer')), footer: { 'x-opt-hash': Buffer.from([1, 2]) },
    }, fullProperties(1))],
    ['delivery-annotations', { body: 'with delivery annotations', delivery_annotations: { 'x-opt-da': 'da', 'x-opt-n': 1 } }],
    ['modified', null],
  ];
  for (const [name, m] of cases) {
    const q = '/queue/amqpsax-rhea-' + name + '-' + RUN;
    const conn = connect('amqpsax-rhea-' + name);
    conn.on('error', () => {});
    const outcome = new Promise((resolve) => {
      conn.on('disconnected', () => resolve('disconnected'));
      conn.on('connection_close', () => resolve('connection closed'));
      conn.on('connection_error', () => resolve('connection error'));
      conn.on('session_close', () => resolve('session ended'));
      conn.on('session_error', () => resolve('session error'));
      setTimeout(() => resolve(null), 5000);
    });
    await once(conn, 'connection_open');
    const snd = conn.open_sender({ name: 'refused', target: { address: q } });
    await once(snd, 'sender_open');
    if (m) {
      snd.send(m);
    } else {
      snd.send({ body: 'to be modified' });
      const rcv = conn.open_receiver({ name: 'refused-r', source: { address: q }, autoaccept: false, credit_window: 1 });
      rcv.once('message', (ctx) => {
        ctx.delivery.modified({ delivery_failed: true, message_annotations: { 'x-opt-modified': 'yes' } });
        snd.send({ body: 'after' });
      });
    }
    const how = await outcome;
    if (how === null) {
      throw new Error('rhea: RabbitMQ accepted ' + name + '; update refused() and doc/peers.md');
    }
    console.log('rhea: ' + name + ': refused by the broker as expected (' + how + ')');
    conn.close();
    conn.socket && conn.socket.destroy();
  }
}

main().then(() => process.exit(0), (e) => {
  console.error('rhea client:', e);
  process.exit(1);
});
