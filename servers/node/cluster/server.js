'use strict';
// node/cluster: node:http in WORKERS processes sharing the ports through node:cluster,
// plus a node:net TCP echo in every worker.
const cluster = require('node:cluster');

const HOST = process.env.HOST || '127.0.0.1';
const PORT = Number(process.env.PORT || 8080);
const ECHO_PORT = Number(process.env.ECHO_PORT || 9000);
const WORKERS = Math.max(1, Number(process.env.WORKERS) || 1);

if (cluster.isPrimary) {
  primary();
} else {
  worker();
}

function primary() {
  let stopping = false;
  for (let i = 0; i < WORKERS; i++) cluster.fork();
  cluster.on('exit', (w, code, signal) => {
    // A worker that exits cleanly was told to stop (e.g. SIGTERM sent to the whole group).
    if (stopping || code === 0 || signal === 'SIGTERM') {
      if (Object.keys(cluster.workers).length === 0) process.exit(0);
      return;
    }
    console.error(`worker ${w.process.pid} died (${signal || code}), restarting`);
    cluster.fork();
  });
  const stop = () => {
    stopping = true;
    const alive = Object.values(cluster.workers);
    if (alive.length === 0) process.exit(0);
    for (const w of alive) w.process.kill('SIGTERM');
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  console.log(`node/cluster primary ${process.pid}: ${WORKERS} workers on http://${HOST}:${PORT}, echo on ${ECHO_PORT}`);
}

function worker() {
  const http = require('node:http');
  const net = require('node:net');
  const { Chan } = require('ts-chan');
  const db = require('./db');
  const shapes = require('./shapes');
  // The database routes exist only when DATABASE_URL is set; each worker gets its share of
  // DATABASE_POOL (at least one connection), so the workers open DATABASE_POOL in total.
  const pool = process.env.DATABASE_URL
    ? db.openPool(Math.floor(Number(process.env.DATABASE_POOL || 16) / WORKERS))
    : null;

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

  function handle(req, res) {
    const q = req.url.indexOf('?');
    const path = q === -1 ? req.url : req.url.slice(0, q);
    // baseline, upload and /json with Accept-Encoding (shapes.js).
    if (shapes.handle(req, res, path, q)) return;
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
      default: return pool ? database(req, res, path, q) : send(res, 404, 'text/plain', NOT_FOUND);
    }
  }

  const JSON_TYPE = 'application/json';
  const json = (value) => Buffer.from(JSON.stringify(value));
  const queries = (req, q) => db.queryCount(q === -1 ? '' : new URLSearchParams(req.url.slice(q + 1)).get('queries'));

  // /db, /queries, /fortunes, /updates; a database error answers 500.
  function database(req, res, path, q) {
    let answer;
    switch (path) {
      case '/db': answer = db.readWorld(pool).then((w) => [JSON_TYPE, json(w)]); break;
      case '/queries': answer = db.readWorlds(pool, queries(req, q)).then((w) => [JSON_TYPE, json(w)]); break;
      case '/updates': answer = db.updateWorlds(pool, queries(req, q)).then((w) => [JSON_TYPE, json(w)]); break;
      case '/fortunes':
        answer = db.fortunes(pool).then((rows) => ['text/html; charset=utf-8', Buffer.from(db.renderFortunes(rows))]);
        break;
      default: return send(res, 404, 'text/plain', NOT_FOUND);
    }
    answer.then(([type, body]) => send(res, 200, type, body), (err) => {
      console.error(`node/cluster: database: ${err.message}`);
      send(res, 500, 'text/plain', Buffer.from('Internal Server Error'));
    });
  }

  http.createServer(handle).listen(PORT, HOST);
  net.createServer((socket) => {
    socket.on('error', () => socket.destroy());
    socket.pipe(socket);
  }).listen(ECHO_PORT, HOST);

  process.on('SIGTERM', () => process.exit(0));
  process.on('SIGINT', () => process.exit(0));
}
