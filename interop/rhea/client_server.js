// A store-and-forward AMQP 1.0 server on rhea (container.listen), the
// peer of package client's interop test (../client_test.go).
//
//     node interop/rhea/client_server.js
//
// Listens on a free port of 127.0.0.1 and prints "listening on
// 127.0.0.1:PORT". A message sent to address A is kept until a receiver
// attached to A takes it (accepted on arrival; rhea decodes it and
// encodes it again to send it on); a released or modified one is queued
// again. A link to an address starting with "refuse/" is refused with
// amqp:not-found.
'use strict';
const rhea = require('rhea');

const container = rhea.create_container({ id: 'amqpsax-client-rhea-server' });
const queues = new Map();

function queue(addr) {
  let q = queues.get(addr);
  if (!q) {
    q = { msgs: [], consumers: [] };
    queues.set(addr, q);
  }
  return q;
}

function dispatch(addr) {
  const q = queue(addr);
  for (const s of q.consumers) {
    while (q.msgs.length > 0 && s.sendable()) {
      const m = q.msgs.shift();
      const d = s.send(m);
      d.msg = m;
    }
  }
}

function refused(link, addr) {
  if (addr && addr.startsWith('refuse/')) {
    link.close({ condition: 'amqp:not-found', description: 'no node ' + addr });
    return true;
  }
  return false;
}

container.on('sender_open', (ctx) => {
  const addr = ctx.sender.remote.attach.source && ctx.sender.remote.attach.source.address;
  if (refused(ctx.sender, addr)) return;
  ctx.sender.set_source({ address: addr });
  queue(addr).consumers.push(ctx.sender);
  dispatch(addr);
});

container.on('receiver_open', (ctx) => {
  const addr = ctx.receiver.remote.attach.target && ctx.receiver.remote.attach.target.address;
  if (refused(ctx.receiver, addr)) return;
  ctx.receiver.set_target({ address: addr });
});

function forget(link) {
  for (const q of queues.values()) {
    const i = q.consumers.indexOf(link);
    if (i >= 0) q.consumers.splice(i, 1);
  }
}

container.on('sender_close', (ctx) => forget(ctx.sender));
container.on('disconnected', (ctx) => {
  for (const q of queues.values()) {
    q.consumers = q.consumers.filter((s) => s.connection !== ctx.connection);
  }
});

container.on('message', (ctx) => {
  const addr = ctx.receiver.target.address;
  queue(addr).msgs.push(ctx.message);
  dispatch(addr);
});

container.on('sendable', (ctx) => dispatch(ctx.sender.source.address));

container.on('released', (ctx) => {
  const addr = ctx.sender.source.address;
  queue(addr).msgs.unshift(ctx.delivery.msg);
  dispatch(addr);
});
container.on('modified', (ctx) => {
  const addr = ctx.sender.source.address;
  queue(addr).msgs.unshift(ctx.delivery.msg);
  dispatch(addr);
});

const server = container.listen({ port: 0, host: '127.0.0.1' });
server.on('listening', () => {
  console.log('listening on 127.0.0.1:' + server.address().port);
});
