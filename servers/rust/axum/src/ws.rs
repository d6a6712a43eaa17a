//! The contract's `ws-echo` on `/ws`, with axum's `ws` feature (tokio-tungstenite underneath):
//! every text or binary message is sent back unchanged, in order.
//!
//! tungstenite does the protocol: it reassembles fragmented messages, queues a pong for each
//! ping and the close reply for a close (both written on the next read, which the loop always
//! makes), and refuses an unmasked client frame with a protocol error; this module answers that
//! error with close 1002. A `GET /ws` without the upgrade headers is refused by the
//! `WebSocketUpgrade` extractor (400 or 426). No permessage-deflate: axum's `ws` never offers it.

use axum::extract::ws::{close_code, CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;

/// The largest message accepted: the contract asks for 64 KiB, 1 MiB leaves room (axum's
/// default, 64 MiB, is more than an echo server should buffer).
const MAX_MESSAGE: usize = 1 << 20;

/// `GET /ws`: upgrades and echoes.
pub async fn upgrade(ws: WebSocketUpgrade) -> Response {
    ws.max_message_size(MAX_MESSAGE)
        .max_frame_size(MAX_MESSAGE)
        .on_upgrade(echo)
}

async fn echo(mut socket: WebSocket) {
    while let Some(received) = socket.recv().await {
        let echoed = match received {
            Ok(message @ (Message::Text(_) | Message::Binary(_))) => message,
            // Pings and closes are answered by tungstenite on the next read; pongs are ignored.
            Ok(_) => continue,
            Err(_) => {
                // A protocol error (such as an unmasked frame) or a broken connection: say 1002
                // if the connection still takes it.
                let close = CloseFrame {
                    code: close_code::PROTOCOL,
                    reason: "protocol error".into(),
                };
                let _ = socket.send(Message::Close(Some(close))).await;
                return;
            }
        };
        if socket.send(echoed).await.is_err() {
            return;
        }
    }
}
