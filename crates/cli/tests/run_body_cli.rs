//! A suite scenario's own request body (`method`, `body_size`, `chunked`, `chunk_size`) through
//! `serverbench run`: the test's own server (Python's http.server) decodes every POST, chunked
//! or with a Content-Length, and logs its framing, its largest chunk and its size, so the test
//! sees what went over the wire; bad body keys stop the run before any server starts.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Answers GET with hello and POST with the body's byte count; logs `PATH FRAMING
/// LARGEST-CHUNK BYTES` per POST to `uploads.log` in its folder.
const UPLOAD_SERVER: &str = r#"
import os, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
LOG, LOCK = open("uploads.log", "a"), threading.Lock()
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        self.answer(b"Hello, World!")
    def do_POST(self):
        chunks = []
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            framing = "chunked"
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(len(self.rfile.read(size)))
                self.rfile.readline()
        else:
            framing = "length"
            chunks.append(len(self.rfile.read(int(self.headers.get("Content-Length", "0")))))
        with LOCK:
            LOG.write("%s %s %d %d\n" % (self.path, framing, max(chunks), sum(chunks)))
            LOG.flush()
        self.answer(str(sum(chunks)).encode())
    do_PUT = do_POST
    def answer(self, body):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer((os.environ["HOST"], int(os.environ["PORT"])), H).serve_forever()
"#;

const SUITE: &str = r#"
name = "bodies"
description = "Chunked uploads of drawn sizes and fixed ones with a Content-Length."
reproduces = "none: a test"
servers = "all"
laps = 1
warmup = "200ms"

[[scenario]]
name = "upload-chunked"
paths = ["/chunked"]
requires = "upload"
body_size = "1KB..64KB"
chunked = true
chunk_size = "4KiB"

[[scenario]]
name = "upload-length"
paths = ["/length"]
requires = "upload"
method = "PUT"
body_size = "8KB"

[[profile]]
name = "c2"
connections = 2
duration = "1s"
"#;

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness/tests/fixtures/run-catalog")
}

/// `serverbench run SUITE` in `tmp` with the test's server as `mine`.
fn run(tmp: &Path, suite: &str) -> Output {
    std::fs::write(tmp.join("upload_server.py"), UPLOAD_SERVER).unwrap();
    std::fs::write(tmp.join("bodies.toml"), suite).unwrap();
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["run", "bodies.toml", "--root"])
        .arg(fixture_root())
        .arg("--results")
        .arg(tmp.join("results"))
        .args(["--server", "mine=exec python3 upload_server.py"])
        .args(["--implements", "hello,upload", "--no-verify"])
        .env("SERVERBENCH_CACHE", tmp.join("cache"))
        .current_dir(tmp)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The laps of the one results folder.
fn laps(tmp: &Path) -> Vec<serde_json::Value> {
    let dir = std::fs::read_dir(tmp.join("results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("results.jsonl").is_file())
        .expect("a results folder");
    std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The server's log: (path, framing, largest chunk, bytes) per POST or PUT.
fn uploads(tmp: &Path) -> Vec<(String, String, u64, u64)> {
    std::fs::read_to_string(tmp.join("uploads.log"))
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let (chunk, bytes) = (f[2].parse().unwrap(), f[3].parse().unwrap());
            (f[0].to_string(), f[1].to_string(), chunk, bytes)
        })
        .collect()
}

#[test]
fn a_scenario_body_size_goes_out_chunked_within_its_range_and_is_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(tmp.path(), SUITE);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let chunked: Vec<_> = uploads(tmp.path())
        .into_iter()
        .filter(|u| u.0 == "/chunked")
        .collect();
    assert!(chunked.len() > 10, "{chunked:?}");
    for (_, framing, largest, bytes) in &chunked {
        assert_eq!(framing, "chunked");
        assert!(*largest <= 4096, "chunks of 4 KiB at most: {largest}");
        assert!((1000..=64_000).contains(bytes), "a body of {bytes} bytes");
    }
    let mut sizes: Vec<u64> = chunked.iter().map(|u| u.3).collect();
    sizes.sort_unstable();
    sizes.dedup();
    assert!(sizes.len() > 5, "sizes drawn per request: {sizes:?}");
    let length: Vec<_> = uploads(tmp.path())
        .into_iter()
        .filter(|u| u.0 == "/length")
        .collect();
    assert!(!length.is_empty());
    assert!(
        length.iter().all(|u| u.1 == "length" && u.3 == 8000),
        "{length:?}"
    );
    let laps = laps(tmp.path());
    let lap = |scenario: &str| laps.iter().find(|l| l["scenario"] == scenario).unwrap();
    let c = lap("upload-chunked");
    assert_eq!(c["status"], "ok", "{c}");
    assert_eq!(
        (
            &c["params"]["method"],
            &c["params"]["body_size"],
            &c["params"]["chunked"]
        ),
        (&"POST".into(), &"1KB..64KB".into(), &"4KiB".into()),
        "{c}"
    );
    assert_eq!(c["load"]["non_2xx"], 0, "{c}");
    let l = lap("upload-length");
    assert_eq!(
        (
            &l["params"]["method"],
            &l["params"]["body_size"],
            &l["params"]["chunked"]
        ),
        (&"PUT".into(), &"8KB".into(), &serde_json::Value::Null),
        "{l}"
    );
    assert!(
        stdout.contains(
            "upload-chunked / c2 (http, POST 1KB..64KB chunked (4KiB chunks), 2 connections)"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("upload-length / c2 (http, PUT 8KB, 2 connections)"),
        "{stdout}"
    );
}

#[test]
fn a_chunked_scenario_without_a_body_stops_the_run_in_one_line_before_any_server_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = SUITE.replace("body_size = \"1KB..64KB\"\n", "");
    let out = run(tmp.path(), &suite);
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.contains("bodies.toml"))
        .unwrap_or("");
    assert!(
        line.contains("bodies.toml:13: scenario[1].chunked: needs a body"),
        "{stderr}"
    );
    assert!(
        !tmp.path().join("uploads.log").exists(),
        "no server started: {stderr}"
    );
    let backwards = SUITE.replace("1KB..64KB", "64KB..1KB");
    let out = run(tmp.path(), &backwards);
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr
            .contains("bodies.toml:13: scenario[1].body_size: `64KB..1KB`: the range is backwards"),
        "{stderr}"
    );
    assert!(!tmp.path().join("uploads.log").exists(), "{stderr}");
}
