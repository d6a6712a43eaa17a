// node/connect-node: the serverbench.Bench service (spec/serverbench.proto) on Connect for
// Node.js (@connectrpc/connect-node), speaking the gRPC protocol alone on node:http2: h2c on
// PORT and, when TLS_PORT is set, TLS with ALPN h2 there. The messages and the service
// descriptor are generated at setup by protoc-gen-es into dist/. WORKERS processes through
// node:cluster, which shares the listening sockets.

import cluster from 'node:cluster';
import fs from 'node:fs';
import http2 from 'node:http2';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { Bench } from './dist/serverbench_pb.js';

const workers = Math.max(1, parseInt(process.env.WORKERS || '1', 10) || 1);

// The contract's receive limit (every gRPC library's default): a larger request message ends
// the call with RESOURCE_EXHAUSTED.
const MAX_MESSAGE = 4 * 1024 * 1024;

function chunk(i, size) {
  return { seq: i, data: new Uint8Array(Math.max(size, 0)).fill(i & 0xff) };
}

// The slow call waits on a timer tied to the call's signal, which Connect aborts when the
// call's deadline (grpc-timeout) passes, with a ConnectError DEADLINE_EXCEEDED as its reason:
// that error, rather than the timer's AbortError, ends the call.
async function slow(ms, signal) {
  try {
    await sleep(ms, undefined, { signal });
  } catch (err) {
    signal.throwIfAborted();
    throw err;
  }
}

function routes(router) {
  router.service(Bench, {
    sum(req) {
      return { result: (req.a + req.b) | 0 };
    },
    echo(req) {
      return req;
    },
    async *serverStream(req, ctx) {
      for (let i = 0; i < req.n; i += 1) {
        if (req.delayMs > 0) await slow(req.delayMs, ctx.signal);
        yield chunk(i, req.size);
      }
    },
    async *bidiEcho(reqs) {
      for await (const c of reqs) yield c;
    },
    async clientStream(reqs) {
      let n = 0;
      let size = 0;
      for await (const c of reqs) {
        n += 1;
        size += c.data.length;
      }
      return { n, size };
    },
  });
}

// Connect's adapter answers a path it has no route for with a plain HTTP 404; a gRPC client
// expects a gRPC answer, so the unknown method ends as gRPC says: trailers-only, status 12.
function unimplemented(req, res) {
  res.writeHead(200, {
    'content-type': 'application/grpc',
    'grpc-status': '12',
    'grpc-message': 'method not found',
  });
  res.end();
}

const handler = connectNodeAdapter({
  routes,
  grpc: true,
  grpcWeb: false,
  connect: false,
  readMaxBytes: MAX_MESSAGE,
  fallback: unimplemented,
});

function listen(server, port) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(port), process.env.HOST || '127.0.0.1', resolve);
  });
}

async function start() {
  // No allowHTTP1: an HTTP/1.1 request on PORT is not an HTTP/2 preface, and node:http2
  // closes the connection.
  await listen(http2.createServer(handler), process.env.PORT || '8080');
  if (process.env.TLS_PORT) {
    const tls = {
      key: fs.readFileSync(process.env.TLS_KEY),
      cert: fs.readFileSync(process.env.TLS_CERT),
      ALPNProtocols: ['h2'],
    };
    await listen(http2.createSecureServer(tls, handler), process.env.TLS_PORT);
  }
}

if (cluster.isPrimary && workers > 1) {
  for (let i = 0; i < workers; i += 1) cluster.fork();
  process.on('SIGTERM', () => {
    for (const w of Object.values(cluster.workers)) w.kill('SIGTERM');
    process.exit(0);
  });
} else {
  start().catch((err) => {
    console.error(`node/connect-node: cannot listen: ${err.message}`);
    process.exit(1);
  });
}
