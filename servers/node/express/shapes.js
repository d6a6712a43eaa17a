'use strict';
// The HTTP shapes of issue 32 (spec/contract.md): baseline, upload, compression and static, the
// way express apps do them: express.text for the small body, the request stream for uploads,
// the compression middleware on /json, express.static (serve-static) for STATIC_DIR.
const express = require('express');
const compression = require('compression');

// threshold 0: the contract's /json is 27 bytes, below the middleware's 1 KiB default.
const compress = compression({ threshold: 0 });

const int = (v) => {
  const n = Number.parseInt(v, 10);
  return Number.isNaN(n) ? 0 : n;
};

// Mounts the routes before the app's 404; /json with compression replaces the plain one only
// because it is registered first: call before the app's own routes.
function mount(app) {
  const sum = (req) => int(req.query.a) + int(req.query.b);
  app.get('/baseline', (req, res) => res.type('text/plain').send(String(sum(req))));
  app.post('/baseline', express.text({ type: '*/*' }), (req, res) =>
    res.type('text/plain').send(String(sum(req) + int(req.body))));
  // The body as a stream: counted chunk by chunk, never held (Node answers Expect: 100-continue).
  app.post('/upload', (req, res) => {
    let n = 0;
    req.on('data', (chunk) => { n += chunk.length; });
    req.on('end', () => res.type('text/plain').send(String(n)));
  });
  app.get('/json', compress, (req, res) => res.json({ message: 'Hello, World!' }));
  if (process.env.STATIC_DIR) {
    app.use('/static', compress, express.static(process.env.STATIC_DIR, { fallthrough: false }));
  }
}

module.exports = { mount };
