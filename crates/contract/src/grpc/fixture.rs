//! A tiny in-process gRPC server of `serverbench.Bench` on the `h2` crate for the tests of the
//! `grpc` checks: correct by default, with each way a server can break a rule switchable on, so
//! every check is shown to fail on the flaw it is there for.

use super::messages::{chunk, path, Chunk, Count, Payload, SumReply, SumRequest};
use bytes::Bytes;
use h2::server::SendResponse;
use h2::RecvStream;
use http::{HeaderMap, Request, Response};
use prost::Message;
use serverbench_wire::grpc::{framed, Deframer};
use std::io::Read;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

/// What the fixture gets wrong (nothing by default).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Flaws {
    /// Answers every `Sum` with HTTP 200 and `grpc-status: 13` (the right reply before it).
    pub(crate) status_13: bool,
    /// Answers `a + b + 1`.
    pub(crate) wrong_sum: bool,
    /// Ends every answer but bidi's after its DATA, without trailers.
    pub(crate) no_trailers: bool,
    /// Says its `Sum` reply is 2 bytes longer than it is.
    pub(crate) long_prefix: bool,
    /// Answers `content-type: application/json`.
    pub(crate) wrong_content_type: bool,
    /// Echoes at most 64 KiB.
    pub(crate) cuts_echo: bool,
    /// Sends chunks 0 and 1 of a stream in the wrong order.
    pub(crate) swaps_chunks: bool,
    /// Has no `ClientStream` (12 UNIMPLEMENTED at once, as a server built before it).
    pub(crate) no_client_stream: bool,
    /// Answers a client stream after its first DATA frame, with what it has read so far.
    pub(crate) answers_early: bool,
    /// Counts a client-stream chunk's whole message (its seq and field tags too) as its size.
    pub(crate) miscounts: bool,
    /// Echoes bidi chunks only after the client's stream ended.
    pub(crate) bidi_waits: bool,
    /// Answers an unknown method with HTTP 404.
    pub(crate) unknown_404: bool,
    /// Answers a malformed `Sum` with `Sum(0, 0)` (a lenient decoder).
    pub(crate) lenient: bool,
    /// Ignores `grpc-timeout`.
    pub(crate) ignores_deadline: bool,
    /// Ends a call past its deadline with RST_STREAM (CANCEL), as grpc-go does (not a flaw).
    pub(crate) resets_on_deadline: bool,
    /// Accepts messages of any size.
    pub(crate) no_limit: bool,
    /// Refuses `grpc-encoding: gzip` with 12 UNIMPLEMENTED.
    pub(crate) no_gzip: bool,
    /// Resets streams with REFUSED_STREAM beyond this many open at once.
    pub(crate) max_open: Option<usize>,
    /// Answers an HTTP/1.1 request with `HTTP/1.1 200 OK`.
    pub(crate) answers_http11: bool,
}

/// The receive limit of a correct server.
const LIMIT: u64 = 4 << 20;

/// Starts the fixture on a free local port (h2c with prior knowledge).
pub(crate) fn serve(flaws: Flaws) -> SocketAddr {
    start(flaws, None)
}

/// Starts the fixture behind TLS with `config` (its ALPN decides what is negotiated).
pub(crate) fn serve_tls(flaws: Flaws, config: Arc<rustls::ServerConfig>) -> SocketAddr {
    start(flaws, Some(config))
}

fn start(flaws: Flaws, tls: Option<Arc<rustls::ServerConfig>>) -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
            while let Ok((sock, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    match acceptor {
                        None => cleartext(sock, flaws).await,
                        Some(a) => {
                            if let Ok(s) = a.accept(sock).await {
                                connection(s, flaws).await;
                            }
                        }
                    }
                });
            }
        });
    });
    addr
}

/// A cleartext connection: an HTTP/1.1 request (refused, or answered 200 when that is the
/// flaw), else HTTP/2 with prior knowledge.
async fn cleartext(sock: tokio::net::TcpStream, flaws: Flaws) {
    let mut first = [0u8; 4];
    if sock.peek(&mut first).await.is_ok() && &first == b"POST" {
        if flaws.answers_http11 {
            let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
            let _ = sock.try_write(ok);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        return;
    }
    connection(sock, flaws).await;
}

async fn connection<T>(io: T, flaws: Flaws)
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let Ok(mut conn) = h2::server::handshake(io).await else {
        return;
    };
    let open = Arc::new(AtomicUsize::new(0));
    while let Some(Ok((req, mut respond))) = conn.accept().await {
        if flaws.max_open.is_some_and(|m| open.load(SeqCst) >= m) {
            respond.send_reset(h2::Reason::REFUSED_STREAM);
            continue;
        }
        let open = open.clone();
        open.fetch_add(1, SeqCst);
        tokio::spawn(async move {
            call(req, respond, flaws).await;
            open.fetch_sub(1, SeqCst);
        });
    }
}

/// A response head: 200 and gRPC's content type.
fn head(flaws: Flaws) -> Response<()> {
    let ct = if flaws.wrong_content_type {
        "application/json"
    } else {
        "application/grpc"
    };
    Response::builder()
        .status(200)
        .header("content-type", ct)
        .body(())
        .unwrap()
}

fn trailers(code: u32, message: &str) -> HeaderMap {
    let mut t = HeaderMap::new();
    t.insert("grpc-status", code.to_string().parse().unwrap());
    if !message.is_empty() {
        t.insert("grpc-message", message.replace(' ', "%20").parse().unwrap());
    }
    t
}

/// A trailers-only response with `code`.
fn status_only(mut respond: SendResponse<Bytes>, flaws: Flaws, code: u32, message: &str) {
    let mut r = head(flaws);
    r.headers_mut().extend(trailers(code, message));
    let _ = respond.send_response(r, true);
}

/// The messages of a request stream (decompressed), or the status to refuse it with.
async fn read_all(
    mut body: RecvStream,
    gz: bool,
    flaws: Flaws,
) -> Result<Vec<Vec<u8>>, (u32, String)> {
    let limit = if flaws.no_limit { u64::MAX >> 1 } else { LIMIT };
    let mut d = Deframer::new(limit);
    let mut out = Vec::new();
    while let Some(data) = body.data().await {
        let data = data.map_err(|e| (13, e.to_string()))?;
        let _ = body.flow_control().release_capacity(data.len());
        for m in d.push(&data).map_err(|e| (8, e.to_string()))? {
            out.push(inflate(m.data, m.compressed, gz, flaws)?);
        }
    }
    Ok(out)
}

fn inflate(
    data: Vec<u8>,
    compressed: bool,
    gz: bool,
    flaws: Flaws,
) -> Result<Vec<u8>, (u32, String)> {
    if !compressed {
        return Ok(data);
    }
    if !gz || flaws.no_gzip {
        return Err((12, "compression not supported".into()));
    }
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(&data[..])
        .read_to_end(&mut out)
        .map_err(|e| (13, e.to_string()))?;
    Ok(out)
}

async fn call(req: Request<RecvStream>, respond: SendResponse<Bytes>, flaws: Flaws) {
    let gz = req
        .headers()
        .get("grpc-encoding")
        .is_some_and(|v| v == "gzip");
    if gz && flaws.no_gzip {
        return status_only(respond, flaws, 12, "no gzip");
    }
    let deadline = req
        .headers()
        .get("grpc-timeout")
        .and_then(|v| v.to_str().ok()?.strip_suffix('m')?.parse::<u64>().ok())
        .map(Duration::from_millis)
        .filter(|_| !flaws.ignores_deadline);
    let path = req.uri().path().to_owned();
    let body = req.into_body();
    match path.as_str() {
        path::BIDI_ECHO => return bidi(body, respond, flaws).await,
        path::CLIENT_STREAM if flaws.no_client_stream => {
            return status_only(respond, flaws, 12, "unknown method")
        }
        path::CLIENT_STREAM => return client_stream(body, respond, flaws).await,
        path::SUM | path::ECHO | path::SERVER_STREAM => {}
        _ if flaws.unknown_404 => {
            let mut respond = respond;
            let r = Response::builder().status(404).body(()).unwrap();
            let _ = respond.send_response(r, true);
            return;
        }
        _ => return status_only(respond, flaws, 12, "unknown method"),
    }
    let message = match read_all(body, gz, flaws).await {
        Ok(mut m) if m.len() == 1 => m.remove(0),
        Ok(m) => return status_only(respond, flaws, 13, &format!("{} messages", m.len())),
        Err((code, why)) => return status_only(respond, flaws, code, &why),
    };
    match path.as_str() {
        path::SUM => sum(&message, respond, flaws),
        path::ECHO => echo(&message, respond, flaws),
        _ => server_stream(&message, respond, flaws, deadline).await,
    }
}

/// Sends `messages` and the trailers with `code`.
fn reply(mut respond: SendResponse<Bytes>, flaws: Flaws, messages: &[Vec<u8>], code: u32) {
    let Ok(mut stream) = respond.send_response(head(flaws), false) else {
        return;
    };
    let mut data = Vec::new();
    for m in messages {
        data.extend(framed(m, false));
    }
    let end = flaws.no_trailers;
    let _ = stream.send_data(Bytes::from(data), end);
    if !end {
        let _ = stream.send_trailers(trailers(code, ""));
    }
}

fn sum(message: &[u8], respond: SendResponse<Bytes>, flaws: Flaws) {
    let req = match SumRequest::decode(message) {
        Ok(r) => r,
        Err(_) if flaws.lenient => SumRequest::default(),
        Err(e) => return status_only(respond, flaws, 13, &e.to_string()),
    };
    let extra = i32::from(flaws.wrong_sum);
    let result = req.a.wrapping_add(req.b).wrapping_add(extra);
    let answer = SumReply { result }.encode_to_vec();
    if flaws.long_prefix {
        let mut respond = respond;
        let Ok(mut stream) = respond.send_response(head(flaws), false) else {
            return;
        };
        let mut data = framed(&answer, false);
        data[4] += 2;
        let _ = stream.send_data(Bytes::from(data), false);
        let _ = stream.send_trailers(trailers(0, ""));
        return;
    }
    let code = if flaws.status_13 { 13 } else { 0 };
    reply(respond, flaws, &[answer], code);
}

fn echo(message: &[u8], respond: SendResponse<Bytes>, flaws: Flaws) {
    let Ok(mut p) = Payload::decode(message) else {
        return status_only(respond, flaws, 13, "bad payload");
    };
    if flaws.cuts_echo {
        p.data.truncate(64 << 10);
    }
    reply(respond, flaws, &[p.encode_to_vec()], 0);
}

async fn server_stream(
    message: &[u8],
    respond: SendResponse<Bytes>,
    flaws: Flaws,
    deadline: Option<Duration>,
) {
    let Ok(c) = Count::decode(message) else {
        return status_only(respond, flaws, 13, "bad count");
    };
    let delay = Duration::from_millis(c.delay_ms.max(0) as u64);
    if !delay.is_zero() {
        let slept = tokio::time::timeout(
            deadline.unwrap_or(Duration::MAX / 4),
            tokio::time::sleep(delay),
        );
        if slept.await.is_err() {
            if flaws.resets_on_deadline {
                let mut respond = respond;
                return respond.send_reset(h2::Reason::CANCEL);
            }
            return status_only(respond, flaws, 4, "deadline exceeded");
        }
    }
    let mut chunks: Vec<Vec<u8>> = (0..c.n)
        .map(|i| chunk(i, c.size.max(0) as usize).encode_to_vec())
        .collect();
    if flaws.swaps_chunks && chunks.len() > 1 {
        chunks.swap(0, 1);
    }
    reply(respond, flaws, &chunks, 0);
}

async fn bidi(mut body: RecvStream, mut respond: SendResponse<Bytes>, flaws: Flaws) {
    let Ok(mut stream) = respond.send_response(head(flaws), false) else {
        return;
    };
    let mut d = Deframer::new(LIMIT);
    let mut held = Vec::new();
    while let Some(Ok(data)) = body.data().await {
        let _ = body.flow_control().release_capacity(data.len());
        let Ok(messages) = d.push(&data) else { return };
        for m in messages {
            let Ok(c) = Chunk::decode(&m.data[..]) else {
                return;
            };
            let out = framed(&c.encode_to_vec(), false);
            if flaws.bidi_waits {
                held.extend(out);
            } else {
                let _ = stream.send_data(Bytes::from(out), false);
            }
        }
    }
    if !held.is_empty() {
        let _ = stream.send_data(Bytes::from(held), false);
    }
    let _ = stream.send_trailers(trailers(0, ""));
}

/// Reads every chunk (only the first DATA frame with `answers_early`), then answers their count.
async fn client_stream(mut body: RecvStream, respond: SendResponse<Bytes>, flaws: Flaws) {
    let messages = if flaws.answers_early {
        let Some(Ok(data)) = body.data().await else {
            return;
        };
        let mut d = Deframer::new(LIMIT);
        match d.push(&data) {
            Ok(m) => m.into_iter().map(|m| m.data).collect(),
            Err(e) => return status_only(respond, flaws, 8, &e.to_string()),
        }
    } else {
        match read_all(body, false, flaws).await {
            Ok(m) => m,
            Err((code, why)) => return status_only(respond, flaws, code, &why),
        }
    };
    let mut count = Count::default();
    for m in &messages {
        let Ok(c) = Chunk::decode(&m[..]) else {
            return status_only(respond, flaws, 13, "bad chunk");
        };
        count.n += 1;
        count.size += if flaws.miscounts {
            m.len()
        } else {
            c.data.len()
        } as i32;
    }
    reply(respond, flaws, &[count.encode_to_vec()], 0);
}
