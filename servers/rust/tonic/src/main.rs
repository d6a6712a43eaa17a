//! rust/tonic: the serverbench.Bench service (spec/serverbench.proto) on tonic, h2c on PORT and,
//! when TLS_PORT is set, TLS with ALPN h2 there (tonic's ServerTlsConfig on rustls).
//!
//! `serverbench.rs` is generated from the spec's proto by tonic-prost-build and committed (see
//! README.md): no protoc is needed to build.

use std::pin::Pin;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::Stream;
use tonic::codec::CompressionEncoding;
use tonic::transport::{Identity, Server, ServerTlsConfig};
use tonic::{Request, Response, Status, Streaming};

#[allow(clippy::all)]
mod pb {
    include!("serverbench.rs");
}

use pb::bench_server::{Bench, BenchServer};
use pb::{Chunk, Count, Payload, SumReply, SumRequest};

type ChunkStream = Pin<Box<dyn Stream<Item = Result<Chunk, Status>> + Send>>;

struct Service;

fn chunk(i: i32, size: usize) -> Chunk {
    Chunk {
        seq: i,
        data: vec![i as u8; size],
    }
}

/// The call's deadline from its `grpc-timeout` header (digits and a unit: H M S m u n).
fn deadline<T>(req: &Request<T>) -> Option<Instant> {
    let v = req.metadata().get("grpc-timeout")?.to_str().ok()?;
    let (digits, unit) = v.split_at(v.len().checked_sub(1)?);
    let n: u64 = digits.parse().ok()?;
    let d = match unit {
        "H" => Duration::from_secs(n * 3600),
        "M" => Duration::from_secs(n * 60),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    };
    Some(Instant::now() + d)
}

#[tonic::async_trait]
impl Bench for Service {
    async fn sum(&self, req: Request<SumRequest>) -> Result<Response<SumReply>, Status> {
        let r = req.into_inner();
        Ok(Response::new(SumReply {
            result: r.a.wrapping_add(r.b),
        }))
    }

    async fn echo(&self, req: Request<Payload>) -> Result<Response<Payload>, Status> {
        Ok(Response::new(req.into_inner()))
    }

    type ServerStreamStream = ChunkStream;

    async fn server_stream(&self, req: Request<Count>) -> Result<Response<ChunkStream>, Status> {
        let until = deadline(&req);
        let c = req.into_inner();
        let size = c.size.max(0) as usize;
        if c.delay_ms <= 0 {
            let chunks = tokio_stream::iter((0..c.n).map(move |i| Ok(chunk(i, size))));
            return Ok(Response::new(Box::pin(chunks)));
        }
        // The slow call: wait before each chunk, and end with DEADLINE_EXCEEDED as soon as the
        // call's deadline passes.
        let delay = Duration::from_millis(c.delay_ms as u64);
        let (tx, rx) = mpsc::channel(16);
        tokio::spawn(async move {
            for i in 0..c.n {
                let wait = Instant::now() + delay;
                if until.is_some_and(|d| d < wait) {
                    tokio::time::sleep_until(until.unwrap_or(wait)).await;
                    let _ = tx
                        .send(Err(Status::deadline_exceeded("deadline exceeded")))
                        .await;
                    return;
                }
                tokio::time::sleep_until(wait).await;
                if tx.send(Ok(chunk(i, size))).await.is_err() {
                    return;
                }
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    /// Reads the request stream to its end (the client ended its side), then answers once.
    async fn client_stream(
        &self,
        req: Request<Streaming<Chunk>>,
    ) -> Result<Response<Count>, Status> {
        let mut chunks = req.into_inner();
        let mut count = Count::default();
        while let Some(c) = chunks.message().await? {
            count.n += 1;
            count.size += c.data.len() as i32;
        }
        Ok(Response::new(count))
    }

    type BidiEchoStream = ChunkStream;

    async fn bidi_echo(
        &self,
        req: Request<Streaming<Chunk>>,
    ) -> Result<Response<ChunkStream>, Status> {
        // Each chunk is echoed as it arrives: the response stream is the request stream.
        Ok(Response::new(Box::pin(req.into_inner())))
    }
}

fn env(name: &str, fallback: &str) -> String {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| fallback.to_owned())
}

fn service() -> BenchServer<Service> {
    BenchServer::new(Service).accept_compressed(CompressionEncoding::Gzip)
}

async fn serve(port: &str, tls: Option<Identity>) -> Result<(), Box<dyn std::error::Error>> {
    let addr = format!("{}:{port}", env("HOST", "127.0.0.1"));
    let addr = tokio::net::lookup_host(&addr)
        .await?
        .next()
        .ok_or("HOST has no address")?;
    let mut builder = Server::builder();
    if let Some(identity) = tls {
        builder = builder.tls_config(ServerTlsConfig::new().identity(identity))?;
    }
    builder.add_service(service()).serve(addr).await?;
    Ok(())
}

fn identity() -> std::io::Result<Identity> {
    let cert = std::fs::read(env("TLS_CERT", "cert.pem"))?;
    let key = std::fs::read(env("TLS_KEY", "key.pem"))?;
    Ok(Identity::from_pem(cert, key))
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let port = env("PORT", "8080");
    let plain = serve(&port, None);
    let tls_port = std::env::var("TLS_PORT").ok().filter(|p| !p.is_empty());
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    match tls_port {
        None => tokio::select! {
            r = plain => r,
            _ = term.recv() => Ok(()),
        },
        Some(port) => {
            let tls = serve(&port, Some(identity()?));
            tokio::select! {
                r = plain => r,
                r = tls => r,
                _ = term.recv() => Ok(()),
            }
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let workers = env("WORKERS", "1").parse::<usize>().unwrap_or(1).max(1);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()?
        .block_on(run())
}
