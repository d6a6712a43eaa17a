package serverbench;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;
import java.net.InetSocketAddress;

/** The serverbench contract on Netty 4.1: HTTP on PORT, TCP echo on ECHO_PORT. */
public final class Main {
    public static void main(String[] args) throws InterruptedException {
        String host = env("HOST", "127.0.0.1");
        int port = Integer.parseInt(env("PORT", "8080"));
        int echoPort = Integer.parseInt(env("ECHO_PORT", "9000"));
        int workers = Math.max(1, Integer.parseInt(env("WORKERS", "1")));

        boolean epoll = Epoll.isAvailable();
        EventLoopGroup boss = epoll ? new EpollEventLoopGroup(1) : new NioEventLoopGroup(1);
        EventLoopGroup loops =
                epoll ? new EpollEventLoopGroup(workers) : new NioEventLoopGroup(workers);
        Class<? extends ServerChannel> channel =
                epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        PingPongWorker pingPong = PingPongWorker.start();

        Channel http = bootstrap(boss, loops, channel)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(
                                new HttpServerCodec(),
                                new HttpServerKeepAliveHandler(),
                                new HttpHandler(pingPong));
                    }
                })
                .bind(new InetSocketAddress(host, port)).sync().channel();
        Channel echo = bootstrap(boss, loops, channel)
                .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new EchoHandler());
                    }
                })
                .bind(new InetSocketAddress(host, echoPort)).sync().channel();
        String transport = epoll ? "epoll" : "nio: " + Epoll.unavailabilityCause();
        System.out.printf("netty: http on %s:%d, echo on %d, %d event loops (%s)%n",
                host, port, echoPort, workers, transport);
        System.out.flush();

        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            boss.shutdownGracefully();
            loops.shutdownGracefully();
        }));
        http.closeFuture().sync();
        echo.closeFuture().sync();
    }

    private static ServerBootstrap bootstrap(
            EventLoopGroup boss, EventLoopGroup loops, Class<? extends ServerChannel> channel) {
        return new ServerBootstrap()
                .group(boss, loops)
                .channel(channel)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true);
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isEmpty() ? fallback : value;
    }

    private Main() {}
}
