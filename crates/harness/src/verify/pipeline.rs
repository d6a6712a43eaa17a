//! Deep pipelining as a real pipelining client does it (h2load `--h1 -m 16`): many connections
//! at once, each keeping `depth` requests in flight for a few seconds and sending the next one
//! as each response lands. The request stream is cut at a random byte before each write, so
//! the server often holds a partial request behind complete ones; every response is checked
//! in order against the request it answers.
//!
//! A blocking client thread per connection keeps it simple; the check lasts a few seconds.

use super::checks::{compare, Body, Endpoint};
use super::diff::Diff;
use super::http::{get_request, Conn};
use super::shapes::prefixed;
use super::Check;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// How hard the check pipelines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Connections at once.
    pub connections: usize,
    /// Requests in flight per connection.
    pub depth: usize,
    /// How long new requests are sent; the ones in flight are then read to the end.
    pub duration: Duration,
}

/// verify's shape: 16 deep on 50 connections for 2.5 s.
pub const DEEP: Shape = Shape {
    connections: 50,
    depth: 16,
    duration: Duration::from_millis(2500),
};

/// Most bytes held back from the end of the stream before a write.
const MAX_HOLD: u64 = 40;

/// Endpoints small enough to pipeline by the thousand (not the 1 MiB bodies).
pub fn small(eps: &[Endpoint]) -> Vec<Endpoint> {
    eps.iter()
        .filter(|e| e.body != Body::Payload)
        .copied()
        .collect()
}

/// Runs `shape` over `eps` (cycled, each connection starting at a different one).
pub fn check_deep(addr: SocketAddr, eps: &[Endpoint], shape: Shape) -> Check {
    let name = format!(
        "{} requests pipelined on each of {} connections for {:.1} s, writes cut anywhere",
        shape.depth,
        shape.connections,
        shape.duration.as_secs_f64()
    );
    if eps.is_empty() {
        let d = Diff::new("endpoints", "a small declared endpoint", "none declared");
        return Check::new(name, vec![d]);
    }
    let until = Instant::now() + shape.duration;
    let outcomes: Vec<Result<u64, Vec<Diff>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..shape.connections)
            .map(|i| s.spawn(move || run_connection(addr, eps, i, shape.depth, until)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(vec![Diff::new("client", "ran", "panicked")]))
            })
            .collect()
    });
    summarize(name, outcomes)
}

/// The first failing connection's diffs, and how many failed.
fn summarize(name: String, outcomes: Vec<Result<u64, Vec<Diff>>>) -> Check {
    let total = outcomes.len();
    let mut failed = outcomes
        .into_iter()
        .enumerate()
        .filter_map(|(i, o)| o.err().map(|d| (i, d)))
        .peekable();
    let Some((first, diffs)) = failed.next() else {
        return Check::pass(name);
    };
    let others = failed.count();
    let mut out = prefixed(diffs, &format!("connection {}", first + 1));
    out.push(Diff::new(
        "connections that failed",
        format!("0 of {total}"),
        format!("{} of {total}", others + 1),
    ));
    Check::new(name, out)
}

/// A small deterministic generator, so a failing cut pattern repeats run after run.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// The request stream of one connection: bytes queued but not written, and where each
/// request ends in the stream.
struct Stream {
    unsent: Vec<u8>,
    written: u64,
    queued: u64,
    ends: VecDeque<u64>,
    complete: u64,
}

impl Stream {
    fn push(&mut self, req: &[u8]) {
        self.unsent.extend_from_slice(req);
        self.queued += req.len() as u64;
        self.ends.push_back(self.queued);
    }

    /// Requests complete once `n` more bytes are written.
    fn complete_after(&self, n: u64) -> u64 {
        let at = self.written + n;
        self.complete + self.ends.iter().take_while(|&&e| e <= at).count() as u64
    }

    fn wrote(&mut self, n: usize) {
        self.unsent.drain(..n);
        self.written += n as u64;
        while self.ends.front().is_some_and(|&e| e <= self.written) {
            self.ends.pop_front();
            self.complete += 1;
        }
    }
}

/// One connection: keeps `depth` requests queued until `until`, then reads the rest.
/// Returns the number of responses checked.
fn run_connection(
    addr: SocketAddr,
    eps: &[Endpoint],
    index: usize,
    depth: usize,
    until: Instant,
) -> Result<u64, Vec<Diff>> {
    let mut conn =
        Conn::connect(addr).map_err(|err| vec![Diff::error("connect", "a connection", &err)])?;
    let host = addr.to_string();
    let requests: Vec<Vec<u8>> = eps
        .iter()
        .map(|e| get_request(e.path, &host, false))
        .collect();
    let plan = |n: u64| (n as usize + index) % eps.len();
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15 ^ (index as u64 + 1));
    let mut stream = Stream {
        unsent: Vec::new(),
        written: 0,
        queued: 0,
        ends: VecDeque::new(),
        complete: 0,
    };
    let (mut sent, mut answered) = (0u64, 0u64);
    loop {
        let sending = Instant::now() < until;
        while sending && sent - answered < depth as u64 {
            stream.push(&requests[plan(sent)]);
            sent += 1;
        }
        let mut cut = stream.unsent.len() as u64;
        if sending {
            let hold = (rng.next() % MAX_HOLD).min(cut);
            if stream.complete_after(cut - hold) > answered {
                cut -= hold;
            }
        }
        if cut > 0 {
            let at = format!("write after response {answered}");
            conn.send(&stream.unsent[..cut as usize])
                .map_err(|err| vec![Diff::error(at, "the requests accepted", &err)])?;
            stream.wrote(cut as usize);
        }
        if answered == stream.complete {
            if !sending {
                return Ok(answered);
            }
            continue;
        }
        let e = &eps[plan(answered)];
        let at = format!("response {} (GET {})", answered + 1, e.path);
        let diffs = match conn.read_response() {
            Ok(r) => compare(e, &r, true),
            Err(err) => vec![Diff::error(
                "response",
                format!("{} {}", e.status, e.path),
                &err,
            )],
        };
        if !diffs.is_empty() {
            return Err(prefixed(diffs, &at));
        }
        answered += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_counts_a_request_complete_only_when_its_last_byte_is_written() {
        let mut s = Stream {
            unsent: Vec::new(),
            written: 0,
            queued: 0,
            ends: VecDeque::new(),
            complete: 0,
        };
        s.push(b"aaaa");
        s.push(b"bbbb");
        assert_eq!(s.complete_after(3), 0);
        assert_eq!(s.complete_after(4), 1);
        s.wrote(6);
        assert_eq!((s.complete, s.unsent.as_slice()), (1, &b"bb"[..]));
        assert_eq!(s.complete_after(2), 2);
    }

    #[test]
    fn the_payload_endpoints_are_not_pipelined() {
        let paths: Vec<&str> = small(&super::super::checks::ENDPOINTS)
            .iter()
            .map(|e| e.path)
            .collect();
        assert_eq!(paths, vec!["/hello", "/hey", "/hell", "/about", "/json"]);
    }
}
