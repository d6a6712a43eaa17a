package serverbench;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.handler.FileSystemAccess;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.handler.StaticHandler;

/**
 * The HTTP shapes of issue 32 (spec/contract.md) the way Vert.x apps do them: baseline reads
 * the small body with {@code req.body()}, upload counts the body's buffers in a handler as they
 * arrive (never held; {@code writeContinue()} answers {@code Expect: 100-continue}); /json is
 * compressed with java.util.zip (gzip, deflate). The server's own compression
 * ({@code setCompressionSupported}) made the first request on a fresh server wait over 5 s under
 * load (Netty's compressor probing its codecs), so it stays off, and with it /static/.
 */
final class Shapes {
    private static final CharSequence TEXT = HttpHeaders.createOptimized("text/plain");
    private static final CharSequence JSON = HttpHeaders.createOptimized("application/json");

    private final Router files;

    Shapes(Vertx vertx) {
        String dir = System.getenv("STATIC_DIR");
        if (dir == null || dir.isEmpty()) {
            files = null;
            return;
        }
        files = Router.router(vertx);
        files.route("/static/*").handler(StaticHandler.create(FileSystemAccess.ROOT, dir)
                .setCachingEnabled(true)
                .setSendVaryHeader(true)
                .setFilesReadOnly(true));
    }

    /** /json in the first of gzip or deflate the client lists, or plain. */
    static void json(HttpServerRequest req, Buffer body) {
        String accept = req.getHeader(HttpHeaders.ACCEPT_ENCODING);
        String coding = null;
        for (String token : accept == null ? new String[0] : accept.split(",")) {
            String t = token.split(";")[0].trim().toLowerCase();
            if (t.equals("gzip") || t.equals("deflate")) {
                coding = t;
                break;
            }
        }
        if (accept != null) {
            req.response().putHeader(HttpHeaders.VARY, "Accept-Encoding");
        }
        if (coding != null) {
            java.io.ByteArrayOutputStream packed = new java.io.ByteArrayOutputStream();
            try (java.io.OutputStream z = coding.equals("gzip")
                    ? new java.util.zip.GZIPOutputStream(packed)
                    : new java.util.zip.DeflaterOutputStream(packed)) {
                z.write(body.getBytes());
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            req.response().putHeader(HttpHeaders.CONTENT_ENCODING, coding);
            body = Buffer.buffer(packed.toByteArray());
        }
        HttpVerticle.send(req, 200, JSON, body);
    }

    /** Answers the shapes; false when the request is not one of them. */
    boolean handle(HttpServerRequest req) {
        String path = req.path();
        if (path.equals("/baseline")) {
            long sum = param(req, "a") + param(req, "b");
            if (req.method() == HttpMethod.POST) {
                req.body().onSuccess(b -> plain(req, sum + parse(b.toString().trim())));
            } else {
                plain(req, sum);
            }
            return true;
        }
        if (path.equals("/upload") && req.method() == HttpMethod.POST) {
            long[] n = {0};
            req.handler(buf -> n[0] += buf.length());
            req.endHandler(v -> plain(req, n[0]));
            if ("100-continue".equalsIgnoreCase(req.getHeader(HttpHeaders.EXPECT))) {
                req.response().writeContinue();
            }
            return true;
        }
        if (files != null && path.startsWith("/static/")) {
            files.handle(req);
            return true;
        }
        return false;
    }

    private static long param(HttpServerRequest req, String name) {
        return parse(req.getParam(name));
    }

    private static long parse(String s) {
        try {
            return s == null ? 0 : Long.parseLong(s);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static void plain(HttpServerRequest req, long n) {
        HttpVerticle.send(req, 200, TEXT, Buffer.buffer(Long.toString(n)));
    }
}
