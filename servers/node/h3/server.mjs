// node/h3: h3 2.x on Node through its own `serve` (srvx, node:http underneath), and the same app
// over HTTPS on TLS_PORT when it is set (srvx with `tls`, node:https underneath).
import { STATUS_CODES } from 'node:http';
import { H3, serve } from 'h3';
import { Chan } from 'ts-chan';
import db from './db.cjs';

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

// srvx writes the Response's statusText as the reason phrase, and a Response made without one
// has "" (srvx/dist/adapters/node.mjs, NodeResponse's statusText getter), so Node would send
// `HTTP/1.1 200 ` with an empty phrase, which h2load's HTTP/1 client counts as a failure. Every
// handler names its status text.
function typed(event, type, body) {
  event.res.statusText = STATUS_CODES[event.res.status || 200];
  event.res.headers.set('content-type', type);
  return body;
}

// The database routes exist only when DATABASE_URL is set (pg connects on first use).
const pool = process.env.DATABASE_URL ? db.openPool() : null;
const JSON_TYPE = 'application/json';

// A database handler: its answer, or on a database error a logged 500 (with its reason phrase).
const answer = (type, work) => async (event) => {
  try {
    return typed(event, type, await work(event));
  } catch (err) {
    console.error(`node/h3: database: ${err.message}`);
    event.res.status = 500;
    return typed(event, 'text/plain', 'Internal Server Error');
  }
};

// /db, /queries, /fortunes, /updates.
function databaseRoutes(app) {
  if (!pool) return app;
  const queries = (event) => db.queryCount(event.url.searchParams.get('queries') ?? '');
  return app
    .get('/db', answer(JSON_TYPE, async () => JSON.stringify(await db.readWorld(pool))))
    .get('/queries', answer(JSON_TYPE, async (event) => JSON.stringify(await db.readWorlds(pool, queries(event)))))
    .get('/updates', answer(JSON_TYPE, async (event) => JSON.stringify(await db.updateWorlds(pool, queries(event)))))
    .get('/fortunes', answer('text/html; charset=utf-8', async () => db.renderFortunes(await db.fortunes(pool))));
}

const app = databaseRoutes(new H3())
  .get('/hey', (event) => typed(event, 'text/plain', 'Hey!'))
  .get('/hell', (event) => typed(event, 'text/plain', 'Hell!'))
  .get('/hello', (event) => typed(event, 'text/plain', 'Hello World!'))
  .get('/about', (event) => typed(event, 'text/html', '<html><body>About page</body></html>'))
  .get('/json', (event) => {
    event.res.statusText = 'OK';
    return { message: 'Hello, World!' };
  })
  .get('/payload', (event) => typed(event, 'application/octet-stream', PAYLOAD))
  .get('/pingpong', async (event) => typed(event, 'application/octet-stream', await pingpong()))
  .all('/**', (event) => {
    event.res.status = 404;
    return typed(event, 'text/plain', 'Not Found');
  });

serve(app, { port: PORT, hostname: HOST, silent: true });
console.log(`node/h3 listening on http://${HOST}:${PORT}`);

// HTTPS: srvx reads the PEM files named in `tls`. Over TLS srvx defaults to node:http2 with
// HTTP/1.1 fallback; `node.http2: false` keeps node:https, like the other node:http entries.
if (TLS_PORT !== null) {
  const { TLS_CERT, TLS_KEY } = process.env;
  if (!TLS_CERT || !TLS_KEY) {
    console.error('node/h3: TLS_PORT is set but TLS_CERT or TLS_KEY is not');
    process.exit(1);
  }
  serve(app, {
    port: TLS_PORT,
    hostname: HOST,
    silent: true,
    tls: { cert: TLS_CERT, key: TLS_KEY },
    node: { http2: false },
  });
  console.log(`node/h3 listening on https://${HOST}:${TLS_PORT}`);
}

process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
