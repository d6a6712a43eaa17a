//! The contract's `ws-echo` on `/ws`, with actix-ws (actix-http's WebSocket codec behind a
//! session/stream API): every text or binary message is sent back unchanged, in order.
//!
//! actix-ws parses frames (an unmasked client frame is a protocol error, answered here with
//! close 1002) and reassembles continuations (`aggregate_continuations`); pings, pongs and
//! closes reach this module, which answers them (actix-ws does not). A `GET /ws` without the
//! upgrade headers fails the handshake with 400. No permessage-deflate: actix has none.

use actix_web::{web, HttpRequest, HttpResponse};
use actix_ws::{AggregatedMessage, AggregatedMessageStream, CloseCode, CloseReason, Session};

/// The largest frame and message accepted: the contract asks for 64 KiB, which is actix-ws's
/// default frame limit exactly; 1 MiB leaves room.
const MAX_MESSAGE: usize = 1 << 20;

/// `GET /ws`: upgrades, and echoes on a task of the worker that took the connection.
pub async fn upgrade(req: HttpRequest, body: web::Payload) -> actix_web::Result<HttpResponse> {
    let (response, session, stream) = actix_ws::handle(&req, body)?;
    let stream = stream
        .max_frame_size(MAX_MESSAGE)
        .aggregate_continuations()
        .max_continuation_size(MAX_MESSAGE);
    actix_web::rt::spawn(echo(session, stream));
    Ok(response)
}

async fn echo(mut session: Session, mut stream: AggregatedMessageStream) {
    let reason = loop {
        let sent = match stream.recv().await {
            Some(Ok(AggregatedMessage::Text(text))) => session.text(text).await,
            Some(Ok(AggregatedMessage::Binary(bytes))) => session.binary(bytes).await,
            Some(Ok(AggregatedMessage::Ping(bytes))) => session.pong(&bytes).await,
            Some(Ok(AggregatedMessage::Pong(_))) => Ok(()),
            // The client's close, answered with its own code.
            Some(Ok(AggregatedMessage::Close(reason))) => break reason,
            Some(Err(error)) => {
                break Some(CloseReason {
                    code: CloseCode::Protocol,
                    description: Some(error.to_string()),
                })
            }
            None => return,
        };
        if sent.is_err() {
            return;
        }
    };
    let _ = session.close(reason).await;
}
