package serverbench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.AsciiString;
import io.netty.util.CharsetUtil;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;

/**
 * Routes requests on the exact path. Answers are written in request order: while a /pingpong
 * answer is with the worker (or a database answer with a JDBC thread, see {@link DbWork}),
 * later pipelined requests wait in {@code backlog} and reading pauses.
 * One instance per channel; every method runs on the channel's event loop.
 */
final class HttpHandler extends ChannelInboundHandlerAdapter {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final AsciiString TEXT = AsciiString.cached("text/plain");
    private static final AsciiString HTML = AsciiString.cached("text/html");
    private static final AsciiString OCTETS = AsciiString.cached("application/octet-stream");
    private static final ByteBuf HELLO = constant("Hello World!");
    private static final ByteBuf HEY = constant("Hey!");
    private static final ByteBuf HELL = constant("Hell!");
    private static final ByteBuf ABOUT = constant("<html><body>About page</body></html>");
    private static final ByteBuf NOT_FOUND = constant("Not Found");

    /** The JSON message; serialized by Jackson on every request. */
    record Message(String message) {}

    private final PingPongWorker pingPong;
    /** Requests held back while an answer is elsewhere, with their body parts, in order. */
    private final ArrayDeque<Object> backlog = new ArrayDeque<>();
    private boolean waiting;
    /** The body taker of the request being read (baseline, upload: Shapes.java), or null. */
    private Shapes.Sink sink;

    HttpHandler(PingPongWorker pingPong) {
        this.pingPong = pingPong;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (waiting) {
            backlog.add(msg); // reading is paused: at most what one read brought
        } else {
            dispatch(ctx, msg);
        }
    }

    /** A request is served; a body part goes to the request's sink, or is dropped. */
    private void dispatch(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest request) {
            serve(ctx, request);
        } else if (sink != null && msg instanceof HttpContent part) {
            if (sink.feed(ctx, part)) {
                sink = null;
            }
        } else {
            ReferenceCountUtil.release(msg); // other request bodies are ignored
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ctx.flush();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }

    private void serve(ChannelHandlerContext ctx, HttpRequest req) {
        String path = new QueryStringDecoder(req.uri()).path();
        // baseline, upload: answered when their body has arrived (Shapes.java).
        sink = Shapes.sinkFor(req, path);
        if (sink != null) {
            return;
        }
                HttpResponseStatus ok = HttpResponseStatus.OK;
        switch (path) {
            case "/hello" -> ctx.write(response(req, ok, TEXT, HELLO.duplicate()));
            case "/hey" -> ctx.write(response(req, ok, TEXT, HEY.duplicate()));
            case "/hell" -> ctx.write(response(req, ok, TEXT, HELL.duplicate()));
            case "/about" -> ctx.write(response(req, ok, HTML, ABOUT.duplicate()));
            case "/json" -> ctx.write(jsonResponse(req));
            case "/payload" -> ctx.write(response(req, ok, OCTETS, Payload.buffer()));
            case "/pingpong" -> askWorker(ctx, req);
            case "/db", "/queries", "/fortunes", "/updates" -> askDatabase(ctx, req, path);
            default -> ctx.write(response(req, HttpResponseStatus.NOT_FOUND, TEXT,
                    NOT_FOUND.duplicate()));
        }
    }

    private void askWorker(ChannelHandlerContext ctx, HttpRequest req) {
        pause(ctx);
        pingPong.send(ctx.executor(), body -> {
            ctx.writeAndFlush(response(req, HttpResponseStatus.OK, OCTETS, body));
            resume(ctx);
        });
    }

    /** The database routes, answered by a JDBC thread; 404 without DATABASE_URL. */
    private void askDatabase(ChannelHandlerContext ctx, HttpRequest req, String path) {
        DbWork db = DbWork.instance;
        if (db == null) {
            ctx.write(response(req, HttpResponseStatus.NOT_FOUND, TEXT, NOT_FOUND.duplicate()));
            return;
        }
        pause(ctx);
        String rawQuery = new QueryStringDecoder(req.uri()).rawQuery();
        db.submit(path, rawQuery, ctx.executor(), answer -> {
            ctx.writeAndFlush(response(req, HttpResponseStatus.valueOf(answer.status()),
                    answer.type(), Unpooled.wrappedBuffer(answer.body())));
            resume(ctx);
        });
    }

    /** Holds later requests back while this one's answer is elsewhere. */
    private void pause(ChannelHandlerContext ctx) {
        waiting = true;
        ctx.channel().config().setAutoRead(false);
    }

    /** Serves the requests held back, in order, until one is away again or none is left. */
    private void resume(ChannelHandlerContext ctx) {
        waiting = false;
        while (!waiting && !backlog.isEmpty()) {
            dispatch(ctx, backlog.poll());
        }
        if (!waiting) {
            ctx.flush();
            ctx.channel().config().setAutoRead(true);
        }
    }

    /**
     * A response in the request's protocol version. Keep-alive follows the request, so that
     * HttpServerKeepAliveHandler closes HTTP/1.0 connections unless they asked to stay open.
     */
    static FullHttpResponse response(
            HttpRequest req, HttpResponseStatus status, CharSequence type, ByteBuf body) {
        FullHttpResponse res =
                new DefaultFullHttpResponse(req.protocolVersion(), status, body, false);
        res.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, type)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        HttpUtil.setKeepAlive(res, HttpUtil.isKeepAlive(req));
        return res;
    }

    /** /json, compressed when the client asks (compression, Shapes.java). */
    private static FullHttpResponse jsonResponse(HttpRequest req) {
        byte[] body = jsonBytes();
        FullHttpResponse encoded = Shapes.json(req, body);
        return encoded != null ? encoded : response(
                req, HttpResponseStatus.OK, HttpHeaderValues.APPLICATION_JSON,
                Unpooled.wrappedBuffer(body));
    }

    private static byte[] jsonBytes() {
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
