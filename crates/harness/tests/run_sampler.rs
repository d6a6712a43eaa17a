//! The /proc sampler follows the server's whole process tree.

use serverbench_harness::sampler::Sampler;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

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
