'use strict';
// node/fastify: fastify 5 on node:http, one process; a second instance with the `https` option
// (node:https) serves the same routes on TLS_PORT when it is set.
const fs = require('node:fs');
const fastify = require('fastify');
const { Chan } = require('ts-chan');
const { openPool, databaseRoutes } = require('./db');
const shapes = require('./shapes');

const HOST = process.env.HOST || '127.0.0.1';
const PORT = Number(process.env.PORT || 8080);
const TLS_PORT = process.env.TLS_PORT ? Number(process.env.TLS_PORT) : null;
// The database routes exist only when DATABASE_URL is set (pg connects lazily, on first use).
const pool = process.env.DATABASE_URL ? openPool() : null;

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

// A response schema lets fastify serialize /json with fast-json-stringify, as its docs advise.
const jsonSchema = {
  response: {
    200: { type: 'object', properties: { message: { type: 'string' } } },
  },
};

// One fastify instance per listener (fastify serves either http or https): same routes on both.
function build(options) {
  const app = fastify({ logger: false, ...options });
  app.get('/hey', (req, reply) => { reply.type('text/plain').send('Hey!'); });
  app.get('/hell', (req, reply) => { reply.type('text/plain').send('Hell!'); });
  app.get('/hello', (req, reply) => { reply.type('text/plain').send('Hello World!'); });
  app.get('/about', (req, reply) => { reply.type('text/html').send('<html><body>About page</body></html>'); });
  // /json is in shapes.js, with @fastify/compress; baseline, upload and static beside it.
  shapes.register(app, jsonSchema);
  app.get('/payload', (req, reply) => { reply.type('application/octet-stream').send(PAYLOAD); });
  app.get('/pingpong', async (req, reply) => {
    reply.type('application/octet-stream');
    return pingpong();
  });
  if (pool) databaseRoutes(app, pool);
  app.setNotFoundHandler((req, reply) => { reply.code(404).type('text/plain').send('Not Found'); });
  return app;
}

function listen(app, port, scheme) {
  app.listen({ port, host: HOST }).then(
    () => console.log(`node/fastify listening on ${scheme}://${HOST}:${port}`),
    (err) => { console.error(err); process.exit(1); });
}

listen(build({}), PORT, 'http');

// HTTPS: fastify's `https` option (node:https, Node's TLS defaults: ALPN http/1.1, session tickets).
if (TLS_PORT !== null) {
  const { TLS_CERT, TLS_KEY } = process.env;
  if (!TLS_CERT || !TLS_KEY) {
    console.error('node/fastify: TLS_PORT is set but TLS_CERT or TLS_KEY is not');
    process.exit(1);
  }
  listen(build({ https: { cert: fs.readFileSync(TLS_CERT), key: fs.readFileSync(TLS_KEY) } }), TLS_PORT, 'https');
}

process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
