//! verify's HTTP/3 client: a quinn endpoint trusting exactly the certificate of `TLS_PORT`,
//! offering ALPN `h3` alone over TLS 1.3, and the h3 crate's client on the connection (its
//! driver on a task of its own). The quinn connection is kept beside it, so a check can open a
//! raw request stream on the same connection ([`super::raw`]).

use crate::http::Response;
use crate::tls::TlsClient;
use bytes::{Buf, Bytes};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Upper bound for one request and its whole answer (and for opening a watch connection).
pub(crate) const DEADLINE: Duration = Duration::from_secs(15);
/// Upper bound for the QUIC handshake: a UDP port nobody answers on says nothing (no reset as
/// TCP has), so this is how long a silent `H3_PORT` costs.
pub(crate) const HANDSHAKE: Duration = Duration::from_secs(5);
/// Largest body accepted.
const MAX_BODY: usize = 8 * 1024 * 1024;

/// The h3 client's handle for sending requests on one connection.
pub(crate) type Sender = h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>;

/// Why an HTTP/3 exchange failed.
#[derive(Debug, thiserror::Error)]
pub enum H3Error {
    /// The local UDP socket or the QUIC configuration.
    #[error("{0}")]
    Setup(String),
    /// The QUIC connection could not be made or was lost (handshake, ALPN, a close).
    #[error("QUIC: {0}")]
    Quic(#[from] quinn::ConnectionError),
    /// ALPN did not settle on `h3`.
    #[error("ALPN chose {0}, not h3")]
    Alpn(String),
    /// The h3 layer refused the connection.
    #[error("HTTP/3: {0}")]
    Connection(#[from] h3::error::ConnectionError),
    /// A request stream failed (reset, a bad frame).
    #[error("HTTP/3 stream: {0}")]
    Stream(#[from] h3::error::StreamError),
    /// The request could not be built.
    #[error("request: {0}")]
    Request(#[from] http::Error),
    /// A body beyond 8 MiB.
    #[error("body larger than 8 MiB")]
    TooLarge,
    /// No QUIC handshake within [`HANDSHAKE`]: nothing answers on the UDP port.
    #[error("no QUIC answer within {0} s (nothing listening on the UDP port, or it drops)")]
    NoAnswer(u64),
    /// Connecting or an answer took longer than [`DEADLINE`].
    #[error("nothing within {} s", DEADLINE.as_secs())]
    Timeout,
}

/// One QUIC connection with HTTP/3 on it.
pub(crate) struct H3Conn {
    /// Sends requests (clone it for concurrent ones).
    pub(crate) send: Sender,
    /// The QUIC connection itself, for raw streams and its close reason.
    pub(crate) quic: quinn::Connection,
    /// `https://HOST:H3_PORT`.
    pub(crate) base: String,
    /// What the handshake settled, for the record.
    pub(crate) negotiated: String,
    /// Keeps the endpoint (its socket) alive as long as the connection.
    _endpoint: quinn::Endpoint,
}

/// The hash of the TLS 1.3 key schedule, seen through the length of the handshake secret
/// (quinn does not tell the negotiated suite; the secret's length tells SHA-384 from SHA-256).
#[derive(Debug, Default)]
struct SecretLen(Mutex<Option<usize>>);

impl rustls::KeyLog for SecretLen {
    fn will_log(&self, label: &str) -> bool {
        label == "CLIENT_HANDSHAKE_TRAFFIC_SECRET"
    }

    fn log(&self, label: &str, _client_random: &[u8], secret: &[u8]) {
        if self.will_log(label) {
            *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(secret.len());
        }
    }
}

/// A QUIC client endpoint for `tls` (its trust; ALPN and versions are set here).
fn endpoint(
    tls: &TlsClient,
    addr: SocketAddr,
) -> Result<(quinn::Endpoint, Arc<SecretLen>), H3Error> {
    let mut config = (*tls.config()).clone();
    config.alpn_protocols = vec![b"h3".to_vec()];
    let secrets = Arc::new(SecretLen::default());
    config.key_log = secrets.clone();
    let quic = quinn::crypto::rustls::QuicClientConfig::try_from(Arc::new(config))
        .map_err(|e| H3Error::Setup(format!("QUIC TLS configuration: {e}")))?;
    let mut client = quinn::ClientConfig::new(Arc::new(quic));
    let mut transport = quinn::TransportConfig::default();
    let idle = quinn::IdleTimeout::try_from(Duration::from_secs(10)).expect("10 s fits");
    transport.max_idle_timeout(Some(idle));
    client.transport_config(Arc::new(transport));
    let bind: SocketAddr = match addr {
        SocketAddr::V4(_) => ([0, 0, 0, 0], 0).into(),
        SocketAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let mut endpoint = quinn::Endpoint::client(bind)
        .map_err(|e| H3Error::Setup(format!("UDP socket on {bind}: {e}")))?;
    endpoint.set_default_client_config(client);
    Ok((endpoint, secrets))
}

/// The QUIC handshake to `addr` (ALPN `h3` checked), without HTTP/3 on it yet.
pub(crate) async fn quic(
    tls: &TlsClient,
    addr: SocketAddr,
    name: &str,
) -> Result<(quinn::Endpoint, quinn::Connection, String), H3Error> {
    let (endpoint, secrets) = endpoint(tls, addr)?;
    let connecting = endpoint
        .connect(addr, name)
        .map_err(|e| H3Error::Setup(format!("connect to {addr} as {name}: {e}")))?;
    let conn = match tokio::time::timeout(HANDSHAKE, connecting).await {
        Ok(c) => c?,
        Err(_) => return Err(H3Error::NoAnswer(HANDSHAKE.as_secs())),
    };
    let alpn = conn
        .handshake_data()
        .and_then(|d| d.downcast::<quinn::crypto::rustls::HandshakeData>().ok())
        .and_then(|d| d.protocol)
        .map(|p| String::from_utf8_lossy(&p).into_owned());
    if alpn.as_deref() != Some("h3") {
        return Err(H3Error::Alpn(alpn.unwrap_or_else(|| "nothing".into())));
    }
    let secret = *secrets.0.lock().unwrap_or_else(|e| e.into_inner());
    let suite = match secret {
        Some(48) => "TLS_AES_256_GCM_SHA384",
        Some(32) => "a SHA-256 suite (TLS_AES_128_GCM_SHA256 or TLS_CHACHA20_POLY1305_SHA256)",
        _ => "a suite quinn does not name",
    };
    let negotiated = format!("QUIC v1, TLS 1.3, {suite}, ALPN h3");
    Ok((endpoint, conn, negotiated))
}

/// Connects, checks ALPN `h3`, and starts HTTP/3 (the control streams and SETTINGS).
pub(crate) async fn connect(
    tls: &TlsClient,
    addr: SocketAddr,
    name: &str,
) -> Result<H3Conn, H3Error> {
    let (endpoint, quic_conn, negotiated) = quic(tls, addr, name).await?;
    let h3_conn = h3_quinn::Connection::new(quic_conn.clone());
    let mut builder = h3::client::builder();
    let start = builder.send_grease(false).build(h3_conn);
    let (mut driver, send) = match tokio::time::timeout(DEADLINE, start).await {
        Ok(r) => r?,
        Err(_) => return Err(H3Error::Timeout),
    };
    tokio::spawn(async move {
        let _ = driver.wait_idle().await;
    });
    Ok(H3Conn {
        send,
        quic: quic_conn,
        base: format!("https://{}", host_port(name, addr)),
        negotiated,
        _endpoint: endpoint,
    })
}

/// `name:port`, bracketing an IPv6 literal.
fn host_port(name: &str, addr: SocketAddr) -> String {
    match name.parse::<std::net::Ipv6Addr>() {
        Ok(_) => format!("[{name}]:{}", addr.port()),
        Err(_) => format!("{name}:{}", addr.port()),
    }
}

/// One request (`body` is sent when given, with its `content-length`) and its whole answer.
pub(crate) async fn request(
    send: Sender,
    base: &str,
    method: http::Method,
    path: &str,
    body: Option<Bytes>,
) -> Result<Response, H3Error> {
    tokio::time::timeout(DEADLINE, request_now(send, base, method, path, body))
        .await
        .unwrap_or(Err(H3Error::Timeout))
}

async fn request_now(
    mut send: Sender,
    base: &str,
    method: http::Method,
    path: &str,
    body: Option<Bytes>,
) -> Result<Response, H3Error> {
    let mut req = http::Request::builder()
        .method(method)
        .uri(format!("{base}{path}"))
        .header("user-agent", "serverbench-verify");
    if let Some(b) = &body {
        req = req.header("content-length", b.len());
    }
    let mut stream = send.send_request(req.body(())?).await?;
    if let Some(b) = body {
        stream.send_data(b).await?;
    }
    stream.finish().await?;
    let (parts, ()) = stream.recv_response().await?.into_parts();
    let mut data = Vec::new();
    while let Some(mut chunk) = stream.recv_data().await? {
        while chunk.has_remaining() {
            let piece = chunk.chunk();
            data.extend_from_slice(piece);
            let n = piece.len();
            chunk.advance(n);
        }
        if data.len() > MAX_BODY {
            return Err(H3Error::TooLarge);
        }
    }
    let headers = parts
        .headers
        .iter()
        .map(|(n, v)| {
            let v = String::from_utf8_lossy(v.as_bytes()).into_owned();
            (n.as_str().to_owned(), v)
        })
        .collect();
    Ok(Response {
        version: "HTTP/3".into(),
        status: parts.status.as_u16(),
        headers,
        body: data,
        close_delimited: false,
    })
}

/// A GET of `path`.
pub(crate) async fn get(send: Sender, base: &str, path: &str) -> Result<Response, H3Error> {
    request(send, base, http::Method::GET, path, None).await
}
