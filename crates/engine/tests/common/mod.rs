//! Small servers started in-process on loopback, and config helpers, for the engine's tests.
#![allow(dead_code)]

pub mod grpc;
pub mod grpc_server;
pub mod h3;
pub mod http2;
pub mod tls;
pub mod ws;

use serverbench_engine::config::http_target;
use serverbench_engine::{Config, Lifetime, Protocol, Reads, Schedule, Stop};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What the server does for one request.
pub enum Reply {
    /// Write these bytes and keep the connection.
    Send(Vec<u8>),
    /// Write these bytes, then close.
    SendClose(Vec<u8>),
    /// Sleep, then write.
    After(Duration, Vec<u8>),
    /// Close with a TCP reset.
    Reset,
}

/// Starts an HTTP server; `handler(n, path)` answers the n-th request (counted over all
/// connections). Requests are read pipelined: every complete one in a read is answered.
pub fn http_server<F>(handler: F) -> SocketAddr
where
    F: Fn(u64, &str) -> Reply + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handler = Arc::new(handler);
    let counter = Arc::new(AtomicU64::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let (handler, counter) = (handler.clone(), counter.clone());
            std::thread::spawn(move || serve_http(stream, &*handler, &counter));
        }
    });
    addr
}

fn serve_http(mut s: TcpStream, handler: &dyn Fn(u64, &str) -> Reply, counter: &AtomicU64) {
    s.set_nodelay(true).unwrap();
    let mut pending = Vec::new();
    let mut buf = [0u8; 16384];
    loop {
        let n = match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        pending.extend_from_slice(&buf[..n]);
        let mut out = Vec::new();
        while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&pending[..end]).to_string();
            pending.drain(..end + 4);
            let path = head.split(' ').nth(1).unwrap_or("/").to_string();
            match handler(counter.fetch_add(1, Ordering::SeqCst), &path) {
                Reply::Send(b) => out.extend_from_slice(&b),
                Reply::SendClose(b) => {
                    out.extend_from_slice(&b);
                    let _ = s.write_all(&out);
                    return;
                }
                Reply::After(d, b) => {
                    let _ = s.write_all(&out);
                    out.clear();
                    std::thread::sleep(d);
                    out.extend_from_slice(&b);
                }
                Reply::Reset => {
                    reset(&s);
                    return;
                }
            }
        }
        if s.write_all(&out).is_err() {
            return;
        }
    }
}

/// Sets SO_LINGER 0 so that dropping the socket sends RST.
pub fn reset(s: &TcpStream) {
    use std::os::fd::AsRawFd;
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: valid socket and option struct.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}

/// Starts a TCP echo server.
pub fn echo_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 65536];
                loop {
                    match s.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => {
                            if s.write_all(&buf[..n]).is_err() {
                                return;
                            }
                        }
                    }
                }
            });
        }
    });
    addr
}

/// A port on which nothing listens.
pub fn refused_addr() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap()
}

/// `HTTP/1.1 200` with a Content-Length body.
pub fn ok(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// An HTTP config for `paths` on `addr`: 1 thread, 2 connections, 300 ms, closed loop.
pub fn http_config(addr: SocketAddr, paths: &[&str], verify: bool) -> Config {
    let urls: Vec<String> = paths.iter().map(|p| format!("http://{addr}{p}")).collect();
    let mut spec = serverbench_model::LoadSpec::default();
    spec.at_urls(&urls).unwrap();
    spec.http.verify = verify;
    let target = http_target(&spec).unwrap();
    base_config(target.addr, urls, target.protocol)
}

pub fn base_config(addr: SocketAddr, target: Vec<String>, protocol: Protocol) -> Config {
    Config {
        spec: serverbench_model::LoadSpec {
            connections: 2,
            io: io(),
            ..Default::default()
        },
        addr,
        target,
        protocol,
        schedule: Schedule::ClosedLoop { depth: 1 },
        stop: Stop::Duration(Duration::from_millis(300)),
        threads: 1,
        reads: Reads::Window,
        idle: serverbench_engine::Idle::Auto,
        tls: None,
        lifetime: Lifetime::KeepAlive,
        mix: None,
    }
}

/// The backend these tests run on: each test file is built twice, its `_uring` twin (see the
/// engine's Cargo.toml) on io_uring, the other on epoll, so every engine test runs on both.
pub fn io() -> serverbench_model::Io {
    if env!("CARGO_CRATE_NAME").ends_with("_uring") {
        serverbench_model::Io::Uring
    } else {
        serverbench_model::Io::Epoll
    }
}

/// The backend the result says ran: the one asked for (a refusal would be a silent skip).
/// Where the kernel refuses io_uring (Docker's default seccomp profile,
/// `kernel.io_uring_disabled`), SERVERBENCH_SKIP_URING=1 (what `make test` sets from
/// scripts/uring-probe.sh) lets an `_uring` twin run on epoll, saying so; without it, it fails.
pub fn assert_ran_on_the_asked_backend(r: &serverbench_model::LoadResult) {
    let want = match io() {
        serverbench_model::Io::Uring => serverbench_model::IoBackend::Uring,
        _ => serverbench_model::IoBackend::Epoll,
    };
    let refused = want == serverbench_model::IoBackend::Uring
        && r.io == Some(serverbench_model::IoBackend::Epoll);
    if refused && std::env::var("SERVERBENCH_SKIP_URING").as_deref() == Ok("1") {
        say_skipped(&format!(
            "io_uring refused here, ran on epoll (SERVERBENCH_SKIP_URING=1): {:?}",
            r.notes
        ));
        return;
    }
    assert_eq!(
        r.io,
        Some(want),
        "notes: {:?} (where the kernel refuses io_uring, set SERVERBENCH_SKIP_URING=1 to run \
         the _uring twins on epoll)",
        r.notes
    );
}

pub fn run(config: &Config) -> serverbench_model::LoadResult {
    let r = serverbench_engine::run(config, &|_| {}).unwrap();
    assert_ran_on_the_asked_backend(&r);
    r
}

/// Fails with every violation when `v` does not follow spec/load-result.schema.json.
pub fn assert_schema_valid(v: &serde_json::Value) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../spec/load-result.schema.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let schema = jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap();
    let errors: Vec<String> = schema.iter_errors(v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{v:#}");
}

/// The `SKIP: <binary>::<test>: <why>` line `make test` counts, written straight to stderr past
/// the harness's capture (as crates/cli/tests/skip/mod.rs).
pub fn say_skipped(why: &str) {
    use std::io::Write;
    let test = std::thread::current().name().unwrap_or("main").to_owned();
    let line = format!("SKIP: {}::{test}: {why}\n", env!("CARGO_CRATE_NAME"));
    let _ = std::io::stderr().write_all(line.as_bytes());
}
