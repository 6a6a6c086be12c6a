// rhea client of package broker's interop test
// (../broker_package_clients_test.go), against the broker amqptest started
// at AMQP_ADDR (host:port) with queues bounded at BOUND messages:
//
//   * a queue: BOUND messages sent (every outcome awaited), received back in
//     order and accepted;
//   * fan-out: two receivers on topic/rhea each get every one of 5 messages;
//   * a dynamic reply queue: a receiver with a dynamic source gets its
//     address in the attach's answer; a message sent there comes back;
//   * flow control: a sender to a queue with no consumer is held back by
//     credit at BOUND (nothing rejected), then resumes as a receiver drains
//     the queue.
//
// Prints one summary line; exits non-zero on any failure.
'use strict';

const rhea = require('rhea');

const [HOST, PORT] = (process.env.AMQP_ADDR || '127.0.0.1:5672').split(':');
const BOUND = Number(process.env.BOUND || 10);

function fail(msg) {
  console.error('rhea: ' + msg);
  process.exit(1);
}

function once(emitter, event) {
  return new Promise((resolve) => emitter.once(event, resolve));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function noRefusals(sender) {
  for (const ev of ['rejected', 'released', 'modified']) {
    sender.on(ev, () => fail(`a message was ${ev}`));
  }
}

// send sends bodies prefix0..prefix(n-1) as credit allows and resolves
// once every one is accepted.
function send(sender, prefix, n) {
  return new Promise((resolve) => {
    let next = 0;
    let accepted = 0;
    const pump = () => {
      while (next < n && sender.sendable()) sender.send({ body: prefix + next++ });
    };
    sender.on('sendable', pump);
    sender.on('accepted', () => { if (++accepted === n) resolve(); });
    noRefusals(sender);
    pump();
  });
}

// receive resolves with the bodies of the next n messages on receiver.
function receive(receiver, n) {
  return new Promise((resolve) => {
    const got = [];
    const on = (ctx) => {
      got.push(ctx.message.body);
      if (got.length === n) {
        receiver.removeListener('message', on);
        resolve(got);
      }
    };
    receiver.on('message', on);
  });
}

function inOrder(what, got, prefix, n) {
  for (let i = 0; i < n; i++) {
    if (got[i] !== prefix + i) fail(`${what}: message ${i} is ${JSON.stringify(got[i])}`);
  }
}

async function main() {
  const timer = setTimeout(() => fail('timed out after 60 s'), 60000);
  let done = false;
  const container = rhea.create_container({ id: 'broker-package-rhea' });
  const conn = container.connect({ host: HOST, port: Number(PORT), reconnect: false });
  conn.on('connection_error', (ctx) => fail('connection error: ' + JSON.stringify(ctx.connection.error)));
  conn.on('disconnected', (ctx) => { if (!done) fail('disconnected: ' + (ctx.error || '')); });
  await once(conn, 'connection_open');

  // a queue
  await send(conn.open_sender('rhea-queue'), 'm', BOUND);
  const rcv = conn.open_receiver({ source: { address: 'rhea-queue' }, credit_window: 5 });
  inOrder('queue', await receive(rcv, BOUND), 'm', BOUND);

  // fan-out
  const subs = [0, 1].map((n) => conn.open_receiver({ name: 'sub' + n, source: { address: 'topic/rhea' } }));
  await Promise.all(subs.map((s) => once(s, 'receiver_open')));
  const gots = subs.map((s) => receive(s, 5));
  await send(conn.open_sender('topic/rhea'), 't', 5);
  for (const got of await Promise.all(gots)) inOrder('fan-out', got, 't', 5);

  // a dynamic reply queue
  const replies = conn.open_receiver({ source: { dynamic: true } });
  await once(replies, 'receiver_open');
  const replyTo = replies.source.address;
  if (!replyTo) fail('the dynamic source came back without an address');
  const reply = receive(replies, 1);
  await send(conn.open_sender(replyTo), 'reply', 1);
  inOrder('reply queue', await reply, 'reply', 1);

  // flow control
  const total = 3 * BOUND;
  const held = conn.open_sender('rhea-bounded');
  noRefusals(held);
  // rhea buffers what is sent beyond the credit until credit comes: the
  // broker's outcomes tell how far the producer got.
  let sent = 0;
  let accepted = 0;
  held.on('accepted', () => { accepted++; });
  const pump = () => { while (sent < total && held.sendable()) held.send({ body: 'f' + sent++ }); };
  held.on('sendable', pump);
  await once(held, 'sendable');
  pump();
  await sleep(500); // the broker has the bound's worth and grants no more
  const at = accepted;
  if (!(at >= BOUND && at < total)) {
    fail(`flow control: ${at} of ${total} accepted before the sender waited (bound ${BOUND})`);
  }
  const drain = conn.open_receiver({ source: { address: 'rhea-bounded' }, credit_window: 5 });
  inOrder('flow control', await receive(drain, total), 'f', total);
  while (accepted < total) await sleep(10);

  done = true;
  conn.close();
  await once(conn, 'connection_close');
  clearTimeout(timer);
  console.log(`rhea: queue of ${BOUND}, fan-out to 2, dynamic reply queue ${replyTo}, ` +
    `flow control: sender held at ${at} (bound ${BOUND}), resumed, all ${total} received`);
}

main().catch((e) => fail(e.stack || String(e)));
