//! `serverbench load --find-max` over several machines: two client namespaces search the
//! capacity of a server namespace's fixture of known capacity (bench/netns-hosts.sh). Needs
//! root and `ip netns` (or SERVERBENCH_SKIP_NETNS=1); the bed takes its own file lock (see netns/mod.rs).

mod netns;
mod skip;

use netns::{bed, root, PORT, SERVER_ADDR};

/// python/queue's capacity: 4 workers x 10 ms.
const CAPACITY: f64 = 400.0;

#[test]
fn find_max_over_two_client_hosts_finds_the_servers_capacity_within_ten_percent() {
    let Some(bed) = bed() else { return };
    let cache = tempfile::tempdir().unwrap();
    let catalog = root().join("crates/hosts/tests/fixtures/catalog");
    let _server = bed.serve(cache.path(), &catalog, "python/queue", &[]);
    let hosts = bed.hosts.to_string_lossy().into_owned();
    let url = format!("http://{SERVER_ADDR}:{PORT}/hello");
    let out = bed.serverbench(&[
        "load",
        "--hosts",
        &hosts,
        "--client-hosts",
        "sb-client1,sb-client2",
        "--find-max",
        "--slo",
        "p99<=60ms",
        "--start-rate",
        "100",
        "-c",
        "16",
        "-t",
        "1",
        "-d",
        "2s",
        "--warmup",
        "500ms",
        "--json",
        &url,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let found = v["capacity_rps"].as_f64().expect("a capacity");
    assert!(
        (found - CAPACITY).abs() <= 0.1 * CAPACITY,
        "found {found}/s, true {CAPACITY}/s: {v:#}"
    );
    let steps = v["steps"].as_array().unwrap();
    assert!(steps.len() >= 4, "a ramp and a bisection: {v:#}");
    bed.assert_clients_clean();
}
