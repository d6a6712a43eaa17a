'use strict';
// node/express: express 5 on node:http, one process; the same app on node:https on TLS_PORT
// when it is set (the way the express docs serve HTTPS).
const fs = require('node:fs');
const https = require('node:https');
const path = require('node:path');
const express = require('express');
const { Chan } = require('ts-chan');
const db = require('./db');
const shapes = require('./shapes');

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

const app = express();
// No ETag hashing of every body (1 MiB payloads) and no X-Powered-By: common production settings.
app.set('etag', false);
app.disable('x-powered-by');
// baseline, upload, compression, static (shapes.js): first, so its /json is the compressing one.
shapes.mount(app);

app.get('/hey', (req, res) => res.type('text/plain').send('Hey!'));
app.get('/hell', (req, res) => res.type('text/plain').send('Hell!'));
app.get('/hello', (req, res) => res.type('text/plain').send('Hello World!'));
app.get('/about', (req, res) => res.type('text/html').send('<html><body>About page</body></html>'));
app.get('/json', (req, res) => res.json({ message: 'Hello, World!' }));
app.get('/payload', (req, res) => res.type('application/octet-stream').send(PAYLOAD));
// Express 5 forwards a rejected promise to the error handler.
app.get('/pingpong', async (req, res) => {
  res.type('application/octet-stream').send(await pingpong());
});
// The database routes, only when DATABASE_URL is set (pg connects on first use). Express 5
// forwards a rejected promise (a database error) to its default error handler: a 500.
if (process.env.DATABASE_URL) {
  const pool = db.openPool();
  app.set('views', path.join(__dirname, 'views'));
  app.set('view engine', 'ejs');
  app.get('/db', async (req, res) => res.json(await db.readWorld(pool)));
  app.get('/queries', async (req, res) => res.json(await db.readWorlds(pool, db.queryCount(req.query.queries))));
  app.get('/updates', async (req, res) => res.json(await db.updateWorlds(pool, db.queryCount(req.query.queries))));
  app.get('/fortunes', async (req, res) => res.render('fortunes', { fortunes: await db.fortunes(pool) }));
}
app.use((req, res) => res.status(404).type('text/plain').send('Not Found'));

app.listen(PORT, HOST, () => console.log(`node/express listening on http://${HOST}:${PORT}`));

// HTTPS: node:https with Node's TLS defaults (ALPN http/1.1, TLS 1.2 and 1.3, session tickets).
if (TLS_PORT !== null) {
  const { TLS_CERT, TLS_KEY } = process.env;
  if (!TLS_CERT || !TLS_KEY) {
    console.error('node/express: TLS_PORT is set but TLS_CERT or TLS_KEY is not');
    process.exit(1);
  }
  https.createServer({ cert: fs.readFileSync(TLS_CERT), key: fs.readFileSync(TLS_KEY) }, app)
    .listen(TLS_PORT, HOST, () => console.log(`node/express listening on https://${HOST}:${TLS_PORT}`));
}

process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
