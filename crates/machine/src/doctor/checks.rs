//! The doctor's checks, one function each, reading through [`Source`] so that each is tested on
//! recorded files.

use super::{Check, CheckKind, Options, Probe, Status, Write};
use crate::disturbance::{self, LapWindow};
use crate::procfs::{self, parse_cpu_list_file};
use crate::{Live, Source};
use serverbench_model::disturbance::{Disturbance, Thresholds};
use serverbench_model::doctor::Setting;

pub(super) fn check(kind: CheckKind, status: Status, found: impl Into<String>) -> Check {
    Check {
        kind,
        status,
        found: found.into(),
        fix: None,
        writes: Vec::new(),
    }
}

pub(super) fn warn(kind: CheckKind, found: impl Into<String>, fix: impl Into<String>) -> Check {
    Check {
        fix: Some(fix.into()),
        ..check(kind, Status::Warn, found)
    }
}

fn cpus_of(src: &dyn Source) -> Vec<usize> {
    src.read("/sys/devices/system/cpu/online")
        .and_then(|t| parse_cpu_list_file(&t))
        .unwrap_or_default()
}

/// A VM (the `hypervisor` CPU flag) or a container (`/.dockerenv`, `/run/.containerenv`).
pub(super) fn virtualization(src: &dyn Source) -> Check {
    let kind = CheckKind::Virtualization;
    let vm = src.read("/proc/cpuinfo").map(|t| {
        t.lines()
            .any(|l| l.starts_with("flags") && l.contains(" hypervisor"))
    });
    let container = src.read("/.dockerenv").is_some() || src.read("/run/.containerenv").is_some();
    match (vm, container) {
        (None, _) => check(kind, Status::Unknown, "no /proc/cpuinfo"),
        (Some(vm), container) if vm || container => warn(
            kind,
            match (vm, container) {
                (true, true) => "a container in a virtual machine",
                (true, false) => "a virtual machine",
                _ => "a container",
            },
            "expect steal and noisy neighbours: compare interleaved, watch the disturbed laps",
        ),
        _ => check(kind, Status::Ok, "bare metal"),
    }
}

/// Every CPU's cpufreq governor should be `performance`.
pub(super) fn governor(src: &dyn Source) -> Check {
    let kind = CheckKind::Governor;
    let mut slow = Vec::new();
    let mut seen = false;
    for c in cpus_of(src) {
        let setting = Setting::Governor { cpu: c };
        if let Some(g) = src.read(&setting.path()) {
            seen = true;
            if g.trim() != "performance" {
                slow.push((setting, g.trim().to_owned()));
            }
        }
    }
    if !seen {
        return check(kind, Status::Unknown, "no cpufreq (usual in a VM)");
    }
    if slow.is_empty() {
        return check(kind, Status::Ok, "performance");
    }
    let mut c = warn(
        kind,
        format!("{} on {} CPUs", slow[0].1, slow.len()),
        "cpupower frequency-set -g performance",
    );
    c.writes = slow
        .into_iter()
        .map(|(setting, _)| Write {
            setting,
            value: "performance".into(),
        })
        .collect();
    c
}

/// Turbo/boost makes the frequency depend on temperature and on the other cores' load.
pub(super) fn turbo(src: &dyn Source) -> Check {
    let kind = CheckKind::Turbo;
    let (intel, boost) = (Setting::IntelNoTurbo, Setting::CpufreqBoost);
    if let Some(v) = src.read(&intel.path()) {
        return match v.trim() {
            "1" => check(kind, Status::Ok, "off (intel_pstate)"),
            _ => with_write(
                warn(kind, "on (intel_pstate)", format!("echo 1 > {intel}")),
                intel,
                "1",
            ),
        };
    }
    match src.read(&boost.path()).as_deref().map(str::trim) {
        Some("0") => check(kind, Status::Ok, "off"),
        Some(_) => with_write(warn(kind, "on", format!("echo 0 > {boost}")), boost, "0"),
        None => check(kind, Status::Unknown, "no boost control (usual in a VM)"),
    }
}

pub(super) fn with_write(mut c: Check, setting: Setting, value: &str) -> Check {
    c.writes.push(Write {
        setting,
        value: value.into(),
    });
    c
}

/// The server's and the client's CPUs should not be SMT siblings of each other.
pub(super) fn smt(src: &dyn Source, opts: &Options) -> Check {
    let kind = CheckKind::Smt;
    let siblings = |c: usize| {
        src.read(&format!(
            "/sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list"
        ))
        .and_then(|t| parse_cpu_list_file(&t))
    };
    let mut shared = Vec::new();
    for &s in &opts.server_cpus {
        let Some(sib) = siblings(s) else {
            return check(kind, Status::Unknown, "no CPU topology");
        };
        shared.extend(
            opts.client_cpus
                .iter()
                .filter(|c| **c != s && sib.contains(c))
                .map(|c| (s, *c)),
        );
    }
    if let Some((s, c)) = shared.first() {
        return warn(
            kind,
            format!("server CPU {s} and client CPU {c} share a core"),
            "pin the server and the client to different cores (--server-cpus/--client-cpus)",
        );
    }
    let active = src.read("/sys/devices/system/cpu/smt/active");
    let found = match active.as_deref().map(str::trim) {
        Some("1") => "SMT on, but server and client are on different cores",
        _ => "no SMT siblings",
    };
    check(kind, Status::Ok, found)
}

/// Isolated CPUs (`isolcpus=`, `nohz_full=`) keep the scheduler's other work off them.
pub(super) fn isolated(src: &dyn Source, opts: &Options) -> Check {
    let kind = CheckKind::IsolatedCpus;
    let Some(iso) = src
        .read("/sys/devices/system/cpu/isolated")
        .and_then(|t| parse_cpu_list_file(&t))
    else {
        return check(kind, Status::Unknown, "no /sys/devices/system/cpu/isolated");
    };
    let wanted: Vec<usize> = opts.server_cpus.clone();
    if !wanted.is_empty() && wanted.iter().all(|c| iso.contains(c)) {
        return check(kind, Status::Ok, format!("server CPUs isolated ({iso:?})"));
    }
    warn(
        kind,
        if iso.is_empty() {
            "none".to_owned()
        } else {
            format!("{iso:?}, not the server's")
        },
        "boot with isolcpus=<server CPUs> nohz_full=<server CPUs> (kernel command line)",
    )
}

/// The disturbance arithmetic over the probe, on `pinned` (empty: every CPU), nothing of ours
/// running.
fn over_probe(probe: &Probe, pinned: Vec<usize>) -> Disturbance {
    let window = LapWindow {
        wall_s: probe.seconds,
        pinned,
        ticks_per_s: procfs::ticks_per_second(),
        ..Default::default()
    };
    disturbance::between(&probe.before, &probe.after, &window, &Thresholds::default())
}

/// Other processes busy on the CPUs a run would pin, over the probe.
pub(super) fn other_processes(probe: &Probe, opts: &Options) -> Check {
    let kind = CheckKind::OtherProcesses;
    let mut pinned: Vec<usize> = opts.server_cpus.clone();
    pinned.extend(&opts.client_cpus);
    let d = over_probe(probe, pinned);
    if d.other_processes_pct <= Thresholds::default().other_processes_pct {
        return check(
            kind,
            Status::Ok,
            format!("{:.0}% busy", d.other_processes_pct),
        );
    }
    let top: Vec<String> = probe
        .busiest
        .iter()
        .take(3)
        .map(|(pid, name, s)| format!("{name} ({pid}) {:.0}%", 100.0 * s / probe.seconds))
        .collect();
    warn(
        kind,
        format!("{:.0}% busy: {}", d.other_processes_pct, top.join(", ")),
        "stop them, or pin them elsewhere (taskset -acp <other CPUs> PID)",
    )
}

/// The hypervisor's steal over the probe.
pub(super) fn steal(probe: &Probe) -> Check {
    let kind = CheckKind::Steal;
    let d = over_probe(probe, Vec::new());
    if d.steal_pct > Thresholds::default().steal_pct {
        warn(
            kind,
            format!("{:.1}% over {:.0} s", d.steal_pct, probe.seconds),
            "a busy host: run at a quieter time, or on dedicated vCPUs",
        )
    } else {
        check(kind, Status::Ok, format!("{:.1}%", d.steal_pct))
    }
}

/// A load average above half the CPUs before the run starts.
pub(super) fn load_average(src: &dyn Source) -> Check {
    let kind = CheckKind::LoadAverage;
    let (Some(l), n) = (
        src.read("/proc/loadavg")
            .and_then(|t| procfs::parse_loadavg(&t)),
        cpus_of(src).len().max(1),
    ) else {
        return check(kind, Status::Unknown, "no /proc/loadavg");
    };
    let found = format!("{:.2} on {n} CPUs", l.one);
    if l.one > n as f64 / 2.0 {
        warn(
            kind,
            found,
            "wait for the machine to settle (uptime), or find the load (top)",
        )
    } else {
        check(kind, Status::Ok, found)
    }
}

/// Enough file descriptors for thousands of connections.
pub(super) fn open_files() -> Check {
    let kind = CheckKind::OpenFiles;
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return check(kind, Status::Unknown, "getrlimit failed");
    }
    open_files_of(lim.rlim_cur, lim.rlim_max)
}

pub(super) fn open_files_of(soft: u64, hard: u64) -> Check {
    let kind = CheckKind::OpenFiles;
    let found = format!("{soft} (hard {hard})");
    if soft >= 65_536 || hard >= 65_536 {
        // serverbench raises its soft limit to the hard one itself.
        check(kind, Status::Ok, found)
    } else {
        warn(
            kind,
            found,
            "ulimit -n 65536 (raise the hard limit in limits.conf)",
        )
    }
}

/// Ephemeral ports, TIME_WAIT reuse and the accept backlog, for connection-per-request runs.
pub(super) fn network(src: &dyn Source) -> Vec<Check> {
    let sysctl = |name: &str| src.read(&format!("/proc/sys/{}", name.replace('.', "/")));
    let mut out = Vec::new();
    let ports = "net.ipv4.ip_local_port_range";
    out.push(match sysctl(ports).map(|t| parse_range(&t)) {
        Some(Some((lo, hi))) if hi - lo + 1 >= 28_000 => {
            check(CheckKind::EphemeralPorts, Status::Ok, format!("{lo}-{hi}"))
        }
        Some(Some((lo, hi))) => with_write(
            warn(
                CheckKind::EphemeralPorts,
                format!("{lo}-{hi}: {} ports", hi - lo + 1),
                format!("sysctl -w {ports}=\"1024 65535\""),
            ),
            Setting::LocalPortRange,
            "1024 65535",
        ),
        _ => check(CheckKind::EphemeralPorts, Status::Unknown, "not readable"),
    });
    let tw = "net.ipv4.tcp_tw_reuse";
    out.push(match sysctl(tw).as_deref().map(str::trim) {
        Some("1") => check(CheckKind::TcpTwReuse, Status::Ok, "1"),
        Some("2") => check(CheckKind::TcpTwReuse, Status::Ok, "2 (loopback only)"),
        Some(v) => with_write(
            warn(
                CheckKind::TcpTwReuse,
                format!("{v}: --new-conn runs may run out of ports"),
                format!("sysctl -w {tw}=1"),
            ),
            Setting::TcpTwReuse,
            "1",
        ),
        None => check(CheckKind::TcpTwReuse, Status::Unknown, "not readable"),
    });
    let backlog = "net.core.somaxconn";
    out.push(
        match sysctl(backlog).and_then(|t| t.trim().parse::<u64>().ok()) {
            Some(n) if n >= 4096 => check(CheckKind::Somaxconn, Status::Ok, n.to_string()),
            Some(n) => with_write(
                warn(
                    CheckKind::Somaxconn,
                    format!("{n}: bursts of connections may be dropped"),
                    format!("sysctl -w {backlog}=4096"),
                ),
                Setting::Somaxconn,
                "4096",
            ),
            None => check(CheckKind::Somaxconn, Status::Unknown, "not readable"),
        },
    );
    out
}

fn parse_range(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_ascii_whitespace().map(|x| x.parse::<u64>().ok());
    let (lo, hi) = (f.next()??, f.next()??);
    (hi >= lo).then_some((lo, hi))
}

/// Whether io_uring is allowed: the `kernel.io_uring_disabled` sysctl and a real ring setup
/// (seccomp profiles refuse the system call without a sysctl saying so).
pub(super) fn io_uring(src: &dyn Source) -> Check {
    io_uring_of(
        src.read("/proc/sys/kernel/io_uring_disabled").as_deref(),
        try_io_uring(),
    )
}

pub(super) fn io_uring_of(sysctl: Option<&str>, setup: Result<(), i32>) -> Check {
    let kind = CheckKind::IoUring;
    match (sysctl.map(str::trim), setup) {
        (_, Ok(())) => check(kind, Status::Ok, "available"),
        (Some("2"), _) => warn(
            kind,
            "disabled (kernel.io_uring_disabled=2)",
            "sysctl -w kernel.io_uring_disabled=0",
        ),
        (_, Err(errno)) if errno == libc::ENOSYS => {
            check(kind, Status::Warn, "not in this kernel (ENOSYS)")
        }
        (_, Err(errno)) => warn(
            kind,
            format!("refused (errno {errno}: seccomp or a restricted sysctl)"),
            "allow io_uring_setup in the container's seccomp profile",
        ),
    }
}

/// Tries to create and close a one-entry ring.
fn try_io_uring() -> Result<(), i32> {
    // io_uring_params is 120 bytes; the kernel fills it in.
    let mut params = [0u8; 120];
    // SAFETY: io_uring_setup(entries, params) writes only into `params`, which we own.
    let fd = unsafe { libc::syscall(libc::SYS_io_uring_setup, 1u32, params.as_mut_ptr()) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
    }
    // SAFETY: fd is the ring we just created.
    unsafe { libc::close(fd as i32) };
    Ok(())
}

/// Two samples `seconds` apart and the processes that used CPU in between.
pub(super) fn probe_live(seconds: f64) -> super::Probe {
    let me = std::process::id();
    let before = disturbance::sample(&Live);
    let first = pid_times(me);
    std::thread::sleep(std::time::Duration::from_secs_f64(seconds));
    let after = disturbance::sample(&Live);
    let hz = procfs::ticks_per_second();
    let mut busiest: Vec<(u32, String, f64)> = pid_times(me)
        .into_iter()
        .filter_map(|(pid, name, t)| {
            let t0 = first.iter().find(|f| f.0 == pid).map_or(0, |f| f.2);
            let s = t.saturating_sub(t0) as f64 / hz;
            (s > 0.0).then_some((pid, name, s))
        })
        .collect();
    busiest.sort_by(|a, b| b.2.total_cmp(&a.2));
    super::Probe {
        before,
        after,
        seconds,
        busiest,
    }
}

fn pid_times(me: u32) -> Vec<(u32, String, u64)> {
    Live.list("/proc")
        .into_iter()
        .filter_map(|name| name.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter_map(|pid| {
            let s = procfs::parse_pid_stat(&Live.read(&format!("/proc/{pid}/stat"))?)?;
            Some((pid, s.comm, s.cpu_ticks))
        })
        .collect()
}

#[cfg(test)]
#[path = "checks_tests.rs"]
mod tests;
