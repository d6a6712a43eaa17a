package serverbench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/** The 1 MiB contract body, built once in a direct buffer and shared read-only. */
final class Payload {
    private static final ByteBuf SHARED;

    static {
        byte[] body = new byte[1 << 20];
        for (int i = 0; i < body.length; i++) {
            body[i] = (byte) ('a' + i % 26);
        }
        SHARED = Unpooled.unreleasableBuffer(Unpooled.directBuffer(body.length).writeBytes(body))
                .asReadOnly();
    }

    /** A fresh view (own indexes) on the shared bytes. */
    static ByteBuf buffer() {
        return SHARED.duplicate();
    }

    private Payload() {}
}
