// The HTTP shapes of issue 32 (spec/contract.md) on Bun.serve routes: the request body as a
// web stream (the upload counted chunk by chunk, never held), /json compressed with Bun's own
// codecs (Bun.gzipSync, Bun.deflateSync, Bun.zstdCompressSync) and node:zlib's brotli, in the
// first coding the client lists; static.js serves STATIC_DIR under /static/.
import { brotliCompressSync, constants } from 'node:zlib';
import * as statics from './static.js';

const TEXT = { 'Content-Type': 'text/plain' };
const CODINGS = {
  br: (b) => brotliCompressSync(b, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } }),
  gzip: (b) => Bun.gzipSync(b),
  zstd: (b) => Bun.zstdCompressSync(b),
  deflate: (b) => Bun.deflateSync(b),
};

const int = (v) => {
  const n = Number.parseInt(v, 10);
  return Number.isNaN(n) ? 0 : n;
};

function sum(req) {
  const q = new URL(req.url).searchParams;
  return int(q.get('a')) + int(q.get('b'));
}

function json(req) {
  const body = new TextEncoder().encode(JSON.stringify({ message: 'Hello, World!' }));
  const accept = req.headers.get('accept-encoding') || '';
  const coding = accept.split(',').map((t) => t.split(';')[0].trim().toLowerCase()).find((t) => CODINGS[t]);
  if (!coding) return new Response(body, { headers: { 'Content-Type': 'application/json' } });
  return new Response(CODINGS[coding](body), {
    headers: { 'Content-Type': 'application/json', 'Content-Encoding': coding, Vary: 'Accept-Encoding' },
  });
}

export const routes = {
  '/baseline': {
    GET: (req) => new Response(String(sum(req)), { headers: TEXT }),
    POST: async (req) => new Response(String(sum(req) + int((await req.text()).trim())), { headers: TEXT }),
  },
  '/upload': {
    POST: async (req) => {
      let n = 0;
      for await (const chunk of req.body) n += chunk.length;
      return new Response(String(n), { headers: TEXT });
    },
  },
  '/json': { GET: json },
  // static: STATIC_DIR under /static/ when it is set (static.js).
  ...statics.routes,
};
