//! `serverbench load --tcp` end to end: the real binary against an in-process echo server, the
//! stream's totals (every echo drained) and the ping-pong's timed echoes.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::process::{Command, Output};

fn serverbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("load")
        .args(args)
        .output()
        .expect("run serverbench")
}

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

fn echo_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 65536];
                while let Ok(n @ 1..) = s.read(&mut buf) {
                    if s.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

#[test]
fn tcp_stream_reports_equal_bytes_both_ways_and_mbps() {
    let addr = echo_server().to_string();
    let args = [
        "--tcp",
        &addr,
        "--mode",
        "stream",
        "--message",
        "hello world",
        "-c",
        "2",
    ];
    // The drain after the end waits while echoes come, and 10 s without one (--timeout) on a
    // machine so busy that the echo server does not run.
    let out = serverbench(&[&args[..], &["-d", "300ms", "--timeout", "10s", "--json"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["protocol"]["workload"], "tcp-stream");
    let (read, in_flight) = (
        v["bytes_read"].as_u64(),
        v["protocol"]["bytes_in_flight"].as_u64(),
    );
    assert_eq!(
        read.zip(in_flight).map(|(r, f)| r + f),
        v["bytes_written"].as_u64()
    );
    assert_eq!(v["bytes_read"], v["bytes_written"], "every echo drained");
    assert!(v["protocol"]["mbps_down"].as_f64().unwrap() > 0.0);
}

#[test]
fn tcp_pingpong_times_each_echo() {
    let addr = echo_server().to_string();
    let out = serverbench(&[
        "--tcp", &addr, "--mode", "pingpong", "--size", "64", "-n", "500", "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["requests"], 500);
    assert_eq!(v["bytes_read"], 32_000);
}
