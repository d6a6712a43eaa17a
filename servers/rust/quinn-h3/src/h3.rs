//! HTTP/3 on `H3_PORT`: one quinn endpoint (one UDP socket, its packets driven by one task;
//! quinn sends with UDP GSO and receives with GRO where the kernel has them), the h3 crate per
//! connection, each request in a task of its own on the runtime's workers.
//!
//! On shutdown every connection sends a GOAWAY (h3's `shutdown`), then the endpoint closes with
//! `H3_NO_ERROR` (0x100), as RFC 9114 §5.2 asks.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, Bytes};
use h3::server::RequestStream;
use http::header::{HeaderValue, CONTENT_LENGTH, CONTENT_TYPE};
use tokio::sync::watch;

use crate::routes;

/// `H3_NO_ERROR`.
const H3_NO_ERROR: u32 = 0x100;
/// Concurrent request streams a client may open (the contract asks for at least 100).
const MAX_STREAMS: u32 = 256;
/// The UDP socket buffers asked for (the kernel caps them at `net.core.rmem_max`/`wmem_max`).
const SOCKET_BUFFER: usize = 8 << 20;

type Stream = RequestStream<h3_quinn::BidiStream<Bytes>, Bytes>;

/// The endpoint bound on `addr` with `tls` (ALPN `h3`, TLS 1.3).
pub fn endpoint(addr: SocketAddr, tls: rustls::ServerConfig) -> std::io::Result<quinn::Endpoint> {
    let quic = quinn::crypto::rustls::QuicServerConfig::try_from(tls)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(quic));
    let mut transport = quinn::TransportConfig::default();
    transport.max_concurrent_bidi_streams(MAX_STREAMS.into());
    config.transport_config(Arc::new(transport));
    let socket = udp_socket(addr)?;
    let runtime = quinn::default_runtime()
        .ok_or_else(|| std::io::Error::other("no tokio runtime for quinn"))?;
    quinn::Endpoint::new(quinn::EndpointConfig::default(), Some(config), socket, runtime)
}

/// A UDP socket on `addr` with buffers of [`SOCKET_BUFFER`] asked for (what the kernel grants
/// is printed: it caps them at rmem_max/wmem_max).
fn udp_socket(addr: SocketAddr) -> std::io::Result<std::net::UdpSocket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    let _ = socket.set_recv_buffer_size(SOCKET_BUFFER);
    let _ = socket.set_send_buffer_size(SOCKET_BUFFER);
    socket.bind(&addr.into())?;
    println!(
        "rust/quinn-h3: UDP buffers granted: receive {} KiB, send {} KiB",
        socket.recv_buffer_size().unwrap_or(0) / 1024,
        socket.send_buffer_size().unwrap_or(0) / 1024
    );
    Ok(socket.into())
}

/// Accepts connections until `stop` turns true, then closes the endpoint gracefully.
pub async fn serve(endpoint: quinn::Endpoint, payload: Bytes, stop: watch::Receiver<bool>) {
    let mut stop_accepting = stop.clone();
    loop {
        let incoming = tokio::select! {
            i = endpoint.accept() => i,
            () = stopping(&mut stop_accepting) => break,
        };
        let Some(incoming) = incoming else { break };
        let (payload, stop) = (payload.clone(), stop.clone());
        tokio::spawn(async move {
            // A failed handshake only ends that connection.
            if let Ok(conn) = incoming.await {
                connection(conn, payload, stop).await;
            }
        });
    }
    // The connections' GOAWAYs go first, then CONNECTION_CLOSE with H3_NO_ERROR.
    tokio::time::sleep(Duration::from_millis(50)).await;
    endpoint.close(H3_NO_ERROR.into(), b"shutting down");
    let _ = tokio::time::timeout(Duration::from_secs(1), endpoint.wait_idle()).await;
}

/// Resolves once `stop` turns true (or its sender is gone).
async fn stopping(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

async fn connection(conn: quinn::Connection, payload: Bytes, mut stop: watch::Receiver<bool>) {
    let Ok(mut h3) = h3::server::builder()
        .build::<_, Bytes>(h3_quinn::Connection::new(conn))
        .await
    else {
        return;
    };
    let mut said_goaway = false;
    loop {
        let next = if said_goaway {
            // Requests below the GOAWAY's id are still served until the endpoint closes.
            h3.accept().await
        } else {
            tokio::select! {
                r = h3.accept() => r,
                () = stopping(&mut stop) => {
                    let _ = h3.shutdown(0).await;
                    said_goaway = true;
                    continue;
                }
            }
        };
        match next {
            Ok(Some(resolver)) => {
                let payload = payload.clone();
                tokio::spawn(async move {
                    // A malformed request is refused by h3 (H3_MESSAGE_ERROR) before this.
                    if let Ok((req, stream)) = resolver.resolve_request().await {
                        let _ = answer(req, stream, payload).await;
                    }
                });
            }
            // The client went away, or sent its GOAWAY and its requests are done.
            Ok(None) | Err(_) => return,
        }
    }
}

async fn answer(
    req: http::Request<()>,
    mut stream: Stream,
    payload: Bytes,
) -> Result<(), h3::error::StreamError> {
    // The request body, if any, is read and dropped (every route is a GET).
    while let Some(mut chunk) = stream.recv_data().await? {
        chunk.advance(chunk.remaining());
    }
    let a = routes::route(req.uri().path(), &payload);
    let mut resp = http::Response::builder()
        .status(a.status)
        .body(())
        .expect("a status is a response");
    let headers = resp.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(a.media));
    headers.insert(CONTENT_LENGTH, HeaderValue::from(a.body.len()));
    stream.send_response(resp).await?;
    stream.send_data(a.body).await?;
    stream.finish().await
}
