//! gRPC configs for the engine's tests, and the in-process server (`grpc_server.rs`) over TLS.

use super::base_config;
use super::grpc_server::{serve_conn, Fault, GrpcSeen};
use super::tls::Pki;
use serverbench_engine::config::grpc_target;
use serverbench_engine::Config;
use serverbench_model::spec::GrpcStream;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// A gRPC config for `method` on `addr`: 1 thread, 2 connections, `streams` calls each,
/// closed loop, 300 ms, `--verify`, a 500 ms deadline (Echo: 100 bytes).
pub fn grpc_config(addr: SocketAddr, method: &str, streams: u32) -> Config {
    config_for(&format!("grpc://{addr}"), method, streams, None)
}

/// A streaming config (`--stream kind`, the URL without a path): `messages` chunks of `size`
/// bytes per call, otherwise as [`grpc_config`].
pub fn grpc_stream_config(
    addr: SocketAddr,
    kind: GrpcStream,
    (messages, size): (u32, u32),
    streams: u32,
) -> Config {
    let url = format!("grpc://{addr}");
    let mut spec = serverbench_model::LoadSpec::default();
    spec.at_urls(std::slice::from_ref(&url)).unwrap();
    spec.transport.streams = Some(streams);
    spec.http.verify = true;
    spec.work.stream = Some(kind);
    spec.work.stream_messages = Some(messages);
    spec.work.size = Some(size);
    spec.validate(&serverbench_model::spec::Origin::Flags)
        .unwrap();
    let target = grpc_target(&spec).unwrap();
    base_config(target.addr, vec![url], target.protocol)
}

/// The same over TLS (`grpcs://localhost:PORT`), trusting `pki`.
pub fn grpcs_config(addr: SocketAddr, method: &str, streams: u32, pki: &Pki) -> Config {
    let base = format!("grpcs://localhost:{}", addr.port());
    config_for(&base, method, streams, Some(pki))
}

fn config_for(base: &str, method: &str, streams: u32, pki: Option<&Pki>) -> Config {
    let url = format!("{base}/serverbench.Bench/{method}");
    let mut spec = serverbench_model::LoadSpec::default();
    spec.at_urls(std::slice::from_ref(&url)).unwrap();
    spec.transport.streams = Some(streams);
    spec.http.verify = true;
    spec.http.cacert = pki.map(|p| p.ca_file.clone());
    spec.work.size = (method == "Echo").then_some(100);
    spec.grpc.deadline = Some(Duration::from_millis(500));
    let target = grpc_target(&spec).unwrap();
    let mut cfg = base_config(target.addr, vec![url], target.protocol);
    cfg.tls = target.tls;
    cfg
}

/// The benchmark service over TLS with these ALPN protocols, its certificate from `pki`.
pub fn grpcs_server(pki: &Pki, alpn: &[&[u8]]) -> (SocketAddr, Arc<GrpcSeen>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let (certs, key) = pki.localhost();
    let mut c = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .unwrap();
    c.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(c));
    let seen = Arc::new(GrpcSeen::default());
    let seen2 = seen.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    continue;
                };
                let (seen, acceptor) = (seen2.clone(), acceptor.clone());
                tokio::spawn(async move {
                    if let Ok(tls) = acceptor.accept(sock).await {
                        serve_conn(tls, Fault::None, 1, seen).await;
                    }
                });
            }
        });
    });
    (addr, seen)
}
