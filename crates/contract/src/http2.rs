//! The HTTP/2 checks of spec/contract.md ("Transports"): `h2` over TLS on `TLS_PORT` (ALPN `h2`)
//! and `h2c` with prior knowledge on `PORT`. Every declared endpoint and the 404s on fresh
//! connections, [`STREAMS`] concurrent streams on one connection each answered correctly, and
//! the 1 MiB `/payload` on [`PAYLOAD_STREAMS`] streams at once through the default 64 KiB
//! windows (so the server must honour flow control and the client's WINDOW_UPDATEs).
//!
//! The client is the kept `h2` crate on a current-thread tokio runtime (one per transport):
//! unlike the HTTP/1.1 client, verify does not need to see HTTP/2's bytes, only the streams.

use crate::checks::{compare, declared, not_found, Endpoint};
use crate::diff::Diff;
use crate::http::Response;
use crate::tls::TlsClient;
use crate::Check;
use bytes::Bytes;
use h2::client::SendRequest;
use serverbench_model::Feature;
use serverbench_wire::tls::Negotiated;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::task::JoinSet;

/// Concurrent streams of the many-streams check.
pub const STREAMS: usize = 50;
/// Concurrent `/payload` streams of the flow-control check.
pub const PAYLOAD_STREAMS: usize = 4;
/// Upper bound for connecting, and for one request and its whole answer.
const DEADLINE: Duration = Duration::from_secs(15);
/// Largest body accepted.
const MAX_BODY: usize = 8 * 1024 * 1024;
/// The client's stream and connection windows: HTTP/2's default, so a 1 MiB body needs
/// WINDOW_UPDATEs all the way.
const WINDOW: u32 = 65_535;

/// The overhead of small DATA frames h2 lets buffer before it calls the peer abusive: a gRPC
/// server stream sends each small message in a DATA frame of its own (1,000 in a burst), which
/// h2's default budget (sized on the 64 KiB window) takes for an attack.
const DATA_FRAME_BUDGET: usize = 64 << 20;

/// How the HTTP/2 connection is reached.
#[derive(Debug, Clone, Copy)]
pub enum Transport<'a> {
    /// TLS with ALPN `h2` (the client must offer exactly `h2`).
    Tls(SocketAddr, &'a TlsClient),
    /// Cleartext with prior knowledge.
    Cleartext(SocketAddr),
}

impl Transport<'_> {
    /// The suffix of the check names: ` over h2` or ` over h2c`.
    pub fn suffix(&self) -> &'static str {
        match self {
            Transport::Tls(..) => " over h2",
            Transport::Cleartext(_) => " over h2c",
        }
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        match self {
            Transport::Tls(a, _) | Transport::Cleartext(a) => *a,
        }
    }

    fn scheme(&self) -> &'static str {
        match self {
            Transport::Tls(..) => "https",
            Transport::Cleartext(_) => "http",
        }
    }
}

/// Why an HTTP/2 exchange failed.
#[derive(Debug, thiserror::Error)]
pub enum H2Error {
    /// Connecting or the TLS handshake failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// An HTTP/2 protocol or stream error.
    #[error("HTTP/2: {0}")]
    H2(#[from] h2::Error),
    /// ALPN did not settle on `h2`.
    #[error("ALPN chose {}, not h2 ({negotiated})", negotiated.alpn.unwrap_or("nothing"))]
    Alpn {
        /// What the handshake settled.
        negotiated: Negotiated,
    },
    /// The request could not be built (a bad address).
    #[error("request: {0}")]
    Request(#[from] http::Error),
    /// A body beyond [`MAX_BODY`].
    #[error("body larger than 8 MiB")]
    TooLarge,
    /// Connecting or an answer took longer than [`DEADLINE`].
    #[error("nothing within {} s", DEADLINE.as_secs())]
    Timeout,
}

/// An open HTTP/2 connection (its driver runs on the runtime).
pub(crate) struct H2Conn {
    pub(crate) send: SendRequest<Bytes>,
    pub(crate) negotiated: Option<Negotiated>,
    pub(crate) base: String,
}

/// Connects, (for TLS) checks ALPN chose `h2`, and exchanges the preface and SETTINGS.
pub(crate) async fn connect(t: Transport<'_>) -> Result<H2Conn, H2Error> {
    tokio::time::timeout(DEADLINE, connect_now(t))
        .await
        .unwrap_or(Err(H2Error::Timeout))
}

async fn connect_now(t: Transport<'_>) -> Result<H2Conn, H2Error> {
    let tcp = tokio::net::TcpStream::connect(t.addr()).await?;
    tcp.set_nodelay(true)?;
    let base = format!("{}://{}", t.scheme(), t.addr());
    let mut builder = h2::client::Builder::new();
    builder
        .initial_window_size(WINDOW)
        .initial_connection_window_size(WINDOW)
        .data_frame_budget(DATA_FRAME_BUDGET);
    let (send, negotiated) = match t {
        Transport::Cleartext(_) => (start(&builder, tcp).await?, None),
        Transport::Tls(_, client) => {
            let connector = tokio_rustls::TlsConnector::from(client.config());
            let tls = connector.connect(client.server_name(), tcp).await?;
            let negotiated = Negotiated::of(tls.get_ref().1);
            if negotiated.alpn != Some("h2") {
                return Err(H2Error::Alpn { negotiated });
            }
            (start(&builder, tls).await?, Some(negotiated))
        }
    };
    Ok(H2Conn {
        send,
        negotiated,
        base,
    })
}

/// The HTTP/2 handshake on `io`; the connection is driven by a task of its own.
async fn start<T>(builder: &h2::client::Builder, io: T) -> Result<SendRequest<Bytes>, H2Error>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (send, conn) = builder.handshake(io).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(send)
}

/// One GET on the connection `send` belongs to; the body is read whole, its capacity released
/// as it arrives.
async fn get(send: SendRequest<Bytes>, base: &str, path: &str) -> Result<Response, H2Error> {
    tokio::time::timeout(DEADLINE, get_now(send, base, path))
        .await
        .unwrap_or(Err(H2Error::Timeout))
}

async fn get_now(send: SendRequest<Bytes>, base: &str, path: &str) -> Result<Response, H2Error> {
    let req = http::Request::get(format!("{base}{path}"))
        .header("user-agent", "serverbench-verify")
        .body(())?;
    let mut send = send.ready().await?;
    let (answer, _) = send.send_request(req, true)?;
    let (parts, mut body) = answer.await?.into_parts();
    let mut data = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk?;
        let _ = body.flow_control().release_capacity(chunk.len());
        data.extend_from_slice(&chunk);
        if data.len() > MAX_BODY {
            return Err(H2Error::TooLarge);
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
        version: "HTTP/2".into(),
        status: parts.status.as_u16(),
        headers,
        body: data,
        close_delimited: false,
    })
}

/// Every HTTP/2 check over `t` for the declared features.
pub fn check_all(t: Transport<'_>, features: &[Feature]) -> Vec<Check> {
    block_on(t, run(t, features))
}

/// The quick check before a run's HTTP/2 laps: the connection, then one GET per declared
/// endpoint.
pub fn quick(t: Transport<'_>, features: &[Feature]) -> Vec<Check> {
    block_on(t, async {
        let mut out = vec![check_connection(t).await];
        if out[0].passed() {
            for e in declared(features) {
                out.push(check_endpoint(t, e, true).await);
            }
        }
        out
    })
}

/// Runs `checks` on a runtime of their own and names them with `t`'s suffix.
fn block_on(t: Transport<'_>, checks: impl std::future::Future<Output = Vec<Check>>) -> Vec<Check> {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            let d = Diff::error("runtime", "a tokio runtime for the HTTP/2 client", &e);
            return vec![Check::new(format!("HTTP/2 client{}", t.suffix()), vec![d])];
        }
    };
    let mut out = runtime.block_on(checks);
    for c in &mut out {
        c.name.push_str(t.suffix());
    }
    out
}

async fn run(t: Transport<'_>, features: &[Feature]) -> Vec<Check> {
    let mut out = vec![check_connection(t).await];
    if !out[0].passed() {
        return out;
    }
    let mut good = Vec::new();
    for e in declared(features) {
        let c = check_endpoint(t, e, true).await;
        if c.passed() {
            good.push(e);
        }
        out.push(c);
    }
    let strict = features.contains(&Feature::Routes);
    for p in ["/serverbench-unknown", "/hel"] {
        let mut c = check_endpoint(t, not_found(p), strict).await;
        c.name = format!("GET {p} (unknown path) -> 404");
        out.push(c);
    }
    let small: Vec<Endpoint> = crate::pipeline::small(&good);
    let mix = if small.is_empty() {
        good.clone()
    } else {
        small
    };
    if !mix.is_empty() {
        out.push(check_streams(t, mix, STREAMS).await);
    }
    if let Some(e) = good.iter().find(|e| e.feature == Feature::Payload) {
        out.push(check_payload_streams(t, *e, PAYLOAD_STREAMS).await);
    }
    out
}

/// The connection preface, SETTINGS and (over TLS) ALPN `h2`; notes what was negotiated.
async fn check_connection(t: Transport<'_>) -> Check {
    let name = "HTTP/2 connection (preface and SETTINGS)";
    let conn = match connect(t).await {
        Ok(c) => c,
        Err(e) => {
            let d = Diff::error("connection", "an HTTP/2 connection", &e);
            return Check::new(name, vec![d]);
        }
    };
    let mut check = Check::pass(name);
    if let Some(n) = conn.negotiated {
        check.note = Some(n.to_string());
    }
    check
}

/// One GET on a fresh connection, compared with `e`.
async fn check_endpoint(t: Transport<'_>, e: Endpoint, strict: bool) -> Check {
    let name = format!("GET {}", e.path);
    let got = match connect(t).await {
        Ok(c) => get(c.send, &c.base, e.path).await,
        Err(err) => Err(err),
    };
    let diffs = match got {
        Ok(r) => compare(&e, &r, strict),
        Err(err) => vec![Diff::error(
            "response",
            format!("{} {}", e.status, e.path),
            &err,
        )],
    };
    Check::new(name, diffs)
}

/// `n` requests cycling through `eps`, all sent before any answer is read, on one connection.
async fn check_streams(t: Transport<'_>, eps: Vec<Endpoint>, n: usize) -> Check {
    let name = format!("{n} concurrent streams on one connection");
    let plan: Vec<Endpoint> = (0..n).map(|i| eps[i % eps.len()]).collect();
    let (check, allowed) = concurrent(t, &name, &plan).await;
    match allowed {
        // h2 counts a SETTINGS_MAX_CONCURRENT_STREAMS never sent as usize::MAX.
        Some(usize::MAX) if check.passed() => {
            check.with_note("the server sets no limit on concurrent streams")
        }
        Some(m) if check.passed() => {
            check.with_note(format!("the server allows {m} concurrent streams"))
        }
        _ => check,
    }
}

/// `n` GETs of `/payload` at once on one connection, through 64 KiB windows.
async fn check_payload_streams(t: Transport<'_>, e: Endpoint, n: usize) -> Check {
    let name = format!(
        "GET {} on {n} streams at once, {} KiB windows",
        e.path,
        (WINDOW + 1) / 1024
    );
    concurrent(t, &name, &vec![e; n]).await.0
}

/// Sends every request of `plan` at once on one connection and compares each answer; also
/// returns the server's SETTINGS_MAX_CONCURRENT_STREAMS as the client saw it.
///
/// One request is answered first, so the server's SETTINGS are in force before the burst: a
/// client that opens streams before it has them may see the excess refused (REFUSED_STREAM),
/// which is the protocol working, not a flaw.
async fn concurrent(t: Transport<'_>, name: &str, plan: &[Endpoint]) -> (Check, Option<usize>) {
    let conn = match connect(t).await {
        Ok(c) => c,
        Err(e) => {
            let d = Diff::error("connection", "an HTTP/2 connection", &e);
            return (Check::new(name, vec![d]), None);
        }
    };
    if let Err(e) = get(conn.send.clone(), &conn.base, plan[0].path).await {
        let d = Diff::error("first request", "an answer before the burst", &e);
        return (Check::new(name, vec![d]), None);
    }
    let mut set = JoinSet::new();
    for (i, e) in plan.iter().copied().enumerate() {
        let (send, base) = (conn.send.clone(), conn.base.clone());
        set.spawn(async move { (i, e, get(send, &base, e.path).await) });
    }
    let mut failed: Vec<(usize, Vec<Diff>)> = Vec::new();
    while let Some(joined) = set.join_next().await {
        let (i, e, got) = match joined {
            Ok(r) => r,
            Err(err) => {
                failed.push((usize::MAX, vec![Diff::error("stream", "answered", &err)]));
                continue;
            }
        };
        let diffs = match got {
            Ok(r) => compare(&e, &r, true),
            Err(err) => vec![Diff::error(
                "response",
                format!("{} {}", e.status, e.path),
                &err,
            )],
        };
        if !diffs.is_empty() {
            failed.push((i, diffs));
        }
    }
    let allowed = conn.send.current_max_send_streams();
    (summarize(name, plan, failed), Some(allowed))
}

/// The first failed stream's diffs (in request order) and how many failed.
pub(crate) fn summarize(
    name: &str,
    plan: &[Endpoint],
    mut failed: Vec<(usize, Vec<Diff>)>,
) -> Check {
    failed.sort_by_key(|(i, _)| *i);
    let Some((first, diffs)) = failed.first().cloned() else {
        return Check::pass(name);
    };
    let at = match plan.get(first) {
        Some(e) => format!("stream {} of {} (GET {})", first + 1, plan.len(), e.path),
        None => "a stream".to_owned(),
    };
    let mut out = crate::shapes::prefixed(diffs, &at);
    out.push(Diff::new(
        "streams that failed",
        format!("0 of {}", plan.len()),
        format!("{} of {}", failed.len(), plan.len()),
    ));
    Check::new(name, out)
}
