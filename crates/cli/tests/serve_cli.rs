//! `serverbench serve`: foreground server, stopped with its whole group on SIGTERM/Ctrl-C.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn group_alive(pgid: u32) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| {
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
                return false;
            };
            let f: Vec<&str> = rest.split_whitespace().collect();
            f.len() > 2 && f[0] != "Z" && f[2] == pgid.to_string()
        })
}

#[test]
fn serve_answers_and_stops_its_server_group_on_sigterm() {
    let cache = tempfile::tempdir().unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures/catalog");
    let mut child = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["serve", "python/good", "--root"])
        .arg(root)
        .env("SERVERBENCH_CACHE", cache.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut pgid = 0u32;
    let mut url = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(rest) = line.split("process group ").nth(1) {
            pgid = rest.trim_end_matches(')').parse().unwrap();
        }
        if let Some(u) = line.trim().strip_prefix("curl -i http://") {
            url = u.to_string();
            break;
        }
    }
    assert!(pgid > 0 && group_alive(pgid));
    let (addr, path) = url.split_at(url.find('/').unwrap());
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\n\r\n").unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    assert!(resp.ends_with("Hello World!"), "{resp}");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(!group_alive(pgid), "the server group survived");
}

#[test]
fn serve_refuses_a_port_another_process_listens_on() {
    let cache = tempfile::tempdir().unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures/catalog");
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["serve", "python/good", "--port", &port, "--root"])
        .arg(root)
        .env("SERVERBENCH_CACHE", cache.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "port {port} is already in use by {}",
            std::process::id()
        )),
        "{stderr}"
    );
}

#[test]
fn serve_with_a_given_certificate_serves_it_and_announces_its_tls_port() {
    let (cache, certs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let files = serverbench_harness::certs::generate(certs.path(), "127.0.0.1").unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures/catalog");
    let mut child = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["serve", "python/good-tls", "--ready-line", "--tls-cert"])
        .arg(&files.cert)
        .arg("--tls-key")
        .arg(&files.key)
        .arg("--root")
        .arg(root)
        .env("SERVERBENCH_CACHE", cache.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let (mut trusted, mut url) = (String::new(), String::new());
    let mut ready = serde_json::Value::Null;
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(rest) = line.trim().strip_prefix("curl -i --cacert ") {
            let (cert, u) = rest.split_once(' ').unwrap();
            (trusted, url) = (cert.to_owned(), u.to_owned());
        }
        if let Some(json) = line.strip_prefix("serverbench-serve-ready ") {
            ready = serde_json::from_str(json).unwrap();
            break;
        }
    }
    std::thread::spawn(move || lines.for_each(drop));
    let load = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["load", "-q", "-c", "1", "-n", "5", "--cacert"])
        .arg(&files.cert)
        .arg(&url)
        .output()
        .unwrap();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let _ = child.wait();
    assert_eq!(
        trusted,
        files.cert.to_string_lossy(),
        "the given certificate"
    );
    let port = ready["tls_port"]
        .as_u64()
        .expect("the ready line's tls_port");
    assert!(url.contains(&format!(":{port}/")), "{url} vs {ready}");
    let err = String::from_utf8_lossy(&load.stderr);
    assert!(load.status.success(), "a client trusting it: {err}");
}

#[test]
fn serve_refuses_a_certificate_for_a_server_without_tls() {
    let cache = tempfile::tempdir().unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures/catalog");
    let out = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args([
            "serve",
            "python/good",
            "--tls-cert",
            "c.pem",
            "--tls-key",
            "k.pem",
        ])
        .arg("--root")
        .arg(root)
        .env("SERVERBENCH_CACHE", cache.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--tls-cert: python/good implements neither tls nor h2"),
        "{stderr}"
    );
}

/// `serverbench ARGS --root <fixture catalog>` with a fresh cache, stopped after 30 s at most
/// (SIGTERM, which `serve` answers by stopping its server's group).
fn within_30s(args: &[&str], cache: &std::path::Path) -> std::process::Output {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures/catalog");
    let child = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(args)
        .arg("--root")
        .arg(root)
        .env("SERVERBENCH_CACHE", cache)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output().unwrap()));
    rx.recv_timeout(std::time::Duration::from_secs(30))
        .unwrap_or_else(|_| {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(pid, libc::SIGTERM) };
            panic!("`serverbench {args:?}` was still running after 30 s")
        })
}

#[test]
fn serve_refuses_a_server_that_is_not_set_up_with_the_line_verify_prints() {
    let cache = tempfile::tempdir().unwrap();
    let id = "python/setup-counter";
    let line = format!("needs setup (try `serverbench setup {id}`)");
    let serve = within_30s(&["serve", id], cache.path());
    let stderr = String::from_utf8_lossy(&serve.stderr);
    assert_eq!(serve.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim(), format!("serverbench: error: {id}: {line}"));
    assert!(
        !cache.path().join("setup-count").exists(),
        "serve ran no setup"
    );
    let verify = within_30s(&["verify", id], cache.path());
    let stdout = String::from_utf8_lossy(&verify.stdout);
    assert!(stdout.contains(&line), "{stdout}");
}
