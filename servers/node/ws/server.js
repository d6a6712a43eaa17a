'use strict';
// node/ws: the ws package's WebSocketServer on Node's built-in http server, one process. The
// HTTP routes are node/http's; /ws upgrades to an echo of every message.
const http = require('node:http');
const { WebSocketServer } = require('ws');

const HOST = process.env.HOST || '127.0.0.1';
const PORT = Number(process.env.PORT || 8080);

// 1 MiB, byte i = 'a' + i mod 26, built once at start.
const PAYLOAD = Buffer.allocUnsafe(1 << 20);
for (let i = 0; i < PAYLOAD.length; i++) PAYLOAD[i] = 97 + (i % 26);

const HELLO = Buffer.from('Hello World!');
const HEY = Buffer.from('Hey!');
const HELL = Buffer.from('Hell!');
const ABOUT = Buffer.from('<html><body>About page</body></html>');
const NOT_FOUND = Buffer.from('Not Found');
const UPGRADE_REQUIRED = Buffer.from('Upgrade Required');

function send(res, status, type, body, headers) {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': body.length, ...headers });
  res.end(body);
}

function handle(req, res) {
  const q = req.url.indexOf('?');
  const path = q === -1 ? req.url : req.url.slice(0, q);
  if (req.method !== 'GET') return send(res, 404, 'text/plain', NOT_FOUND);
  switch (path) {
    case '/hello': return send(res, 200, 'text/plain', HELLO);
    case '/hey': return send(res, 200, 'text/plain', HEY);
    case '/hell': return send(res, 200, 'text/plain', HELL);
    case '/about': return send(res, 200, 'text/html', ABOUT);
    case '/json':
      return send(res, 200, 'application/json',
        Buffer.from(JSON.stringify({ message: 'Hello, World!' })));
    case '/payload': return send(res, 200, 'application/octet-stream', PAYLOAD);
    // A GET /ws without Upgrade reaches the request handler, not the upgrade one.
    case '/ws': return send(res, 426, 'text/plain', UPGRADE_REQUIRED, { Upgrade: 'websocket' });
    default: return send(res, 404, 'text/plain', NOT_FOUND);
  }
}

const server = http.createServer(handle);

// ws-echo: permessage-deflate off (ws's server default, said again), messages up to 16 MiB (ws
// allows 100 MiB by default; 16 MiB is the contract's largest frame), UTF-8 of text messages
// validated (ws's default, Node's buffer.isUtf8), masking in bufferutil's native code. ws has no
// idle timeout: a quiet connection stays open. Upgrades on any other path are answered 400 by ws.
const wss = new WebSocketServer({
  server,
  path: '/ws',
  perMessageDeflate: false,
  maxPayload: 16 * 1024 * 1024,
  clientTracking: false,
});
wss.on('connection', (ws) => {
  // A protocol error (e.g. an unmasked frame): ws has already sent the close (1002) and ends the
  // connection itself; the listener only keeps the error from being thrown.
  ws.on('error', () => {});
  ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
});

server.listen(PORT, HOST, () => console.log(`node/ws listening on http://${HOST}:${PORT}`));

process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
