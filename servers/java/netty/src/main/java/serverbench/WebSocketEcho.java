package serverbench;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;

/**
 * The contract's ws-echo on /ws with Netty's WebSocketServerProtocolHandler: every text or
 * binary message is written back unchanged, in order.
 *
 * <p>Netty does the protocol: the protocol handler answers the upgrade on /ws (other paths go on
 * to {@link HttpHandler}; a GET /ws without the upgrade headers gets 400), swaps the HTTP codec
 * for the WebSocket one, answers a ping with a pong and a close with the same close frame, and
 * its decoder closes with 1002 on an unmasked client frame. {@link WebSocketFrameAggregator}
 * reassembles fragmented messages. No extension handler is installed, so no permessage-deflate.
 */
final class WebSocketEcho extends ChannelInboundHandlerAdapter {
    /** The largest frame and message: the contract asks for 64 KiB, 1 MiB leaves room. */
    static final int MAX_MESSAGE = 1 << 20;

    private static final WebSocketServerProtocolConfig CONFIG = WebSocketServerProtocolConfig
            .newBuilder()
            .websocketPath("/ws")
            .checkStartsWith(false)
            .decoderConfig(WebSocketDecoderConfig.newBuilder()
                    .maxFramePayloadLength(MAX_MESSAGE) // Netty's default is 64 KiB
                    .expectMaskedFrames(true)
                    .allowMaskMismatch(false)
                    .allowExtensions(false)
                    .closeOnProtocolViolation(true)
                    .build())
            .build();

    private boolean written;

    /** Adds the WebSocket handlers to an HTTP/1.1 pipeline, before the HTTP routes. */
    static void addTo(ChannelPipeline pipeline) {
        pipeline.addLast(new WebSocketServerProtocolHandler(CONFIG),
                new WebSocketFrameAggregator(MAX_MESSAGE), new WebSocketEcho());
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof TextWebSocketFrame || msg instanceof BinaryWebSocketFrame) {
            // The frame (whole message, FIN set) goes back as it came; the encoder releases it.
            ctx.write(msg);
            written = true;
        } else if (msg instanceof WebSocketFrame frame) {
            frame.release(); // pongs
        } else {
            ctx.fireChannelRead(msg); // HTTP requests for the routes
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (written) {
            written = false;
            ctx.flush(); // one flush per read batch, as for HTTP
        }
        ctx.fireChannelReadComplete();
    }
}
