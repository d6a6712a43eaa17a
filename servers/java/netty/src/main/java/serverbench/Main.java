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
import java.net.InetSocketAddress;
import javax.net.ssl.SSLException;

/**
 * The serverbench contract on Netty 4.1: HTTP on PORT, TCP echo on ECHO_PORT, and when TLS_PORT
 * is set, HTTPS there (HTTP/2 or HTTP/1.1 by ALPN, see {@link Https}).
 */
public final class Main {
    public static void main(String[] args) throws InterruptedException, SSLException {
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
        DbWork.init(); // the JDBC pool and threads, only when DATABASE_URL is set

        // HTTPS first: a bad certificate stops the server before any port is open, and PORT
        // opens only once TLS_PORT is up.
        String tlsPort = env("TLS_PORT", "");
        Channel https = null;
        if (!tlsPort.isEmpty()) {
            String cert = env("TLS_CERT", "");
            String key = env("TLS_KEY", "");
            if (cert.isEmpty() || key.isEmpty()) {
                System.err.println("netty: TLS_PORT=" + tlsPort + " needs TLS_CERT and TLS_KEY");
                System.exit(2);
            }
            https = bootstrap(boss, loops, channel)
                    .childHandler(Https.initializer(Https.context(cert, key), pingPong))
                    .bind(new InetSocketAddress(host, Integer.parseInt(tlsPort))).sync().channel();
        }
        Channel http = bootstrap(boss, loops, channel)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        Https.http1(ch.pipeline(), pingPong);
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
        System.out.printf("netty: http on %s:%d, %s, echo on %d, %d event loops (%s)%n",
                host, port, https == null ? "no TLS (TLS_PORT unset)" : "https (h2, http/1.1) on " + tlsPort,
                echoPort, workers, transport);
        System.out.flush();

        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            boss.shutdownGracefully();
            loops.shutdownGracefully();
        }));
        http.closeFuture().sync();
        echo.closeFuture().sync();
        if (https != null) {
            https.closeFuture().sync();
        }
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
