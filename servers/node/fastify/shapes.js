'use strict';
// The HTTP shapes of issue 32 (spec/contract.md) the way fastify apps do them: content-type
// parsers for the bodies (the upload counted as it streams, never held), @fastify/compress for
// /json and @fastify/static for STATIC_DIR. Each in its own encapsulated plugin, so the
// compression hooks and the catch-all parsers touch no other route.
const compress = require('@fastify/compress');
const fastifyStatic = require('@fastify/static');

const int = (v) => {
  const n = Number.parseInt(v, 10);
  return Number.isNaN(n) ? 0 : n;
};

async function baseline(scope) {
  scope.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => done(null, body));
  const sum = (req) => int(req.query.a) + int(req.query.b);
  scope.get('/baseline', (req, reply) => { reply.type('text/plain').send(String(sum(req))); });
  scope.post('/baseline', (req, reply) => {
    reply.type('text/plain').send(String(sum(req) + int(req.body)));
  });
}

async function upload(scope) {
  // The body stream counted in the parser (Node answers Expect: 100-continue).
  scope.addContentTypeParser('*', (req, payload, done) => {
    let n = 0;
    payload.on('data', (chunk) => { n += chunk.length; });
    payload.on('end', () => done(null, n));
    payload.on('error', done);
  });
  scope.post('/upload', { bodyLimit: 1 << 30 }, (req, reply) => {
    reply.type('text/plain').send(String(req.body));
  });
}

// /json (with the app's response schema) and /static/, compressed when asked: threshold 0 (the
// contract's /json is 27 bytes, under the plugin's 1 KiB default).
function compressed(jsonSchema) {
  return async (scope) => {
    await scope.register(compress, { threshold: 0 });
    scope.get('/json', { schema: jsonSchema }, (req, reply) => { reply.send({ message: 'Hello, World!' }); });
    if (process.env.STATIC_DIR) {
      await scope.register(fastifyStatic, { root: process.env.STATIC_DIR, prefix: '/static/' });
    }
  };
}

function register(app, jsonSchema) {
  app.register(baseline);
  app.register(upload);
  app.register(compressed(jsonSchema));
}

module.exports = { register };
