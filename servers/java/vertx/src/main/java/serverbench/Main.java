package serverbench;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;

/** Deploys WORKERS HTTP and echo verticle instances and one ping-pong verticle. */
public final class Main {
    public static void main(String[] args) {
        String host = env("HOST", "127.0.0.1");
        int port = Integer.parseInt(env("PORT", "8080"));
        int echoPort = Integer.parseInt(env("ECHO_PORT", "9000"));
        int workers = Math.max(1, Integer.parseInt(env("WORKERS", "1")));
        HttpVerticle.Tls tls = tlsFromEnv();
        Database.Config db = Database.Config.fromEnv(workers);
        if (tls != null) {
            initJdkSslServerContext();
        }

        Vertx vertx = Vertx.vertx(new VertxOptions()
                .setEventLoopPoolSize(workers)
                .setPreferNativeTransport(true));
        vertx.eventBus().registerDefaultCodec(Payload.class, new Payload.LocalCodec());
        DeploymentOptions instances = new DeploymentOptions().setInstances(workers);

        Future.all(
                vertx.deployVerticle(PingPongVerticle::new, new DeploymentOptions()),
                vertx.deployVerticle(() -> new HttpVerticle(host, port, tls, db), instances),
                vertx.deployVerticle(() -> new EchoVerticle(host, echoPort), instances))
            .onSuccess(ok -> {
                System.out.printf("vertx: http and h2c on %s:%d, %s, echo on %d, %d event loops (native: %s)%n",
                        host, port, tls == null ? "no TLS (TLS_PORT unset)" : "https (h2, http/1.1) on " + tls.port(),
                        echoPort, workers, vertx.isNativeTransportEnabled());
                if (db != null) {
                    System.out.printf("vertx: database pool of %d connections (shared by the verticles)%n",
                            db.poolSize());
                }
                System.out.flush();
            })
            .onFailure(err -> {
                System.err.println("vertx: deployment failed: " + err);
                System.exit(1);
            });
    }

    /** The HTTPS settings when TLS_PORT is set (then TLS_CERT and TLS_KEY must be too), else null. */
    private static HttpVerticle.Tls tlsFromEnv() {
        String port = env("TLS_PORT", "");
        if (port.isEmpty()) {
            return null;
        }
        String cert = env("TLS_CERT", "");
        String key = env("TLS_KEY", "");
        if (cert.isEmpty() || key.isEmpty()) {
            System.err.println("vertx: TLS_PORT=" + port + " needs TLS_CERT and TLS_KEY");
            System.exit(2);
        }
        return new HttpVerticle.Tls(Integer.parseInt(port), cert, key);
    }

    /**
     * Runs the static initializer of Netty's JdkSslServerContext here, before any verticle
     * starts. Vert.x builds a TLS server's SSL context lazily, on the event loop, when the
     * first TLS connection arrives; that class's initializer (a one-time check that builds a
     * PKCS12 key store: PBKDF2 over 10,000 rounds, on a cold JIT) then held the event loop, and
     * every plain HTTP connection on it, for 1-5 s on a busy machine. Here it costs the start.
     */
    private static void initJdkSslServerContext() {
        try {
            Class.forName("io.netty.handler.ssl.JdkSslServerContext", true, Main.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("vertx: Netty's JDK TLS is missing from the class path", e);
        }
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isEmpty() ? fallback : value;
    }

    private Main() {}
}
