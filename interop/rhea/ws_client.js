// rhea over WebSockets (node's ws package), the client of the engine's
// WebSocket interop test (../ws_test.go).
//
// Connects to AMQP_WS_URL (ws://host:port/) with the subprotocol "amqp",
// SASL ANONYMOUS, and on address AMQP_QUEUE sends COUNT messages while
// receiving them back (the server echoes them), checking each body.
// Prints one summary line; exits non-zero on any mismatch or after 60 s.
'use strict';

const rhea = require('rhea');
const WebSocket = require('ws');

const URL = process.env.AMQP_WS_URL;
const QUEUE = process.env.AMQP_QUEUE || 'ws-echo';
const COUNT = Number(process.env.COUNT || 1000);

function fail(msg) {
  console.error('rhea ws client: ' + msg);
  process.exit(1);
}

setTimeout(() => fail('time-out'), 60000).unref();

const container = rhea.create_container({ id: 'rhea-ws-client' });
const ws = container.websocket_connect(WebSocket);
let sent = 0;
let received = 0;

container.on('connection_open', (ctx) => {
  ctx.connection.open_receiver({ source: QUEUE, credit_window: 100 });
  ctx.connection.open_sender({ target: QUEUE });
});
container.on('sendable', (ctx) => {
  while (ctx.sender.sendable() && sent < COUNT) {
    ctx.sender.send({ message_id: sent, body: rhea.message.data_section(Buffer.from(`rhea over a WebSocket ${sent}`)) });
    sent++;
  }
});
container.on('message', (ctx) => {
  const want = `rhea over a WebSocket ${received}`;
  const got = Buffer.from(ctx.message.body.content || ctx.message.body).toString();
  if (got !== want) fail(`message ${received}: ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  if (++received === COUNT) {
    console.log(`rhea ws client: sent ${sent} received ${received} over ${URL}`);
    ctx.connection.close();
  }
});
container.on('connection_close', () => process.exit(received === COUNT ? 0 : 1));
container.on('disconnected', (ctx) => {
  if (received !== COUNT) fail('disconnected: ' + (ctx.error || 'no error') + ` after ${received}`);
});

container.connect({ connection_details: ws(URL, ['amqp']), reconnect: false });
