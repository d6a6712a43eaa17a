//! serverbench `rust/axum`: the HTTP contract on axum 0.8 (hyper 1 underneath), on a
//! multi-thread tokio runtime with `WORKERS` worker threads; the database workloads in `db`
//! when `DATABASE_URL` is set; a WebSocket echo on `/ws` in `ws`.

mod db;
mod ws;
mod shapes;

use std::net::SocketAddr;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use axum::{Json, Router};
use bytes::Bytes;
use serde::Serialize;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};

const PAYLOAD_LEN: usize = 1 << 20;

/// What the `/pingpong` handler sends to the worker task: where to send the reply.
type PingRequest = oneshot::Sender<Bytes>;

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

#[derive(Clone)]
struct AppState {
    payload: Bytes,
    pings: mpsc::Sender<PingRequest>,
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

fn http_addr() -> SocketAddr {
    let host = env_or("HOST", "127.0.0.1");
    let port: u16 = env_or("PORT", "8080")
        .parse()
        .unwrap_or_else(|e| panic!("PORT is not a port number: {e}"));
    let ip = host
        .parse()
        .unwrap_or_else(|e| panic!("HOST={host} is not an IP address: {e}"));
    SocketAddr::new(ip, port)
}

/// The contract's 1 MiB body: byte i is `'a' + i mod 26`.
fn build_payload() -> Bytes {
    (0..PAYLOAD_LEN)
        .map(|i| b'a' + (i % 26) as u8)
        .collect::<Vec<u8>>()
        .into()
}

async fn hello() -> &'static str {
    "Hello World!"
}

async fn hey() -> &'static str {
    "Hey!"
}

async fn hell() -> &'static str {
    "Hell!"
}

async fn about() -> Html<&'static str> {
    Html("<html><body>About page</body></html>")
}

async fn json() -> Json<Message> {
    Json(Message {
        message: "Hello, World!",
    })
}

async fn payload_handler(State(state): State<AppState>) -> Bytes {
    state.payload
}

/// Hands the request to the worker task through an mpsc channel and answers with what the
/// worker sends back on a oneshot channel.
async fn pingpong(State(state): State<AppState>) -> Response {
    let (tx, rx) = oneshot::channel();
    if state.pings.send(tx).await.is_ok() {
        if let Ok(body) = rx.await {
            return body.into_response();
        }
    }
    (StatusCode::INTERNAL_SERVER_ERROR, "worker gone").into_response()
}

async fn not_found() -> (StatusCode, &'static str) {
    (StatusCode::NOT_FOUND, "Not Found")
}

/// The `/pingpong` worker: answers every request it receives with the payload.
async fn ping_worker(mut rx: mpsc::Receiver<PingRequest>, payload: Bytes) {
    while let Some(reply_to) = rx.recv().await {
        let _ = reply_to.send(payload.clone());
    }
}

async fn shutdown_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("SIGTERM handler installs");
    term.recv().await;
    println!("rust/axum: SIGTERM, exiting");
}

async fn run() -> std::io::Result<()> {
    let payload = build_payload();
    let (pings, rx) = mpsc::channel(1024);
    tokio::spawn(ping_worker(rx, payload.clone()));
    let mut app = Router::new()
        .route("/hello", get(hello))
        .route("/hey", get(hey))
        .route("/hell", get(hell))
        .route("/about", get(about))
        .route("/json", get(json).layer(shapes::compression()))
        .route("/payload", get(payload_handler))
        .route("/pingpong", get(pingpong))
        .route("/ws", get(ws::upgrade))
        .fallback(not_found)
        .with_state(AppState { payload, pings });
    if let Some(pool) = db::pool_from_env() {
        db::check(&pool).await;
        app = app.merge(db::routes(pool));
    }
    // baseline, upload, static (shapes.rs).
    app = app.merge(shapes::routes());

    let addr = http_addr();
    let listener = TcpListener::bind(addr).await?.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            eprintln!("rust/axum: TCP_NODELAY: {e}");
        }
    });
    println!("rust/axum: http on {addr}");
    // Returning from main ends the process without waiting for open connections.
    tokio::select! {
        res = axum::serve(listener, app) => res,
        () = shutdown_signal() => Ok(()),
    }
}

fn main() -> std::io::Result<()> {
    let workers: usize = env_or("WORKERS", "1").parse().unwrap_or(1).max(1);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()?
        .block_on(run())
}
