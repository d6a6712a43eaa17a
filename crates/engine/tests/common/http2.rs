//! In-process HTTP/2 servers on loopback (the `h2` crate on a tokio runtime of their own): h2c
//! with prior knowledge, or h2 over rustls with ALPN; stream limits, windows, GOAWAY after a
//! number of requests, and handlers that reset streams.

use super::{base_config, tls::Pki};
use bytes::Bytes;
use serverbench_engine::config::http_target;
use serverbench_engine::Config;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What the server answers to one request.
pub enum H2Reply {
    /// This status, these extra headers and this body.
    Send(u16, Vec<(String, String)>, Vec<u8>),
    /// Reset the stream with this error code.
    Reset(h2::Reason),
}

pub fn h2_ok(body: &str) -> H2Reply {
    H2Reply::Send(200, Vec::new(), body.as_bytes().to_vec())
}

/// How the server runs.
#[derive(Clone, Default)]
pub struct H2Server {
    /// SETTINGS_MAX_CONCURRENT_STREAMS.
    pub max_concurrent: Option<u32>,
    /// The server's receive windows: per stream, for the connection.
    pub window: Option<u32>,
    pub conn_window: Option<u32>,
    /// A graceful GOAWAY once a connection has taken this many requests.
    pub goaway_after: Option<u64>,
    /// TLS with these ALPN protocols (None: h2c).
    pub tls: Option<Vec<Vec<u8>>>,
}

/// What the server saw.
#[derive(Default)]
pub struct H2Seen {
    pub connections: AtomicU64,
    pub requests: AtomicU64,
    /// Request body bytes received.
    pub body_bytes: AtomicU64,
    /// The most streams open at once on one connection.
    pub max_open: AtomicU64,
}

type Handler = dyn Fn(u64, &str) -> H2Reply + Send + Sync;

/// Starts a server; `handler(n, path)` answers the n-th request (over all connections).
/// With `tls`, `pki` signs its certificate.
pub fn h2_server<F>(server: H2Server, pki: Option<&Pki>, handler: F) -> (SocketAddr, Arc<H2Seen>)
where
    F: Fn(u64, &str) -> H2Reply + Send + Sync + 'static,
{
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(H2Seen::default());
    let acceptor = server.tls.clone().map(|alpn| {
        let (certs, key) = pki.expect("a PKI for TLS").localhost();
        let mut c = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
        c.alpn_protocols = alpn;
        tokio_rustls::TlsAcceptor::from(Arc::new(c))
    });
    let handler: Arc<Handler> = Arc::new(handler);
    let seen2 = seen.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    continue;
                };
                let (server, handler, seen) = (server.clone(), handler.clone(), seen2.clone());
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    seen.connections.fetch_add(1, Ordering::SeqCst);
                    match acceptor {
                        Some(a) => {
                            if let Ok(tls) = a.accept(sock).await {
                                serve(tls, &server, handler, seen).await;
                            }
                        }
                        None => serve(sock, &server, handler, seen).await,
                    }
                });
            }
        });
    });
    (addr, seen)
}

async fn serve<T>(io: T, server: &H2Server, handler: Arc<Handler>, seen: Arc<H2Seen>)
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut b = h2::server::Builder::new();
    if let Some(n) = server.max_concurrent {
        b.max_concurrent_streams(n);
    }
    if let Some(w) = server.window {
        b.initial_window_size(w);
    }
    if let Some(w) = server.conn_window {
        b.initial_connection_window_size(w);
    }
    let Ok(mut conn) = b.handshake::<_, Bytes>(io).await else {
        return;
    };
    let open = Arc::new(AtomicU64::new(0));
    let mut taken = 0;
    while let Some(Ok((req, respond))) = conn.accept().await {
        taken += 1;
        if server.goaway_after == Some(taken) {
            conn.graceful_shutdown();
        }
        let n = seen.requests.fetch_add(1, Ordering::SeqCst);
        let now_open = open.fetch_add(1, Ordering::SeqCst) + 1;
        seen.max_open.fetch_max(now_open, Ordering::SeqCst);
        let (handler, seen, open) = (handler.clone(), seen.clone(), open.clone());
        tokio::spawn(async move {
            respond_to(n, req, respond, &*handler, &seen).await;
            open.fetch_sub(1, Ordering::SeqCst);
        });
    }
}

async fn respond_to(
    n: u64,
    req: http::Request<h2::RecvStream>,
    mut respond: h2::server::SendResponse<Bytes>,
    handler: &Handler,
    seen: &H2Seen,
) {
    let path = req.uri().path().to_string();
    let mut body = req.into_body();
    while let Some(Ok(chunk)) = body.data().await {
        seen.body_bytes
            .fetch_add(chunk.len() as u64, Ordering::SeqCst);
        let _ = body.flow_control().release_capacity(chunk.len());
    }
    // A little service time, so that streams overlap on the connection.
    tokio::time::sleep(Duration::from_micros(200)).await;
    match handler(n, &path) {
        H2Reply::Reset(reason) => respond.send_reset(reason),
        H2Reply::Send(status, headers, data) => {
            let mut r = http::Response::builder().status(status);
            for (name, value) in headers {
                r = r.header(name, value);
            }
            let end = data.is_empty();
            let Ok(mut send) = respond.send_response(r.body(()).unwrap(), end) else {
                return;
            };
            if !end {
                let _ = send.send_data(Bytes::from(data), true);
            }
        }
    }
}

/// An HTTP/2 config for `url`: 1 thread, 2 connections, `streams` each, closed loop, 300 ms.
/// An https:// URL trusts `pki`.
pub fn h2_config(url: &str, streams: u32, pki: Option<&Pki>) -> Config {
    let mut spec = serverbench_model::LoadSpec::default();
    spec.at_urls(&[url.to_string()]).unwrap();
    spec.transport.protocol = match spec.transport.tls {
        true => serverbench_model::Protocol::H2,
        false => serverbench_model::Protocol::H2c,
    };
    spec.transport.streams = Some(streams);
    spec.http.cacert = pki.map(|p| p.ca_file.clone());
    let target = http_target(&spec).unwrap();
    let mut cfg = base_config(target.addr, vec![url.to_string()], target.protocol);
    cfg.tls = target.tls;
    cfg
}
