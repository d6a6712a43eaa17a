package serverbench;

import io.vertx.core.AbstractVerticle;

/** The ping-pong worker: answers every message on {@link #ADDRESS} with the payload. */
final class PingPongVerticle extends AbstractVerticle {
    static final String ADDRESS = "serverbench.pingpong";

    @Override
    public void start() {
        vertx.eventBus().<Void>consumer(ADDRESS, msg -> msg.reply(Payload.SHARED));
    }
}
