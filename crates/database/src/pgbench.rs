//! The database's floor (issue 22): what the private cluster answers alone, with no framework in
//! front, measured with `pgbench` (Debian's postgresql-15 ships it). The workload is what a
//! contract server's `/db` asks: `SELECT id, randomnumber FROM world WHERE id = :id` with a
//! random id in 1..10,000, prepared statements, over TCP, `clients` sessions for `duration`,
//! pgbench pinned to the given CPUs; one select per round trip ([`FloorMode::Plain`]), or
//! [`PIPELINE_DEPTH`] selects sent in pipeline mode (`\startpipeline`/`\endpipeline`,
//! PostgreSQL 14+) before their answers are read ([`FloorMode::Pipeline`]). Both are reference
//! rates, not ceilings: a server whose driver pipelines (each query with its own Sync) can pass
//! the plain one.

use crate::init::{pinned, program};
use crate::{DbError, DbUrl, Result};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The script: one random `world` row by id, as `/db` asks.
pub const WORLD_BY_ID: &str =
    "\\set id random(1, 10000)\nSELECT id, randomnumber FROM world WHERE id = :id;\n";

/// Selects per pipeline in [`FloorMode::Pipeline`].
pub const PIPELINE_DEPTH: u32 = 20;

/// How pgbench sends its selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FloorMode {
    /// One select, its answer read, then the next ([`WORLD_BY_ID`]).
    #[default]
    Plain,
    /// [`PIPELINE_DEPTH`] selects sent in pipeline mode, then their answers read.
    Pipeline,
}

impl FloorMode {
    /// Selects per pgbench transaction.
    pub fn selects_per_transaction(self) -> u32 {
        match self {
            FloorMode::Plain => 1,
            FloorMode::Pipeline => PIPELINE_DEPTH,
        }
    }

    /// Its script.
    pub fn script(self) -> String {
        match self {
            FloorMode::Plain => WORLD_BY_ID.to_owned(),
            FloorMode::Pipeline => {
                let mut s = String::new();
                for i in 1..=PIPELINE_DEPTH {
                    s.push_str(&format!("\\set id{i} random(1, 10000)\n"));
                }
                s.push_str("\\startpipeline\n");
                for i in 1..=PIPELINE_DEPTH {
                    s.push_str(&format!(
                        "SELECT id, randomnumber FROM world WHERE id = :id{i};\n"
                    ));
                }
                s.push_str("\\endpipeline\n");
                s
            }
        }
    }

    fn file_name(self) -> &'static str {
        match self {
            FloorMode::Plain => "world-by-id.sql",
            FloorMode::Pipeline => "world-by-id-pipelined.sql",
        }
    }
}

/// A floor measurement to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FloorSpec {
    /// pgbench's sessions (`-c`).
    pub clients: u32,
    /// Its CPUs (`taskset -c`); empty: not pinned. Its threads (`-j`): as many as CPUs, at most
    /// `clients` and a divisor of it.
    pub cpus: Vec<usize>,
    /// How long it runs (`-T`, whole seconds, at least 1).
    pub duration: Duration,
    /// One select per round trip, or pipelined.
    pub mode: FloorMode,
}

impl FloorSpec {
    /// pgbench's threads: the largest divisor of `clients` not above the CPU count (1 when not
    /// pinned), so every thread has the same number of sessions.
    pub fn threads(&self) -> u32 {
        let most = (self.cpus.len().max(1) as u32).min(self.clients.max(1));
        (1..=most)
            .rev()
            .find(|t| self.clients.is_multiple_of(*t))
            .unwrap_or(1)
    }

    /// `-T`: the duration in whole seconds, at least 1.
    pub fn seconds(&self) -> u64 {
        self.duration.as_secs_f64().round().max(1.0) as u64
    }
}

/// What pgbench measured.
#[derive(Debug, Clone, PartialEq)]
pub struct FloorResult {
    /// Sessions.
    pub clients: u32,
    /// Threads.
    pub threads: u32,
    /// Selects it completed (transactions × selects per transaction).
    pub transactions: u64,
    /// Selects per second: its `tps` (without the initial connection time) × selects per
    /// transaction.
    pub selects_per_s: f64,
    /// The measured seconds (`-T`).
    pub duration_s: f64,
}

/// Runs pgbench's world-by-id workload against `url` (the script written in `scratch`); bounded:
/// killed when it runs 30 s past its duration.
pub fn measure_floor(url: &DbUrl, spec: &FloorSpec, scratch: &Path) -> Result<FloorResult> {
    let pgbench = program("pgbench")?;
    std::fs::create_dir_all(scratch).map_err(DbError::io(scratch))?;
    let script = scratch.join(spec.mode.file_name());
    std::fs::write(&script, spec.mode.script()).map_err(DbError::io(&script))?;
    let mut cmd = command(&pgbench, url, spec, &script);
    let step = || format!("pgbench ({} clients) on port {}", spec.clients, url.port);
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| DbError::Step {
            step: step(),
            detail: e.to_string(),
        })?;
    let limit = Duration::from_secs(spec.seconds() + 30);
    let out = wait_bounded(child, limit).map_err(|detail| DbError::Step {
        step: step(),
        detail,
    })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(DbError::Step {
            step: step(),
            detail: format!("{}: {}", out.status, last_line(&stderr)),
        });
    }
    parse(&stdout, spec).ok_or_else(|| DbError::Step {
        step: step(),
        detail: format!("no tps in its output: {}", last_line(&stdout)),
    })
}

fn command(pgbench: &Path, url: &DbUrl, spec: &FloorSpec, script: &Path) -> Command {
    let mut cmd = pinned(pgbench, &spec.cpus);
    cmd.args(["-n", "-M", "prepared", "-f"])
        .arg(script)
        .args(["-c", &spec.clients.to_string()])
        .args(["-j", &spec.threads().to_string()])
        .args(["-T", &spec.seconds().to_string()])
        .args(["-h", &url.host, "-p", &url.port.to_string()])
        .args(["-U", &url.user, &url.dbname])
        .env("PGPASSWORD", &url.password)
        .env("PGSSLMODE", "disable");
    cmd
}

/// Waits for `child`, killing its process group past `limit`.
fn wait_bounded(
    mut child: std::process::Child,
    limit: Duration,
) -> std::result::Result<std::process::Output, String> {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return child.wait_with_output().map_err(|e| e.to_string()),
            Ok(None) if start.elapsed() > limit => {
                let pgid = nix::unistd::Pid::from_raw(child.id() as i32);
                let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
                let _ = child.wait();
                return Err(format!(
                    "ran longer than {} s and was killed",
                    limit.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(e.to_string()),
        }
    }
}

fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
}

/// Reads pgbench's report: `number of transactions actually processed: N` and
/// `tps = X (without initial connection time)`.
pub fn parse(stdout: &str, spec: &FloorSpec) -> Option<FloorResult> {
    let mut transactions: Option<u64> = None;
    let mut tps: Option<f64> = None;
    for line in stdout.lines() {
        if let Some(rest) = line.strip_prefix("number of transactions actually processed:") {
            transactions = rest.split_whitespace().next()?.parse().ok();
        }
        if let Some(rest) = line.strip_prefix("tps = ") {
            tps = rest.split_whitespace().next()?.parse().ok();
        }
    }
    let per = spec.mode.selects_per_transaction();
    Some(FloorResult {
        clients: spec.clients,
        threads: spec.threads(),
        transactions: transactions? * u64::from(per),
        selects_per_s: tps? * f64::from(per),
        duration_s: spec.seconds() as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str = "transaction type: /tmp/x/world-by-id.sql
scaling factor: 1
query mode: prepared
number of clients: 16
number of threads: 1
maximum number of tries: 1
duration: 3 s
number of transactions actually processed: 55123
number of failed transactions: 0 (0.000%)
latency average = 0.870 ms
initial connection time = 12.345 ms
tps = 18374.512345 (without initial connection time)
";

    fn spec(clients: u32, cpus: &[usize]) -> FloorSpec {
        FloorSpec {
            clients,
            cpus: cpus.to_vec(),
            duration: Duration::from_secs(3),
            mode: FloorMode::Plain,
        }
    }

    #[test]
    fn pgbench_s_report_gives_the_transactions_and_the_selects_per_second() {
        let r = parse(OUTPUT, &spec(16, &[1])).unwrap();
        assert_eq!(r.transactions, 55_123);
        assert!((r.selects_per_s - 18_374.512345).abs() < 1e-9);
        assert_eq!((r.clients, r.threads, r.duration_s), (16, 1, 3.0));
        assert!(parse("pgbench: error: connection refused", &spec(16, &[1])).is_none());
    }

    #[test]
    fn threads_follow_the_cpus_and_divide_the_clients() {
        assert_eq!(spec(16, &[1]).threads(), 1);
        assert_eq!(spec(16, &[2, 3]).threads(), 2);
        assert_eq!(spec(9, &[0, 1]).threads(), 1);
        assert_eq!(spec(2, &[0, 1, 2, 3]).threads(), 2);
        assert_eq!(spec(16, &[]).threads(), 1);
    }

    #[test]
    fn a_pipelined_transaction_counts_its_twenty_selects() {
        let pipelined = FloorSpec {
            mode: FloorMode::Pipeline,
            ..spec(16, &[1])
        };
        let r = parse(OUTPUT, &pipelined).unwrap();
        assert_eq!(r.transactions, 55_123 * 20);
        assert!((r.selects_per_s - 18_374.512345 * 20.0).abs() < 1e-6);
        let script = FloorMode::Pipeline.script();
        assert!(script.contains("\\startpipeline\n") && script.ends_with("\\endpipeline\n"));
        assert_eq!(script.matches("FROM world WHERE id = :id").count(), 20);
    }

    #[test]
    fn the_script_asks_what_db_asks() {
        assert!(WORLD_BY_ID.contains("SELECT id, randomnumber FROM world WHERE id = :id"));
        assert!(WORLD_BY_ID.contains("random(1, 10000)"));
    }
}
