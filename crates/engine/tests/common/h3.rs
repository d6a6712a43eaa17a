//! An in-process HTTP/3 server (quinn + h3 on a small tokio runtime) for the HTTP/3 driver's
//! tests: each request answered by a handler (or its stream reset), its certificate signed by
//! a test CA, ALPN `h3` unless told otherwise.

use super::base_config;
use super::tls::Pki;
use bytes::{Buf, Bytes};
use serverbench_engine::config::h3_target;
use serverbench_engine::Config;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// What the server does with one request.
pub enum H3Reply {
    /// Answers with this status and body.
    Answer(u16, &'static [u8]),
    /// Resets the stream with this HTTP/3 error code.
    Reset(u64),
    /// Closes the whole connection with this HTTP/3 error code.
    Close(u64),
}

/// What the server saw.
#[derive(Default)]
pub struct H3Seen {
    pub connections: AtomicU64,
    pub requests: AtomicU64,
}

/// Starts the server on a UDP port of 127.0.0.1, offering `alpn`; `handler(n, path)` answers
/// the n-th request. It runs until the test process ends.
pub fn h3_server<F>(pki: &Pki, alpn: &[u8], handler: F) -> (SocketAddr, Arc<H3Seen>)
where
    F: Fn(u64, &str) -> H3Reply + Send + Sync + 'static,
{
    h3_server_with(pki, alpn, false, 100, handler)
}

/// [`h3_server`], taking 0-RTT data on resumed connections when `early`.
pub fn h3_server_early<F>(
    pki: &Pki,
    alpn: &[u8],
    early: bool,
    handler: F,
) -> (SocketAddr, Arc<H3Seen>)
where
    F: Fn(u64, &str) -> H3Reply + Send + Sync + 'static,
{
    h3_server_with(pki, alpn, early, 100, handler)
}

/// [`h3_server`], taking 0-RTT data when `early`, allowing `streams` concurrent requests per
/// connection (its `initial_max_streams_bidi`).
pub fn h3_server_with<F>(
    pki: &Pki,
    alpn: &[u8],
    early: bool,
    streams: u32,
    handler: F,
) -> (SocketAddr, Arc<H3Seen>)
where
    F: Fn(u64, &str) -> H3Reply + Send + Sync + 'static,
{
    let (certs, key) = pki.localhost();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    tls.alpn_protocols = vec![alpn.to_vec()];
    if early {
        tls.max_early_data_size = u32::MAX; // what QUIC asks for 0-RTT
    }
    let quic = quinn::crypto::rustls::QuicServerConfig::try_from(tls).unwrap();
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(quic));
    let mut transport = quinn::TransportConfig::default();
    transport.max_concurrent_bidi_streams(streams.into());
    config.transport_config(Arc::new(transport));
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = udp.local_addr().unwrap();
    let seen = Arc::new(H3Seen::default());
    let (seen2, handler) = (seen.clone(), Arc::new(handler));
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let runtime = quinn::default_runtime().unwrap();
            let endpoint =
                quinn::Endpoint::new(Default::default(), Some(config), udp, runtime).unwrap();
            while let Some(incoming) = endpoint.accept().await {
                let (seen, handler) = (seen2.clone(), handler.clone());
                tokio::spawn(async move {
                    let Ok(conn) = incoming.await else { return };
                    seen.connections.fetch_add(1, Ordering::SeqCst);
                    connection(conn.clone(), conn, seen, handler).await;
                });
            }
        });
    });
    (addr, seen)
}

async fn connection<F>(
    quic: quinn::Connection,
    conn: quinn::Connection,
    seen: Arc<H3Seen>,
    handler: Arc<F>,
) where
    F: Fn(u64, &str) -> H3Reply + Send + Sync + 'static,
{
    let Ok(mut h3) = h3::server::builder()
        .build::<_, Bytes>(h3_quinn::Connection::new(conn))
        .await
    else {
        return;
    };
    while let Ok(Some(resolver)) = h3.accept().await {
        let (seen, handler, quic) = (seen.clone(), handler.clone(), quic.clone());
        tokio::spawn(async move {
            let Ok((req, mut stream)) = resolver.resolve_request().await else {
                return;
            };
            while let Ok(Some(chunk)) = stream.recv_data().await {
                let _ = chunk.remaining();
            }
            let n = seen.requests.fetch_add(1, Ordering::SeqCst);
            match handler(n, req.uri().path()) {
                H3Reply::Reset(code) => {
                    stream.stop_stream(h3::error::Code::from(code));
                }
                H3Reply::Close(code) => {
                    quic.close(quinn::VarInt::from_u64(code).unwrap(), b"test");
                }
                H3Reply::Answer(status, body) => {
                    let resp = http::Response::builder()
                        .status(status)
                        .header("content-type", "text/plain")
                        .body(())
                        .unwrap();
                    if stream.send_response(resp).await.is_ok()
                        && stream.send_data(Bytes::from_static(body)).await.is_ok()
                    {
                        let _ = stream.finish().await;
                    }
                }
            }
        });
    }
}

/// A closed-loop HTTP/3 load of `url` trusting `pki`'s CA: `streams` per connection.
pub fn h3_config(url: &str, streams: u32, pki: &Pki) -> Config {
    h3_config_with(url, streams, pki, |_| {})
}

/// [`h3_config`], with `edit` applied to the spec before it is prepared.
pub fn h3_config_with(
    url: &str,
    streams: u32,
    pki: &Pki,
    edit: impl FnOnce(&mut serverbench_model::LoadSpec),
) -> Config {
    let mut spec = serverbench_model::LoadSpec::default();
    spec.at_urls(&[url.to_string()]).unwrap();
    spec.transport.protocol = serverbench_model::Protocol::H3;
    spec.transport.streams = Some(streams);
    spec.http.cacert = Some(pki.ca_file.clone());
    spec.http.verify = true;
    edit(&mut spec);
    let target = h3_target(&spec).unwrap();
    let mut cfg = base_config(target.addr, vec![url.to_string()], target.protocol);
    cfg.tls = target.tls;
    cfg.spec.transport = spec.transport;
    cfg.spec.http3 = spec.http3;
    cfg
}
