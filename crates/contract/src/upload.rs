//! The `upload` feature (issue 32, HttpArena's upload profile): `POST /upload` answers the
//! byte count of the body, read as a stream: verify sends 128 MiB and samples the resident
//! memory of the server's process group meanwhile, which must grow by less than
//! [`RSS_BOUND`], three quarters of the body; `Expect: 100-continue` is answered with
//! `100 Continue` before the body is sent.
//!
//! Why so large: a runtime with a garbage collector grows while it streams, by what it has not
//! collected yet (node/express streaming 20 MiB grew by 19 MiB, 64 MiB by 31, 96 MiB by 36:
//! V8 collects the socket's buffers late; java/vertx streaming 128 MiB grew by 74 MiB, the
//! JVM filling its young generation before it collects), so a 20 MiB body cannot tell a stream
//! from a held body; at 128 MiB a held body grows the server by at least 128 MiB, a stream by
//! what its collector lets pile up.

use super::baseline::{post_request, text_answer, Framing};
use super::diff::Diff;
use super::http::{Conn, Dial};
use super::shapes::prefixed;
use super::Check;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What verify reads the server's resident memory with, in bytes.
pub type Memory<'a> = &'a (dyn Fn() -> u64 + Sync);

/// Size of the large upload.
pub const LARGE: usize = 128 << 20;
/// The most the server's resident memory (its whole process group) may grow while it takes
/// the large upload: three quarters of it (a server that holds the body grows by all of it).
pub const RSS_BOUND: u64 = (LARGE / 4 * 3) as u64;
/// Bytes per write of the large upload.
const WRITE: usize = 64 * 1024;
/// Between two samples of the resident memory.
const SAMPLE_EVERY: Duration = Duration::from_millis(3);

fn body(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 4096) as u8).collect()
}

fn check(name: String, steps: impl FnOnce() -> Result<Option<String>, Vec<Diff>>) -> Check {
    match steps() {
        Ok(Some(note)) => Check::pass(name).with_note(note),
        Ok(None) => Check::pass(name),
        Err(d) => Check::new(name, d),
    }
}

fn open(to: Dial<'_>) -> Result<Conn, Vec<Diff>> {
    Conn::open(to).map_err(|e| vec![Diff::error("connect", "a connection", &e)])
}

fn count_answer(c: &mut Conn, len: usize, at: &str) -> Result<(), Vec<Diff>> {
    let r = c.read_response().map_err(|e| {
        vec![Diff::error(
            format!("{at}: response"),
            "200 and the byte count",
            &e,
        )]
    })?;
    let d = text_answer(&r, &len.to_string());
    if d.is_empty() {
        Ok(())
    } else {
        Err(prefixed(d, at))
    }
}

fn send(c: &mut Conn, bytes: &[u8], at: &str) -> Result<(), Vec<Diff>> {
    c.send(bytes).map_err(|e| {
        vec![Diff::error(
            format!("{at}: write"),
            "the whole request accepted",
            &e,
        )]
    })
}

/// Every check of `upload`; `memory` reads the server's resident memory (the harness: its
/// process group's, `serverbench_machine::process::group_rss_bytes`), sampled during the large upload (`None`: not sampled,
/// said in a note).
pub fn check_all(to: Dial<'_>, memory: Option<Memory<'_>>) -> Vec<Check> {
    let host = to.host();
    let mib = body(1 << 20);
    vec![
        check(
            "POST /upload 1 MiB (Content-Length) -> 1048576".into(),
            || {
                let mut c = open(to)?;
                send(
                    &mut c,
                    &post_request("/upload", &host, &[], &mib, Framing::Length),
                    "POST",
                )?;
                count_answer(&mut c, mib.len(), "POST").map(|()| None)
            },
        ),
        check(
            "POST /upload 300 KiB (chunked, 16 KiB chunks), twice on one connection".into(),
            || {
                let mut c = open(to)?;
                let part = &mib[..300 * 1024];
                let req = post_request("/upload", &host, &[], part, Framing::Chunked(16 * 1024));
                send(&mut c, &req, "first")?;
                count_answer(&mut c, part.len(), "first")?;
                let req = post_request("/upload", &host, &[], &part[..1000], Framing::Chunked(300));
                send(&mut c, &req, "second")?;
                count_answer(&mut c, 1000, "second").map(|()| None)
            },
        ),
        check(
            "POST /upload with Expect: 100-continue -> 100, then the count".into(),
            || expect_continue(to, &mib[..64 * 1024]).map(|()| None),
        ),
        check(
            format!(
                "POST /upload {} MiB: the count, memory growth under {} MiB",
                LARGE >> 20,
                RSS_BOUND >> 20
            ),
            || large(to, memory),
        ),
    ]
}

fn expect_continue(to: Dial<'_>, part: &[u8]) -> Result<(), Vec<Diff>> {
    let mut c = open(to)?;
    let req = post_request(
        "/upload",
        &to.host(),
        &["Expect: 100-continue"],
        part,
        Framing::Length,
    );
    let head_len = req.len() - part.len();
    send(&mut c, &req[..head_len], "head")?;
    let first = c.read_response().map_err(|e| {
        vec![Diff::error(
            "interim response",
            "100 Continue before the body is sent",
            &e,
        )]
    })?;
    if first.status != 100 {
        let d = Diff::new("interim response", "100 Continue", first.status.to_string());
        return Err(vec![d]);
    }
    send(&mut c, part, "body")?;
    count_answer(&mut c, part.len(), "after 100")
}

fn large(to: Dial<'_>, memory: Option<Memory<'_>>) -> Result<Option<String>, Vec<Diff>> {
    // The same 64 KiB over and over: verify holds no copy of the whole body.
    let piece = body(WRITE);
    let head = post_request("/upload", &to.host(), &[], &[], Framing::Length);
    let head = String::from_utf8_lossy(&head)
        .replace("Content-Length: 0", &format!("Content-Length: {LARGE}"));
    let mut c = open(to)?;
    let before = memory.map(|m| m());
    let stop = AtomicBool::new(false);
    let (answered, peak) = std::thread::scope(|scope| {
        let sampler = memory.map(|m| {
            let stop = &stop;
            scope.spawn(move || {
                let mut peak = 0;
                while !stop.load(Ordering::SeqCst) {
                    peak = peak.max(m());
                    std::thread::sleep(SAMPLE_EVERY);
                }
                peak.max(m())
            })
        });
        let answered = send(&mut c, head.as_bytes(), "head")
            .and_then(|()| (0..LARGE / WRITE).try_for_each(|_| send(&mut c, &piece, "body")))
            .and_then(|()| count_answer(&mut c, LARGE, "POST"));
        stop.store(true, Ordering::SeqCst);
        (answered, sampler.map(|s| s.join().unwrap_or(0)))
    });
    answered?;
    let (Some(before), Some(peak)) = (before, peak) else {
        return Ok(Some(
            "memory not sampled: no server process (verify --url)".into(),
        ));
    };
    let mib = |b: u64| b as f64 / 1048576.0;
    let grew = peak.saturating_sub(before);
    if grew >= RSS_BOUND {
        let d = Diff::new(
            "memory growth (resident, the server's processes)",
            format!("under {} MiB (a streamed body)", RSS_BOUND >> 20),
            format!("{:.1} MiB (the body held in memory?)", mib(grew)),
        );
        return Err(vec![d]);
    }
    Ok(Some(format!(
        "resident {:.1} MiB, peak +{:.1} MiB",
        mib(before),
        mib(grew)
    )))
}
