// deno/serve: Deno's built-in HTTP server (Deno.serve) and TCP echo (Deno.listen), one process; a
// second Deno.serve with `cert`/`key` serves the same handler over HTTPS on TLS_PORT when set.
// ts-chan is resolved from node_modules through package.json.
import { Chan } from 'ts-chan';
import * as db from './db.js';
import * as shapes from './shapes.js';

const HOST = Deno.env.get('HOST') || '127.0.0.1';
const PORT = Number(Deno.env.get('PORT') || 8080);
const ECHO_PORT = Number(Deno.env.get('ECHO_PORT') || 9000);
const TLS_PORT = Deno.env.get('TLS_PORT') ? Number(Deno.env.get('TLS_PORT')) : null;
// The database routes exist only when DATABASE_URL is set (postgres.js connects on first use).
const pool = Deno.env.get('DATABASE_URL') ? db.openPool() : null;

// 1 MiB, byte i = 'a' + i mod 26, built once at start.
const PAYLOAD = new Uint8Array(1 << 20);
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

const TEXT = { 'Content-Type': 'text/plain' };
const HTML = { 'Content-Type': 'text/html' };
const JSON_TYPE = { 'Content-Type': 'application/json' };
const OCTETS = { 'Content-Type': 'application/octet-stream' };

const ROUTES = {
  '/hey': () => new Response('Hey!', { headers: TEXT }),
  '/hell': () => new Response('Hell!', { headers: TEXT }),
  '/hello': () => new Response('Hello World!', { headers: TEXT }),
  '/about': () => new Response('<html><body>About page</body></html>', { headers: HTML }),
  '/json': () => new Response(JSON.stringify({ message: 'Hello, World!' }), { headers: JSON_TYPE }),
  '/payload': () => new Response(PAYLOAD, { headers: OCTETS }),
  '/pingpong': async () => new Response(await pingpong(), { headers: OCTETS }),
};

// /db, /queries, /fortunes, /updates; a database error answers 500.
const HTML_UTF8 = { 'Content-Type': 'text/html; charset=utf-8' };
const queries = (req) => db.queryCount(new URL(req.url).searchParams.get('queries'));
async function answer(work, headers) {
  try {
    return new Response(await work(), { headers });
  } catch (err) {
    console.error(`deno/serve: database: ${err.message}`);
    return new Response('Internal Server Error', { status: 500, headers: TEXT });
  }
}
if (pool) {
  Object.assign(ROUTES, {
    '/db': () => answer(async () => JSON.stringify(await db.readWorld(pool)), JSON_TYPE),
    '/queries': (req) => answer(async () => JSON.stringify(await db.readWorlds(pool, queries(req))), JSON_TYPE),
    '/updates': (req) => answer(async () => JSON.stringify(await db.updateWorlds(pool, queries(req))), JSON_TYPE),
    '/fortunes': () => answer(async () => db.renderFortunes(await db.fortunes(pool)), HTML_UTF8),
  });
}

// ws-echo: Deno.upgradeWebSocket (fastwebsockets underneath); every message is sent back as it
// came, text (a string) as text, binary (an ArrayBuffer) as binary. A GET /ws that does not ask
// to upgrade is answered 426 (upgradeWebSocket would throw). idleTimeout 0: no server pings and
// no idle close (the default sends a ping after 120 s quiet and closes without a pong). Deno
// offers no permessage-deflate; messages up to fastwebsockets' 64 MiB.
const UPGRADE_REQUIRED = { ...TEXT, Upgrade: 'websocket' };
ROUTES['/ws'] = (req) => {
  if (req.headers.get('upgrade')?.toLowerCase() !== 'websocket') {
    return new Response('Upgrade Required', { status: 426, headers: UPGRADE_REQUIRED });
  }
  const { socket, response } = Deno.upgradeWebSocket(req, { idleTimeout: 0 });
  socket.binaryType = 'arraybuffer';
  socket.onmessage = (event) => socket.send(event.data);
  socket.onerror = () => {};
  return response;
};

function notFound() {
  return new Response('Not Found', { status: 404, headers: TEXT });
}

// The path sits between the first '/' after "scheme://" and any '?'.
function pathOf(url) {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  const q = url.indexOf('?', start);
  return q === -1 ? url.slice(start) : url.slice(start, q);
}

function handler(req) {
  // baseline, upload, /json compressed when asked (shapes.js).
  const shape = shapes.handle(req, pathOf(req.url));
  if (shape) return shape;
  const route = req.method === 'GET' ? ROUTES[pathOf(req.url)] : undefined;
  return route ? route(req) : notFound();
}

const servers = [Deno.serve({
  hostname: HOST,
  port: PORT,
  onListen: ({ hostname, port }) => console.log(`deno/serve listening on http://${hostname}:${port}`),
}, handler)];

// HTTPS: Deno.serve with the PEM certificate chain and key (rustls underneath); it offers ALPN
// h2 and http/1.1. The run command grants read access to exactly these two files.
if (TLS_PORT !== null) {
  const certFile = Deno.env.get('TLS_CERT');
  const keyFile = Deno.env.get('TLS_KEY');
  if (!certFile || !keyFile) {
    console.error('deno/serve: TLS_PORT is set but TLS_CERT or TLS_KEY is not');
    Deno.exit(1);
  }
  servers.push(Deno.serve({
    hostname: HOST,
    port: TLS_PORT,
    cert: Deno.readTextFileSync(certFile),
    key: Deno.readTextFileSync(keyFile),
    onListen: ({ hostname, port }) => console.log(`deno/serve listening on https://${hostname}:${port}`),
  }, handler));
}

// TCP echo: pipe each connection's readable into its writable; pipeTo closes our side at EOF.
const listener = Deno.listen({ hostname: HOST, port: ECHO_PORT });
console.log(`deno/serve echo on ${HOST}:${ECHO_PORT}`);
(async () => {
  for await (const conn of listener) {
    conn.setNoDelay(true);
    conn.readable.pipeTo(conn.writable).catch(() => {
      try { conn.close(); } catch { /* already closed */ }
    });
  }
})();

function stop() {
  listener.close();
  for (const server of servers) server.shutdown();
  Deno.exit(0);
}
Deno.addSignalListener('SIGTERM', stop);
Deno.addSignalListener('SIGINT', stop);
