//! `serverbench verify` against the fixture servers.

use std::path::PathBuf;
use std::process::{Command, Output};

fn verify(args: &[&str]) -> (Output, String) {
    let cache = tempfile::tempdir().unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures/catalog");
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("verify")
        .args(args)
        .arg("--root")
        .arg(root)
        .env("SERVERBENCH_CACHE", cache.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out, text)
}

#[test]
fn the_reference_fixture_passes() {
    let (out, text) = verify(&["python/good"]);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("python/good ... PASS"), "{text}");
}

#[test]
fn a_wrong_body_fails_with_a_diff_and_a_non_zero_exit() {
    let (out, text) = verify(&["python/good", "python/wrong-hello"]);
    assert_eq!(
        out.status.code(),
        Some(7),
        "a failed check, not bad input: {text}"
    );
    assert!(text.contains("python/good ... PASS"), "{text}");
    assert!(text.contains("python/wrong-hello ... FAIL"), "{text}");
    assert!(text.contains("✗ GET /hello"), "{text}");
    assert!(text.contains("expected \"Hello World!\""), "{text}");
    assert!(text.contains("got      \"Hello World?\""), "{text}");
    assert!(text.contains("verify: 1 passed, 1 failed"), "{text}");
}

#[test]
fn json_reports_name_the_failed_check() {
    let (out, text) = verify(&["--json", "python/no404"]);
    assert_eq!(out.status.code(), Some(7));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let failed: Vec<&str> = v[0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !c["diffs"].as_array().unwrap().is_empty())
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(
        failed.contains(&"GET /serverbench-unknown (unknown path) -> 404"),
        "{failed:?}"
    );
}

#[test]
fn an_unavailable_server_named_explicitly_fails_with_its_reason() {
    let (out, text) = verify(&["python/unavailable"]);
    assert_eq!(out.status.code(), Some(7));
    assert!(text.contains("unavailable: needs a GPU"), "{text}");
}

#[test]
fn a_cpu_list_flag_pins_the_server_instead_of_crashing_the_parser() {
    let (out, text) = verify(&["python/good", "--cpus", "0", "--workers", "1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}\n{stderr}");
    assert!(text.contains("python/good ... PASS"), "{text}");
}

#[test]
fn a_declared_deviation_is_shown_with_its_reason_and_does_not_fail() {
    let (out, text) = verify(&["python/deviant"]);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("python/deviant ... PASS"), "{text}");
    assert!(
        text.contains(
            "~ HTTP/1.0 GET /hello with Connection: keep-alive, twice: known deviation, \
             declared in server.toml: the fixture closes every HTTP/1.0 connection"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "~ HTTP/1.0 GET /hello with Connection: keep-alive, twice over TLS: known deviation"
        ),
        "{text}"
    );
}

#[test]
fn a_tls_server_shows_what_its_handshakes_negotiated() {
    let (out, text) = verify(&["python/good-tls"]);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("· TLSv1.3 handshake, ALPN http/1.1 offered over TLS: TLSv1.3, TLS_AES_"),
        "{text}"
    );
    assert!(
        text.contains("· TLSv1.2 handshake, ALPN http/1.1 offered over TLS: TLSv1.2, "),
        "{text}"
    );
}

/// `serverbench serve python/good-tls` in the background: its `https://` address and
/// certificate, and the child to stop.
fn serve_tls(cache: &std::path::Path) -> (std::process::Child, String, String) {
    use std::io::BufRead;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures/catalog");
    let mut child = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["serve", "python/good-tls", "--root"])
        .arg(root)
        .env("SERVERBENCH_CACHE", cache)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines {
        let line = line.unwrap();
        if let Some(rest) = line.trim().strip_prefix("curl -i --cacert ") {
            let (cert, url) = rest.split_once(' ').unwrap();
            let base = url.trim_end_matches("/hello").to_owned();
            return (child, base, cert.to_owned());
        }
    }
    // SAFETY: signalling our own child, which stops its server group on SIGTERM.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let _ = child.wait();
    panic!("serve printed no https address");
}

#[test]
fn an_https_url_is_checked_over_tls_with_cacert_or_k() {
    let cache = tempfile::tempdir().unwrap();
    let (mut child, base, cert) = serve_tls(cache.path());
    let features = ["--implements", "hello,routes,json,payload"];
    let (out, text) = verify(&[&["--url", &base, "--cacert", &cert][..], &features].concat());
    let (out_k, text_k) = verify(&[&["--url", &base, "-k"][..], &features].concat());
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let _ = child.wait();
    assert!(out.status.success(), "{text}");
    assert!(text.contains(&format!("{base} ... PASS")), "{text}");
    assert!(text.contains("· TLSv1.3 handshake"), "{text}");
    assert!(out_k.status.success(), "{text_k}");
}

#[test]
fn an_https_url_without_cacert_or_k_is_refused_naming_both() {
    let (out, _) = verify(&["--url", "https://127.0.0.1:1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--cacert FILE") && stderr.contains("-k"),
        "{stderr}"
    );
}

#[test]
fn a_database_feature_without_database_url_is_refused_naming_the_flag() {
    let (out, _) = verify(&["--url", "http://127.0.0.1:1", "--implements", "db,fortunes"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--implements db,fortunes") && stderr.contains("--database-url"),
        "{stderr}"
    );
}

#[test]
fn a_database_url_without_a_database_feature_is_refused() {
    let db = "postgres://u:p@127.0.0.1:1/x";
    let (out, _) = verify(&["--url", "http://127.0.0.1:1", "--database-url", db]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("add them to --implements"), "{stderr}");
    assert!(
        !stderr.contains(":p@"),
        "the password is not printed: {stderr}"
    );
}

#[allow(dead_code)] // the flaws this file does not use
#[path = "../../contract/tests/db_servers/mod.rs"]
mod db_servers;

#[test]
fn a_running_server_is_checked_against_the_database_url_audit_included() {
    let Some((_cache, db)) = db_servers::database() else {
        return;
    };
    // verify's own role (the server logs in as the cluster's).
    let url = db.referee_url().expose();
    let features = [
        "--implements",
        "db,queries,fortunes,updates",
        "--database-url",
        &url,
        "--database-pool",
        "4",
    ];
    let good = format!(
        "http://{}",
        db_servers::serve(&db.url(), db_servers::Flaw::None)
    );
    let (out, text) = verify(&[&["--url", good.as_str()][..], &features].concat());
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("query audit: 20 × GET /updates?queries=20: PostgreSQL ran 400 single-row"),
        "{text}"
    );
    let cache = format!(
        "http://{}",
        db_servers::serve(&db.url(), db_servers::Flaw::Cache)
    );
    let (out, text) = verify(&[&["--url", cache.as_str()][..], &features].concat());
    assert_eq!(out.status.code(), Some(7), "a failed check: {text}");
    assert!(text.contains("✗ query audit: 50 × GET /db"), "{text}");
    assert!(
        text.contains("got      PostgreSQL ran 0 (a cache?)"),
        "{text}"
    );
    assert!(
        !text.contains(&db.url().password) && !text.contains(&db.referee_url().password),
        "the password is not printed"
    );
}

#[test]
fn a_url_implementing_grpc_gets_the_grpc_checks_alone_and_a_dead_port_fails_the_connection() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let (out, text) = verify(&["--url", &url, "--implements", "grpc", "--json"]);
    assert_eq!(out.status.code(), Some(7), "a failed check: {text}");
    let reports: serde_json::Value = serde_json::from_str(&text).unwrap();
    let checks = reports[0]["checks"].as_array().unwrap();
    let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["grpc connection (HTTP/2 preface and SETTINGS)"],
        "{text}"
    );
    assert_eq!(checks[0]["diffs"][0]["what"], "connection", "{text}");
}

#[test]
fn h3_with_an_http_url_or_h3_port_without_h3_is_refused_naming_the_flag() {
    let (out, _) = verify(&["--url", "http://127.0.0.1:1", "--implements", "hello,h3"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--implements h3") && stderr.contains("https://"),
        "{stderr}"
    );
    let args = ["--url", "https://127.0.0.1:1", "-k", "--h3-port", "4433"];
    let (out, _) = verify(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--h3-port") && stderr.contains("h3"),
        "{stderr}"
    );
}
