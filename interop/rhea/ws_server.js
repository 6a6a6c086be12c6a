// rhea's WebSocket server (node's ws package), the server of the engine's
// WebSocket interop test (../ws_test.go).
//
// Listens on 127.0.0.1, a free port, for WebSockets with the subprotocol
// "amqp" (and refuses clients that do not offer it), prints
// "listening on PORT", and echoes: every message received on a link is
// sent back on the connection's sending link. Prints "echoed N" as each
// connection closes. Stops on SIGTERM.
'use strict';

const rhea = require('rhea');
const WebSocket = require('ws');

const container = rhea.create_container({ id: 'rhea-ws-server' });
const wss = new WebSocket.Server({
  host: '127.0.0.1',
  port: 0,
  handleProtocols: (protocols) => (protocols.has('amqp') ? 'amqp' : false),
});

wss.on('listening', () => console.log(`listening on ${wss.address().port}`));
wss.on('connection', (socket) => container.websocket_accept(socket));

// rhea answers a peer's attach without a terminus of its own unless told:
// name the one the peer asked for (a null terminus is a refusal, part 2
// §2.6.3, and the client package waits for the detach that would follow).
container.on('receiver_open', (ctx) => {
  const t = ctx.receiver.remote.attach.target;
  if (t) ctx.receiver.set_target({ address: t.address });
});
container.on('sender_open', (ctx) => {
  const src = ctx.sender.remote.attach.source;
  if (src) ctx.sender.set_source({ address: src.address });
  const echo = ctx.connection.echo || (ctx.connection.echo = { pending: [], n: 0 });
  echo.sender = ctx.sender;
  pump(echo);
});
function pump(echo) {
  while (echo.sender && echo.sender.sendable() && echo.pending.length > 0) {
    echo.sender.send(echo.pending.shift());
    echo.n++;
  }
}
container.on('message', (ctx) => {
  const echo = ctx.connection.echo || (ctx.connection.echo = { pending: [], n: 0 });
  echo.pending.push({ body: ctx.message.body });
  pump(echo);
});
container.on('sendable', (ctx) => ctx.connection.echo && pump(ctx.connection.echo));
container.on('connection_close', (ctx) => console.log(`echoed ${ctx.connection.echo ? ctx.connection.echo.n : 0}`));
process.on('SIGTERM', () => process.exit(0));
