package serverbench;

import io.vertx.core.buffer.Buffer;
import java.util.zip.CRC32;
import java.util.zip.Deflater;

/**
 * gzip and deflate with java.util.zip at level 6, for the answers that the contract compresses
 * (/json and the static text files), and the choice between them from a request's
 * {@code Accept-Encoding}. The HTTP server's own compression stays off: Netty's compressor in
 * every connection's pipeline cost every route about 10% of its CPU, /hello included.
 *
 * <p>Each thread (an event loop or a worker) keeps one {@link Deflater} per coding and resets it
 * per answer: a new Deflater allocates zlib's state (about 256 KiB of native memory) each time.
 */
final class Compression {
    /** zlib's default level, the one the other catalog servers use. */
    static final int LEVEL = 6;

    /** The codings served; br and zstd have no codec on the class path (the contract allows none). */
    enum Coding {
        GZIP("gzip"),
        DEFLATE("deflate");

        final String token;

        Coding(String token) {
            this.token = token;
        }
    }

    /** gzip's member header: deflate, no name or time, unknown OS (RFC 1952). */
    private static final byte[] GZIP_HEADER = {0x1f, (byte) 0x8b, 8, 0, 0, 0, 0, 0, 0, (byte) 0xff};

    /** Raw deflate inside gzip's header and trailer. */
    private static final ThreadLocal<Deflater> RAW = ThreadLocal.withInitial(() -> new Deflater(LEVEL, true));
    /** "deflate" in HTTP is the zlib format (RFC 9110), not raw deflate. */
    private static final ThreadLocal<Deflater> ZLIB = ThreadLocal.withInitial(() -> new Deflater(LEVEL, false));
    private static final ThreadLocal<byte[]> CHUNK = ThreadLocal.withInitial(() -> new byte[16 * 1024]);

    private Compression() {}

    /**
     * The coding to answer in, or null for none: gzip or deflate, whichever the client rates
     * higher (gzip on a tie, {@code *} stands for both), never one it rates {@code q=0}.
     */
    static Coding negotiate(String acceptEncoding) {
        if (acceptEncoding == null || acceptEncoding.isEmpty()) {
            return null;
        }
        float gzip = -1;
        float deflate = -1;
        float any = -1;
        for (String item : acceptEncoding.split(",")) {
            String[] parts = item.split(";");
            String name = parts[0].trim();
            float q = quality(parts);
            if (name.equalsIgnoreCase("gzip") || name.equalsIgnoreCase("x-gzip")) {
                gzip = q;
            } else if (name.equalsIgnoreCase("deflate")) {
                deflate = q;
            } else if (name.equals("*")) {
                any = q;
            }
        }
        gzip = gzip < 0 ? any : gzip;
        deflate = deflate < 0 ? any : deflate;
        if (gzip <= 0 && deflate <= 0) {
            return null;
        }
        return gzip >= deflate ? Coding.GZIP : Coding.DEFLATE;
    }

    /** The item's {@code q} (1 when absent, 0 when unreadable). */
    private static float quality(String[] parts) {
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i].trim();
            if (p.length() > 2 && (p.charAt(0) == 'q' || p.charAt(0) == 'Q') && p.charAt(1) == '=') {
                try {
                    return Float.parseFloat(p.substring(2).trim());
                } catch (NumberFormatException e) {
                    return 0;
                }
            }
        }
        return 1;
    }

    /** The bytes in the coding, as one buffer (its length is the answer's Content-Length). */
    static Buffer encode(Coding coding, byte[] body) {
        Deflater deflater = (coding == Coding.GZIP ? RAW : ZLIB).get();
        deflater.reset();
        deflater.setInput(body);
        deflater.finish();
        Buffer out = Buffer.buffer(body.length / 3 + 64);
        if (coding == Coding.GZIP) {
            out.appendBytes(GZIP_HEADER);
        }
        byte[] chunk = CHUNK.get();
        while (!deflater.finished()) {
            out.appendBytes(chunk, 0, deflater.deflate(chunk));
        }
        if (coding == Coding.GZIP) {
            CRC32 crc = new CRC32();
            crc.update(body);
            out.appendIntLE((int) crc.getValue()).appendIntLE(body.length);
        }
        return out;
    }
}
