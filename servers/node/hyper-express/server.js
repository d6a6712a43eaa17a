'use strict';
// node/hyper-express: hyper-express 6 (an express-like API over uWebSockets.js), one process; a
// second Server with its SSL options (a uWS SSLApp) serves the same routes on TLS_PORT when set.
// uWebSockets.js comes from the npm republish uwebsockets@3.0.6 through package.json overrides.
const HyperExpress = require('hyper-express');
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

// /db, /queries, /fortunes, /updates; a database error answers 500 (text/plain).
function databaseRoutes(server) {
  const fail = (res) => (err) => {
    console.error(`node/hyper-express: database: ${err.message}`);
    res.status(500).type('text/plain').send('Internal Server Error');
  };
  server.get('/db', (req, res) => db.readWorld(pool).then((w) => res.json(w), fail(res)));
  server.get('/queries', (req, res) =>
    db.readWorlds(pool, db.queryCount(req.query_parameters.queries)).then((w) => res.json(w), fail(res)));
  server.get('/updates', (req, res) =>
    db.updateWorlds(pool, db.queryCount(req.query_parameters.queries)).then((w) => res.json(w), fail(res)));
  server.get('/fortunes', (req, res) => db.fortunes(pool).then(
    (rows) => res.type('html').send(db.renderFortunes(rows)), // text/html; charset=utf-8
    fail(res)));
}

// One Server per listener (a Server is either plain or SSL): the same routes on both.
function build(options) {
  const server = new HyperExpress.Server(options);
  server.get('/hey', (req, res) => res.type('text/plain').send('Hey!'));
  server.get('/hell', (req, res) => res.type('text/plain').send('Hell!'));
  server.get('/hello', (req, res) => res.type('text/plain').send('Hello World!'));
  server.get('/about', (req, res) => res.type('text/html').send('<html><body>About page</body></html>'));
  // /json (plain, or compressed when Accept-Encoding asks), baseline, upload: shapes.js.
  shapes.mount(server);
  server.get('/payload', (req, res) => res.type('application/octet-stream').send(PAYLOAD));
  server.get('/pingpong', async (req, res) => {
    const body = await pingpong();
    res.type('application/octet-stream').send(body);
  });
  // ws-echo: hyper-express's ws route (a uWS ws behind it). Messages handed over as the uWS
  // ArrayBuffer (valid only during the callback: the echo is synchronous, so no copy), sent back
  // text as text, binary as binary. Compression off (hyper-express's default, said again); up to
  // 16 MiB (its default is 32 KiB); no backpressure limit (its 1 MiB default drops sends past
  // it); idle timeout 960 s (uWS's maximum; the default 32 s would close quiet connections).
  server.ws('/ws', {
    message_type: 'ArrayBuffer',
    compression: HyperExpress.compressors.DISABLED,
    max_payload_length: 16 * 1024 * 1024,
    max_backpressure: 0,
    idle_timeout: 960,
  }, (ws) => {
    ws.on('message', (message, isBinary) => ws.send(message, isBinary));
  });
  // A GET /ws without Upgrade is not an upgrade: uWS passes it on to the plain routes.
  server.get('/ws', (req, res) => res.status(426).header('Upgrade', 'websocket').type('text/plain').send('Upgrade Required'));
  if (pool) databaseRoutes(server);
  server.set_not_found_handler((req, res) => res.status(404).type('text/plain').send('Not Found'));
  return server;
}

const servers = [];
function listen(server, port, scheme) {
  servers.push(server);
  server.listen(port, HOST).then(
    () => console.log(`node/hyper-express listening on ${scheme}://${HOST}:${port}`),
    (err) => { console.error(`node/hyper-express: cannot listen on ${HOST}:${port}:`, err); process.exit(1); });
}

listen(build({}), PORT, 'http');

// HTTPS: hyper-express's SSL options hand the PEM file names to uWS.SSLApp (BoringSSL inside the
// uWS binary); no ALPN is advertised, so clients speak HTTP/1.1 without negotiating it.
if (TLS_PORT !== null) {
  const { TLS_CERT, TLS_KEY } = process.env;
  if (!TLS_CERT || !TLS_KEY) {
    console.error('node/hyper-express: TLS_PORT is set but TLS_CERT or TLS_KEY is not');
    process.exit(1);
  }
  listen(build({ cert_file_name: TLS_CERT, key_file_name: TLS_KEY }), TLS_PORT, 'https');
}

function stop() {
  for (const server of servers) server.close();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
