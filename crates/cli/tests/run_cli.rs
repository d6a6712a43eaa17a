//! `serverbench run` from the command line, against the harness's fixture catalog
//! (`crates/harness/tests/fixtures/run-catalog`: Python stdlib servers).

mod skip;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures/run-catalog")
}

fn serverbench(args: &[&str], results: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("run")
        .args(["--root", fixture_root().to_str().unwrap()])
        .args(["--results", results.to_str().unwrap()])
        .args(args)
        .env("SERVERBENCH_CACHE", results.join("cache"))
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn only_results_dir(results: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("results.jsonl").is_file())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
}

#[test]
fn adhoc_run_with_the_builtin_engine_prints_the_table_and_the_results_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "--servers",
        "python/fast",
        "--scenario",
        "hello",
        "-c",
        "2",
        "-d",
        "500ms",
    ];
    let out = serverbench(
        &[&args[..], &["--laps", "1", "--warmup", "0s"]].concat(),
        tmp.path(),
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("python/fast"), "{stdout}");
    let header = stdout.lines().find(|l| l.contains("req/s")).unwrap();
    assert!(!header.contains("ctx sw/req"), "the narrow table: {header}");
    let dir = only_results_dir(tmp.path());
    assert!(
        stdout.contains(&format!("results: {}", dir.display())),
        "{stdout}"
    );
    assert!(dir
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .ends_with("Z-adhoc"));
    let line = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let rec: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    assert_eq!(
        (rec["status"].as_str(), rec["tool"].as_str()),
        (Some("ok"), Some("serverbench"))
    );
    assert!(rec["load"]["requests"].as_u64().unwrap() > 0, "{rec}");
    assert!(
        rec["server_stats"]["rss_peak_mb"].as_f64().unwrap() > 1.0,
        "{rec}"
    );
}

#[test]
fn wide_shows_every_column_of_the_final_table_versions_included() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "--servers",
        "python/fast",
        "--scenario",
        "hello",
        "-c",
        "2",
        "-d",
        "500ms",
        "--laps",
        "1",
        "--warmup",
        "0s",
        "--wide",
    ];
    let out = serverbench(&args, tmp.path());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let header = stdout.lines().find(|l| l.contains("req/s")).unwrap();
    for column in ["version", "cv%", "ctx sw/req"] {
        assert!(header.contains(column), "{column} missing from {header}");
    }
}

#[test]
fn wrk_runs_as_the_load_tool_when_asked() {
    let on_path = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("wrk").is_file()));
    if !on_path {
        if std::env::var_os("SERVERBENCH_SKIP_WRK").is_some() {
            skip::say_skipped("no wrk and SERVERBENCH_SKIP_WRK=1");
            return;
        }
        panic!(
            "this test needs wrk: `make test` installs it (apt-get install wrk) when root; or set \
             SERVERBENCH_SKIP_WRK=1 to skip it explicitly"
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "--servers",
        "python/fast",
        "-c",
        "2",
        "-d",
        "1s",
        "--laps",
        "1",
        "--warmup",
        "0s",
        "--tool",
        "wrk",
    ];
    let out = serverbench(&args, tmp.path());
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let dir = only_results_dir(tmp.path());
    let line = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let rec: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    assert_eq!(rec["tool"], "wrk");
    assert!(rec["load"]["rps"].as_f64().unwrap() > 0.0, "{rec}");
    assert!(
        rec["load"]["bytes_written"].is_null(),
        "wrk does not report it: {rec}"
    );
}

#[test]
fn a_suite_with_an_unknown_key_fails_naming_file_line_and_key() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("bad.toml");
    std::fs::write(
        &suite,
        "name = \"bad\"\ndescription = \"d\"\nreproduces = \"none\"\nservers = \"all\"\nlapz = 3\n",
    )
    .unwrap();
    let out = serverbench(&[suite.to_str().unwrap()], tmp.path());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("bad.toml:5: lapz: unknown field `lapz`"),
        "{stderr}"
    );
}

#[test]
fn a_suite_naming_only_unknown_servers_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let out = serverbench(&["--servers", "go/nowhere", "-d", "500ms"], tmp.path());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("go/nowhere") && stderr.contains("not in the catalog"),
        "{stderr}"
    );
}

#[test]
fn the_adhoc_form_without_servers_explains_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let out = serverbench(&["--scenario", "hello"], tmp.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("--servers"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn laps_and_duration_given_with_a_suite_win_over_quick_and_relabel_the_profile() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("long.toml");
    std::fs::write(
        &suite,
        "name = \"long\"\ndescription = \"d\"\nreproduces = \"none\"\nservers = [\"python/fast\"]\n\
         laps = 6\nwarmup = \"5s\"\n[[scenario]]\nname = \"hello\"\npaths = [\"/hello\"]\n\
         requires = \"hello\"\n[[profile]]\nname = \"c2/30s\"\nconnections = 2\nduration = \"30s\"\n",
    )
    .unwrap();
    let results = tmp.path().join("results");
    let args = [
        suite.to_str().unwrap(),
        "--quick",
        "--laps",
        "3",
        "-d",
        "300ms",
    ];
    let out = serverbench(&args, &results);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dir = only_results_dir(&results);
    let records: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 3, "--laps 3 beats --quick's 2");
    for r in &records {
        assert_eq!(r["profile"], "c2/300ms");
        assert_eq!(r["params"]["duration_s"], 0.3);
        assert_eq!(
            r["params"]["warmup_s"], 0.5,
            "--quick caps the suite's 5 s warm-up"
        );
    }
}

#[test]
fn a_server_that_dies_makes_the_run_exit_3_with_its_log_tail_on_stdout_once() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "--servers",
        "python/dies,python/fast",
        "--scenario",
        "hello",
        "-c",
        "2",
        "-d",
        "1s",
        "--laps",
        "1",
        "--warmup",
        "0s",
        "--no-verify",
    ];
    let out = serverbench(&args, tmp.path());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    let failed = stdout.lines().filter(|l| l.starts_with("FAILED")).count();
    assert_eq!(failed, 1, "{stdout}");
    assert!(stdout.contains("FAILED python/dies"), "{stdout}");
    assert!(
        stdout.contains("    listening on"),
        "the server's log tail is shown under the failure: {stdout}"
    );
}

#[test]
fn a_core_sweep_runs_the_counts_that_fit_and_says_why_the_others_were_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "--servers",
        "python/fast",
        "-c",
        "2",
        "-d",
        "500ms",
        "--laps",
        "1",
        "--warmup",
        "0s",
        "--server-cpus",
        "0",
        "--client-cpus",
        "1",
        "--server-cpus-sweep",
        "1,2,all",
    ];
    let out = serverbench(&args, tmp.path());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("skipped 2 server CPU(s)"), "{stderr}");
    assert!(stderr.contains("already in the sweep"), "{stderr}");
    let dir = only_results_dir(tmp.path());
    let line = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let rec: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    assert_eq!(rec["profile"], "2conn/500ms/1cpu", "{rec}");
    assert_eq!(rec["params"]["server_cpus"], 1, "{rec}");
}

/// A `--dry-run` of python/fast, python/second (`min_warmup_s = 1`), a server of yours that
/// would leave `server-started` and a load executable that would leave `load-started`, over
/// hello and h2-hello (which no fixture server implements), at 1 and 64 server CPUs.
fn dry_run(tmp: &Path, extra: &[&str]) -> Output {
    let load = tmp.join("load.sh");
    let loaded = tmp.join("load-started");
    std::fs::write(&load, format!("#!/bin/sh\ntouch '{}'\n", loaded.display())).unwrap();
    std::fs::set_permissions(&load, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mine = format!(
        "mine=touch '{}'; exec sleep 30",
        tmp.join("server-started").display()
    );
    let args = [
        "--servers",
        "python/fast,python/second,go/nowhere",
        "--server",
        &mine,
        "--scenario",
        "hello,h2-hello",
        "-c",
        "2",
        "-d",
        "500ms",
        "--laps",
        "2",
        "--warmup",
        "0s",
        "--server-cpus-sweep",
        "1,64",
        "--load-exe",
        load.to_str().unwrap(),
        "--dry-run",
    ];
    serverbench(&[&args[..], extra].concat(), &tmp.join("results"))
}

#[test]
fn dry_run_lists_the_laps_the_skips_and_an_estimate_and_starts_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = dry_run(tmp.path(), &[]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for server in ["python/fast", "python/second", "mine"] {
        let row = stdout
            .lines()
            .find(|l| l.trim_start().starts_with(server))
            .unwrap_or_else(|| panic!("no row for {server}: {stdout}"));
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cells[1..],
            [
                "hello",
                "http",
                "2conn/500ms/1cpu",
                "1",
                "2",
                if server == "python/second" {
                    "1s"
                } else {
                    "0s"
                },
                "500ms"
            ],
            "{row}"
        );
    }
    for skip in [
        "go/nowhere: not in the catalog",
        "python/fast x h2-hello: does not implement h2",
        "mine x h2-hello: does not implement h2",
        "core sweep: 2conn/500ms: skipped 64 server CPU(s)",
    ] {
        assert!(stdout.contains(skip), "{skip} missing: {stdout}");
    }
    // 2 laps each of 0.5 s, python/second's after 1 s of warm-up, 1 s of overhead per lap.
    assert!(stdout.contains("6 lap(s) to run, about 11s"), "{stdout}");
    assert!(stdout.lines().all(|l| l.chars().count() <= 120), "{stdout}");
    assert!(!tmp.path().join("results").exists(), "no results folder");
    assert!(!tmp.path().join("server-started").exists(), "no server");
    assert!(!tmp.path().join("load-started").exists(), "no load");
}

#[test]
fn dry_run_as_json_gives_the_same_plan_to_machines() {
    let tmp = tempfile::tempdir().unwrap();
    let out = dry_run(tmp.path(), &["--format", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["total_laps"], 6, "{plan}");
    assert_eq!(plan["estimate_s"], 11.0, "{plan}");
    let servers: Vec<&str> = plan["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["server"].as_str().unwrap())
        .collect();
    assert_eq!(servers, ["python/fast", "python/second", "mine"]);
    assert_eq!(plan["servers"][1]["runs"][0]["warmup_s"], 1.0, "{plan}");
    assert_eq!(plan["scenario_skips"].as_array().unwrap().len(), 3);
    assert!(!tmp.path().join("results").exists());
}

#[test]
fn dry_run_exits_1_when_the_tool_would_refuse_a_lap() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "--servers",
        "python/fast",
        "--tool",
        "wrk",
        "-n",
        "100",
        "--dry-run",
    ];
    let out = serverbench(&args, &tmp.path().join("results"));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("python/fast"),
        "the plan is still shown: {stdout}"
    );
    assert!(
        stderr.contains("would stop before its first lap: wrk cannot run this lap"),
        "{stderr}"
    );
    assert!(!tmp.path().join("results").exists());
}

#[test]
fn until_ci_prints_the_cells_outcome_the_doctor_line_and_keeps_the_doctor_in_env_json() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "--servers",
        "python/fast",
        "--scenario",
        "hello",
        "-c",
        "2",
        "-d",
        "300ms",
        "--warmup",
        "0s",
        "--until-ci",
        "0.0001%",
        "--min-laps",
        "3",
        "--max-laps",
        "4",
    ];
    let out = serverbench(&args, tmp.path());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("machine: "), "{stderr}");
    assert!(
        stdout.contains("until-ci ±0.0001% (laps 3..4): 0 of 1 cells clear"),
        "{stdout}"
    );
    assert!(
        stdout.contains("not clear: python/fast (hello / 2conn/300ms) after 4 laps"),
        "{stdout}"
    );
    let dir = only_results_dir(tmp.path());
    let env: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("env.json")).unwrap()).unwrap();
    assert!(
        env["doctor"].as_array().is_some_and(|c| !c.is_empty()),
        "{env}"
    );
    assert_eq!(env["suite"]["max_laps"], 4);
}

#[test]
fn min_laps_without_until_ci_is_refused_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let out = serverbench(
        &[
            "--servers",
            "python/fast",
            "--scenario",
            "hello",
            "--min-laps",
            "3",
        ],
        tmp.path(),
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("--min-laps and --max-laps go with --until-ci"),
        "{err}"
    );
}

#[test]
fn a_db_host_missing_from_the_inventory_is_one_line_naming_the_flag_and_the_host() {
    let tmp = tempfile::tempdir().unwrap();
    let hosts = tmp.path().join("hosts.toml");
    let inventory = "[hosts.app]\nssh = \"app\"\naddress = \"198.18.0.10\"\n\n\
                     [hosts.load]\nssh = \"load\"\naddress = \"198.18.0.11\"\n";
    std::fs::write(&hosts, inventory).unwrap();
    let out = serverbench(
        &[
            "--scenario",
            "hello",
            "--servers",
            "python/fast",
            "--hosts",
            hosts.to_str().unwrap(),
            "--server-host",
            "app",
            "--client-hosts",
            "load",
            "--db-host",
            "pg",
        ],
        tmp.path(),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--db-host pg") && stderr.contains("no host `pg` (hosts: app, load)"),
        "{stderr}"
    );
}

#[test]
fn a_db_host_without_hosts_is_one_line_naming_both_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let out = serverbench(
        &[
            "--scenario",
            "hello",
            "--servers",
            "python/fast",
            "--db-host",
            "pg",
        ],
        tmp.path(),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.trim(),
        "serverbench: error: --db-host pg needs --hosts FILE: the inventory that names the host"
    );
}
