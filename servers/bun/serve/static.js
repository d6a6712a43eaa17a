// The `static` shape of issue 32 (spec/contract.md): STATIC_DIR served under /static/ with
// Bun.file() responses (Bun sends the file with its Content-Length and a Content-Type from the
// extension), a weak ETag from size and mtime with 304 on If-None-Match, Last-Modified, and br or
// gzip for text files when the client asks (Bun.gzipSync, node:zlib's brotli), compressed once per
// file version and kept, as nginx's gzip_static would serve a precompressed copy.
import { brotliCompressSync, constants } from 'node:zlib';
import { normalize, sep } from 'node:path';

const ROOT = process.env.STATIC_DIR ? normalize(process.env.STATIC_DIR).replace(/\/+$/, '') : null;
const NOT_FOUND = () => new Response('Not Found', { status: 404, headers: { 'Content-Type': 'text/plain' } });
const CODINGS = {
  // Quality 4, as the node servers compress: node:zlib's default 11 takes 3-20 s on the tree's
  // 1 MiB js/vendor.js on a busy 2-core machine, longer than a client waits for a first byte.
  br: (b) => brotliCompressSync(b, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } }),
  gzip: (b) => Bun.gzipSync(b),
};
// Media types worth compressing (images and fonts are compressed already).
const TEXT = /^(text\/|application\/(json|javascript)|image\/svg\+xml)/;
// path + etag + coding -> compressed bytes.
const compressed = new Map();

// The file under ROOT a request path names, or null when it leaves ROOT (`..`, raw or encoded).
function resolve(pathname) {
  let rel;
  try {
    rel = decodeURIComponent(pathname.slice('/static/'.length));
  } catch {
    return null;
  }
  const path = normalize(`${ROOT}${sep}${rel}`);
  return path.startsWith(ROOT + sep) ? path : null;
}

function coding(req) {
  const accept = req.headers.get('accept-encoding') || '';
  return accept.split(',').map((t) => t.split(';')[0].trim().toLowerCase()).find((t) => CODINGS[t]);
}

async function serve(req) {
  const path = resolve(new URL(req.url).pathname);
  if (path === null) return new Response('Forbidden', { status: 403, headers: { 'Content-Type': 'text/plain' } });
  const file = Bun.file(path);
  let stat;
  try {
    stat = await file.stat();
  } catch {
    return NOT_FOUND();
  }
  if (!stat.isFile()) return NOT_FOUND();
  const etag = `W/"${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}"`;
  const headers = {
    'Content-Type': file.type,
    ETag: etag,
    'Last-Modified': stat.mtime.toUTCString(),
    'Cache-Control': 'public, max-age=0',
  };
  const text = TEXT.test(file.type);
  if (text) headers.Vary = 'Accept-Encoding';
  const since = req.headers.get('if-modified-since');
  const match = req.headers.get('if-none-match');
  if (match ? match === etag : since && Date.parse(since) >= Math.floor(stat.mtimeMs / 1000) * 1000) {
    return new Response(null, { status: 304, headers });
  }
  const enc = text && coding(req);
  if (!enc) return new Response(file, { headers });
  const key = `${path}\0${etag}\0${enc}`;
  let body = compressed.get(key);
  if (!body) {
    body = CODINGS[enc](await file.bytes());
    compressed.set(key, body);
  }
  return new Response(body, { headers: { ...headers, 'Content-Encoding': enc } });
}

export const routes = ROOT ? { '/static/*': { GET: serve, HEAD: serve } } : {};
