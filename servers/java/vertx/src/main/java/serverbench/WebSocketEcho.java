package serverbench;

import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.ServerWebSocket;

/**
 * The contract's ws-echo on /ws with Vert.x core's WebSocket server API: every text or binary
 * message is written back unchanged, in order.
 *
 * <p>Vert.x (over Netty's WebSocket codec) does the protocol: its message handlers get
 * fragmented messages reassembled, a ping is answered with a pong and a close with the same
 * code; an unmasked client frame is a protocol violation, closed here with the 1002 Netty's
 * decoder reports. A GET /ws without
 * the upgrade headers gets 426 here.
 */
final class WebSocketEcho {
    /** The largest frame and message: the contract asks for 64 KiB, 1 MiB leaves room. */
    static final int MAX_MESSAGE = 1 << 20;

    private static final Buffer UPGRADE_REQUIRED = Buffer.buffer("Upgrade Required");

    private WebSocketEcho() {}

    /**
     * Vert.x's WebSocket settings: the message and frame limits (defaults 256 KiB and 64 KiB),
     * and no permessage-deflate or per-frame compression (Vert.x offers both by default when
     * the client asks).
     */
    static HttpServerOptions tune(HttpServerOptions options) {
        return options
                .setMaxWebSocketFrameSize(MAX_MESSAGE)
                .setMaxWebSocketMessageSize(MAX_MESSAGE)
                .setPerMessageWebSocketCompressionSupported(false)
                .setPerFrameWebSocketCompressionSupported(false);
    }

    /** GET /ws: upgrades and echoes, or 426 when the request does not ask for a WebSocket. */
    static void handle(HttpServerRequest req) {
        String upgrade = req.getHeader(HttpHeaders.UPGRADE);
        if (upgrade == null || !upgrade.equalsIgnoreCase("websocket")) {
            req.response()
                    .setStatusCode(426)
                    .putHeader(HttpHeaders.CONTENT_TYPE, "text/plain")
                    .putHeader(HttpHeaders.UPGRADE, "websocket")
                    .putHeader("Sec-WebSocket-Version", "13")
                    .end(UPGRADE_REQUIRED);
            return;
        }
        // A bad handshake (no key, wrong version) is answered by Vert.x itself (400 or 426).
        req.toWebSocket().onSuccess(WebSocketEcho::echo);
    }

    private static void echo(ServerWebSocket ws) {
        ws.textMessageHandler(ws::writeTextMessage);
        ws.binaryMessageHandler(ws::writeBinaryMessage);
        // Netty's decoder reports a protocol violation (such as an unmasked client frame) with
        // the close status it calls for (1002); Vert.x would otherwise close with 1000.
        ws.exceptionHandler(err -> {
            if (err instanceof CorruptedWebSocketFrameException corrupt) {
                WebSocketCloseStatus status = corrupt.closeStatus();
                ws.close((short) status.code(), status.reasonText());
            } else {
                ws.close();
            }
        });
    }
}
