'use strict';
// node/grpc-js: the serverbench.Bench service (spec/serverbench.proto) on @grpc/grpc-js, the
// proto loaded at start by @grpc/proto-loader; h2c on PORT and, when TLS_PORT is set, TLS with
// ALPN h2 there. WORKERS processes through node:cluster, which shares the listening sockets.

const cluster = require('node:cluster');
const fs = require('node:fs');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO = path.join(__dirname, '..', '..', '..', 'spec', 'serverbench.proto');
const workers = Math.max(1, parseInt(process.env.WORKERS || '1', 10) || 1);

function chunk(i, size) {
  return { seq: i, data: Buffer.alloc(size, i & 0xff) };
}

// The slow call: a chunk every delay ms; grpc-js ends the call with DEADLINE_EXCEEDED when
// the client's grpc-timeout passes, and emits 'cancelled'.
function slowStream(call, n, size, delay) {
  let i = 0;
  let timer;
  const next = () => {
    if (call.cancelled) return;
    if (i >= n) {
      call.end();
      return;
    }
    call.write(chunk(i, size));
    i += 1;
    timer = setTimeout(next, delay);
  };
  call.on('cancelled', () => clearTimeout(timer));
  timer = setTimeout(next, delay);
}

const bench = {
  Sum(call, callback) {
    const { a, b } = call.request;
    callback(null, { result: (a + b) | 0 });
  },
  Echo(call, callback) {
    callback(null, call.request);
  },
  ServerStream(call) {
    const { n, size, delay_ms: delay } = call.request;
    if (delay > 0) {
      slowStream(call, n, size, delay);
      return;
    }
    for (let i = 0; i < n; i += 1) call.write(chunk(i, size));
    call.end();
  },
  // Counts the chunks as they come; answers once, on 'end' (the client ended its side).
  ClientStream(call, callback) {
    let n = 0;
    let size = 0;
    call.on('data', (c) => {
      n += 1;
      size += c.data ? c.data.length : 0;
    });
    call.on('end', () => callback(null, { n, size }));
  },
  BidiEcho(call) {
    call.on('data', (c) => call.write(c));
    call.on('end', () => call.end());
  },
};

function bind(server, port, credentials) {
  const host = process.env.HOST || '127.0.0.1';
  const address = host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
  return new Promise((resolve, reject) => {
    server.bindAsync(address, credentials, (err) => (err ? reject(err) : resolve()));
  });
}

async function start() {
  const definition = protoLoader.loadSync(PROTO, { keepCase: true, defaults: true });
  const { serverbench } = grpc.loadPackageDefinition(definition);
  const server = new grpc.Server();
  server.addService(serverbench.Bench.service, bench);
  await bind(server, process.env.PORT || '8080', grpc.ServerCredentials.createInsecure());
  if (process.env.TLS_PORT) {
    const key = fs.readFileSync(process.env.TLS_KEY);
    const cert = fs.readFileSync(process.env.TLS_CERT);
    const tls = grpc.ServerCredentials.createSsl(null, [{ private_key: key, cert_chain: cert }], false);
    await bind(server, process.env.TLS_PORT, tls);
  }
  process.on('SIGTERM', () => {
    server.forceShutdown();
    process.exit(0);
  });
}

if (cluster.isPrimary && workers > 1) {
  for (let i = 0; i < workers; i += 1) cluster.fork();
  process.on('SIGTERM', () => {
    for (const w of Object.values(cluster.workers)) w.kill('SIGTERM');
    process.exit(0);
  });
} else {
  start().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
