//! Several machines, for real: client namespaces load a server namespace over veth pairs, each
//! reached with OpenSSH (bench/netns-hosts.sh). Needs root and `ip netns` (or
//! SERVERBENCH_SKIP_NETNS=1) and, for the delay case, netem (or SERVERBENCH_SKIP_NETEM=1).

mod netns;
mod skip;

use netns::{bed, bytes_into, command_lines_in, run_folders, Bed, PORT, SERVER_ADDR};
use serverbench_model::histo;
use serverbench_model::histo::{latency_of, new_histogram};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

fn url() -> String {
    format!("http://{SERVER_ADDR}:{PORT}/hello")
}

/// `serverbench load --hosts ... --client-hosts sb-client1,sb-client2 --json` + `extra`.
fn distributed(bed: &Bed, extra: &[&str]) -> (std::process::Output, serde_json::Value) {
    let hosts = bed.hosts.to_string_lossy().into_owned();
    let mut args = vec![
        "load",
        "--hosts",
        &hosts,
        "--client-hosts",
        "sb-client1,sb-client2",
    ];
    args.extend(["--json", "-c", "4", "-t", "1"]);
    args.extend(extra);
    let u = url();
    args.push(&u);
    let out = bed.serverbench(&args);
    let v = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out, v)
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn two_client_namespaces_load_the_server_namespace_and_merge_exactly() {
    let Some(bed) = bed() else { return };
    let cache = tempfile::tempdir().unwrap();
    let server = bed.start_server(cache.path());
    let before = bytes_into("sb-server");
    let (out, v) = distributed(&bed, &["-d", "2s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let hosts = v["hosts"].as_array().unwrap();
    let names: Vec<&str> = hosts.iter().map(|h| h["host"].as_str().unwrap()).collect();
    assert_eq!(names, ["sb-client1", "sb-client2"], "a per-host breakdown");
    let sum: u64 = hosts.iter().map(|h| h["requests"].as_u64().unwrap()).sum();
    assert!(sum > 0);
    assert_eq!(
        v["requests"].as_u64().unwrap(),
        sum,
        "merged count = sum of the hosts'"
    );
    let mut all = new_histogram();
    for h in hosts {
        let part = histo::decode(h["histograms"]["latency_us"].as_str().unwrap()).unwrap();
        assert_eq!(part.len(), h["requests"].as_u64().unwrap());
        all.add(&part).unwrap();
    }
    let one = latency_of(&all);
    assert_eq!(v["latency_us"]["p50"].as_f64().unwrap(), one.p50);
    assert_eq!(v["latency_us"]["p99"].as_f64().unwrap(), one.p99);
    let merged = histo::decode(v["histograms"]["latency_us"].as_str().unwrap()).unwrap();
    assert_eq!(merged, all, "the merged histogram is the sum of the hosts'");
    assert!(
        v["start_skew_ms"].as_f64().unwrap() < 100.0,
        "{}",
        v["start_skew_ms"]
    );
    // The requests really crossed the bridge into sb-server (~40 bytes each at least).
    assert!(bytes_into("sb-server") - before > sum * 40);
    drop(server);
    bed.assert_nothing_left();
}

#[test]
fn two_ms_of_netem_delay_on_the_server_link_raises_p50_by_about_the_round_trip() {
    let Some(bed) = bed() else { return };
    if !bed.netem() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let server = bed.start_server(cache.path());
    let p50 = |bed: &Bed| {
        let (out, v) = distributed(bed, &["-d", "2s"]);
        assert!(out.status.success(), "{}", stderr(&out));
        v["latency_us"]["p50"].as_f64().unwrap()
    };
    let base = p50(&bed);
    bed.script(&["delay", "sb-server", "2"]);
    let delayed = p50(&bed);
    bed.script(&["delay", "sb-server", "0"]);
    let added = delayed - base;
    assert!(
        (1500.0..4000.0).contains(&added),
        "p50 {base} µs -> {delayed} µs: +{added} µs for a 2 ms longer round trip"
    );
    drop(server);
    bed.assert_nothing_left();
}

#[test]
fn a_client_whose_sshd_dies_mid_run_is_named_and_the_next_run_works() {
    let Some(bed) = bed() else { return };
    let cache = tempfile::tempdir().unwrap();
    let server = bed.start_server(cache.path());
    let mut child = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["load", "--hosts"])
        .arg(&bed.hosts)
        .args([
            "--client-hosts",
            "sb-client1,sb-client2",
            "-c",
            "4",
            "-t",
            "1",
        ])
        .args(["-d", "8s", &url()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut text = String::new();
    while !text.contains("released") {
        assert!(err.read_line(&mut text).unwrap() > 0, "no release: {text}");
    }
    std::thread::sleep(Duration::from_millis(500));
    bed.script(&["kill-sshd", "sb-client1"]);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "{text}{rest}");
    let fault = rest
        .lines()
        .find(|l| l.starts_with("serverbench load: sb-client1: ssh:"))
        .unwrap_or_else(|| panic!("no line naming sb-client1: {rest}"));
    assert!(fault.contains("while measuring"), "{fault}");
    assert!(
        rest.contains("sb-client2: completed"),
        "what sb-client2 measured is reported: {rest}"
    );
    bed.assert_clients_clean();
    bed.script(&["start-sshd", "sb-client1"]);
    let (out, v) = distributed(&bed, &["-d", "1s"]);
    assert!(out.status.success(), "the next run: {}", stderr(&out));
    assert_eq!(v["hosts"].as_array().unwrap().len(), 2);
    drop(server);
    bed.assert_nothing_left();
}

#[test]
fn a_barrier_that_never_completes_names_the_late_host_and_stops_everyone() {
    let Some(bed) = bed() else { return };
    let hosts = bed.hosts.to_string_lossy().into_owned();
    // Nothing answers at .99: connections hang for --timeout, longer than the barrier waits.
    let out = bed.serverbench(&[
        "load",
        "--hosts",
        &hosts,
        "--client-hosts",
        "sb-client1,sb-client2",
        "-c",
        "2",
        "--timeout",
        "30s",
        "--barrier-timeout",
        "1s",
        "http://198.18.0.99:8080/",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.starts_with("serverbench load: sb-client1: the barrier") && err.contains("within 1s"),
        "{err}"
    );
    bed.assert_nothing_left();
}

/// A copy of the bed's inventory with `extra` appended to host `name`'s table.
fn inventory_with(bed: &Bed, dir: &std::path::Path, name: &str, extra: &str) -> String {
    let text = std::fs::read_to_string(&bed.hosts).unwrap();
    let header = format!("[hosts.{name}]\n");
    let text = text.replace(&header, &format!("{header}{extra}\n"));
    let path = dir.join("hosts.toml");
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn another_version_a_missing_binary_and_a_refused_key_are_each_one_line_naming_the_host() {
    let Some(bed) = bed() else { return };
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("old-serverbench");
    std::fs::write(&fake, "#!/bin/sh\necho 'serverbench 0.0.1'\n").unwrap();
    let exec = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&fake, exec).unwrap();
    // The bed's ssh client options, but another key: sshd refuses it.
    let key = dir.path().join("other_key");
    let keygen = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&key)
        .status()
        .unwrap();
    assert!(keygen.success());
    let bed_config = bed.hosts.with_file_name("ssh_config");
    let config = std::fs::read_to_string(&bed_config).unwrap();
    let other = dir.path().join("ssh_config");
    let key_line = format!(
        "IdentityFile {}",
        bed_config.with_file_name("client_key").display()
    );
    assert!(config.contains(&key_line), "{config}");
    std::fs::write(
        &other,
        config.replace(&key_line, &format!("IdentityFile {}", key.display())),
    )
    .unwrap();
    let cases = [
        (
            format!("binary = \"{}\"", fake.display()),
            "sb-client2: found `serverbench 0.0.1`, expected `serverbench ",
        ),
        (
            "binary = \"/nonexistent/serverbench\"".to_string(),
            "sb-client2: no serverbench at /nonexistent/serverbench",
        ),
        (
            format!("ssh_config = \"{}\"", other.display()),
            "sb-client2: ssh: root@198.18.0.12: Permission denied (publickey)",
        ),
    ];
    for (extra, expected) in cases {
        let hosts = inventory_with(&bed, dir.path(), "sb-client2", &extra);
        let out = bed.serverbench(&[
            "load",
            "--hosts",
            &hosts,
            "--client-hosts",
            "sb-client1,sb-client2",
            "-d",
            "1s",
            &url(),
        ]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{extra}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{extra}: {err}");
        assert!(err.contains(expected), "{extra}: {err}");
        bed.assert_nothing_left();
    }
}

#[test]
fn hosts_check_reports_ssh_version_cpus_and_clock_for_every_namespace() {
    let Some(bed) = bed() else { return };
    let hosts = bed.hosts.to_string_lossy().into_owned();
    let out = bed.serverbench(&["hosts", "check", "--hosts", &hosts]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    let version = format!("serverbench {}", env!("CARGO_PKG_VERSION"));
    for ns in netns::NAMESPACES {
        let row = text
            .lines()
            .find(|l| l.starts_with(ns))
            .unwrap_or_else(|| panic!("no row for {ns}: {text}"));
        assert!(row.contains(" ok ") && row.contains(&version), "{row}");
        assert!(row.contains(" ms (±"), "{row}");
    }
    bed.assert_nothing_left();
}

/// `serverbench run` of python/hello (the fixture catalog) with the server in sb-server and the
/// load from both client namespaces; `extra` are more flags.
fn run_over_hosts(bed: &Bed, results: &std::path::Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_serverbench"));
    cmd.args(["run", "--root"])
        .arg(netns::root().join("crates/hosts/tests/fixtures/catalog"))
        .args([
            "--servers",
            "python/hello",
            "--scenario",
            "hello",
            "-c",
            "4",
        ])
        .args(["--warmup", "500ms", "--hosts"])
        .arg(&bed.hosts)
        .args([
            "--server-host",
            "sb-server",
            "--client-hosts",
            "sb-client1,sb-client2",
        ])
        .arg("--results")
        .arg(results)
        .args(extra)
        .env("SERVERBENCH_CACHE", results.join("cache"));
    cmd
}

/// The single results folder under `results`.
fn results_dir(results: &std::path::Path) -> std::path::PathBuf {
    std::fs::read_dir(results)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.join("results.jsonl").exists())
        .expect("a results folder")
}

/// Every lap record of the single results folder under `results`.
fn laps(results: &std::path::Path) -> Vec<serde_json::Value> {
    let dir = results_dir(results);
    std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_suite_lap_over_the_hosts_records_the_merge_each_client_and_the_server_host() {
    let Some(bed) = bed() else { return };
    let results = tempfile::tempdir().unwrap();
    let out = run_over_hosts(&bed, results.path(), &["--laps", "1", "-d", "2s"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let laps = laps(results.path());
    let lap = &laps[0];
    assert_eq!(lap["status"], "ok", "{lap}");
    let clients = lap["hosts"]["clients"].as_array().unwrap();
    let names: Vec<&str> = clients
        .iter()
        .map(|c| c["host"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["sb-client1", "sb-client2"]);
    assert_eq!(lap["hosts"]["server_host"], "sb-server");
    let sum: u64 = clients
        .iter()
        .map(|c| c["load"]["requests"].as_u64().unwrap())
        .sum();
    assert!(sum > 0);
    assert_eq!(lap["load"]["requests"].as_u64().unwrap(), sum);
    let mut all = new_histogram();
    for c in clients {
        let h = c["load"]["histograms"]["latency_us"].as_str().unwrap();
        all.add(histo::decode(h).unwrap()).unwrap();
    }
    let merged = histo::decode(lap["load"]["histograms"]["latency_us"].as_str().unwrap()).unwrap();
    assert_eq!(merged, all);
    assert_eq!(
        lap["load"]["latency_us"]["p50"].as_f64().unwrap(),
        latency_of(&all).p50
    );
    assert_eq!(
        lap["load"]["latency_us"]["p99"].as_f64().unwrap(),
        latency_of(&all).p99
    );
    assert!(
        lap["server_stats"]["cpu_s"].as_f64().unwrap() > 0.0,
        "sampled in sb-server"
    );
    assert!(lap["hosts"]["start_skew_ms"].as_f64().is_some());
    let offsets: Vec<f64> = clients
        .iter()
        .map(|c| c["start_offset_ms"].as_f64().unwrap())
        .collect();
    assert!(
        offsets.contains(&0.0),
        "offsets from the first host: {offsets:?}"
    );
    assert_per_host_breakdown(&String::from_utf8_lossy(&out.stdout), "run's own table");
    let dir = results_dir(results.path());
    let md = bed.serverbench(&["report", dir.to_str().unwrap(), "--format", "md"]);
    assert!(md.status.success(), "{}", stderr(&md));
    assert_per_host_breakdown(&String::from_utf8_lossy(&md.stdout), "report --format md");
    bed.assert_nothing_left();
}

/// A report with the per-host table of the lap: a row for each client host, then the lap's
/// server host.
fn assert_per_host_breakdown(report: &str, what: &str) {
    let (_, hosts) = report
        .split_once("er client host:")
        .unwrap_or_else(|| panic!("{what}: no per-host table in\n{report}"));
    for host in ["sb-client1", "sb-client2", "sb-server"] {
        assert!(
            hosts
                .lines()
                .any(|l| l.contains("python/hello") && l.contains(host)),
            "{what}: no row of {host} in\n{report}"
        );
    }
}

/// Waits until a `serverbench load` runs in `ns`.
fn wait_for_load_in(ns: &str) {
    for _ in 0..300 {
        let out = Command::new("ip")
            .args(["netns", "pids", ns])
            .output()
            .unwrap();
        let found = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .any(|pid| {
                let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                String::from_utf8_lossy(&cmd).contains("load\0")
            });
        if found {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("no serverbench load started in {ns}");
}

#[test]
fn a_client_dying_mid_lap_fails_that_lap_naming_it_and_the_next_lap_runs() {
    let Some(bed) = bed() else { return };
    let results = tempfile::tempdir().unwrap();
    let mut child = run_over_hosts(&bed, results.path(), &["--laps", "2", "-d", "4s"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_load_in("sb-client1");
    std::thread::sleep(Duration::from_millis(2500));
    bed.script(&["kill-sshd", "sb-client1"]);
    bed.script(&["start-sshd", "sb-client1"]);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(3), "a failed lap: exit 3");
    let laps = laps(results.path());
    assert_eq!(laps.len(), 2, "{laps:?}");
    assert_eq!(laps[0]["status"], "failed");
    assert_eq!(laps[0]["failure"]["kind"], "hosts", "{}", laps[0]);
    let why = laps[0]["failure"]["detail"].as_str().unwrap();
    assert!(why.starts_with("sb-client1: ssh:"), "{why}");
    let kept = laps[0]["hosts"]["clients"].as_array().unwrap();
    assert_eq!(kept.len(), 1, "what sb-client2 measured is kept");
    assert_eq!(kept[0]["host"], "sb-client2");
    assert_eq!(laps[1]["status"], "ok", "{}", laps[1]);
    bed.assert_nothing_left();
}

#[test]
fn ctrl_c_during_a_lap_over_the_hosts_leaves_nothing_in_any_namespace() {
    let Some(bed) = bed() else { return };
    let results = tempfile::tempdir().unwrap();
    let mut child = run_over_hosts(&bed, results.path(), &["--laps", "1", "-d", "20s"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_load_in("sb-client2");
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    bed.assert_nothing_left();
}

#[test]
fn https_laps_over_the_hosts_trust_the_run_certificate_copied_to_each_host() {
    let Some(bed) = bed() else { return };
    let results = tempfile::tempdir().unwrap();
    let before = run_folders();
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["run", "--root"])
        .arg(netns::root().join("crates/harness/tests/fixtures/catalog"))
        .args(["--servers", "python/good-tls"])
        .args(["--scenario", "https-hello,https-resume", "-c", "4"])
        .args(["--warmup", "500ms", "--laps", "1", "-d", "2s", "--hosts"])
        .arg(&bed.hosts)
        .args(["--server-host", "sb-server"])
        .args(["--client-hosts", "sb-client1,sb-client2", "--results"])
        .arg(results.path())
        .env("SERVERBENCH_CACHE", results.path().join("cache"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let laps = laps(results.path());
    assert_eq!(laps.len(), 2, "{laps:?}");
    for lap in &laps {
        assert_eq!(lap["status"], "ok", "{lap}");
        assert_eq!(lap["params"]["tls"], true);
        assert!(lap["load"]["requests"].as_u64().unwrap() > 0, "{lap}");
        let version = lap["load"]["tls"]["version"].as_str().unwrap_or_default();
        assert!(version.starts_with("TLSv1."), "the merged lap: {lap}");
        assert_eq!(lap["load"]["errors"]["tls"], 0, "{lap}");
        for c in lap["hosts"]["clients"].as_array().unwrap() {
            assert!(c["load"]["requests"].as_u64().unwrap() > 0, "{c}");
            assert!(c["load"]["tls"]["version"].is_string(), "{c}");
        }
    }
    let resume = laps
        .iter()
        .find(|l| l["scenario"] == "https-resume")
        .unwrap();
    let tls = &resume["load"]["tls"];
    let sum = |key: &str| -> u64 {
        let clients = resume["hosts"]["clients"].as_array().unwrap();
        clients
            .iter()
            .map(|c| c["load"]["tls"][key].as_u64().unwrap())
            .sum()
    };
    assert!(tls["handshakes"].as_u64().unwrap() > 0, "{tls}");
    assert_eq!(tls["handshakes"].as_u64(), Some(sum("handshakes")), "{tls}");
    assert_eq!(
        tls["handshakes_resumed"].as_u64(),
        Some(sum("handshakes_resumed")),
        "{tls}"
    );
    assert_eq!(
        run_folders(),
        before,
        "the run's folders on the hosts are removed"
    );
    bed.assert_nothing_left();
}

#[test]
fn load_over_the_hosts_gives_each_client_host_its_own_copy_of_cacert() {
    let Some(bed) = bed() else { return };
    let (cache, certs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let files = serverbench_harness::certs::generate(certs.path(), SERVER_ADDR).unwrap();
    let (cert, key) = (files.cert.to_str().unwrap(), files.key.to_str().unwrap());
    let catalog = netns::root().join("crates/harness/tests/fixtures/catalog");
    let tls = ["--tls-port", "8443", "--tls-cert", cert, "--tls-key", key];
    let server = bed.serve(cache.path(), &catalog, "python/good-tls", &tls);
    let before = run_folders();
    let child = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["load", "--hosts"])
        .arg(&bed.hosts)
        .args(["--client-hosts", "sb-client1,sb-client2", "--json"])
        .args(["-c", "2", "-t", "1", "-d", "2s", "--cacert", cert])
        .arg(format!("https://{SERVER_ADDR}:8443/hello"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_load_in("sb-client1");
    let load = command_lines_in("sb-client1")
        .into_iter()
        .find(|c| c.contains(" load "))
        .expect("the load in sb-client1");
    // The load spec (with the copy's path: see the unit tests in cli/src/flags/load/tests.rs)
    // travels on stdin; the copies exist while the load runs.
    let during = run_folders();
    let out = child.wait_with_output().unwrap();
    drop(server);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(load.contains(" --spec - "), "{load}");
    assert!(during.len() > before.len(), "a copy per host: {during:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["requests"].as_u64().unwrap() > 0, "{v}");
    assert!(
        v["tls"]["version"].as_str().unwrap().starts_with("TLSv1."),
        "{v}"
    );
    assert_eq!(run_folders(), before, "the copies are removed");
    bed.assert_nothing_left();
}
