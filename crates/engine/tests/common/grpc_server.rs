//! An in-process gRPC server on loopback (the `h2` crate, h2c with prior knowledge) that
//! implements the benchmark service (Sum, Echo, ServerStream, ClientStream, BidiEcho) or
//! answers with a fault: a non-zero grpc-status, a trailers-only response, no trailers, a
//! reset, a message longer than its prefix says, a stream one chunk short or with a wrong
//! byte. Self-contained: the CLI's tests include this file too.

use bytes::Bytes;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What the server answers to one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The benchmark service, right.
    None,
    /// HTTP 200, the reply, then `grpc-status: 13`.
    Status13,
    /// HTTP 200 and `grpc-status: 14` in the headers, nothing else (trailers-only).
    TrailersOnly14,
    /// The reply as DATA with END_STREAM, no trailers.
    NoTrailers,
    /// RST_STREAM CANCEL.
    Reset,
    /// A message with a prefix saying 1 byte and 3 following.
    LongMessage,
    /// SumReply{result: 41}: framed right, the wrong sum.
    WrongSum,
    /// The server dies at the n-th call: it stops listening and drops every connection.
    Die,
    /// ServerStream: the last chunk left out (status OK).
    ShortStream,
    /// ServerStream: the last chunk's last byte changed; BidiEcho: every echo's.
    WrongChunk,
}

/// What the server saw.
#[derive(Default)]
pub struct GrpcSeen {
    pub calls: AtomicU64,
    /// Calls whose `grpc-timeout` header was this many milliseconds (the last seen).
    pub timeout: std::sync::Mutex<Option<String>>,
    /// [`Fault::Die`]: the server is gone.
    pub dead: tokio::sync::Notify,
    /// [`GrpcSeen::queue`]: each call holds the first free of these workers for the service
    /// time; `None`: every call is answered after 100 µs.
    workers: std::sync::Mutex<Option<(Vec<std::time::Instant>, Duration)>>,
}

impl GrpcSeen {
    /// From now on each call holds one of `workers` workers for `service` (a known capacity of
    /// `workers / service` calls/s; above it the queue grows without bound). The schedule is
    /// kept in instants, not in when a timer happens to fire, so a busy machine adds latency
    /// but does not lower the capacity.
    pub fn queue(&self, workers: usize, service: Duration) {
        let now = std::time::Instant::now();
        *self.workers.lock().unwrap() = Some((vec![now; workers], service));
    }

    /// When the call arriving now is done: with a queue, the first free worker's turn.
    fn done_at(&self) -> Option<std::time::Instant> {
        let mut guard = self.workers.lock().unwrap();
        let (free_at, service) = guard.as_mut()?;
        let first = (0..free_at.len()).min_by_key(|&i| free_at[i])?;
        let done = free_at[first].max(std::time::Instant::now()) + *service;
        free_at[first] = done;
        Some(done)
    }
}

/// Starts a server answering every call with `fault` (`every`: only every n-th call, the
/// others right).
pub fn grpc_server(fault: Fault, every: u64) -> (SocketAddr, Arc<GrpcSeen>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(GrpcSeen::default());
    let seen2 = seen.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let dead = seen2.clone();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            tokio::spawn(async move {
                loop {
                    let Ok((sock, _)) = listener.accept().await else {
                        continue;
                    };
                    let seen = seen2.clone();
                    tokio::spawn(async move { serve_conn(sock, fault, every, seen).await });
                }
            });
            // Fault::Die: the runtime goes, with the listener and every connection.
            dead.dead.notified().await;
        });
    });
    (addr, seen)
}

/// Serves the calls of one connection (h2c, or TLS already accepted).
pub async fn serve_conn<T>(io: T, fault: Fault, every: u64, seen: Arc<GrpcSeen>)
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let Ok(mut conn) = h2::server::handshake(io).await else {
        return;
    };
    while let Some(Ok((req, respond))) = conn.accept().await {
        let n = seen.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let f = if n.is_multiple_of(every.max(1)) {
            fault
        } else {
            Fault::None
        };
        if f == Fault::Die {
            seen.dead.notify_one();
            return;
        }
        let seen = seen.clone();
        tokio::spawn(async move { answer(req, respond, f, &seen).await });
    }
}

fn framed(m: &[u8]) -> Vec<u8> {
    let mut out = vec![0];
    out.extend_from_slice(&(m.len() as u32).to_be_bytes());
    out.extend_from_slice(m);
    out
}

/// Sum's reply to a SumRequest (fields 1 and 2, small varints), or Echo's.
fn reply_to(path: &str, body: &[u8], fault: Fault) -> Vec<u8> {
    let m = body.get(5..).unwrap_or_default();
    if path.ends_with("/Echo") {
        return m.to_vec();
    }
    if path.ends_with("/ClientStream") {
        let (mut n, mut size) = (0u64, 0u64);
        for chunk in messages(body) {
            n += 1;
            size += fields(chunk).2.len() as u64;
        }
        let mut m = Vec::new();
        for (tag, v) in [(0x08, n), (0x10, size)]
            .into_iter()
            .filter(|(_, v)| *v > 0)
        {
            m.push(tag);
            varint(&mut m, v);
        }
        return m;
    }
    let (mut a, mut b, mut i) = (0u32, 0u32, 0);
    while i + 1 < m.len() {
        match m[i] {
            0x08 => a = m[i + 1] as u32,
            0x10 => b = m[i + 1] as u32,
            _ => {}
        }
        i += 2;
    }
    let sum = a + b - u32::from(fault == Fault::WrongSum);
    vec![0x08, sum as u8]
}

fn headers(status: Option<u32>) -> http::Response<()> {
    let mut r = http::Response::builder()
        .status(200)
        .header("content-type", "application/grpc");
    if let Some(code) = status {
        r = r.header("grpc-status", code.to_string());
    }
    r.body(()).unwrap()
}

async fn answer(
    req: http::Request<h2::RecvStream>,
    mut respond: h2::server::SendResponse<Bytes>,
    fault: Fault,
    seen: &GrpcSeen,
) {
    let path = req.uri().path().to_string();
    if let Some(t) = req.headers().get("grpc-timeout") {
        *seen.timeout.lock().unwrap() = Some(t.to_str().unwrap_or_default().to_string());
    }
    let mut body = req.into_body();
    if path.ends_with("/BidiEcho") {
        return bidi_echo(body, respond, fault).await;
    }
    let mut got = Vec::new();
    while let Some(Ok(chunk)) = body.data().await {
        got.extend_from_slice(&chunk);
        let _ = body.flow_control().release_capacity(chunk.len());
    }
    match seen.done_at() {
        Some(done) => tokio::time::sleep_until(tokio::time::Instant::from_std(done)).await,
        None => tokio::time::sleep(Duration::from_micros(100)).await,
    }
    if path.ends_with("/ServerStream") {
        return server_stream(&got, respond, fault);
    }
    let reply = framed(&reply_to(&path, &got, fault));
    let trailers = |code: u32| {
        let mut t = http::HeaderMap::new();
        t.insert("grpc-status", code.to_string().parse().unwrap());
        t
    };
    match fault {
        Fault::Reset => respond.send_reset(h2::Reason::CANCEL),
        Fault::TrailersOnly14 => {
            let _ = respond.send_response(headers(Some(14)), true);
        }
        _ => {
            let Ok(mut send) = respond.send_response(headers(None), false) else {
                return;
            };
            let (data, code) = match fault {
                Fault::NoTrailers => {
                    let _ = send.send_data(Bytes::from(reply), true);
                    return;
                }
                Fault::Status13 => (reply, 13),
                Fault::LongMessage => (vec![0, 0, 0, 0, 1, 8, 42, 7], 0),
                _ => (reply, 0),
            };
            let _ = send.send_data(Bytes::from(data), false);
            let _ = send.send_trailers(trailers(code));
        }
    }
}

/// The length-prefixed messages of `body` (a short tail left out).
fn messages(mut body: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while body.len() >= 5 {
        let len = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
        let Some(m) = body.get(5..5 + len) else {
            break;
        };
        out.push(m);
        body = &body[5 + len..];
    }
    out
}

fn read_varint(m: &[u8], at: &mut usize) -> u64 {
    let mut v = 0;
    for shift in (0..64).step_by(7) {
        let Some(&b) = m.get(*at) else {
            break;
        };
        *at += 1;
        v |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            break;
        }
    }
    v
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Field 1 (a varint: Count.n, Chunk.seq), field 2 as a varint (Count.size) and as bytes
/// (Chunk.data).
fn fields(m: &[u8]) -> (u64, u64, &[u8]) {
    let (mut one, mut two, mut data): (u64, u64, &[u8]) = (0, 0, &[]);
    let mut at = 0;
    while at < m.len() {
        let tag = m[at];
        at += 1;
        match tag {
            0x08 => one = read_varint(m, &mut at),
            0x10 => two = read_varint(m, &mut at),
            0x12 => {
                let len = read_varint(m, &mut at) as usize;
                data = m.get(at..at + len).unwrap_or_default();
                at += len;
            }
            _ => break,
        }
    }
    (one, two, data)
}

/// `Chunk{seq: i, data: size bytes of value i % 256}`, framed.
fn chunk(i: u64, size: usize) -> Vec<u8> {
    let mut m = Vec::new();
    if i > 0 {
        m.push(0x08);
        varint(&mut m, i);
    }
    if size > 0 {
        m.push(0x12);
        varint(&mut m, size as u64);
        m.resize(m.len() + size, (i % 256) as u8);
    }
    framed(&m)
}

fn ok_trailers() -> http::HeaderMap {
    let mut t = http::HeaderMap::new();
    t.insert("grpc-status", "0".parse().unwrap());
    t
}

/// ServerStream(Count{n, size}): n chunks, each its own DATA frame, then OK.
fn server_stream(got: &[u8], mut respond: h2::server::SendResponse<Bytes>, fault: Fault) {
    let (n, size, _) = messages(got).first().map_or((0, 0, &[][..]), |m| fields(m));
    let Ok(mut send) = respond.send_response(headers(None), false) else {
        return;
    };
    let n = n - u64::from(fault == Fault::ShortStream && n > 0);
    for i in 0..n {
        let mut c = chunk(i, size as usize);
        if fault == Fault::WrongChunk && i + 1 == n {
            *c.last_mut().unwrap() ^= 1;
        }
        let _ = send.send_data(Bytes::from(c), false);
    }
    let _ = send.send_trailers(ok_trailers());
}

/// BidiEcho: every chunk back as it arrives, then OK once the client ends its side.
async fn bidi_echo(
    mut body: h2::RecvStream,
    mut respond: h2::server::SendResponse<Bytes>,
    fault: Fault,
) {
    let Ok(mut send) = respond.send_response(headers(None), false) else {
        return;
    };
    let mut buf = Vec::new();
    while let Some(Ok(data)) = body.data().await {
        let _ = body.flow_control().release_capacity(data.len());
        buf.extend_from_slice(&data);
        let whole: usize = messages(&buf).iter().map(|m| m.len() + 5).sum();
        let mut out = buf.drain(..whole).collect::<Vec<u8>>();
        if fault == Fault::WrongChunk && !out.is_empty() {
            *out.last_mut().unwrap() ^= 1;
        }
        if !out.is_empty() {
            let _ = send.send_data(Bytes::from(out), false);
        }
    }
    let _ = send.send_trailers(ok_trailers());
}
