//! CPU affinity for the whole workspace: the mask this process may run on, and pinning the
//! calling thread (and so the threads and processes it starts afterwards), through nix. The
//! engine pins its load threads with it, the harness its servers, load tools and sampler.

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;
use std::io;

/// The CPUs in the calling thread's affinity mask (inherited by the threads and processes it
/// starts), in ascending order; `[0]` if the kernel will not say.
pub fn affinity_cpus() -> Vec<usize> {
    match sched_getaffinity(Pid::from_raw(0)) {
        Ok(set) => (0..CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect(),
        Err(_) => vec![0],
    }
}

/// Pins the calling thread to one CPU.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    pin_current_thread_to(&[cpu])
}

/// Pins the calling thread, and so the threads and processes it starts afterwards, to `cpus`;
/// empty: no-op.
pub fn pin_current_thread_to(cpus: &[usize]) -> io::Result<()> {
    if cpus.is_empty() {
        return Ok(());
    }
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c)?;
    }
    Ok(sched_setaffinity(Pid::from_raw(0), &set)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serverbench_model::cpus::parse_cpu_list;

    /// `Cpus_allowed_list` of this thread, as the kernel reports it in /proc.
    fn allowed_by_proc() -> Vec<usize> {
        let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        let line = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap();
        parse_cpu_list(line).unwrap()
    }

    #[test]
    fn affinity_mask_lists_at_least_one_cpu() {
        let mask = affinity_cpus();
        assert!(!mask.is_empty());
        assert_eq!(mask, allowed_by_proc());
    }

    #[test]
    fn a_pinned_thread_reports_only_its_cpu() {
        let last = *affinity_cpus().last().unwrap();
        let seen = std::thread::spawn(move || {
            pin_current_thread(last).unwrap();
            (affinity_cpus(), allowed_by_proc())
        })
        .join()
        .unwrap();
        assert_eq!(seen, (vec![last], vec![last]));
        assert!(pin_current_thread(CpuSet::count()).is_err());
    }
}
