'use strict';
// node/uws: uWebSockets.js (C++ HTTP server with a V8 binding), one event loop.
// Installed from the npm republish uwebsockets@3.0.6 under its upstream name, see README.md.
const uWS = require('uWebSockets.js');
const { Chan } = require('ts-chan');

const HOST = process.env.HOST || '127.0.0.1';
const PORT = Number(process.env.PORT || 8080);

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

const app = uWS.App()
  .get('/hey', (res) => send(res, 'text/plain', 'Hey!'))
  .get('/hell', (res) => send(res, 'text/plain', 'Hell!'))
  .get('/hello', (res) => send(res, 'text/plain', 'Hello World!'))
  .get('/about', (res) => send(res, 'text/html', '<html><body>About page</body></html>'))
  .get('/json', (res) => send(res, 'application/json', JSON.stringify({ message: 'Hello, World!' })))
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

let listenSocket = null;
app.listen(HOST, PORT, (token) => {
  if (!token) {
    console.error(`node/uws: cannot listen on ${HOST}:${PORT}`);
    process.exit(1);
  }
  listenSocket = token;
  console.log(`node/uws listening on http://${HOST}:${PORT}`);
});

function stop() {
  if (listenSocket) uWS.us_listen_socket_close(listenSocket);
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
