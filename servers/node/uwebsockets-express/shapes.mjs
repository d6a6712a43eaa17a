// The HTTP shapes of issue 32 (spec/contract.md) on uwebsockets-express: baseline and /json
// compressed through the express API (as node/express's shapes.js), the upload on the uWS app
// itself, because uwebsockets-express reads every request body whole before express runs.
import compression from 'compression';

// threshold 0: the contract's /json is 27 bytes, below the middleware's 1 KiB default.
const compress = compression({ threshold: 0 });

const int = (v) => {
  const n = Number.parseInt(v, 10);
  return Number.isNaN(n) ? 0 : n;
};

// POST /upload straight on the uWS app, before expressify adds its catch-all: res.onData hands
// each chunk as it arrives; only its length is kept. uWS answers Expect: 100-continue itself.
export function mountUpload(uwsApp) {
  uwsApp.post('/upload', (res) => {
    let n = 0;
    let aborted = false;
    res.onAborted(() => { aborted = true; });
    res.onData((chunk, isLast) => {
      n += chunk.byteLength;
      if (isLast && !aborted) {
        res.cork(() => res.writeHeader('Content-Type', 'text/plain').end(String(n)));
      }
    });
  });
}

// baseline and the compressing /json on the express app: call before the app's own routes, so
// this /json is the one that answers.
export function mount(app) {
  const sum = (req) => int(req.query.a) + int(req.query.b);
  app.get('/baseline', (req, res) => res.type('text/plain').send(String(sum(req))));
  // uwebsockets-express has read the body already: req.body is its text (no body parser).
  app.post('/baseline', (req, res) =>
    res.type('text/plain').send(String(sum(req) + int(req.body))));
  app.get('/json', compress, (req, res) => res.json({ message: 'Hello, World!' }));
}
