package serverbench;

import com.sun.net.httpserver.HttpExchange;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPOutputStream;

/**
 * The HTTP shapes of issue 32 (spec/contract.md) on the JDK's HttpServer: the request body as
 * an InputStream (the upload read 64 KiB at a time and counted, never held; the JDK server
 * answers {@code Expect: 100-continue} itself), /json compressed with java.util.zip (gzip,
 * deflate; br and zstd are answered identity, which the contract allows).
 */
final class Shapes {
    private Shapes() {}

    /** Answers the shapes (and closes the exchange); false when the request is not one. */
    static boolean handle(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getPath();
        String method = ex.getRequestMethod();
        String accept = ex.getRequestHeaders().getFirst("Accept-Encoding");
        if (path.equals("/baseline")) {
            try (ex) {
                String q = ex.getRequestURI().getRawQuery();
                long sum = param(q, "a") + param(q, "b");
                String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
                if (method.equals("POST")) {
                    sum += parse(body.trim());
                }
                plain(ex, sum);
            }
            return true;
        }
        if (path.equals("/upload") && method.equals("POST")) {
            try (ex) {
                plain(ex, count(ex.getRequestBody()));
            }
            return true;
        }
        if (path.equals("/json") && accept != null) {
            try (ex) {
                ex.getRequestBody().readAllBytes();
                json(ex, accept);
            }
            return true;
        }
        return false;
    }

    private static long count(InputStream in) throws IOException {
        byte[] buf = new byte[64 * 1024];
        long n = 0;
        for (int got; (got = in.read(buf)) > 0; ) {
            n += got;
        }
        return n;
    }

    private static void json(HttpExchange ex, String accept) throws IOException {
        byte[] body = new Main.Message("Hello, World!").toJson().getBytes(StandardCharsets.UTF_8);
        String coding = null;
        for (String token : accept.split(",")) {
            String t = token.split(";")[0].trim().toLowerCase();
            if (t.equals("gzip") || t.equals("deflate")) {
                coding = t;
                break;
            }
        }
        ex.getResponseHeaders().set("Vary", "Accept-Encoding");
        if (coding != null) {
            ByteArrayOutputStream packed = new ByteArrayOutputStream();
            try (OutputStream z = coding.equals("gzip")
                    ? new GZIPOutputStream(packed) : new DeflaterOutputStream(packed)) {
                z.write(body);
            }
            body = packed.toByteArray();
            ex.getResponseHeaders().set("Content-Encoding", coding);
        }
        send(ex, "application/json", body);
    }

    private static long param(String query, String name) {
        if (query == null) {
            return 0;
        }
        for (String kv : query.split("&")) {
            int eq = kv.indexOf('=');
            if (eq > 0 && kv.substring(0, eq).equals(name)) {
                return parse(kv.substring(eq + 1));
            }
        }
        return 0;
    }

    private static long parse(String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static void plain(HttpExchange ex, long n) throws IOException {
        send(ex, "text/plain", Long.toString(n).getBytes(StandardCharsets.US_ASCII));
    }

    private static void send(HttpExchange ex, String type, byte[] body) throws IOException {
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(200, body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
    }
}
