package serverbench;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerExpectContinueHandler;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolConfig.Protocol;
import io.netty.handler.ssl.ApplicationProtocolConfig.SelectedListenerFailureBehavior;
import io.netty.handler.ssl.ApplicationProtocolConfig.SelectorFailureBehavior;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.ApplicationProtocolNegotiationHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.File;
import javax.net.ssl.SSLException;

/**
 * HTTPS on TLS_PORT: Netty's {@link SslContext} (the JDK's TLS: netty-tcnative is not on the
 * class path) with ALPN {@code h2} and {@code http/1.1}. After the handshake, HTTP/1.1 gets the
 * same pipeline as the plain port; HTTP/2 gets Netty's frame codec and one child channel per
 * stream, where {@link Http2StreamFrameToHttpObjectCodec} turns frames into the HTTP objects
 * {@link HttpHandler} already serves.
 */
final class Https {
    private Https() {}

    /** The server context from the PEM chain and PKCS#8 key named by TLS_CERT and TLS_KEY. */
    static SslContext context(String certPath, String keyPath) throws SSLException {
        return SslContextBuilder.forServer(new File(certPath), new File(keyPath))
                .applicationProtocolConfig(new ApplicationProtocolConfig(
                        Protocol.ALPN,
                        SelectorFailureBehavior.NO_ADVERTISE,
                        SelectedListenerFailureBehavior.ACCEPT,
                        ApplicationProtocolNames.HTTP_2,
                        ApplicationProtocolNames.HTTP_1_1))
                .build();
    }

    /** The TLS port's child initializer: TLS first, the HTTP pipeline once ALPN has chosen. */
    static ChannelInitializer<SocketChannel> initializer(SslContext ssl, PingPongWorker pingPong) {
        return new ChannelInitializer<>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                ch.pipeline().addLast(ssl.newHandler(ch.alloc()), new Negotiated(pingPong));
            }
        };
    }

    /** The HTTP/1.1 pipeline, the same on both ports, with the WebSocket echo on /ws. */
    static void http1(ChannelPipeline pipeline, PingPongWorker pingPong) {
        pipeline.addLast(
                new HttpServerCodec(), new HttpServerKeepAliveHandler(),
                // upload: answers Expect: 100-continue (Shapes.java).
                new HttpServerExpectContinueHandler());
        WebSocketEcho.addTo(pipeline);
        pipeline.addLast(new HttpHandler(pingPong));
    }

    /** Builds the pipeline for the protocol ALPN negotiated (http/1.1 when the client named none). */
    private static final class Negotiated extends ApplicationProtocolNegotiationHandler {
        private final PingPongWorker pingPong;

        Negotiated(PingPongWorker pingPong) {
            super(ApplicationProtocolNames.HTTP_1_1);
            this.pingPong = pingPong;
        }

        @Override
        protected void configurePipeline(ChannelHandlerContext ctx, String protocol) {
            if (ApplicationProtocolNames.HTTP_2.equals(protocol)) {
                ctx.pipeline().addLast(
                        Http2FrameCodecBuilder.forServer().build(),
                        new Http2MultiplexHandler(new ChannelInitializer<Http2StreamChannel>() {
                            @Override
                            protected void initChannel(Http2StreamChannel stream) {
                                stream.pipeline().addLast(
                                        new Http2StreamFrameToHttpObjectCodec(true),
                                        new HttpHandler(pingPong));
                            }
                        }));
            } else {
                http1(ctx.pipeline(), pingPong);
            }
        }
    }
}
