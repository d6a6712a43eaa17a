// node/h3: h3 2.x on Node through its own `serve` (srvx, node:http underneath), and the same app
// over HTTPS on TLS_PORT when it is set (srvx with `tls`, node:https underneath).
import { H3, serve } from 'h3';
import { Chan } from 'ts-chan';

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

function typed(event, type, body) {
  event.res.headers.set('content-type', type);
  return body;
}

const app = new H3()
  .get('/hey', (event) => typed(event, 'text/plain', 'Hey!'))
  .get('/hell', (event) => typed(event, 'text/plain', 'Hell!'))
  .get('/hello', (event) => typed(event, 'text/plain', 'Hello World!'))
  .get('/about', (event) => typed(event, 'text/html', '<html><body>About page</body></html>'))
  .get('/json', () => ({ message: 'Hello, World!' }))
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
