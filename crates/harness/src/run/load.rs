//! Running the load tool as a subprocess pinned to the client CPUs, bounded in time and
//! cancellable, and parsing what it printed. The client's CPU time comes from `wait4`'s rusage.

use crate::results::record::{LoadParams, Measurement};
use crate::tools::{Prepared, Target};
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Why a load run produced no measurement.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Ctrl-C.
    #[error("interrupted")]
    Cancelled,
    /// The tool could not build a command line or parse its output.
    #[error(transparent)]
    Tool(#[from] crate::tools::ToolError),
    /// The tool could not start.
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The tool exited unsuccessfully.
    #[error("`{command}` exited with {status}: {output}")]
    Failed {
        /// The command line.
        command: String,
        /// Exit status as text.
        status: String,
        /// The last lines it printed.
        output: String,
    },
    /// A capacity search stopped without an answer (the goal missed at the first rate, a step
    /// that measured nothing): the steps it measured are kept.
    #[error("`{command}` exited with {status}: {why}")]
    Search {
        /// The command line.
        command: String,
        /// Exit status as text.
        status: String,
        /// The search's own line on why it stopped.
        why: String,
        /// The search as far as it went.
        kept: Box<Measurement>,
    },
    /// The tool ran past its deadline and was killed.
    #[error("`{command}` ran longer than {secs:.0} s and was killed")]
    Timeout {
        /// The command line.
        command: String,
        /// The deadline.
        secs: f64,
    },
}

/// A load run's result.
#[derive(Debug, Clone)]
pub struct LoadOutcome {
    /// What the tool measured, plus the client CPU from rusage when it did not report it.
    pub measurement: Measurement,
    /// Wall time of the subprocess.
    pub wall_s: f64,
}

/// How long a run may take before it is killed.
fn deadline(params: &LoadParams) -> Duration {
    let secs = match (params.duration_s, params.requests) {
        (Some(d), _) if params.find_max.is_some() => {
            let f = params.find_max.as_ref().expect("checked");
            f.longest_s(d, params.warmup_s) * 1.5 + 30.0
        }
        (Some(d), _) => d * 1.5 + 30.0,
        _ => 600.0,
    };
    Duration::from_secs_f64(secs)
}

fn reader(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut p) = pipe {
            let mut bytes = Vec::new();
            let _ = p.read_to_end(&mut bytes);
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        text
    })
}

/// Waits for `pid` with `wait4`, killing it on cancel or deadline; returns (status, rusage).
fn wait(pid: i32, cancel: &AtomicBool, limit: Duration) -> (Option<i32>, libc::rusage, bool, bool) {
    let start = Instant::now();
    // SAFETY: rusage is plain data.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut status = 0;
    let (mut cancelled, mut timed_out) = (false, false);
    loop {
        let flags = if cancelled || timed_out {
            0
        } else {
            libc::WNOHANG
        };
        // SAFETY: pid is our own child; status and usage are valid out-pointers.
        let rc = unsafe { libc::wait4(pid, &mut status, flags, &mut usage) };
        if rc == pid {
            return (Some(status), usage, cancelled, timed_out);
        }
        if rc < 0 {
            return (None, usage, cancelled, timed_out);
        }
        if cancel.load(Ordering::Relaxed) || start.elapsed() > limit {
            cancelled = cancel.load(Ordering::Relaxed);
            timed_out = !cancelled;
            // Our own child's process group: the child leads it and is not yet reaped.
            crate::process::signal_group(pid as u32, nix::sys::signal::Signal::SIGKILL);
            continue;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The run was cancelled while the tool ran: the flag is set, or the tool died of SIGINT or
/// SIGTERM (sent to it by someone else) and the flag follows within a moment.
fn interrupted(status: Option<i32>, cancel: &AtomicBool) -> bool {
    let by_signal = status.is_some_and(|s| {
        libc::WIFSIGNALED(s) && matches!(libc::WTERMSIG(s), libc::SIGINT | libc::SIGTERM)
    });
    let deadline = Instant::now() + Duration::from_millis(if by_signal { 500 } else { 0 });
    loop {
        if cancel.load(Ordering::SeqCst) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn describe(status: i32) -> String {
    if libc::WIFEXITED(status) {
        format!("exit code {}", libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        format!("signal {}", libc::WTERMSIG(status))
    } else {
        format!("status {status}")
    }
}

/// Runs one load: `tool` against `target` with `params`, pinned to `client_cpus`; a capacity
/// search also reads the CPU of `server_pid`'s tree per step (see
/// [`Prepared::command_watching`]).
pub fn run_load(
    tool: &Prepared,
    params: &LoadParams,
    target: &Target,
    client_cpus: &[usize],
    server_pid: Option<u32>,
    cancel: &AtomicBool,
) -> Result<LoadOutcome, LoadError> {
    if cancel.load(Ordering::Relaxed) {
        return Err(LoadError::Cancelled);
    }
    let line = tool.command_watching(params, target, client_cpus, server_pid)?;
    let command = line.to_string();
    let mut cmd = Command::new(&line.program);
    let stdin = if line.stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    };
    cmd.args(&line.args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    // Its own process group: a terminal's Ctrl-C reaches serverbench only, which cancels the lap
    // instead of seeing the tool die of SIGINT and recording a failure.
    let mut child =
        crate::process::spawn_new_group_pinned(&mut cmd, client_cpus).map_err(|source| {
            LoadError::Spawn {
                command: command.clone(),
                source,
            }
        })?;
    if let (Some(text), Some(mut pipe)) = (&line.stdin, child.stdin.take()) {
        // One line, read at once: a tool that exits before reading it fails on its own.
        let _ = std::io::Write::write_all(&mut pipe, format!("{text}\n").as_bytes());
    }
    let out = reader(child.stdout.take());
    let err = reader(child.stderr.take());
    let (status, usage, cancelled, timed_out) = wait(child.id() as i32, cancel, deadline(params));
    let wall_s = started.elapsed().as_secs_f64();
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    if cancelled || interrupted(status, cancel) {
        return Err(LoadError::Cancelled);
    }
    if timed_out {
        return Err(LoadError::Timeout {
            command,
            secs: deadline(params).as_secs_f64(),
        });
    }
    let code = status.and_then(|s| libc::WIFEXITED(s).then(|| libc::WEXITSTATUS(s)));
    if let (Some(c), true) = (code, code != Some(0)) {
        if let Some(kept) = search_so_far(tool, &stdout) {
            return Err(LoadError::Search {
                command,
                status: format!("exit code {c}"),
                why: kept
                    .capacity
                    .as_ref()
                    .and_then(|r| r.note.clone())
                    .unwrap_or_default(),
                kept: Box::new(kept),
            });
        }
    }
    if code != Some(0) && !resumed_none(tool, code, &stdout) && !unanswered(tool, code, &stdout) {
        return Err(LoadError::Failed {
            command,
            status: status.map_or("an unknown status".into(), describe),
            output: serverbench_catalog::logs::last_lines(&format!("{stdout}\n{stderr}"), 8),
        });
    }
    let mut m = tool.parse(&stdout)?;
    fill_client_cpu(&mut m, &usage, wall_s, client_cpus.len());
    Ok(LoadOutcome {
        measurement: m,
        wall_s,
    })
}

/// `serverbench load` exits 5 when resumption was asked and the server resumed nothing; the
/// lap still measured full handshakes, which the record keeps (its `tls` block says 0 resumed
/// and the report's diagnostics explain it) instead of a failure without figures.
fn resumed_none(tool: &Prepared, code: Option<i32>, stdout: &str) -> bool {
    tool.tool == serverbench_model::Tool::Serverbench
        && code == Some(5)
        && tool.parse(stdout).is_ok_and(|m| {
            m.requests.unwrap_or(0) > 0 && m.tls.as_ref().is_some_and(|t| t.handshakes_resumed == 0)
        })
}

/// `serverbench load` exits 6 when its server answered nothing; the lap keeps what it measured
/// (what was in flight, the errors) and is judged by it (`serverbench_model::answers`), as a lap
/// over the hosts is, instead of failing as the tool's fault.
fn unanswered(tool: &Prepared, code: Option<i32>, stdout: &str) -> bool {
    tool.tool == serverbench_model::Tool::Serverbench
        && tool
            .parse(stdout)
            .is_ok_and(|m| serverbench_hosts::load_result_stands(code, m.requests))
}

/// `serverbench load --find-max` prints its search whatever its exit (10: the goal missed at
/// the first rate; a step's error's otherwise): the steps it measured, when there are any.
fn search_so_far(tool: &Prepared, stdout: &str) -> Option<Measurement> {
    if tool.tool != serverbench_model::Tool::Serverbench {
        return None;
    }
    let m = tool.parse(stdout).ok()?;
    m.capacity.as_ref().filter(|c| !c.steps.is_empty())?;
    Some(m)
}

/// Client CPU from rusage for tools that do not report it, and the saturation flag (≥ 90% of
/// the CPUs the client ran on).
fn fill_client_cpu(m: &mut Measurement, usage: &libc::rusage, wall_s: f64, cpus: usize) {
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let cpu = tv(usage.ru_utime) + tv(usage.ru_stime);
    if m.client_cpu_s.is_none() && m.capacity.is_none() {
        m.client_cpu_s = Some(cpu);
        m.client_cpu_us_per_request = m.requests.filter(|&n| n > 0).map(|n| cpu * 1e6 / n as f64);
        let cpus = if cpus == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            cpus
        };
        m.client_saturated = (wall_s > 0.0).then_some(cpu >= 0.9 * wall_s * cpus as f64);
    }
}
