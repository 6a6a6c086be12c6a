// rhea's receiver for interop/abort_test.go (see ../README.md).
//
// Connects to AMQP_ADDR with frames of 512 bytes and attaches one receiver
// to "abort-q", so that the server's first delivery (3 MB, more transfers
// than rhea's session window of 2048) is aborted part way by the server;
// prints one line per message it is given ("message N BYTES BODY-START"),
// and closes after the message "after-abort" (or after ABORT_WAIT seconds, 20 by default). rhea 3.0.5
// has no code for aborted transfers (lib/session.js never reads the
// field): see doc/peers.md for what it does with one.
'use strict';

const rhea = require('rhea');

const [HOST, PORT] = (process.env.AMQP_ADDR || '127.0.0.1:5672').split(':');
let n = 0;
const timer = setTimeout(() => { console.log('timeout'); process.exit(0); }, Number(process.env.ABORT_WAIT || 20) * 1000);
const c = rhea.create_container({ id: 'rhea-abort' });
c.on('message', (ctx) => {
  n++;
  const body = Buffer.isBuffer(ctx.message.body) ? ctx.message.body :
    (ctx.message.body && ctx.message.body.content) || Buffer.from(String(ctx.message.body));
  console.log(`message ${n} ${body.length} ${JSON.stringify(body.subarray(0, 16).toString('latin1'))}`);
  if (body.toString() === 'after-abort') {
    clearTimeout(timer);
    ctx.connection.close();
  }
});
c.on('error', (ctx) => { console.log('error ' + (ctx.error && ctx.error.message)); });
c.on('disconnected', (ctx) => { console.log('disconnected ' + (ctx.error ? ctx.error.message : '')); clearTimeout(timer); });
process.on('uncaughtException', (e) => { console.log('exception ' + e.message); process.exit(0); });
const conn = c.connect({ host: HOST, port: Number(PORT), max_frame_size: 512, reconnect: false });
conn.open_receiver({ source: 'abort-q', credit_window: 10 });
