package serverbench;

import io.vertx.core.AbstractVerticle;
import io.vertx.core.Promise;
import io.vertx.core.net.NetServerOptions;

/** TCP echo: each socket is piped into itself (with back-pressure), ended when the peer ends. */
final class EchoVerticle extends AbstractVerticle {
    private final String host;
    private final int port;

    EchoVerticle(String host, int port) {
        this.host = host;
        this.port = port;
    }

    @Override
    public void start(Promise<Void> started) {
        vertx.createNetServer(new NetServerOptions().setTcpNoDelay(true).setAcceptBacklog(1024))
                .connectHandler(socket -> socket.pipeTo(socket))
                .listen(port, host)
                .<Void>mapEmpty()
                .onComplete(started);
    }
}
