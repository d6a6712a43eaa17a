'use strict';
// The HTTP shapes of issue 32 (spec/contract.md) on bare node:http: baseline and upload read
// the request stream (the upload counted chunk by chunk, never held; Node answers
// Expect: 100-continue itself), /json compressed with node:zlib (br, gzip, deflate: Node 20 has
// no zstd) in the first coding the client lists that it makes.
const zlib = require('node:zlib');

const JSON_BODY = () => Buffer.from(JSON.stringify({ message: 'Hello, World!' }));
const CODINGS = {
  br: (b) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } }),
  gzip: (b) => zlib.gzipSync(b, { level: 6 }),
  deflate: (b) => zlib.deflateSync(b, { level: 6 }),
};

const int = (v) => {
  const n = Number.parseInt(v, 10);
  return Number.isNaN(n) ? 0 : n;
};

function text(res, body) {
  const b = Buffer.from(body);
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': b.length });
  res.end(b);
}

function json(req, res) {
  const accept = req.headers['accept-encoding'] || '';
  const coding = accept.split(',').map((t) => t.split(';')[0].trim().toLowerCase()).find((t) => CODINGS[t]);
  let body = JSON_BODY();
  const headers = { 'Content-Type': 'application/json' };
  if (coding) {
    body = CODINGS[coding](body);
    headers['Content-Encoding'] = coding;
    headers.Vary = 'Accept-Encoding';
  }
  headers['Content-Length'] = body.length;
  res.writeHead(200, headers);
  res.end(body);
}

// True when the request is one of the shapes (and is being answered).
function handle(req, res, path, q) {
  if (path === '/baseline') {
    const params = new URLSearchParams(q === -1 ? '' : req.url.slice(q + 1));
    const sum = int(params.get('a')) + int(params.get('b'));
    if (req.method !== 'POST') {
      text(res, String(sum));
      return true;
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => text(res, String(sum + int(Buffer.concat(chunks).toString()))));
    return true;
  }
  if (path === '/upload' && req.method === 'POST') {
    let n = 0;
    req.on('data', (c) => { n += c.length; });
    req.on('end', () => text(res, String(n)));
    return true;
  }
  if (path === '/json' && req.method === 'GET' && req.headers['accept-encoding']) {
    json(req, res);
    return true;
  }
  return false;
}

module.exports = { handle };
