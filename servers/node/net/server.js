'use strict';
// node/net: a minimal HTTP/1.1 server written directly on node:net, plus a TCP echo.
// Keep-alive, pipelining (answered in order), HTTP/1.0, Content-Length request bodies;
// chunked request bodies are refused with 501 and the connection is closed.
// The same connection handler serves HTTPS on TLS_PORT (when set) through node:tls.
const fs = require('node:fs');
const net = require('node:net');
const tls = require('node:tls');
const { Chan } = require('ts-chan');

const HOST = process.env.HOST || '127.0.0.1';
const PORT = Number(process.env.PORT || 8080);
const ECHO_PORT = Number(process.env.ECHO_PORT || 9000);
const TLS_PORT = process.env.TLS_PORT ? Number(process.env.TLS_PORT) : null;
const MAX_HEAD = 64 * 1024;

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

const REASONS = { 200: 'OK', 400: 'Bad Request', 404: 'Not Found', 431: 'Request Header Fields Too Large', 500: 'Internal Server Error', 501: 'Not Implemented' };

// The Date header changes once a second; response heads are rebuilt then.
let date = new Date().toUTCString();
setInterval(() => { date = new Date().toUTCString(); }, 1000).unref();

function head(status, type, length, connection) {
  return `HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\nDate: ${date}\r\n${connection}\r\n`;
}

// Static responses (string: head + latin1 body) cached per Date value.
const STATIC = new Map([
  ['/hello', [200, 'text/plain', 'Hello World!']],
  ['/hey', [200, 'text/plain', 'Hey!']],
  ['/hell', [200, 'text/plain', 'Hell!']],
  ['/about', [200, 'text/html', '<html><body>About page</body></html>']],
]);
const NOT_FOUND = [404, 'text/plain', 'Not Found'];
const CONN = ['', 'Connection: close\r\n', 'Connection: keep-alive\r\n'];
let cacheDate = '';
let cache = new Map();
function staticResponse(route, conn) {
  if (cacheDate !== date) { cacheDate = date; cache = new Map(); }
  const key = route[2] + conn;
  let r = cache.get(key);
  if (r === undefined) {
    r = head(route[0], route[1], route[2].length, CONN[conn]) + route[2];
    cache.set(key, r);
  }
  return r;
}

// Finds a header value in the head block (lines after the request line), name lower-case.
function headerValue(lines, name) {
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    const colon = line.indexOf(':');
    if (colon === name.length && line.slice(0, colon).toLowerCase() === name) {
      return line.slice(colon + 1).trim();
    }
  }
  return undefined;
}

function onConnection(socket) {
  socket.setNoDelay(true);
  let pending = '';   // unparsed bytes as latin1 (1 char = 1 byte)
  let skip = 0;       // request body bytes still to discard
  let busy = false;   // waiting on an async (pingpong) response
  let closing = false;
  let peerEnded = false; // the client half-closed: answer what it sent, then close

  socket.on('data', (chunk) => {
    pending += chunk.toString('latin1');
    if (!busy) processSafely();
  });
  socket.on('drain', () => { if (!closing) socket.resume(); });
  socket.on('end', () => {
    peerEnded = true;
    if (!busy && !closing) close();
  });
  socket.on('error', () => socket.destroy());

  function processSafely() {
    try {
      process_();
    } catch (err) {
      console.error('node/net: dropping a connection:', err);
      socket.destroy();
    }
  }

  function process_() {
    socket.cork();
    while (!closing) {
      if (skip > 0) {
        const n = Math.min(skip, pending.length);
        pending = pending.slice(n);
        skip -= n;
        if (skip > 0) break;
      }
      const end = pending.indexOf('\r\n\r\n');
      if (end === -1) {
        if (pending.length > MAX_HEAD) fail(431);
        break;
      }
      const text = pending.slice(0, end);
      pending = pending.slice(end + 4);
      if (text.length === 0) continue; // tolerate stray CRLF between requests
      if (handleRequest(text) === 'async') break;
    }
    socket.uncork();
    if (peerEnded && !busy && !closing) close();
    if (socket.writableNeedDrain) socket.pause();
    else if (socket.isPaused()) socket.resume();
  }

  // Returns 'async' when the response will be written later (pingpong).
  function handleRequest(text) {
    const lines = text.split('\r\n');
    const parts = lines[0].split(' ');
    if (parts.length !== 3 || !parts[2].startsWith('HTTP/1.')) return fail(400);
    const [method, target, version] = parts;
    const http10 = version === 'HTTP/1.0';
    const connection = (headerValue(lines, 'connection') || '').toLowerCase();
    const keepAlive = http10 ? connection.includes('keep-alive') : !connection.includes('close');
    // conn: 0 = nothing to add (1.1 keep-alive), 1 = close, 2 = 1.0 keep-alive
    const conn = !keepAlive ? 1 : http10 ? 2 : 0;
    if (headerValue(lines, 'transfer-encoding') !== undefined) return fail(501);
    const cl = headerValue(lines, 'content-length');
    if (cl !== undefined) {
      const n = Number(cl);
      if (!Number.isSafeInteger(n) || n < 0) return fail(400);
      skip = n;
    }
    const q = target.indexOf('?');
    const path = q === -1 ? target : target.slice(0, q);
    const get = method === 'GET';
    if (get && path === '/json') {
      const body = JSON.stringify({ message: 'Hello, World!' });
      socket.write(head(200, 'application/json', Buffer.byteLength(body), CONN[conn]) + body, 'latin1');
    } else if (get && path === '/payload') {
      socket.write(head(200, 'application/octet-stream', PAYLOAD.length, CONN[conn]), 'latin1');
      socket.write(PAYLOAD);
    } else if (get && path === '/pingpong') {
      busy = true;
      pingpong().then((body) => {
        if (socket.destroyed) return;
        socket.write(head(200, 'application/octet-stream', body.length, CONN[conn]), 'latin1');
        socket.write(body);
        finish(keepAlive);
      }, () => fail(500));
      return 'async';
    } else {
      const route = get ? STATIC.get(path) : undefined;
      socket.write(staticResponse(route || NOT_FOUND, conn), 'latin1');
    }
    if (!keepAlive) close();
    return 'sync';
  }

  function finish(keepAlive) {
    busy = false;
    if (!keepAlive) return close();
    processSafely();
  }

  function close() {
    closing = true;
    pending = '';
    socket.end();
  }

  function fail(status) {
    const body = REASONS[status];
    socket.write(head(status, 'text/plain', body.length, CONN[1]) + body, 'latin1');
    close();
    return 'sync';
  }
}

net.createServer({ noDelay: true, allowHalfOpen: true }, onConnection)
  .listen(PORT, HOST, () => console.log(`node/net listening on http://${HOST}:${PORT}`));

// HTTPS: node:tls hands onConnection a TLSSocket, a Duplex like the TCP socket (cork, pause,
// half-close all work the same). ALPN http/1.1 as node:https advertises; Node's TLS defaults
// otherwise (TLS 1.2 and 1.3, session tickets on).
if (TLS_PORT !== null) {
  const { TLS_CERT, TLS_KEY } = process.env;
  if (!TLS_CERT || !TLS_KEY) {
    console.error('node/net: TLS_PORT is set but TLS_CERT or TLS_KEY is not');
    process.exit(1);
  }
  tls.createServer({
    cert: fs.readFileSync(TLS_CERT),
    key: fs.readFileSync(TLS_KEY),
    ALPNProtocols: ['http/1.1'],
    noDelay: true,
    allowHalfOpen: true,
  }, onConnection)
    .listen(TLS_PORT, HOST, () => console.log(`node/net listening on https://${HOST}:${TLS_PORT}`));
}

net.createServer((socket) => {
  socket.on('error', () => socket.destroy());
  socket.pipe(socket);
}).listen(ECHO_PORT, HOST, () => console.log(`node/net echo on ${HOST}:${ECHO_PORT}`));

process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
