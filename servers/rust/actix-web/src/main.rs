//! serverbench `rust/actix-web`: the HTTP contract on actix-web 4, with `WORKERS` workers
//! (each a thread with its own single-threaded runtime).
//!
//! Transports, all actix-web's own: HTTP/1.1 and h2c with prior knowledge on `PORT`
//! (`bind_auto_h2c`), and when `TLS_PORT` is set, HTTPS there with rustls, where ALPN picks h2
//! or http/1.1 (`bind_rustls_0_23`). With `DATABASE_URL` set, the database workloads (see `db`).
//! A WebSocket echo on `/ws` with actix-ws (see `ws`).

mod db;
mod shapes;
mod tls;
mod ws;

use actix_web::http::header::ContentType;
use actix_web::{web, App, HttpResponse, HttpServer};
use bytes::Bytes;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

const PAYLOAD_LEN: usize = 1 << 20;

/// What the `/pingpong` handler sends to the worker task: where to send the reply.
type PingRequest = oneshot::Sender<Bytes>;

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

struct AppState {
    payload: Bytes,
    pings: mpsc::Sender<PingRequest>,
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

/// The contract's 1 MiB body: byte i is `'a' + i mod 26`.
fn build_payload() -> Bytes {
    (0..PAYLOAD_LEN)
        .map(|i| b'a' + (i % 26) as u8)
        .collect::<Vec<u8>>()
        .into()
}

fn text(body: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(ContentType::plaintext())
        .body(body)
}

async fn hello() -> HttpResponse {
    text("Hello World!")
}

async fn hey() -> HttpResponse {
    text("Hey!")
}

async fn hell() -> HttpResponse {
    text("Hell!")
}

async fn about() -> HttpResponse {
    HttpResponse::Ok()
        .content_type(ContentType::html())
        .body("<html><body>About page</body></html>")
}

async fn json() -> HttpResponse {
    HttpResponse::Ok().json(Message {
        message: "Hello, World!",
    })
}

fn octets(body: Bytes) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(ContentType::octet_stream())
        .body(body)
}

async fn payload_handler(state: web::Data<AppState>) -> HttpResponse {
    octets(state.payload.clone())
}

/// Hands the request to the worker task through an mpsc channel and answers with what the
/// worker sends back on a oneshot channel.
async fn pingpong(state: web::Data<AppState>) -> HttpResponse {
    let (tx, rx) = oneshot::channel();
    if state.pings.send(tx).await.is_ok() {
        if let Ok(body) = rx.await {
            return octets(body);
        }
    }
    HttpResponse::InternalServerError()
        .content_type(ContentType::plaintext())
        .body("worker gone")
}

async fn not_found() -> HttpResponse {
    HttpResponse::NotFound()
        .content_type(ContentType::plaintext())
        .body("Not Found")
}

/// The `/pingpong` worker: answers every request it receives with the payload.
async fn ping_worker(mut rx: mpsc::Receiver<PingRequest>, payload: Bytes) {
    while let Some(reply_to) = rx.recv().await {
        let _ = reply_to.send(payload.clone());
    }
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let workers: usize = env_or("WORKERS", "1").parse().unwrap_or(1).max(1);
    let host = env_or("HOST", "127.0.0.1");
    let port: u16 = env_or("PORT", "8080")
        .parse()
        .unwrap_or_else(|e| panic!("PORT is not a port number: {e}"));

    let payload = build_payload();
    let (pings, rx) = mpsc::channel(1024);
    // The worker runs on the main thread's runtime, apart from the HTTP workers.
    actix_web::rt::spawn(ping_worker(rx, payload.clone()));
    let state = web::Data::new(AppState { payload, pings });

    let tls_port: Option<u16> = match std::env::var("TLS_PORT") {
        Ok(p) if !p.is_empty() => Some(
            p.parse()
                .unwrap_or_else(|e| panic!("TLS_PORT is not a port number: {e}")),
        ),
        _ => None,
    };

    let db_config = db::DbConfig::from_env(workers);
    let mut server = HttpServer::new(move || {
        // Runs in each worker's thread: its own pool, on its own runtime.
        let db = db_config.as_ref().map(db::DbConfig::worker_pool);
        App::new()
            .app_data(state.clone())
            .configure(|cfg| {
                if let Some(db) = db {
                    cfg.app_data(db);
                    db::routes(cfg);
                }
            })
            .route("/hello", web::get().to(hello))
            .route("/hey", web::get().to(hey))
            .route("/hell", web::get().to(hell))
            .route("/about", web::get().to(about))
            // baseline, upload, /json with Compress, static (shapes.rs).
            .configure(|cfg| shapes::routes(cfg, json))
            .route("/payload", web::get().to(payload_handler))
            .route("/pingpong", web::get().to(pingpong))
            .route("/ws", web::get().to(ws::upgrade))
            .default_service(web::to(not_found))
    })
    .workers(workers)
    .backlog(4096)
    .shutdown_timeout(2)
    .bind_auto_h2c((host.as_str(), port))?;
    println!("rust/actix-web: http and h2c on {host}:{port}, {workers} worker(s)");
    if let Some(tls_port) = tls_port {
        server = server.bind_rustls_0_23((host.as_str(), tls_port), tls::config_from_env()?)?;
        println!("rust/actix-web: https (h2, http/1.1) on {host}:{tls_port}");
    }
    server.run().await
}
