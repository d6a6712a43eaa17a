package serverbench;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.FileSystemAccess;
import io.vertx.ext.web.handler.StaticHandler;
import java.util.List;

/**
 * The HTTP shapes of issue 32 (spec/contract.md) on a vertx-web {@link Router}: /baseline (GET,
 * and POST through a {@link BodyHandler} with a small body limit), /upload (the body counted
 * buffer by buffer as it streams in, never held) and /static/ (vertx-web's {@link
 * StaticHandler} on STATIC_DIR, behind {@link StaticText}, which sends the text files gzip- or
 * deflate-encoded when asked); the router also answers every path the core switch does not know
 * with the contract's 404.
 */
final class Shapes {
    /** POST /baseline's body is one integer: anything past 1 KiB is answered 413. */
    static final long BASELINE_BODY_LIMIT = 1024;

    private static final CharSequence TEXT = HttpHeaders.createOptimized("text/plain");
    private static final Buffer NOT_FOUND = Buffer.buffer("Not Found");

    private Shapes() {}

    /** The shapes' router; /static/ only when STATIC_DIR is set (null or empty: no route). */
    static Router router(Vertx vertx, String staticDir) {
        Router router = Router.router(vertx);
        router.get("/baseline").handler(ctx -> plain(ctx, query(ctx)));
        router.post("/baseline")
                .handler(BodyHandler.create(false).setBodyLimit(BASELINE_BODY_LIMIT))
                .handler(ctx -> plain(ctx, query(ctx) + parse(ctx.body().asString())));
        router.post("/upload").handler(Shapes::upload);
        if (staticDir != null && !staticDir.isEmpty()) {
            // Text files asked gzip or deflate: encoded once and kept (StaticText). Everything
            // else: StaticHandler, Last-Modified on every file, 304 on If-Modified-Since, file
            // properties cached (the tree never changes while the server runs), Vary.
            router.get("/static/*")
                    .handler(new StaticText(staticDir, "/static/"))
                    .handler(StaticHandler.create(FileSystemAccess.ROOT, staticDir)
                            .setFilesReadOnly(true)
                            .setSendVaryHeader(true)
                            .setDefaultContentEncoding("UTF-8"));
        }
        // A missing file, an unknown path or a path that leaves the folder: the contract's 404.
        router.errorHandler(404, ctx -> ctx.response().setStatusCode(404)
                .putHeader(HttpHeaders.CONTENT_TYPE, TEXT).end(NOT_FOUND));
        return router;
    }

    /**
     * Counts the body's buffers as they arrive (Netty's, recycled: the body is never held).
     * {@code Expect: 100-continue} is answered by the server (handle100ContinueAutomatically).
     */
    private static void upload(RoutingContext ctx) {
        HttpServerRequest req = ctx.request();
        long[] n = {0};
        req.handler(buf -> n[0] += buf.length());
        req.endHandler(done -> plain(ctx, n[0]));
        req.exceptionHandler(ctx::fail);
        req.resume();
    }

    private static long query(RoutingContext ctx) {
        return param(ctx, "a") + param(ctx, "b");
    }

    private static long param(RoutingContext ctx, String name) {
        List<String> values = ctx.queryParam(name);
        return values.isEmpty() ? 0 : parse(values.get(0));
    }

    /** A missing or non-numeric value counts as 0; whitespace around it is ignored. */
    private static long parse(String s) {
        if (s == null) {
            return 0;
        }
        try {
            return Long.parseLong(s.trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static void plain(RoutingContext ctx, long n) {
        ctx.response().putHeader(HttpHeaders.CONTENT_TYPE, TEXT).end(Long.toString(n));
    }
}
