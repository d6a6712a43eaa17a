'use strict';
// node/http2: Node's built-in http2 module, one process.
// - TLS_PORT (when set): http2.createSecureServer with allowHTTP1, so ALPN picks h2 or http/1.1.
// - PORT: HTTP/1.1 and h2c (prior knowledge) on the same port. http2.createServer speaks only
//   HTTP/2, so a node:net listener looks at the first bytes of each connection: the HTTP/2
//   connection preface goes to an http2 server, anything else to an http server, both injected
//   with `emit('connection', socket)` and the bytes read so far put back with `socket.unshift`.
// One handler serves all of them through the compatibility API (req, res).
const fs = require('node:fs');
const http = require('node:http');
const http2 = require('node:http2');
const net = require('node:net');
const { Chan } = require('ts-chan');

const HOST = process.env.HOST || '127.0.0.1';
const PORT = Number(process.env.PORT || 8080);
const TLS_PORT = process.env.TLS_PORT ? Number(process.env.TLS_PORT) : null;

// 1 MiB, byte i = 'a' + i mod 26, built once at start.
const PAYLOAD = Buffer.allocUnsafe(1 << 20);
for (let i = 0; i < PAYLOAD.length; i++) PAYLOAD[i] = 97 + (i % 26);

// /pingpong: the handler sends a reply channel to a worker loop, which answers with the payload.
const requests = new Chan();
(async () => {
  for await (const reply of requests) await reply.send(PAYLOAD);
})();
async function pingpong() {
  const reply = new Chan(1);
  await requests.send(reply);
  return (await reply.recv()).value;
}

const HELLO = Buffer.from('Hello World!');
const HEY = Buffer.from('Hey!');
const HELL = Buffer.from('Hell!');
const ABOUT = Buffer.from('<html><body>About page</body></html>');
const NOT_FOUND = Buffer.from('Not Found');

function send(res, status, type, body) {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': body.length });
  res.end(body);
}

// The same code for HTTP/1.x (http.IncomingMessage) and HTTP/2 (Http2ServerRequest).
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
    case '/pingpong':
      return pingpong().then(
        (body) => send(res, 200, 'application/octet-stream', body),
        () => send(res, 500, 'text/plain', Buffer.from('Internal Server Error')));
    default: return send(res, 404, 'text/plain', NOT_FOUND);
  }
}

// PORT: HTTP/1.1 or h2c, decided by the first bytes (RFC 9113 section 3.4).
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
// HTTP/2 tuning, the only departure from Node's defaults: Node counts every queued response body
// against maxSessionMemory (10 MB by default) and resets new streams with ENHANCE_YOUR_CALM past
// it, so eleven concurrent /payload streams fail. Advertise 100 concurrent streams (Node
// advertises 2^32-1) and allow 128 MB per session: 100 bodies of 1 MiB fit.
const H2_OPTIONS = { settings: { maxConcurrentStreams: 100 }, maxSessionMemory: 128 };
const h1 = http.createServer(handle);
const h2c = http2.createServer(H2_OPTIONS, handle);

function dispatch(socket) {
  let head = null;
  const onError = () => socket.destroy();
  const onData = (chunk) => {
    head = head === null ? chunk : Buffer.concat([head, chunk]);
    const n = Math.min(head.length, PREFACE.length);
    const isH2 = head.compare(PREFACE, 0, n, 0, n) === 0;
    if (isH2 && n < PREFACE.length) return; // a prefix of the preface so far: wait for more
    socket.removeListener('data', onData);
    socket.removeListener('error', onError);
    socket.pause();
    socket.unshift(head);
    if (isH2) {
      // The session reads what is already buffered on the next tick (Node issue #34532).
      h2c.emit('connection', socket);
    } else {
      h1.emit('connection', socket);
      socket.resume();
    }
  };
  socket.on('error', onError);
  socket.on('data', onData);
}

net.createServer({ noDelay: true }, dispatch)
  .listen(PORT, HOST, () => console.log(`node/http2 listening on http://${HOST}:${PORT} (HTTP/1.1 and h2c)`));

// TLS_PORT: h2 by ALPN, HTTP/1.1 for clients that do not offer h2 (allowHTTP1). Node's TLS
// defaults otherwise (TLS 1.2 and 1.3, session tickets on).
if (TLS_PORT !== null) {
  const { TLS_CERT, TLS_KEY } = process.env;
  if (!TLS_CERT || !TLS_KEY) {
    console.error('node/http2: TLS_PORT is set but TLS_CERT or TLS_KEY is not');
    process.exit(1);
  }
  const options = {
    ...H2_OPTIONS,
    cert: fs.readFileSync(TLS_CERT),
    key: fs.readFileSync(TLS_KEY),
    allowHTTP1: true,
  };
  http2.createSecureServer(options, handle)
    .listen(TLS_PORT, HOST, () => console.log(`node/http2 listening on https://${HOST}:${TLS_PORT} (h2 and HTTP/1.1)`));
}

process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
