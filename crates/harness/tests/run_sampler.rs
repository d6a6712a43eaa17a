//! The /proc sampler follows the server's whole process tree; a server started with
//! `WORKERS=N` on N CPUs (a core sweep's turn) shows N busy workers.

mod common;

use serverbench_harness::process::{self, group_members, StartOptions};
use serverbench_harness::sampler::Sampler;
use serverbench_machine::affinity::affinity_cpus;
use serverbench_model::cpus::parse_cpu_list;
use serverbench_results::record::ServerStats;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Waits (up to 20 s, on a loaded machine) until the forked child holds its 120 MiB.
fn wait_for_big_child(parent: u32) {
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        let children = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
            .unwrap_or_default();
        let big = children.split_whitespace().any(|pid| {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
                .is_some_and(|kb| kb > 115 * 1024)
        });
        if big {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn sampler_sees_a_forked_childs_rss() {
    // The parent stays small; its forked child writes 120 MiB and sleeps.
    let script = "import os, time\n\
                  if os.fork() == 0:\n    b = b'x' * (120 << 20)\n    time.sleep(30)\n    os._exit(0)\n\
                  time.sleep(30)\n";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .process_group(0)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_big_child(child.id());
    let sampler = Sampler::start(child.id(), Duration::from_millis(100), vec![]);
    std::thread::sleep(Duration::from_millis(500));
    let stats = sampler.finish(Some(1000));
    // SAFETY: signalling the process group this test created (parent and forked child).
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    let _ = child.wait();
    assert!(stats.processes_peak >= 2, "{stats:?}");
    assert!(stats.rss_peak_mb > 110.0, "{stats:?}");
    assert!(stats.samples >= 3, "{stats:?}");
    assert!(stats.cpu_us_per_request.is_some());
}

/// One worker process of the fixture: its CPU time so far and the CPUs it may run on.
#[derive(Debug)]
struct Worker {
    pid: u32,
    cpu_ticks: u64,
    cpus: Vec<usize>,
}

/// A worker counts as busy once it has used this many clock ticks (50 ms at 100 Hz).
const BUSY_TICKS: u64 = 5;

/// The children of `pid` with their CPU time and affinity.
fn workers_of(pid: u32) -> Vec<Worker> {
    let children =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    children
        .split_whitespace()
        .filter_map(|c| {
            let pid: u32 = c.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let f: Vec<&str> = stat[stat.rfind(')')? + 2..].split_whitespace().collect();
            let cpu_ticks = f[11].parse::<u64>().ok()? + f[12].parse::<u64>().ok()?;
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
            let list = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
            let cpus = parse_cpu_list(list.trim()).ok()?;
            Some(Worker {
                pid,
                cpu_ticks,
                cpus,
            })
        })
        .collect()
}

/// Samples the server's tree in short windows until `n` workers are busy and the sampler saw
/// them (on a loaded machine a worker may wait its turn), for at most 30 s; returns the last
/// window's stats and the workers then.
fn sample_until_busy(pid: u32, n: usize) -> (ServerStats, Vec<Worker>) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let sampler = Sampler::start(pid, Duration::from_millis(50), vec![]);
        std::thread::sleep(Duration::from_millis(300));
        let stats = sampler.finish(None);
        let workers = workers_of(pid);
        let busy = workers.iter().filter(|w| w.cpu_ticks >= BUSY_TICKS).count();
        let seen = stats.processes_peak as usize > n && stats.cpu_s > 0.0;
        if (busy >= n && seen) || Instant::now() > deadline {
            return (stats, workers);
        }
    }
}

/// Starts the fixture with `WORKERS=n` pinned to `cpus`, samples it until busy, stops it.
fn run_workers(n: usize, cpus: &[usize]) -> (ServerStats, Vec<Worker>) {
    let (paths, cache) = common::fixture_paths();
    let srv = common::server("python/workers");
    let port = process::free_port("127.0.0.1").unwrap();
    let mut opts = StartOptions::new(&srv, port, None, cache.path().join("server.log"));
    opts.ready_timeout = Duration::from_secs(20);
    opts.workers = n;
    opts.cpus = cpus.to_vec();
    let mut p = process::start(&srv, &paths, &opts).unwrap();
    let seen = sample_until_busy(p.pid(), n);
    let pgid = p.pgid();
    p.stop();
    assert_eq!(
        group_members(pgid),
        Vec::<u32>::new(),
        "workers left behind"
    );
    seen
}

/// The first two CPUs this test may use.
fn two_cpus() -> Vec<usize> {
    let cpus = affinity_cpus();
    assert!(
        cpus.len() >= 2,
        "this test needs two CPUs; it may use only {cpus:?}"
    );
    cpus[..2].to_vec()
}

#[test]
fn a_server_started_with_two_workers_on_two_cpus_shows_two_busy_workers_in_the_sampler() {
    let cpus = two_cpus();
    let (stats, workers) = run_workers(2, &cpus);
    assert_eq!(workers.len(), 2, "WORKERS=2 forks two workers: {workers:?}");
    for w in &workers {
        assert!(
            w.cpu_ticks >= BUSY_TICKS,
            "worker {} is idle: {workers:?}",
            w.pid
        );
        assert_eq!(w.cpus, cpus, "worker {} may not use both CPUs", w.pid);
    }
    assert_eq!(
        stats.processes_peak, 3,
        "the server and its two workers: {stats:?}"
    );
    assert!(stats.threads_peak >= 3, "{stats:?}");
    assert!(stats.cpu_s > 0.0, "{stats:?}");
}

#[test]
fn the_same_server_with_one_worker_on_one_cpu_shows_one() {
    let cpus = two_cpus();
    let (stats, workers) = run_workers(1, &cpus[..1]);
    assert_eq!(workers.len(), 1, "{workers:?}");
    assert_eq!(workers[0].cpus, &cpus[..1]);
    assert_eq!(stats.processes_peak, 2, "{stats:?}");
}
