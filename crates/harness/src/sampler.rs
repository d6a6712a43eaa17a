//! Sampling a server's whole process tree from `/proc` every 100 ms while a lap runs: RSS,
//! CPU seconds, threads, processes and context switches of every descendant of the server's pid
//! (cluster workers, gunicorn workers, BEAM schedulers...).
//!
//! CPU time is counted per process as the growth of `utime + stime` since it was first seen (or
//! since the lap started), so a process that exits during the lap keeps what it used up to its
//! last sample. Memory stays bounded: one small entry per process seen.

use crate::results::record::ServerStats;
use serverbench_machine::affinity::pin_current_thread_to;
use serverbench_machine::{process as proc, procfs};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The default sampling period.
pub const INTERVAL: Duration = Duration::from_millis(100);
/// At most this many processes are tracked per lap (fork-per-request servers stay bounded).
const MAX_TRACKED: usize = 65_536;
const MIB: f64 = 1024.0 * 1024.0;

/// Every live pid with its parent.
fn all_parents() -> Vec<(u32, u32)> {
    proc::pids()
        .into_iter()
        .filter_map(|pid| Some((pid, proc::stat(pid)?.ppid)))
        .collect()
}

/// `root` and all its descendants.
pub fn process_tree(root: u32) -> Vec<u32> {
    let pairs = all_parents();
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(
            pairs
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    tree
}

/// Per-process counters at first sight and last sight.
#[derive(Debug, Clone, Copy)]
struct Seen {
    first_cpu: u64,
    last_cpu: u64,
    first_ctx: (u64, u64),
    last_ctx: (u64, u64),
}

/// What the sampler thread accumulates.
#[derive(Debug, Default)]
struct Acc {
    samples: u32,
    rss_sum_mb: f64,
    rss_peak_mb: f64,
    rss_first_mb: Option<f64>,
    rss_last_mb: f64,
    threads_peak: u32,
    processes_peak: u32,
    seen: HashMap<u32, Seen>,
}

impl Acc {
    fn sample(&mut self, root: u32, page: f64, first: bool) {
        let tree = process_tree(root);
        let (mut rss, mut threads, mut procs) = (0u64, 0u32, 0u32);
        for pid in tree {
            let Some(st) = proc::stat(pid) else { continue };
            rss += st.rss_pages;
            threads += st.threads;
            procs += 1;
            let ctx = proc::ctx_switches(pid);
            let room = self.seen.len() < MAX_TRACKED;
            match self.seen.get_mut(&pid) {
                Some(s) => {
                    s.last_cpu = st.cpu_ticks.max(s.last_cpu);
                    s.last_ctx = ctx;
                }
                None if room => {
                    // A process born during the lap counts from zero; one present at the
                    // start counts from its value then.
                    let (cpu0, ctx0) = if first {
                        (st.cpu_ticks, ctx)
                    } else {
                        (0, (0, 0))
                    };
                    self.seen.insert(
                        pid,
                        Seen {
                            first_cpu: cpu0,
                            last_cpu: st.cpu_ticks,
                            first_ctx: ctx0,
                            last_ctx: ctx,
                        },
                    );
                }
                None => {}
            }
        }
        if procs == 0 {
            return;
        }
        let mb = rss as f64 * page / MIB;
        self.samples += 1;
        self.rss_sum_mb += mb;
        self.rss_peak_mb = self.rss_peak_mb.max(mb);
        self.rss_first_mb.get_or_insert(mb);
        self.rss_last_mb = mb;
        self.threads_peak = self.threads_peak.max(threads);
        self.processes_peak = self.processes_peak.max(procs);
    }

    fn finish(self, wall_s: f64, requests: Option<u64>, ticks_per_s: f64) -> ServerStats {
        let ticks: u64 = self
            .seen
            .values()
            .map(|s| s.last_cpu.saturating_sub(s.first_cpu))
            .sum();
        let cpu_s = ticks as f64 / ticks_per_s;
        let sum = |f: fn(&Seen) -> u64| self.seen.values().map(f).sum::<u64>();
        ServerStats {
            samples: self.samples,
            rss_peak_mb: self.rss_peak_mb,
            rss_mean_mb: if self.samples > 0 {
                self.rss_sum_mb / self.samples as f64
            } else {
                0.0
            },
            rss_first_mb: self.rss_first_mb.unwrap_or(0.0),
            rss_last_mb: self.rss_last_mb,
            cpu_s,
            cores_used: if wall_s > 0.0 { cpu_s / wall_s } else { 0.0 },
            cpu_us_per_request: requests.filter(|&n| n > 0).map(|n| cpu_s * 1e6 / n as f64),
            threads_peak: self.threads_peak,
            processes_peak: self.processes_peak,
            ctx_switches_voluntary: sum(|s| s.last_ctx.0.saturating_sub(s.first_ctx.0)),
            ctx_switches_involuntary: sum(|s| s.last_ctx.1.saturating_sub(s.first_ctx.1)),
        }
    }
}

/// A running sampler; [`Sampler::finish`] stops it and returns the lap's [`ServerStats`].
#[derive(Debug)]
pub struct Sampler {
    stop: Arc<AtomicBool>,
    started: Instant,
    handle: JoinHandle<Acc>,
}

impl Sampler {
    /// Starts sampling the tree rooted at `root_pid` every `interval`, on a thread pinned to
    /// `cpus` (empty = not pinned) so that it does not steal the server's CPU.
    pub fn start(root_pid: u32, interval: Duration, cpus: Vec<usize>) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let root = root_pid;
        let page = proc::page_size() as f64;
        let handle = std::thread::spawn(move || {
            let _ = pin_current_thread_to(&cpus);
            let mut acc = Acc::default();
            acc.sample(root, page, true);
            let mut next = Instant::now() + interval;
            while !flag.load(Ordering::Relaxed) {
                let now = Instant::now();
                if now < next {
                    std::thread::sleep((next - now).min(Duration::from_millis(10)));
                    continue;
                }
                acc.sample(root, page, false);
                next += interval;
            }
            acc.sample(root, page, false);
            acc
        });
        Sampler {
            stop,
            started: Instant::now(),
            handle,
        }
    }

    /// Stops sampling; `requests` (from the load tool) gives CPU µs per request.
    pub fn finish(self, requests: Option<u64>) -> ServerStats {
        self.stop.store(true, Ordering::Relaxed);
        let wall = self.started.elapsed().as_secs_f64();
        let hz = procfs::ticks_per_second();
        match self.handle.join() {
            Ok(acc) => acc.finish(wall, requests, hz),
            Err(_) => ServerStats::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_process_is_its_own_tree_root() {
        let me = std::process::id();
        assert_eq!(process_tree(me)[0], me);
    }
}
