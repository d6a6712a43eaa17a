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

        Vertx vertx = Vertx.vertx(new VertxOptions()
                .setEventLoopPoolSize(workers)
                .setPreferNativeTransport(true));
        vertx.eventBus().registerDefaultCodec(Payload.class, new Payload.LocalCodec());
        DeploymentOptions instances = new DeploymentOptions().setInstances(workers);

        Future.all(
                vertx.deployVerticle(PingPongVerticle::new, new DeploymentOptions()),
                vertx.deployVerticle(() -> new HttpVerticle(host, port), instances),
                vertx.deployVerticle(() -> new EchoVerticle(host, echoPort), instances))
            .onSuccess(ok -> {
                System.out.printf("vertx: http on %s:%d, echo on %d, %d event loops (native: %s)%n",
                        host, port, echoPort, workers, vertx.isNativeTransportEnabled());
                System.out.flush();
            })
            .onFailure(err -> {
                System.err.println("vertx: deployment failed: " + err);
                System.exit(1);
            });
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isEmpty() ? fallback : value;
    }

    private Main() {}
}
