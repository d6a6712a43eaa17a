//! The streaming checks: `ServerStream` (1,000 chunks in order) and `BidiEcho` (each chunk
//! echoed before the next is sent, so a server that waits for the end of the client's stream
//! fails).

use super::client::{self, decode, expect_ok, judge_head, Call, MAX_MESSAGE};
use super::messages::{chunk, path, Chunk, Count};
use super::{at, call, connect, names};
use crate::diff::Diff;
use crate::http2::{H2Conn, Transport};
use crate::Check;
use bytes::Bytes;
use h2::RecvStream;
use http::HeaderMap;
use prost::Message;
use serverbench_wire::grpc::{framed, Deframer, Status};
use std::collections::VecDeque;
use std::time::Duration;

/// Chunks of [`names::STREAM`] and their size.
pub const STREAM_N: i32 = 1000;
pub const STREAM_SIZE: usize = 32;
/// Chunks of [`names::BIDI`].
pub const BIDI_N: i32 = 20;
/// How long each bidi echo may take.
pub const ECHO_WAIT: Duration = Duration::from_secs(2);

pub(super) async fn check_server_stream(t: Transport<'_>) -> Check {
    let conn = match connect(t).await {
        Ok(c) => c,
        Err(d) => return Check::new(names::STREAM, vec![d]),
    };
    let count = Count {
        n: STREAM_N,
        size: STREAM_SIZE as i32,
        delay_ms: 0,
    };
    let c = Call::unary(path::SERVER_STREAM, &count.encode_to_vec());
    let diff = match call(&conn, &c).await {
        Ok(o) => expect_ok(&o, STREAM_N as usize)
            .and_then(|()| in_order(&o.messages))
            .err(),
        Err(d) => Some(d),
    };
    Check::new(names::STREAM, diff.into_iter().collect())
}

/// Every chunk `i` must be [`chunk`]`(i, STREAM_SIZE)`.
fn in_order(messages: &[Vec<u8>]) -> Result<(), Diff> {
    for (i, m) in messages.iter().enumerate() {
        let label = format!("chunk {i}");
        let got: Chunk = decode(&label, m)?;
        let want = chunk(i as i32, STREAM_SIZE);
        if got != want {
            return Err(Diff::new(label, describe(&want), describe(&got)));
        }
    }
    Ok(())
}

/// `seq 3, 32 bytes of 0x03` (or the first bytes when they differ).
fn describe(c: &Chunk) -> String {
    match c.data.first() {
        Some(&b) if c.data.iter().all(|&x| x == b) => {
            format!("seq {}, {} bytes of {b:#04x}", c.seq, c.data.len())
        }
        Some(_) => format!("seq {}, {} mixed bytes", c.seq, c.data.len()),
        None => format!("seq {}, no data", c.seq),
    }
}

pub(super) async fn check_bidi(t: Transport<'_>) -> Check {
    let conn = match connect(t).await {
        Ok(c) => c,
        Err(d) => return Check::new(names::BIDI, vec![d]),
    };
    let got = tokio::time::timeout(client::CALL_DEADLINE, bidi(&conn)).await;
    match got.unwrap_or_else(|_| Err(Diff::new("call", "done in 15 s", "still open"))) {
        Ok(()) => Check::pass(names::BIDI),
        Err(d) => Check::new(names::BIDI, vec![d]),
    }
}

/// The response side of a bidi call: messages as they complete.
struct Incoming {
    body: RecvStream,
    headers: HeaderMap,
    deframer: Deframer,
    ready: VecDeque<Vec<u8>>,
}

impl Incoming {
    /// The next whole message; `Ok(None)` when the stream ended first.
    async fn next(&mut self) -> Result<Option<Vec<u8>>, Diff> {
        while self.ready.is_empty() {
            let Some(data) = self.body.data().await else {
                return Ok(None);
            };
            let data = data.map_err(|e| Diff::error("response", "echoes", &e))?;
            let _ = self.body.flow_control().release_capacity(data.len());
            let framed = self
                .deframer
                .push(&data)
                .map_err(|e| Diff::error("message framing", "length-prefixed messages", &e))?;
            for m in framed {
                self.ready.push_back(client::decompress(m, &self.headers)?);
            }
        }
        Ok(self.ready.pop_front())
    }

    /// The status after the stream ended: from the trailers, or the head of a trailers-only
    /// response.
    async fn status(mut self) -> Result<Status, Diff> {
        let trailers = self
            .body
            .trailers()
            .await
            .map_err(|e| Diff::error("trailers", "grpc-status", &e))?;
        let block = trailers.as_ref().unwrap_or(&self.headers);
        Status::from_headers(|n| block.get(n).map(|v| v.as_bytes()))
            .map_err(|e| Diff::error("grpc-status", "a status in the trailers", &e))
    }
}

/// Sends [`BIDI_N`] chunks one at a time, each echo awaited before the next is sent, then ends
/// the request stream: no more messages, status OK.
async fn bidi(conn: &H2Conn) -> Result<(), Diff> {
    let err = |what: &str, e: &dyn std::fmt::Display| Diff::error(what, "sent", e);
    let (answer, mut stream) = client::open_stream(conn, path::BIDI_ECHO).await?;
    let mut answer = Some(answer);
    let mut incoming: Option<Incoming> = None;
    for i in 0..BIDI_N {
        let sent = chunk(i, 100 + i as usize);
        let bytes = framed(&sent.encode_to_vec(), false);
        stream
            .send_data(Bytes::from(bytes), false)
            .map_err(|e| err("chunk", &e))?;
        if let Some(a) = answer.take() {
            let r = wait(a)
                .await?
                .map_err(|e| Diff::error("response", "a head", &e))?;
            judge_head(r.status().as_u16(), r.headers())?;
            let (parts, body) = r.into_parts();
            incoming = Some(Incoming {
                body,
                headers: parts.headers,
                deframer: Deframer::new(MAX_MESSAGE),
                ready: VecDeque::new(),
            });
        }
        let Some(inc) = incoming.as_mut() else {
            return Err(Diff::new("response", "a head", "none"));
        };
        let label = format!("echo of chunk {i}");
        let got = match wait(inc.next()).await? {
            Ok(Some(m)) => m,
            Ok(None) => {
                let inc = incoming.take().expect("the response");
                let status = inc.status().await.map(|s| s.to_string());
                let got = format!("the stream ended: {}", status.unwrap_or_else(|d| d.got));
                return Err(Diff::new(label, "before the next chunk is sent", got));
            }
            Err(d) => return Err(at(&label, d)),
        };
        let echoed: Chunk = decode(&label, &got)?;
        if echoed != sent {
            return Err(Diff::new(label, describe(&sent), describe(&echoed)));
        }
    }
    stream
        .send_data(Bytes::new(), true)
        .map_err(|e| err("end of stream", &e))?;
    let mut inc = incoming.ok_or_else(|| Diff::new("response", "a head", "none"))?;
    if let Some(extra) = inc.next().await? {
        let got = format!("another message of {} bytes", extra.len());
        return Err(Diff::new(
            "after the last echo",
            "the end of the stream",
            got,
        ));
    }
    let status = inc.status().await?;
    if !status.is_ok() {
        return Err(Diff::new("grpc-status", "0 OK", status.to_string()));
    }
    Ok(())
}

/// `f` within [`ECHO_WAIT`], or the diff of nothing coming.
async fn wait<F: std::future::Future>(f: F) -> Result<F::Output, Diff> {
    tokio::time::timeout(ECHO_WAIT, f).await.map_err(|_| {
        let within = format!("within {} s", ECHO_WAIT.as_secs());
        Diff::new(
            "echo",
            within,
            "nothing (does the server wait for the end of the stream?)",
        )
    })
}
