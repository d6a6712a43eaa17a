//! The client-streaming check: `ClientStream` with [`N`] chunks of varied sizes (0 B to 64 KiB,
//! more than one HTTP/2 window in all, so flow control is exercised), then a pause before the
//! client ends its side: a reply (a message or the end of the call) that comes before the end is
//! a diff, and the one reply after it must be `Count{n, size}` of what was sent.

use super::client::{self, decode, expect_ok, judge, judge_head, Outcome, Reply, CALL_DEADLINE};
use super::messages::{chunk, path, Count};
use super::{at, connect, names};
use crate::diff::Diff;
use crate::http2::{H2Conn, Transport};
use crate::Check;
use bytes::Bytes;
use h2::client::ResponseFuture;
use h2::RecvStream;
use http::response::Parts;
use prost::Message;
use serverbench_wire::grpc::{framed, Status};
use std::time::{Duration, Instant};

/// Chunks of [`names::CLIENT_STREAM`].
pub const N: i32 = 1000;
/// How long the client waits, every chunk sent, before it ends its side: a reply in this time
/// came before the end.
pub const PAUSE: Duration = Duration::from_millis(300);

/// The size of chunk `i`: 0 B for chunk 0, 64 KiB for chunk 500, `i % 512` bytes otherwise (so
/// chunk 512 is empty too).
pub fn size(i: i32) -> usize {
    match i {
        500 => 64 << 10,
        _ => (i % 512) as usize,
    }
}

/// The data bytes of all [`N`] chunks: the `size` the server must answer.
pub fn total() -> i32 {
    (0..N).map(|i| size(i) as i32).sum()
}

pub(super) async fn check(t: Transport<'_>) -> Check {
    let name = names::CLIENT_STREAM;
    let conn = match connect(t).await {
        Ok(c) => c,
        Err(d) => return Check::new(name, vec![d]),
    };
    let got = tokio::time::timeout(CALL_DEADLINE, call(&conn)).await;
    let secs = CALL_DEADLINE.as_secs();
    let timed_out = || Diff::new("call", format!("done in {secs} s"), "still open");
    match got.unwrap_or_else(|_| Err(timed_out())) {
        Ok(()) => Check::pass(name),
        Err(d) => Check::new(name, vec![d]),
    }
}

/// The response so far: its head, once it came.
enum Answer {
    Pending(ResponseFuture),
    Head(Parts, RecvStream),
}

/// Sends the chunks, pauses, ends the request stream, and compares the one reply.
async fn call(conn: &H2Conn) -> Result<(), Diff> {
    let err = |what: &str, e: &dyn std::fmt::Display| Diff::error(what, "sent", e);
    let started = Instant::now();
    let (answer, mut stream) = client::open_stream(conn, path::CLIENT_STREAM).await?;
    let mut body = Vec::new();
    for i in 0..N {
        body.extend(framed(&chunk(i, size(i)).encode_to_vec(), false));
    }
    // h2 queues the DATA and sends it as the server's windows open.
    let sent = stream.send_data(Bytes::from(body), false);
    let answer = before_the_end(answer).await?;
    let sent = sent.and_then(|()| stream.send_data(Bytes::new(), true));
    let label = format!("ClientStream of {N} chunks");
    let o = match (sent, reply(answer, started).await) {
        (Ok(()), o) => o.map_err(|d| at(&label, d))?,
        // A server that refused the call (and reset the stream) is shown by its status.
        (Err(_), Ok(o)) if !o.status.is_ok() => o,
        (Err(e), _) => return Err(err("chunks", &e)),
    };
    expect_ok(&o, 1).map_err(|d| at(&label, d))?;
    let got: Count = decode(&label, &o.messages[0])?;
    let want = Count {
        n: N,
        size: total(),
        delay_ms: 0,
    };
    if got != want {
        return Err(at(
            &label,
            Diff::new("reply", describe(&want), describe(&got)),
        ));
    }
    Ok(())
}

/// The whole response, judged by the protocol.
async fn reply(answer: Answer, started: Instant) -> Result<Outcome, Diff> {
    let broken = |e: &dyn std::fmt::Display| Diff::error("response", "a gRPC response", e);
    let (parts, body) = match answer {
        Answer::Head(p, b) => (p, b),
        Answer::Pending(a) => a.await.map_err(|e| broken(&e))?.into_parts(),
    };
    let (body, trailers) = client::read_body(body).await.map_err(|e| broken(&e))?;
    judge(&Reply {
        status: parts.status.as_u16(),
        headers: parts.headers,
        body,
        trailers,
        elapsed: started.elapsed(),
    })
}

/// Waits [`PAUSE`] before the client ends its side: a response head may come (a server may send
/// its metadata early), but a message or the end of the call is a diff.
async fn before_the_end(mut answer: ResponseFuture) -> Result<Answer, Diff> {
    let until = tokio::time::Instant::now() + PAUSE;
    let response = match tokio::time::timeout_at(until, &mut answer).await {
        Err(_) => return Ok(Answer::Pending(answer)),
        Ok(r) => r.map_err(|e| Diff::error("response", "a gRPC response", &e))?,
    };
    judge_head(response.status().as_u16(), response.headers())?;
    let (parts, mut body) = response.into_parts();
    let early = match tokio::time::timeout_at(until, body.data()).await {
        Err(_) => return Ok(Answer::Head(parts, body)),
        Ok(Some(Ok(data))) => format!("{} bytes of a reply", data.len()),
        Ok(Some(Err(e))) => format!("a broken reply ({e})"),
        Ok(None) => {
            let trailers = body.trailers().await.ok().flatten();
            let block = trailers.as_ref().unwrap_or(&parts.headers);
            match Status::from_headers(|n| block.get(n).map(|v| v.as_bytes())) {
                // A call refused at once (UNIMPLEMENTED...) is shown by its status.
                Ok(s) if !s.is_ok() => return Err(Diff::new("grpc-status", "0 OK", s.to_string())),
                Ok(_) => "the end of the call (0 OK)".to_owned(),
                Err(e) => format!("the end of the call ({e})"),
            }
        }
    };
    let when = "only after the client ends its side";
    Err(Diff::new("reply", when, format!("{early} before it")))
}

/// `Count{n=1000, size=320856}` (delay_ms shown only when set).
fn describe(c: &Count) -> String {
    match c.delay_ms {
        0 => format!("Count{{n={}, size={}}}", c.n, c.size),
        d => format!("Count{{n={}, size={}, delay_ms={d}}}", c.n, c.size),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chunks_run_from_empty_to_64_kib_and_the_check_name_states_their_total() {
        assert_eq!(size(0), 0);
        assert_eq!(size(512), 0);
        assert_eq!(size(500), 64 << 10);
        assert!(total() > 4 * 65_535, "more than the initial windows");
        let want = format!("Count{{n={N}, size={}}}", total());
        assert!(names::CLIENT_STREAM.contains(&want), "{want}");
    }
}
