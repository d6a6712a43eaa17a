//! Fixtures shared by the CLI's integration tests (each test crate uses some of them).
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Command, Output};

/// Runs the binary under test with `args` and waits for it.
pub fn serverbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(args)
        .output()
        .unwrap()
}

/// Output bytes as text (lossy), for messages and `contains` checks.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A user's own server, as a test writes it: Python's http.server on $HOST:$PORT answering
/// /hello (404 elsewhere).
pub const HELLO_PY: &str = r#"
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        body = b"Hello World!"
        self.send_response(200 if self.path == "/hello" else 404)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
ThreadingHTTPServer((os.environ["HOST"], int(os.environ["PORT"])), H).serve_forever()
"#;

/// Every lap record of the one results folder under `results` (a run's `--results`).
pub fn records(results: &Path) -> Vec<serde_json::Value> {
    let dir = std::fs::read_dir(results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("results.jsonl").is_file())
        .expect("a results folder");
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A keep-alive HTTP server answering every request with `Hello World!`.
pub fn hello_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                let mut pending = Vec::new();
                loop {
                    match s.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => pending.extend_from_slice(&buf[..n]),
                    }
                    let mut out = Vec::new();
                    while let Some(i) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                        pending.drain(..i + 4);
                        out.extend_from_slice(
                            b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello World!",
                        );
                    }
                    if s.write_all(&out).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}
