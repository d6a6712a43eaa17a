package serverbench;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageCodec;

/** The 1 MiB contract body, built once; sent over the event bus by reference. */
record Payload(Buffer body) {
    static final Payload SHARED = new Payload(build());

    private static Buffer build() {
        byte[] bytes = new byte[1 << 20];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) ('a' + i % 26);
        }
        return Buffer.buffer(bytes);
    }

    /**
     * Local-only codec: the event bus hands the same immutable object to the consumer (the
     * default Buffer codec would copy 1 MiB per message). Never used across a cluster.
     */
    static final class LocalCodec implements MessageCodec<Payload, Payload> {
        @Override
        public void encodeToWire(Buffer buffer, Payload payload) {
            throw new UnsupportedOperationException("serverbench.Payload is local only");
        }

        @Override
        public Payload decodeFromWire(int pos, Buffer buffer) {
            throw new UnsupportedOperationException("serverbench.Payload is local only");
        }

        @Override
        public Payload transform(Payload payload) {
            return payload;
        }

        @Override
        public String name() {
            return "serverbench-payload";
        }

        @Override
        public byte systemCodecID() {
            return -1;
        }
    }
}
