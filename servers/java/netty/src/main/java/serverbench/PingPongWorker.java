package serverbench;

import io.netty.buffer.ByteBuf;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Consumer;

/**
 * One worker thread fed through a queue. A request carries the event loop of its channel and a
 * callback; the worker answers by running the callback with the payload on that event loop.
 */
final class PingPongWorker {
    private record Ping(Executor loop, Consumer<ByteBuf> reply) {}

    private final BlockingQueue<Ping> queue = new LinkedBlockingQueue<>();

    static PingPongWorker start() {
        PingPongWorker worker = new PingPongWorker();
        Thread thread = new Thread(worker::run, "pingpong-worker");
        thread.setDaemon(true);
        thread.start();
        return worker;
    }

    void send(Executor loop, Consumer<ByteBuf> reply) {
        queue.add(new Ping(loop, reply));
    }

    private void run() {
        try {
            while (true) {
                Ping ping = queue.take();
                ByteBuf body = Payload.buffer();
                ping.loop().execute(() -> ping.reply().accept(body));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
