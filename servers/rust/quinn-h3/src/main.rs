//! serverbench `rust/quinn-h3`: HTTP/3 on quinn + h3 (`H3_PORT`, see `h3`), and HTTP/1.1 on
//! hyper for the same endpoints on `PORT` (plain) and `TLS_PORT` (tokio-rustls), where every
//! answer carries `Alt-Svc: h3=":H3_PORT"`. One multi-thread tokio runtime with `WORKERS`
//! worker threads serves all three. On SIGTERM the HTTP/3 connections get a GOAWAY and a
//! CONNECTION_CLOSE with H3_NO_ERROR, then the process exits.

mod h3;
mod routes;
mod tls;

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http::header::{HeaderValue, ALT_SVC, CONTENT_TYPE};
use http::{Request, Response};
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

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

/// Serves one HTTP/1.1 connection; `alt_svc` is added to every answer when set.
async fn serve_conn<I>(io: I, payload: Bytes, alt_svc: Option<HeaderValue>)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |req: Request<hyper::body::Incoming>| {
        let a = routes::route(req.uri().path(), &payload);
        let mut res = Response::new(Full::new(a.body));
        *res.status_mut() = a.status;
        res.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static(a.media));
        if let Some(alt) = &alt_svc {
            res.headers_mut().insert(ALT_SVC, alt.clone());
        }
        async move { Ok::<_, Infallible>(res) }
    });
    // Connection errors (resets, bad requests) only end that connection.
    let _ = http1::Builder::new()
        .pipeline_flush(true)
        .serve_connection(TokioIo::new(io), service)
        .await;
}

/// `PORT` (no TLS) or `TLS_PORT` (with `tls`): HTTP/1.1, each connection in its own task.
async fn serve_tcp(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    payload: Bytes,
    alt_svc: Option<HeaderValue>,
) {
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(conn) => conn,
            Err(e) => {
                eprintln!("rust/quinn-h3: accept: {e}");
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let (tls, payload, alt_svc) = (tls.clone(), payload.clone(), alt_svc.clone());
        tokio::spawn(async move {
            match tls {
                None => serve_conn(stream, payload, alt_svc).await,
                // A failed handshake only ends that connection.
                Some(acceptor) => {
                    if let Ok(s) = acceptor.accept(stream).await {
                        serve_conn(s, payload, alt_svc).await;
                    }
                }
            }
        });
    }
}

async fn run() -> std::io::Result<()> {
    let payload = routes::build_payload();
    let http_addr = env_addr("PORT", "8080");
    let http = TcpListener::bind(http_addr).await?;
    tokio::spawn(serve_tcp(http, None, payload.clone(), None));
    println!("rust/quinn-h3: http/1.1 on {http_addr}");

    let (stop, stopped) = watch::channel(false);
    let mut h3_done = None;
    if let Ok(port) = std::env::var("TLS_PORT") {
        let configs = tls::from_env()?;
        let tls_addr = env_addr("TLS_PORT", &port);
        let https = TcpListener::bind(tls_addr).await?;
        let mut alt_svc = None;
        if let Ok(h3_port) = std::env::var("H3_PORT") {
            let h3_addr = env_addr("H3_PORT", &h3_port);
            let endpoint = h3::endpoint(h3_addr, configs.quic)?;
            let value = format!("h3=\":{}\"; ma=86400", h3_addr.port());
            alt_svc = Some(HeaderValue::from_str(&value).expect("an ASCII header value"));
            h3_done = Some(tokio::spawn(h3::serve(endpoint, payload.clone(), stopped)));
            println!("rust/quinn-h3: http/3 on udp {h3_addr}");
        }
        let acceptor = TlsAcceptor::from(configs.https);
        tokio::spawn(serve_tcp(https, Some(acceptor), payload, alt_svc));
        println!("rust/quinn-h3: https (http/1.1) on {tls_addr}");
    }

    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    term.recv().await;
    println!("rust/quinn-h3: SIGTERM, closing");
    let _ = stop.send(true);
    if let Some(done) = h3_done {
        let _ = done.await;
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
