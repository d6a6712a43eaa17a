## serverbench nim/asynchttpserver: the standard library's asynchttpserver.
## WORKERS threads each run their own async dispatcher and their own listening sockets bound
## with SO_REUSEPORT (the kernel spreads connections), the same shape httpbeast uses.
import std/[asyncdispatch, asynchttpserver, asyncnet, json, net, os, strutils, times]
import db

const PayloadSize = 1_048_576

proc env(name, default: string): string =
  result = getEnv(name)
  if result.len == 0: result = default

proc buildPayload(): string =
  result = newString(PayloadSize)
  for i in 0 ..< PayloadSize:
    result[i] = char(ord('a') + i mod 26)

type Config = object
  host: string
  port, echoPort: int

proc domain(cfg: Config): Domain =
  if ':' in cfg.host: AF_INET6 else: AF_INET

proc serveHttp(cfg: Config) {.async.} =
  let payload = buildPayload() # one copy per thread, built before serving
  let plain = newHttpHeaders({"Content-Type": "text/plain"})
  let html = newHttpHeaders({"Content-Type": "text/html"})
  let jsonType = newHttpHeaders({"Content-Type": "application/json"})
  let octets = newHttpHeaders({"Content-Type": "application/octet-stream"})
  let dbOn = enabled()
  if dbOn: initThread(getTime().toUnix * 1000 + getThreadId())

  proc handler(req: Request) {.async, gcsafe.} =
    # HTTP/1.0 with `Connection: keep-alive` (ab -k): asynchttpserver keeps the connection open
    # but does not say so, and a 1.0 client closes unless the response says it.
    let keep10 = req.protocol.minor == 0 and
      cmpIgnoreCase(req.headers.getOrDefault("connection"), "keep-alive") == 0
    proc typed(base: HttpHeaders): HttpHeaders =
      if keep10:
        newHttpHeaders({"Content-Type": $base["Content-Type"], "Connection": "keep-alive"})
      else:
        base
    case req.url.path
    of "/hello": await req.respond(Http200, "Hello World!", typed(plain))
    of "/hey": await req.respond(Http200, "Hey!", typed(plain))
    of "/hell": await req.respond(Http200, "Hell!", typed(plain))
    of "/about": await req.respond(Http200, "<html><body>About page</body></html>", typed(html))
    of "/json": await req.respond(Http200, $(%*{"message": "Hello, World!"}), typed(jsonType))
    of "/payload": await req.respond(Http200, payload, typed(octets))
    of "/db", "/queries", "/fortunes", "/updates":
      if dbOn:
        let a = answer(req.url.path, req.url.query)
        await req.respond(HttpCode(a.status), a.body,
                          typed(newHttpHeaders({"Content-Type": a.contentType})))
      else:
        await req.respond(Http404, "Not Found", typed(plain))
    else: await req.respond(Http404, "Not Found", typed(plain))

  let server = newAsyncHttpServer(reuseAddr = true, reusePort = true, maxBody = 1 shl 20)
  await server.serve(Port(cfg.port), handler, cfg.host, assumedDescriptorsPerRequest = 5,
                    domain = cfg.domain)

proc echoClient(client: AsyncSocket) {.async.} =
  try:
    while true:
      let data = await client.recv(65536)
      if data.len == 0: break
      await client.send(data)
  except CatchableError:
    discard
  client.close()

proc serveEcho(cfg: Config) {.async.} =
  let server = newAsyncSocket(cfg.domain, buffered = false)
  server.setSockOpt(OptReuseAddr, true)
  server.setSockOpt(OptReusePort, true)
  server.bindAddr(Port(cfg.echoPort), cfg.host)
  server.listen(1024)
  while true:
    let client = await server.accept()
    client.setSockOpt(OptNoDelay, true, level = IPPROTO_TCP.cint)
    asyncCheck echoClient(client)

proc worker(cfg: Config) {.thread.} =
  asyncCheck serveEcho(cfg)
  waitFor serveHttp(cfg)

proc main() =
  let cfg = Config(host: env("HOST", "127.0.0.1"), port: env("PORT", "8080").parseInt,
                   echoPort: env("ECHO_PORT", "9000").parseInt)
  let workers = max(1, env("WORKERS", "1").parseInt)
  echo "nim/asynchttpserver: http on ", cfg.host, ":", cfg.port, ", echo on ", cfg.host, ":",
    cfg.echoPort, ", ", workers, " threads"
  var threads = newSeq[Thread[Config]](workers)
  for t in threads.mitems:
    createThread(t, worker, cfg)
  joinThreads(threads)

main()
