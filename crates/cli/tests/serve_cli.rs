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
