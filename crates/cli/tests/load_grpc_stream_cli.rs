//! `serverbench load --stream server|client|bidi grpc://…` end to end: the real binary against
//! the catalog's go/grpc-go (set up and served by the binary itself, stopped with its process
//! group) and against the in-process server of the engine tests (a stream one chunk short),
//! with the JSON result, the text summary, and the bad input refused before any connection.

#[path = "../../engine/tests/common/grpc_server.rs"]
#[allow(dead_code)]
mod grpc_server;

use grpc_server::{grpc_server, Fault};
use std::io::BufRead;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

fn serverbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(args)
        .output()
        .expect("run serverbench")
}

fn load_json(args: &[&str]) -> serde_json::Value {
    let out = serverbench(&[&["load", "--json"][..], args].concat());
    assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// go/grpc-go, served by `serverbench serve` on a free port; stopped (its whole process group)
/// when dropped.
struct GrpcGo {
    child: Child,
    port: u16,
    /// serve's stdout, kept open: serve stops its server when it cannot write.
    _stdout: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl GrpcGo {
    fn start(cache: &std::path::Path) -> GrpcGo {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
        let root = root.to_str().unwrap();
        let setup = Command::new(env!("CARGO_BIN_EXE_serverbench"))
            .args(["setup", "go/grpc-go", "--root", root])
            .env("SERVERBENCH_CACHE", cache)
            .output()
            .unwrap();
        assert!(
            setup.status.success(),
            "go/grpc-go could not be set up (it needs go: apt-get install golang-go, and the Go \
             module proxy): {setup:?}"
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let mut child = Command::new(env!("CARGO_BIN_EXE_serverbench"))
            .args([
                "serve",
                "go/grpc-go",
                "--port",
                &port.to_string(),
                "--root",
                root,
            ])
            .env("SERVERBENCH_CACHE", cache)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = lines
            .by_ref()
            .map_while(Result::ok)
            .any(|l| l.contains("go/grpc-go is ready"));
        let server = GrpcGo {
            child,
            port,
            _stdout: lines,
        };
        assert!(ready, "serve never said go/grpc-go is ready");
        server
    }

    fn url(&self) -> String {
        format!("grpc://127.0.0.1:{}", self.port)
    }
}

impl Drop for GrpcGo {
    fn drop(&mut self) {
        // SAFETY: signalling our own child, which stops its server group on SIGTERM.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

#[test]
fn server_client_and_bidi_streams_of_grpc_go_are_verified_and_counted_both_ways() {
    let cache = tempfile::tempdir().unwrap();
    let go = GrpcGo::start(cache.path());
    let url = go.url();
    let common = ["-c", "2", "-t", "1", "-m", "4", "-n", "200", "--verify"];
    for (kind, sent, received) in [
        ("server", 200, 200 * 50),
        ("client", 200 * 50, 200),
        ("bidi", 200 * 50, 200 * 50),
    ] {
        let args = [
            &common[..],
            &["--stream", kind, "--stream-messages", "50", &url],
        ];
        let v = load_json(&args.concat());
        let g = &v["protocol"];
        assert_eq!(v["requests"], 200, "{kind}: {v}");
        assert_eq!(v["errors"].get("grpc"), None, "{kind}: {}", v["errors"]);
        assert_eq!(g["status_codes"]["OK"], 200, "{kind}: {g}");
        assert_eq!(
            (g["messages_sent"].as_u64(), g["messages_received"].as_u64()),
            (Some(sent), Some(received)),
            "{kind}: {g}"
        );
        let s = &g["stream"];
        assert_eq!(
            (s["kind"].as_str(), s["messages_per_call"].as_u64()),
            (Some(kind), Some(50))
        );
        assert_eq!(s["message_size"], 32, "the default chunk: {s}");
        assert!(s["messages_per_s"].as_f64().unwrap() > 0.0, "{s}");
        assert!(v["histograms"]["message_latency_us"].is_string(), "{kind}");
    }
    let text = serverbench(&[
        "load",
        "-c",
        "1",
        "-n",
        "20",
        "--stream",
        "bidi",
        "--stream-messages",
        "5",
        "--message-size",
        "1000",
        &format!("{url}/serverbench.Bench/BidiEcho"),
    ]);
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(
        text.contains("gRPC         /serverbench.Bench/BidiEcho over h2c"),
        "{text}"
    );
    assert!(
        text.contains("  Stream       bidi: 5 messages per call of 1000 data bytes, "),
        "{text}"
    );
    assert!(text.contains("  Per message  mean "), "{text}");
}

#[test]
fn a_server_stream_one_chunk_short_fails_every_call_by_message_count() {
    let (addr, _) = grpc_server(Fault::ShortStream, 1);
    let url = format!("grpc://{addr}");
    let v = load_json(&["-c", "1", "-n", "50", "--stream", "server", &url]);
    assert_eq!(
        (v["requests"].as_u64(), v["errors"]["verdict"].as_u64()),
        (Some(50), Some(50))
    );
    assert_eq!(v["protocol"]["failures"]["message count"], 50);
    assert_eq!(
        v["protocol"]["messages_received"],
        50 * 99,
        "{}",
        v["protocol"]
    );
}

#[test]
fn bad_stream_flags_are_one_line_naming_the_flag_exit_1_before_any_connection() {
    // Port 1 on loopback: nothing listens; a connection attempt would be a connect error.
    let sum = "grpc://127.0.0.1:1/serverbench.Bench/Sum";
    for (args, says) in [
        (
            vec!["--stream", "server", "http://127.0.0.1:1/"],
            "--stream: does not apply",
        ),
        (
            vec!["--stream-messages", "5", sum],
            "--stream-messages: needs --stream",
        ),
        (
            vec!["--stream", "client", sum],
            "--stream: `client` calls /serverbench.Bench/ClientStream",
        ),
        (
            vec!["grpc://127.0.0.1:1/serverbench.Bench/ServerStream"],
            "--stream: /serverbench.Bench/ServerStream is a streaming method: give --stream server",
        ),
        (
            vec![
                "--stream",
                "bidi",
                "--stream-messages",
                "0",
                "grpc://127.0.0.1:1",
            ],
            "at least 1",
        ),
        (
            vec![
                "--stream",
                "bidi",
                "--message-size",
                "1048576",
                "grpc://127.0.0.1:1",
            ],
            "--stream-messages: 100 messages of 1048576 bytes per call: at most",
        ),
    ] {
        let out = serverbench(&[&["load", "-n", "1"][..], &args].concat());
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
