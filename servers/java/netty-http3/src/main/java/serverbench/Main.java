package serverbench;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * The serverbench contract on Netty 4.2 with HTTP/3: HTTP/1.1 on PORT, HTTPS (h2, http/1.1) on
 * TLS_PORT announcing HTTP/3 with Alt-Svc, and HTTP/3 on the UDP port H3_PORT ({@link Quic}),
 * the same certificate on both, all on WORKERS event loops.
 */
public final class Main {
    public static void main(String[] args) throws Exception {
        String host = env("HOST", "127.0.0.1");
        int port = Integer.parseInt(env("PORT", "8080"));
        int workers = Math.max(1, Integer.parseInt(env("WORKERS", "1")));
        String tlsPort = env("TLS_PORT", "");
        String h3Port = env("H3_PORT", "");
        String cert = env("TLS_CERT", "");
        String key = env("TLS_KEY", "");
        if ((!tlsPort.isEmpty() || !h3Port.isEmpty()) && (cert.isEmpty() || key.isEmpty())) {
            System.err.println("java/netty-http3: TLS_PORT=" + tlsPort + " H3_PORT=" + h3Port
                    + " need TLS_CERT and TLS_KEY (got '" + cert + "', '" + key + "')");
            System.exit(2);
        }

        boolean epoll = Epoll.isAvailable();
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, ioHandler(epoll));
        EventLoopGroup loops = new MultiThreadIoEventLoopGroup(workers, ioHandler(epoll));
        Class<? extends ServerChannel> channel =
                epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;

        // HTTP/3 and HTTPS first: a bad certificate stops the server before PORT opens.
        Quic quic = new Quic();
        if (!h3Port.isEmpty()) {
            quic.bind(loops, epoll, workers, host, Integer.parseInt(h3Port), cert, key);
        }
        String altSvc = h3Port.isEmpty() ? null : "h3=\":" + h3Port + "\"; ma=86400";
        if (!tlsPort.isEmpty()) {
            bootstrap(boss, loops, channel).childHandler(Tcp.tls(Tcp.context(cert, key), altSvc))
                    .bind(new InetSocketAddress(host, Integer.parseInt(tlsPort))).sync();
        }
        Channel http = bootstrap(boss, loops, channel).childHandler(Tcp.plain())
                .bind(new InetSocketAddress(host, port)).sync().channel();
        System.out.printf("java/netty-http3: http on %s:%d, https (h2, http/1.1) on %s, h3 on udp %s,"
                        + " %d event loops (%s)%n", host, port, orNone(tlsPort), orNone(h3Port),
                workers, epoll ? "epoll, UDP GSO" : "nio: " + Epoll.unavailabilityCause());
        System.out.flush();

        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                quic.stop();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            // Wait for the loops: the JVM exits when this hook returns, and the loops still
            // have the CONNECTION_CLOSE datagrams to send.
            boss.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(2, TimeUnit.SECONDS);
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(2, TimeUnit.SECONDS);
        }));
        http.closeFuture().sync();
    }

    private static io.netty.channel.IoHandlerFactory ioHandler(boolean epoll) {
        return epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
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

    private static String orNone(String port) {
        return port.isEmpty() ? "none" : port;
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isEmpty() ? fallback : value;
    }

    private Main() {}
}
