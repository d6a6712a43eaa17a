// node/uwebsockets-express: express 5 routing and API running on uWebSockets.js through
// uwebsockets-express, one process. uWebSockets.js is the npm republish uwebsockets@3.0.6.
// ESM on purpose: the CommonJS build of uwebsockets-express 2.0.4 requires files it does not ship.
// A second express app on a uWS.SSLApp serves the same routes over HTTPS on TLS_PORT when set.
import uWS from 'uWebSockets.js';
import expressify from 'uwebsockets-express';
import { Chan } from 'ts-chan';
import { mount, mountUpload } from './shapes.mjs';

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

// One express app per uWS app (plain App, SSLApp): same settings and routes on both.
function build(uwsApp) {
  mountUpload(uwsApp);
  const app = expressify(uwsApp);
  // Same settings as node/express: no ETag hashing, no X-Powered-By.
  app.set('etag', false);
  app.disable('x-powered-by');
  // baseline, compressed /json (shapes.mjs): first, so its /json is the compressing one.
  mount(app);

  app.get('/hey', (req, res) => res.type('text/plain').send('Hey!'));
  app.get('/hell', (req, res) => res.type('text/plain').send('Hell!'));
  app.get('/hello', (req, res) => res.type('text/plain').send('Hello World!'));
  app.get('/about', (req, res) => res.type('text/html').send('<html><body>About page</body></html>'));
  app.get('/json', (req, res) => res.json({ message: 'Hello, World!' }));
  app.get('/payload', (req, res) => res.type('application/octet-stream').send(PAYLOAD));
  app.get('/pingpong', async (req, res) => {
    res.type('application/octet-stream').send(await pingpong());
  });
  app.use((req, res) => res.status(404).type('text/plain').send('Not Found'));
  return uwsApp;
}

// uwebsockets-express's app.listen(port) binds every interface; listen on the uWS app
// directly so that only HOST is bound.
const listenSockets = [];
function listen(uwsApp, port, scheme) {
  uwsApp.listen(HOST, port, (token) => {
    if (!token) {
      console.error(`node/uwebsockets-express: cannot listen on ${HOST}:${port}`);
      process.exit(1);
    }
    listenSockets.push(token);
    console.log(`node/uwebsockets-express listening on ${scheme}://${HOST}:${port}`);
  });
}

listen(build(uWS.App()), PORT, 'http');

// HTTPS: uWS.SSLApp reads the PEM files itself (BoringSSL inside the uWS binary); no ALPN is
// advertised, so clients speak HTTP/1.1 without negotiating it.
if (TLS_PORT !== null) {
  const { TLS_CERT, TLS_KEY } = process.env;
  if (!TLS_CERT || !TLS_KEY) {
    console.error('node/uwebsockets-express: TLS_PORT is set but TLS_CERT or TLS_KEY is not');
    process.exit(1);
  }
  listen(build(uWS.SSLApp({ cert_file_name: TLS_CERT, key_file_name: TLS_KEY })), TLS_PORT, 'https');
}

function stop() {
  for (const token of listenSockets) uWS.us_listen_socket_close(token);
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
