// bun/serve: Bun's built-in HTTP server (Bun.serve) and TCP echo (Bun.listen), one process; a
// second Bun.serve with `tls` serves the same routes over HTTPS on TLS_PORT when it is set.
import { Chan } from 'ts-chan';
import * as db from './db.js';
import * as shapes from './shapes.js';

const HOST = process.env.HOST || '127.0.0.1';
const PORT = Number(process.env.PORT || 8080);
const ECHO_PORT = Number(process.env.ECHO_PORT || 9000);
const TLS_PORT = process.env.TLS_PORT ? Number(process.env.TLS_PORT) : null;
// The database routes exist only when DATABASE_URL is set (Bun's SQL connects on first use).
const pool = process.env.DATABASE_URL ? db.openPool() : null;

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

// /db, /queries, /fortunes, /updates; a database error answers 500.
const HTML_UTF8 = { 'Content-Type': 'text/html; charset=utf-8' };
const queries = (req) => db.queryCount(new URL(req.url).searchParams.get('queries'));
async function answer(work, headers) {
  try {
    return new Response(await work(), { headers });
  } catch (err) {
    console.error(`bun/serve: database: ${err.message}`);
    return new Response('Internal Server Error', { status: 500, headers: TEXT });
  }
}
const DATABASE_ROUTES = {
  '/db': { GET: () => answer(async () => JSON.stringify(await db.readWorld(pool)), JSON_TYPE) },
  '/queries': {
    GET: (req) => answer(async () => JSON.stringify(await db.readWorlds(pool, queries(req))), JSON_TYPE),
  },
  '/updates': {
    GET: (req) => answer(async () => JSON.stringify(await db.updateWorlds(pool, queries(req))), JSON_TYPE),
  },
  '/fortunes': { GET: () => answer(async () => db.renderFortunes(await db.fortunes(pool)), HTML_UTF8) },
};

// Handlers are functions (not static Response objects) so that every request runs JS,
// as it does in the other servers. The same routes serve PORT and TLS_PORT.
const app = {
  routes: {
    '/hey': { GET: () => new Response('Hey!', { headers: TEXT }) },
    '/hell': { GET: () => new Response('Hell!', { headers: TEXT }) },
    '/hello': { GET: () => new Response('Hello World!', { headers: TEXT }) },
    '/about': { GET: () => new Response('<html><body>About page</body></html>', { headers: HTML }) },
    '/payload': { GET: () => new Response(PAYLOAD, { headers: OCTETS }) },
    '/pingpong': { GET: async () => new Response(await pingpong(), { headers: OCTETS }) },
    // ws-echo: upgrade when the request asks for it; a plain GET /ws is answered 426.
    '/ws': {
      GET: (req, server) => (server.upgrade(req)
        ? undefined
        : new Response('Upgrade Required', { status: 426, headers: { ...TEXT, Upgrade: 'websocket' } })),
    },
    ...(pool ? DATABASE_ROUTES : {}),
    // baseline, upload, /json compressed when asked (shapes.js).
    ...shapes.routes,
  },
  fetch() {
    return new Response('Not Found', { status: 404, headers: TEXT });
  },
  // Bun's built-in WebSocket (its uWebSockets fork): a text message arrives as a string and is
  // sent back as text, a binary one as a Buffer and sent back as binary. Compression off (Bun's
  // default, said again); messages up to 16 MiB and 16 MiB of backpressure (Bun's defaults);
  // idle timeout 960 s (Bun's maximum; the default 120 s) and no server pings, so a quiet
  // connection is neither closed nor sent frames it did not ask for.
  websocket: {
    message(ws, message) { ws.send(message); },
    perMessageDeflate: false,
    maxPayloadLength: 16 * 1024 * 1024,
    backpressureLimit: 16 * 1024 * 1024,
    closeOnBackpressureLimit: false,
    idleTimeout: 960,
    sendPings: false,
  },
};
const servers = [Bun.serve({ hostname: HOST, port: PORT, ...app })];
console.log(`bun/serve listening on ${servers[0].url}`);

// HTTPS: Bun.serve's `tls` with the PEM files (BunFile); Bun's own TLS (BoringSSL) defaults.
if (TLS_PORT !== null) {
  const { TLS_CERT, TLS_KEY } = process.env;
  if (!TLS_CERT || !TLS_KEY) {
    console.error('bun/serve: TLS_PORT is set but TLS_CERT or TLS_KEY is not');
    process.exit(1);
  }
  const tls = { cert: Bun.file(TLS_CERT), key: Bun.file(TLS_KEY) };
  servers.push(Bun.serve({ hostname: HOST, port: TLS_PORT, tls, ...app }));
  console.log(`bun/serve listening on ${servers[1].url}`);
}

// TCP echo: write back what arrives; keep what the kernel did not take until `drain`.
function flush(socket) {
  const state = socket.data;
  while (state.queue.length > 0) {
    const chunk = state.queue[0];
    const n = socket.write(chunk);
    if (n < chunk.length) {
      state.queue[0] = chunk.subarray(Math.max(n, 0));
      return;
    }
    state.queue.shift();
  }
  if (state.ended) socket.end();
}

Bun.listen({
  hostname: HOST,
  port: ECHO_PORT,
  // Keep our side open after the peer's FIN until everything queued has been echoed.
  allowHalfOpen: true,
  socket: {
    open(socket) { socket.data = { queue: [], ended: false }; },
    data(socket, data) {
      const state = socket.data;
      if (state.queue.length === 0) {
        const n = socket.write(data);
        if (n >= data.length) return;
        data = data.subarray(Math.max(n, 0));
      }
      // `data` belongs to this call only: keep a copy of what the socket did not take.
      state.queue.push(new Uint8Array(data));
    },
    drain(socket) { flush(socket); },
    end(socket) {
      socket.data.ended = true;
      if (socket.data.queue.length === 0) socket.end();
    },
    error() {},
  },
});
console.log(`bun/serve echo on ${HOST}:${ECHO_PORT}`);

function stop() {
  for (const server of servers) server.stop(true);
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
