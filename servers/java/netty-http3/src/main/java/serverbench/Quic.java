package serverbench;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.channel.unix.UnixChannelOption;
import io.netty.handler.codec.http3.DefaultHttp3GoAwayFrame;
import io.netty.handler.codec.http3.Http3;
import io.netty.handler.codec.http3.Http3ErrorCode;
import io.netty.handler.codec.http3.Http3FrameToHttpObjectCodec;
import io.netty.handler.codec.http3.Http3ServerConnectionHandler;
import io.netty.handler.codec.quic.EpollQuicUtils;
import io.netty.handler.codec.quic.QuicChannel;
import io.netty.handler.codec.quic.QuicChannelOption;
import io.netty.handler.codec.quic.QuicSslContext;
import io.netty.handler.codec.quic.QuicSslContextBuilder;
import io.netty.handler.codec.quic.QuicStreamChannel;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.io.File;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * HTTP/3 on H3_PORT: Netty's QUIC codec (quiche and BoringSSL, from netty-codec-native-quic)
 * under Netty's HTTP/3 codec, each request stream turned into HTTP objects for {@link Handler}.
 * With epoll, one UDP channel per event loop, all bound to H3_PORT with SO_REUSEPORT (the
 * kernel's 4-tuple hash keeps a connection on one loop), sending with UDP GSO; with NIO, one.
 */
final class Quic {
    /** Concurrent request streams a client may open per connection. */
    static final long MAX_STREAMS = 1024;
    private static final int UDP_BUFFER = 4 << 20;
    /** The highest request stream id seen on a connection, for its GOAWAY. */
    private static final AttributeKey<AtomicLong> LAST_STREAM = AttributeKey.valueOf("lastStream");

    private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final List<Channel> sockets = new ArrayList<>();

    /** Binds H3_PORT once per socket, each with its own codec (a QUIC codec is not sharable). */
    void bind(EventLoopGroup loops, boolean epoll, int count, String host, int port,
            String cert, String key) throws InterruptedException {
        QuicSslContext ssl = QuicSslContextBuilder.forServer(new File(key), null, new File(cert))
                .applicationProtocols(Http3.supportedApplicationProtocols())
                .earlyData(true)
                .build();
        Bootstrap bootstrap = new Bootstrap().group(loops)
                .option(ChannelOption.SO_RCVBUF, UDP_BUFFER)
                .option(ChannelOption.SO_SNDBUF, UDP_BUFFER);
        if (epoll) {
            bootstrap.channel(EpollDatagramChannel.class).option(UnixChannelOption.SO_REUSEPORT, true);
        } else {
            bootstrap.channel(NioDatagramChannel.class);
            count = 1;
        }
        InetSocketAddress address = new InetSocketAddress(host, port);
        for (int i = 0; i < count; i++) {
            sockets.add(bootstrap.handler(codec(ssl, epoll)).bind(address).sync().channel());
        }
    }

    private ChannelHandler codec(QuicSslContext ssl, boolean epoll) {
        var builder = Http3.newQuicServerCodecBuilder()
                .sslContext(ssl)
                .maxIdleTimeout(30, TimeUnit.SECONDS)
                .initialMaxData(16 << 20)
                .initialMaxStreamDataBidirectionalLocal(1 << 20)
                .initialMaxStreamDataBidirectionalRemote(1 << 20)
                .initialMaxStreamsBidirectional(MAX_STREAMS)
                // No tokenHandler: Netty's default then sends no Retry, so a handshake costs
                // no extra round trip (address validation is for the open Internet).
                .handler(new ChannelInitializer<QuicChannel>() {
                    @Override
                    protected void initChannel(QuicChannel conn) {
                        conn.attr(LAST_STREAM).set(new AtomicLong(-4));
                        connections.add(conn);
                        conn.pipeline().addLast(new Http3ServerConnectionHandler(requests(conn)));
                    }
                });
        if (epoll) {
            builder.option(QuicChannelOption.SEGMENTED_DATAGRAM_PACKET_ALLOCATOR,
                    EpollQuicUtils.newSegmentedAllocator(10));
        }
        return builder.build();
    }

    private static ChannelInitializer<QuicStreamChannel> requests(QuicChannel conn) {
        return new ChannelInitializer<>() {
            @Override
            protected void initChannel(QuicStreamChannel stream) {
                conn.attr(LAST_STREAM).get().accumulateAndGet(stream.streamId(), Math::max);
                stream.pipeline().addLast(
                        new Http3FrameToHttpObjectCodec(true), new Handler(null));
                for (String name : stream.pipeline().names()) {
                    if (name.startsWith("Http3RequestStreamValidationHandler")) {
                        stream.pipeline().addBefore(name, "malformed", new MalformedAsStreamError());
                    }
                }
            }
        };
    }

    /**
     * Netty's request validation ({@code Http3RequestStreamValidationHandler}, which the
     * connection handler puts in every request stream's pipeline) ends a malformed request
     * (RFC 9114 §4.1.2: a missing {@code :path}, an uppercase field name...) by closing its
     * stream: an empty FIN, no answer. The RFC makes it a stream error, so this handler, just in
     * front of it, turns a close that comes from it (or from the handlers after it, which close
     * only on errors) into a reset and a STOP_SENDING with H3_MESSAGE_ERROR.
     */
    private static final class MalformedAsStreamError extends ChannelOutboundHandlerAdapter {
        @Override
        public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
            ((QuicStreamChannel) ctx.channel()).shutdown(
                    Http3ErrorCode.H3_MESSAGE_ERROR.code(), promise);
        }
    }

    /**
     * RFC 9114 §5.2: a GOAWAY on every connection (naming the first request stream it will not
     * serve), a moment for it to leave, then CONNECTION_CLOSE with H3_NO_ERROR.
     */
    void stop() throws InterruptedException {
        List<ChannelFuture> sent = new ArrayList<>();
        for (Channel ch : connections) {
            QuicChannel conn = (QuicChannel) ch;
            QuicStreamChannel control = Http3.getLocalControlStream(conn);
            if (control != null) {
                long next = conn.attr(LAST_STREAM).get().get() + 4;
                sent.add(control.writeAndFlush(new DefaultHttp3GoAwayFrame(next)));
            }
        }
        for (ChannelFuture f : sent) {
            f.await(500, TimeUnit.MILLISECONDS);
        }
        if (!connections.isEmpty()) {
            Thread.sleep(100);
        }
        for (Channel ch : connections) {
            ((QuicChannel) ch).close(true, Http3ErrorCode.H3_NO_ERROR.code(), Unpooled.EMPTY_BUFFER);
        }
        connections.newCloseFuture().await(1, TimeUnit.SECONDS);
        for (Channel socket : sockets) {
            socket.close().await(1, TimeUnit.SECONDS);
        }
    }
}
