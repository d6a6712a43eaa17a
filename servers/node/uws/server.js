'use strict';
// node/uws: uWebSockets.js (C++ HTTP server with a V8 binding), one event loop; an SSLApp with
// the same routes serves HTTPS on TLS_PORT when it is set.
// Installed from the npm republish uwebsockets@3.0.6 under its upstream name, see README.md.
const uWS = require('uWebSockets.js');
const { Chan } = require('ts-chan');
const db = require('./db');
const shapes = require('./shapes');

const HOST = process.env.HOST || '127.0.0.1';
const PORT = Number(process.env.PORT || 8080);
const TLS_PORT = process.env.TLS_PORT ? Number(process.env.TLS_PORT) : null;
// The database routes exist only when DATABASE_URL is set (pg connects on first use).
const pool = process.env.DATABASE_URL ? db.openPool() : null;

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

// Synchronous handlers run corked already; writeStatus is implied 200 OK when omitted.
function send(res, type, body) {
  res.writeHeader('Content-Type', type).end(body);
}

// An asynchronous answer: the request is read before the first await (uWS's req lives only
// during the handler), the response written corked, and not at all if the client went away.
function later(res, work) {
  let aborted = false;
  res.onAborted(() => { aborted = true; });
  work().then(([type, body]) => {
    if (!aborted) res.cork(() => send(res, type, body));
  }, (err) => {
    console.error(`node/uws: database: ${err.message}`);
    if (!aborted) res.cork(() => res.writeStatus('500 Internal Server Error').writeHeader('Content-Type', 'text/plain').end('Internal Server Error'));
  });
}

const JSON_TYPE = 'application/json';

// /db, /queries, /fortunes, /updates.
function databaseRoutes(app) {
  return app
    .get('/db', (res) => later(res, async () => [JSON_TYPE, JSON.stringify(await db.readWorld(pool))]))
    .get('/queries', (res, req) => {
      const n = db.queryCount(req.getQuery('queries'));
      later(res, async () => [JSON_TYPE, JSON.stringify(await db.readWorlds(pool, n))]);
    })
    .get('/updates', (res, req) => {
      const n = db.queryCount(req.getQuery('queries'));
      later(res, async () => [JSON_TYPE, JSON.stringify(await db.updateWorlds(pool, n))]);
    })
    .get('/fortunes', (res) => later(res, async () => ['text/html; charset=utf-8', db.renderFortunes(await db.fortunes(pool))]));
}

// ws-echo on /ws: uWS's own WebSocket, every message sent back as it came (text or binary).
// Compression off (uWS's default, said again); messages up to 16 MiB (uWS defaults to 16 KiB);
// no backpressure limit (uWS drops sends past 64 KiB by default, which would lose echoes under
// pipelining); idle timeout 960 s (uWS's maximum), so a quiet benchmark connection is kept. uWS
// answers pings with pongs and a close with the same code itself.
const WS = {
  compression: uWS.DISABLED,
  maxPayloadLength: 16 * 1024 * 1024,
  maxBackpressure: 0,
  closeOnBackpressureLimit: false,
  idleTimeout: 960,
  sendPingsAutomatically: false,
  message: (ws, message, isBinary) => { ws.send(message, isBinary); },
};

// The same routes on the plain App and on the SSLApp.
function routes(app) {
  if (pool) databaseRoutes(app);
  // baseline, upload and /json (compressed when asked; plain otherwise) in shapes.js.
  shapes.routes(app);
  return app
    .ws('/ws', WS)
    // A GET /ws without Upgrade falls through the ws route (uWS yields it) to here.
    .get('/ws', (res) => {
      res.writeStatus('426 Upgrade Required').writeHeader('Upgrade', 'websocket')
        .writeHeader('Content-Type', 'text/plain').end('Upgrade Required');
    })
    .get('/hey', (res) => send(res, 'text/plain', 'Hey!'))
    .get('/hell', (res) => send(res, 'text/plain', 'Hell!'))
    .get('/hello', (res) => send(res, 'text/plain', 'Hello World!'))
    .get('/about', (res) => send(res, 'text/html', '<html><body>About page</body></html>'))
    .get('/payload', (res) => send(res, 'application/octet-stream', PAYLOAD))
    .get('/pingpong', (res) => {
      let aborted = false;
      res.onAborted(() => { aborted = true; });
      pingpong().then((body) => {
        if (!aborted) res.cork(() => send(res, 'application/octet-stream', body));
      }, () => {
        if (!aborted) res.cork(() => res.writeStatus('500 Internal Server Error').writeHeader('Content-Type', 'text/plain').end('Internal Server Error'));
      });
    })
    .any('/*', (res) => {
      res.writeStatus('404 Not Found').writeHeader('Content-Type', 'text/plain').end('Not Found');
    });
}

const listenSockets = [];
function listen(app, port, scheme) {
  app.listen(HOST, port, (token) => {
    if (!token) {
      console.error(`node/uws: cannot listen on ${HOST}:${port}`);
      process.exit(1);
    }
    listenSockets.push(token);
    console.log(`node/uws listening on ${scheme}://${HOST}:${port}`);
  });
}

listen(routes(uWS.App()), PORT, 'http');

// HTTPS: uWS.SSLApp reads the PEM files itself (uSockets over the BoringSSL built into the
// binary); no ALPN is advertised, so clients speak HTTP/1.1 without negotiating it.
if (TLS_PORT !== null) {
  const { TLS_CERT, TLS_KEY } = process.env;
  if (!TLS_CERT || !TLS_KEY) {
    console.error('node/uws: TLS_PORT is set but TLS_CERT or TLS_KEY is not');
    process.exit(1);
  }
  listen(routes(uWS.SSLApp({ cert_file_name: TLS_CERT, key_file_name: TLS_KEY })), TLS_PORT, 'https');
}

function stop() {
  for (const token of listenSockets) uWS.us_listen_socket_close(token);
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
