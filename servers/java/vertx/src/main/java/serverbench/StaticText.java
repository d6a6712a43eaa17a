package serverbench;

import io.vertx.core.Handler;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The static text files (HTML, CSS, JS, JSON, SVG, XML, plain text) gzip- or deflate-encoded when
 * the client asks, in front of vertx-web's StaticHandler, which answers everything else (every
 * file unencoded, PNG and WOFF2 always, the 304s of unencoded answers, 404s, the paths that
 * leave the folder). The server's compression is off (see {@link Compression}), so StaticHandler
 * alone would send text unencoded.
 *
 * <p>A file is read and encoded once per coding, on a worker thread (a 1 MiB file at level 6
 * takes milliseconds: not on the event loop), and kept: the tree never changes while the server
 * runs (the harness writes it once per version), as StaticHandler's {@code setFilesReadOnly}
 * assumes too. Answers carry the file's {@code Last-Modified}, and {@code If-Modified-Since} at or
 * after it gets a 304 with no body.
 */
final class StaticText implements Handler<RoutingContext> {
    /** Compressible extensions, with the Content-Type StaticHandler sends for them. */
    private static final Map<String, String> TYPES = Map.of(
            "html", "text/html;charset=UTF-8",
            "htm", "text/html;charset=UTF-8",
            "css", "text/css;charset=UTF-8",
            "js", "text/javascript;charset=UTF-8",
            "json", "application/json",
            "svg", "image/svg+xml",
            "xml", "application/xml",
            "txt", "text/plain;charset=UTF-8");
    /** An HTTP-date (RFC 9110 IMF-fixdate), as StaticHandler writes Last-Modified. */
    private static final DateTimeFormatter HTTP_DATE =
            DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US).withZone(ZoneOffset.UTC);
    private static final String CACHE_CONTROL = "public, immutable, max-age=86400";

    /** One file in one coding, with what its answers say about it. */
    private record Encoded(Buffer body, String type, long modifiedSeconds, String lastModified) {}

    /** Shared by the verticle instances: each file is encoded once per process. */
    private static final Map<String, Encoded> CACHE = new ConcurrentHashMap<>();

    private final Path root;
    private final String prefix;

    /** Files of {@code root} under the URL path {@code prefix} (ending in a slash). */
    StaticText(String root, String prefix) {
        this.root = Path.of(root).toAbsolutePath().normalize();
        this.prefix = prefix;
    }

    @Override
    public void handle(RoutingContext ctx) {
        Compression.Coding coding = Compression.negotiate(ctx.request().getHeader(HttpHeaders.ACCEPT_ENCODING));
        Path file = coding == null ? null : file(ctx.normalizedPath());
        String type = file == null ? null : TYPES.get(extension(file));
        if (type == null) {
            ctx.next();
            return;
        }
        String key = coding.token + ':' + file;
        Encoded cached = CACHE.get(key);
        if (cached != null) {
            send(ctx, coding, cached);
            return;
        }
        ctx.vertx().executeBlocking(() -> encode(file, coding, type), false).onComplete(done -> {
            if (done.succeeded()) {
                CACHE.putIfAbsent(key, done.result());
                send(ctx, coding, done.result());
            } else {
                ctx.next(); // not a regular file: StaticHandler answers (404, index page)
            }
        });
    }

    /** The file a request path names, or null when it is not one inside the root. */
    private Path file(String path) {
        if (path == null || !path.startsWith(prefix)) {
            return null;
        }
        try {
            // percent-decoded as a path ('+' is a plus), then resolved; '..' cannot leave the root
            String rel = URLDecoder.decode(path.substring(prefix.length()).replace("+", "%2B"),
                    StandardCharsets.UTF_8);
            Path file = root.resolve(rel).normalize();
            if (!file.startsWith(root) || file.equals(root) || hidden(root.relativize(file))) {
                return null;
            }
            return file;
        } catch (IllegalArgumentException e) { // a bad escape, a NUL (InvalidPathException)
            return null;
        }
    }

    /** A dot file or folder: StaticHandler does not serve them either. */
    private static boolean hidden(Path rel) {
        for (Path part : rel) {
            if (part.toString().startsWith(".")) {
                return true;
            }
        }
        return false;
    }

    private static String extension(Path file) {
        String name = file.getFileName().toString();
        int dot = name.lastIndexOf('.');
        return dot < 0 ? "" : name.substring(dot + 1).toLowerCase(Locale.ROOT);
    }

    /** Runs on a worker: reads and encodes one regular file. */
    private static Encoded encode(Path file, Compression.Coding coding, String type) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new IOException(file + ": not a regular file");
        }
        long modified = Files.getLastModifiedTime(file).toMillis() / 1000;
        Buffer body = Compression.encode(coding, Files.readAllBytes(file));
        return new Encoded(body, type, modified, HTTP_DATE.format(Instant.ofEpochSecond(modified)));
    }

    private static void send(RoutingContext ctx, Compression.Coding coding, Encoded e) {
        MultiMap headers = ctx.response().headers()
                .set(HttpHeaders.VARY, HttpHeaders.ACCEPT_ENCODING)
                .set(HttpHeaders.LAST_MODIFIED, e.lastModified())
                .set(HttpHeaders.CACHE_CONTROL, CACHE_CONTROL);
        if (notModified(ctx, e)) {
            ctx.response().setStatusCode(304).end();
            return;
        }
        headers.set(HttpHeaders.CONTENT_TYPE, e.type()).set(HttpHeaders.CONTENT_ENCODING, coding.token);
        ctx.response().end(e.body());
    }

    /** If-Modified-Since at or after the file's time (ignored when If-None-Match is sent). */
    private static boolean notModified(RoutingContext ctx, Encoded e) {
        String since = ctx.request().getHeader(HttpHeaders.IF_MODIFIED_SINCE);
        if (since == null || ctx.request().getHeader(HttpHeaders.IF_NONE_MATCH) != null) {
            return false;
        }
        try {
            return ZonedDateTime.parse(since, DateTimeFormatter.RFC_1123_DATE_TIME).toEpochSecond()
                    >= e.modifiedSeconds();
        } catch (DateTimeParseException ex) {
            return false;
        }
    }
}
