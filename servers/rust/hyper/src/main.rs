//! serverbench `rust/hyper`: the whole HTTP contract on hyper 1 (HTTP/1.1 with pipeline
//! flushing) and a TCP echo server, both on one multi-thread tokio runtime with `WORKERS`
//! worker threads.

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Serialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

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

async fn serve_http(listener: TcpListener, app: App) {
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(conn) => conn,
            Err(e) => {
                eprintln!("http accept: {e}");
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| {
                let app = app.clone();
                async move { Ok::<_, Infallible>(app.handle(req).await) }
            });
            // Connection errors (resets, bad requests) only end that connection.
            let _ = http1::Builder::new()
                .pipeline_flush(true)
                .serve_connection(TokioIo::new(stream), service)
                .await;
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
    let app = App { payload, pings };

    let http_addr = env_addr("PORT", "8080");
    let echo_addr = env_addr("ECHO_PORT", "9000");
    let http = TcpListener::bind(http_addr).await?;
    let echo = TcpListener::bind(echo_addr).await?;
    println!("rust/hyper: http on {http_addr}, echo on {echo_addr}");

    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = serve_http(http, app) => {}
        _ = serve_echo(echo) => {}
        _ = term.recv() => println!("rust/hyper: SIGTERM, exiting"),
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
