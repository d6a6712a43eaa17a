//! `/ws`: the handshake checked and answered by hand on hyper, then an echo loop on
//! tokio-tungstenite.
//!
//! tungstenite does the protocol: it reassembles fragmented messages, queues a pong for each
//! ping and the close reply for a close (written on the next read, which the loop always makes),
//! and refuses an unmasked client frame, an oversized message or invalid UTF-8 with an error;
//! this module answers those with close 1002, 1009 or 1007. No extension is negotiated
//! (tungstenite has no permessage-deflate).

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{
    HeaderMap, HeaderName, HeaderValue, CONNECTION, CONTENT_TYPE, SEC_WEBSOCKET_ACCEPT,
    SEC_WEBSOCKET_KEY, SEC_WEBSOCKET_VERSION, UPGRADE,
};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error, Message};
use tokio_tungstenite::WebSocketStream;

/// The largest message and frame accepted: the contract asks for 64 KiB, 1 MiB leaves room
/// (tungstenite's defaults, 64 MiB and 16 MiB, are more than an echo server should buffer).
const MAX_MESSAGE: usize = 1 << 20;

/// tungstenite's settings: a 128 KiB read buffer and write buffer flushed at 128 KiB (its
/// defaults), the message and frame limits above, unmasked client frames refused (the default).
fn config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE))
}

/// True when the comma-separated header `name` lists `token` (case-insensitive).
fn has_token(headers: &HeaderMap, name: HeaderName, token: &str) -> bool {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim().eq_ignore_ascii_case(token))
}

/// The `Sec-WebSocket-Accept` for a valid upgrade request, or `None`.
fn accept_key(req: &Request<Incoming>) -> Option<String> {
    let headers = req.headers();
    let upgrade = req.method() == Method::GET
        && has_token(headers, CONNECTION, "upgrade")
        && has_token(headers, UPGRADE, "websocket")
        && headers
            .get(SEC_WEBSOCKET_VERSION)
            .is_some_and(|v| v == "13");
    let key = headers.get(SEC_WEBSOCKET_KEY)?;
    upgrade.then(|| derive_accept_key(key.as_bytes()))
}

/// `GET /ws`: 101 and the echo on a new task, or 426 (with the `Upgrade` and version headers
/// RFC 6455 asks for) when the request is not a WebSocket upgrade.
pub fn upgrade(mut req: Request<Incoming>) -> Response<Full<Bytes>> {
    let Some(accept) = accept_key(&req) else {
        let mut refused = Response::new(Full::new(Bytes::from_static(b"Upgrade Required")));
        *refused.status_mut() = StatusCode::UPGRADE_REQUIRED;
        let headers = refused.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        headers.insert(UPGRADE, HeaderValue::from_static("websocket"));
        headers.insert(SEC_WEBSOCKET_VERSION, HeaderValue::from_static("13"));
        return refused;
    };
    let upgraded = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        match upgraded.await {
            Ok(io) => {
                let ws = WebSocketStream::from_raw_socket(
                    TokioIo::new(io),
                    Role::Server,
                    Some(config()),
                )
                .await;
                echo(ws).await;
            }
            Err(e) => eprintln!("rust/tokio-tungstenite: /ws upgrade: {e}"),
        }
    });
    let mut switching = Response::new(Full::default());
    *switching.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = switching.headers_mut();
    headers.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    headers.insert(UPGRADE, HeaderValue::from_static("websocket"));
    match HeaderValue::from_str(&accept) {
        Ok(accept) => headers.insert(SEC_WEBSOCKET_ACCEPT, accept),
        Err(_) => unreachable!("a base64 SHA-1 is a valid header value"),
    };
    switching
}

/// The close code for a read error tungstenite gives back, `None` when the connection is gone.
fn close_code(error: &Error) -> Option<CloseCode> {
    match error {
        Error::Protocol(_) => Some(CloseCode::Protocol),
        Error::Capacity(_) => Some(CloseCode::Size),
        Error::Utf8(_) => Some(CloseCode::Invalid),
        _ => None,
    }
}

async fn echo<S>(mut ws: WebSocketStream<S>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    while let Some(received) = ws.next().await {
        let message = match received {
            Ok(message @ (Message::Text(_) | Message::Binary(_))) => message,
            // Pings and closes are answered by tungstenite on the next read; pongs are ignored.
            Ok(_) => continue,
            Err(error) => {
                if let Some(code) = close_code(&error) {
                    let reason = error.to_string().into();
                    let _ = ws.close(Some(CloseFrame { code, reason })).await;
                }
                return;
            }
        };
        if ws.send(message).await.is_err() {
            return;
        }
    }
}
