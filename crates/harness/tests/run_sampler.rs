//! The /proc sampler follows the server's whole process tree.

use serverbench_harness::sampler::Sampler;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn sampler_sees_a_forked_childs_rss() {
    // The parent stays small; its forked child writes 120 MiB and sleeps.
    let script = "import os, time\n\
                  if os.fork() == 0:\n    b = b'x' * (120 << 20)\n    time.sleep(3)\n    os._exit(0)\n\
                  time.sleep(3)\n";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(600));
    let sampler = Sampler::start(child.id(), Duration::from_millis(100), vec![]);
    std::thread::sleep(Duration::from_millis(500));
    let stats = sampler.finish(Some(1000));
    let _ = child.kill();
    let _ = child.wait();
    assert!(stats.processes_peak >= 2, "{stats:?}");
    assert!(stats.rss_peak_mb > 110.0, "{stats:?}");
    assert!(stats.samples >= 3, "{stats:?}");
    assert!(stats.cpu_us_per_request.is_some());
}
