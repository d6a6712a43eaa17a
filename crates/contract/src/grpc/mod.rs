//! The `grpc` checks (spec/contract.md, "gRPC"): the `serverbench.Bench` service of
//! spec/serverbench.proto on `PORT` over h2c with prior knowledge (and, with `tls`, on
//! `TLS_PORT` with ALPN `h2`). Every call is judged by the protocol first ([`client`]: `:status`
//! 200, `content-type`, the length-prefixed framing, the `grpc-status` trailer or a
//! trailers-only response), then by its rule: the sums, echo of 0 B to 1 MiB, a stream of 1,000
//! chunks in order, a client stream of 1,000 chunks counted after its end, bidi echo, an unknown
//! method, a malformed message, a 1 ms deadline on a slow call, a message above the limit, a
//! gzip-compressed request, 100 concurrent calls on one connection, and an HTTP/1.1 request
//! refused. Each is a named [`Check`] with a diff.

pub mod client;
mod client_stream;
mod concurrent;
pub mod messages;
mod refused;
mod streams;

#[cfg(test)]
mod fixture;
#[cfg(test)]
mod tests;

use crate::diff::Diff;
use crate::http2::{self, H2Conn, H2Error, Transport};
use crate::Check;
use client::{decode, expect_ok, judge, Call, Outcome};
use messages::{path, Count, Payload, SumReply, SumRequest};
use prost::Message;
use serverbench_wire::grpc::Code;
use std::time::{Duration, Instant};

/// Every check's name, in the order [`check_all`] runs them (the tests name rules by these).
pub mod names {
    pub const CONNECTION: &str = "grpc connection (HTTP/2 preface and SETTINGS)";
    pub const SUM: &str = "grpc Sum(13, 42) -> 55, Sum(-7, 1000) -> 993, Sum(0, 0) -> 0";
    pub const ECHO: &str = "grpc Echo of 0 B, 1 B, 1 KiB, 64 KiB and 1 MiB: the same bytes";
    pub const STREAM: &str = "grpc ServerStream(n=1000, size=32): 1,000 chunks in order";
    pub const CLIENT_STREAM: &str = "grpc ClientStream: 1,000 chunks -> Count{n=1000, size=314680}";
    pub const BIDI: &str = "grpc BidiEcho: 20 chunks, each echoed before the next is sent";
    pub const UNKNOWN: &str = "grpc unknown method /serverbench.Bench/Nope -> 12 UNIMPLEMENTED";
    pub const MALFORMED: &str = "grpc malformed Sum message -> 13 INTERNAL or 3 INVALID_ARGUMENT";
    pub const DEADLINE: &str =
        "grpc 1 ms deadline on a slow ServerStream -> 4 DEADLINE_EXCEEDED (or RST_STREAM CANCEL)";
    pub const TOO_LARGE: &str =
        "grpc Echo of 5 MiB (above the 4 MiB limit) -> 8 RESOURCE_EXHAUSTED";
    pub const GZIP: &str = "grpc Sum(20, 22) sent with grpc-encoding: gzip -> 42";
    pub const CONCURRENT: &str = "grpc 100 concurrent Sum calls on one connection";
    pub const HTTP11: &str = "grpc call sent as HTTP/1.1 refused";
}

/// The sizes of [`names::ECHO`].
pub const ECHO_SIZES: [usize; 5] = [0, 1, 1024, 64 << 10, 1 << 20];
/// The message of [`names::TOO_LARGE`]: above the 4 MiB every server accepts.
pub const TOO_LARGE: usize = 5 << 20;
/// How long the slow call of [`names::DEADLINE`] takes when its deadline is ignored.
pub const SLOW_MS: i32 = 2000;
/// The deadline check's answer must come before this (well before [`SLOW_MS`]).
pub const DEADLINE_ANSWER: Duration = Duration::from_millis(1000);

/// The suffix of the check names over `t`: none on `PORT`, ` over TLS` on `TLS_PORT`.
pub fn suffix(t: &Transport<'_>) -> &'static str {
    match t {
        Transport::Cleartext(_) => "",
        Transport::Tls(..) => " over TLS",
    }
}

/// Every `grpc` check over `t`. When the connection fails, the other checks are not run.
pub fn check_all(t: Transport<'_>) -> Vec<Check> {
    let mut out = block_on(t, run(t));
    if let (Transport::Cleartext(addr), true) = (t, out[0].passed()) {
        out.push(refused::check_http11(addr));
    }
    out
}

/// The quick check before a run's gRPC laps: one `Sum`.
pub fn quick(t: Transport<'_>) -> Check {
    let mut out = block_on(t, async { vec![check_sum(t).await] });
    out.remove(0)
}

/// Runs `checks` on a runtime of their own and names them with `t`'s suffix.
fn block_on(t: Transport<'_>, checks: impl std::future::Future<Output = Vec<Check>>) -> Vec<Check> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    let mut out = match runtime {
        Ok(r) => r.block_on(checks),
        Err(e) => {
            let d = Diff::error("runtime", "a tokio runtime for the gRPC client", &e);
            vec![Check::new("grpc client", vec![d])]
        }
    };
    for c in &mut out {
        c.name.push_str(suffix(&t));
    }
    out
}

async fn run(t: Transport<'_>) -> Vec<Check> {
    let first = check_connection(t).await;
    if !first.passed() {
        return vec![first];
    }
    vec![
        first,
        check_sum(t).await,
        check_echo(t).await,
        streams::check_server_stream(t).await,
        client_stream::check(t).await,
        streams::check_bidi(t).await,
        check_status(t, names::UNKNOWN, unknown_call(), &[Code::Unimplemented]).await,
        check_status(t, names::MALFORMED, malformed_call(), &MALFORMED_CODES).await,
        check_deadline(t).await,
        check_status(
            t,
            names::TOO_LARGE,
            too_large_call(),
            &[Code::ResourceExhausted],
        )
        .await,
        check_gzip(t).await,
        concurrent::check(t, concurrent::CALLS).await,
    ]
}

/// The codes a malformed message may end with.
const MALFORMED_CODES: [Code; 2] = [Code::Internal, Code::InvalidArgument];

/// A connection, or the diff of why there is none.
pub(crate) async fn connect(t: Transport<'_>) -> Result<H2Conn, Diff> {
    http2::connect(t)
        .await
        .map_err(|e| Diff::error("connection", "an HTTP/2 connection", &e))
}

/// One call on `conn`, judged by the protocol.
pub(crate) async fn call(conn: &H2Conn, call: &Call) -> Result<Outcome, Diff> {
    let reply = client::send(conn.send.clone(), &conn.base, call)
        .await
        .map_err(|e| Diff::error("response", "a gRPC response", &e))?;
    judge(&reply)
}

/// `what: ` before a diff's subject.
pub(crate) fn at(what: &str, d: Diff) -> Diff {
    Diff {
        what: format!("{what}: {}", d.what),
        ..d
    }
}

async fn check_connection(t: Transport<'_>) -> Check {
    match connect(t).await {
        Ok(c) => {
            let check = Check::pass(names::CONNECTION);
            match c.negotiated {
                Some(n) => check.with_note(n.to_string()),
                None => check,
            }
        }
        Err(d) => Check::new(names::CONNECTION, vec![d]),
    }
}

/// `Sum(a, b)` on `conn`: one reply with `a + b`.
pub(crate) async fn sum(conn: &H2Conn, a: i32, b: i32, call: Call) -> Result<(), Diff> {
    let label = format!("Sum({a}, {b})");
    let o = self::call(conn, &call).await.map_err(|d| at(&label, d))?;
    expect_ok(&o, 1).map_err(|d| at(&label, d))?;
    let reply: SumReply = decode(&label, &o.messages[0])?;
    let want = a.wrapping_add(b);
    if reply.result != want {
        let d = Diff::new("result", want.to_string(), reply.result.to_string());
        return Err(at(&label, d));
    }
    Ok(())
}

/// A unary `Sum(a, b)` call.
pub(crate) fn sum_call(a: i32, b: i32) -> Call {
    Call::unary(path::SUM, &SumRequest { a, b }.encode_to_vec())
}

async fn check_sum(t: Transport<'_>) -> Check {
    let conn = match connect(t).await {
        Ok(c) => c,
        Err(d) => return Check::new(names::SUM, vec![d]),
    };
    for (a, b) in [(13, 42), (-7, 1000), (0, 0)] {
        if let Err(d) = sum(&conn, a, b, sum_call(a, b)).await {
            return Check::new(names::SUM, vec![d]);
        }
    }
    Check::pass(names::SUM)
}

/// `len` bytes of a pattern that shows a shift or a cut.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}

async fn check_echo(t: Transport<'_>) -> Check {
    let conn = match connect(t).await {
        Ok(c) => c,
        Err(d) => return Check::new(names::ECHO, vec![d]),
    };
    for size in ECHO_SIZES {
        let data = pattern(size);
        let label = format!("Echo of {size} B");
        let call = Call::unary(path::ECHO, &Payload { data: data.clone() }.encode_to_vec());
        let got = self::call(&conn, &call).await.and_then(|o| {
            expect_ok(&o, 1)?;
            decode::<Payload>("Payload", &o.messages[0])
        });
        let diff = match got {
            Ok(p) => Diff::bytes("data", &data, &p.data),
            Err(d) => Some(d),
        };
        if let Some(d) = diff {
            return Check::new(names::ECHO, vec![at(&label, d)]);
        }
    }
    Check::pass(names::ECHO)
}

fn unknown_call() -> Call {
    Call::unary(path::UNKNOWN, &SumRequest { a: 1, b: 2 }.encode_to_vec())
}

/// A `Sum` whose message is a varint cut short (field 1, continuation bits, no end).
fn malformed_call() -> Call {
    Call::unary(path::SUM, &[0x08, 0xff, 0xff])
}

fn too_large_call() -> Call {
    let data = pattern(TOO_LARGE);
    Call::unary(path::ECHO, &Payload { data }.encode_to_vec())
}

/// One call that must end with one of `codes` (a judged gRPC response, any messages).
async fn check_status(t: Transport<'_>, name: &str, call: Call, codes: &[Code]) -> Check {
    let conn = match connect(t).await {
        Ok(c) => c,
        Err(d) => return Check::new(name, vec![d]),
    };
    match self::call(&conn, &call).await {
        Ok(o) if codes.iter().any(|c| c.number() == o.status.code) => Check::pass(name),
        Ok(o) => Check::new(name, vec![status_diff(codes, &o)]),
        Err(d) => Check::new(name, vec![d]),
    }
}

fn status_diff(codes: &[Code], o: &Outcome) -> Diff {
    let want: Vec<String> = codes.iter().map(Code::to_string).collect();
    Diff::new("grpc-status", want.join(" or "), o.status.to_string())
}

/// `ServerStream(n=1, delay_ms=2000)` with `grpc-timeout: 1m`: the server ends the call well
/// before the slow answer would come, with status 4, or with RST_STREAM (CANCEL) as grpc-go does
/// (its client then reports 4 itself).
async fn check_deadline(t: Transport<'_>) -> Check {
    let name = names::DEADLINE;
    let conn = match connect(t).await {
        Ok(c) => c,
        Err(d) => return Check::new(name, vec![d]),
    };
    let count = Count {
        n: 1,
        size: 1,
        delay_ms: SLOW_MS,
    };
    let timeout = serverbench_wire::grpc::timeout(Duration::from_millis(1));
    let call =
        Call::unary(path::SERVER_STREAM, &count.encode_to_vec()).header("grpc-timeout", timeout);
    let started = Instant::now();
    let ended = match client::send(conn.send.clone(), &conn.base, &call).await {
        Err(H2Error::H2(e)) if e.is_remote() && e.reason() == Some(h2::Reason::CANCEL) => {
            "RST_STREAM (CANCEL)".to_owned()
        }
        Err(e) => return Check::new(name, vec![Diff::error("response", "a gRPC response", &e)]),
        Ok(reply) => match judge(&reply) {
            Ok(o) if o.status.code == Code::DeadlineExceeded.number() => o.status.to_string(),
            Ok(o) => {
                let d = status_diff(&[Code::DeadlineExceeded], &o);
                let got = format!("{} after {:.3} s", d.got, o.elapsed.as_secs_f64());
                return Check::new(name, vec![Diff { got, ..d }]);
            }
            Err(d) => return Check::new(name, vec![d]),
        },
    };
    let elapsed = started.elapsed();
    let secs = format!("{:.3} s", elapsed.as_secs_f64());
    if elapsed >= DEADLINE_ANSWER {
        let want = format!("under {} ms", DEADLINE_ANSWER.as_millis());
        return Check::new(name, vec![Diff::new("ended after", want, secs)]);
    }
    Check::pass(name).with_note(format!("ended by {ended} after {secs}"))
}

async fn check_gzip(t: Transport<'_>) -> Check {
    let conn = match connect(t).await {
        Ok(c) => c,
        Err(d) => return Check::new(names::GZIP, vec![d]),
    };
    let message = client::gzip(&SumRequest { a: 20, b: 22 }.encode_to_vec());
    let call = Call {
        path: path::SUM,
        headers: Vec::new(),
        body: serverbench_wire::grpc::framed(&message, true),
    }
    .header("grpc-encoding", "gzip")
    .header("grpc-accept-encoding", "gzip");
    match sum(&conn, 20, 22, call).await {
        Ok(()) => Check::pass(names::GZIP),
        Err(d) => Check::new(names::GZIP, vec![d]),
    }
}
