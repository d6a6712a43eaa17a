package serverbench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.AsciiString;
import io.netty.util.CharsetUtil;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPOutputStream;

/**
 * The HTTP shapes of issue 32 (spec/contract.md) on Netty's codec: a request body arrives as
 * {@code HttpContent} messages after its {@code HttpRequest}; a {@link Sink} takes them (the
 * upload counted and released as it arrives, never held; baseline keeps its few bytes) and
 * writes the answer at {@code LastHttpContent}, so answers stay in request order. {@code
 * HttpServerExpectContinueHandler} answers {@code Expect: 100-continue}. /json is compressed
 * with java.util.zip (gzip, deflate; br and zstd are answered identity, which the contract
 * allows).
 */
final class Shapes {
    private static final AsciiString TEXT = AsciiString.cached("text/plain");
    private static final AsciiString VARY_ENCODING = AsciiString.cached("Accept-Encoding");

    private Shapes() {}

    /** What takes a request's body and answers at its end. */
    interface Sink {
        /** Takes one part (and releases it); true when the answer was written. */
        boolean feed(ChannelHandlerContext ctx, HttpContent part);
    }

    /** The sink for a request whose answer needs its body, or null. */
    static Sink sinkFor(HttpRequest req, String path) {
        boolean post = req.method().name().equals("POST");
        if (path.equals("/upload") && post) {
            long[] n = {0};
            return (ctx, part) -> {
                n[0] += part.content().readableBytes();
                return finish(ctx, req, part, n[0]);
            };
        }
        if (path.equals("/baseline")) {
            long sum = param(req, "a") + param(req, "b");
            StringBuilder body = new StringBuilder();
            return (ctx, part) -> {
                if (post && body.length() < 64) {
                    body.append(part.content().toString(CharsetUtil.US_ASCII));
                }
                return finish(ctx, req, part, sum + parse(body.toString().trim()));
            };
        }
        return null;
    }

    private static boolean finish(ChannelHandlerContext ctx, HttpRequest req, HttpContent part, long n) {
        boolean last = part instanceof LastHttpContent;
        part.release();
        if (last) {
            ByteBuf body = Unpooled.copiedBuffer(Long.toString(n), CharsetUtil.US_ASCII);
            ctx.write(HttpHandler.response(req, HttpResponseStatus.OK, TEXT, body));
        }
        return last;
    }

    /** /json in the first coding of Accept-Encoding made here, or null when none was asked. */
    static FullHttpResponse json(HttpRequest req, byte[] body) {
        String accept = req.headers().get(HttpHeaderNames.ACCEPT_ENCODING);
        if (accept == null) {
            return null;
        }
        String coding = null;
        for (String token : accept.split(",")) {
            String t = token.split(";")[0].trim().toLowerCase();
            if (t.equals("gzip") || t.equals("deflate")) {
                coding = t;
                break;
            }
        }
        ByteBuf out = Unpooled.wrappedBuffer(coding == null ? body : compress(coding, body));
        FullHttpResponse res = HttpHandler.response(
                req, HttpResponseStatus.OK, HttpHeaderValues.APPLICATION_JSON, out);
        res.headers().set(HttpHeaderNames.VARY, VARY_ENCODING);
        if (coding != null) {
            res.headers().set(HttpHeaderNames.CONTENT_ENCODING, coding);
        }
        return res;
    }

    private static byte[] compress(String coding, byte[] body) {
        ByteArrayOutputStream packed = new ByteArrayOutputStream();
        try (OutputStream z = coding.equals("gzip")
                ? new GZIPOutputStream(packed) : new DeflaterOutputStream(packed)) {
            z.write(body);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return packed.toByteArray();
    }

    private static long param(HttpRequest req, String name) {
        List<String> v = new QueryStringDecoder(req.uri()).parameters().get(name);
        return v == null || v.isEmpty() ? 0 : parse(v.get(0));
    }

    private static long parse(String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
