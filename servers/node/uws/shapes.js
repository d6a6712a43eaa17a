'use strict';
// The HTTP shapes of issue 32 (spec/contract.md) on uWebSockets.js: the request body comes
// through res.onData in chunks that live only during the callback, so /upload counts their
// bytes and keeps none (a bounded buffer: uWS's own receive buffer), /baseline copies its small
// body; res.onAborted marks a client gone so nothing is written to a closed response. /json is
// compressed with node:zlib in the first coding the client lists, with Vary: Accept-Encoding.
const zlib = require('node:zlib');

// brotli at quality 4 (node:zlib's default is 11, far slower), gzip and deflate at level 6: the
// levels of node/http, node/cluster, node/hyper-express and @fastify/compress.
const CODINGS = {
  br: (b) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } }),
  gzip: (b) => zlib.gzipSync(b, { level: 6 }),
  deflate: (b) => zlib.deflateSync(b, { level: 6 }),
};

const int = (v) => {
  const n = Number.parseInt(v, 10);
  return Number.isNaN(n) ? 0 : n;
};

// Reads the body chunk by chunk: fold(state, chunk) for each, then done(state), unless aborted.
function readBody(res, state, fold, done) {
  let aborted = false;
  res.onAborted(() => { aborted = true; });
  res.onData((chunk, isLast) => {
    state = fold(state, chunk);
    if (isLast && !aborted) res.cork(() => done(state));
  });
}

function text(res, body) {
  res.writeHeader('Content-Type', 'text/plain').end(String(body));
}

function json(res, req) {
  const body = Buffer.from(JSON.stringify({ message: 'Hello, World!' }));
  const accept = req.getHeader('accept-encoding');
  const coding = accept.split(',').map((t) => t.split(';')[0].trim().toLowerCase()).find((t) => CODINGS[t]);
  if (!coding) {
    res.writeHeader('Content-Type', 'application/json').end(body);
    return;
  }
  res.writeHeader('Content-Type', 'application/json').writeHeader('Content-Encoding', coding)
    .writeHeader('Vary', 'Accept-Encoding').end(CODINGS[coding](body));
}

// baseline, upload and the compressing /json on a uWS App (or SSLApp).
function routes(app) {
  return app
    .get('/baseline', (res, req) => text(res, int(req.getQuery('a')) + int(req.getQuery('b'))))
    .post('/baseline', (res, req) => {
      // req is valid only in this synchronous handler: read the query now.
      const sum = int(req.getQuery('a')) + int(req.getQuery('b'));
      // chunk.slice(0) copies: uWS detaches the chunk's ArrayBuffer after the callback.
      readBody(res, [], (parts, chunk) => { parts.push(Buffer.from(chunk.slice(0))); return parts; },
        (parts) => text(res, sum + int(Buffer.concat(parts).toString().trim())));
    })
    .post('/upload', (res) => readBody(res, 0, (n, chunk) => n + chunk.byteLength, (n) => text(res, n)))
    .get('/json', json);
}

module.exports = { routes };
