// The HTTP shapes of issue 32 (spec/contract.md) on Deno.serve: baseline's body read whole,
// /json compressed with node:zlib
// (br, gzip, deflate: Deno.serve's own compression skips bodies under 64 bytes, and /json is
// 27) in the first coding the client lists.
import zlib from 'node:zlib';

const TEXT = { 'Content-Type': 'text/plain' };
const CODINGS = {
  br: (b) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } }),
  gzip: (b) => zlib.gzipSync(b),
  deflate: (b) => zlib.deflateSync(b),
};

const int = (v) => {
  const n = Number.parseInt(v, 10);
  return Number.isNaN(n) ? 0 : n;
};

function json(req) {
  const body = new TextEncoder().encode(JSON.stringify({ message: 'Hello, World!' }));
  const accept = req.headers.get('accept-encoding') || '';
  const coding = accept.split(',').map((t) => t.split(';')[0].trim().toLowerCase()).find((t) => CODINGS[t]);
  if (!coding) return new Response(body, { headers: { 'Content-Type': 'application/json', Vary: 'Accept-Encoding' } });
  const headers = { 'Content-Type': 'application/json', Vary: 'Accept-Encoding', 'Content-Encoding': coding };
  return new Response(CODINGS[coding](body), { headers });
}

async function baseline(req) {
  const q = new URL(req.url).searchParams;
  let sum = int(q.get('a')) + int(q.get('b'));
  if (req.method === 'POST') sum += int((await req.text()).trim());
  return new Response(String(sum), { headers: TEXT });
}

// The answer to a shape, or undefined when the request is not one.
export function handle(req, path) {
  if (path === '/baseline') return baseline(req);
  if (path === '/json' && req.headers.has('accept-encoding')) return json(req);
  return undefined;
}

// No upload: under verify, Deno 2.9.5 answered a first chunked POST on a connection, then reset
// the connection on the second (its body streamed with for await over req.body).
