//! Deep pipelining as a real pipelining client does it (h2load `--h1 -m 16`): many connections
//! at once, each keeping `depth` requests in flight for a few seconds and sending the next one
//! as each response lands. Each write is cut in two at a random byte, the second part sent
//! [`CUT_PAUSE`] later (as TCP segmentation or a proxy delivers it), so the server often reads
//! a partial request behind complete ones; every response is checked in order against the
//! request it answers. The client never waits for an answer while part of a request is
//! unsent.
//!
//! A blocking client thread per connection keeps it simple; the check lasts a few seconds.

use super::checks::{compare, Body, Endpoint};
use super::diff::Diff;
use super::http::{get_request, Conn, Response};
use super::shapes::prefixed;
use super::Check;
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

/// Pause between the two parts of a cut write: long enough for the server to read the first.
const CUT_PAUSE: Duration = Duration::from_micros(300);

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

    /// A cut point in `1..len` (`len` when there is nothing to cut).
    fn cut(&mut self, len: usize) -> usize {
        if len < 2 {
            return len;
        }
        1 + (self.next() % (len as u64 - 1)) as usize
    }
}

/// One connection: keeps `depth` requests in flight until `until`, then reads the rest.
/// A response that says `Connection: close` may end the connection: as RFC 9112 (9.3.2) asks
/// of a pipelining client, the unanswered requests are sent again on a new one. Returns the
/// number of responses checked.
fn run_connection(
    addr: SocketAddr,
    eps: &[Endpoint],
    index: usize,
    depth: usize,
    until: Instant,
) -> Result<u64, Vec<Diff>> {
    let connect =
        || Conn::connect(addr).map_err(|err| vec![Diff::error("connect", "a connection", &err)]);
    let mut conn = connect()?;
    let host = addr.to_string();
    let requests: Vec<Vec<u8>> = eps
        .iter()
        .map(|e| get_request(e.path, &host, false))
        .collect();
    let plan = |n: u64| (n as usize + index) % eps.len();
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15 ^ (index as u64 + 1));
    let (mut sent, mut answered) = (0u64, 0u64);
    let mut unsent = Vec::new();
    let mut write_error = None;
    loop {
        while Instant::now() < until && sent - answered < depth as u64 {
            unsent.extend_from_slice(&requests[plan(sent)]);
            sent += 1;
        }
        if !unsent.is_empty() {
            let cut = rng.cut(unsent.len());
            let wrote = conn.send(&unsent[..cut]).and_then(|()| {
                std::thread::sleep(CUT_PAUSE);
                conn.send(&unsent[cut..])
            });
            if let Err(err) = wrote {
                // The answers already sent may still say why (a `Connection: close`).
                write_error.get_or_insert(format!("write after response {answered}: {err}"));
            }
            unsent.clear();
        }
        if answered == sent {
            return Ok(answered);
        }
        let e = &eps[plan(answered)];
        let at = format!("response {} (GET {})", answered + 1, e.path);
        let r = conn.read_response().map_err(|err| {
            let got = match &write_error {
                Some(w) => format!("error: {err} (after the {w})"),
                None => format!("error: {err}"),
            };
            let expected = format!("{} {}", e.status, e.path);
            prefixed(vec![Diff::new("response", expected, got)], &at)
        })?;
        let diffs = compare(e, &r, true);
        if !diffs.is_empty() {
            return Err(prefixed(diffs, &at));
        }
        answered += 1;
        if announces_close(&r) {
            conn = connect()?;
            write_error = None;
            for n in answered..sent {
                unsent.extend_from_slice(&requests[plan(n)]);
            }
        }
    }
}

/// True when a response says the server closes the connection after it.
fn announces_close(r: &Response) -> bool {
    r.header("connection")
        .is_some_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case("close")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_leaves_bytes_on_both_sides() {
        let mut rng = XorShift(7);
        for _ in 0..1000 {
            let c = rng.cut(10);
            assert!((1..10).contains(&c), "{c}");
        }
        assert_eq!((rng.cut(1), rng.cut(0)), (1, 0));
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
