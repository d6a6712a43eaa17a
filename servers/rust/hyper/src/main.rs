//! serverbench `rust/hyper`: the whole HTTP contract on hyper 1 and a TCP echo server, both on
//! one multi-thread tokio runtime with `WORKERS` worker threads.
//!
//! Transports: `PORT` serves HTTP/1.1 (pipeline flushing) and h2c with prior knowledge through
//! hyper-util's auto builder, which reads the first bytes of a connection for the HTTP/2
//! preface. When `TLS_PORT` is set, it serves HTTPS there with tokio-rustls, and ALPN picks
//! HTTP/2 or HTTP/1.1 (see `tls`). With `DATABASE_URL` set, the database workloads (see `db`).

mod db;
mod shapes;
mod tls;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use serde::Serialize;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};
use tokio_rustls::TlsAcceptor;

const PAYLOAD_LEN: usize = 1 << 20;
const TEXT: &str = "text/plain";
const HTML: &str = "text/html";
const JSON: &str = "application/json";
const OCTETS: &str = "application/octet-stream";

/// What the `/pingpong` handler sends to the worker task: where to send the reply.
type PingRequest = oneshot::Sender<Bytes>;

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

/// Shared, cheaply clonable state of the HTTP service.
#[derive(Clone)]
struct App {
    payload: Bytes,
    pings: mpsc::Sender<PingRequest>,
    /// The database pool, only when `DATABASE_URL` is set.
    db: Option<db::Db>,
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

fn env_addr(port_var: &str, default_port: &str) -> SocketAddr {
    let host = env_or("HOST", "127.0.0.1");
    let port: u16 = env_or(port_var, default_port)
        .parse()
        .unwrap_or_else(|e| panic!("{port_var} is not a port number: {e}"));
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

fn reply(status: StatusCode, media: &'static str, body: Bytes) -> Response<Full<Bytes>> {
    let mut res = Response::new(Full::new(body));
    *res.status_mut() = status;
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(media));
    res
}

impl App {
    async fn handle(self, req: Request<hyper::body::Incoming>) -> Response<Full<Bytes>> {
        // baseline, upload, /json compressed when asked (shapes.rs).
        let req = match shapes::handle(req).await {
            Ok(res) => return res,
            Err(req) => req,
        };
        match req.uri().path() {
            "/hello" => reply(StatusCode::OK, TEXT, Bytes::from_static(b"Hello World!")),
            "/hey" => reply(StatusCode::OK, TEXT, Bytes::from_static(b"Hey!")),
            "/hell" => reply(StatusCode::OK, TEXT, Bytes::from_static(b"Hell!")),
            "/about" => reply(
                StatusCode::OK,
                HTML,
                Bytes::from_static(b"<html><body>About page</body></html>"),
            ),
            "/json" => {
                let body = serde_json::to_vec(&Message {
                    message: "Hello, World!",
                })
                .expect("a static struct serializes");
                reply(StatusCode::OK, JSON, body.into())
            }
            "/payload" => reply(StatusCode::OK, OCTETS, self.payload),
            "/pingpong" => self.pingpong().await,
            path @ ("/db" | "/queries" | "/fortunes" | "/updates") if self.db.is_some() => {
                let db = self.db.as_ref().expect("checked by the guard");
                let (status, media, body) = db.handle(path, req.uri().query()).await;
                reply(status, media, body)
            }
            _ => reply(
                StatusCode::NOT_FOUND,
                TEXT,
                Bytes::from_static(b"Not Found"),
            ),
        }
    }

    /// Hands the request to the worker task through an mpsc channel and answers with what
    /// the worker sends back on a oneshot channel.
    async fn pingpong(self) -> Response<Full<Bytes>> {
        let (tx, rx) = oneshot::channel();
        if self.pings.send(tx).await.is_ok() {
            if let Ok(body) = rx.await {
                return reply(StatusCode::OK, OCTETS, body);
            }
        }
        reply(
            StatusCode::INTERNAL_SERVER_ERROR,
            TEXT,
            Bytes::from_static(b"worker gone"),
        )
    }
}

/// The `/pingpong` worker: answers every request it receives with the payload.
async fn ping_worker(mut rx: mpsc::Receiver<PingRequest>, payload: Bytes) {
    while let Some(reply_to) = rx.recv().await {
        // The handler may have gone away (client closed); nothing to do then.
        let _ = reply_to.send(payload.clone());
    }
}

/// The connection builders: `auto` reads the first bytes for the HTTP/2 preface (the plain
/// port: HTTP/1.1 or h2c); over TLS, ALPN has already chosen, so `h1` and `h2` skip the guess.
struct Builders {
    auto: auto::Builder<TokioExecutor>,
    h1: auto::Builder<TokioExecutor>,
    h2: auto::Builder<TokioExecutor>,
}

impl Builders {
    fn new() -> Self {
        let mut auto = auto::Builder::new(TokioExecutor::new());
        auto.http1().pipeline_flush(true);
        Builders {
            h1: auto.clone().http1_only(),
            h2: auto.clone().http2_only(),
            auto,
        }
    }
}

/// Serves one connection (plain or TLS) with `builder` until it ends.
async fn serve_conn<I>(builder: &auto::Builder<TokioExecutor>, io: I, app: App)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |req| {
        let app = app.clone();
        async move { Ok::<_, Infallible>(app.handle(req).await) }
    });
    // Connection errors (resets, bad requests) only end that connection.
    let _ = builder.serve_connection(TokioIo::new(io), service).await;
}

/// `PORT`: HTTP/1.1 and h2c (prior knowledge).
async fn serve_http(listener: TcpListener, app: App, builders: Arc<Builders>) {
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(conn) => conn,
            Err(e) => {
                eprintln!("http accept: {e}");
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let (app, builders) = (app.clone(), builders.clone());
        tokio::spawn(async move { serve_conn(&builders.auto, stream, app).await });
    }
}

/// `TLS_PORT`: the handshake in the connection's own task, then HTTP/2 or HTTP/1.1 by ALPN.
async fn serve_https(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    app: App,
    builders: Arc<Builders>,
) {
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(conn) => conn,
            Err(e) => {
                eprintln!("https accept: {e}");
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let (acceptor, app, builders) = (acceptor.clone(), app.clone(), builders.clone());
        tokio::spawn(async move {
            // A failed handshake only ends that connection.
            let Ok(tls) = acceptor.accept(stream).await else {
                return;
            };
            let builder = match tls.get_ref().1.alpn_protocol() {
                Some(tls::ALPN_H2) => &builders.h2,
                _ => &builders.h1,
            };
            serve_conn(builder, tls, app).await;
        });
    }
}

async fn echo_conn(mut stream: TcpStream) -> std::io::Result<()> {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        stream.write_all(&buf[..n]).await?;
    }
}

async fn serve_echo(listener: TcpListener) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let _ = stream.set_nodelay(true);
                tokio::spawn(async move {
                    let _ = echo_conn(stream).await;
                });
            }
            Err(e) => eprintln!("echo accept: {e}"),
        }
    }
}

async fn run() -> std::io::Result<()> {
    let payload = build_payload();
    let (pings, rx) = mpsc::channel(1024);
    tokio::spawn(ping_worker(rx, payload.clone()));
    let db = db::Db::from_env();
    if let Some(db) = &db {
        db.check().await;
    }
    let app = App { payload, pings, db };

    let http_addr = env_addr("PORT", "8080");
    let echo_addr = env_addr("ECHO_PORT", "9000");
    let http = TcpListener::bind(http_addr).await?;
    let echo = TcpListener::bind(echo_addr).await?;
    let builders = Arc::new(Builders::new());
    let https = match std::env::var("TLS_PORT") {
        Ok(port) if !port.is_empty() => {
            let acceptor = tls::acceptor_from_env()?;
            let addr = env_addr("TLS_PORT", &port);
            let listener = TcpListener::bind(addr).await?;
            println!("rust/hyper: https (h2, http/1.1) on {addr}");
            Some(serve_https(
                listener,
                acceptor,
                app.clone(),
                builders.clone(),
            ))
        }
        _ => None,
    };
    println!("rust/hyper: http and h2c on {http_addr}, echo on {echo_addr}");

    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = serve_http(http, app, builders) => {}
        _ = maybe(https) => {}
        _ = serve_echo(echo) => {}
        _ = term.recv() => println!("rust/hyper: SIGTERM, exiting"),
    }
    Ok(())
}

/// Runs the HTTPS server when `TLS_PORT` is set; otherwise never completes.
async fn maybe(server: Option<impl std::future::Future<Output = ()>>) {
    match server {
        Some(server) => server.await,
        None => std::future::pending().await,
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
