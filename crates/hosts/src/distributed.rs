//! Distributed load: `serverbench load --barrier` on every client host at once, over ssh,
//! released together, results gathered and merged exactly.
//!
//! 1. Every host's session starts `serverbench load --spec - --barrier`, reads its share of the
//!    load ([`jobs`]: one [`LoadSpec`] line), connects and warms up, then prints `ready`.
//! 2. When all are ready the controller writes `go` to every session back to back. Each host
//!    starts measuring a fixed lead after the line arrives (`serverbench_engine::GATE_LEAD`),
//!    so the start skew between hosts is the spread of the arrival times, read from the
//!    `measure_start_unix_s` each host reports (host clocks; see [`crate::check`] for offsets).
//! 3. Each host prints its JSON result and exits; the results are merged ([`crate::merge`]).
//!
//! A host that fails (ssh drops, the command exits, a deadline passes) is a fault naming it;
//! the others are stopped before the release, or left to finish after it so that nothing
//! already measured is lost. Every session is closed on return: the remote groups die with
//! them ([`crate::wrap`]).

use crate::inventory::Host;
use crate::merge::{merge, MergeError};
use crate::ssh::{Session, SessionLine, Transport};
use crate::HostError;
use serde::{Deserialize, Serialize};
use serverbench_model::{LoadResult, LoadSpec};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long a session may take to exit once its stdout closed, or once asked to stop.
const EXIT_GRACE: Duration = Duration::from_secs(10);

/// One client host's part: the host and its share of the load, run there as
/// `serverbench load --spec - --barrier --json -q` with the spec on stdin.
#[derive(Debug, Clone)]
pub struct ClientJob {
    /// The host.
    pub host: Host,
    /// Its share of the load.
    pub spec: LoadSpec,
}

impl ClientJob {
    /// The command line on the host (binary first); the spec follows on stdin.
    pub fn argv(&self) -> Vec<String> {
        let binary = self.host.binary.to_string_lossy().into_owned();
        let flags = ["load", "--spec", "-", "--barrier", "--json", "-q"];
        std::iter::once(binary)
            .chain(flags.map(String::from))
            .collect()
    }
}

/// The load `spec` shared between `hosts` ([`LoadSpec::split`]: connections, rate and connect
/// rate by share), each pinned to its inventory CPUs and trusting its own copy of the CA file
/// (`cacerts[i]` for host `i`, when the load trusts one).
pub fn jobs(spec: &LoadSpec, hosts: &[Host], cacerts: &[PathBuf]) -> Vec<ClientJob> {
    hosts
        .iter()
        .zip(spec.split(hosts.len()))
        .enumerate()
        .map(|(i, (host, mut share))| {
            share.cpus = host.cpus.clone();
            if let Some(ca) = cacerts.get(i) {
                share.http.cacert = Some(ca.clone());
            }
            ClientJob {
                host: host.clone(),
                spec: share,
            }
        })
        .collect()
}

/// Deadlines.
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    /// From the start until every host is ready (connections up, warm-up done).
    pub ready: Duration,
    /// From the release until every host has returned its result.
    pub finish: Duration,
}

/// How long after the measured duration (and the request timeout) results may take to arrive.
const RESULT_SLACK: Duration = Duration::from_secs(30);

impl Deadlines {
    /// The deadlines of `spec`: `connect` (the hosts' time to connect) plus the warm-up to be
    /// ready; after the release, the measured duration and half again (a loaded host drains
    /// late), the request timeout and 30 s of slack to return results.
    pub fn of(spec: &LoadSpec, connect: Duration) -> Deadlines {
        let measured = spec.measured();
        Deadlines {
            ready: connect + spec.warmup,
            finish: measured + measured / 2 + spec.timeout + RESULT_SLACK,
        }
    }
}

/// A client host's side of the barrier (`serverbench load --barrier`): says `ready` on stdout,
/// then waits for the `go` line on stdin; false when stdout is gone or stdin brings anything else
/// (or ends).
pub fn released_by_go() -> bool {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if writeln!(out, "ready").and_then(|()| out.flush()).is_err() {
        return false;
    }
    let mut line = String::new();
    matches!(std::io::stdin().read_line(&mut line), Ok(n) if n > 0 && line.trim() == "go")
}

/// What happens, for progress lines.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// A host is connected and warmed up.
    Ready { host: String },
    /// Every host was released; `waited` is how long the first ready host waited for the last.
    Released { waited: Duration },
    /// A host returned its result.
    Finished { host: String },
}

/// One host's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostResult {
    /// The host's name.
    pub host: String,
    /// Its result, as `serverbench load --json` printed it there.
    #[serde(flatten)]
    pub result: LoadResult,
}

/// A distributed run: the merged result with the per-host ones. Serialized, the merged keys
/// come first (so it is a valid spec/load-result.schema.json document), then `start_skew_ms`,
/// `saturated_hosts` and `hosts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Distributed {
    /// The exact merge of every host's result.
    #[serde(flatten)]
    pub merged: LoadResult,
    /// The spread of the hosts' measurement starts, in milliseconds (host clocks).
    pub start_skew_ms: f64,
    /// The hosts whose load generator used >= 90% of its CPUs.
    pub saturated_hosts: Vec<String>,
    /// Every host's own result, in `--client-hosts` order.
    pub hosts: Vec<HostResult>,
}

/// A distributed run that did not complete: every fault, and what the other hosts measured.
#[derive(Debug, Default)]
pub struct Failure {
    /// One error per failing host.
    pub faults: Vec<HostError>,
    /// The results of the hosts that completed.
    pub completed: Vec<HostResult>,
    /// The caller's cancel flag stopped the run (no fault then).
    pub cancelled: bool,
}

impl From<HostError> for Failure {
    fn from(e: HostError) -> Self {
        Failure {
            faults: vec![e],
            ..Failure::default()
        }
    }
}

/// How often waits look at the cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(100);

/// Waits for the next line, up to `deadline`, looking at `cancel` meanwhile.
fn next_line(
    rx: &Lines,
    deadline: Instant,
    cancel: &AtomicBool,
) -> Result<(usize, SessionLine), Wait> {
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Err(Wait::Cancelled);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Wait::Timeout);
        }
        match rx.recv_timeout(left.min(CANCEL_POLL)) {
            Ok(v) => return Ok(v),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return Err(Wait::Timeout),
        }
    }
}

/// Why no line came.
enum Wait {
    Timeout,
    Cancelled,
}

type Lines = Receiver<(usize, SessionLine)>;

/// Runs `jobs` together; see the module documentation. `cancel` (Ctrl-C) stops every host.
pub fn run(
    transport: &Transport,
    jobs: &[ClientJob],
    deadlines: Deadlines,
    progress: &dyn Fn(Progress),
    cancel: &AtomicBool,
) -> Result<Distributed, Failure> {
    let (tx, rx) = mpsc::channel();
    let mut sessions = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let started = transport
            .spawn(&job.host, i, &job.argv(), tx.clone())
            .and_then(|mut s| s.send_line(&job.spec.to_line()).map(|()| s));
        match started {
            Ok(s) => sessions.push(s),
            Err(e) => return Err(stop_all(&mut sessions, e)),
        }
    }
    drop(tx);
    let waited = match await_ready(&mut sessions, &rx, deadlines.ready, progress, cancel) {
        Ok(w) => w,
        Err(None) => return Err(cancelled(&mut sessions)),
        Err(Some(e)) => return Err(stop_all(&mut sessions, e)),
    };
    for s in &mut sessions {
        if let Err(e) = s.send_line("go") {
            return Err(stop_all(&mut sessions, e));
        }
    }
    progress(Progress::Released { waited });
    let outcomes = gather(&mut sessions, &rx, deadlines.finish, progress, cancel);
    if cancel.load(Ordering::Relaxed) {
        return Err(cancelled(&mut sessions));
    }
    let mut faults = Vec::new();
    let mut completed = Vec::new();
    for (job, outcome) in jobs.iter().zip(outcomes) {
        match outcome {
            Ok(result) => completed.push(HostResult {
                host: job.host.name.clone(),
                result,
            }),
            Err(e) => faults.push(e),
        }
    }
    if !faults.is_empty() {
        return Err(Failure {
            faults,
            completed,
            cancelled: false,
        });
    }
    combine(completed).map_err(|e| merge_fault(e).into())
}

/// Merges the hosts' results and measures the start skew.
fn combine(hosts: Vec<HostResult>) -> Result<Distributed, MergeError> {
    let parts: Vec<(String, LoadResult)> = hosts
        .iter()
        .map(|h| (h.host.clone(), h.result.clone()))
        .collect();
    let merged = merge(&parts)?;
    let starts: Vec<f64> = hosts
        .iter()
        .filter_map(|h| h.result.measure_start_unix_s)
        .collect();
    let spread = |f: fn(f64, f64) -> f64| starts.iter().copied().reduce(f).unwrap_or(0.0);
    Ok(Distributed {
        merged,
        start_skew_ms: (spread(f64::max) - spread(f64::min)) * 1e3,
        saturated_hosts: hosts
            .iter()
            .filter(|h| h.result.client_saturated)
            .map(|h| h.host.clone())
            .collect(),
        hosts,
    })
}

fn merge_fault(e: MergeError) -> HostError {
    let host = match &e {
        MergeError::NoHistograms { host }
        | MergeError::Histogram { host, .. }
        | MergeError::Protocol { host, .. } => host.clone(),
        MergeError::Empty => "controller".into(),
    };
    HostError::Protocol {
        host,
        message: e.to_string(),
    }
}

/// Waits until every session printed `ready`; returns how long the first ready host waited.
/// `Err(None)`: cancelled.
fn await_ready(
    sessions: &mut [Session],
    rx: &Lines,
    within: Duration,
    progress: &dyn Fn(Progress),
    cancel: &AtomicBool,
) -> Result<Duration, Option<HostError>> {
    let deadline = Instant::now() + within;
    let mut ready = vec![false; sessions.len()];
    let mut first: Option<Instant> = None;
    while ready.iter().any(|r| !r) {
        match next_line(rx, deadline, cancel) {
            Ok((i, SessionLine::Text(line))) if line.trim() == "ready" => {
                ready[i] = true;
                first.get_or_insert_with(Instant::now);
                progress(Progress::Ready {
                    host: sessions[i].host.clone(),
                });
            }
            Ok((_, SessionLine::Text(_))) => {}
            Ok((i, SessionLine::Closed)) => {
                let status = sessions[i].wait_for(EXIT_GRACE);
                return Err(Some(sessions[i].failure(status, "before it was ready")));
            }
            Err(Wait::Cancelled) => return Err(None),
            Err(Wait::Timeout) => {
                let late = ready.iter().position(|r| !r).expect("one is not ready");
                return Err(Some(HostError::Timeout {
                    host: sessions[late].host.clone(),
                    what: "the barrier (connections and warm-up, then `ready`)".into(),
                    after: within,
                }));
            }
        }
    }
    Ok(first.map_or(Duration::ZERO, |t| t.elapsed()))
}

/// Collects every session's stdout after the release until it closes, and parses it.
fn gather(
    sessions: &mut [Session],
    rx: &Lines,
    within: Duration,
    progress: &dyn Fn(Progress),
    cancel: &AtomicBool,
) -> Vec<Result<LoadResult, HostError>> {
    let deadline = Instant::now() + within;
    let mut text = vec![String::new(); sessions.len()];
    let mut outcomes: Vec<Option<Result<LoadResult, HostError>>> =
        (0..sessions.len()).map(|_| None).collect();
    while outcomes.iter().any(Option::is_none) {
        match next_line(rx, deadline, cancel) {
            Ok((i, SessionLine::Text(line))) => {
                text[i].push_str(&line);
                text[i].push('\n');
            }
            Ok((i, SessionLine::Closed)) => {
                let s = &mut sessions[i];
                let status = s.wait_for(EXIT_GRACE);
                let parsed = match status {
                    Some(st) if st.success() => parse_result(&s.host, &text[i]),
                    // Its server answered nothing: the result says so, the lap is judged by it.
                    Some(st) => parse_result(&s.host, &text[i])
                        .ok()
                        .filter(|r| crate::load_result_stands(st.code(), Some(r.requests)))
                        .ok_or_else(|| s.failure(status, "while measuring")),
                    None => Err(s.failure(status, "while measuring")),
                };
                if parsed.is_ok() {
                    progress(Progress::Finished {
                        host: s.host.clone(),
                    });
                }
                outcomes[i] = Some(parsed);
            }
            Err(_) => break,
        }
    }
    outcomes
        .into_iter()
        .zip(sessions.iter_mut())
        .map(|(o, s)| {
            o.unwrap_or_else(|| {
                s.stop(EXIT_GRACE);
                Err(HostError::Timeout {
                    host: s.host.clone(),
                    what: "the measurement (no result)".into(),
                    after: within,
                })
            })
        })
        .collect()
}

fn parse_result(host: &str, text: &str) -> Result<LoadResult, HostError> {
    serde_json::from_str(text).map_err(|e| HostError::Protocol {
        host: host.to_string(),
        message: format!("its result is not valid JSON ({e})"),
    })
}

/// Stops every session (closing stdin: the remote groups die) and returns the fault.
fn stop_all(sessions: &mut [Session], fault: HostError) -> Failure {
    close_all(sessions);
    fault.into()
}

fn cancelled(sessions: &mut [Session]) -> Failure {
    close_all(sessions);
    Failure {
        cancelled: true,
        ..Failure::default()
    }
}

fn close_all(sessions: &mut [Session]) {
    for s in sessions.iter_mut() {
        s.close_stdin();
    }
    for s in sessions.iter_mut() {
        s.stop(EXIT_GRACE);
    }
}
