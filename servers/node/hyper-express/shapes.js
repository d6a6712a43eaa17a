'use strict';
// The HTTP shapes of issue 32 (spec/contract.md) on hyper-express: baseline reads the small body
// with req.text(); the upload pipes the Request (a Readable) into a Writable that counts chunk by
// chunk (hyper-express pauses uWS when the stream's buffer is full, so memory stays bounded;
// uWS answers Expect: 100-continue itself); /json with Accept-Encoding compressed with node:zlib
// (br, gzip, deflate: Node 20 has no zstd) in the first coding the client lists that it makes.
const { Writable } = require('node:stream');
const zlib = require('node:zlib');

const JSON_BODY = () => Buffer.from(JSON.stringify({ message: 'Hello, World!' }));
const CODINGS = {
  br: (b) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } }),
  gzip: (b) => zlib.gzipSync(b, { level: 6 }),
  deflate: (b) => zlib.deflateSync(b, { level: 6 }),
};

// No 413 for an upload below 1 GiB (hyper-express's default limit is 250 KiB).
const UPLOAD_LIMIT = 1024 * 1024 * 1024;

const int = (v) => {
  const n = Number.parseInt(v, 10);
  return Number.isNaN(n) ? 0 : n;
};

function json(req, res) {
  const accept = req.headers['accept-encoding'];
  if (!accept) return res.json({ message: 'Hello, World!' });
  const coding = accept.split(',').map((t) => t.split(';')[0].trim().toLowerCase()).find((t) => CODINGS[t]);
  res.header('Vary', 'Accept-Encoding').type('application/json');
  if (!coding) return res.send(JSON_BODY());
  return res.header('Content-Encoding', coding).send(CODINGS[coding](JSON_BODY()));
}

// Mounts baseline, upload and the compressing /json (in place of the plain one).
function mount(server) {
  const sum = (req) => int(req.query_parameters.a) + int(req.query_parameters.b);
  server.get('/baseline', (req, res) => res.type('text/plain').send(String(sum(req))));
  server.post('/baseline', async (req, res) => {
    const body = await req.text();
    res.type('text/plain').send(String(sum(req) + int(body)));
  });
  server.post('/upload', { max_body_length: UPLOAD_LIMIT }, (req, res) => {
    // hyper-express opens no body stream for a request without one: it would never end.
    if (!(Number(req.headers['content-length']) > 0 || req.headers['transfer-encoding'] === 'chunked')) {
      return res.type('text/plain').send('0');
    }
    let n = 0;
    const counter = new Writable({
      write(chunk, _encoding, done) {
        n += chunk.length;
        done();
      },
    });
    counter.on('finish', () => res.type('text/plain').send(String(n)));
    // pipe, not on('data'): hyper-express's Request forwards on() as EventEmitter's, which does
    // not start the stream flowing; pipe resumes it, and the Writable's pace pauses uWS.
    req.pipe(counter);
  });
  server.get('/json', json);
}

module.exports = { mount };
