package serverbench;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpServerCodec;
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
 * The TCP ports: HTTP/1.1 on PORT, and HTTPS on TLS_PORT with Netty's {@link SslContext} (the
 * JDK's TLS) and ALPN {@code h2} then {@code http/1.1}; HTTP/2 gets Netty's frame codec and one
 * child channel per stream, turned back into HTTP objects for {@link Handler}.
 */
final class Tcp {
    private Tcp() {}

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

    /** PORT's child initializer: plain HTTP/1.1. */
    static ChannelInitializer<SocketChannel> plain() {
        return new ChannelInitializer<>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                http1(ch.pipeline(), null);
            }
        };
    }

    /** TLS_PORT's child initializer: TLS first, the HTTP pipeline once ALPN has chosen. */
    static ChannelInitializer<SocketChannel> tls(SslContext ssl, String altSvc) {
        return new ChannelInitializer<>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                ch.pipeline().addLast(ssl.newHandler(ch.alloc()), new Negotiated(altSvc));
            }
        };
    }

    private static void http1(ChannelPipeline pipeline, String altSvc) {
        pipeline.addLast(
                new HttpServerCodec(), new HttpServerKeepAliveHandler(), new Handler(altSvc));
    }

    /** Builds the pipeline for the protocol ALPN negotiated (http/1.1 when the client named none). */
    private static final class Negotiated extends ApplicationProtocolNegotiationHandler {
        private final String altSvc;

        Negotiated(String altSvc) {
            super(ApplicationProtocolNames.HTTP_1_1);
            this.altSvc = altSvc;
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
                                        new Handler(altSvc));
                            }
                        }));
            } else {
                http1(ctx.pipeline(), altSvc);
            }
        }
    }
}
