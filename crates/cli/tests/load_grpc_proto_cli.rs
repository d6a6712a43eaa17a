//! `serverbench load grpc://… --proto FILE --call pkg.Svc/Method --data JSON`: calls of a
//! user's service, described by its .proto, against the in-process h2c server (the engine
//! tests' `grpc_server.rs`) and the catalog's go/grpc-go (`serverbench serve`); bad input
//! refused in one line before any connection (a listener that is never connected to).

#[path = "../../engine/tests/common/grpc_server.rs"]
#[allow(dead_code)]
mod grpc_server;

use grpc_server::{grpc_server, Fault};
use std::io::BufRead;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn serverbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("load")
        .args(args)
        .output()
        .expect("run serverbench")
}

fn json_of(out: &Output) -> serde_json::Value {
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `--proto spec/serverbench.proto --call serverbench.Bench/Sum`: the benchmark service as a
/// user's service.
fn sum_args(data: &str) -> Vec<String> {
    let proto = root().join("spec/serverbench.proto");
    let proto = proto.to_str().unwrap();
    [
        "--proto",
        proto,
        "--call",
        "serverbench.Bench/Sum",
        "--data",
        data,
    ]
    .map(String::from)
    .to_vec()
}

fn load(url: &str, data: &str, more: &[&str]) -> serde_json::Value {
    let args = sum_args(data);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    json_of(&serverbench(&[&args[..], more, &["--json", url]].concat()))
}

#[test]
fn a_users_call_is_verified_against_the_first_reply_and_a_different_reply_is_an_error() {
    let (addr, _) = grpc_server(Fault::None, 1);
    let url = format!("grpc://{addr}");
    let v = load(
        &url,
        r#"{"a":1,"b":2}"#,
        &["-c", "2", "-m", "4", "-n", "1000", "--verify"],
    );
    assert_eq!(
        v["protocol"]["status_codes"]["OK"], 1000,
        "{}",
        v["protocol"]
    );
    assert_eq!(v["protocol"]["method"], "/serverbench.Bench/Sum");
    assert_eq!(
        v["protocol"]["message_bytes_sent"], 9000,
        "4-byte SumRequest, framed"
    );
    assert_eq!(v["errors"].get("grpc"), None, "{}", v["errors"]);
    // Every second call answers another sum: each is a --verify failure (one thread, one
    // call at a time: the first reply is a right one).
    let (addr, _) = grpc_server(Fault::WrongSum, 2);
    let url = format!("grpc://{addr}/serverbench.Bench/Sum");
    let one = ["-c", "1", "-t", "1", "-m", "1", "-n", "200", "--verify"];
    let v = load(&url, r#"{"a":1,"b":2}"#, &one);
    assert_eq!(
        v["protocol"]["failures"]["verify"], 100,
        "{}",
        v["protocol"]
    );
}

#[test]
fn data_file_dash_reads_the_message_from_stdin() {
    use std::io::Write;
    let (addr, _) = grpc_server(Fault::None, 1);
    let proto = root().join("spec/serverbench.proto");
    let mut child = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args([
            "load",
            "--proto",
            proto.to_str().unwrap(),
            "--data-file",
            "-",
        ])
        .args(["-c", "1", "-n", "50", "--verify", "--json"])
        .arg(format!("grpc://{addr}/serverbench.Bench/Sum"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(br#"{"a": 40, "b": 2}"#).unwrap();
    drop(stdin);
    let v = json_of(&child.wait_with_output().unwrap());
    assert_eq!(v["protocol"]["status_codes"]["OK"], 50, "{}", v["protocol"]);
    assert_eq!(v["protocol"]["message_bytes_sent"], 50 * 9);
}

#[test]
fn rand_placeholders_draw_a_message_per_call() {
    let (addr, _) = grpc_server(Fault::None, 1);
    let url = format!("grpc://{addr}");
    let data = r#"{"a":"{rand:1-1000}","b":"{rand:0-0}"}"#;
    let v = load(&url, data, &["-c", "2", "-m", "8", "-n", "2000"]);
    assert_eq!(
        v["protocol"]["status_codes"]["OK"], 2000,
        "{}",
        v["protocol"]
    );
    // Framed: 5 bytes, b's key and 0, a's key and 1..127 in 1 byte or 128..1000 in 2: about
    // 87% of the calls are 10 bytes, the rest 9.
    let bytes = v["protocol"]["message_bytes_sent"].as_u64().unwrap();
    assert!((2000 * 9 + 1500..2000 * 10).contains(&bytes), "{bytes}");
}

#[test]
fn drawn_messages_larger_than_the_servers_window_arrive_whole() {
    let dir = tempfile::tempdir().unwrap();
    let proto = dir.path().join("text.proto");
    let text = "syntax = \"proto3\";\npackage serverbench;\nmessage Text { string s = 1; }\n\
                service Bench { rpc Echo(Text) returns (Text); }\n";
    std::fs::write(&proto, text).unwrap();
    // 100 kB: more than the 65,535-byte windows the server starts with, so each call's own
    // message waits for WINDOW_UPDATEs while the next calls draw theirs.
    let data = dir.path().join("big.json");
    let big = format!(
        r#"{{"s":"{}-{{rand:100000-999999}}"}}"#,
        "x".repeat(100_000)
    );
    std::fs::write(&data, big).unwrap();
    let (addr, _) = grpc_server(Fault::None, 1);
    let url = format!("grpc://{addr}/serverbench.Bench/Echo");
    let (proto, data) = (proto.to_str().unwrap(), data.to_str().unwrap());
    let args = [
        "--proto",
        proto,
        "--data-file",
        data,
        "-c",
        "2",
        "-t",
        "1",
        "-m",
        "4",
    ];
    let v = json_of(&serverbench(
        &[&args[..], &["-n", "200", "--json", &url]].concat(),
    ));
    assert_eq!(
        v["protocol"]["status_codes"]["OK"], 200,
        "{}",
        v["protocol"]
    );
    // Framed: 5 + key + 3-byte length + 100,007 characters; echoed whole.
    let per_call = 5 + 1 + 3 + 100_007;
    assert_eq!(v["protocol"]["message_bytes_sent"], 200 * per_call);
    assert_eq!(v["protocol"]["message_bytes_received"], 200 * per_call);
}

/// `serverbench setup go/grpc-go` (idempotent: built once into this checkout's cache), then
/// `serverbench serve go/grpc-go` in the background: its port and the child to stop.
fn serve_grpc_go() -> (std::process::Child, u16) {
    let setup = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["setup", "go/grpc-go", "--root"])
        .arg(root())
        .output()
        .unwrap();
    assert!(
        setup.status.success(),
        "serverbench setup go/grpc-go (it needs Go): {}",
        String::from_utf8_lossy(&setup.stderr)
    );
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .args(["serve", "go/grpc-go", "--port", &port.to_string(), "--root"])
        .arg(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines.by_ref().map_while(Result::ok) {
        if line.contains("is ready") {
            // Its stdout stays open (a closed pipe would end it at its next line).
            std::thread::spawn(move || lines.for_each(drop));
            return (child, port);
        }
    }
    let mut why = String::new();
    let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut why);
    let _ = child.wait();
    panic!("serverbench serve go/grpc-go did not get ready: {why}");
}

#[test]
fn go_grpc_go_answers_a_users_sum_calls_all_ok_with_verify_and_with_rand() {
    let (mut child, port) = serve_grpc_go();
    let url = format!("grpc://127.0.0.1:{port}");
    let fixed = load(
        &url,
        r#"{"a":1,"b":2}"#,
        &["-c", "2", "-m", "4", "-n", "2000", "--verify"],
    );
    let drawn = load(
        &url,
        r#"{"a":"{rand:1-1000}","b":2}"#,
        &["-c", "2", "-m", "4", "-n", "2000"],
    );
    // SAFETY: signalling our own child, which stops its server group on SIGTERM.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let _ = child.wait();
    for v in [fixed, drawn] {
        assert_eq!(
            v["protocol"]["status_codes"]["OK"], 2000,
            "{}",
            v["protocol"]
        );
        assert_eq!(v["errors"].get("grpc"), None, "{}", v["errors"]);
        assert_eq!(v["protocol"]["method"], "/serverbench.Bench/Sum");
    }
}

#[test]
fn a_bad_proto_method_or_json_is_one_line_exit_1_and_no_connection_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.proto");
    std::fs::write(
        &bad,
        "syntax = \"proto3\";\nmessage A {\n  int32 x = 1\n}\n",
    )
    .unwrap();
    let data_file = dir.path().join("sum.json");
    std::fs::write(&data_file, r#"{"a": 1, "c": 2}"#).unwrap();
    let proto = root().join("spec/serverbench.proto");
    let (proto, bad, data_file) = (
        proto.to_str().unwrap(),
        bad.to_str().unwrap(),
        data_file.to_str().unwrap(),
    );
    // A listener nobody accepts on: a connection attempt would be queued, and seen.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("grpc://{}", listener.local_addr().unwrap());
    let sum = "serverbench.Bench/Sum";
    for (args, want) in [
        (vec!["--proto", bad, "--call", "A/B"], "--proto "),
        (
            vec!["--proto", "/nonexistent/x.proto", "--call", sum],
            "--proto /nonexistent/x.proto: ",
        ),
        (
            vec!["--proto", proto, "--call", "serverbench.Bench/Nope"],
            "--call: `serverbench.Bench` has no method `Nope` (its methods: Sum, Echo, ",
        ),
        (
            vec!["--proto", proto, "--call", "serverbench.Bench/ServerStream"],
            "--call: `/serverbench.Bench/ServerStream` is a server-streaming method",
        ),
        (
            vec!["--proto", proto, "--call", sum, "--data", r#"{"a":"one"}"#],
            "--data: field `a` (int32): ",
        ),
        (
            vec![
                "--proto",
                proto,
                "--call",
                sum,
                "--data",
                r#"{"a":"{rand:1-x}"}"#,
            ],
            "--data: field `a` (int32): `{rand:1-x}`",
        ),
        (
            vec!["--proto", proto, "--call", sum, "--data-file", data_file],
            "--data-file ",
        ),
        (
            vec![
                "--proto",
                proto,
                "--call",
                sum,
                "--data",
                r#"{"a":"{rand:1-9}"}"#,
                "--verify",
            ],
            "--verify: cannot be combined with {rand:A-B} in --data",
        ),
        (
            vec!["--data", "{}", "--call", sum],
            "--data: needs --proto FILE",
        ),
    ] {
        let out = serverbench(&[&["-n", "1"][..], &args, &[&url]].concat());
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    assert!(listener.accept().is_err(), "no connection was made");
    let bad_line = serverbench(&["--proto", bad, "--call", "A/B", &url]);
    let err = String::from_utf8_lossy(&bad_line.stderr).to_string();
    assert!(
        err.contains("bad.proto:4:1: "),
        "file, line and column: {err}"
    );
    let c = serverbench(&[
        "--proto",
        proto,
        "--call",
        sum,
        &format!("{url}/serverbench.Bench/Echo"),
    ]);
    let err = String::from_utf8_lossy(&c.stderr).to_string();
    assert!(
        err.contains("--call serverbench.Bench/Sum: the URL names another method"),
        "{err}"
    );
}
