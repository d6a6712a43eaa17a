package serverbench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.AsciiString;
import io.netty.util.CharsetUtil;
import io.netty.util.ReferenceCountUtil;

/**
 * The contract's routes over Netty's HTTP objects, whatever carried them: HttpServerCodec on
 * HTTP/1.1, Http2StreamFrameToHttpObjectCodec per HTTP/2 stream, Http3FrameToHttpObjectCodec
 * per HTTP/3 request stream. Every answer is written and flushed at once, as Netty's HTTP/3
 * examples do (a stream carries one answer), so HTTP/1.1 pipelining is answered in order, a
 * write per answer. One instance per channel (connection or stream).
 */
final class Handler extends ChannelInboundHandlerAdapter {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final AsciiString TEXT = AsciiString.cached("text/plain");
    private static final AsciiString HTML = AsciiString.cached("text/html");
    private static final AsciiString OCTETS = AsciiString.cached("application/octet-stream");
    private static final ByteBuf HELLO = constant("Hello World!");
    private static final ByteBuf HEY = constant("Hey!");
    private static final ByteBuf HELL = constant("Hell!");
    private static final ByteBuf ABOUT = constant("<html><body>About page</body></html>");
    private static final ByteBuf NOT_FOUND = constant("Not Found");
    private static final ByteBuf PAYLOAD;

    static {
        byte[] body = new byte[1 << 20];
        for (int i = 0; i < body.length; i++) {
            body[i] = (byte) ('a' + i % 26);
        }
        PAYLOAD = Unpooled.unreleasableBuffer(Unpooled.directBuffer(body.length).writeBytes(body))
                .asReadOnly();
    }

    /** The JSON message; serialized by Jackson on every request. */
    record Message(String message) {}

    /** The Alt-Svc value every answer carries (TLS_PORT), or null. */
    private final String altSvc;

    Handler(String altSvc) {
        this.altSvc = altSvc;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest req) {
            ctx.writeAndFlush(answer(req));
        }
        ReferenceCountUtil.release(msg); // request bodies are not read by any route
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }

    private FullHttpResponse answer(HttpRequest req) {
        HttpResponseStatus ok = HttpResponseStatus.OK;
        return switch (new QueryStringDecoder(req.uri()).path()) {
            case "/hello" -> response(req, ok, TEXT, HELLO.duplicate());
            case "/hey" -> response(req, ok, TEXT, HEY.duplicate());
            case "/hell" -> response(req, ok, TEXT, HELL.duplicate());
            case "/about" -> response(req, ok, HTML, ABOUT.duplicate());
            case "/json" -> response(req, ok, HttpHeaderValues.APPLICATION_JSON,
                    Unpooled.wrappedBuffer(json()));
            case "/payload" -> response(req, ok, OCTETS, PAYLOAD.duplicate());
            default -> response(req, HttpResponseStatus.NOT_FOUND, TEXT, NOT_FOUND.duplicate());
        };
    }

    /**
     * A response in the request's protocol version. Keep-alive follows the request, so that
     * HttpServerKeepAliveHandler closes HTTP/1.0 connections unless they asked to stay open (the
     * HTTP/2 and HTTP/3 codecs drop the connection-specific header).
     */
    private FullHttpResponse response(
            HttpRequest req, HttpResponseStatus status, CharSequence type, ByteBuf body) {
        FullHttpResponse res =
                new DefaultFullHttpResponse(req.protocolVersion(), status, body, false);
        res.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, type)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        if (altSvc != null) {
            res.headers().set(HttpHeaderNames.ALT_SVC, altSvc);
        }
        HttpUtil.setKeepAlive(res, HttpUtil.isKeepAlive(req));
        return res;
    }

    private static byte[] json() {
        try {
            return JSON.writeValueAsBytes(new Message("Hello, World!"));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize the JSON message", e);
        }
    }

    private static ByteBuf constant(String text) {
        return Unpooled.unreleasableBuffer(
                Unpooled.directBuffer().writeBytes(text.getBytes(CharsetUtil.UTF_8))).asReadOnly();
    }
}
