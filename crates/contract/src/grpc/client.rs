//! verify's gRPC calls on the kept `h2` client: each call's response judged by the protocol
//! (`:status` 200, `content-type` `application/grpc`, the message framing, the `grpc-status`
//! trailer or a trailers-only response) before its messages and status are compared.

use crate::diff::Diff;
use crate::http2::H2Error;
use bytes::Bytes;
use h2::client::SendRequest;
use h2::RecvStream;
use http::HeaderMap;
use serverbench_wire::grpc::{self, Deframer, Message, Status};
use std::io::Read;
use std::time::{Duration, Instant};

/// Upper bound for one call and its whole answer.
pub const CALL_DEADLINE: Duration = Duration::from_secs(15);
/// The largest message verify accepts from a server (the 1 MiB echo and then some).
pub const MAX_MESSAGE: u64 = 8 << 20;

/// One call's request: the method, extra headers, and the framed request messages.
#[derive(Debug, Clone)]
pub struct Call {
    pub path: &'static str,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Call {
    /// A unary call of `path` with `message` (encoded, not yet framed).
    pub fn unary(path: &'static str, message: &[u8]) -> Call {
        Call {
            path,
            headers: Vec::new(),
            body: grpc::framed(message, false),
        }
    }

    /// The same call with one more header.
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Call {
        self.headers.push((name, value.into()));
        self
    }
}

/// A response as it came: head, DATA, trailers, and how long it took.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    pub trailers: Option<HeaderMap>,
    pub elapsed: Duration,
}

/// A judged response: its messages (decompressed) and the status it ended with.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub messages: Vec<Vec<u8>>,
    pub status: Status,
    /// True when the server answered trailers-only (a HEADERS frame that ends the stream).
    pub trailers_only: bool,
    pub elapsed: Duration,
}

/// The request's head: POST, `te: trailers`, `content-type: application/grpc`.
pub fn request(base: &str, call: &Call) -> Result<http::Request<()>, H2Error> {
    let mut req = http::Request::post(format!("{base}{}", call.path))
        .header("content-type", grpc::CONTENT_TYPE)
        .header("te", "trailers")
        .header("user-agent", "serverbench-verify");
    for (n, v) in &call.headers {
        req = req.header(*n, v.as_str());
    }
    Ok(req.body(())?)
}

/// Sends `call` on the connection `send` belongs to and reads its whole response.
pub async fn send(send: SendRequest<Bytes>, base: &str, call: &Call) -> Result<Reply, H2Error> {
    tokio::time::timeout(CALL_DEADLINE, send_now(send, base, call))
        .await
        .unwrap_or(Err(H2Error::Timeout))
}

async fn send_now(send: SendRequest<Bytes>, base: &str, call: &Call) -> Result<Reply, H2Error> {
    let req = request(base, call)?;
    let started = Instant::now();
    let mut send = send.ready().await?;
    let (answer, mut stream) = send.send_request(req, false)?;
    stream.send_data(Bytes::from(call.body.clone()), true)?;
    let (parts, body) = answer.await?.into_parts();
    let (body, trailers) = read_body(body).await?;
    Ok(Reply {
        status: parts.status.as_u16(),
        headers: parts.headers,
        body,
        trailers,
        elapsed: started.elapsed(),
    })
}

/// Opens a call to `path` on `conn` whose request stream stays open (a streaming call): the
/// answer to await and the stream to send its messages on. Errors are diffs of `sent`.
pub(crate) async fn open_stream(
    conn: &crate::http2::H2Conn,
    path: &'static str,
) -> Result<(h2::client::ResponseFuture, h2::SendStream<Bytes>), Diff> {
    let err = |e: &dyn std::fmt::Display| Diff::error("request", "sent", e);
    let call = Call {
        path,
        headers: Vec::new(),
        body: Vec::new(),
    };
    let req = request(&conn.base, &call).map_err(|e| err(&e))?;
    let mut send = conn.send.clone().ready().await.map_err(|e| err(&e))?;
    send.send_request(req, false).map_err(|e| err(&e))
}

/// The rest of a response: its DATA (capacity released as it arrives) and its trailers.
pub async fn read_body(mut body: RecvStream) -> Result<(Vec<u8>, Option<HeaderMap>), H2Error> {
    let mut data = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk?;
        let _ = body.flow_control().release_capacity(chunk.len());
        data.extend_from_slice(&chunk);
        if data.len() as u64 > 2 * MAX_MESSAGE {
            return Err(H2Error::TooLarge);
        }
    }
    Ok((data, body.trailers().await?))
}

/// The head of a response must be a gRPC one: `:status` 200 and `content-type`
/// `application/grpc` (or `application/grpc+…`).
pub fn judge_head(status: u16, headers: &HeaderMap) -> Result<(), Diff> {
    if status != 200 {
        return Err(Diff::new("HTTP :status", "200", status.to_string()));
    }
    let ct = headers
        .get("content-type")
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let ok = ct.as_deref().is_some_and(|c| {
        let media = c.split(';').next().unwrap_or("").trim();
        media == grpc::CONTENT_TYPE || media.starts_with("application/grpc+")
    });
    if !ok {
        let got = ct.unwrap_or_else(|| "none".into());
        return Err(Diff::new("content-type", grpc::CONTENT_TYPE, got));
    }
    Ok(())
}

/// Judges a whole response by the protocol: its head, the framing of its messages (each
/// decompressed per its flag and the response's `grpc-encoding`), and its status (from the
/// trailers, or from the head of a trailers-only response).
pub fn judge(r: &Reply) -> Result<Outcome, Diff> {
    judge_head(r.status, &r.headers)?;
    let trailers_only = r.trailers.is_none() && r.body.is_empty();
    let block = match (&r.trailers, trailers_only) {
        (Some(t), _) => t,
        (None, true) => &r.headers,
        (None, false) => {
            let got = "the stream ended after DATA without trailers";
            return Err(Diff::new("trailers", "grpc-status in trailers", got));
        }
    };
    let status = Status::from_headers(|n| block.get(n).map(|v| v.as_bytes()))
        .map_err(|e| Diff::error("grpc-status", "a status in the trailers", &e))?;
    let messages = messages(&r.body, &r.headers)?;
    Ok(Outcome {
        messages,
        status,
        trailers_only,
        elapsed: r.elapsed,
    })
}

/// The messages of a response body, framing checked, each decompressed when flagged.
pub fn messages(body: &[u8], headers: &HeaderMap) -> Result<Vec<Vec<u8>>, Diff> {
    let mut d = Deframer::new(MAX_MESSAGE);
    let framed = d
        .push(body)
        .and_then(|m| d.finish().map(|()| m))
        .map_err(|e| Diff::error("message framing", "length-prefixed messages", &e))?;
    framed.into_iter().map(|m| decompress(m, headers)).collect()
}

/// A message's bytes, gunzipped when its flag is set and the response's `grpc-encoding` is
/// `gzip` (a flag set without an encoding is a diff).
pub fn decompress(m: Message, headers: &HeaderMap) -> Result<Vec<u8>, Diff> {
    let encoding = headers
        .get("grpc-encoding")
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    match (m.compressed, encoding.as_deref()) {
        (false, _) => Ok(m.data),
        (true, Some("gzip")) => gunzip(&m.data),
        (true, other) => Err(Diff::new(
            "compressed flag",
            "set only with a grpc-encoding",
            format!("set, grpc-encoding {}", other.unwrap_or("absent")),
        )),
    }
}

/// Compresses one message for `grpc-encoding: gzip`.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let _ = e.write_all(data);
    e.finish().unwrap_or_default()
}

fn gunzip(data: &[u8]) -> Result<Vec<u8>, Diff> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(data)
        .read_to_end(&mut out)
        .map_err(|e| Diff::error("gzip message", "a gzip stream", &e))?;
    Ok(out)
}

/// The status must be OK and there must be `n` messages.
pub fn expect_ok(o: &Outcome, n: usize) -> Result<(), Diff> {
    if !o.status.is_ok() {
        return Err(Diff::new("grpc-status", "0 OK", o.status.to_string()));
    }
    if o.messages.len() != n {
        let (e, g) = (n.to_string(), o.messages.len().to_string());
        return Err(Diff::new("messages", e, g));
    }
    Ok(())
}

/// A message that must decode as `M`.
pub fn decode<M: prost::Message + Default>(what: &str, bytes: &[u8]) -> Result<M, Diff> {
    M::decode(bytes).map_err(|e| Diff::error(what, "a valid protobuf message", &e))
}
