//! serverbench `rust/tokio-tungstenite`: the contract's `ws-echo` on tokio-tungstenite, the
//! WebSocket library most tokio servers use directly, plus `hello`, `routes` and `json`.
//!
//! HTTP/1.1 is hyper 1's (`http1::Builder` with upgrades); `GET /ws` with the upgrade headers is
//! answered 101 with the `Sec-WebSocket-Accept` tungstenite derives, and the upgraded connection
//! becomes a `WebSocketStream` (as tokio-tungstenite's own hyper example does). The runtime is
//! tokio's multi-thread scheduler with `WORKERS` threads.

mod ws;

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Serialize;
use tokio::net::TcpListener;

const TEXT: &str = "text/plain";

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| default.to_owned())
}

fn reply(status: StatusCode, media: &'static str, body: Bytes) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(media));
    response
}

async fn handle(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let ok = |media, body: &'static [u8]| reply(StatusCode::OK, media, Bytes::from_static(body));
    Ok(match req.uri().path() {
        "/hello" => ok(TEXT, b"Hello World!"),
        "/hey" => ok(TEXT, b"Hey!"),
        "/hell" => ok(TEXT, b"Hell!"),
        "/about" => ok("text/html", b"<html><body>About page</body></html>"),
        "/json" => match serde_json::to_vec(&Message {
            message: "Hello, World!",
        }) {
            Ok(body) => reply(StatusCode::OK, "application/json", body.into()),
            Err(e) => reply(
                StatusCode::INTERNAL_SERVER_ERROR,
                TEXT,
                e.to_string().into(),
            ),
        },
        "/ws" => ws::upgrade(req),
        _ => reply(
            StatusCode::NOT_FOUND,
            TEXT,
            Bytes::from_static(b"Not Found"),
        ),
    })
}

async fn serve(listener: TcpListener) {
    let mut builder = http1::Builder::new();
    // Pipelined answers go out in one write, as in rust/hyper.
    builder.pipeline_flush(true);
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                eprintln!("rust/tokio-tungstenite: accept: {e}");
                continue;
            }
        };
        if let Err(e) = stream.set_nodelay(true) {
            eprintln!("rust/tokio-tungstenite: TCP_NODELAY: {e}");
        }
        let conn = builder
            .serve_connection(TokioIo::new(stream), service_fn(handle))
            .with_upgrades();
        tokio::spawn(async move {
            // A client that goes away mid-request is not the server's error.
            let _ = conn.await;
        });
    }
}

async fn run() -> std::io::Result<()> {
    let host = env_or("HOST", "127.0.0.1");
    let port = env_or("PORT", "8080");
    let addr: SocketAddr = format!("{host}:{port}")
        .parse()
        .or_else(|_| format!("[{host}]:{port}").parse())
        .unwrap_or_else(|e| panic!("HOST={host} PORT={port} is not an address: {e}"));
    let listener = TcpListener::bind(addr).await?;
    println!("rust/tokio-tungstenite: http and /ws on {addr}");
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        () = serve(listener) => {}
        _ = term.recv() => println!("rust/tokio-tungstenite: SIGTERM, exiting"),
    }
    Ok(())
}

fn main() -> std::io::Result<()> {
    let workers: usize = env_or("WORKERS", "1").parse().unwrap_or(1).max(1);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()?
        .block_on(run())
}
