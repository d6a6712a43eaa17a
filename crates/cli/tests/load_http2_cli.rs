//! `serverbench load --http2` end to end: the real binary against an in-process h2c server.

use bytes::Bytes;
use std::net::SocketAddr;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn serverbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serverbench"))
        .arg("load")
        .args(args)
        .output()
        .expect("run serverbench")
}

/// An h2c server (prior knowledge) answering `Hello World!`; returns its address and the most
/// streams it saw open at once on one connection.
fn h2c_server() -> (SocketAddr, Arc<AtomicU64>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let max_open = Arc::new(AtomicU64::new(0));
    let seen = max_open.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            while let Ok((sock, _)) = listener.accept().await {
                let seen = seen.clone();
                tokio::spawn(async move {
                    let Ok(mut conn) = h2::server::handshake(sock).await else {
                        return;
                    };
                    let open = Arc::new(AtomicU64::new(0));
                    while let Some(Ok((_, mut respond))) = conn.accept().await {
                        seen.fetch_max(open.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                        let open = open.clone();
                        tokio::spawn(async move {
                            tokio::time::sleep(Duration::from_micros(500)).await;
                            let resp = http::Response::builder().status(200).body(()).unwrap();
                            if let Ok(mut send) = respond.send_response(resp, false) {
                                let _ = send.send_data(Bytes::from_static(b"Hello World!"), true);
                            }
                            open.fetch_sub(1, Ordering::SeqCst);
                        });
                    }
                });
            }
        });
    });
    (addr, max_open)
}

#[test]
fn http2_with_10_streams_loads_h2c_and_reports_the_protocol() {
    let (addr, max_open) = h2c_server();
    let url = format!("http://{addr}/hello");
    let out = serverbench(&[
        "--http2", "-m", "10", "-c", "2", "-n", "2000", "--json", &url,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"]["200"], 2000);
    assert_eq!(v["protocol"]["protocol"], "h2c");
    assert_eq!(v["protocol"]["streams"], 10);
    let open = max_open.load(Ordering::SeqCst);
    assert!(
        (2..=10).contains(&open),
        "streams overlap, 10 at most: {open}"
    );
    let summary = serverbench(&["--http2", "-m", "10", "-c", "2", "-n", "200", &url]);
    let text = String::from_utf8_lossy(&summary.stdout);
    assert!(
        text.contains("HTTP/2       h2c, 10 streams per connection"),
        "{text}"
    );
}

#[test]
fn streams_without_http2_and_pipelining_with_it_are_refused() {
    let (addr, _) = h2c_server();
    let url = format!("http://{addr}/");
    let out = serverbench(&["-m", "10", "-n", "1", &url]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--http2"),
        "{out:?}"
    );
    assert_ne!(out.status.code(), Some(0));
    let out = serverbench(&["--http2", "-p", "4", "-n", "1", &url]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("-p/--pipeline") && err.contains("-m/--streams"),
        "{err}"
    );
}
