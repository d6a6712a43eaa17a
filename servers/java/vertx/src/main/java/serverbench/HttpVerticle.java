package serverbench;

import io.vertx.core.AbstractVerticle;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.ext.web.Router;

/**
 * The contract's routes on Vert.x core's HTTP server (one instance per event loop): HTTP/1.1
 * and h2c on PORT, and when TLS_PORT is set, the same handler over TLS with ALPN (h2 or
 * http/1.1) on a second server. /ws is a WebSocket echo (WebSocketEcho). Every other path
 * goes to the shapes' vertx-web Router (Shapes), which also answers the 404s.
 */
final class HttpVerticle extends AbstractVerticle {
    private static final CharSequence CONTENT_TYPE = HttpHeaders.CONTENT_TYPE;
    private static final CharSequence TEXT = HttpHeaders.createOptimized("text/plain");
    private static final CharSequence HTML = HttpHeaders.createOptimized("text/html");
    private static final CharSequence JSON = HttpHeaders.createOptimized("application/json");
    private static final CharSequence OCTETS =
            HttpHeaders.createOptimized("application/octet-stream");
    private static final Buffer HELLO = Buffer.buffer("Hello World!");
    private static final Buffer HEY = Buffer.buffer("Hey!");
    private static final Buffer HELL = Buffer.buffer("Hell!");
    private static final Buffer ABOUT = Buffer.buffer("<html><body>About page</body></html>");
    private static final Buffer NOT_FOUND = Buffer.buffer("Not Found");
    private static final CharSequence ACCEPT_ENCODING = HttpHeaders.createOptimized("Accept-Encoding");

    private final String host;
    private final int port;
    private final Tls tls;
    private final Database.Config dbConfig;
    private Database db;
    private Router shapes;

    /** The HTTPS listener's settings, from TLS_PORT, TLS_CERT and TLS_KEY. */
    record Tls(int port, String certPath, String keyPath) {}

    HttpVerticle(String host, int port, Tls tls, Database.Config dbConfig) {
        this.host = host;
        this.port = port;
        this.tls = tls;
        this.dbConfig = dbConfig;
    }

    @Override
    public void start(Promise<Void> started) {
        // The database routes only when DATABASE_URL is set: without it, no pool, no connection.
        db = dbConfig == null ? null : new Database(vertx, dbConfig);
        shapes = Shapes.router(vertx, System.getenv("STATIC_DIR"));
        // HTTP/1.1 and h2c (prior knowledge, or Upgrade: h2c): Vert.x's defaults on a plain port.
        Future<?> http = vertx.createHttpServer(options())
                .requestHandler(this::handle)
                .listen(port, host);
        Future<?> https = tls == null ? Future.succeededFuture() : vertx.createHttpServer(options()
                        .setSsl(true)
                        .setUseAlpn(true)
                        .setKeyCertOptions(new PemKeyCertOptions()
                                .setCertPath(tls.certPath())
                                .setKeyPath(tls.keyPath())))
                .requestHandler(this::handle)
                .listen(tls.port(), host);
        Future.all(http, https).<Void>mapEmpty().onComplete(started);
    }

    private static HttpServerOptions options() {
        return WebSocketEcho.tune(new HttpServerOptions()
                .setTcpNoDelay(true)
                .setAcceptBacklog(1024)
                // No server-wide compression (its Netty compressor taxed every request, /hello
                // included): /json and the static text files encode themselves (Compression).
                // upload: 100 Continue before the body when the client expects it.
                .setHandle100ContinueAutomatically(true));
    }

    private void handle(HttpServerRequest req) {
        switch (req.path()) {
            case "/hello" -> send(req, 200, TEXT, HELLO);
            case "/hey" -> send(req, 200, TEXT, HEY);
            case "/hell" -> send(req, 200, TEXT, HELL);
            case "/about" -> send(req, 200, HTML, ABOUT);
            case "/json" -> json(req);
            case "/payload" -> send(req, 200, OCTETS, Payload.SHARED.body());
            case "/pingpong" -> vertx.eventBus().<Payload>request(PingPongVerticle.ADDRESS, null)
                    .onSuccess(reply -> send(req, 200, OCTETS, reply.body().body()))
                    .onFailure(err -> send(req, 500, TEXT, Buffer.buffer(err.toString())));
            case "/ws" -> WebSocketEcho.handle(req);
            case "/db", "/queries", "/fortunes", "/updates" -> {
                if (db != null) {
                    db.handle(req);
                } else {
                    send(req, 404, TEXT, NOT_FOUND);
                }
            }
            default -> shapes.handle(req);
        }
    }

    /** gzip or deflate when the client asks (compression): the answer varies on it. */
    private static void json(HttpServerRequest req) {
        Buffer body = new JsonObject().put("message", "Hello, World!").toBuffer();
        req.response().putHeader(HttpHeaders.VARY, ACCEPT_ENCODING);
        Compression.Coding coding = Compression.negotiate(req.getHeader(ACCEPT_ENCODING));
        if (coding != null) {
            req.response().putHeader(HttpHeaders.CONTENT_ENCODING, coding.token);
            body = Compression.encode(coding, body.getBytes());
        }
        send(req, 200, JSON, body);
    }

    static void send(HttpServerRequest req, int status, CharSequence type, Buffer body) {
        req.response().setStatusCode(status).putHeader(CONTENT_TYPE, type).end(body);
    }
}
